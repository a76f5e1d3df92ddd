"""Proof steps of Theorem 1 part (D) of paper Appendix D: achievability by
bucketed interfaces, and the rates that match the lower bound."""

from __future__ import annotations

import math
from fractions import Fraction

import sympy as sp

from ._enumerate import bucket_mean_z, bucket_sizes
from ._interval import certify_positive
from ._lp import functional_dependence
from ._registry import Outcome, register_step
from ._steps_prop1 import lp_outcome
from ._symbolic import (
    certify_identities,
    certify_identity,
    certify_limit_inverse,
    certify_nonneg,
    certify_nonneg_combination,
    certify_nonneg_from_facts,
    check_limit_on_points,
)

D = "thm1.D"


@register_step(
    D,
    "uniform_position_mean",
    "sympy-identity",
    "symbolic bucket size b >= 1",
    "E[P - 1] = (1/b) sum_{P=1}^{b} (P - 1) = (b - 1)/2",
    "App. D (D)",
    generality="all",
)
def uniform_position_mean() -> Outcome:
    b = sp.Symbol("b", positive=True, integer=True)
    p = sp.Symbol("P", integer=True)
    return certify_identity(sp.summation(p - 1, (p, 1, b)) / b, (b - 1) / 2)


@register_step(
    D,
    "position_cost_all",
    "sympy-nonneg",
    "every position P >= 1 and kappa >= 1 (cases P - 1 <= kappa and P - 1 > kappa, symbolic "
    "integers)",
    "min(P - 1, kappa) <= P - 1, so E[min(P-1, kappa) | bucket] <= E[P - 1] = (b' - 1)/2",
    "App. D (D)",
    generality="all",
    premises=("thm1.D:uniform_position_mean",),
)
def position_cost_all() -> Outcome:
    x, y = sp.symbols("x y", integer=True, nonnegative=True)  # x = P - 1
    checks = (
        certify_nonneg(x - sp.Min(x, x + y), sp.Integer(0), label="P-1 <= kappa = x + y"),
        certify_nonneg(x - sp.Min(x, x - 1 - y), 1 + y, label="P-1 = kappa + 1 + y"),
    )
    for out in checks:
        if not out.ok:
            return out
    return Outcome(True, "; ".join(o.detail for o in checks))


@register_step(
    D,
    "ceil_minus_one_below_all",
    "sympy-nonneg",
    "every 1 <= M <= n, writing n + r = M ceil(n/M) with 0 <= r <= M - 1 (M = r + 1 + s), "
    "symbolic",
    "ceil(n/M) - 1 < n/M: n/M - (ceil(n/M) - 1) = (M - r)/M > 0",
    "App. D (D) ('Because ceil(x) - 1 < x')",
    generality="all",
)
def ceil_minus_one_below_all() -> Outcome:
    r, s_ = sp.symbols("r s", integer=True, nonnegative=True)
    n = sp.Symbol("n", positive=True)
    big_m = r + 1 + s_
    ceil_nm = (n + r) / big_m
    return certify_nonneg(n / big_m - (ceil_nm - 1), (1 + s_) / (r + 1 + s_), strict=True,
                          label="n/M - (ceil(n/M) - 1)")


@register_step(
    D,
    "bucket_mean_all",
    "sympy-nonneg",
    "any partition of n blocks into M buckets of sizes b_i <= c = ceil(n/M), any kappa; "
    "symbolic M (sympy Sum over buckets)",
    "E[Z] = sum_i (b_i/n) E[Z | bucket i] <= sum_i (b_i/n)(b_i - 1)/2 <= (c - 1)/2 < n/(2M)",
    "App. D (D)",
    generality="all",
    premises=("thm1.D:position_cost_all", "thm1.D:ceil_minus_one_below_all"),
)
def bucket_mean_all() -> Outcome:
    i = sp.Symbol("i", integer=True, positive=True)
    big_m = sp.Symbol("M", integer=True, positive=True)
    n, c = sp.symbols("n c", positive=True)
    b = sp.IndexedBase("b", positive=True)
    z = sp.IndexedBase("z", real=True)  # E[Z | bucket i]
    phi = sp.IndexedBase("phi", nonnegative=True)
    psi = sp.IndexedBase("psi", nonnegative=True)
    rho = sp.Symbol("rho", positive=True)
    mean_z = sp.Sum(b[i] * z[i], (i, 1, big_m)) / n
    return certify_nonneg_from_facts(
        n / (2 * big_m) - mean_z,
        sp.Sum(b[i] * phi[i], (i, 1, big_m)) / n + sp.Sum(b[i] * psi[i], (i, 1, big_m)) / (2 * n)
        + rho / 2,
        {
            phi: (lambda t: (b[t] - 1) / 2 - z[t], "position_cost_all (E[Z|bucket] <= (b-1)/2)"),
            psi: (lambda t: c - b[t], "bucket sizes <= c = ceil(n/M)"),
            rho: (n / big_m - (c - 1), "ceil_minus_one_below_all (> 0, so the bound is strict)"),
        },
        vanishing=((sp.Sum(b[i], (i, 1, big_m)) - n, (1 - c) / (2 * n),
                    "the bucket sizes sum to n"),),
        label="n/(2M) - E[Z]",
    )


@register_step(
    D,
    "sufficient_rate_all",
    "sympy-nonneg",
    "every n, 1 <= kappa, delta > 0 with M = min(n, ceil(n/(2 delta kappa))): case M = "
    "ceil(n/(2 delta kappa)) (2 delta kappa M = n + r', r' >= 0) and case M = n (singletons)",
    "the M-bucket ledger has rate I(J*;Y) = H(Y) <= log2 M and E[Z] <= delta kappa: "
    "E[Z] < n/(2M) <= delta kappa, or Z = min(1 - 1, kappa) = 0 for singleton buckets",
    "App. D (D) ('Therefore I >= min{log2 n, log2 ceil(n/(2 delta kappa))} suffices')",
    generality="all",
    premises=(
        "thm1.D:bucket_mean_all",
        "prop1:support_entropy_bound",
        "thm1.D:deterministic_interface_rate",
    ),
    concludes=("thm1.D",),
)
def sufficient_rate_all() -> Outcome:
    n, delta, kappa = sp.symbols("n delta kappa", positive=True)
    rp = sp.Symbol("r'", nonnegative=True)
    big_m = (n + rp) / (2 * delta * kappa)
    ceil_case = certify_nonneg(delta * kappa - n / (2 * big_m), rp / (2 * big_m),
                               label="delta kappa - n/(2M)")
    if not ceil_case.ok:
        return ceil_case
    k_int = sp.Symbol("kappa", integer=True, positive=True)
    single = certify_identity(sp.Min(1 - 1, k_int), 0, label="singleton bucket: Z")
    if not single.ok:
        return single
    return Outcome(True, f"{ceil_case.detail}; {single.detail}")


@register_step(
    D,
    "bucket_conditional_mean",
    "enumeration",
    "every bucket size b <= 120 and kappa <= b (exact rationals)",
    "E[min(P-1, kappa)] <= E[P-1] = (b-1)/2 for P uniform on 1..b",
    "App. D (D)",
    generality="finite",
    premises=("thm1.D:uniform_position_mean",),
)
def bucket_conditional_mean() -> Outcome:
    count = 0
    for b in range(1, 121):
        base = sum(range(b))  # sum of P - 1
        if Fraction(base, b) != Fraction(b - 1, 2):
            return Outcome(False, f"b={b}: mean of P-1 is {Fraction(base, b)}")
        for kappa in range(1, b + 1):
            capped = sum(min(p, kappa) for p in range(b))
            if capped > base:
                return Outcome(False, f"b={b}, kappa={kappa}")
            count += 1
    return Outcome(True, f"{count} (b, kappa) pairs")


@register_step(
    D,
    "ceil_minus_one_below",
    "enumeration",
    "every 1 <= M <= n <= 300 (exact rationals)",
    "ceil(n/M) - 1 < n/M, and every balanced bucket has size <= ceil(n/M)",
    "App. D (D)",
    generality="finite",
)
def ceil_minus_one_below() -> Outcome:
    count = 0
    for n in range(1, 301):
        for m in range(1, n + 1):
            c = -(-n // m)
            if not c - 1 < Fraction(n, m):
                return Outcome(False, f"n={n}, M={m}")
            sizes = bucket_sizes(n, m)
            if max(sizes) > c or sum(sizes) != n or len(sizes) != m:
                return Outcome(False, f"balanced partition wrong for n={n}, M={m}")
            count += 1
    return Outcome(True, f"{count} (n, M) pairs")


@register_step(
    D,
    "bucket_mean_below_half_n_over_m",
    "enumeration",
    "every n <= 70, 2 <= kappa < n/2, 1 <= M <= n (exact rationals)",
    "balanced M-bucket ledger with uniform probing: E[Z] < n/(2M)",
    "App. D (D)",
    generality="finite",
    premises=("thm1.D:bucket_conditional_mean", "thm1.D:ceil_minus_one_below"),
)
def bucket_mean_below_half_n_over_m() -> Outcome:
    count = 0
    for n in range(5, 71):
        for kappa in range(2, (n - 1) // 2 + 1):
            for m in range(1, n + 1):
                ez = bucket_mean_z(n, kappa, m)
                if not ez < Fraction(n, 2 * m):
                    return Outcome(False, f"n={n},kappa={kappa},M={m}: E[Z]={ez}")
                count += 1
    return Outcome(True, f"{count} (n, kappa, M) triples")


@register_step(
    D,
    "sufficient_rate_achieves_delta",
    "enumeration",
    "n <= 80, 2 <= kappa < n/2, delta in {1/10, 1/4, 1/3, 1/2, 3/4, 9/10} (exact rationals)",
    "M = min(n, ceil(n/(2 delta kappa))) buckets (rate log2 M = the sufficient rate) give "
    "E[Z] <= delta kappa",
    "App. D (D)",
    generality="finite",
    premises=(
        "thm1.D:bucket_mean_below_half_n_over_m",
        "prop1:support_entropy_bound",
        "thm1.D:deterministic_interface_rate",
    ),
)
def sufficient_rate_achieves_delta() -> Outcome:
    deltas = [Fraction(1, 10), Fraction(1, 4), Fraction(1, 3), Fraction(1, 2), Fraction(3, 4),
              Fraction(9, 10)]
    count = 0
    for n in range(5, 81):
        for kappa in range(2, (n - 1) // 2 + 1):
            for delta in deltas:
                m = min(n, math.ceil(Fraction(n) / (2 * delta * kappa)))
                ez = bucket_mean_z(n, kappa, m)
                if ez > delta * kappa:
                    return Outcome(False, f"n={n},kappa={kappa},delta={delta}: E[Z]={ez}")
                count += 1
    return Outcome(True, f"{count} (n, kappa, delta) cases")


@register_step(
    D,
    "full_ledger_singletons",
    "enumeration",
    "n <= 200, 2 <= kappa < n/2",
    "M = n gives singleton buckets and E[Z] = 0",
    "App. D (D)",
    generality="finite",
)
def full_ledger_singletons() -> Outcome:
    for n in range(5, 201):
        for kappa in range(2, (n - 1) // 2 + 1):
            if bucket_mean_z(n, kappa, n) != 0:
                return Outcome(False, f"n={n}, kappa={kappa}")
    return Outcome(True, "E[Z] = 0 for every case")


@register_step(
    D,
    "deterministic_interface_rate",
    "lp-shannon",
    "any J and Y = f(J)",
    "I(J;Y) = H(Y) given H(Y|J) = 0",
    "App. D (D)",
    generality="all",
)
def deterministic_interface_rate() -> Outcome:
    return lp_outcome("I(J;Y) = H(Y)", (functional_dependence("Y", "J"),))


@register_step(
    D,
    "bucket_entropy_at_most_log_m",
    "sympy-nonneg",
    "M = 2, 3, 4 outcomes with symbolic positive weights (p_y = w_y / sum w)",
    "log2 M - H(Y) = sum_y p_y g(1/(M p_y)) / ln2 >= 0 with g(x) = x - 1 - ln x >= 0",
    "App. D (D) ('H(Y) <= log2 M')",
    generality="finite",
    premises=("prop2-tight:gibbs_kl_nonnegative",),
)
def bucket_entropy_at_most_log_m() -> Outcome:
    x = sp.Symbol("x", positive=True)
    g = x - 1 - sp.log(x)
    for m in (2, 3, 4):
        w = [sp.Symbol(f"w{v}", positive=True) for v in range(m)]
        p = [wi / sum(w) for wi in w]
        h = -sum((pi * sp.log(pi) for pi in p), sp.Integer(0)) / sp.log(2)
        facts = {f"g(1/(M p{v}))": g.subs(x, 1 / (m * p[v])) for v in range(m)}
        mult = {f"g(1/(M p{v}))": p[v] / sp.log(2) for v in range(m)}
        out = certify_nonneg_combination(sp.log(m, 2) - h, facts, mult)
        if not out.ok:
            return Outcome(False, f"M={m}: {out.detail}")
    return Outcome(True, "certificates for M = 2, 3, 4 (g >= 0 is gibbs_kl_nonnegative)")


@register_step(
    D,
    "order_matching_limit",
    "sympy-identity",
    "x = n/kappa = 10^2, 10^4, ..., 10^16 for delta in {1/4, 1/2, 3/4} (50-digit evaluation; "
    "the limit is not certified)",
    "log2(x/(2 delta)) / ((1-delta) log2(x - 1) - 1) -> 1/(1-delta): both rates are "
    "Theta(log2(n/kappa))",
    "App. D (D)",
    generality="finite",
    premises=("thm1.D:sufficient_rate_all", "thm1.C:threshold_equivalence"),
    concludes=("thm1.D",),
)
def order_matching_limit() -> Outcome:
    x = sp.Symbol("x", positive=True)
    delta = sp.Symbol("delta", positive=True)
    eps = sp.Symbol("epsilon", positive=True)  # 1 - delta > 0
    ratio = sp.log(x / (2 * delta), 2) / (eps * sp.log(x - 1, 2) - 1)
    cases = [{delta: d, eps: 1 - d} for d in (sp.Rational(1, 4), sp.Rational(1, 2),
                                              sp.Rational(3, 4))]
    return check_limit_on_points(ratio, x, 1 / eps, [10**e for e in range(2, 17, 2)], cases,
                                 label="ratio -> 1/(1-delta)")


def _rates_sandwich(xs):  # noqa: ANN001, ANN202
    """The smaller of the two margins on (t, delta), in cancellation-free form:
    up  = t + log2(1/delta) - log2(2^t/(2 delta) + 1) = -log2(1/2 + delta 2^-t),
    low = (1-delta) log2(2^t - 1) - 1 - ((1-delta) t - 2) = (1-delta) log2(1 - 2^-t) + 1."""
    from flint import arb

    t, delta = xs
    ln2 = arb(2).log()
    inv = (-t * ln2).exp()  # 2^-t
    up = -(arb(1) / 2 + delta * inv).log() / ln2
    low = (1 - delta) * (1 - inv).log() / ln2 + 1
    return up.min(low)


@register_step(
    D,
    "rates_sandwich_interval",
    "interval",
    "t = log2(n/kappa) in [1, 64], delta in [1/100, 99/100] (a bounded box); sympy rewrite "
    "(all t > 0), then arb branch and bound",
    "sufficient rate log2(2^t/(2 delta) + 1) <= t + log2(1/delta) and necessary rate "
    "(1-delta) log2(2^t - 1) - 1 >= (1-delta) t - 2",
    "App. D (D) ('both Theta(log2(n/kappa))')",
    generality="finite",
    premises=("thm1.D:sufficient_rate_achieves_delta", "thm1.C:threshold_equivalence"),
)
def rates_sandwich_interval() -> Outcome:
    # Write 2^t = 1 + v with v > 0 (t > 0), so every log argument is manifestly
    # non-zero on the domain and the rewrite is an identity in (v, delta).
    v = sp.Symbol("v", positive=True)
    delta = sp.Symbol("delta", positive=True)
    lg = lambda e: sp.log(e, 2)  # noqa: E731
    rewrite = certify_identities(
        [
            (
                "up",
                lg(1 + v) + lg(1 / delta) - lg((1 + v) / (2 * delta) + 1),
                -lg(sp.Rational(1, 2) + delta / (1 + v)),
            ),
            (
                "low",
                (1 - delta) * lg(v) - 1 - ((1 - delta) * lg(1 + v) - 2),
                (1 - delta) * lg(1 - 1 / (1 + v)) + 1,
            ),
        ]
    )
    if not rewrite.ok:
        return rewrite
    box = [(Fraction(1), Fraction(64)), (Fraction(1, 100), Fraction(99, 100))]
    out = certify_positive(_rates_sandwich, box, max_boxes=50_000)
    return Outcome(out.ok, f"{rewrite.detail}; {out.detail}")


@register_step(
    D,
    "vanishing_delta_rates",
    "sympy-nonneg",
    "symbolic nu >= log2(1 + 2 delta) (n/kappa = 2^nu + 1), delta in (0, 1], eps = "
    "log2(1/delta)/nu >= 0; limits nu -> oo, delta -> 0, eps -> 0",
    "if delta_n -> 0 with log2(1/delta_n) = o(nu): (1-delta)nu - 1 <= necessary rate and the "
    "sufficient rate lies in [nu - 1, nu + log2(1/delta)], so both are (1 + o(1)) nu",
    "App. D (D), last sentence",
    generality="all",
    premises=("thm1.D:sufficient_rate_all", "thm1.C:threshold_equivalence"),
    concludes=("thm1.D",),
)
def vanishing_delta_rates() -> Outcome:
    lg = lambda e: sp.log(e, 2)  # noqa: E731
    s_, q = sp.symbols("s q", nonnegative=True)
    delta = sp.Symbol("delta", positive=True)
    # Upper: with 2^nu = 1 + 2 delta + s (s >= 0, i.e. nu >= log2(1 + 2 delta)), the
    # sufficient rate log2(n/(2 delta kappa) + 1) (ceil(x) <= x + 1) is at most
    # nu + log2(1/delta).
    two_nu = 1 + 2 * delta + s_
    upper = certify_nonneg(
        lg(two_nu) + lg(1 / delta) - lg((two_nu + 1) / (2 * delta) + 1),
        lg(1 + s_ / (2 + 4 * delta + s_)),
        label="nu + log2(1/delta) - sufficient",
    )
    if not upper.ok:
        return upper
    # Lower: with delta = 1/(1 + q) <= 1, log2(n/(2 delta kappa)) >= nu - 1
    # (x <= ceil(x), and log2 n >= nu for the other branch of the min).
    d1 = 1 / (1 + q)
    w = sp.Symbol("w", positive=True)  # w = 2^nu
    lower = certify_nonneg(
        lg((w + 1) / (2 * d1)) - (lg(w) - 1),
        lg(1 + q + (1 + q) / w),
        label="sufficient - (nu - 1)",
    )
    if not lower.ok:
        return lower
    nu, eps = sp.symbols("nu epsilon", positive=True)
    d = sp.Symbol("delta", positive=True)
    # Limits as nu -> oo with an explicit epsilon-N certificate (difference = r/nu);
    # eps -> 0 and delta -> 0 are limits of polynomials (continuity: substitution).
    for out in (
        certify_limit_inverse((nu - 1) / nu, nu, 1, label="(nu - 1)/nu -> 1"),
        certify_limit_inverse(((1 - d) * nu - 1) / nu, nu, 1 - d,
                              label="((1-delta)nu - 1)/nu -> 1 - delta"),
        certify_identity(sp.cancel((nu + eps * nu) / nu), 1 + eps,
                         label="(nu + eps nu)/nu = 1 + eps, a polynomial with value 1 at eps = 0"),
    ):
        if not out.ok:
            return out
    if (1 - d).subs(d, 0) != 1 or not sp.Poly(1 - d, d).is_linear:
        return Outcome(False, "1 - delta at delta = 0 is not 1")
    return Outcome(True, f"{upper.detail}; {lower.detail}; limits of the three ratios are 1, "
                   f"so both rates are (1 + o(1)) nu")
