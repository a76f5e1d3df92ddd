"""``vista-lab verify``: the proof-step certificates of Appendices B-D from the
command line (issue 2, section 6): table + summary, --json, --only, exit codes,
and the tightness findings."""

from __future__ import annotations

import json

import pytest
from vistalab.theory._proofs import _registry
from vistalab.theory._proofs._registry import Outcome, Step

from vistalab import theory
from vistalab.cli import main


@pytest.mark.slow
def test_full_json_run_certifies_every_step(capsys):
    """All of Prop. 1, Prop. 2 (+ tight), Lemma 1 and Theorem 1 A-E: at least 35
    named steps pass, each JSON step has claim/step/method/status, exit 0."""
    status = main(["verify", "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert status == 0
    assert doc["failed"] == 0
    assert doc["passed"] == len(doc["steps"]) >= 35
    for row in doc["steps"]:
        assert {"claim", "step", "method", "status", "domain", "detail"} <= set(row)
        assert row["status"] == "pass"
        assert row["method"] in theory.PROOF_METHODS
    assert {row["claim"] for row in doc["steps"]} == set(theory.PROOF_CLAIMS)
    assert doc["tightness"] is not None and doc["tightness"]["holds"] is True


def test_only_filters_and_skips_tightness(capsys):
    """--only selects steps (here Theorem 1 part E) and leaves out the tightness."""
    status = main(["verify", "--json", "--only", "thm1.E"])
    doc = json.loads(capsys.readouterr().out)
    assert status == 0
    assert doc["steps"] and {r["claim"] for r in doc["steps"]} == {"thm1.E"}
    assert doc["passed"] == len(doc["steps"]) and doc["failed"] == 0
    assert doc["tightness"] is None and doc["only"] == "thm1.E"


def test_human_output_table_summary_and_tightness(monkeypatch, capsys):
    """Human output: table columns (claim, step, method, domain, status), the
    summary line, and the tightness findings at the end (Theorem 1 / Prop. 2)."""
    monkeypatch.setenv("COLUMNS", "200")  # tables follow the terminal's width
    real = theory.certify_all
    monkeypatch.setattr(theory, "certify_all", lambda only=None: real("thm1.C"))
    status = main(["verify"])
    out = capsys.readouterr().out
    assert status == 0
    for col in ("claim", "step", "method", "domain", "status"):
        assert col in out
    assert "threshold_equivalence" in out
    n = len(theory.list_steps("thm1.C"))
    assert f"{n} passed, 0 failed" in out
    tail = out[out.index("Tightness findings") :]
    assert "content rows" in tail and "holds = True" in tail
    # Brackets in domains survive rich rendering (markup is escaped).
    monkeypatch.setattr(theory, "certify_all", real)
    main(["verify", "--only", "fano_chain_skeleton"])
    assert "1[g(R) != X]" in capsys.readouterr().out


def _failing_step(monkeypatch):
    step = Step(
        "thm1.E", "deliberately_broken", "enumeration", "nowhere", "0 > 1", "test",
        lambda: Outcome(False, "0 > 1 is false"),
    )
    monkeypatch.setitem(_registry._REGISTRY, ("thm1.E", "deliberately_broken"), step)


def test_failed_step_gives_exit_1_and_is_reported(monkeypatch, capsys):
    """A failing step makes verify exit 1 and print a FAILED line with its detail."""
    _failing_step(monkeypatch)
    status = main(["verify", "--only", "deliberately_broken"])
    out = capsys.readouterr().out
    assert status == 1
    assert "FAILED thm1.E:deliberately_broken [enumeration]: 0 > 1 is false" in out
    assert "0 passed, 1 failed" in out


def test_failed_step_in_json(monkeypatch, capsys):
    """--json reports status 'fail' and the failed count, still exit 1."""
    _failing_step(monkeypatch)
    status = main(["verify", "--json", "--only", "thm1.E"])
    doc = json.loads(capsys.readouterr().out)
    assert status == 1
    assert doc["failed"] == 1
    bad = [r for r in doc["steps"] if r["status"] == "fail"]
    assert [r["step"] for r in bad] == ["deliberately_broken"]


def test_only_matching_nothing_exits_2_one_line(capsys):
    """A pattern that selects no step is a usage error: one stderr line, exit 2."""
    status = main(["verify", "--only", "no_such_thing"])
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("vista-lab: error: `only` must match at least one claim")
    assert err.count("\n") == 1


def test_list_mode_runs_nothing(capsys):
    """--list prints the registry (claim, step, method, domain) without certifying."""
    status = main(["verify", "--list", "--json", "--only", "lp-shannon"])
    doc = json.loads(capsys.readouterr().out)
    assert status == 0
    assert doc["count"] == len(doc["steps"]) > 0
    assert {r["method"] for r in doc["steps"]} == {"lp-shannon"}
    assert "status" not in doc["steps"][0]
