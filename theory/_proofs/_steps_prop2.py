"""Proof steps of Proposition 2 (content-derived information is bounded),
paper Appendix C, and of its tighter variant (claim "prop2-tight")."""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from ._lp import prove_shannon_inequality
from ._randomized import run_property
from ._registry import Outcome, register_step
from ._symbolic import (
    certify_identities,
    certify_identity,
    certify_nonneg_combination,
    certify_nonneg_from_facts,
    certify_sign,
)

P2 = "prop2"
TIGHT = "prop2-tight"

_X = sp.Symbol("x", real=True)


def gaussian_pdf(mean: sp.Expr, sigma: sp.Expr) -> sp.Expr:
    return sp.exp(-((_X - mean) ** 2) / (2 * sigma**2)) / sp.sqrt(2 * sp.pi * sigma**2)


def gaussian_kl_1d(m1: sp.Expr, m2: sp.Expr, sigma: sp.Expr) -> sp.Expr:
    """KL(N(m1, s^2) || N(m2, s^2)) in nats, by symbolic integration."""
    p, q = gaussian_pdf(m1, sigma), gaussian_pdf(m2, sigma)
    log_ratio = sp.expand(sp.expand_log(sp.log(p) - sp.log(q)))
    return sp.integrate(p * log_ratio, (_X, -sp.oo, sp.oo))


def _discrete_family(n: int, w: int) -> tuple[list[list[sp.Symbol]], list[sp.Expr]]:
    """Symbolic pmfs P_j(w) > 0 (j < n, w < |W|) and their uniform mixture."""
    ps = [[sp.Symbol(f"p{j}_{v}", positive=True) for v in range(w)] for j in range(n)]
    mix = [sum(ps[j][v] for j in range(n)) / n for v in range(w)]
    return ps, mix


def kl_sym(p: list[sp.Expr], q: list[sp.Expr]) -> sp.Expr:
    return sum((pi * sp.log(pi / qi) for pi, qi in zip(p, q, strict=True)), sp.Integer(0))


def entropy_sym(p: list[sp.Expr]) -> sp.Expr:
    return -sum((pi * sp.log(pi) for pi in p), sp.Integer(0))


_FAMILY_SIZES = ((2, 2), (2, 3), (3, 2), (3, 3))


# --- Proposition 2 ------------------------------------------------------------


@register_step(
    P2,
    "mi_equals_mixture_kl",
    "sympy-identity",
    "discrete W: (n, |W|) in {(2,2),(2,3),(3,2),(3,3)}, symbolic positive pmf entries",
    "I(J;W) = H(W) - H(W|J) = (1/n) sum_j KL(P_j || Pbar) (nats; /ln 2 for bits)",
    "App. C, Step 1",
    generality="finite",
)
def mi_equals_mixture_kl() -> Outcome:
    pairs = []
    for n, w in _FAMILY_SIZES:
        ps, mix = _discrete_family(n, w)
        mi = entropy_sym(mix) - sum((entropy_sym(p) for p in ps), sp.Integer(0)) / n
        rhs = sum((kl_sym(p, mix) for p in ps), sp.Integer(0)) / n
        pairs.append((f"n={n},|W|={w}", mi, rhs))
    return certify_identities(pairs)


@register_step(
    P2,
    "neg_log_convex",
    "sympy-nonneg",
    "x > 0 (symbolic)",
    "(-ln x)'' = 1/x^2 > 0, so -ln is convex and Jensen applies pointwise",
    "App. C, Step 1 (Jensen)",
    generality="all",
)
def neg_log_convex() -> Outcome:
    x = sp.Symbol("x", positive=True)
    return certify_sign(sp.diff(-sp.log(x), x, 2), strict=True, label="(-ln x)''")


@register_step(
    P2,
    "jensen_gap_decomposition",
    "sympy-nonneg",
    "n = 2, |W| = 2, symbolic positive pmf entries",
    "(1/n) sum_k KL(P_j||P_k) - KL(P_j||Pbar) = sum_w P_j(w) ln(Pbar(w)/geomean_k P_k(w)), "
    "each log >= 0 by AM-GM ((a+b)/2)^2 - ab = (a-b)^2/4",
    "App. C, Step 1 (Jensen)",
    generality="finite",
    premises=("prop2:neg_log_convex",),
)
def jensen_gap_decomposition() -> Outcome:
    ps, mix = _discrete_family(2, 2)
    for j in range(2):
        gap = sum((kl_sym(ps[j], ps[k]) for k in range(2)), sp.Integer(0)) / 2 - kl_sym(ps[j], mix)
        # Pointwise term: ln(Pbar / sqrt(P_0 P_1)) = (1/2) ln(1 + (a-b)^2 / (4ab)).
        terms = {}
        mult = {}
        for v in range(2):
            a, b = ps[0][v], ps[1][v]
            name = f"ln(1+(a-b)^2/(4ab)) at w={v}"
            terms[name] = sp.log(1 + (a - b) ** 2 / (4 * a * b))
            mult[name] = ps[j][v] / 2
        out = certify_nonneg_combination(gap, terms, mult)
        if not out.ok:
            return out
        for name, t in terms.items():
            sign = certify_sign(t, label=name)
            if not sign.ok:
                return sign
    return Outcome(
        True, "gap = sum_w P_j(w)/2 * ln(1 + (a-b)^2/(4ab)) with each log >= 0, j = 0, 1"
    )


@register_step(
    P2,
    "mixture_kl_pointwise",
    "sympy-identity",
    "any n >= 1 laws (symbolic n, sympy Sum over j), at every point w: p_j(w) > 0 pmf or "
    "density values, Pbar(w) = (1/n) sum_j p_j(w); then summed (or integrated) over w",
    "(1/n) sum_j p_j ln(p_j/Pbar) = (1/n) sum_j p_j ln p_j - Pbar ln Pbar at every w, so "
    "(1/n) sum_j KL(P_j||Pbar) = H(W) - H(W|J) = I(J;W)",
    "App. C, Step 1",
    generality="all",
)
def mixture_kl_pointwise() -> Outcome:
    j = sp.Symbol("j", integer=True, positive=True)
    n = sp.Symbol("n", integer=True, positive=True)
    p = sp.IndexedBase("p", positive=True)
    pbar = sp.Symbol("Pbar", positive=True)
    mix = sp.Sum(p[j], (j, 1, n)) / n
    lhs = sp.Sum(p[j] * sp.log(p[j] / pbar), (j, 1, n)) / n
    rhs = sp.Sum(p[j] * sp.log(p[j]), (j, 1, n)) / n - pbar * sp.log(pbar)
    # lhs - rhs = (Pbar - mix) ln Pbar, which is 0 by the definition of Pbar.
    return certify_identity(lhs - rhs - (pbar - mix) * sp.log(pbar), 0,
                            label="pointwise, with Pbar = (1/n) sum_j p_j")


@register_step(
    P2,
    "jensen_pointwise_all",
    "sympy-nonneg",
    "any n >= 1 laws (symbolic n, sympy Sum over k), at every point w: p_k(w) > 0 pmf or "
    "density values; then weighted by P_j(w) and summed (or integrated) over w",
    "ln Pbar(w) >= (1/n) sum_k ln p_k(w), hence KL(P_j||Pbar) <= (1/n) sum_k KL(P_j||P_k)",
    "App. C, Step 1 (Jensen)",
    generality="all",
    premises=("prop1:log_inequality",),
)
def jensen_pointwise_all() -> Outcome:
    k = sp.Symbol("k", integer=True, positive=True)
    n = sp.Symbol("n", integer=True, positive=True)
    p = sp.IndexedBase("p", positive=True)
    pbar = sp.Symbol("Pbar", positive=True)
    gamma = sp.IndexedBase("gamma", nonnegative=True)
    mix = sp.Sum(p[k], (k, 1, n)) / n
    pointwise = certify_nonneg_from_facts(
        sp.log(pbar) - sp.Sum(sp.log(p[k]), (k, 1, n)) / n,
        sp.Sum(gamma[k], (k, 1, n)) / n,
        {gamma: (lambda t: p[t] / pbar - 1 - sp.log(p[t] / pbar), "log_inequality at p_k/Pbar")},
        vanishing=((mix - pbar, -1 / pbar, "the definition Pbar = (1/n) sum_k p_k"),),
        label="ln Pbar - mean_k ln p_k",
    )
    if not pointwise.ok:
        return pointwise
    # The KL gap at one point w: P_j(w) [(1/n) sum_k ln(p_j/p_k) - ln(p_j/Pbar)]
    # = P_j(w) [ln Pbar - (1/n) sum_k ln p_k], a non-negative weight times the above.
    pj = sp.Symbol("p_j", positive=True)
    tau = sp.Symbol("tau", nonnegative=True)
    gap = certify_nonneg_from_facts(
        pj * sp.Sum(sp.log(pj / p[k]), (k, 1, n)) / n - pj * sp.log(pj / pbar),
        pj * tau,
        {tau: (sp.log(pbar) - sp.Sum(sp.log(p[k]), (k, 1, n)) / n, "the pointwise bound above")},
        label="KL gap at w",
    )
    if not gap.ok:
        return gap
    return Outcome(True, f"{pointwise.detail}; {gap.detail}")


def _random_family(data: object, n_max: int = 5, w_max: int = 5) -> tuple[np.ndarray, np.ndarray]:
    from hypothesis import strategies as st

    draw = data.draw  # type: ignore[attr-defined]
    n = draw(st.integers(2, n_max))
    w = draw(st.integers(2, w_max))
    flat = draw(st.lists(st.floats(1e-3, 1.0), min_size=n * w, max_size=n * w))
    fam = np.array(flat).reshape(n, w)
    fam /= fam.sum(1, keepdims=True)
    q = np.array(draw(st.lists(st.floats(1e-3, 1.0), min_size=w, max_size=w)))
    return fam, q / q.sum()


def _kl(p: np.ndarray, q: np.ndarray) -> float:
    return float((p * np.log(p / q)).sum())


def jensen_property(data: object) -> None:
    fam, _ = _random_family(data)
    mix = fam.mean(0)
    n = len(fam)
    for j in range(n):
        rhs = sum(_kl(fam[j], fam[k]) for k in range(n)) / n
        assert _kl(fam[j], mix) <= rhs + 1e-10, f"Jensen fails for j={j}"


@register_step(
    P2,
    "jensen_random_families",
    "hypothesis",
    "discrete families, n = 2..5 laws on |W| = 2..5 points, entries >= 1e-3 (float, tol 1e-10)",
    "KL(P_j || Pbar) <= (1/n) sum_k KL(P_j || P_k)",
    "App. C, Step 1",
    generality="sampled",
)
def jensen_random_families() -> Outcome:
    from hypothesis import strategies as st

    return run_property(jensen_property, st.data(), max_examples=150)


@register_step(
    P2,
    "gaussian_kl_closed_form",
    "sympy-identity",
    "symbolic means m1, m2 (real), sigma > 0; exact integral over the real line",
    "KL(N(m1,s^2) || N(m2,s^2)) = (m1 - m2)^2 / (2 s^2)",
    "App. C, Step 2",
    generality="all",
)
def gaussian_kl_closed_form() -> Outcome:
    m1, m2 = sp.symbols("m1 m2", real=True)
    s = sp.Symbol("sigma", positive=True)
    return certify_identity(gaussian_kl_1d(m1, m2, s), (m1 - m2) ** 2 / (2 * s**2))


def mean_vector(n: int, j: int, big: sp.Expr, small: sp.Expr) -> list[sp.Expr]:
    return [sp.log(big) if i == j else sp.log(small) for i in range(n)]


@register_step(
    P2,
    "pairwise_kl_matrix",
    "sympy-identity",
    "n = 2..7 blocks, all ordered pairs (j,k); symbolic l > 0, kappa > 0, sigma > 0, L = kappa l",
    "KL(P_j||P_k) = sum_i (m_i^j - m_i^k)^2/(2 s^2) = (ln kappa)^2/s^2 (j != k), 0 (j = k)",
    "App. C, Step 2",
    generality="finite",
    premises=("prop2:gaussian_kl_closed_form",),
)
def pairwise_kl_matrix() -> Outcome:
    ell, kappa, s = sp.symbols("ell kappa sigma", positive=True)
    pairs = []
    for n in range(2, 8):
        means = [mean_vector(n, j, kappa * ell, ell) for j in range(n)]
        for j in range(n):
            for k in range(n):
                kl = sum(
                    ((a - b) ** 2 / (2 * s**2) for a, b in zip(means[j], means[k], strict=True)),
                    sp.Integer(0),
                )
                expected = 0 if j == k else sp.log(kappa) ** 2 / s**2
                pairs.append((f"n={n},j={j},k={k}", kl, expected))
    return certify_identities(pairs)


@register_step(
    P2,
    "pairwise_kl_all",
    "sympy-identity",
    "every n >= 2 and j != k: the coordinates split into i = j, i = k and the n - 2 others; "
    "symbolic l, kappa, sigma > 0",
    "KL(P_j||P_k) = sum_i (m_i^j - m_i^k)^2/(2 s^2) = (ln kappa)^2/s^2 for j != k, 0 for j = k",
    "App. C, Step 2",
    generality="all",
    premises=("prop2:gaussian_kl_closed_form",),
)
def pairwise_kl_all() -> Outcome:
    ell, kappa, s_ = sp.symbols("ell kappa sigma", positive=True)
    n = sp.Symbol("n", integer=True, positive=True)
    big, small = sp.log(kappa * ell), sp.log(ell)
    term = lambda a, b: (a - b) ** 2 / (2 * s_**2)  # noqa: E731
    # j != k: coordinate j has (big, small), coordinate k has (small, big), the other
    # n - 2 coordinates (small, small); j = k: all n coordinates agree.
    pairs = [
        ("j != k", term(big, small) + term(small, big) + (n - 2) * term(small, small),
         sp.log(kappa) ** 2 / s_**2),
        ("j = k", term(big, big) + (n - 1) * term(small, small), 0),
    ]
    return certify_identities(pairs)


@register_step(
    P2,
    "pair_count_combination",
    "sympy-identity",
    "symbolic n >= 1: sympy sums c (1 - [j = k]) over k = 1..n for a symbolic j in 1..n "
    "(j = 1 + a, n = j + b, a, b >= 0), then over j = 1..n; the count n(n-1) is computed",
    "(1/(n^2 ln2)) sum_{j,k} KL(P_j||P_k) = (1 - 1/n)(ln kappa)^2/(s^2 ln 2)",
    "App. C, Step 3",
    generality="all",
    premises=(
        "prop2:pairwise_kl_all",
        "prop2:mixture_kl_pointwise",
        "prop2:jensen_pointwise_all",
    ),
)
def pair_count_combination() -> Outcome:
    kappa, s = sp.symbols("kappa sigma", positive=True)
    c = sp.log(kappa) ** 2 / s**2
    # KL(P_j||P_k) = c (1 - [j = k]) by pairwise_kl_all. The inner sum over k is taken
    # for a j known to lie in 1..n (j = 1 + a, n = 1 + a + b with a, b >= 0), so sympy's
    # Kronecker-delta sum needs no case split; the result must not depend on j.
    a, b = sp.symbols("a b", integer=True, nonnegative=True)
    k = sp.Symbol("k", integer=True)
    inner = sp.simplify(sp.summation(c * (1 - sp.KroneckerDelta(1 + a, k)), (k, 1, 1 + a + b)))
    if inner.has(sp.KroneckerDelta, sp.Piecewise, sp.Sum):
        return Outcome(False, f"the inner sum did not evaluate: {inner}")
    nn = sp.Symbol("n", positive=True, integer=True)
    jj = sp.Symbol("j", integer=True, positive=True)
    inner_n = sp.expand(inner.subs(b, nn - 1 - a))
    if a in inner_n.free_symbols:
        return Outcome(False, f"the inner sum depends on j: {inner_n}")
    total = sp.summation(inner_n, (jj, 1, nn))
    if total.has(sp.Sum):
        return Outcome(False, f"the outer sum did not evaluate: {total}")
    return certify_identities([
        ("sum_{j,k} KL(P_j||P_k) / (n^2 ln 2)", total / (nn**2 * sp.log(2)),
         (1 - 1 / nn) * c / sp.log(2)),
    ])


@register_step(
    P2,
    "drop_factor_one_minus_one_over_n",
    "sympy-nonneg",
    "symbolic n > 0, kappa > 0, sigma > 0",
    "(ln kappa)^2/(s^2 ln2) - (1 - 1/n)(ln kappa)^2/(s^2 ln2) = (ln kappa)^2/(n s^2 ln2) >= 0",
    "App. C, Step 3",
    generality="all",
    premises=("prop2:pair_count_combination",),
)
def drop_factor_one_minus_one_over_n() -> Outcome:
    n, kappa, s = sp.symbols("n kappa sigma", positive=True)
    c = sp.log(kappa) ** 2 / (s**2 * sp.log(2))
    return certify_nonneg_combination(
        c - (1 - 1 / n) * c, {}, {}, extra_nonneg=[sp.log(kappa) ** 2 / (n * s**2 * sp.log(2))]
    )


@register_step(
    P2,
    "nats_to_bits",
    "sympy-identity",
    "symbolic kappa > 0, sigma > 0",
    "(ln kappa)^2/(s^2 ln 2) = ln2 (log2 kappa)^2 / s^2, using ln kappa = ln2 * log2 kappa",
    "App. C, Step 3",
    generality="all",
    premises=("prop2:drop_factor_one_minus_one_over_n",),
    concludes=("prop2",),
)
def nats_to_bits() -> Outcome:
    kappa, s = sp.symbols("kappa sigma", positive=True)
    first = certify_identity(sp.log(kappa), sp.log(2) * sp.log(kappa, 2), label="ln k = ln2 log2 k")
    if not first.ok:
        return first
    return certify_identity(
        sp.log(kappa) ** 2 / (s**2 * sp.log(2)), sp.log(2) * sp.log(kappa, 2) ** 2 / s**2
    )


@register_step(
    P2,
    "capped_by_index_entropy",
    "lp-shannon",
    "any J, W (Shannon cone); H(J) = log2 n for uniform J",
    "I(J;W) <= H(J)",
    "Sec. Theory, Def. 2 (full ledger carries log2 n bits)",
    generality="all",
    concludes=("prop2",),
)
def capped_by_index_entropy() -> Outcome:
    proof = prove_shannon_inequality("I(J;W) <= H(J)")
    return Outcome(proof.proved, proof.detail)


def pairwise_bound_property(data: object) -> None:
    fam, _ = _random_family(data)
    n = len(fam)
    mix = fam.mean(0)
    mi = sum(_kl(p, mix) for p in fam) / n
    pair = sum(_kl(fam[j], fam[k]) for j in range(n) for k in range(n)) / n**2
    assert mi <= pair + 1e-10, f"I={mi} > pairwise bound {pair}"
    assert mi <= math.log(n) + 1e-10, f"I={mi} nats > ln n"


@register_step(
    P2,
    "pairwise_bound_random_families",
    "hypothesis",
    "discrete families, n = 2..5 laws on 2..5 points (float, tol 1e-10)",
    "I(J;W) <= (1/n^2) sum_{j,k} KL(P_j||P_k) and I(J;W) <= ln n (nats)",
    "App. C, Step 1",
    generality="sampled",
)
def pairwise_bound_random_families() -> Outcome:
    from hypothesis import strategies as st

    return run_property(pairwise_bound_property, st.data(), max_examples=150)


# --- Tighter Proposition 2 ------------------------------------------------------


@register_step(
    TIGHT,
    "golden_formula",
    "sympy-identity",
    "discrete W: (n, |W|) in {(2,2),(2,3),(3,2),(3,3)}, symbolic positive entries and Q",
    "sum_j KL(P_j||Q) = sum_j KL(P_j||Pbar) + n KL(Pbar||Q)",
    "prop2-tight (compensation identity)",
    generality="finite",
)
def golden_formula() -> Outcome:
    pairs = []
    for n, w in _FAMILY_SIZES:
        ps, mix = _discrete_family(n, w)
        q = [sp.Symbol(f"q{v}", positive=True) for v in range(w)]
        lhs = sum((kl_sym(p, q) for p in ps), sp.Integer(0))
        rhs = sum((kl_sym(p, mix) for p in ps), sp.Integer(0)) + n * kl_sym(mix, q)
        pairs.append((f"n={n},|W|={w}", lhs, rhs))
    return certify_identities(pairs)


@register_step(
    TIGHT,
    "gibbs_kl_nonnegative",
    "sympy-nonneg",
    "x > 0 for g(x) = x - 1 - ln x; |W| = 2, 3 with symbolic positive weights",
    "KL(p||q) = sum_w p_w g(q_w/p_w) >= 0 because g >= 0 (convex, g(1) = g'(1) = 0)",
    "prop2-tight (KL(Pbar||Q) >= 0)",
    generality="finite",
)
def gibbs_kl_nonnegative() -> Outcome:
    x = sp.Symbol("x", positive=True)
    g = x - 1 - sp.log(x)
    convex = certify_sign(sp.diff(g, x, 2), strict=True, label="g''")
    if not convex.ok:
        return convex
    if g.subs(x, 1) != 0 or sp.diff(g, x).subs(x, 1) != 0:
        return Outcome(False, "g(1) or g'(1) is not 0")
    for w in (2, 3):
        a = [sp.Symbol(f"a{v}", positive=True) for v in range(w)]
        b = [sp.Symbol(f"b{v}", positive=True) for v in range(w)]
        p = [ai / sum(a) for ai in a]
        q = [bi / sum(b) for bi in b]
        facts = {f"g(q{v}/p{v}) >= 0": g.subs(x, q[v] / p[v]) for v in range(w)}
        mult = {f"g(q{v}/p{v}) >= 0": p[v] for v in range(w)}
        out = certify_nonneg_combination(kl_sym(p, q), facts, mult)
        if not out.ok:
            return out
    return Outcome(True, f"{convex.detail}; g(1)=g'(1)=0; KL = sum_w p_w g(q_w/p_w) for |W|=2,3")


def shifted_reference_objective(n: sp.Expr, t: sp.Expr, kappa: sp.Expr, s: sp.Expr) -> sp.Expr:
    """F(t) = KL(P_j || N(ln l + t, s^2 I)) = ((ln kappa - t)^2 + (n-1) t^2) / (2 s^2)."""
    return ((sp.log(kappa) - t) ** 2 + (n - 1) * t**2) / (2 * s**2)


@register_step(
    TIGHT,
    "golden_formula_pointwise",
    "sympy-identity",
    "any n >= 1 laws (symbolic n, sympy Sum over j), at every point w: p_j(w), q(w) > 0 "
    "pmf or density values, Pbar = (1/n) sum_j p_j; then summed (or integrated) over w",
    "sum_j p_j ln(p_j/q) = sum_j p_j ln(p_j/Pbar) + n Pbar ln(Pbar/q) at every w, hence "
    "sum_j KL(P_j||Q) = sum_j KL(P_j||Pbar) + n KL(Pbar||Q)",
    "prop2-tight (compensation identity)",
    generality="all",
)
def golden_formula_pointwise() -> Outcome:
    j = sp.Symbol("j", integer=True, positive=True)
    n = sp.Symbol("n", integer=True, positive=True)
    p = sp.IndexedBase("p", positive=True)
    pbar, q = sp.symbols("Pbar q", positive=True)
    mix = sp.Sum(p[j], (j, 1, n)) / n
    lhs = sp.Sum(p[j] * sp.log(p[j] / q), (j, 1, n))
    rhs = sp.Sum(p[j] * sp.log(p[j] / pbar), (j, 1, n)) + n * pbar * sp.log(pbar / q)
    # lhs - rhs = n (mix - Pbar) ln(Pbar/q), 0 by the definition of Pbar.
    return certify_identity(lhs - rhs - n * (mix - pbar) * sp.log(pbar / q), 0,
                            label="pointwise, with Pbar = (1/n) sum_j p_j")


@register_step(
    TIGHT,
    "kl_nonnegative_all",
    "sympy-nonneg",
    "any two pmfs p, q > 0 on s >= 1 points (symbolic s, sympy Sum)",
    "KL(p||q) = sum_w p_w g(q_w/p_w) >= 0 with g(x) = x - 1 - ln x >= 0 (sum p = sum q = 1)",
    "prop2-tight (KL(Pbar||Q) >= 0)",
    generality="all",
    premises=("prop1:log_inequality",),
)
def kl_nonnegative_all() -> Outcome:
    w = sp.Symbol("w", integer=True, positive=True)
    s_ = sp.Symbol("s", integer=True, positive=True)
    p, q = sp.IndexedBase("p", positive=True), sp.IndexedBase("q", positive=True)
    gamma = sp.IndexedBase("gamma", nonnegative=True)
    return certify_nonneg_from_facts(
        sp.Sum(p[w] * sp.log(p[w] / q[w]), (w, 1, s_)),
        sp.Sum(p[w] * gamma[w], (w, 1, s_)),
        {gamma: (lambda t: q[t] / p[t] - 1 - sp.log(q[t] / p[t]), "log_inequality at q_w/p_w")},
        vanishing=((sp.Sum(p[w], (w, 1, s_)) - sp.Sum(q[w], (w, 1, s_)), 1,
                    "normalisation sum p = sum q = 1"),),
        label="KL(p||q)",
    )


@register_step(
    TIGHT,
    "kl_to_shifted_reference_all",
    "sympy-identity",
    "every n >= 1 and j: coordinate j and the n - 1 others; symbolic l, kappa, sigma > 0, t",
    "KL(P_j || N(ln l + t, s^2 I)) = ((ln kappa - t)^2 + (n-1) t^2)/(2 s^2), same for all j",
    "prop2-tight (choice of Q)",
    generality="all",
    premises=("prop2:gaussian_kl_closed_form",),
)
def kl_to_shifted_reference_all() -> Outcome:
    ell, kappa, s_ = sp.symbols("ell kappa sigma", positive=True)
    n = sp.Symbol("n", integer=True, positive=True)
    t = sp.Symbol("t", real=True)
    ref = sp.log(ell) + t
    term = lambda a: (a - ref) ** 2 / (2 * s_**2)  # noqa: E731
    return certify_identity(
        term(sp.log(kappa * ell)) + (n - 1) * term(sp.log(ell)),
        shifted_reference_objective(n, t, kappa, s_),
    )


@register_step(
    TIGHT,
    "kl_to_shifted_reference",
    "sympy-identity",
    "n = 2..8 blocks, every j; symbolic l, kappa, sigma > 0 and shift t",
    "KL(P_j || N(ln l + t, s^2 I)) = ((ln kappa - t)^2 + (n-1) t^2)/(2 s^2), same for all j",
    "prop2-tight (choice of Q)",
    generality="finite",
    premises=("prop2:gaussian_kl_closed_form",),
)
def kl_to_shifted_reference() -> Outcome:
    ell, kappa, s = sp.symbols("ell kappa sigma", positive=True)
    t = sp.Symbol("t", real=True)
    pairs = []
    for n in range(2, 9):
        for j in range(n):
            m = mean_vector(n, j, kappa * ell, ell)
            kl = sum(((mi - (sp.log(ell) + t)) ** 2 / (2 * s**2) for mi in m), sp.Integer(0))
            pairs.append((f"n={n},j={j}", kl, shifted_reference_objective(n, t, kappa, s)))
    return certify_identities(pairs)


@register_step(
    TIGHT,
    "optimal_shift",
    "sympy-identity",
    "symbolic n > 0, kappa > 0, sigma > 0, t real",
    "F'(t) = 0 has the unique root t = ln(kappa)/n and F''(t) = n/s^2 > 0 (a minimum)",
    "prop2-tight (min over t)",
    generality="all",
    premises=("prop2-tight:kl_to_shifted_reference_all",),
)
def optimal_shift() -> Outcome:
    n, kappa, s = sp.symbols("n kappa sigma", positive=True)
    t = sp.Symbol("t", real=True)
    f = shifted_reference_objective(n, t, kappa, s)
    roots = sp.solve(sp.Eq(sp.diff(f, t), 0), t)
    if len(roots) != 1:
        return Outcome(False, f"F'(t)=0 has roots {roots}")
    ident = certify_identity(roots[0], sp.log(kappa) / n, label="argmin")
    if not ident.ok:
        return ident
    curv = certify_sign(sp.diff(f, t, 2), strict=True, label="F''")
    if not curv.ok:
        return curv
    return Outcome(True, f"unique root t = ln(kappa)/n; {curv.detail}")


@register_step(
    TIGHT,
    "optimal_value",
    "sympy-identity",
    "symbolic n > 0, kappa > 0, sigma > 0",
    "F(ln kappa / n) = (ln kappa)^2 (1 - 1/n) / (2 s^2)",
    "prop2-tight",
    generality="all",
    premises=("prop2-tight:optimal_shift",),
)
def optimal_value() -> Outcome:
    n, kappa, s = sp.symbols("n kappa sigma", positive=True)
    f = shifted_reference_objective(n, sp.log(kappa) / n, kappa, s)
    return certify_identity(f, sp.log(kappa) ** 2 * (1 - 1 / n) / (2 * s**2))


@register_step(
    TIGHT,
    "tight_bound_in_bits",
    "sympy-identity",
    "symbolic n > 0, kappa > 0, sigma > 0",
    "F*/ln 2 = (1 - 1/n) ln2 (log2 kappa)^2 / (2 s^2) bits",
    "prop2-tight",
    generality="all",
    premises=(
        "prop2-tight:optimal_value",
        "prop2-tight:golden_formula_pointwise",
        "prop2-tight:kl_nonnegative_all",
        "prop2:mixture_kl_pointwise",
    ),
    concludes=("prop2-tight",),
)
def tight_bound_in_bits() -> Outcome:
    n, kappa, s = sp.symbols("n kappa sigma", positive=True)
    fstar = sp.log(kappa) ** 2 * (1 - 1 / n) / (2 * s**2)
    return certify_identity(
        fstar / sp.log(2), (1 - 1 / n) * sp.log(2) * sp.log(kappa, 2) ** 2 / (2 * s**2)
    )


@register_step(
    TIGHT,
    "factor_vs_paper",
    "sympy-identity",
    "symbolic n > 1, kappa > 0, sigma > 0",
    "paper bound / tight bound = 2n/(n-1)",
    "prop2-tight vs App. C",
    generality="all",
    premises=("prop2-tight:tight_bound_in_bits", "prop2:nats_to_bits"),
)
def factor_vs_paper() -> Outcome:
    m, kappa, s = sp.symbols("m kappa sigma", positive=True)
    n = m + 1  # n > 1
    paper = sp.log(2) * sp.log(kappa, 2) ** 2 / s**2
    tight = (1 - 1 / n) * sp.log(2) * sp.log(kappa, 2) ** 2 / (2 * s**2)
    return certify_identity(paper / tight, 2 * n / (n - 1))


@register_step(
    TIGHT,
    "tight_below_paper",
    "sympy-nonneg",
    "symbolic n > 1, kappa > 0, sigma > 0",
    "paper - tight = ln2 (log2 kappa)^2 (n + 1) / (2 n s^2) >= 0",
    "prop2-tight vs App. C",
    generality="all",
    premises=("prop2-tight:tight_bound_in_bits", "prop2:nats_to_bits"),
)
def tight_below_paper() -> Outcome:
    m, kappa, s = sp.symbols("m kappa sigma", positive=True)
    n = m + 1
    paper = sp.log(2) * sp.log(kappa, 2) ** 2 / s**2
    tight = (1 - 1 / n) * sp.log(2) * sp.log(kappa, 2) ** 2 / (2 * s**2)
    rest = sp.log(kappa) ** 2 * (n + 1) / (2 * n * s**2 * sp.log(2))
    return certify_nonneg_combination(paper - tight, {}, {}, extra_nonneg=[rest])


def reference_property(data: object) -> None:
    fam, q = _random_family(data)
    mix = fam.mean(0)
    n = len(fam)
    mi = sum(_kl(p, mix) for p in fam) / n
    via_q = sum(_kl(p, q) for p in fam) / n
    assert mi <= via_q + 1e-10, f"I={mi} > (1/n) sum KL(P_j||Q) = {via_q}"
    golden = sum(_kl(p, mix) for p in fam) + n * _kl(mix, q)
    assert abs(golden - n * via_q) <= 1e-9 * max(1.0, abs(golden)), "golden formula fails"


@register_step(
    TIGHT,
    "any_reference_random_families",
    "hypothesis",
    "discrete families, n = 2..5 laws on 2..5 points, random Q (float, tol 1e-10)",
    "I(J;W) <= (1/n) sum_j KL(P_j||Q) for every Q (and the golden formula numerically)",
    "prop2-tight",
    generality="sampled",
)
def any_reference_random_families() -> Outcome:
    from hypothesis import strategies as st

    return run_property(reference_property, st.data(), max_examples=150)


def exact_mi_two_blocks(kappa: float, sigma: float) -> float:
    """I(J*;W) in bits for n = 2 by quadrature.

    W1 + W2 has the same law under both hypotheses and is independent of
    D = W1 - W2 ~ N(+-ln kappa, 2 s^2), so I(J*;W) = I(J*;D)
    = 1 - E_{D ~ N(a, 2s^2)} log2(1 + exp(-a D / s^2)), a = ln kappa.
    """
    from scipy import integrate

    a = math.log(kappa)
    sd = math.sqrt(2) * sigma
    norm = 1.0 / (sd * math.sqrt(2 * math.pi) * math.log(2))

    def integrand(d: float) -> float:
        # log2(1 + e^x) computed stably as logaddexp(0, x) / ln 2.
        dens = math.exp(-0.5 * ((d - a) / sd) ** 2) * norm
        return dens * float(np.logaddexp(0.0, -a * d / sigma**2))

    val, _ = integrate.quad(integrand, a - 40 * sd, a + 40 * sd, limit=200, epsabs=1e-12)
    return 1.0 - val


def two_block_property(kappa: float, sigma: float) -> None:
    mi = exact_mi_two_blocks(kappa, sigma)
    lk = math.log2(kappa)
    tight = (1 - 1 / 2) * math.log(2) * lk**2 / (2 * sigma**2)
    paper = math.log(2) * lk**2 / sigma**2
    assert -1e-9 <= mi <= min(tight, 1.0) + 1e-8, f"I={mi} vs tight {tight}"
    assert tight <= paper, "tight above paper"


@register_step(
    TIGHT,
    "exact_two_block_mi_below_tight",
    "hypothesis",
    "n = 2, kappa in [2, 64], sigma in [0.2, 5]; I(J*;W) by adaptive quadrature (tol 1e-8)",
    "exact I(J*;W) <= min(1, (1-1/n) ln2 (log2 kappa)^2/(2 s^2)) <= paper bound",
    "prop2-tight (second method on the Gaussian channel itself)",
    generality="sampled",
)
def exact_two_block_mi_below_tight() -> Outcome:
    from hypothesis import strategies as st

    return run_property(
        two_block_property, st.floats(2.0, 64.0), st.floats(0.2, 5.0), max_examples=60
    )
