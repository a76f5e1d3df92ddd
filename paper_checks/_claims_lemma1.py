"""Claims of Lemma 1 (list-decoding Fano, part (A) of Theorem 1's proof), checked on random
discrete interfaces, whose table Theorem 1's lower-bound claim reuses."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from vistalab import theory

from ._context import CheckContext
from ._records import Outcome
from ._registry import claim
from ._theory_formulas import FLOAT_TOL, _formula

L1 = "Theory: Lemma 1"


def _channels(rng: np.random.Generator, n: int) -> Iterator[np.ndarray]:
    """Joint laws P(J*, Y) with J* uniform: blind, noiseless, and random Dirichlet rows."""
    yield np.full((n, 1), 1.0 / n)
    yield np.eye(n) / n
    for ny in (2, 3, n):
        for alpha in (0.05, 0.3, 1.0, 5.0, 50.0):
            for _ in range(2):
                yield rng.dirichlet(np.full(ny, alpha), size=n) / n


def _mutual_information(joint: np.ndarray) -> float:
    pj = joint.sum(axis=1, keepdims=True)
    py = joint.sum(axis=0, keepdims=True)
    mask = joint > 0
    return float(max(0.0, (joint[mask] * np.log2(joint[mask] / (pj @ py)[mask])).sum()))


def _best_list_pc(joint: np.ndarray) -> np.ndarray:
    """P_c(m) of the best (Y,U)-measurable size-m list, m = 0..n: top-m posterior mass."""
    cols = -np.sort(-joint, axis=0)
    return np.concatenate([[0.0], np.cumsum(cols, axis=0).sum(axis=1)])


def _channel_table(ctx: CheckContext) -> list[tuple[int, float, np.ndarray]]:
    def compute() -> list[tuple[int, float, np.ndarray]]:
        rng = np.random.default_rng(ctx.seed_seq("channels"))
        out = []
        for n in (4, 5, 6, 8, 12):
            for joint in _channels(rng, n):
                out.append((n, _mutual_information(joint), _best_list_pc(joint)))
        return out

    return ctx.cached("channels", compute)


@claim(
    "lemma1.list-fano",
    section=L1,
    where="Lemma 1 (paper.tex line 1231) and Appendix D (A)",
    statement="log2 n - I <= 1 + P_c log2 m + (1 - P_c) log2(n - m) for every list of size m",
    tolerance="exact evaluation on random discrete interfaces (n = 4..12, 32 channels each, "
              "the best list for every m); violations beyond 1e-9 fail; "
              "theory.list_fano_pc_bound must not be below the achieved P_c",
    data=("statement:lemma1", "theory:list_fano_pc_bound", "certificate:lemma1"),
    certificates=("lemma1",),
    kind="theory",
)
def _lemma1(ctx: CheckContext) -> Outcome:
    lhs = _formula(ctx, "lemma1", "lhs")
    rhs = _formula(ctx, "lemma1", "rhs")
    impl = theory.list_fano_pc_bound
    problems: list[str] = []
    checked = 0
    slack: tuple[float, Any] = (math.inf, None)
    for n, info, pc in _channel_table(ctx):
        for m in range(1, n):
            kw = {"n": n, "m": m, "I": info, "P_c": float(pc[m])}
            gap = rhs(**kw) - lhs(**kw)
            checked += 1
            if gap < -FLOAT_TOL:
                problems.append(f"violated by {-gap:.4g} bits at n={n}, m={m}, I={info:.4f}, "
                                f"P_c={pc[m]:.4f}")
            if gap < slack[0]:
                slack = (gap, (n, m, round(info, 4), round(float(pc[m]), 4)))
            if impl(n, m, min(info, math.log2(n))) < pc[m] - FLOAT_TOL:
                problems.append(f"theory's P_c bound {impl(n, m, info):.4f} < achieved "
                                f"{pc[m]:.4f} at n={n}, m={m}")
    return Outcome.verdict(problems[:5], f"{checked} (interface, m) pairs satisfy the lemma; "
                           f"smallest slack {slack[0]:.3g} bits at (n, m, I, P_c) = {slack[1]}",
                           pairs=checked, min_slack_bits=slack[0],
                           mean_interface_rate_bits=round(float(np.mean(
                               [info for _, info, _ in _channel_table(ctx)])), 6),
                           seed_entropy=ctx.seed_seq("channels").entropy)
