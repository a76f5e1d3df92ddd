"""Proof steps of Theorem 1 part (E) of paper Appendix D: ordered probing is
without loss (flags, batches and adaptive orders add nothing)."""

from __future__ import annotations

import itertools

import sympy as sp

from ._enumerate import simulate_makeroom
from ._lp import functional_dependence, independence
from ._randomized import run_property
from ._registry import Outcome, register_step
from ._steps_prop1 import lp_outcome
from ._steps_thm1_b import stop_time_certificates
from ._symbolic import certify_nonneg

E = "thm1.E"


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
