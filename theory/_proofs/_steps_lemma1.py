"""Lemma 1 (list-decoding Fano): the statement (claim "lemma1") and the steps
of its proof, part (A) of Appendix D (claim "thm1.A")."""

from __future__ import annotations

import itertools
import math

import numpy as np
import sympy as sp

from ._enumerate import entropy_bits, set_partitions
from ._lp import functional_dependence, independence
from ._randomized import run_property
from ._registry import Outcome, register_step
from ._steps_prop1 import binary_entropy_at_most_one, lp_outcome
from ._symbolic import certify_nonneg_combination, certify_nonneg_from_facts

LEMMA = "lemma1"
PART_A = "thm1.A"

#: Float tolerance of the randomised and enumerated Lemma 1 checks (bits).
TOL = 1e-9


def list_fano_rhs(n: int, m: int, pc: float) -> float:
    """1 + P_c log2 m + (1 - P_c) log2(n - m)."""
    return 1 + pc * math.log2(m) + (1 - pc) * math.log2(n - m)


def list_decoding_quantities(
    channel: np.ndarray, pu: np.ndarray, lists: np.ndarray
) -> tuple[float, float, float]:
    """(I(J;Y), P_c, H(J|E,Y,U)) for J uniform, Y ~ channel[j], U ~ pu independent,
    and list membership ``lists[y, u, j]`` (bool)."""
    n = channel.shape[0]
    joint = channel[:, :, None] * pu[None, None, :] / n  # j, y, u
    mi = entropy_bits(joint.sum((1, 2))) + entropy_bits(joint.sum((0, 2))) - entropy_bits(
        joint.sum(2)
    )
    inside = np.transpose(lists, (2, 0, 1))  # j, y, u
    pc = float(joint[inside].sum())
    # E is a function of (J, Y, U): H(J|E,Y,U) = H(J,Y,U) - H(E,Y,U).
    eyu = np.stack([np.where(inside, joint, 0).sum(0), np.where(inside, 0, joint).sum(0)])
    h_cond = entropy_bits(joint) - entropy_bits(eyu)
    return mi, pc, h_cond


def _draw_instance(data: object) -> tuple[int, int, np.ndarray, np.ndarray, np.ndarray]:
    from hypothesis import strategies as st

    draw = data.draw  # type: ignore[attr-defined]
    n = draw(st.integers(2, 7))
    m = draw(st.integers(1, n - 1))
    ny = draw(st.integers(1, 4))
    nu = draw(st.integers(1, 3))
    w = np.array(draw(st.lists(st.floats(0, 1), min_size=n * ny, max_size=n * ny))).reshape(n, ny)
    w = w + 1e-12  # keep rows normalisable
    channel = w / w.sum(1, keepdims=True)
    pu = np.array(draw(st.lists(st.floats(0.05, 1), min_size=nu, max_size=nu)))
    pu = pu / pu.sum()
    lists = np.zeros((ny, nu, n), dtype=bool)
    for y in range(ny):
        for u in range(nu):
            members = draw(st.permutations(range(n)))[:m]
            lists[y, u, list(members)] = True
    return n, m, channel, pu, lists


def lemma_property(data: object) -> None:
    n, m, channel, pu, lists = _draw_instance(data)
    mi, pc, _ = list_decoding_quantities(channel, pu, lists)
    assert math.log2(n) - mi <= list_fano_rhs(n, m, pc) + TOL, (
        f"n={n}, m={m}: log2 n - I = {math.log2(n) - mi} > {list_fano_rhs(n, m, pc)}"
    )


def support_property(data: object) -> None:
    n, m, channel, pu, lists = _draw_instance(data)
    _, pc, h_cond = list_decoding_quantities(channel, pu, lists)
    rhs = pc * math.log2(m) + (1 - pc) * math.log2(n - m)
    assert h_cond <= rhs + TOL, f"H(J|E,Y,U) = {h_cond} > {rhs}"


# --- Lemma 1, the statement ------------------------------------------------------


@register_step(
    LEMMA,
    "random_interfaces",
    "hypothesis",
    "n = 2..7, m = 1..n-1, random channels with |Y| <= 4, private U with |U| <= 3, random "
    "(Y,U)-measurable lists (float, tol 1e-9)",
    "log2 n - I <= 1 + P_c log2 m + (1 - P_c) log2(n - m)",
    "App. A, Lemma 1",
    generality="sampled",
)
def random_interfaces() -> Outcome:
    from hypothesis import strategies as st

    return run_property(lemma_property, st.data(), max_examples=150)


@register_step(
    LEMMA,
    "exhaustive_deterministic",
    "enumeration",
    "n = 2..4, m = 1..n-1: every deterministic interface (set partition of [n]) and every "
    "size-m list per observation (float, tol 1e-12)",
    "log2 n - I <= 1 + P_c log2 m + (1 - P_c) log2(n - m)",
    "App. A, Lemma 1",
    generality="finite",
)
def exhaustive_deterministic() -> Outcome:
    checked = tight = 0
    worst = math.inf
    for n in range(2, 5):
        for part in set_partitions(list(range(n))):
            ny = len(part)
            channel = np.zeros((n, ny))
            for y, bucket in enumerate(part):
                channel[bucket, y] = 1.0
            for m in range(1, n):
                subsets = list(itertools.combinations(range(n), m))
                for choice in itertools.product(subsets, repeat=ny):
                    lists = np.zeros((ny, 1, n), dtype=bool)
                    for y, sub in enumerate(choice):
                        lists[y, 0, list(sub)] = True
                    mi, pc, _ = list_decoding_quantities(channel, np.ones(1), lists)
                    slack = list_fano_rhs(n, m, pc) - (math.log2(n) - mi)
                    if slack < -1e-12:
                        return Outcome(False, f"n={n}, m={m}, partition {part}, lists {choice}: "
                                       f"slack {slack}")
                    worst = min(worst, slack)
                    tight += slack < 1e-12
                    checked += 1
    return Outcome(True, f"{checked} (interface, list) pairs, min slack {worst:.3g} "
                   f"({tight} tight cases)")


@register_step(
    LEMMA,
    "plus_one_is_necessary",
    "enumeration",
    "n = 2..4, m = 1..n-1, every deterministic interface and list (float, tol 1e-12)",
    "the +1 cannot be dropped: some interface violates log2 n - I <= P_c log2 m + "
    "(1-P_c) log2(n-m), and some attains Lemma 1 with equality",
    "App. A, Lemma 1 (sharpness)",
    generality="finite",
)
def plus_one_is_necessary() -> Outcome:
    violated = tight = None
    for n in range(2, 5):
        for part in set_partitions(list(range(n))):
            ny = len(part)
            channel = np.zeros((n, ny))
            for y, bucket in enumerate(part):
                channel[bucket, y] = 1.0
            for m in range(1, n):
                subsets = list(itertools.combinations(range(n), m))
                for choice in itertools.product(subsets, repeat=ny):
                    lists = np.zeros((ny, 1, n), dtype=bool)
                    for y, sub in enumerate(choice):
                        lists[y, 0, list(sub)] = True
                    mi, pc, _ = list_decoding_quantities(channel, np.ones(1), lists)
                    slack = list_fano_rhs(n, m, pc) - (math.log2(n) - mi)
                    if violated is None and slack - 1 < -1e-12:
                        violated = (n, m, part, choice)
                    if tight is None and abs(slack) < 1e-12:
                        tight = (n, m, part, choice)
    if violated is None or tight is None:
        return Outcome(False, f"no violation of the +1-free form ({violated}) or no tight case "
                       f"({tight}) found")
    return Outcome(True, f"+1-free form violated at n,m,Y,L = {violated}; equality at {tight}")


# --- Part (A): the proof steps ---------------------------------------------------


@register_step(
    PART_A,
    "flag_is_function",
    "lp-shannon",
    "any J, Y, U with E = 1[J not in L(Y,U)] a function of (J,Y,U)",
    "H(J,E|Y,U) = H(J|Y,U) given H(E|J,Y,U) = 0",
    "App. D (A)",
    generality="all",
)
def flag_is_function() -> Outcome:
    return lp_outcome("H(J,E|Y,U) = H(J|Y,U)", (functional_dependence("E", ("J", "Y", "U")),))


@register_step(
    PART_A,
    "chain_rule_split",
    "lp-shannon",
    "any J, E, Y, U (Shannon cone)",
    "H(J,E|Y,U) = H(E|Y,U) + H(J|E,Y,U) <= H(E) + H(J|E,Y,U)",
    "App. D (A)",
    generality="all",
)
def chain_rule_split() -> Outcome:
    return lp_outcome("H(J,E|Y,U) <= H(E) + H(J|E,Y,U)")


@register_step(
    PART_A,
    "binary_flag_at_most_one_bit",
    "sympy-nonneg",
    "E in {0,1} with P(E=0) = P_c in (0,1); endpoints by convention",
    "H(E) = Hb(P_c) <= 1",
    "App. D (A)",
    generality="all",
    premises=("prop1:binary_entropy_at_most_one",),
)
def binary_flag_at_most_one_bit() -> Outcome:
    return binary_entropy_at_most_one()


@register_step(
    PART_A,
    "fano_skeleton_with_flag",
    "lp-shannon",
    "any J, E, Y, U with E a function of (J,Y,U) and H(E) <= 1 (inhomogeneous LP)",
    "H(J|Y,U) <= 1 + H(J|E,Y,U)",
    "App. D (A)",
    generality="all",
    premises=(
        "thm1.A:binary_flag_at_most_one_bit",
        "thm1.A:flag_is_function",
        "thm1.A:chain_rule_split",
    ),
)
def fano_skeleton_with_flag() -> Outcome:
    return lp_outcome(
        "H(J|Y,U) <= 1 + H(J|E,Y,U)",
        (functional_dependence("E", ("J", "Y", "U")), "H(E) <= 1"),
    )


@register_step(
    PART_A,
    "conditional_support_bound",
    "hypothesis",
    "n = 2..7, m = 1..n-1, random channels, private U and measurable lists (float, tol 1e-9)",
    "H(J|E,Y,U) <= P_c log2 m + (1 - P_c) log2(n - m)",
    "App. D (A) ('condition on E')",
    generality="sampled",
)
def conditional_support_bound() -> Outcome:
    from hypothesis import strategies as st

    return run_property(support_property, st.data(), max_examples=150)


@register_step(
    PART_A,
    "conditional_support_all",
    "sympy-nonneg",
    "any n > m >= 1, any interface, private U and (Y,U)-measurable size-m list; any number "
    "of cells (e, y, u) (symbolic counts, sympy Sum)",
    "H(J|E,Y,U) <= P_c log2 m + (1 - P_c) log2(n - m): given E=0 and (y,u), J lies in the "
    "list (m values); given E=1, in its complement (n - m values); average over the cells",
    "App. D (A) ('condition on E')",
    generality="all",
    premises=("prop1:support_entropy_bound",),
)
def conditional_support_all() -> Outcome:
    c = sp.Symbol("c", integer=True, positive=True)
    c0, c1 = sp.symbols("C0 C1", integer=True, positive=True)
    lm, lr = sp.symbols("log2m log2nm", nonnegative=True)  # log2 m, log2(n - m)
    a, b = sp.IndexedBase("a", nonnegative=True), sp.IndexedBase("b", nonnegative=True)
    h0, h1 = sp.IndexedBase("h0", real=True), sp.IndexedBase("h1", real=True)
    phi, psi = sp.IndexedBase("phi", nonnegative=True), sp.IndexedBase("psi", nonnegative=True)
    pc = sp.Sum(a[c], (c, 1, c0))
    rest = sp.Sum(b[c], (c, 1, c1))
    h_cond = sp.Sum(a[c] * h0[c], (c, 1, c0)) + sp.Sum(b[c] * h1[c], (c, 1, c1))
    return certify_nonneg_from_facts(
        pc * lm + (1 - pc) * lr - h_cond,
        sp.Sum(a[c] * phi[c], (c, 1, c0)) + sp.Sum(b[c] * psi[c], (c, 1, c1)),
        {
            phi: (lambda j: lm - h0[j], "support_entropy_bound with the list (m values)"),
            psi: (lambda j: lr - h1[j], "support_entropy_bound with the complement (n - m)"),
        },
        vanishing=((1 - pc - rest, lr, "normalisation: the cell weights sum to 1"),),
        label="P_c log2 m + (1-P_c) log2(n-m) - H(J|E,Y,U)",
    )


@register_step(
    PART_A,
    "private_randomness_drops_out",
    "lp-shannon",
    "any J, Y and U independent of (J,Y)",
    "I(J;Y,U) = I(J;Y) given H(U,J,Y) = H(U) + H(J,Y)",
    "App. D (A)",
    generality="all",
)
def private_randomness_drops_out() -> Outcome:
    return lp_outcome("I(J;Y,U) = I(J;Y)", (independence("U", ("J", "Y")),))


@register_step(
    PART_A,
    "residual_uncertainty",
    "lp-shannon",
    "any J, Y and U independent of (J,Y); H(J) = log2 n for uniform J",
    "H(J|Y,U) = H(J) - I(J;Y)",
    "App. D (A)",
    generality="all",
    premises=("thm1.A:private_randomness_drops_out",),
)
def residual_uncertainty() -> Outcome:
    return lp_outcome("H(J|Y,U) = H(J) - I(J;Y)", (independence("U", ("J", "Y")),))


@register_step(
    PART_A,
    "assemble_lemma",
    "sympy-nonneg",
    "symbolic n > m >= 1, I, P_c in [0,1], h = H(J|E,Y,U)",
    "from log2 n - I <= 1 + h and h <= P_c log2 m + (1-P_c) log2(n-m) follows Lemma 1",
    "App. D (A), last display",
    generality="all",
    premises=(
        "thm1.A:fano_skeleton_with_flag",
        "thm1.A:conditional_support_all",
        "thm1.A:residual_uncertainty",
    ),
    concludes=("lemma1", "thm1.A"),
)
def assemble_lemma() -> Outcome:
    n, m, i_, pc, h = sp.symbols("n m I P_c h", positive=True)
    lg = lambda x: sp.log(x, 2)  # noqa: E731
    facts = {
        "1 + h - (log2 n - I) >= 0": 1 + h - (lg(n) - i_),
        "P_c log2 m + (1-P_c) log2(n-m) - h >= 0": pc * lg(m) + (1 - pc) * lg(n - m) - h,
    }
    target = 1 + pc * lg(m) + (1 - pc) * lg(n - m) - (lg(n) - i_)
    return certify_nonneg_combination(target, facts, {k: sp.Integer(1) for k in facts})
