"""Make-room simulator M_{n,L,l} (Definition 2, equation Z-search, Theorem 1):
Monte Carlo against the exact evaluators over a grid of instances, the
Theorem 1 bound and the exact frontier as floors, and the checks that guard
the simulator shown to fail on broken inputs."""

from __future__ import annotations

import math
import zlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from vistalab import sims, theory

# (interface, n, kappa, params): small, medium and huge n for every interface.
GRID = [
    ("ledger", 10, 2, {}),
    ("ledger", 10**9, 100, {}),
    ("blind", 10, 2, {}),
    ("blind", 1000, 7, {}),
    ("blind", 10**9, 100, {}),
    ("buckets", 10, 2, {"buckets": 3}),
    ("buckets", 1000, 7, {"buckets": 13}),
    ("buckets", 1000, 7, {"buckets": 999}),
    ("buckets", 10**6, 50, {"buckets": 1000}),
    ("buckets", 10**9, 10, {"buckets": 12345}),
    ("gibbs", 10, 2, {"lam": 0.3}),
    ("gibbs", 1000, 7, {"lam": 0.1}),
    ("gibbs", 1000, 7, {"lam": 2.0}),
    ("gibbs", 1000, 7, {"rate": 3.0}),
    ("gibbs", 10**9, 100, {"lam": 0.01}),
    ("gaussian", 10, 2, {"sigma": 0.5}),
    ("gaussian", 64, 4, {"sigma": 1.0}),
    ("gaussian", 1000, 7, {"sigma": 2.0}),
    ("gaussian", 10**6, 4, {"sigma": 1.0}),
    ("gaussian", 10**9, 16, {"sigma": 0.5}),
]


def _id(case):
    name, n, kappa, params = case
    extra = ",".join(f"{k}={v}" for k, v in params.items())
    return f"{name}-n{n}-k{kappa}" + (f"-{extra}" if extra else "")


@pytest.mark.parametrize("case", GRID, ids=[_id(c) for c in GRID])
def test_fast_estimate_agrees_with_exact_and_respects_theory(case):
    """Issue 'done when': the fast Monte Carlo E[Z] agrees with the exact
    evaluator within 4 standard errors; no estimate falls below Theorem 1's
    bound kappa[1-(I+1)/nu]_+ nor below the exact frontier at the interface's
    rate beyond 4 standard errors (the rate at its upper 4-SE limit)."""
    name, n, kappa, params = case
    # O(n) per rate trial: theory's quadrature by default beyond n = 1e5.
    rate_trials = 400 if n <= 10**4 else None
    res = sims.simulate_makeroom(n, kappa, name, trials=200_000,
                                 rng=zlib.crc32(_id(case).encode()), rate_trials=rate_trials,
                                 **params)
    assert res.exact_mean_z is not None
    tol = 4 * max(res.mean_z_se, kappa / res.trials)
    assert abs(res.mean_z - res.exact_mean_z) <= tol
    assert res.agrees_with_exact and res.consistent_with_theory
    rate_hi = min(math.log2(n), res.rate_bits + 4 * res.rate_bits_se)
    assert res.mean_z + tol >= theory.optimal_mean_z(n, kappa, rate_hi) - 1e-9
    assert res.exact_mean_z >= theory.optimal_mean_z(n, kappa, rate_hi) - 1e-9
    if 2 * kappa < n:
        assert res.mean_z + tol >= theory.makeroom_lower_bound(n, kappa, rate_hi) - 1e-9
        assert res.lower_bound == pytest.approx(
            theory.makeroom_lower_bound(n, kappa, res.rate_bits))
        assert res.nu == pytest.approx(theory.makeroom_nu(n, kappa))
    assert sum(res.z_counts) == res.trials and len(res.z_counts) == kappa + 1


LITERAL_GRID = [c for c in GRID if c[1] <= 1000]


@pytest.mark.slow
@pytest.mark.parametrize("case", LITERAL_GRID, ids=[_id(c) for c in LITERAL_GRID])
def test_literal_estimate_agrees_with_exact(case):
    """Equation (Z-search) run literally (observation, Bayes order, archive
    until L is freed) agrees with the exact E[Z] within 4 standard errors."""
    name, n, kappa, params = case
    trials = 3000 if n <= 64 else 600
    res = sims.simulate_makeroom(n, kappa, name, trials=trials, mode="literal",
                                 rng=zlib.crc32(_id(case).encode()), rate_trials=300, **params)
    assert abs(res.mean_z - res.exact_mean_z) <= 4 * max(res.mean_z_se, kappa / trials)
    assert res.consistent_with_theory


def test_gibbs_interface_sits_on_the_frontier():
    """The exact frontier: the Gibbs interface at rate R attains
    optimal_mean_z(n, kappa, R) (exactly, and in simulation within 4 SE)."""
    for rate in (0.5, 2.0, 6.0):
        res = sims.simulate_makeroom(500, 9, "gibbs", rate=rate, trials=300_000, rng=4)
        best = theory.optimal_mean_z(500, 9, rate)
        assert res.rate_bits == pytest.approx(rate, rel=1e-9)
        assert res.exact_mean_z == pytest.approx(best, rel=1e-9, abs=1e-12)
        assert abs(res.mean_z - best) <= 4 * res.mean_z_se


def test_endpoints_ledger_zero_blind_maximal():
    """Theorem 1 (C i): the full ledger (I = log2 n) gives Z = 0; the
    size-blind agent (I = 0) pays the blind value sum_m (1 - m/n)."""
    led = sims.simulate_makeroom(300, 5, "ledger", trials=50_000, rng=1)
    assert led.z_counts[0] == led.trials and led.rate_bits == math.log2(300)
    blind = sims.simulate_makeroom(300, 5, "blind", trials=200_000, rng=2)
    assert blind.rate_bits == 0.0
    assert blind.exact_mean_z == theory.blind_mean_z(300, 5)
    assert abs(blind.mean_z - blind.exact_mean_z) <= 4 * blind.mean_z_se


@pytest.mark.parametrize("n,kappa,M", [(100, 3, 7), (101, 6, 10), (1000, 20, 3)])
def test_buckets_beat_the_paper_upper_bound(n, kappa, M):
    """Theorem 1 (D): the balanced M-bucket ledger has E[Z] < n/(2M) and rate
    H(Y) <= log2 M; uneven bucket sizes when M does not divide n."""
    iface = sims.make_interface("buckets", n=n, kappa=kappa, buckets=M)
    assert iface.rate().bits <= math.log2(M) + 1e-12
    res = sims.simulate_makeroom(n, kappa, iface, trials=200_000, rng=3)
    assert res.exact_mean_z < n / (2 * M)
    assert res.mean_z - 4 * res.mean_z_se < n / (2 * M)
    sizes = np.bincount(np.arange(n) * M // n, minlength=M)
    assert sizes.max() - sizes.min() <= 1


def test_lower_bound_missing_outside_theorem_domain():
    """Theorem 1 needs 2 <= kappa < n/2: outside it the result has no bound and
    no nu, says why, and still reports the frontier (defined for n >= kappa+1)."""
    res = sims.simulate_makeroom(10, 5, "blind", trials=1000, rng=0)
    assert res.lower_bound is None and res.nu is None
    assert "outside Theorem 1's domain" in res.lower_bound_note
    assert res.optimal_mean_z == pytest.approx(theory.blind_mean_z(10, 5))
    assert res.to_dict()["lower_bound"] is None


@given(n=st.integers(3, 40), data=st.data())
def test_archiving_process_is_eq_z_search(n, data):
    """Equation (Z-search): running the archive until L is freed gives
    Z = min(tau - 1, kappa) for every order, tau = position of J*."""
    kappa = data.draw(st.integers(2, n - 1))
    order = np.array(data.draw(st.permutations(list(range(n)))))
    j = data.draw(st.integers(0, n - 1))
    sizes = np.ones(n, dtype=np.int64)
    sizes[j] = kappa
    tau = int(np.flatnonzero(order == j)[0]) + 1
    assert sims.archive_until_room(sizes, order, kappa) == min(tau - 1, kappa)


def test_result_records_configuration_and_json_keys():
    """Issue section 2 (report per run) and section 5 (JSON keys)."""
    res = sims.simulate_makeroom(64, 4, "gaussian", sigma=1.0, trials=5000, rng=7,
                                 rate_trials=300)
    doc = res.to_dict()
    for key in ("mean_z", "mean_z_ci", "rate_bits", "rate_bits_se", "lower_bound",
                "exact_mean_z", "optimal_mean_z", "nu", "trials", "seed", "trials_per_second",
                "z_counts", "lower_bound_note"):
        assert key in doc
    assert doc["seed"] == 7 and doc["params"] == {"sigma": 1.0}
    assert doc["policy"] == "bayes" and doc["mode"] == "fast"
    assert res.mean_z_ci[0] <= res.mean_z <= res.mean_z_ci[1]
    assert res.rate_trials == 300 and not res.rate_exact and res.rate_bits_se > 0
    exact_doc = sims.simulate_makeroom(64, 4, "blind", trials=10, rng=1).to_dict()
    assert exact_doc["rate_bits_se"] == 0.0


def test_generator_seed_is_consumed_and_recorded():
    """DESIGN.md rule 2: a Generator passed as rng gives reproducible but
    distinct runs, and the root seed's entropy is recorded."""
    a = sims.simulate_makeroom(50, 3, "blind", trials=10_000, rng=np.random.default_rng(5))
    gen = np.random.default_rng(5)
    b = sims.simulate_makeroom(50, 3, "blind", trials=10_000, rng=gen)
    c = sims.simulate_makeroom(50, 3, "blind", trials=10_000, rng=gen)
    assert a.z_counts == b.z_counts and b.z_counts != c.z_counts
    assert a.seed_entropy == b.seed_entropy and a.seed_spawn_key == b.seed_spawn_key
    again = sims.simulate_makeroom(50, 3, "blind", trials=10_000,
                                   rng=np.random.SeedSequence(a.seed_entropy,
                                                              spawn_key=a.seed_spawn_key))
    assert again.z_counts == a.z_counts


# ---------------------------------------------------------------------------
# Checks shown to fail on broken inputs
# ---------------------------------------------------------------------------


class _LyingLedger(sims.LedgerInterface):
    """Observes the full ledger but claims rate 0 (a broken interface)."""

    name = "lying-ledger"

    def rate(self, *, trials=None, rng=None):
        return sims.RateEstimate(bits=0.0, se=0.0, trials=0)


class _OffByOneGaussian(sims.GaussianInterface):
    """A fast sampler that forgets the bulky block's own rank (tau instead of tau-1)."""

    name = "off-by-one"

    def sample_bayes_z(self, size, streams):
        return np.minimum(super().sample_bayes_z(size, streams) + 1, self.kappa)


def test_theory_check_fails_on_an_interface_that_lies_about_its_rate():
    """Theorem 1 as a checker: Z = 0 at a claimed rate of 0 bits is impossible,
    and consistent_with_theory says so (the CLI then exits 1)."""
    res = sims.simulate_makeroom(200, 5, _LyingLedger(n=200, kappa=5), trials=10_000, rng=1)
    assert res.mean_z == 0.0
    assert res.consistent_with_theory is False


def test_exact_check_fails_on_a_broken_fast_sampler():
    """The fast-vs-exact check (4 SE) catches an off-by-one sampler."""
    iface = _OffByOneGaussian(n=64, kappa=4, sigma=1.0)
    res = sims.simulate_makeroom(64, 4, iface, trials=100_000, rng=1, rate_trials=200)
    assert res.agrees_with_exact is False


def test_simulator_rejects_a_policy_that_is_not_a_permutation():
    """Definition 3: an archive order must list every block once."""

    class Repeats:
        name = "repeats"

        def order(self, interface, y, rng):
            return np.zeros(interface.n, dtype=np.int64)

    with pytest.raises(theory.DomainError, match=r"must return a permutation of 0\.\.n-1"):
        sims.simulate_makeroom(20, 3, "blind", policy=Repeats(), mode="literal", trials=5, rng=0)


def test_simulator_rejects_z_outside_range():
    """Equation (Z-search): Z lies in 0..kappa; a sampler drawing kappa+1 is rejected."""

    class TooBig(sims.BlindInterface):
        name = "too-big"

        def sample_bayes_z(self, size, streams):
            return np.full(size, self.kappa + 1)

    with pytest.raises(theory.DomainError, match=r"must draw Z in 0\.\.kappa"):
        sims.simulate_makeroom(20, 3, TooBig(n=20, kappa=3), trials=5, rng=0)


def test_user_policy_needs_literal_mode():
    """A pluggable policy without a fast sampler runs in literal mode only."""

    class Reverse:
        name = "reverse"

        def order(self, interface, y, rng):
            return np.argsort(np.asarray(interface.log_posterior(y)), kind="stable")

    with pytest.raises(theory.DomainError, match=r"pass mode='literal'"):
        sims.simulate_makeroom(20, 3, "ledger", policy=Reverse(), trials=5, rng=0)
    res = sims.simulate_makeroom(20, 3, "ledger", policy=Reverse(), mode="literal",
                                 trials=200, rng=0)
    # Archiving the bulky block last: kappa light blocks always go first.
    assert res.z_counts[-1] == 200 and res.exact_mean_z is None


@pytest.mark.parametrize("kwargs,match", [
    (dict(n=64, kappa=4, interface="gaussian"), r"`sigma` is required for interface 'gaussian'"),
    (dict(n=64, kappa=4, interface="buckets", buckets=65),
     r"`buckets` must be an integer number of buckets with 1 <= M <= n \(got buckets=65, n=64\)"),
    (dict(n=64, kappa=2.5, interface="blind"), r"`kappa` must be an integer with 2 <= kappa < n"),
    (dict(n=64, kappa=64, interface="blind"),
     r"`kappa` must be an integer with 2 <= kappa < n \(got kappa=64, n=64\)"),
    (dict(n=64, kappa=4, interface="blind", trials=0), r"`trials` must be an integer >= 1"),
    (dict(n=64, kappa=4, interface="gibbs", lam=1.0, rate=2.0), r"exactly one of lam, rate"),
    (dict(n=64, kappa=4, interface="blind", sigma=1.0),
     r"`sigma` is not a parameter of interface 'blind'"),
    (dict(n=64, kappa=4, interface="blind", mode="quick"), r"`mode` must be 'fast' or 'literal'"),
    (dict(n=64, kappa=4, interface="blind", chunk_size=0), r"`chunk_size` must be an integer"),
    (dict(n=64, kappa=4, interface="blind", rng=-1), r"`rng` must be a non-negative integer"),
    (dict(n=10**8, kappa=4, interface="blind", mode="literal"),
     r"`n` must be <= 10000000 in literal mode"),
])
def test_bad_input_names_parameter_value_rule_and_fix(kwargs, match):
    """DESIGN.md rule 6 and issue section 5: one clear DomainError per bad input."""
    args = dict(kwargs)
    args.setdefault("trials", 10)
    with pytest.raises(theory.DomainError, match=match):
        sims.simulate_makeroom(**args)


def test_unknown_names_suggest_close_matches():
    """DESIGN.md rule 6: unknown interface/policy names suggest the closest one."""
    with pytest.raises(theory.UnknownNameError, match=r"Did you mean 'gaussian'\?"):
        sims.simulate_makeroom(64, 4, "gausian", sigma=1.0, trials=10)
    with pytest.raises(theory.UnknownNameError, match=r"Did you mean 'bayes'\?"):
        sims.simulate_makeroom(64, 4, "blind", policy="bayse", trials=10)


def test_interface_object_must_match_instance():
    """An Interface object is built for one (n, kappa); a mismatch is refused."""
    iface = sims.make_interface("blind", n=30, kappa=3)
    with pytest.raises(theory.DomainError, match=r"must be built for the same n and kappa"):
        sims.simulate_makeroom(31, 3, iface, trials=10)
