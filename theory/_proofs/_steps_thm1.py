"""Proof steps of Theorem 1 (information-recovery tradeoff), parts (B)-(E) of
paper Appendix D (part (A) is Lemma 1, in ``_steps_lemma1``)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import sympy as sp

from ._enumerate import bucket_mean_z, bucket_sizes, entropy_bits, set_partitions, simulate_makeroom
from ._interval import certify_positive
from ._lp import functional_dependence, independence
from ._randomized import run_property
from ._registry import Outcome, register_step
from ._steps_prop1 import lp_outcome
from ._symbolic import (
    certify_identities,
    certify_identity,
    certify_nonneg,
    certify_nonneg_combination,
    certify_nonneg_from_facts,
    certify_sign,
)

B, C, D, E = "thm1.B", "thm1.C", "thm1.D", "thm1.E"


def nu_bits(n: int, kappa: int) -> float:
    return math.log2((n - kappa) / kappa)


def floor_bound(n: int, kappa: int, rate: float) -> float:
    """kappa [1 - (I+1)/nu]_+ (recomputed here, independent of theory._bounds)."""
    return kappa * max(0.0, 1 - (rate + 1) / nu_bits(n, kappa))


# --- (B) reduction to list decoding --------------------------------------------


@register_step(
    B,
    "stop_time_and_z",
    "enumeration",
    "n = 2..6, every archive order, every J*, every 1 <= kappa <= n-1 (exact integers)",
    "the process stops at T = min(tau, kappa) and archives Z = min(tau - 1, kappa) "
    "load-bearing blocks",
    "App. D (B), Eq. (Z-search)",
    generality="finite",
)
def stop_time_and_z() -> Outcome:
    runs = 0
    for n in range(2, 7):
        for order in itertools.permutations(range(n)):
            for j_star in range(n):
                for kappa in range(1, n):
                    run = simulate_makeroom(order, j_star, kappa)
                    if len(run.archived) != min(run.tau, kappa):
                        return Outcome(False, f"order {order}, J*={j_star}, kappa={kappa}: "
                                       f"stopped at {len(run.archived)}")
                    if run.z != min(run.tau - 1, kappa):
                        return Outcome(False, f"order {order}, J*={j_star}, kappa={kappa}: "
                                       f"Z={run.z} != min(tau-1, kappa)")
                    runs += 1
    return Outcome(True, f"{runs} simulated runs")


def freed_after(t: sp.Expr, tau: sp.Expr, kappa: sp.Expr, *, reached: bool) -> sp.Expr:
    """Size freed (units of l) after the first t archives of an order that puts J*
    at position tau: t load-bearing blocks (size 1) before J* is reached, and
    t - 1 of them plus J* itself (size kappa) once it is (``reached``: t >= tau)."""
    return t - 1 + kappa if reached else t


def stop_time_certificates() -> tuple[bool, str]:
    """The two cases of App. D (B), each with integer parameters a, b, c, d >= 0.

    tau <= kappa (tau = 1 + a, kappa = tau + b): for t = tau - 1 - c < tau the freed
    size t is < kappa; at t = tau it is >= kappa. So T = tau = min(tau, kappa) and
    Z = T - 1 = min(tau - 1, kappa).
    tau > kappa (tau = kappa + 1 + c, kappa = 1 + d'): for t = kappa - 1 - d < kappa
    the freed size is t < kappa; at t = kappa (< tau) it is kappa. So T = kappa and
    Z = kappa = min(tau - 1, kappa).
    """
    a, b, c, d, e = sp.symbols("a b c d e", integer=True, nonnegative=True)
    parts = []
    # Case tau <= kappa.
    tau = 1 + a
    kappa = tau + b
    t = tau - 1 - c
    checks = [
        certify_nonneg(kappa - freed_after(t, tau, kappa, reached=False) - 1, b + c,
                       label="tau<=kappa: kappa - F(t) - 1, t < tau"),
        certify_nonneg(freed_after(tau, tau, kappa, reached=True) - kappa, a,
                       label="tau<=kappa: F(tau) - kappa"),
        certify_identity(sp.Min(tau, kappa), tau, label="tau<=kappa: min(tau, kappa) = T"),
        certify_identity(sp.Min(tau - 1, kappa), tau - 1, label="tau<=kappa: Z = tau - 1"),
    ]
    # Case tau > kappa.
    kappa = 1 + e
    tau = kappa + 1 + c
    t = kappa - 1 - d
    checks += [
        certify_nonneg(kappa - freed_after(t, tau, kappa, reached=False) - 1, d,
                       label="tau>kappa: kappa - F(t) - 1, t < kappa"),
        certify_nonneg(tau - kappa - 1, c, label="tau>kappa: J* not reached at t = kappa"),
        certify_identity(freed_after(kappa, tau, kappa, reached=False), kappa,
                         label="tau>kappa: F(kappa) = kappa"),
        certify_identity(sp.Min(tau, kappa), kappa, label="tau>kappa: min(tau, kappa) = T"),
        certify_identity(sp.Min(tau - 1, kappa), kappa, label="tau>kappa: Z = kappa"),
    ]
    for out in checks:
        if not out.ok:
            return False, out.detail
        parts.append(out.detail.split(":", 1)[0])
    return True, f"{len(checks)} certificates over the two cases ({'; '.join(parts)})"


@register_step(
    B,
    "stop_time_all",
    "sympy-nonneg",
    "every kappa >= 1 and position tau >= 1 of J* (cases tau <= kappa and tau > kappa, "
    "symbolic integer parameters); freed size F(t) = t before J*, t - 1 + kappa from J* on",
    "the process stops at T = min(tau, kappa) (F(t) < kappa for t < T, F(T) >= kappa) and "
    "archives Z = min(tau - 1, kappa) load-bearing blocks",
    "App. D (B), Eq. (Z-search)",
    generality="all",
)
def stop_time_all() -> Outcome:
    ok, detail = stop_time_certificates()
    return Outcome(ok, detail)


@register_step(
    B,
    "z_ge_m_all",
    "sympy-nonneg",
    "every 1 <= m <= kappa (kappa = m + f) and tau >= 1 (cases tau > m: tau = m + 1 + e, and "
    "tau <= m: tau = m - g), symbolic integers",
    "Z = min(tau - 1, kappa) >= m  <=>  tau > m  <=>  J* not among the first m probes",
    "App. D (B), Eq. (Z-list)",
    generality="all",
    premises=("thm1.B:stop_time_all",),
)
def z_ge_m_all() -> Outcome:
    m = sp.Symbol("m", integer=True, positive=True)
    e, f, g = sp.symbols("e f g", integer=True, nonnegative=True)
    kappa = m + f
    tau = m + 1 + e
    checks = (
        # tau > m: both arguments of the min are >= m, hence so is Z.
        certify_nonneg(tau - 1 - m, e, label="tau > m: (tau - 1) - m"),
        certify_nonneg(kappa - m, f, label="tau > m: kappa - m"),
        # tau <= m (tau = m - g): Z = tau - 1 < m.
        certify_nonneg(m - sp.Min(m - g - 1, kappa) - 1, g, label="tau <= m: m - Z - 1"),
    )
    for out in checks:
        if not out.ok:
            return out
    return Outcome(True, "; ".join(o.detail for o in checks) + " (tau > m iff J* is not "
                   "among the first m probes, by the definition of tau)")


@register_step(
    B,
    "prefix_lists_nested_all",
    "sympy-nonneg",
    "every 1 <= m <= kappa (kappa = m + f), any law of the position tau (pt_t = P(tau = t) "
    ">= 0), symbolic m, f (sympy Sum)",
    "L_m = {pi_1..pi_m} is inside L_kappa, and P_c(kappa) - P_c(m) = sum_{t=m+1}^{kappa} "
    "P(tau = t) >= 0",
    "App. D (B)",
    generality="all",
)
def prefix_lists_nested_all() -> Outcome:
    m = sp.Symbol("m", integer=True, positive=True)
    f = sp.Symbol("f", integer=True, nonnegative=True)
    t = sp.Symbol("t", integer=True)
    pt = sp.IndexedBase("pt", nonnegative=True)
    pc = lambda r: sp.Sum(pt[t], (t, 1, r))  # noqa: E731  P(tau <= r) = P(J* in L_r)
    return certify_nonneg(pc(m + f) - pc(m), sp.Sum(pt[t], (t, m + 1, m + f)),
                          label="P_c(kappa) - P_c(m)")


@register_step(
    B,
    "z_ge_m_iff_not_in_prefix",
    "enumeration",
    "n <= 12, every 1 <= kappa <= n-1, every position tau, every 1 <= m <= kappa; and every "
    "order for n <= 6",
    "Z >= m  <=>  tau > m  <=>  J* not among the first m probes",
    "App. D (B), Eq. (Z-list)",
    generality="finite",
    premises=("thm1.B:stop_time_and_z",),
)
def z_ge_m_iff_not_in_prefix() -> Outcome:
    count = 0
    for n in range(2, 13):
        for kappa in range(1, n):
            for tau in range(1, n + 1):
                z = min(tau - 1, kappa)
                for m in range(1, kappa + 1):
                    if (z >= m) != (tau > m):
                        return Outcome(False, f"n={n},kappa={kappa},tau={tau},m={m}")
                    count += 1
    for n in range(2, 7):
        for order in itertools.permutations(range(n)):
            for j_star in range(n):
                for kappa in range(1, n):
                    z = simulate_makeroom(order, j_star, kappa).z
                    for m in range(1, kappa + 1):
                        if (z >= m) != (j_star not in order[:m]):
                            return Outcome(False, f"order {order}, J*={j_star}, m={m}")
                        count += 1
    return Outcome(True, f"{count} cases")


def _unroll(e: sp.Expr) -> sp.Expr:
    """Write out a (multi-limit) Sum with integer bounds term by term, outermost
    limit first (sympy leaves inner sums with a symbolic lower limit unevaluated)."""
    if not isinstance(e, sp.Sum):
        return e
    *inner, (i, a, b) = e.limits
    body = sp.Sum(e.function, *inner) if inner else e.function
    return sp.Add(*(_unroll(body.subs(i, v)) for v in range(int(a), int(b) + 1)))


@register_step(
    B,
    "tail_sum_identity",
    "sympy-identity",
    "every kappa >= 1 by induction (symbolic K, sympy Sum; the induction step peels the last "
    "term of each finite sum), with a pmf p_0..p_kappa of Z; plus explicit kappa = 1..12",
    "E[Z] = sum_{m=1}^{kappa} P(Z >= m)",
    "App. D (B), Eq. (tailsum)",
    generality="all",
)
def tail_sum_identity() -> Outcome:
    m, z = sp.symbols("m z", integer=True, positive=True)
    k = sp.Symbol("K", integer=True, positive=True)
    p = sp.IndexedBase("p", nonnegative=True)
    # S(K) = sum_{m=1}^K sum_{z=m}^K p_z and M(K) = sum_{z=1}^K z p_z (z = 0 adds 0).
    s_k = sp.Sum(p[z], (z, m, k), (m, 1, k))
    m_k = sp.Sum(z * p[z], (z, 1, k))
    # S(K+1), peeling m = K+1 (sum_{z=K+1}^{K+1} p_z = p_{K+1}) and then, for each
    # m <= K, the inner z = K+1 term.
    s_next = sp.Sum(sp.Sum(p[z], (z, m, k)) + p[k + 1], (m, 1, k)) + p[k + 1]
    m_next = m_k + (k + 1) * p[k + 1]
    pairs = [
        ("base K=1: S(1) = M(1)", _unroll(s_k.subs(k, 1)), _unroll(m_k.subs(k, 1))),
        ("step: S(K+1) - S(K) = M(K+1) - M(K)", s_next - s_k, m_next - m_k),
    ]
    for kappa in range(1, 13):
        q = sp.symbols(f"p0:{kappa + 1}", nonnegative=True)
        mean = sum((t * q[t] for t in range(kappa + 1)), sp.Integer(0))
        tails = sum((q[t] for j in range(1, kappa + 1) for t in range(j, kappa + 1)), sp.Integer(0))
        pairs.append((f"kappa={kappa}", mean, tails))
    return certify_identities(pairs)


@register_step(
    B,
    "prefix_lists_nested",
    "enumeration",
    "n <= 6, every order, every 1 <= m <= kappa <= n-1",
    "L_m is a subset of L_kappa, so P_c(m) <= P_c(kappa) for any law of the order",
    "App. D (B)",
    generality="finite",
)
def prefix_lists_nested() -> Outcome:
    count = 0
    for n in range(2, 7):
        for order in itertools.permutations(range(n)):
            for kappa in range(1, n):
                big = set(order[:kappa])
                for m in range(1, kappa + 1):
                    if not set(order[:m]) <= big or len(set(order[:m])) != m:
                        return Outcome(False, f"order {order}, m={m}, kappa={kappa}")
                    count += 1
    return Outcome(True, f"{count} (order, m, kappa) cases; lists have exactly m elements")


@register_step(
    B,
    "nu_positive",
    "sympy-nonneg",
    "symbolic kappa > 0 and n = 2 kappa + d with d > 0 (i.e. kappa < n/2)",
    "nu = log2((n - kappa)/kappa) = log2(1 + d/kappa) > 0",
    "App. D, Theorem 1 assumptions",
    generality="all",
)
def nu_positive() -> Outcome:
    kappa, d = sp.symbols("kappa d", positive=True)
    n = 2 * kappa + d
    ident = certify_identity((n - kappa) / kappa, 1 + d / kappa, label="(n-kappa)/kappa")
    if not ident.ok:
        return ident
    return certify_sign(sp.log(1 + d / kappa) / sp.log(2), strict=True, label="nu")


@register_step(
    B,
    "log_n_above_log_n_minus_kappa",
    "sympy-nonneg",
    "symbolic kappa > 0, n = kappa + r with r > 0",
    "log2 n - log2(n - kappa) = log2(1 + kappa/r) >= 0",
    "App. D (B) ('using log2 n >= log2(n - kappa)')",
    generality="all",
)
def log_n_above_log_n_minus_kappa() -> Outcome:
    kappa, r = sp.symbols("kappa r", positive=True)
    n = kappa + r
    ident = certify_identity(
        sp.log(n, 2) - sp.log(n - kappa, 2), sp.log(1 + kappa / r) / sp.log(2), label="difference"
    )
    if not ident.ok:
        return ident
    return certify_sign(sp.log(1 + kappa / r) / sp.log(2), label="log2(1 + kappa/r)")


@register_step(
    B,
    "one_shot_rearrangement",
    "sympy-nonneg",
    "symbolic I, P_c, a = log2 kappa, b = log2(n-kappa), c = log2 n, nu = b - a > 0",
    "Lemma 1 at m = kappa and c >= b give P_c(kappa) <= (I+1)/nu",
    "App. D (B), 'One-shot list bound'",
    generality="all",
    premises=(
        "thm1.A:assemble_lemma",
        "thm1.B:log_n_above_log_n_minus_kappa",
        "thm1.B:nu_positive",
    ),
)
def one_shot_rearrangement() -> Outcome:
    i_, pc, b, c = sp.symbols("I P_c b c", real=True)
    nu = sp.Symbol("nu", positive=True)
    a = b - nu
    facts = {
        "Lemma 1 slack >= 0": 1 + pc * a + (1 - pc) * b - (c - i_),
        "c - b >= 0": c - b,
    }
    return certify_nonneg_combination(
        (i_ + 1) / nu - pc, facts, {"Lemma 1 slack >= 0": 1 / nu, "c - b >= 0": 1 / nu}
    )


@register_step(
    B,
    "tail_sum_lower_bound",
    "sympy-nonneg",
    "every kappa = 1 + j >= 1 (symbolic j, sympy Sum over m = 1..kappa-1) with P_c(1..kappa), "
    "I, nu > 0 (after the tail-sum identity); plus explicit kappa = 1..10",
    "E[Z] - kappa(1 - (I+1)/nu) = sum_{m<kappa} [P_c(kappa) - P_c(m)] + kappa[(I+1)/nu - "
    "P_c(kappa)] >= 0",
    "App. D (B), Eq. (main-lb)",
    generality="all",
    premises=(
        "thm1.B:tail_sum_identity",
        "thm1.B:z_ge_m_all",
        "thm1.B:prefix_lists_nested_all",
        "thm1.B:one_shot_rearrangement",
        "thm1.E:adaptive_policies_exhaustive",
        "thm1.E:batch_refinement_all",
        "thm1.E:order_information_through_y",
    ),
    concludes=("thm1.B",),
)
def tail_sum_lower_bound() -> Outcome:
    i_ = sp.Symbol("I", real=True)
    nu = sp.Symbol("nu", positive=True)
    j = sp.Symbol("j", integer=True, nonnegative=True)
    m = sp.Symbol("m", integer=True, positive=True)
    kappa = 1 + j
    pc = sp.IndexedBase("P_c", real=True)  # P_c(m) for m < kappa
    q = sp.Symbol("q", real=True)  # P_c(kappa)
    phi = sp.IndexedBase("phi", nonnegative=True)
    psi = sp.Symbol("psi", nonnegative=True)
    mean = kappa - sp.Sum(pc[m], (m, 1, j)) - q  # Eq. (tailsum), the m = kappa term split off
    general = certify_nonneg_from_facts(
        mean - kappa * (1 - (i_ + 1) / nu),
        sp.Sum(phi[m], (m, 1, j)) + kappa * psi,
        {
            phi: (lambda t: q - pc[t], "prefix_lists_nested (P_c(m) <= P_c(kappa))"),
            psi: ((i_ + 1) / nu - q, "one_shot_rearrangement (P_c(kappa) <= (I+1)/nu)"),
        },
        label="symbolic kappa",
    )
    if not general.ok:
        return general
    for k in range(1, 11):
        pcs = sp.symbols(f"Pc1:{k + 1}", real=True)
        facts = {f"Pc{k}-Pc{t}": pcs[-1] - pcs[t - 1] for t in range(1, k)}
        facts["(I+1)/nu - Pc_kappa"] = (i_ + 1) / nu - pcs[-1]
        mult = {f: sp.Integer(1) for f in facts}
        mult["(I+1)/nu - Pc_kappa"] = sp.Integer(k)
        out = certify_nonneg_combination(k - sum(pcs) - k * (1 - (i_ + 1) / nu), facts, mult)
        if not out.ok:
            return Outcome(False, f"kappa={k}: {out.detail}")
    return Outcome(True, f"{general.detail}; explicit certificates for kappa = 1..10 agree")


def _cost_matrix(n: int, kappa: int) -> np.ndarray:
    """cost[o, j] = min(pos_o(j) - 1, kappa) over all n! orders o."""
    orders = np.array(list(itertools.permutations(range(n))))
    pos = np.argsort(orders, axis=1)  # pos[o, j] = 0-based position of j
    return np.minimum(pos, kappa)


@register_step(
    B,
    "bound_vs_all_deterministic_interfaces",
    "enumeration",
    "n = 5, 6, 7 with 2 <= kappa < n/2: every deterministic interface (set partition) and the "
    "best of all n! orders per observation (E[Z] exact, I float, tol 1e-12)",
    "min over policies of E[Z] >= kappa [1 - (I+1)/nu]_+",
    "Theorem 1",
    generality="finite",
)
def bound_vs_all_deterministic_interfaces() -> Outcome:
    checked = 0
    worst = math.inf
    for n in (5, 6, 7):
        for kappa in range(2, (n - 1) // 2 + 1):
            cost = _cost_matrix(n, kappa)
            for part in set_partitions(list(range(n))):
                best = Fraction(0)
                for bucket in part:
                    # E[Z | Y = bucket] for every order; the best order per bucket.
                    tot = int(cost[:, bucket].sum(axis=1).min())
                    best += Fraction(tot, n)
                rate = entropy_bits(np.array([len(b) for b in part]) / n)
                slack = float(best) - floor_bound(n, kappa, rate)
                if slack < -1e-12:
                    return Outcome(False, f"n={n},kappa={kappa},partition={part}: E[Z]={best}")
                worst = min(worst, slack)
                checked += 1
    return Outcome(True, f"{checked} interfaces, min slack {worst:.3g}")


def _posterior_sorted_mean_z(channel: np.ndarray, kappa: int) -> float:
    """Smallest E[Z] for a stochastic interface: for each y, archive blocks by
    decreasing posterior (optimal since min(r-1, kappa) is non-decreasing in r)."""
    n = channel.shape[0]
    joint = channel / n  # j, y
    total = 0.0
    for y in range(channel.shape[1]):
        col = np.sort(joint[:, y])[::-1]
        total += float((col * np.minimum(np.arange(n), kappa)).sum())
    return total


def gibbs_points(n: int, kappa: int, lams: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(I, E[Z]) of the Gibbs announced-order interfaces, one per lambda.

    The agent is shown an order in which J* sits at rank r with probability
    p_r ∝ exp(-lam c_r), c_r = min(r - 1, kappa), and archives in that order.
    Re-derived here from the closed form (independent of theory._frontier):
    the rank law has kappa + 1 distinct costs, cost c < kappa at one rank and
    cost kappa at n - kappa ranks, so E[Z] = sum_c c P(c) and
    I = log2 n - H(rank) with H(rank) = H(cost class) + sum_c P(c) ln mult_c.
    """
    lams = np.asarray(lams, dtype=float)[:, None]
    costs = np.arange(kappa + 1, dtype=float)[None, :]
    lnmult = np.zeros((1, kappa + 1))
    lnmult[0, -1] = math.log(n - kappa)
    logw = lnmult - lams * costs
    logw = logw - logw.max(axis=1, keepdims=True)  # no underflow at large lambda
    w = np.exp(logw)
    z = w.sum(axis=1, keepdims=True)
    p = w / z
    mean = (p * costs).sum(axis=1)
    logp = logw - np.log(z)
    h_nats = -(p * logp).sum(axis=1) + (p * lnmult).sum(axis=1)
    rate = np.maximum(math.log2(n) - h_nats / math.log(2), 0.0)
    return rate, mean


def gibbs_point(n: int, kappa: int, lam: float) -> tuple[float, float]:
    """(I, E[Z]) of one Gibbs announced-order interface (:func:`gibbs_points`)."""
    rate, mean = gibbs_points(n, kappa, np.array([lam]))
    return float(rate[0]), float(mean[0])


def theorem_property(data: object) -> None:
    from hypothesis import strategies as st

    draw = data.draw  # type: ignore[attr-defined]
    n = draw(st.integers(5, 40))
    kappa = draw(st.integers(2, (n - 1) // 2))
    if draw(st.booleans()):
        # The interfaces on the exact frontier (the hardest for the bound).
        lam = draw(st.floats(0.0, 6.0))
        rate, mean_z = gibbs_point(n, kappa, lam)
        what = f"Gibbs lambda={lam}"
    else:
        ny = draw(st.integers(1, 6))
        sharp = draw(st.floats(0.0, 8.0))
        w = np.array(draw(st.lists(st.floats(0, 1), min_size=n * ny, max_size=n * ny)))
        channel = np.exp(sharp * w.reshape(n, ny))  # large `sharp`: informative interfaces
        channel /= channel.sum(1, keepdims=True)
        rate = entropy_bits(channel.sum(0) / n) - sum(entropy_bits(r) for r in channel) / n
        mean_z = _posterior_sorted_mean_z(channel, kappa)
        what = f"random channel |Y|={ny}"
    assert mean_z >= floor_bound(n, kappa, rate) - 1e-9, (
        f"n={n}, kappa={kappa}, {what}, I={rate}: E[Z]={mean_z} < bound "
        f"{floor_bound(n, kappa, rate)}"
    )


@register_step(
    B,
    "bound_vs_random_interfaces",
    "hypothesis",
    "n = 5..40, 2 <= kappa < n/2; random stochastic interfaces with |Y| <= 6 and the optimal "
    "(posterior-sorted) order, and Gibbs announced-order interfaces with lambda in [0, 6] "
    "(float, tol 1e-9)",
    "E[Z] >= kappa [1 - (I+1)/nu]_+",
    "Theorem 1",
    generality="sampled",
)
def bound_vs_random_interfaces() -> Outcome:
    from hypothesis import strategies as st

    return run_property(theorem_property, st.data(), max_examples=150)


#: (n, kappa) grid of the frontier check: every pair with n <= 60, and a few
#: large n with small, middle and largest kappa.
def frontier_grid() -> list[tuple[int, int]]:
    pairs = [(n, k) for n in range(5, 61) for k in range(2, (n - 1) // 2 + 1)]
    for n in (100, 1_000, 10_000, 1_000_000):
        for k in sorted({2, 3, 10, math.isqrt(n), (n - 1) // 2 if n <= 10_000 else 1000}):
            pairs.append((n, k))
    return pairs


#: lambda grid (0 is the blind interface; large lambda approaches the full ledger).
FRONTIER_LAMBDAS = np.concatenate([[0.0], np.geomspace(1e-3, 60.0, 160)])


def frontier_slack() -> tuple[float, tuple[int, int, float, float, float], int]:
    """min over the grid of E[Z] - floor_bound(I) at the Gibbs frontier points
    where the floor is positive, the (n, kappa, lambda, I, E[Z]) where it is
    attained, and the number of points checked."""
    worst = math.inf
    where = (0, 0, 0.0, 0.0, 0.0)
    count = 0
    for n, kappa in frontier_grid():
        rates, means = gibbs_points(n, kappa, FRONTIER_LAMBDAS)
        for lam, rate, mean_z in zip(FRONTIER_LAMBDAS, rates, means, strict=True):
            floor = floor_bound(n, kappa, float(rate))
            count += 1
            if floor <= 0.0 and mean_z >= 0.0:
                continue
            slack = float(mean_z) - floor
            if slack < worst:
                worst, where = slack, (n, kappa, float(lam), float(rate), float(mean_z))
    return worst, where, count


@register_step(
    B,
    "bound_vs_exact_frontier",
    "enumeration",
    "every 5 <= n <= 60 with 2 <= kappa < n/2, and n in {1e2, 1e3, 1e4, 1e6} with kappa in "
    "{2, 3, 10, sqrt n, largest}; 161 values of lambda in [0, 60] (float, tol 1e-9)",
    "E[Z] >= kappa [1 - (I+1)/nu]_+ at every grid point (I(lambda), E[Z](lambda)) of the exact "
    "frontier (the Gibbs announced-order interfaces, which attain the least E[Z] at their rate)",
    "Theorem 1 vs the exact frontier (theory/FRONTIER.md)",
    generality="finite",
)
def bound_vs_exact_frontier() -> Outcome:
    from .._frontier import optimal_mean_z

    # The closed form above is an independent derivation of the frontier:
    # cross-check it against theory's solver at a few points first.
    for n, kappa, lam in ((10, 2, 0.6933), (40, 7, 2.5), (1000, 31, 0.05)):
        rate, mean_z = gibbs_point(n, kappa, lam)
        ref = optimal_mean_z(n, kappa, rate)
        if abs(ref - mean_z) > 1e-7 * max(1.0, mean_z):
            return Outcome(False, f"closed form E[Z]={mean_z} != optimal_mean_z={ref} at "
                           f"n={n}, kappa={kappa}, I={rate}")
    worst, (n, kappa, lam, rate, mean_z), count = frontier_slack()
    at = f"n={n}, kappa={kappa}, lambda={lam:.4g}, I={rate:.4g}, E[Z]={mean_z:.6g}"
    if worst < -1e-9:
        return Outcome(False, f"violated at {at}: bound {floor_bound(n, kappa, rate):.6g}")
    return Outcome(True, f"{count} frontier points, min slack where the floor is positive "
                   f"{worst:.3g} at {at}")


# --- (C) corollaries -------------------------------------------------------------


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
    "fixed kappa >= 2, content rate bounded by a constant C >= 0, n -> oo",
    "kappa [1 - (C+1)/log2((n-kappa)/kappa)] / kappa -> 1",
    "App. D (C)(i)",
    generality="all",
    premises=("thm1.B:tail_sum_lower_bound",),
    concludes=("thm1.C",),
)
def low_rate_endpoint_limit() -> Outcome:
    n, kappa, c = sp.symbols("n kappa C", positive=True)
    expr = 1 - (c + 1) / sp.log((n - kappa) / kappa, 2)
    lim = sp.limit(expr, n, sp.oo)
    return certify_identity(lim, 1, label="limit")


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


# --- (D) achievability ------------------------------------------------------------


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
    "fixed delta in (0,1) symbolic, x = n/kappa -> oo",
    "log2(x/(2 delta)) / ((1-delta) log2(x - 1) - 1) -> 1/(1-delta): both rates are "
    "Theta(log2(n/kappa))",
    "App. D (D)",
    generality="all",
    premises=("thm1.D:sufficient_rate_all", "thm1.C:threshold_equivalence"),
    concludes=("thm1.D",),
)
def order_matching_limit() -> Outcome:
    x = sp.Symbol("x", positive=True)
    delta = sp.Symbol("delta", positive=True)
    eps = sp.Symbol("epsilon", positive=True)  # 1 - delta > 0
    ratio = sp.log(x / (2 * delta), 2) / (eps * sp.log(x - 1, 2) - 1)
    lim = sp.limit(ratio, x, sp.oo)
    return certify_identity(lim, 1 / eps, label="limit with epsilon = 1 - delta")


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
    limits = {
        "(nu - 1)/nu": (sp.limit((nu - 1) / nu, nu, sp.oo), 1),
        "(nu + eps nu)/nu at eps -> 0": (sp.limit(sp.cancel((nu + eps * nu) / nu), eps, 0), 1),
        "((1-delta)nu - 1)/nu, nu -> oo": (sp.limit(((1 - d) * nu - 1) / nu, nu, sp.oo), 1 - d),
        "then delta -> 0": (sp.limit(1 - d, d, 0), 1),
    }
    for name, (got, want) in limits.items():
        if sp.simplify(got - want) != 0:
            return Outcome(False, f"limit {name} is {got}, expected {want}")
    return Outcome(True, f"{upper.detail}; {lower.detail}; limits of the three ratios are 1, "
                   f"so both rates are (1 + o(1)) nu")


# --- (E) ordered probing is without loss ---------------------------------------------


@register_step(
    E,
    "flag_reads_over_until_stop",
    "enumeration",
    "n = 2..6, every order, every J*, every 1 <= kappa <= n-1",
    "the flag transcript is ('over',)*(T-1) + ('clear',) with T = min(tau, kappa): it depends "
    "on the order only through tau",
    "App. D (E)",
    generality="finite",
    premises=("thm1.B:stop_time_and_z",),
)
def flag_reads_over_until_stop() -> Outcome:
    count = 0
    for n in range(2, 7):
        for order in itertools.permutations(range(n)):
            for j_star in range(n):
                for kappa in range(1, n):
                    run = simulate_makeroom(order, j_star, kappa)
                    t = min(run.tau, kappa)
                    if run.flags != ("over",) * (t - 1) + ("clear",):
                        return Outcome(False, f"order {order}, J*={j_star}, kappa={kappa}: "
                                       f"{run.flags}")
                    count += 1
    return Outcome(True, f"{count} runs")


@register_step(
    E,
    "flag_transcript_all",
    "sympy-nonneg",
    "every kappa >= 1 and position tau of J* (the two cases of stop_time_all)",
    "the flag reads 'over' after archive t < T and 'clear' at T = min(tau, kappa), so the "
    "transcript depends on the order only through tau",
    "App. D (E)",
    generality="all",
    premises=("thm1.B:stop_time_all",),
)
def flag_transcript_all() -> Outcome:
    # The flag after archive t is 'over' iff F(t) < kappa: exactly the certificates
    # of the stop time (F(t) < kappa for t < T, F(T) >= kappa), in both cases.
    ok, detail = stop_time_certificates()
    return Outcome(ok, f"flag = 'over' iff F(t) < kappa; {detail}")


@register_step(
    E,
    "batch_refinement_all",
    "sympy-nonneg",
    "any batch S of s = T' + h blocks freeing >= L, any order of S, stop time T' <= s; "
    "indicators u_t = 1[pi_t is load-bearing] >= 0 (symbolic T', h, sympy Sum)",
    "the sequential refinement archives sum_{t <= T'} u_t <= sum_{t <= s} u_t = |S minus J*| "
    "load-bearing blocks (it stops by time s because S frees >= L)",
    "App. D (E)",
    generality="all",
    concludes=("thm1.E",),
)
def batch_refinement_all() -> Outcome:
    tp = sp.Symbol("T'", integer=True, positive=True)
    h = sp.Symbol("h", integer=True, nonnegative=True)
    t = sp.Symbol("t", integer=True)
    u = sp.IndexedBase("u", nonnegative=True)
    cost = lambda r: sp.Sum(u[t], (t, 1, r))  # noqa: E731
    return certify_nonneg(cost(tp + h) - cost(tp), sp.Sum(u[t], (t, tp + 1, tp + h)),
                          label="batch cost - sequential cost")


@register_step(
    E,
    "batch_refinement_no_costlier",
    "enumeration",
    "n = 2..5, every J*, 1 <= kappa <= n-1, every batch set S freeing >= L, every order of S",
    "archiving S sequentially and stopping when the flag clears archives at most "
    "|S minus J*| load-bearing blocks",
    "App. D (E)",
    generality="finite",
)
def batch_refinement_no_costlier() -> Outcome:
    count = 0
    for n in range(2, 6):
        for j_star in range(n):
            for kappa in range(1, n):
                for r in range(1, n + 1):
                    for subset in itertools.combinations(range(n), r):
                        freed = sum(kappa if b == j_star else 1 for b in subset)
                        if freed < kappa:
                            continue
                        batch_cost = sum(1 for b in subset if b != j_star)
                        for order in itertools.permutations(subset):
                            run = simulate_makeroom(order, j_star, kappa)
                            if run.flags[-1] != "clear" or run.z > batch_cost:
                                return Outcome(False, f"S={subset}, order={order}, J*={j_star}")
                            count += 1
    return Outcome(True, f"{count} refinements")


def adaptive_property(seed: int, n: int, kappa_frac: float) -> None:
    kappa = max(1, min(n - 1, int(kappa_frac * (n - 1)) + 1))

    def choose(history: tuple[int, ...], flags: tuple[bool, ...]) -> int:
        # An arbitrary deterministic adaptive rule that *may* use the flags.
        remaining = [b for b in range(n) if b not in history]
        h = hash((seed, history, flags)) & 0xFFFFFFFF
        return remaining[h % len(remaining)]

    # The fixed order this policy follows when every flag reads "over".
    fixed: list[int] = []
    for _ in range(n):
        fixed.append(choose(tuple(fixed), (True,) * len(fixed)))
    for j_star in range(n):
        hist: list[int] = []
        flags: list[bool] = []
        freed = 0
        while freed < kappa:
            b = choose(tuple(hist), tuple(flags))
            hist.append(b)
            freed += kappa if b == j_star else 1
            flags.append(freed < kappa)  # True = "over"
        adaptive_z = sum(1 for b in hist if b != j_star)
        fixed_z = simulate_makeroom(fixed, j_star, kappa).z
        assert adaptive_z == fixed_z, (
            f"n={n}, kappa={kappa}, J*={j_star}: {adaptive_z} != {fixed_z}"
        )


@register_step(
    E,
    "adaptive_equals_fixed_order",
    "hypothesis",
    "n = 2..12, 1 <= kappa <= n-1, arbitrary deterministic adaptive rules (hash-seeded)",
    "an adaptive flag-driven policy incurs the same Z as its all-'over' fixed order, for every J*",
    "App. D (E)",
    generality="sampled",
    premises=("thm1.E:flag_reads_over_until_stop",),
)
def adaptive_equals_fixed_order() -> Outcome:
    from hypothesis import strategies as st

    return run_property(
        adaptive_property,
        st.integers(0, 2**31),
        st.integers(2, 12),
        st.floats(0, 1, exclude_max=True),
        max_examples=150,
    )


def run_adaptive(policy: dict[tuple[tuple[int, ...], tuple[bool, ...]], int], n: int,
                 j_star: int, kappa: int) -> int:
    """Z of a flag-driven policy (a table from (history, flags) to the next block;
    flag True = "over") on the make-room process."""
    hist: list[int] = []
    flags: list[bool] = []
    freed = 0
    while freed < kappa:
        b = policy[(tuple(hist), tuple(flags))]
        hist.append(b)
        freed += kappa if b == j_star else 1
        flags.append(freed < kappa)
    return sum(1 for b in hist if b != j_star)


def all_adaptive_policies(n: int):  # noqa: ANN201
    """Every deterministic policy on n blocks: one choice of a not-yet-archived
    block for every (history, flag string) node, flag strings of both values."""
    nodes = []
    for length in range(n):
        for hist in itertools.permutations(range(n), length):
            for flags in itertools.product((True, False), repeat=length):
                nodes.append((hist, flags))
    choices = [[b for b in range(n) if b not in hist] for hist, _ in nodes]
    for pick in itertools.product(*choices):
        yield dict(zip(nodes, pick, strict=True))


@register_step(
    E,
    "adaptive_policies_exhaustive",
    "enumeration",
    "n = 2, 3: every deterministic flag-driven policy (a choice at every (history, flags) node, "
    "192 policies for n = 3), every J*, every 1 <= kappa <= n-1",
    "an adaptive flag-driven policy incurs the same Z as its all-'over' fixed order, for every J*",
    "App. D (E)",
    generality="finite",
    premises=("thm1.E:flag_transcript_all",),
    concludes=("thm1.E",),
)
def adaptive_policies_exhaustive() -> Outcome:
    count = 0
    for n in (2, 3):
        for policy in all_adaptive_policies(n):
            fixed: list[int] = []
            for _ in range(n):
                fixed.append(policy[(tuple(fixed), (True,) * len(fixed))])
            for kappa in range(1, n):
                for j_star in range(n):
                    adaptive_z = run_adaptive(policy, n, j_star, kappa)
                    fixed_z = simulate_makeroom(fixed, j_star, kappa).z
                    if adaptive_z != fixed_z:
                        return Outcome(False, f"n={n}, kappa={kappa}, J*={j_star}: adaptive Z "
                                       f"{adaptive_z} != fixed-order Z {fixed_z}")
                    count += 1
    return Outcome(True, f"{count} (policy, kappa, J*) runs: adaptive Z = fixed-order Z")


@register_step(
    E,
    "order_information_through_y",
    "lp-shannon",
    "any J, Y, private U independent of (J,Y), order P = f(Y,U)",
    "I(J;P) <= I(J;Y) given H(P|Y,U) = 0 and U independent of (J,Y)",
    "App. D (E) ('the only J*-information available to the ordering is Y')",
    generality="all",
    concludes=("thm1.E",),
)
def order_information_through_y() -> Outcome:
    return lp_outcome(
        "I(J;P) <= I(J;Y)",
        (functional_dependence("P", ("Y", "U")), independence("U", ("J", "Y"))),
    )
