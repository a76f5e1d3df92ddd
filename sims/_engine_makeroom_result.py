"""The result record of an engine-backed make-room run: the trials' counters, and
the estimate checked against the exact values and the array simulator."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from vistalab import theory

from ._engine_common import StoreSpec
from ._engine_makeroom_layout import MakeRoomLayout
from ._interfaces import Interface
from ._makeroom import CHECK_SIGMAS, MakeRoomResult, agrees_with
from ._policies import Policy
from ._seeding import SeedInfo
from ._stats import mean_from_counts, mean_interval

__all__ = ["EngineMakeRoomResult"]


@dataclass
class _Tally:
    """Counters the trials of one run add to (Z counts, tool events, mismatches)."""

    counts: np.ndarray
    archive_events: int = 0
    read_events: int = 0
    byte_exact: int = 0
    byte_mismatches: int = 0
    queries: int = 0
    queries_ok: int = 0
    size_mismatches: int = 0
    size_residual_max: int = 0
    budget_mismatches: int = 0
    stop_mismatches: int = 0
    z_excess: int = 0
    bulky_archived: int = 0
    undo_mismatches: int = 0
    workspaces: int = 0

    def add(self, other: _Tally) -> None:
        self.counts += other.counts
        for f in ("archive_events", "read_events", "byte_exact", "byte_mismatches", "queries",
                  "queries_ok", "size_mismatches", "budget_mismatches", "stop_mismatches",
                  "z_excess", "bulky_archived"):
            setattr(self, f, getattr(self, f) + getattr(other, f))
        self.size_residual_max = max(self.size_residual_max, other.size_residual_max)


@dataclass(frozen=True)
class EngineMakeRoomResult(MakeRoomResult):
    """A make-room run through the workspace engine (``mode == "engine"``).

    Every field of :class:`MakeRoomResult` (E[Z] and its interval, the rate,
    Theorem 1's bound, the exact frontier, the exact E[Z], the consistency
    checks, the seed), computed from the engine trials, plus:

    Attributes
    ----------
    store, tokenizer : str
        Payload store (``memory`` or ``disk``) and engine tokenizer.
    l_tokens, L_tokens, budget_tokens : int
        Net sizes of load-bearing and bulky blocks and the engine budget B.
    archive_events : int
        Archive tool calls over all trials.
    read_events : int
        Payload reads over all trials (one per archived load-bearing block).
    recovery_obligations : int
        Sum of Z: load-bearing blocks that had to be made available again.
    byte_exact_recoveries : int
        Reads that returned exactly the original bytes.
    byte_mismatches : int
        Reads that failed or returned other bytes.
    queries, queries_answered : int
        Load-bearing blocks queried after the overflow cleared, and how many
        were answered with the original text (from the prompt or by a read).
    size_mismatches, size_residual_max : int
        Archives whose engine-reported freed tokens differ from the calibrated
        net size (checked in ``verify`` runs), and the largest difference.
    budget_mismatches : int
        Trials whose first rendering was not exactly B + L tokens.
    stop_mismatches : int
        Trials where preflight cleared the overflow after a different number
        of archives than the instance's arithmetic (exact sizes) predicts.
    z_excess : int
        Trials with more than kappa load-bearing blocks archived (possible only
        with a stop mismatch); ``z_counts`` counts them at kappa.
    reuse : bool
        Whether workspaces were reused across trials (see the driver).
    workspaces : int
        Workspaces built (= trials without reuse).
    undo_mismatches : int
        Reuse only: trials after which restoring every archive did not give
        back the initial canonical state hash.
    cpu_seconds : float
        Process CPU time of the trials (on a shared machine the wall time in
        ``elapsed_seconds`` also measures the scheduler).
    array_mean_z, array_mean_z_se : float
        The array simulator's E[Z] for the same interface and policy.
    array_trials : int
    z_score : float
        ``(mean_z - array_mean_z) / sqrt(se^2 + array_se^2)``.
    agrees_with_array : bool
        ``|z_score| <= CHECK_SIGMAS``.
    all_recoveries_byte_exact : bool
        No read failed or differed, and every query was answered.
    calibration : dict
        The layout's calibration residuals and cost.
    calibration_seconds : float
    """

    store: str = "memory"
    tokenizer: str = "cl100k_base"
    l_tokens: int = 0
    L_tokens: int = 0
    budget_tokens: int = 0
    archive_events: int = 0
    read_events: int = 0
    recovery_obligations: int = 0
    byte_exact_recoveries: int = 0
    byte_mismatches: int = 0
    queries: int = 0
    queries_answered: int = 0
    size_mismatches: int = 0
    size_residual_max: int = 0
    budget_mismatches: int = 0
    stop_mismatches: int = 0
    z_excess: int = 0
    reuse: bool = False
    workspaces: int = 0
    undo_mismatches: int = 0
    cpu_seconds: float = 0.0
    array_mean_z: float = math.nan
    array_mean_z_se: float = math.nan
    array_trials: int = 0
    z_score: float = math.nan
    agrees_with_array: bool = False
    all_recoveries_byte_exact: bool = False
    calibration: dict[str, Any] = field(default_factory=dict)
    calibration_seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """The array mode's JSON document plus the engine's counters.

        Returns
        -------
        dict
            Every key of :meth:`MakeRoomResult.to_dict`, plus the engine's store,
            event counts, the z-score against the array mode and the calibration.
        """
        d = super().to_dict()
        d.update({
            "store": self.store,
            "tokenizer": self.tokenizer,
            "l_tokens": self.l_tokens,
            "L_tokens": self.L_tokens,
            "budget_tokens": self.budget_tokens,
            "archive_events": self.archive_events,
            "read_events": self.read_events,
            "recovery_obligations": self.recovery_obligations,
            "byte_exact_recoveries": self.byte_exact_recoveries,
            "byte_mismatches": self.byte_mismatches,
            "queries": self.queries,
            "queries_answered": self.queries_answered,
            "size_mismatches": self.size_mismatches,
            "size_residual_max": self.size_residual_max,
            "budget_mismatches": self.budget_mismatches,
            "stop_mismatches": self.stop_mismatches,
            "z_excess": self.z_excess,
            "reuse": self.reuse,
            "workspaces": self.workspaces,
            "undo_mismatches": self.undo_mismatches,
            "cpu_seconds": self.cpu_seconds,
            "array_mean_z": self.array_mean_z,
            "array_mean_z_se": self.array_mean_z_se,
            "array_trials": self.array_trials,
            "z_score": self.z_score,
            "agrees_with_array": self.agrees_with_array,
            "all_recoveries_byte_exact": self.all_recoveries_byte_exact,
            "calibration": dict(self.calibration),
            "calibration_seconds": self.calibration_seconds,
        })
        return d


def _result(layout: MakeRoomLayout, iface: Interface, pol: Policy, tally: _Tally,
            array: MakeRoomResult, seed: SeedInfo, spec: StoreSpec, trials: int,
            elapsed: float, confidence: float, reuse: bool, cpu: float
            ) -> EngineMakeRoomResult:
    n, kappa = layout.n, layout.kappa
    counts = tally.counts
    mean, se = mean_from_counts(counts)
    ci = mean_interval(mean, se, trials, confidence, lo=0.0, hi=float(kappa))
    # Same rules as the array simulator's checks, applied to the engine's estimate.
    tol = CHECK_SIGMAS * max(se, kappa / trials)
    exact = array.exact_mean_z
    agrees = None if exact is None else agrees_with(exact, mean, se, trials, kappa)
    top = math.log2(n)
    rate_hi = min(top, array.rate_bits + CHECK_SIGMAS * array.rate_bits_se)
    upper = mean + tol
    consistent = upper >= theory.optimal_mean_z(n, kappa, rate_hi) - 1e-9
    if array.lower_bound is not None:
        consistent = consistent and upper >= theory.makeroom_lower_bound(n, kappa, rate_hi) - 1e-9
    spread = math.hypot(se, array.mean_z_se)
    diff = mean - array.mean_z
    z = diff / spread if spread > 0 else (0.0 if diff == 0 else math.copysign(math.inf, diff))
    # A zero-variance pair (the ledger's Z = 0) must match exactly; otherwise 4 SE,
    # with the same kappa/trials floor as the exact check for rare events.
    agrees_array = abs(diff) <= CHECK_SIGMAS * max(spread, kappa / trials) if spread > 0 \
        else diff == 0
    exact_reads = (tally.byte_mismatches == 0 and tally.queries_ok == tally.queries
                   and tally.undo_mismatches == 0)
    return EngineMakeRoomResult(
        n=n, kappa=kappa, interface=iface.name, params=dict(iface.params), policy=pol.name,
        mode="engine", mean_z=mean, mean_z_se=se, mean_z_ci=ci, confidence=confidence,
        z_counts=tuple(int(c) for c in counts), rate_bits=array.rate_bits,
        rate_bits_se=array.rate_bits_se, rate_exact=array.rate_exact,
        rate_trials=array.rate_trials, lower_bound=array.lower_bound,
        lower_bound_note=array.lower_bound_note, nu=array.nu, exact_mean_z=exact,
        optimal_mean_z=array.optimal_mean_z, agrees_with_exact=agrees,
        consistent_with_theory=bool(consistent), trials=trials, seed_entropy=seed.entropy,
        seed_spawn_key=seed.spawn_key, elapsed_seconds=elapsed,
        trials_per_second=trials / elapsed if elapsed > 0 else math.inf,
        store=spec.kind, tokenizer=layout.tokenizer, l_tokens=layout.l_tokens,
        L_tokens=layout.L_tokens, budget_tokens=layout.budget,
        archive_events=tally.archive_events, read_events=tally.read_events,
        recovery_obligations=int(np.dot(np.arange(kappa + 1), counts)),
        byte_exact_recoveries=tally.byte_exact, byte_mismatches=tally.byte_mismatches,
        queries=tally.queries, queries_answered=tally.queries_ok,
        size_mismatches=tally.size_mismatches, size_residual_max=tally.size_residual_max,
        budget_mismatches=tally.budget_mismatches, stop_mismatches=tally.stop_mismatches,
        z_excess=tally.z_excess, reuse=reuse, workspaces=tally.workspaces, cpu_seconds=cpu,
        undo_mismatches=tally.undo_mismatches,
        array_mean_z=array.mean_z, array_mean_z_se=array.mean_z_se,
        array_trials=array.trials, z_score=z, agrees_with_array=bool(agrees_array),
        all_recoveries_byte_exact=bool(exact_reads),
        calibration=dict(layout.calibration),
        calibration_seconds=float(layout.calibration.get("seconds", 0.0)),
    )
