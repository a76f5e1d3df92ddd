"""Differential random testing of the workspace engine against its executable
Coq model (paper, Methodology: "Workspace invariants", "Structure
preservation", "Dashboard format"; Algorithm 1's budget guard).

The engine must agree with the model on generated operation sequences and on
the shipped traces, and the test must bite: each injected engine bug
(``_engine_bugs``) is found on a short operation sequence that the real engine
passes, and (slow) the random search finds each bug by itself.
"""

from __future__ import annotations

import json
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from vistalab.examples import traces
from vistalab.workspace import (
    DifferentialReport,
    OperationSequence,
    Workspace,
    differential_test,
)
from vistalab.workspace._diff_ops import minimal_budget
from vistalab.workspace._differential import check_sequence
from vistalab.workspace._model import build_engine_model

from vistalab.cli import main
from vistalab.conformance import request_problems

from ._engine_bugs import BUGS

TRACES = Path(str(files(traces)))


@pytest.fixture(scope="module")
def model() -> str:
    """The model's executable, built from the Coq sources (cached)."""
    return str(build_engine_model())


def _seq(ops: list[dict], *, hard_limit: int | None = None) -> OperationSequence:
    budget = minimal_budget("approx", False) + 300
    cfg = {
        "budget": budget,
        "hard_limit": None if hard_limit is None else budget + hard_limit,
        "tokenizer": "approx",
        "store": "memory",
        "format": "openai",
        "protocol": False,
        "cache_prefix": False,
    }
    return OperationSequence(cfg, tuple(ops))


_SYS = {"op": "system", "text": "You are careful.", "pinned": True}
_TASK = {"op": "user", "text": "Find the refunds.", "pinned": None}


def _call(cid: str) -> dict:
    return {"op": "call", "calls": [[cid, "search", '{"q": "refunds"}']], "text": None}


#: For each injected bug, a short operation sequence that shows it.
WITNESSES: dict[str, OperationSequence] = {
    # A result sized to the guard's boundary: the broken guard admits one token too many.
    "guard_off_by_one": _seq(
        [_SYS, _TASK, _call("c1"), {"op": "result", "id": "c1", "fit": 0}], hard_limit=0
    ),
    # A second result past the hard limit makes the guard offload the first one.
    "offload_payload_not_written": _seq(
        [_SYS, _TASK, _call("c1"), {"op": "result", "id": "c1", "text": "row " * 200},
         _call("c2"), {"op": "result", "id": "c2", "fit": 8}],
        hard_limit=0,
    ),
    # Delete the newest block, register another: its ID must be new.
    "id_reused_after_delete": _seq(
        [_SYS, _TASK, {"op": "assistant", "text": "Looking."},
         {"op": "delete", "spec": "B3", "reason": "stale output", "via": "api"},
         {"op": "user", "text": "Go on.", "pinned": None}]
    ),
    # A group that takes a call and leaves its result outside.
    "result_orphaned_by_group_archive": _seq(
        [_SYS, _TASK, {"op": "assistant", "text": "Looking."}, _call("c1"),
         {"op": "result", "id": "c1", "text": "12 rows"},
         {"op": "archive", "spec": "B3-B4", "replacement": "", "via": "tool"}]
    ),
    # Any visible block's ledger row.
    "dashboard_row_other_count": _seq([_SYS, _TASK, {"op": "assistant", "text": "Looking."}]),
}


def test_witnesses_cover_every_bug():
    assert set(WITNESSES) == set(BUGS)


@pytest.mark.parametrize("name", sorted(BUGS))
def test_injected_bug_is_detected_and_real_engine_passes(name, model):
    """Each injected bug diverges on its witness sequence (from the model or from
    the independent recount), and the real engine passes the same sequence with
    the model compared line by line."""
    bug, _invariant = BUGS[name]
    seq = WITNESSES[name]
    broken, _ = check_sequence(seq, bug, model)
    assert broken is not None, f"{name} went unnoticed"
    real, modelled = check_sequence(seq, Workspace, model)
    assert real is None, real
    assert modelled


@pytest.mark.parametrize("name", sorted(BUGS))
def test_the_model_alone_detects_each_bug(name, model):
    """The model comparison bites on its own: with the recount's findings set
    aside, the model's observation still differs from the broken engine's (and
    not from the real engine's)."""
    from vistalab.workspace._diff_drive import run_sequence
    from vistalab.workspace._diff_model import compare_observations, run_model

    for engine, differs in ((BUGS[name][0], True), (Workspace, False)):
        run = run_sequence(WITNESSES[name], engine)
        got = run_model(model, run.model_lines)
        assert len(got) == len(run.engine_lines)
        diffs = [compare_observations(e, m) for e, m in zip(run.engine_lines, got, strict=True)]
        assert any(diffs) is differs, (name, engine, [d for d in diffs if d][:1])


def test_engine_agrees_with_model_on_random_sequences_and_traces(model):
    """A bounded run (the CLI and the benchmark run more): no divergence, most
    sequences compared with the model, and the shipped traces replayed."""
    shipped = [str(TRACES / n) for n in ("ops_agent.json", "reused_call_ids.json")]
    report = differential_test(sequences=12, seed=3, traces=shipped, model=model, max_ops=20,
                               request_check=request_problems)
    assert isinstance(report, DifferentialReport)
    assert report.ok, [d.line() for d in report.divergences]
    assert report.sequences == 12 and report.modelled >= 4
    # every model rendering, as an OpenAI and as an Anthropic request, passed the
    # conformance suite's checker (two requests per observation line)
    assert report.requests_checked >= 2 * report.operations // 2
    assert report.traces == 4 and report.operations > 12
    doc = report.to_dict()
    json.dumps(doc)
    assert doc["divergences"] == [] and doc["model"] == model


def test_divergence_carries_its_shrunk_sequence(model):
    """A divergence found by the random search comes with a short reproducing
    sequence that replays to the same invariant on the broken engine."""
    bug, _ = BUGS["dashboard_row_other_count"]
    report = differential_test(sequences=5, seed=0, engine_factory=bug, model=model,
                               shrink_seconds=5)
    assert not report.ok
    d = report.divergences[0]
    assert d.invariant == "dashboard"
    assert 1 <= len(d.sequence) <= 3
    again, _ = check_sequence(d.sequence, bug, model)
    assert again is not None and again.invariant == d.invariant
    assert d.line().startswith("dashboard (")
    assert d.to_dict()["sequence"] == d.sequence.to_dict()


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(BUGS))
def test_random_search_finds_each_bug(name, model):
    """Without a witness: Hypothesis's sequences find every injected bug, and
    the reported (shrunk) sequence passes on the real engine."""
    bug, _ = BUGS[name]
    report = differential_test(sequences=300, seed=1, engine_factory=bug, model=model,
                               shrink_seconds=6)
    assert report.divergences, f"{name} not found in {report.sequences} sequences"
    seq = report.divergences[0].sequence
    assert check_sequence(seq, bug, model)[0] is not None
    assert check_sequence(seq, Workspace, model)[0] is None


# A call id reused once answered (the OpenAI API allows it): the Anthropic request
# needs distinct tool_use ids, which the model's wire ids give.
_REUSED = _seq([_SYS, _TASK, _call("c1"), {"op": "result", "id": "c1", "text": "12 rows"},
                _call("c1"), {"op": "result", "id": "c1", "text": "3 rows"}])


def _wrapped_model(tmp_path: Path, model: str, sub: str) -> str:
    """An executable that runs the real model and rewrites its output lines with
    ``sub`` (a Python expression over ``line``): a broken model."""
    import sys

    exe = tmp_path / "broken-model"
    exe.write_text(
        f"#!{sys.executable}\n"
        "import re, subprocess, sys\n"
        f"out = subprocess.run([{model!r}], input=sys.stdin.read(), capture_output=True,"
        " text=True).stdout\n"
        "for line in out.splitlines():\n"
        f"    print({sub}, flush=True)\n"
    )
    exe.chmod(0o755)
    return str(exe)


def test_conformance_checkers_accept_the_model_renderings_and_bite(model, tmp_path):
    """The model's renderings of a reused call id pass the conformance suite's
    checkers in both formats; a model whose Anthropic projection drops the wire
    renaming, or whose rendering loses a tool message, is refused."""
    checked = [0]
    assert check_sequence(_REUSED, Workspace, model, request_problems, checked)[0] is None
    from vistalab.workspace._diff_drive import run_sequence

    # an OpenAI and an Anthropic request for every observation line the model printed
    assert checked[0] == 2 * len(run_sequence(_REUSED, Workspace).model_lines)
    no_rename = _wrapped_model(tmp_path, model, r"re.sub(r'(c\d+)_\d+', r'\1', line)")
    found, _ = check_sequence(_REUSED, Workspace, no_rename, request_problems)
    assert found is not None and found.source == "model-request"
    assert "anthropic" in found.detail and "duplicate tool_use id" in found.detail
    # the engine-vs-model comparison ignores the wire fields: only the check saw it
    assert check_sequence(_REUSED, Workspace, no_rename)[0] is None
    lose_tool = _wrapped_model(tmp_path, model, r"re.sub(r'request=([^ ]*),tool:c\d+', "
                               r"r'request=\1', line)")
    found, _ = check_sequence(_REUSED, Workspace, lose_tool, request_problems)
    assert found is not None and found.invariant == "protocol" and "openai" in found.detail


def test_default_configuration_is_compared_whole(model):
    """cache_prefix=True (the engine's default) is compared line by line to the
    end, through its management renderings and guard offloads: the real engine
    passes, and an engine whose management rendering keeps one position fewer
    of the cached prefix is caught, with and without the guard offloading."""
    from vistalab.workspace._diff_drive import run_sequence

    class ShortPrefix(Workspace):
        def _prefix_cut(self, room: int) -> int:
            return max(super()._prefix_cut(room) - 1, 0)

    words = "alpha beta gamma delta order refund pending shipped log "
    ops: list[dict[str, Any]] = [
        {"op": "user", "text": "Find the refunds. " + words * 3, "pinned": False}]
    for i in range(7):
        ops.append({"op": "call", "calls": [[f"call_{i}", "search", '{"q": "x"}']],
                    "text": None})
        ops.append({"op": "result", "id": f"call_{i}", "text": words * 12 + str(i)})
        ops.append({"op": "assistant", "text": f"step {i} " + words, "pinned": False})
    cfg = {"budget": 1400, "tokenizer": "approx", "store": "memory", "format": "openai",
           "protocol": False, "cache_prefix": True}
    for hard in (1400, 2800):
        seq = OperationSequence({**cfg, "hard_limit": hard}, ops)
        run = run_sequence(seq, Workspace)
        assert not run.prefix_only
        assert any("mode=management" in e for e in run.engine_lines)
        assert check_sequence(seq, Workspace, model) == (None, True)
        found, _ = check_sequence(seq, ShortPrefix, model)
        assert found is not None  # its render, or the protocol its shorter prefix breaks
    for name in ("offload_payload_not_written", "dashboard_row_other_count"):
        seq = OperationSequence({**WITNESSES[name].config, "cache_prefix": True},
                                WITNESSES[name].ops)
        assert check_sequence(seq, Workspace, model) == (None, True)
        assert check_sequence(seq, BUGS[name][0], model)[0] is not None


def test_request_checker_judges_the_engine_requests_too(model):
    """With a request checker, the engine's own request after every operation is
    judged by it too, in the sequence's format and as OpenAI: a checker that
    refuses the second call's result catches it at that operation."""
    seq = OperationSequence({**_REUSED.config, "format": "anthropic"}, _REUSED.ops)
    assert check_sequence(seq, Workspace, model, request_problems)[0] is None
    seen: set[str] = set()

    def no_three_rows(request, protocol):
        seen.add(protocol)
        return ["shows '3 rows'"] if "3 rows" in json.dumps(request) else []

    found, _ = check_sequence(seq, Workspace, model, no_three_rows)
    assert found is not None and found.source == "recount" and found.step == 5
    assert "request refused by the request checker: shows '3 rows'" in found.detail
    assert seen == {"openai", "anthropic"}

    def breaks_on_three_rows(request, protocol):
        if "3 rows" in json.dumps(request):
            raise RuntimeError("checker bug")
        return []

    # a checker that fails on one request is the caller's error, not an engine crash
    from vistalab.workspace import WorkspaceArgumentError

    with pytest.raises(WorkspaceArgumentError, match="request_check.*RuntimeError"):
        check_sequence(seq, Workspace, model, breaks_on_three_rows)


def test_bad_arguments_are_refused():
    from vistalab.workspace import WorkspaceArgumentError

    for kw, match in (({"sequences": -1}, "sequences"), ({"seed": 1.5}, "seed"),
                      ({"engine_factory": 3}, "engine_factory"), ({"max_ops": 0}, "max_ops"),
                      ({"request_check": "strict"}, "request_check")):
        with pytest.raises(WorkspaceArgumentError, match=match):
            differential_test(**kw)


def test_cli_verify_engine(model, capsys):
    """`vista-lab verify engine`: one summary line, JSON with --json, exit 0
    when engine and model agree."""
    assert main(["verify", "engine", "--sequences", "2", "--seed", "1", "--max-ops", "8",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["sequences"] == 2 and doc["divergences"] == [] and doc["traces"] >= 1
    cfg = doc["configurations"]
    assert {"cache_prefix=False", "cache_prefix=True"} <= set(cfg)
    assert sum(cfg[k]["sequences"] for k in ("cache_prefix=False", "cache_prefix=True")) == 2
    pairs = [k for k in cfg if ",keep_pending=" in k]
    assert len(pairs) == 4 and sum(cfg[k]["sequences"] for k in pairs) == 2
    assert main(["verify", "engine", "--sequences", "1", "--seed", "2", "--max-ops", "5"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("0 divergences: 1 sequences")
    assert "  cache_prefix=False: " in out and "  cache_prefix=True: " in out


def test_kept_batch_with_a_reused_call_id_is_placed_by_position(model):
    """keep_pending: an overflow rendering that keeps the batch still waiting for
    results, whose call id an older (answered, visible but not shown) call used too:
    the kept calling message is the newest call's (B3), and engine and model agree
    (the observation once took it for B1, the first call with those ids)."""
    from vistalab.workspace._diff_ops import OperationSequence

    cfg = {"budget": 1854, "hard_limit": None, "tokenizer": "approx", "store": "memory",
           "format": "openai", "protocol": False, "cache_prefix": False, "keep_pending": True}
    ops = ({"op": "call", "calls": [["call_1", "search", '{"q": "beta"}']], "text": None},
           {"op": "result", "id": "call_1", "fit": 0},
           {"op": "call", "calls": [["call_1", "search", '{"q": "alpha"}']], "text": None})
    seq = OperationSequence(cfg, ops)
    found, modelled = check_sequence(seq, Workspace, model)
    assert modelled and found is None
