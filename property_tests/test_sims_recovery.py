"""Recovery task T_{N,k} (Proposition 1, Appendix B): simulated strategies
against their closed forms and the bound B/(Nk) + 1/k, VISTA's recovering
method against its feasibility condition, and the simulator's checks shown
to fail on broken strategies."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from vistalab.sims._recovery_bits import _random_blocks

from vistalab import sims, theory

NON_RECOVERING = [s for s in sorted(sims.STRATEGIES) if not sims.STRATEGIES[s]().recovering]


def _within(res: sims.RecoveryResult, p: float, level: float = 1e-4) -> bool:
    ci = stats.binomtest(res.successes, res.trials).proportion_ci(confidence_level=1 - level,
                                                                  method="exact")
    return ci.low <= p <= ci.high


@pytest.mark.parametrize("name", NON_RECOVERING)
@pytest.mark.parametrize("N,k,budget", [
    (10, 1, 4), (10, 2, 7), (6, 3, 10), (16, 7, 50), (32, 64, 1000), (4, 4096, 9000),
    (3, 4095, 5000),
])
def test_non_recovering_success_matches_closed_form(name, N, k, budget):
    """Proposition 1: each lossy strategy's simulated success agrees with its
    closed form (exact binomial interval, level 1 - 1e-4) and never exceeds
    B/(Nk) + 1/k; k runs from 1 bit to 4096 bits (packed)."""
    res = sims.simulate_recovery(N, k, budget, name, trials=4000, rng=N * k + budget)
    assert _within(res, res.exact_success)
    assert res.exact_success <= min(1.0, res.bound)
    assert res.consistent_with_bound is True
    assert res.entropy_bits <= budget


@pytest.mark.parametrize("name", NON_RECOVERING)
def test_zero_budget_means_guessing(name):
    """Proposition 1 at B = 0: H(R) = 0, so the guess is independent of the
    block and succeeds with probability 2^-k."""
    for k in (1, 2, 3):
        res = sims.simulate_recovery(5, k, 0, name, trials=20_000, rng=k)
        assert res.exact_success == 2.0**-k and res.entropy_bits == 0
        assert _within(res, 2.0**-k)


@pytest.mark.parametrize("name", ["keep-blocks", "keep-bits"])
def test_full_budget_means_exact_recall(name):
    """Proposition 1 with B >= Nk: the whole history fits and recall is exact
    (the bound is then >= 1 and says nothing)."""
    res = sims.simulate_recovery(7, 13, 7 * 13, name, trials=500, rng=1)
    assert res.success == 1.0 and res.bound >= 1.0


@settings(max_examples=25)
@given(N=st.integers(1, 40), k=st.integers(1, 200), frac=st.floats(0, 1.2))
def test_declared_entropy_within_budget_and_exact_below_bound(N, k, frac):
    """Proposition 1: every registered lossy strategy declares H(R) <= B and
    its closed-form success never exceeds min(1, B/(Nk) + 1/k)."""
    budget = math.floor(frac * N * k)
    bound = theory.recovery_success_bound(N, k, budget)
    for name in NON_RECOVERING:
        plan = sims.make_strategy(name).plan(N, k, budget, theory.HandleCostModel())
        assert plan.entropy_bits <= budget + 1e-9
        assert plan.exact_success <= min(1.0, bound) + 1e-12


def test_recover_succeeds_iff_everything_fits():
    """Proposition 1, achievability: VISTA succeeds with probability 1 exactly
    when instruction + N handles (c0 log2 N bits each) + one block fit in B."""
    N, k = 64, 500
    cost = theory.HandleCostModel(c0=1.5, instruction=100.0)
    need = theory.recovery_feasibility(N, k, 0, cost=cost).required
    fits = sims.simulate_recovery(N, k, need, "recover", trials=300, rng=1, handle_cost=cost)
    short = sims.simulate_recovery(N, k, need - 1, "recover", trials=300, rng=1,
                                   handle_cost=cost)
    assert fits.feasible and fits.success == 1.0 and fits.exact_success == 1.0
    assert not short.feasible and short.success == 0.0 and short.exact_success == 0.0
    assert fits.consistent_with_bound is None
    assert fits.handle_cost == {"c0": 1.5, "instruction": 100.0}
    c0 = sims.simulate_recovery(N, k, 6 * N + k, "recover", trials=10, rng=1, handle_cost=1.0)
    assert c0.feasible and c0.details["handle_bits"] == pytest.approx(6.0)


@pytest.mark.parametrize("N", [64, 256, 1024])
def test_asymptotic_separation(N):
    """Proposition 1, asymptotic separation: with k = ceil(sqrt N) and
    B = c N log2 N (c = 2 > c0 = 1) VISTA stays at 1 while every lossy
    strategy stays below B/(Nk) + 1/k, which shrinks with N."""
    k = math.ceil(math.sqrt(N))
    budget = 2 * N * math.log2(N)
    vista = sims.simulate_recovery(N, k, budget, "recover", trials=200, rng=N)
    assert vista.success == 1.0
    for name in NON_RECOVERING:
        res = sims.simulate_recovery(N, k, budget, name, trials=2000, rng=N)
        assert res.success_ci[0] <= min(1.0, res.bound)
        assert _within(res, res.exact_success)


def test_random_blocks_are_packed_uniform_bits():
    """Appendix B setting: each block is k independent uniform bits; packed
    bytes keep the unused trailing bits zero."""
    gen = np.random.default_rng(0)
    k = 13
    blocks = _random_blocks(gen, (5000, 3), k)
    assert blocks.shape == (5000, 3, 2) and blocks.dtype == np.uint8
    assert np.all(blocks[..., -1] & 0b111 == 0)
    bits = np.unpackbits(blocks, axis=-1, count=k).astype(float)
    freq = bits.mean(axis=(0, 1))
    se = math.sqrt(0.25 / (5000 * 3))
    assert np.all(np.abs(freq - 0.5) <= 4 * se)


def test_reproducible_and_seed_recorded():
    """Issue section 4: same seed, same result; the seed entropy is recorded."""
    a = sims.simulate_recovery(12, 9, 40, "random-subset", trials=5000, rng=3)
    b = sims.simulate_recovery(12, 9, 40, "random-subset", trials=5000, rng=3, workers=2)
    others = {sims.simulate_recovery(12, 9, 40, "random-subset", trials=5000,
                                     rng=seed).successes for seed in range(4, 9)}
    assert a.successes == b.successes and len(others) > 1
    assert a.seed_entropy == 3 and a.to_dict()["seed"] == 3
    doc = a.to_dict()
    for key in ("success", "success_ci", "bound", "exact_success", "trials", "seed"):
        assert key in doc
    assert isinstance(doc["success_ci"], list) and len(doc["success_ci"]) == 2


# ---------------------------------------------------------------------------
# Checks shown to fail on broken strategies
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Cheat:
    """Keeps every block but declares H(R) = B and smuggles the blocks out
    through a closure (a broken non-recovering strategy)."""

    name: ClassVar[str] = "cheat"
    recovering: ClassVar[bool] = False

    def plan(self, N, k, budget, cost):
        return sims.StrategyPlan(entropy_bits=float(budget), exact_success=None)

    def encode(self, blocks, plan, rng, archive):
        _Cheat.stash = blocks.copy()
        return np.zeros((blocks.shape[0], 0), dtype=np.uint8)

    def decode(self, state, index, plan, rng, archive):
        return _Cheat.stash[np.arange(index.size), index]


def test_bound_check_fails_for_a_strategy_beating_proposition_1():
    """consistent_with_bound is a real check: a strategy that smuggles the
    history past the budget succeeds every time and is flagged."""
    res = sims.simulate_recovery(20, 8, 16, _Cheat(), trials=2000, rng=0)
    assert res.success == 1.0 > res.bound
    assert res.consistent_with_bound is False


def test_state_larger_than_budget_is_rejected():
    """H(R) <= B is enforced physically: the packed state may use at most
    floor(B) bits."""

    @dataclass(frozen=True)
    class Fat(sims.KeepBlocks):
        name: ClassVar[str] = "fat"

        def plan(self, N, k, budget, cost):
            return sims.StrategyPlan(entropy_bits=float(budget), exact_success=None,
                                     details={"kept_blocks": N, "k": k})

    with pytest.raises(theory.DomainError, match=r"within floor\(budget\)=20 bits"):
        sims.simulate_recovery(10, 8, 20, Fat(), trials=10, rng=0)


def test_declared_entropy_above_budget_is_rejected():
    """Proposition 1's premise H(R) <= B is checked on the declaration too."""

    @dataclass(frozen=True)
    class Greedy(sims.KeepBlocks):
        name: ClassVar[str] = "greedy"

        def plan(self, N, k, budget, cost):
            return sims.StrategyPlan(entropy_bits=budget + 1.0, exact_success=None,
                                     details={"kept_blocks": 0, "k": k})

    with pytest.raises(theory.DomainError, match=r"must declare H\(R\) <= budget"):
        sims.simulate_recovery(10, 8, 20, Greedy(), trials=10, rng=0)


def test_bit_for_bit_comparison_catches_a_corrupted_recovery():
    """The recovered block must equal the original bit for bit: a recovering
    strategy whose read-back flips the last used bit never succeeds."""

    @dataclass(frozen=True)
    class Corrupt(sims.Recover):
        name: ClassVar[str] = "corrupt"

        def decode(self, state, index, plan, rng, archive):
            out = super().decode(state, index, plan, rng, archive).copy()
            out[:, -1] ^= np.uint8(0b00001000)  # bit 13 of a 13-bit block
            return out

    res = sims.simulate_recovery(16, 13, 10_000, Corrupt(), trials=500, rng=0)
    assert res.feasible and res.exact_success == 1.0
    assert res.success == 0.0


@pytest.mark.parametrize("kwargs,match", [
    (dict(N=0, k=8, budget=10, strategy="keep-bits"), r"`N` must be an integer >= 1"),
    (dict(N=4, k=0, budget=10, strategy="keep-bits"), r"`k` must be an integer >= 1"),
    (dict(N=4, k=8, budget=-1, strategy="keep-bits"), r"`budget` must be a finite real"),
    (dict(N=4, k=8, budget=10, strategy="keep-bits", trials=0), r"`trials` must be an integer"),
    (dict(N=4, k=8, budget=10, strategy="recover", handle_cost=-1.0),
     r"`handle_cost` must be a finite real number"),
    (dict(N=4, k=2**29, budget=10, strategy="keep-bits"), r"must keep N\*k <= 2\*\*30"),
])
def test_bad_input_is_one_clear_error(kwargs, match):
    """DESIGN.md rule 6: errors name the parameter, the value, the rule and the fix."""
    args = dict(kwargs)
    args.setdefault("trials", 10)
    with pytest.raises(theory.DomainError, match=match):
        sims.simulate_recovery(**args)


def test_unknown_strategy_suggests_a_name():
    """DESIGN.md rule 6: 'Unknown strategy ... Did you mean ...?'."""
    with pytest.raises(theory.UnknownNameError, match=r"Did you mean 'recover'\?"):
        sims.simulate_recovery(4, 8, 10, "recovr", trials=10)


def _bits_reference(state: np.ndarray, start: np.ndarray, nbits: int) -> np.ndarray:
    """Bit-level reference: unpack every row, slice, pack."""
    bits = np.unpackbits(state, axis=1)
    rows = [bits[t, s:s + nbits] for t, s in enumerate(start)]
    return np.packbits(np.array(rows, dtype=np.uint8).reshape(len(rows), nbits), axis=1)


@given(st.integers(1, 70), st.integers(1, 300), st.integers(0, 2**32 - 1))
@settings(max_examples=60, deadline=None)
def test_byte_shift_bit_helpers_match_unpacked_bits(nbits, slack, seed):
    """Benchmark audit item 2: the byte-shift helpers behind the packed states
    (read ``nbits`` bits at any offset, OR a packed field in at any offset)
    give exactly the bytes of unpacking to one byte per bit and packing back."""
    from vistalab.sims._recovery_bits import _or_bits, _pack_index, _read_bits
    gen = np.random.default_rng(seed)
    total = nbits + slack
    state = _random_blocks(gen, (5,), total)
    start = gen.integers(0, total - nbits + 1, 5)
    assert np.array_equal(_read_bits(state, start, nbits), _bits_reference(state, start, nbits))
    field = _random_blocks(gen, (5,), nbits)
    off = int(gen.integers(0, total - nbits + 1))
    out = np.zeros((5, (total + 7) // 8), dtype=np.uint8)
    _or_bits(out, field, off)
    ref = np.unpackbits(out, axis=1)
    ref[:] = 0
    ref[:, off:off + nbits] = np.unpackbits(field, axis=1, count=nbits)
    assert np.array_equal(out, np.packbits(ref, axis=1))
    h = min(nbits, 64)
    vals = gen.integers(0, 2**h, 5, dtype=np.uint64) if h < 64 else gen.integers(
        0, 2**63, 5, dtype=np.uint64)
    want = np.packbits(((vals[:, None] >> np.arange(h - 1, -1, -1, dtype=np.uint64)) & 1)
                       .astype(np.uint8), axis=1)
    assert np.array_equal(_pack_index(vals, h), want)


@pytest.mark.parametrize("N,k,budget", [(64, 4096, 65536), (12, 9, 40), (200, 3, 300),
                                        (5, 1, 8)])
def test_random_subset_state_is_the_bit_packing_of_index_then_block(N, k, budget):
    """Benchmark audit item 2: RandomSubset's byte-shift encoder writes exactly
    the state of packing, per kept slot, ceil(log2 N) index bits then the k
    block bits, and the decoder reads every kept block back bit for bit."""
    strat = sims.make_strategy("random-subset")
    plan = strat.plan(N, k, budget, theory.HandleCostModel())
    s, h = int(plan.details["kept_blocks"]), int(plan.details["index_bits"])
    blocks = _random_blocks(np.random.default_rng(N), (40, N), k)
    state = strat.encode(blocks.copy(), plan, np.random.default_rng(1), None)
    chosen = np.argsort(np.random.default_rng(1).random((40, N)), axis=1)[:, :s]
    idx_bits = ((chosen[..., None] >> np.arange(h - 1, -1, -1)) & 1).astype(np.uint8)
    picked = blocks[np.arange(40)[:, None], chosen]
    fields = np.concatenate([idx_bits, np.unpackbits(picked, axis=2, count=k)], axis=2)
    assert np.array_equal(state, np.packbits(fields.reshape(40, -1), axis=1))
    got = strat.decode(state, chosen[:, 0], plan, np.random.default_rng(2), None)
    assert np.array_equal(got, picked[:, 0])
