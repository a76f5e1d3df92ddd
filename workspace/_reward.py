"""The RL adaptation's process signal (paper eq. process-reward) over a trajectory
of workspace turns, and the clipped, outcome-normalised group advantage
(eq. context-grpo-advantage).

A *turn* is one LLM call: the model saw a rendering of the workspace, then
its output may have run context actions (archive, delete, restore, read).
Every LLM token of a turn shares one process value

    Q = Q_pressure + Q_invalid + Q_undo,
    Q_pressure = -lambda_p * max(0, (p - rho) / (1 - rho)),  p = |F(W)| / B,
    Q_invalid  = -lambda_i  iff a context action of the turn failed or left
                            the canonical workspace hash unchanged,
    Q_undo     = -lambda_u  iff the turn is one side of an archive-recovery
                            pair that restores the same hash before any
                            new observation or context growth,

and the group advantage is ``(clip(R_i + Q, 0, 1) - mu_R) / (sigma_R + eps)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._errors import WorkspaceArgumentError
from ._protocol import error_text

__all__ = [
    "RHO",
    "LAMBDA_P",
    "LAMBDA_I",
    "LAMBDA_U",
    "ADVANTAGE_EPS",
    "ACTION_OPS",
    "RECOVERY_OPS",
    "ContextAction",
    "RewardTurn",
    "Trajectory",
    "ProcessReward",
    "GroupAdvantage",
    "process_reward",
    "context_grpo_advantage",
]

#: Soft pressure threshold rho (paper: 0.8).
RHO = 0.8
#: Weight of the pressure penalty lambda_p (paper: 1).
LAMBDA_P = 1.0
#: Weight of the invalid-action penalty lambda_i (paper: 1).
LAMBDA_I = 1.0
#: Weight of the undo penalty lambda_u (paper: 0.2).
LAMBDA_U = 0.2
#: epsilon of eq. context-grpo-advantage. The paper does not state it; this is
#: the usual small guard against a zero outcome spread.
ADVANTAGE_EPS = 1e-6

#: Event kinds that are context actions (everything else in the log is a
#: registration, i.e. an observation or context growth).
ACTION_OPS = ("archive", "delete", "restore", "read")
#: Actions that bring archived content back (the second half of an undo pair).
RECOVERY_OPS = ("restore", "read")
# Reads never change W_t in this engine: the bytes read enter the workspace as
# the call's tool result, a registration. Judging a read by "hash unchanged"
# would call every recovery invalid, so a read is invalid only when it fails.
_HASH_JUDGED_OPS = ("archive", "delete", "restore")


# ----------------------------------------------------------------- records


@dataclass(frozen=True, slots=True)
class ContextAction:
    """One context action executed during a turn.

    Attributes
    ----------
    op : str
        ``archive``, ``delete``, ``restore`` or ``read``.
    target : str
        The block selector (``"B3,B4"``, ``"G2"``) or the payload path read.
    ok : bool
        False if the executor refused it (the workspace is then unchanged).
    hash_before, hash_after : str
        Canonical workspace hash just before and just after the action.
    seq : int
        Position in the trajectory's event order (the engine's event ``seq``);
        orders actions against registrations for the undo rule.
    detail : str
        The executor's result: a payload path, unit IDs, or the error.
    """

    op: str
    target: str
    ok: bool
    hash_before: str
    hash_after: str
    seq: int
    detail: str = ""

    @property
    def changed(self) -> bool:
        """True if the action changed the canonical workspace hash."""
        return self.hash_before != self.hash_after

    @property
    def invalid_reason(self) -> str:
        """Why the action earns Q_invalid, or ``""`` if it does not."""
        if not self.ok:
            return f"{self.op} {self.target}: {self.detail or 'refused'}"
        if self.op in _HASH_JUDGED_OPS and not self.changed:
            return f"{self.op} {self.target}: left the workspace hash unchanged"
        return ""

    def to_plain(self) -> dict[str, Any]:
        """Plain data of the action, one key per field (for saved trajectories).

        Returns
        -------
        dict
            ``op``, ``target``, ``ok``, ``hash_before``, ``hash_after``, ``seq``
            and ``detail``.
        """
        return {
            "op": self.op,
            "target": self.target,
            "ok": self.ok,
            "hash_before": self.hash_before,
            "hash_after": self.hash_after,
            "seq": self.seq,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class RewardTurn:
    """One LLM turn as the process reward sees it.

    Attributes
    ----------
    index : int
        Turn number within the trajectory, from 0.
    tokens : int
        ``|F(W_t)|`` of the pre-action rendering: the candidate rendering
        (visible blocks, handles, notices and dashboard) before preflight, so
        pressure keeps growing past the budget instead of dropping to the
        small management rendering in overflow mode.
    budget : int
        B.
    rendered_tokens : int
        ``|C_t|`` after preflight (``<= budget``); informative only.
    mode : str
        ``normal`` or ``overflow``.
    state_hash : str
        Canonical hash of the workspace the model saw.
    actions : tuple of ContextAction
        Context actions the turn's output ran, in order.
    growth : tuple of int
        Event positions (same order as ``ContextAction.seq``) of every
        registration during the turn: the model's own message, tool results,
        new user messages. Any of them between an archive and a recovery
        breaks an undo pair.
    tool_errors : tuple of str
        Error strings the context-tool executor returned to this turn's
        calls (covers calls that failed before any action ran, such as
        malformed JSON or an unknown tool).
    message_index : int or None
        Index of the trace item the model produced (None if unknown).
    """

    index: int
    tokens: int
    budget: int
    rendered_tokens: int = 0
    mode: str = "normal"
    state_hash: str = ""
    actions: tuple[ContextAction, ...] = ()
    growth: tuple[int, ...] = ()
    tool_errors: tuple[str, ...] = ()
    message_index: int | None = None

    @property
    def occupancy(self) -> float:
        """p = ``|F(W_t)|`` / B."""
        return self.tokens / self.budget

    def to_plain(self) -> dict[str, Any]:
        """Plain data of the turn, one key per field, its actions as their
        :meth:`ContextAction.to_plain`.

        Returns
        -------
        dict
            The turn's fields, tuples as lists.
        """
        return {
            "index": self.index,
            "tokens": self.tokens,
            "budget": self.budget,
            "rendered_tokens": self.rendered_tokens,
            "mode": self.mode,
            "state_hash": self.state_hash,
            "actions": [a.to_plain() for a in self.actions],
            "growth": list(self.growth),
            "tool_errors": list(self.tool_errors),
            "message_index": self.message_index,
        }


@dataclass(frozen=True, slots=True)
class Trajectory:
    """One rollout: its LLM turns and where the workspace ended.

    Attributes
    ----------
    turns : tuple of RewardTurn
    budget : int
    tokenizer : str
    final_state_hash : str
    source : str
        Where it came from (a trace path, or ``""``).
    """

    turns: tuple[RewardTurn, ...]
    budget: int
    tokenizer: str = ""
    final_state_hash: str = ""
    source: str = ""

    def to_plain(self) -> dict[str, Any]:
        """Plain data of the trajectory: source, budget, tokenizer, final state
        hash, and its turns as their :meth:`RewardTurn.to_plain`.

        Returns
        -------
        dict
            The trajectory as JSON data.
        """
        return {
            "source": self.source,
            "budget": self.budget,
            "tokenizer": self.tokenizer,
            "final_state_hash": self.final_state_hash,
            "turns": [t.to_plain() for t in self.turns],
        }


def _frozen(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


@dataclass(frozen=True, slots=True)
class ProcessReward:
    """Eq. process-reward evaluated on every turn of one trajectory.

    Attributes
    ----------
    occupancy : ndarray
        p_t = ``|F(W_t)|`` / B per turn.
    pressure, invalid, undo : ndarray
        The three terms per turn (each <= 0).
    total : ndarray
        Q_t, their sum (not clipped: clipping happens in the advantage).
    undo_pairs : tuple of (int, int)
        (archive turn, recovery turn) of every undo pair found.
    invalid_reasons : tuple of tuple of str
        Per turn, why Q_invalid applies (empty when it does not).
    rho, lambda_p, lambda_i, lambda_u : float
        The configuration used.
    """

    occupancy: np.ndarray
    pressure: np.ndarray
    invalid: np.ndarray
    undo: np.ndarray
    total: np.ndarray
    undo_pairs: tuple[tuple[int, int], ...]
    invalid_reasons: tuple[tuple[str, ...], ...]
    rho: float
    lambda_p: float
    lambda_i: float
    lambda_u: float

    @property
    def n_turns(self) -> int:
        """The number of turns the reward was evaluated on."""
        return int(self.total.shape[0])

    def per_token(self, token_counts: Sequence[int] | np.ndarray) -> np.ndarray:
        """Q for every LLM token: each turn's value repeated over its tokens
        (Section "RL Adaptation": the pressure is shared by all LLM tokens of a turn).

        Parameters
        ----------
        token_counts : sequence of int or numpy.ndarray
            The number of LLM tokens the model generated in each turn (one
            non-negative integer per turn).

        Returns
        -------
        numpy.ndarray
            Q_{i,t} per token, ``sum(token_counts)`` values in turn order.

        Raises
        ------
        WorkspaceArgumentError
            If ``token_counts`` is not one non-negative integer per turn.
        """
        counts = _counts_iv(token_counts, self.n_turns)
        return np.repeat(self.total, counts)

    def to_plain(self) -> dict[str, Any]:
        """Plain data: the configuration (rho and the three lambdas) and every
        per-turn array and list.

        Returns
        -------
        dict
            ``config``, ``occupancy``, ``pressure``, ``invalid``, ``undo``, ``total``,
            ``undo_pairs`` and ``invalid_reasons`` as JSON data.
        """
        return {
            "config": {
                "rho": self.rho,
                "lambda_p": self.lambda_p,
                "lambda_i": self.lambda_i,
                "lambda_u": self.lambda_u,
            },
            "occupancy": self.occupancy.tolist(),
            "pressure": self.pressure.tolist(),
            "invalid": self.invalid.tolist(),
            "undo": self.undo.tolist(),
            "total": self.total.tolist(),
            "undo_pairs": [list(p) for p in self.undo_pairs],
            "invalid_reasons": [list(r) for r in self.invalid_reasons],
        }


@dataclass(frozen=True, slots=True)
class GroupAdvantage:
    """Eq. context-grpo-advantage for one group of G trajectories of a task.

    Attributes
    ----------
    outcomes : ndarray
        R_i in [0, 1], shape (G,).
    mu, sigma : float
        Mean and population standard deviation of the outcomes (the group
        baseline and scale come from outcome reward only).
    eps : float
    advantages : tuple of ndarray
        Per trajectory, the advantage of each turn (or of each entry of the
        process arrays passed in).
    lower, upper : float
        The clip bounds ``(0 - mu) / (sigma + eps)`` and ``(1 - mu) / (sigma + eps)``;
        every advantage lies between them.
    degenerate : bool
        True when sigma == 0 (all outcomes equal): there is no
        outcome-relative signal and the paper screens such groups out;
        advantages then only scale process penalties by 1/eps.
    """

    outcomes: np.ndarray
    mu: float
    sigma: float
    eps: float
    advantages: tuple[np.ndarray, ...]
    lower: float
    upper: float
    degenerate: bool

    @property
    def group_size(self) -> int:
        """G, the number of trajectories in the group."""
        return int(self.outcomes.shape[0])

    def per_token(self, i: int, token_counts: Sequence[int] | np.ndarray) -> np.ndarray:
        """Advantage of every LLM token of trajectory ``i`` (turn values repeated).

        Parameters
        ----------
        i : int
            The trajectory's index in the group, ``0 <= i < G``.
        token_counts : sequence of int or numpy.ndarray
            The number of LLM tokens the model generated in each turn (one
            non-negative integer per turn).

        Returns
        -------
        numpy.ndarray
            The advantage per token (eq. context-grpo-advantage), in turn order.

        Raises
        ------
        WorkspaceArgumentError
            If ``i`` is not a trajectory index, or ``token_counts`` is not one
            non-negative integer per turn of that trajectory.
        """
        if (
            isinstance(i, bool)
            or not isinstance(i, (int, np.integer))
            or not (0 <= i < self.group_size)
        ):
            raise WorkspaceArgumentError(
                "i", i, f"must be a trajectory index with 0 <= i < {self.group_size}"
            )
        adv = self.advantages[int(i)]
        return np.repeat(adv, _counts_iv(token_counts, adv.shape[0]))

    def to_plain(self) -> dict[str, Any]:
        """Plain data of the group's advantage: outcomes, mu, sigma, eps, the clip
        bounds, the degenerate flag and the per-trajectory advantages.

        Returns
        -------
        dict
            The fields as JSON data, arrays as lists.
        """
        return {
            "outcomes": self.outcomes.tolist(),
            "mu": self.mu,
            "sigma": self.sigma,
            "eps": self.eps,
            "lower": self.lower,
            "upper": self.upper,
            "degenerate": self.degenerate,
            "advantages": [a.tolist() for a in self.advantages],
        }


# ----------------------------------------------------------------- reward


def process_reward(
    trajectory: Trajectory | Sequence[RewardTurn],
    *,
    rho: float = RHO,
    lambda_p: float = LAMBDA_P,
    lambda_i: float = LAMBDA_I,
    lambda_u: float = LAMBDA_U,
) -> ProcessReward:
    """Per-turn process signal Q of eq. process-reward.

    Parameters
    ----------
    trajectory : Trajectory or sequence of RewardTurn
    rho : float
        Soft pressure threshold, ``0 <= rho < 1``.
    lambda_p, lambda_i, lambda_u : float
        Non-negative penalty weights.

    Returns
    -------
    ProcessReward

    Notes
    -----
    Each term is a per-turn indicator times its weight: a turn with two
    invalid actions still earns ``-lambda_i`` once. An undo pair matches a
    valid recovery (a ``restore`` or ``read`` that is not itself invalid) to
    the latest earlier valid archive whose ``hash_before`` equals the
    recovery's ``hash_after``, with no registration in between; both turns
    earn ``-lambda_u`` (once per turn). In this engine only a harness-level
    ``restore`` can give back an earlier hash: an in-band read adds its
    result as a new block, which is context growth.
    """
    turns, rho, lambda_p, lambda_i, lambda_u = _process_reward_iv(
        trajectory, rho, lambda_p, lambda_i, lambda_u
    )
    n = len(turns)
    occupancy = np.array([t.tokens / t.budget for t in turns], dtype=np.float64)
    pressure = -lambda_p * np.maximum(0.0, (occupancy - rho) / (1.0 - rho))
    # -0.0 where the term is off would print oddly and compare unequal in JSON.
    pressure = pressure + 0.0

    reasons: list[tuple[str, ...]] = []
    for t in turns:
        why = [a.invalid_reason for a in t.actions if a.invalid_reason]
        failed = {error_text(a.detail) for a in t.actions if not a.ok}
        # A failed action already explains the error string it returned.
        why += [e for e in t.tool_errors if e not in failed]
        reasons.append(tuple(why))
    invalid = np.array([-lambda_i if r else 0.0 for r in reasons], dtype=np.float64) + 0.0

    pairs = _undo_pairs(turns)
    in_pair = np.zeros(n, dtype=bool)
    for a, r in pairs:
        in_pair[a] = in_pair[r] = True
    undo = np.where(in_pair, -lambda_u, 0.0) + 0.0

    total = pressure + invalid + undo
    return ProcessReward(
        occupancy=_frozen(occupancy),
        pressure=_frozen(pressure),
        invalid=_frozen(invalid),
        undo=_frozen(undo),
        total=_frozen(total),
        undo_pairs=tuple(pairs),
        invalid_reasons=tuple(reasons),
        rho=rho,
        lambda_p=lambda_p,
        lambda_i=lambda_i,
        lambda_u=lambda_u,
    )


def _undo_pairs(turns: Sequence[RewardTurn]) -> list[tuple[int, int]]:
    """(archive turn, recovery turn) pairs, scanning actions in event order."""
    timeline: list[tuple[int, int, ContextAction | None]] = []  # (seq, turn, action or growth)
    for t in turns:
        timeline.extend((a.seq, t.index, a) for a in t.actions)
        timeline.extend((s, t.index, None) for s in t.growth)
    timeline.sort(key=lambda x: x[0])
    open_archives: list[tuple[int, ContextAction]] = []  # since the last growth
    pairs: list[tuple[int, int]] = []
    for _seq, turn, action in timeline:
        if action is None:
            open_archives.clear()  # new observation or context growth
            continue
        if action.invalid_reason:
            continue
        if action.op == "archive":
            open_archives.append((turn, action))
            continue
        if action.op not in RECOVERY_OPS:
            continue
        for k in range(len(open_archives) - 1, -1, -1):
            a_turn, archive = open_archives[k]
            if archive.hash_before == action.hash_after:
                pairs.append((a_turn, turn))
                del open_archives[k:]  # the later archives were undone with it
                break
    return pairs


def context_grpo_advantage(
    outcomes: Sequence[float] | np.ndarray,
    process: Sequence[ProcessReward | Sequence[float] | np.ndarray],
    *,
    eps: float = ADVANTAGE_EPS,
) -> GroupAdvantage:
    """Clipped, outcome-normalised advantage of eq. context-grpo-advantage.

    Parameters
    ----------
    outcomes : sequence of float
        Task rewards R_i in [0, 1] of the G trajectories of one task.
    process : sequence of ProcessReward or array-like
        Per trajectory, the process values Q (per turn or per token).
    eps : float
        Positive guard added to sigma_R.

    Returns
    -------
    GroupAdvantage
        ``A_i = (clip(R_i + Q_i, 0, 1) - mu_R) / (sigma_R + eps)`` with mu_R and
        sigma_R (population) from the outcomes alone.
    """
    r, qs, eps = _advantage_iv(outcomes, process, eps)
    mu = float(r.mean())
    sigma = float(np.sqrt(np.mean((r - mu) ** 2)))
    scale = sigma + eps
    advs = tuple(_frozen((np.clip(r[i] + q, 0.0, 1.0) - mu) / scale) for i, q in enumerate(qs))
    return GroupAdvantage(
        outcomes=_frozen(r),
        mu=mu,
        sigma=sigma,
        eps=eps,
        advantages=advs,
        lower=(0.0 - mu) / scale,
        upper=(1.0 - mu) / scale,
        degenerate=sigma == 0.0,
    )


# ----------------------------------------------------------------- validation


def _weight(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise WorkspaceArgumentError(name, value, "must be a real number", f"pass {name}=1.0")
    v = float(value)
    if not math.isfinite(v) or v < 0:
        raise WorkspaceArgumentError(
            name, value, "must be finite and >= 0", "penalty weights are magnitudes"
        )
    return v


def _process_reward_iv(
    trajectory: Any, rho: Any, lambda_p: Any, lambda_i: Any, lambda_u: Any
) -> tuple[list[RewardTurn], float, float, float, float]:
    if isinstance(rho, bool) or not isinstance(rho, (int, float, np.integer, np.floating)):
        raise WorkspaceArgumentError("rho", rho, "must be a real number", "the paper uses 0.8")
    rho_f = float(rho)
    if not (0.0 <= rho_f < 1.0):
        raise WorkspaceArgumentError(
            "rho", rho, "must satisfy 0 <= rho < 1 (it divides by 1 - rho)", "the paper uses 0.8"
        )
    turns_in = trajectory.turns if isinstance(trajectory, Trajectory) else trajectory
    if isinstance(turns_in, (str, bytes)) or not isinstance(turns_in, Iterable):
        raise WorkspaceArgumentError(
            "trajectory", trajectory, "must be a Trajectory or a sequence of RewardTurn"
        )
    turns = list(turns_in)
    for k, t in enumerate(turns):
        if not isinstance(t, RewardTurn):
            raise WorkspaceArgumentError(
                "trajectory", t, f"item {k} must be a RewardTurn", "build turns with RewardTurn"
            )
        if t.index != k:
            raise WorkspaceArgumentError(
                "trajectory", t.index, f"turn {k} must have index {k}", "number turns from 0"
            )
        if isinstance(t.budget, bool) or not isinstance(t.budget, int) or t.budget < 1:
            raise WorkspaceArgumentError(
                "budget", t.budget, f"of turn {k} must be a positive integer"
            )
        if isinstance(t.tokens, bool) or not isinstance(t.tokens, int) or t.tokens < 0:
            raise WorkspaceArgumentError(
                "tokens", t.tokens, f"of turn {k} must be a non-negative integer"
            )
    return (
        turns,
        rho_f,
        _weight("lambda_p", lambda_p),
        _weight("lambda_i", lambda_i),
        _weight("lambda_u", lambda_u),
    )


def _advantage_iv(
    outcomes: Any, process: Any, eps: Any
) -> tuple[np.ndarray, list[np.ndarray], float]:
    try:
        r = np.array(outcomes, dtype=np.float64)
    except (TypeError, ValueError):
        raise WorkspaceArgumentError(
            "outcomes", outcomes, "must be a list of numbers in [0, 1]"
        ) from None
    if r.ndim != 1 or r.size == 0:
        raise WorkspaceArgumentError(
            "outcomes", outcomes, "must be a non-empty 1-D list (one R_i per trajectory)"
        )
    bad = np.flatnonzero(~(np.isfinite(r) & (r >= 0.0) & (r <= 1.0)))
    if bad.size:
        i = int(bad[0])
        raise WorkspaceArgumentError(
            "outcomes",
            outcomes,
            f"must lie in [0, 1] (R_{i} = {float(r[i])!r})",
            "rescale the task score to [0, 1]",
        )
    if isinstance(process, (str, bytes)) or not isinstance(process, Sequence):
        raise WorkspaceArgumentError("process", process, "must be a list with one entry per R_i")
    if len(process) != r.size:
        raise WorkspaceArgumentError(
            "process",
            f"{len(process)} entries",
            f"must have one entry per outcome ({r.size})",
            "pass the process reward of every trajectory in the group",
        )
    qs: list[np.ndarray] = []
    for i, p in enumerate(process):
        raw = p.total if isinstance(p, ProcessReward) else p
        try:
            q = np.array(raw, dtype=np.float64)
        except (TypeError, ValueError):
            raise WorkspaceArgumentError(
                "process", raw, f"entry {i} must be a ProcessReward or a list of numbers"
            ) from None
        if q.ndim != 1 or not np.all(np.isfinite(q)):
            raise WorkspaceArgumentError(
                "process", raw, f"entry {i} must be a 1-D list of finite numbers"
            )
        qs.append(q)
    if isinstance(eps, bool) or not isinstance(eps, (int, float, np.integer, np.floating)):
        raise WorkspaceArgumentError("eps", eps, "must be a real number", "e.g. eps=1e-6")
    e = float(eps)
    if not math.isfinite(e) or e <= 0:
        raise WorkspaceArgumentError(
            "eps", eps, "must be finite and > 0", "it keeps 1/(sigma + eps) finite"
        )
    return r, qs, e


def _counts_iv(token_counts: Any, n: int) -> np.ndarray:
    try:
        c = np.array(token_counts)
    except (TypeError, ValueError):
        c = np.array([], dtype=object)
    if (
        c.ndim != 1
        or c.shape[0] != n
        or (c.size and not np.issubdtype(c.dtype, np.integer))
        or (c.size and int(c.min()) < 0)
    ):
        raise WorkspaceArgumentError(
            "token_counts",
            token_counts,
            f"must be {n} non-negative integers (one per turn)",
            "count the LLM tokens the model generated in each turn",
        )
    return c.astype(np.int64)
