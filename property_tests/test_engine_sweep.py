"""Sweep experiments `makeroom-engine` and `recovery-engine` (registered in the
sweep registry): one entry each, same schema style as the array experiments, rows that match
the declared output columns."""

from __future__ import annotations

import numpy as np
import pytest
from vistalab.theory import DomainError

from vistalab._sweep import get_experiment
from vistalab._sweep._schema import coerce_row


@pytest.mark.parametrize(("name", "params"), [
    ("makeroom-engine", {"n": 12, "kappa": 3, "interface": "gaussian", "sigma": 1.0,
                         "buckets": None, "policy": "bayes", "tokenizer": "cl100k_base",
                         "l_tokens": None, "array_trials": 2000, "reuse": False, "trials": 20}),
    ("recovery-engine", {"N": 4, "k": 128, "budget_tokens": 2000, "strategy": "recover",
                         "tokenizer": "cl100k_base", "trials": 3}),
])
def test_engine_experiment_rows_match_their_schema(name, params):
    """Definition 'Make-room instance' / Proposition 1 through the engine as sweep cells: the
    run function's row has exactly the declared outputs, with their types, and the same
    seed gives the same row (timing is left out)."""
    exp = get_experiment(name)
    run = exp.resolve_run()
    row = run(params, np.random.SeedSequence(9))
    assert set(row) == {o.name for o in exp.outputs}
    assert coerce_row(exp, row) == coerce_row(exp, run(params, np.random.SeedSequence(9)))
    if name == "makeroom-engine":
        assert row["agrees_with_array"] and row["all_recoveries_byte_exact"]
    else:
        assert row["success"] == 1.0 and row["byte_exact_recoveries"] == 3


def test_engine_experiment_checks_reject_bad_cells():
    """Cross-parameter rules are sims' own (2 <= kappa < n; N*k cap in engine mode)."""
    with pytest.raises(DomainError, match=r"`kappa` must be an integer with 2 <= kappa < n"):
        get_experiment("makeroom-engine").check({"n": 5, "kappa": 5, "interface": "blind",
                                                 "policy": "bayes"})
    with pytest.raises(DomainError, match=r"must keep N\*k <= 2\*\*20 bits in engine mode"):
        get_experiment("recovery-engine").check({"N": 2048, "k": 1024})
