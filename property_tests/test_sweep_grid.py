"""Canonical grid order and per-cell seeds: the same set of cells gets the same
indices and seeds however the config is written, so results do not depend on
listing order (issue "Sweeps that scale"; DESIGN rule 2 on SeedSequence.spawn;
cells are Proposition 1 recovery runs)."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from vistalab._sweep import cell_seed, parse_config

BUDGETS = [8, 16, 32, 64, 128]
STRATS = ["keep-blocks", "keep-bits", "random-subset"]


def _doc(budgets, strats, costs, block_order):
    blocks = [{"strategy": strats}, {"strategy": "recover", "handle_cost": costs}]
    if block_order:
        blocks.reverse()
    return {"experiment": "recovery", "seed": 1,
            "params": {"N": 8, "k": 4, "trials": 10, "budget": budgets}, "grid": blocks}


@given(
    budgets=st.permutations(BUDGETS),
    strats=st.permutations(STRATS),
    costs=st.permutations([0.5, 1.0, 3.0]),
    flip=st.booleans(),
)
def test_canonical_order_ignores_how_the_config_lists_cells(budgets, strats, costs, flip):
    """Permuting list values and [[grid]] blocks of a Proposition 1 sweep
    yields the same cells with the same indices, keys and digest."""
    ref = parse_config(_doc(BUDGETS, STRATS, [0.5, 1.0, 3.0], False))
    got = parse_config(_doc(list(budgets), list(strats), list(costs), flip))
    assert [(c.index, dict(c.params), c.key) for c in got.cells] == \
        [(c.index, dict(c.params), c.key) for c in ref.cells]
    assert got.digest == ref.digest


def test_canonical_order_is_sorted_by_schema_order():
    """Rows come sorted by (N, k, budget, strategy, handle_cost, trials), absent
    values first (Proposition 1 grid)."""
    cfg = parse_config(_doc(BUDGETS, STRATS, [0.5, 1.0, 3.0], False))
    keys = [tuple((v is not None, v) for v in c.params.values()) for c in cfg.cells]
    assert keys == sorted(keys)
    assert len(set(keys)) == len(keys)


def test_digest_changes_with_any_cell():
    """Changing one value changes the sweep's identity, so a resume refuses it
    (Proposition 1 grid)."""
    a = parse_config(_doc(BUDGETS, STRATS, [0.5], False))
    b = parse_config(_doc(BUDGETS[:-1] + [129], STRATS, [0.5], False))
    c = parse_config({**_doc(BUDGETS, STRATS, [0.5], False), "seed": 99})
    assert a.digest != b.digest
    assert a.digest == c.digest  # the seed is checked separately


@given(st.integers(0, 2**64), st.integers(1, 40), st.data())
def test_cell_seed_equals_spawned_child(entropy, n, data):
    """Cell i draws from SeedSequence(seed).spawn(n)[i] whatever n is (DESIGN rule 2)."""
    i = data.draw(st.integers(0, n - 1))
    child = np.random.SeedSequence(entropy).spawn(n)[i]
    mine = cell_seed(entropy, i)
    assert mine.entropy == child.entropy and mine.spawn_key == child.spawn_key
    assert np.array_equal(mine.generate_state(4), child.generate_state(4))


def test_cell_seeds_differ_between_cells():
    """Distinct cells get independent streams (no shared seed across a grid)."""
    states = {tuple(cell_seed(7, i).generate_state(2)) for i in range(200)}
    assert len(states) == 200
