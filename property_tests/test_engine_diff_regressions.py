"""Sequences on which the differential check once reported a divergence that was
the check's own mistake, not the engine's (found by
``benchmarks/bench_engine_differential.py`` at scale). Each is replayed against the
real engine and the Coq model: it must be compared whole and agree, so a driver
or comparison that regresses to the old mistake fails here.

``diff_regressions.jsonl`` holds one sequence per line, with ``why``: what
the engine did and what the check got wrong.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from vistalab.workspace import OperationSequence
from vistalab.workspace._differential import check_sequence
from vistalab.workspace._model import build_engine_model

from vistalab.conformance import request_problems

CASES = [
    json.loads(line)
    for line in (Path(__file__).parent / "diff_regressions.jsonl")
    .read_text(encoding="utf-8").splitlines()
    if line.strip()
]


@pytest.fixture(scope="module")
def model() -> str:
    """The model's executable, built from the Coq sources (cached)."""
    return str(build_engine_model())


@pytest.mark.parametrize("case", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_the_real_engine_agrees_with_the_model_whole(case, model):
    seq = OperationSequence(case["config"], case["ops"])
    outcome: dict = {}
    finding, seen = check_sequence(seq, None, model, request_problems, outcome=outcome)
    assert finding is None, f"{case['why']}: {finding}"
    assert seen and outcome["compared"] == "compared_whole"


@pytest.mark.parametrize("case", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_the_run_time_check_agrees_too(case, model):
    """``Workspace(check_model=...)`` observes the engine the same way: the same
    sequence runs under it without a disagreement."""
    from vistalab.workspace import Workspace
    from vistalab.workspace._diff_drive import run_sequence

    seq = OperationSequence(case["config"], case["ops"])
    run_sequence(seq, lambda budget, **cfg: Workspace(budget, check_model=model, **cfg))
