"""Proof steps of Theorem 1 part (C) of paper Appendix D: the corollaries
(ledger endpoint, low-rate limit, threshold, price of a bit, restores)."""

from __future__ import annotations

import sympy as sp

from ._enumerate import simulate_makeroom
from ._registry import Outcome, register_step
from ._symbolic import (
    certify_identities,
    certify_identity,
    certify_nonneg_combination,
    certify_sign,
    check_limit_on_points,
)

C = "thm1.C"


@register_step(
    C,
    "ledger_endpoint_consistent",
    "sympy-nonneg",
    "symbolic kappa = 2 + a (a >= 0), n = 2 kappa + d (d > 0)",
    "at I = log2 n the floor is 0: log2 n + 1 - nu = log2(2 n kappa/(n - kappa)) > 0",
    "App. D (C)(i)",
    generality="all",
)
def ledger_endpoint_consistent() -> Outcome:
    a = sp.Symbol("a", nonnegative=True)
    d = sp.Symbol("d", positive=True)
    kappa = 2 + a
    n = 2 * kappa + d
    ratio = 2 * n * kappa / (n - kappa)
    excess = sp.factor(sp.together(ratio - 1))
    ident = certify_identity(
        sp.log(n, 2) + 1 - sp.log((n - kappa) / kappa, 2), sp.log(ratio, 2), label="log form"
    )
    if not ident.ok:
        return ident
    same = certify_identity(1 + excess, ratio, label="1 + excess = ratio")
    if not same.ok:
        return same
    sign = certify_sign(sp.log(1 + excess), strict=True, label="ln(ratio)")
    if not sign.ok:
        return sign
    return Outcome(True, f"ratio - 1 = {excess} > 0; {sign.detail}")


@register_step(
    C,
    "ledger_attains_zero",
    "enumeration",
    "n <= 12, every J*, every 1 <= kappa <= n-1",
    "Y = J* (I = log2 n) and archiving J* first gives Z = 0",
    "App. D (C)(i)",
    generality="finite",
    premises=("thm1.B:stop_time_and_z",),
)
def ledger_attains_zero() -> Outcome:
    count = 0
    for n in range(2, 13):
        for j_star in range(n):
            order = [j_star] + [b for b in range(n) if b != j_star]
            for kappa in range(1, n):
                if simulate_makeroom(order, j_star, kappa).z != 0:
                    return Outcome(False, f"n={n}, J*={j_star}, kappa={kappa}")
                count += 1
    return Outcome(True, f"{count} cases with Z = 0")


@register_step(
    C,
    "ledger_zero_all",
    "sympy-identity",
    "every kappa >= 1: the full ledger (Y = J*, I = log2 n) lets the agent archive J* first",
    "tau = 1 gives Z = min(tau - 1, kappa) = 0 (and T = min(1, kappa) = 1 archive)",
    "App. D (C)(i)",
    generality="all",
    premises=("thm1.B:stop_time_all",),
    concludes=("thm1.C",),
)
def ledger_zero_all() -> Outcome:
    kappa = sp.Symbol("kappa", integer=True, positive=True)
    return certify_identities([
        ("Z at tau = 1", sp.Min(1 - 1, kappa), 0),
        ("T at tau = 1", sp.Min(1, kappa), 1),
    ])


@register_step(
    C,
    "low_rate_endpoint_limit",
    "sympy-identity",
    "content rate bounded by C: n = 10^2, 10^4, ..., 10^16 for kappa in {2, 10}, "
    "C in {0, 1, 10} (50-digit evaluation); for every n the sandwich "
    "1 - (I+1)/nu <= E[Z]/kappa <= 1 is Coq's theorem1_low_rate",
    "kappa [1 - (C+1)/log2((n-kappa)/kappa)] / kappa -> 1",
    "App. D (C)(i)",
    generality="finite",
    premises=("thm1.B:tail_sum_lower_bound",),
    concludes=("thm1.C",),
)
def low_rate_endpoint_limit() -> Outcome:
    n, kappa, c = sp.symbols("n kappa C", positive=True)
    expr = 1 - (c + 1) / sp.log((n - kappa) / kappa, 2)
    cases = [{kappa: k, c: cc} for k in (2, 10) for cc in (0, 1, 10)]
    return check_limit_on_points(expr, n, 1, [10**e for e in range(2, 17, 2)], cases,
                                 label="1 - (C+1)/nu -> 1")


@register_step(
    C,
    "threshold_equivalence",
    "sympy-identity",
    "symbolic kappa, nu > 0, I, delta",
    "kappa(1-(I+1)/nu) - delta kappa = (kappa/nu)((1-delta) nu - 1 - I), kappa/nu > 0: "
    "floor <= delta kappa iff I >= (1-delta) nu - 1",
    "App. D (C)(ii)",
    generality="all",
    premises=("thm1.B:tail_sum_lower_bound",),
    concludes=("thm1.C",),
)
def threshold_equivalence() -> Outcome:
    kappa, nu = sp.symbols("kappa nu", positive=True)
    i_, delta = sp.symbols("I delta", real=True)
    ident = certify_identity(
        kappa * (1 - (i_ + 1) / nu) - delta * kappa, (kappa / nu) * ((1 - delta) * nu - 1 - i_)
    )
    if not ident.ok:
        return ident
    sign = certify_sign(kappa / nu, strict=True, label="kappa/nu")
    return Outcome(sign.ok, f"{ident.detail}; {sign.detail}")


@register_step(
    C,
    "price_slope",
    "sympy-identity",
    "symbolic kappa, nu > 0, I",
    "d/dI kappa(1 - (I+1)/nu) = -kappa/nu",
    "App. D (C)(iii)",
    generality="all",
    concludes=("thm1.C",),
)
def price_slope() -> Outcome:
    kappa, nu = sp.symbols("kappa nu", positive=True)
    i_ = sp.Symbol("I", real=True)
    return certify_identity(sp.diff(kappa * (1 - (i_ + 1) / nu), i_), -kappa / nu)


@register_step(
    C,
    "price_requirement",
    "sympy-identity",
    "symbolic kappa, nu > 0, I, Delta",
    "kappa(1-(I+1)/nu) - (kappa - Delta) = (kappa/nu)(Delta nu/kappa - 1 - I): "
    "E[Z] <= kappa - Delta forces I >= Delta nu/kappa - 1",
    "App. D (C)(iii)",
    generality="all",
    premises=("thm1.B:tail_sum_lower_bound",),
    concludes=("thm1.C",),
)
def price_requirement() -> Outcome:
    kappa, nu = sp.symbols("kappa nu", positive=True)
    i_, dz = sp.symbols("I Delta", real=True)
    return certify_identity(
        kappa * (1 - (i_ + 1) / nu) - (kappa - dz), (kappa / nu) * (dz * nu / kappa - 1 - i_)
    )


@register_step(
    C,
    "unavailable_after_r_restores",
    "sympy-nonneg",
    "symbolic Z >= 0 archived load-bearing blocks, R restored with 0 <= R <= min(Z, r), "
    "r >= 0 (pointwise, then expectations by linearity)",
    "U = Z - R blocks stay unavailable, U >= Z - r and U >= 0, so E[U] >= [E[Z] - r]_+ >= "
    "[kappa(1 - (I+1)/nu) - r]_+",
    "App. D (C) ('If at most r archived load-bearing blocks can be restored')",
    generality="all",
    premises=("thm1.B:tail_sum_lower_bound",),
    concludes=("thm1.C",),
)
def unavailable_after_r_restores() -> Outcome:
    z, r, rest = sp.symbols("Z r R", nonnegative=True)
    floor, ez = sp.symbols("F E_Z", real=True)
    unavailable = z - rest
    minus_r = certify_nonneg_combination(
        unavailable - (z - r), {"r - R >= 0": r - rest}, {"r - R >= 0": sp.Integer(1)}
    )
    if not minus_r.ok:
        return Outcome(False, f"U >= Z - r: {minus_r.detail}")
    nonneg = certify_nonneg_combination(
        unavailable, {"Z - R >= 0": z - rest}, {"Z - R >= 0": sp.Integer(1)}
    )
    if not nonneg.ok:
        return Outcome(False, f"U >= 0: {nonneg.detail}")
    # [x - r]_+ is non-decreasing in x: with E[Z] >= F (Theorem 1's floor),
    # E[Z] - r - (F - r) = 1 * [E[Z] - F >= 0].
    mono = certify_nonneg_combination(
        (ez - r) - (floor - r), {"E[Z] - F >= 0": ez - floor}, {"E[Z] - F >= 0": sp.Integer(1)}
    )
    if not mono.ok:
        return Outcome(False, f"monotone in the floor: {mono.detail}")
    return Outcome(True, "U - (Z - r) = 1*[r - R]; U = 1*[Z - R]; E[Z] - r - (F - r) = "
                   "1*[E[Z] - F]; expectations of pointwise inequalities and the max of two "
                   "lower bounds give E[U] >= [E[Z] - r]_+ >= [F - r]_+")
