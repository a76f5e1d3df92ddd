"""The engine's handle cost (fit of c0 in c0 log2 N) and its feasibility region for the
recovering method, against theory's condition (Proposition 1) with measured token costs."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from vistalab.theory import DomainError, HandleCostModel
from vistalab.theory._validate import as_int, as_real
from vistalab.workspace import WorkspaceError

from vistalab import theory

from ._engine_common import MemoTokenizer, StoreSpec, store_iv, store_root_iv, tokenizer_iv
from ._engine_recovery_trial import _act, _answer_recover, _bits_text, _history, _probe, _Setup
from ._seeding import SeedInfo, root_seed, stream, stream_seq

__all__ = ["HandleCostFit", "FeasibilityMap", "measure_handle_cost", "recovery_feasibility_map"]


@dataclass(frozen=True)
class HandleCostFit:
    """Handle cost of the engine as N grows, fitted to theory's c0 log2 N.

    Attributes
    ----------
    N : tuple of int
        Block counts measured.
    handle_tokens : tuple of float
        Mean prompt tokens of one archive handle with N blocks archived.
    c0 : float
        Least-squares fit of ``handle_tokens = c0 log2 N`` (through the
        origin, theory's model), in tokens per log2 N (N >= 2 only).
    c0_residual_max : float
        Largest ``|measured - c0 log2 N|`` in tokens.
    intercept, slope : float
        Affine fit ``intercept + slope log2 N``: the engine's handle is mostly
        a constant (tag, level, size, checksum, folder) plus the ID and file
        name, whose digits grow like log N.
    affine_residual_max : float
    tokenizer, store_root : str
    k : int
        Bits per block used for the measurement.
    """

    N: tuple[int, ...]
    handle_tokens: tuple[float, ...]
    c0: float
    c0_residual_max: float
    intercept: float
    slope: float
    affine_residual_max: float
    tokenizer: str
    store_root: str
    k: int

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict of the fit: the measured handle tokens per N,
        c0 and the affine fit with their residuals, the tokenizer and store.

        Returns
        -------
        dict
            One key per field, tuples as lists.
        """
        return {"N": list(self.N), "handle_tokens": list(self.handle_tokens), "c0": self.c0,
                "c0_residual_max": self.c0_residual_max, "intercept": self.intercept,
                "slope": self.slope, "affine_residual_max": self.affine_residual_max,
                "tokenizer": self.tokenizer, "store_root": self.store_root, "k": self.k}


def _n_values_iv(N_values: Any, *, hi: int) -> list[int]:
    """A non-empty collection of block counts 2 <= N <= hi, sorted and distinct."""
    values = np.asarray(N_values, dtype=object) if not isinstance(N_values, (str, bytes)) \
        else np.asarray([N_values], dtype=object)
    items = list(np.atleast_1d(values).ravel()) if values.ndim <= 1 else None
    if items is None or not items:
        raise DomainError("N_values", N_values, f"must be a non-empty list of integers "
                          f"2 <= N <= {hi}", "pass e.g. (4, 16, 64)")
    out = set()
    for v in items:
        try:
            out.add(as_int("N_values", v, lo=2, hi=hi,
                           rule=f"must hold integers 2 <= N <= {hi}", fix="pass e.g. (4, 16, 64)"))
        except DomainError:
            raise DomainError("N_values", N_values, f"must hold integers 2 <= N <= {hi}",
                              "pass e.g. (4, 16, 64)", context=f"bad entry {v!r}") from None
    return sorted(out)


def measure_handle_cost(
    N_values: Any = (2, 4, 8, 16, 32, 64, 128, 256, 512, 1024),
    *,
    k: int = 64,
    tokenizer: str = "cl100k_base",
    store: str = "memory",
    rng: Any = None,
) -> HandleCostFit:
    """Measure tokens per archive handle for each N and fit ``c0 log2 N``.

    Each N builds one engine history of N random k-bit blocks, archives all of
    them and reads each handle's prompt cost from the rendering.

    Parameters
    ----------
    N_values : sequence of int
        The numbers of blocks to measure, each >= 2.
    k : int
        Bits per block.
    tokenizer : {"cl100k_base", "approx"}
        The engine's tokenizer.
    store : {"memory", "disk"}
        The payload store (its root appears in every handle).
    rng : None, int, SeedSequence or Generator
        Seed of the random blocks.

    Returns
    -------
    HandleCostFit
        The fitted intercept and slope of tokens per handle against log2 N.
    """
    Ns = _n_values_iv(N_values, hi=10_000)
    if len(Ns) < 2:
        raise DomainError("N_values", N_values, "must hold at least two distinct N >= 2",
                          "pass e.g. (8, 64, 512)")
    k = as_int("k", k, lo=1, hi=4096, fix="bits per block of the measurement")
    seed = root_seed(rng)
    with store_iv(store) as spec:
        return _handle_cost_fit(Ns, k, tokenizer_iv(tokenizer), spec, seed)


def _handle_cost_fit(Ns: list[int], k: int, tok: MemoTokenizer, spec: StoreSpec,
                     seed: SeedInfo) -> HandleCostFit:
    handles = []
    for i, N in enumerate(Ns):
        setup = _Setup(N, k, 1 << 30, "recover", tok, spec, 0)
        handles.append(_probe(setup, stream(seed, 0, i))["handle_tokens"])
    x = np.log2(np.asarray(Ns, dtype=float))
    y = np.asarray(handles, dtype=float)
    c0 = float(np.dot(x, y) / np.dot(x, x))
    slope, intercept = (float(v) for v in np.polyfit(x, y, 1))
    return HandleCostFit(
        N=tuple(Ns), handle_tokens=tuple(float(v) for v in y), c0=c0,
        c0_residual_max=float(np.max(np.abs(y - c0 * x))), intercept=intercept, slope=slope,
        affine_residual_max=float(np.max(np.abs(y - intercept - slope * x))),
        tokenizer=tok.name, store_root=spec.root, k=k)


@dataclass(frozen=True)
class FeasibilityMap:
    """Smallest budget at which the engine's recovering method succeeds, per N,
    next to theory's condition ``B >= instruction + N c0 log2 N + block``.

    Attributes
    ----------
    N : tuple of int
    k : int
    engine_threshold : tuple of int
        Smallest B (tokens) at which a recovering trial succeeds (bisection
        on fixed blocks; B - 1 fails).
    theory_threshold : tuple of float
        ``instruction + N c0 log2 N + block`` with the measured instruction
        and read-back tokens and the fitted ``c0``.
    theory_threshold_measured : tuple of float
        The same condition with this N's measured handle tokens instead of
        the fit: isolates the handle model from the condition itself.
    engine_floor : tuple of int
        The engine's own minimum budget (its overflow rendering must always
        fit); where it exceeds the condition, it is what binds.
    c0 : float
        The global fit used (tokens per log2 N).
    relative_error : tuple of float
        ``|engine - max(theory, floor)| / engine`` with the fitted c0.
    relative_error_measured : tuple of float
        Same with the measured handle tokens.
    """

    N: tuple[int, ...]
    k: int
    engine_threshold: tuple[int, ...]
    theory_threshold: tuple[float, ...]
    theory_threshold_measured: tuple[float, ...]
    engine_floor: tuple[int, ...]
    c0: float
    relative_error: tuple[float, ...]
    relative_error_measured: tuple[float, ...]

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict of the map: per N, the engine's threshold and
        floor next to theory's, and their relative errors.

        Returns
        -------
        dict
            One key per field, tuples as lists.
        """
        return {"N": list(self.N), "k": self.k, "engine_threshold": list(self.engine_threshold),
                "theory_threshold": list(self.theory_threshold),
                "theory_threshold_measured": list(self.theory_threshold_measured),
                "engine_floor": list(self.engine_floor), "c0": self.c0,
                "relative_error": list(self.relative_error),
                "relative_error_measured": list(self.relative_error_measured)}


def recovery_feasibility_map(
    N_values: Any = (4, 16, 64, 256),
    k: int = 256,
    *,
    tokenizer: str = "cl100k_base",
    c0: float | None = None,
    store_root: str = "mem://archive",
    rng: Any = None,
) -> FeasibilityMap:
    """Map where the engine's recovering method fits the budget, against theory.

    For each N, bisect the smallest engine budget B at which one recovering
    trial (archive all, query, read block i* back into the prompt) succeeds,
    with the blocks fixed; compare with ``theory.recovery_feasibility`` in
    token units, with ``c0`` from :func:`measure_handle_cost` over the same N
    (or the value given). The accounting probe runs at the threshold's own
    scale, since the budget's digits are part of the prompt.

    Handles show the payload path, so token costs (and the region) depend on
    the store's root: ``store_root`` is the root a run will use (the default
    is the in-memory store's; pass a ``vistalab.workspace.DiskStore``'s ``root``
    to map the region for payloads in that folder).

    Parameters
    ----------
    N_values : sequence of int
        The numbers of blocks to map.
    k : int
        Bits per block.
    tokenizer : {"cl100k_base", "approx"}
        The engine's tokenizer.
    c0 : float, optional
        Tokens per handle per log2 N (default: measured by
        :func:`measure_handle_cost` over the same N).
    store_root : str
        The payload store's root that the handles will show.
    rng : None, int, SeedSequence or Generator
        Seed of the random blocks.

    Returns
    -------
    FeasibilityMap
        Per N, the engine's smallest feasible budget beside theory's.
    """
    Ns = _n_values_iv(N_values, hi=4096)
    k = as_int("k", k, lo=1, hi=1 << 14, fix="bits per block")
    store_root = store_root_iv(store_root)
    seed = root_seed(rng)
    tok = tokenizer_iv(tokenizer)
    spec = StoreSpec("memory", store_root)
    if c0 is not None:
        c0 = as_real("c0", c0, lo=0.0, fix="tokens per log2(N) of one handle; omit it to "
                     "measure it")
    if c0 is None:
        c0 = _handle_cost_fit(Ns if len(Ns) >= 2 else [*Ns, 2 * Ns[0]], k, tok, spec,
                              root_seed(stream_seq(seed, 1))).c0
    eng, th, thm, floor, rel, relm = [], [], [], [], [], []
    for i, N in enumerate(Ns):
        budget = 1 << 30
        for _ in range(3):  # re-probe at the threshold's scale (budget digits)
            probe = _probe(_Setup(N, k, budget, "recover", tok, spec, 0), stream(seed, 2, i))
            need = probe["instruction_tokens"] + probe["handle_tokens_total"] \
                + probe["read_tokens"]
            if len(str(need)) == len(str(budget)):
                break
            budget = max(need, probe["floor_tokens"])
        cost = HandleCostModel(c0=float(c0), instruction=float(probe["instruction_tokens"]))
        t_fit = theory.recovery_feasibility(N, int(probe["read_tokens"]), 0, cost=cost).required
        cost_m = HandleCostModel(c0=probe["handle_tokens"] / math.log2(N),
                                 instruction=float(probe["instruction_tokens"]))
        t_meas = theory.recovery_feasibility(N, int(probe["read_tokens"]), 0,
                                             cost=cost_m).required
        b = _engine_threshold(N, k, tok, spec, stream_seq(seed, 2, i), start=int(t_meas))
        eng.append(b)
        th.append(float(t_fit))
        thm.append(float(t_meas))
        floor.append(int(probe["floor_tokens"]))
        rel.append(abs(b - max(t_fit, floor[-1])) / b)
        relm.append(abs(b - max(t_meas, floor[-1])) / b)
    return FeasibilityMap(N=tuple(Ns), k=k, engine_threshold=tuple(eng),
                          theory_threshold=tuple(th), theory_threshold_measured=tuple(thm),
                          engine_floor=tuple(floor), c0=float(c0), relative_error=tuple(rel),
                          relative_error_measured=tuple(relm))


def _engine_threshold(N: int, k: int, tok: MemoTokenizer, spec: StoreSpec,
                      seq: np.random.SeedSequence, *, start: int) -> int:
    """Smallest budget at which one fixed recovering trial succeeds (the same
    blocks and query as the accounting probe)."""

    def ok(budget: int) -> bool:
        setup = _Setup(N, k, budget, "recover", tok, spec, 0)
        try:
            return _fixed_trial(setup, seq)
        except WorkspaceError:  # below the engine's own floor
            return False

    hi = max(2, start)
    while not ok(hi):
        hi *= 2
    lo = hi // 2
    while lo > 1 and ok(lo):
        lo //= 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


def _fixed_trial(setup: _Setup, seq: np.random.SeedSequence) -> bool:
    """One recovering trial on the blocks of ``stream(seq)`` with the last block
    queried (the probe's case)."""
    from vistalab.workspace import MemoryStore

    gen = np.random.default_rng(seq)
    texts = _bits_text(gen, setup.N, setup.k)
    ws = _history(setup, texts, MemoryStore(setup.spec.root))
    _act(setup, ws, texts)
    return _answer_recover(ws, setup.N - 1, texts[-1]).success
