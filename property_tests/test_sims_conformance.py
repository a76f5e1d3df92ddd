"""One conformance suite run over every registered interface, policy and
strategy of sims/ (DESIGN.md rule 4): registering a new one in
``sims.INTERFACES``, ``sims.POLICIES`` or ``sims.STRATEGIES`` (with
``EXAMPLE_PARAMS``) gets these tests for free.

Paper: Definitions 2-3 and equation (Z-search) for the make-room instance,
Theorem 1 for the bounds; Proposition 1 for the recovery task.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from vistalab import sims, theory

N_SMALL, KAPPA_SMALL = 13, 3
LITERAL_TRIALS = 3000
FAST_TRIALS = 200_000


def _iface(name: str, n: int = N_SMALL, kappa: int = KAPPA_SMALL) -> sims.Interface:
    params = getattr(sims.INTERFACES[name], "EXAMPLE_PARAMS", {})
    return sims.make_interface(name, n=n, kappa=kappa, **params)


IFACES = sorted(sims.INTERFACES)
POLICIES = sorted(sims.POLICIES)
STRATEGIES = sorted(sims.STRATEGIES)


# ---------------------------------------------------------------------------
# Interfaces
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", IFACES)
def test_interface_protocol_members(name):
    """Definition 3: an interface is an observation Y of J* with a rate I(J*;Y)
    in [0, log2 n] and a posterior over the n blocks."""
    iface = _iface(name)
    assert isinstance(iface, sims.Interface)
    assert iface.name == name
    assert (iface.n, iface.kappa) == (N_SMALL, KAPPA_SMALL)
    assert isinstance(iface.params, dict)
    rate = iface.rate(trials=200, rng=0)
    assert 0.0 <= rate.bits <= math.log2(N_SMALL) + 1e-12
    assert rate.se >= 0.0
    assert rate.exact == (rate.se == 0.0 and rate.trials == 0)


@pytest.mark.parametrize("name", IFACES)
def test_interface_posterior_never_excludes_the_truth(name):
    """Definition 3: the Bayes order is built from P(J* = j | Y); the true
    bulky block must always have positive posterior probability."""
    iface = _iface(name)
    gen = np.random.default_rng(1)
    for _ in range(50):
        j = int(gen.integers(iface.n))
        lp = np.asarray(iface.log_posterior(iface.observe(j, gen)))
        assert lp.shape == (iface.n,)
        assert np.isfinite(lp[j])
        assert not np.any(np.isnan(lp))


@pytest.mark.parametrize("name", IFACES)
def test_fast_sampler_chunking_does_not_change_draws(name):
    """Section 4 of the issue (reproducibility): each random variable has its
    own stream, so drawing a block in sub-chunks gives the same Z values."""
    iface = _iface(name)
    f = getattr(iface, "sample_bayes_z", None)
    if f is None:
        pytest.skip("no fast path")

    def streams():
        return [np.random.default_rng([7, v]) for v in range(4)]

    whole = f(1000, streams())
    s = streams()
    parts = np.concatenate([f(m, s) for m in (1, 299, 400, 300)])
    np.testing.assert_array_equal(whole, parts)
    assert whole.min() >= 0 and whole.max() <= iface.kappa


@pytest.mark.parametrize("name", IFACES)
def test_exact_law_matches_exact_mean(name):
    """Equation (tailsum): E[Z] = sum_z z P(Z = z); the exact law sums to 1."""
    iface = _iface(name)
    for policy in POLICIES:
        pmf = sims.exact_z_pmf(iface, policy)
        mean = sims.exact_mean_z(iface, policy)
        if pmf is None or mean is None:
            continue
        assert pmf.shape == (iface.kappa + 1,)
        assert np.all(pmf >= -1e-15)
        assert pmf.sum() == pytest.approx(1.0, abs=1e-12)
        assert float(np.arange(iface.kappa + 1) @ pmf) == pytest.approx(mean, abs=1e-9)


# ---------------------------------------------------------------------------
# Interface x policy
# ---------------------------------------------------------------------------


def _chi2_ok(counts: np.ndarray, pmf: np.ndarray) -> bool:
    """Pearson goodness of fit at level 1e-4 (cells with tiny expectation pooled)."""
    from scipy import stats

    expected = counts.sum() * pmf
    keep = expected >= 5
    obs = np.append(counts[keep], counts[~keep].sum())
    exp = np.append(expected[keep], expected[~keep].sum())
    if exp[-1] < 5:
        obs[-2] += obs[-1]
        exp[-2] += exp[-1]
        obs, exp = obs[:-1], exp[:-1]
    if obs.size < 2:
        return bool(np.all(obs == exp.round()))
    stat = float(((obs - exp) ** 2 / exp).sum())
    return stat <= stats.chi2.isf(1e-4, obs.size - 1)


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", IFACES)
def test_literal_trials_follow_the_exact_law(name, policy):
    """Equation (Z-search), literally: build Y and the archive order, archive
    until L is freed, count load-bearing blocks; the counts fit the exact law
    of Z (chi-square, level 1e-4) and the mean agrees within 4 SE."""
    iface = _iface(name)
    res = sims.simulate_makeroom(N_SMALL, KAPPA_SMALL, iface, policy=policy, mode="literal",
                                 trials=LITERAL_TRIALS, rng=11)
    assert sum(res.z_counts) == LITERAL_TRIALS
    pmf = sims.exact_z_pmf(iface, policy)
    if pmf is not None:
        assert _chi2_ok(np.array(res.z_counts), pmf)
    if res.exact_mean_z is not None:
        assert res.agrees_with_exact
    assert res.consistent_with_theory


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", IFACES)
def test_fast_mode_matches_exact_and_literal(name, policy):
    """Section 3 of the issue: the O(1)-per-trial fast path draws Z from the
    same law as the literal process (chi-square against the exact law, and
    fast vs literal means within 4 combined SE)."""
    iface = _iface(name)
    pol = sims.make_policy(policy)
    if pol.fast_sampler(iface) is None:
        pytest.skip("no fast path")
    fast = sims.simulate_makeroom(N_SMALL, KAPPA_SMALL, iface, policy=policy, mode="fast",
                                  trials=FAST_TRIALS, rng=12)
    lit = sims.simulate_makeroom(N_SMALL, KAPPA_SMALL, iface, policy=policy, mode="literal",
                                 trials=LITERAL_TRIALS, rng=13)
    pmf = sims.exact_z_pmf(iface, policy)
    if pmf is not None:
        assert _chi2_ok(np.array(fast.z_counts), pmf)
    gap = abs(fast.mean_z - lit.mean_z)
    assert gap <= 4 * math.hypot(fast.mean_z_se, lit.mean_z_se) + 1e-12


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", IFACES)
def test_results_are_reproducible_and_chunk_free(name, policy):
    """Section 4 of the issue: identical results for a seed whatever the chunk
    size or number of workers; the seed entropy is recorded."""
    iface = _iface(name)
    if sims.make_policy(policy).fast_sampler(iface) is None:
        pytest.skip("no fast path")
    trials = 2 * sims.FAST_BLOCK + 123
    runs = [sims.simulate_makeroom(N_SMALL, KAPPA_SMALL, iface, policy=policy, trials=trials,
                                   rng=2024, chunk_size=c, workers=w, rate_trials=50)
            for c, w in ((None, 1), (1000, 1), (sims.FAST_BLOCK, 2), (77_777, 2))]
    assert len({r.z_counts for r in runs}) == 1
    assert {r.seed_entropy for r in runs} == {2024}
    other = sims.simulate_makeroom(N_SMALL, KAPPA_SMALL, iface, policy=policy, trials=trials,
                                   rng=2025, rate_trials=50)
    if other.mean_z_se > 0:
        assert other.z_counts != runs[0].z_counts


@pytest.mark.parametrize("policy", POLICIES)
@pytest.mark.parametrize("name", IFACES)
def test_policy_orders_are_permutations(name, policy):
    """Definition 3: the agent archives in a (Y, U)-measurable order of all n blocks."""
    iface = _iface(name)
    pol = sims.make_policy(policy)
    assert isinstance(pol, sims.Policy) and pol.name == policy
    gen = np.random.default_rng(3)
    for _ in range(20):
        y = iface.observe(int(gen.integers(iface.n)), gen)
        order = np.asarray(pol.order(iface, y, gen))
        assert sorted(order.tolist()) == list(range(iface.n))


# ---------------------------------------------------------------------------
# Strategies
# ---------------------------------------------------------------------------

RECOVERY_GRID = [(12, 5, 30), (8, 1, 3), (5, 64, 200), (3, 1000, 2100)]


@pytest.mark.parametrize("N,k,budget", RECOVERY_GRID)
@pytest.mark.parametrize("name", STRATEGIES)
def test_strategy_matches_closed_form_and_respects_proposition_1(name, N, k, budget):
    """Proposition 1: no non-recovering strategy beats B/(Nk) + 1/k; each
    strategy's success agrees with its closed form (exact binomial interval at
    level 1 - 1e-4); the recovering one succeeds iff it fits the budget."""
    strat = sims.make_strategy(name, **getattr(sims.STRATEGIES[name], "EXAMPLE_PARAMS", {}))
    assert isinstance(strat, sims.Strategy) and strat.name == name
    res = sims.simulate_recovery(N, k, budget, strat, trials=4000, rng=5)
    assert res.trials == 4000
    if res.exact_success is not None:
        lo, hi = _cp(res.successes, res.trials)
        assert lo <= res.exact_success <= hi
    if strat.recovering:
        feas = theory.recovery_feasibility(N, k, budget)
        assert res.feasible == feas.feasible
        assert res.success == (1.0 if feas.feasible else 0.0)
        assert res.consistent_with_bound is None
    else:
        assert res.entropy_bits <= budget
        assert res.consistent_with_bound is True
        assert res.exact_success is None or res.exact_success <= min(1.0, res.bound)


def _cp(successes: int, trials: int) -> tuple[float, float]:
    from scipy import stats

    ci = stats.binomtest(successes, trials).proportion_ci(confidence_level=1 - 1e-4,
                                                          method="exact")
    return ci.low, ci.high


@pytest.mark.parametrize("name", STRATEGIES)
def test_strategy_results_reproducible_across_workers(name):
    """Section 4 of the issue: same seed, same result, whatever the worker count."""
    a = sims.simulate_recovery(16, 3, 20, name, trials=9000, rng=99, workers=1)
    b = sims.simulate_recovery(16, 3, 20, name, trials=9000, rng=99, workers=2)
    assert a.successes == b.successes
    assert a.seed_entropy == 99


def test_goodness_of_fit_helper_rejects_a_wrong_law():
    """The chi-square helper used above can fail: counts drawn from the blind
    law (Definition 3, rate 0) are rejected against a bucket ledger's law."""
    iface = _iface("blind")
    res = sims.simulate_makeroom(N_SMALL, KAPPA_SMALL, iface, trials=20_000, rng=1)
    assert _chi2_ok(np.array(res.z_counts), sims.exact_z_pmf(iface))
    wrong = sims.exact_z_pmf(_iface("buckets"))
    assert not _chi2_ok(np.array(res.z_counts), wrong)
