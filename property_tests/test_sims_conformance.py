"""One conformance suite run over every registered interface, policy and
strategy of sims/ (DESIGN.md rule 4): registering a new one in
``sims.INTERFACES``, ``sims.POLICIES`` or ``sims.STRATEGIES`` (with
``EXAMPLE_PARAMS``) gets these tests for free. The suite is the public kit's
(``vistalab.testing.check_interface`` / ``check_policy`` / ``check_strategy``),
the same one users run on their own implementations.

Paper: Definitions 2-3 and equation (Z-search) for the make-room instance,
Theorem 1 for the bounds; Proposition 1 for the recovery task.
"""

from __future__ import annotations

import numpy as np
import pytest

from vistalab import sims
from vistalab.testing import (
    check_interface,
    check_policy,
    check_strategy,
    chi2_fits,
    reference_interfaces,
)

N_SMALL, KAPPA_SMALL = 13, 3


def _iface(name: str, n: int = N_SMALL, kappa: int = KAPPA_SMALL) -> sims.Interface:
    params = getattr(sims.INTERFACES[name], "EXAMPLE_PARAMS", {})
    return sims.make_interface(name, n=n, kappa=kappa, **params)


IFACES = sorted(sims.INTERFACES)
POLICIES = sorted(sims.POLICIES)
STRATEGIES = sorted(sims.STRATEGIES)


@pytest.mark.parametrize("name", IFACES)
def test_interface_conforms(name):
    """Definition 3 and eq. (Z-search) for every registered interface, with every
    registered policy: members and rate in [0, log2 n]; the posterior never excludes the
    truth; fast sampler independent of chunking; exact law sums to 1 and gives the exact
    mean (eq. tailsum); literal trials follow the exact law (chi-square, level 1e-4),
    agree with the exact mean and respect Theorem 1; the O(1) fast path draws from the
    same law as the literal process; results do not depend on chunk size or workers."""
    iface = _iface(name)
    assert iface.name == name and (iface.n, iface.kappa) == (N_SMALL, KAPPA_SMALL)
    assert check_interface(iface) == []


@pytest.mark.parametrize("name", POLICIES)
def test_policy_orders_are_permutations(name):
    """Definition 3: the agent archives in a (Y, U)-measurable order of all n blocks, on
    every registered interface (the joint simulations run in test_interface_conforms)."""
    pol = sims.make_policy(name)
    assert pol.name == name
    assert check_policy(pol, interfaces=reference_interfaces(), simulate=False) == []


@pytest.mark.parametrize("name", STRATEGIES)
def test_strategy_conforms(name):
    """Proposition 1: no non-recovering strategy beats B/(Nk) + 1/k; each strategy's
    success agrees with its closed form (exact binomial interval at level 1 - 1e-4); the
    recovering one succeeds iff it fits the budget; same seed, same result whatever the
    worker count."""
    strat = sims.make_strategy(name, **getattr(sims.STRATEGIES[name], "EXAMPLE_PARAMS", {}))
    assert strat.name == name
    assert check_strategy(strat) == []


def test_results_record_the_seed():
    """Section 4 of the issue: the seed entropy is recorded; another seed gives other draws."""
    iface = _iface("gaussian")
    a = sims.simulate_makeroom(N_SMALL, KAPPA_SMALL, iface, trials=5000, rng=2024,
                               rate_trials=50)
    b = sims.simulate_makeroom(N_SMALL, KAPPA_SMALL, iface, trials=5000, rng=2025,
                               rate_trials=50)
    assert a.seed_entropy == 2024 and a.z_counts != b.z_counts


def test_goodness_of_fit_helper_rejects_a_wrong_law():
    """The chi-square helper used by the kit can fail: counts drawn from the blind
    law (Definition 3, rate 0) are rejected against a bucket ledger's law."""
    iface = _iface("blind")
    res = sims.simulate_makeroom(N_SMALL, KAPPA_SMALL, iface, trials=20_000, rng=1)
    assert chi2_fits(np.array(res.z_counts), sims.exact_z_pmf(iface))
    wrong = sims.exact_z_pmf(_iface("buckets"))
    assert not chi2_fits(np.array(res.z_counts), wrong)
