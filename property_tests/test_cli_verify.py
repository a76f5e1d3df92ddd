"""``vista-lab verify``: the proof-step certificates of Appendices B-D from the
command line: table + summary, --json, --only, exit codes,
and the tightness findings."""

from __future__ import annotations

import dataclasses
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
    # every step carries its generality and the counts add up.
    assert sum(doc["generality"].values()) == len(doc["steps"])
    for g in theory.PROOF_GENERALITIES:
        assert doc["generality"][g] == sum(r["generality"] == g for r in doc["steps"])
    assert {c["result"] for c in doc["chains"]} >= set(_registry.MAIN_RESULTS)
    assert all(c["status"] == "closed" for c in doc["chains"])


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
    assert err.startswith("vista-lab: error: `only` must match a proof step, claim or method, "
                          "or a Coq result or theorem")
    assert "or Coq results" in err and "engine" in err
    assert err.count("\n") == 1


def test_only_naming_coq_results_shows_those_rows(capsys):
    """--only engine (no proof step has that name) lists the engine model's Coq
    theorems alone; a theorem name or glob works too."""
    from vistalab.theory._proofs import _formal

    assert main(["verify", "--json", "--only", "engine"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["steps"] == []
    assert [r["theorem"] for r in doc["formal"]] == [m.theorem for m in _formal.ENGINE_THEOREMS]
    assert all(r["status"] == "proved" for r in doc["formal"])
    assert main(["verify", "--json", "--only", "workspace_b*"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["theorem"] for r in doc["formal"]] == ["workspace_budget"]


def test_list_mode_runs_nothing(capsys):
    """--list prints the registry (claim, step, method, domain) without certifying."""
    status = main(["verify", "--list", "--json", "--only", "lp-shannon"])
    doc = json.loads(capsys.readouterr().out)
    assert status == 0
    assert doc["count"] == len(doc["steps"]) > 0
    assert {r["method"] for r in doc["steps"]} == {"lp-shannon"}
    assert "status" not in doc["steps"][0]


def _fake_report(*, chain_ok: bool) -> theory.VerificationReport:
    certs = (
        _registry.StepCertificate("thm1.E", "a", "lp-shannon", "d", "s", "r", "pass", "ok", 0.0,
                                  "all", ("thm1.E:b",), ("thm1.E",)),
        _registry.StepCertificate("thm1.E", "b", "enumeration", "n <= 3", "s", "r", "pass", "ok",
                                  0.0, "finite"),
        _registry.StepCertificate("thm1.E", "c", "hypothesis", "random", "s", "r", "pass", "ok",
                                  0.0, "sampled"),
    )
    if not chain_ok:
        certs = (dataclasses.replace(certs[0], premises=("thm1.E:gone",)), *certs[1:])
    chains = theory.check_chains(certs, ("thm1.E",))
    return theory.VerificationReport(certs, 3, 0, 0.0, None, chains)


def test_generality_counts_and_wording(monkeypatch, capsys):
    """--json counts each generality (they add up to the
    steps); the table says PROVED only for "all" and CHECKED/SAMPLED otherwise."""
    monkeypatch.setattr(theory, "certify_all", lambda only=None: _fake_report(chain_ok=True))
    monkeypatch.setattr(theory, "tightness_report", lambda: None)
    assert main(["verify", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["generality"] == {"all": 1, "finite": 1, "sampled": 1}
    assert sum(doc["generality"].values()) == len(doc["steps"])
    assert [r["generality"] for r in doc["steps"]] == ["all", "finite", "sampled"]
    # The sampled step c is not a premise of the conclusion a: the chain is finite.
    assert doc["chains"][0]["status"] == "closed" and doc["chains"][0]["generality"] == "finite"
    assert main(["verify"]) == 0
    out = capsys.readouterr().out
    assert "PROVED" in out and "CHECKED" in out and "SAMPLED" in out
    assert "1 proved for all parameters, 1 checked on a finite domain, 1 sampled" in out


def test_broken_chain_fails_verify(monkeypatch, capsys):
    """a chain with a missing premise makes verify exit 1
    and print a FAILED chain line, although every step passed."""
    monkeypatch.setattr(theory, "certify_all", lambda only=None: _fake_report(chain_ok=False))
    monkeypatch.setattr(theory, "tightness_report", lambda: None)
    assert main(["verify"]) == 1
    out = capsys.readouterr().out
    assert "FAILED chain of thm1.E: thm1.E:a names premise thm1.E:gone" in out
    assert main(["verify", "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["failed"] == 0 and doc["chains"][0]["status"] == "broken"


def _fake_formal(status_of_batch: str, *, prop2_scope: str = "finite-channel"):
    from vistalab.theory._proofs import _formal

    rows = tuple(
        _formal.FormalResult(m.result, m.theorem, "Statements.v", m.statement, (),
                             status_of_batch if m.theorem == "theorem1_batch" else "proved",
                             prop2_scope if m.result.startswith("prop2") else m.scope)
        for m in _formal.MAIN_THEOREMS
    )
    return _formal.FormalReport(rows, "fake", "coqc", None, 0.0)


def test_finite_chain_is_proved_in_coq_only_when_coq_proves_it(monkeypatch, capsys):
    """App. D (E): a Python chain whose weakest link is finite reads "proved in
    Coq (...); checked in Python: ... on <domain>" when the Coq theorems covering
    the result are proved, and "not a proof" when one of them failed."""
    from vistalab.theory._proofs import _formal

    monkeypatch.setattr(theory, "certify_all", lambda only=None: _fake_report(chain_ok=True))
    monkeypatch.setattr(theory, "tightness_report", lambda: None)
    monkeypatch.setattr(_formal, "check_formal", lambda: _fake_formal("proved"))
    assert main(["verify", "--json"]) == 0
    (chain,) = json.loads(capsys.readouterr().out)["chains"]
    assert chain["coq"] == list(_formal.COQ_COVERAGE["thm1.E"])
    assert chain["verdict"] == (
        f"proved in Coq ({', '.join(_formal.COQ_COVERAGE['thm1.E'])}); "
        "checked in Python: thm1.E:b on n <= 3")
    monkeypatch.setattr(_formal, "check_formal", lambda: _fake_formal("failed"))
    assert main(["verify", "--json"]) == 1
    (chain,) = json.loads(capsys.readouterr().out)["chains"]
    assert chain["verdict"].startswith("checked in Python: thm1.E:b on n <= 3 (not a proof")


def test_weaker_forms_of_proposition2_say_so_in_the_status_column(monkeypatch, capsys):
    """App. C: a Proposition 2 row proved only in a weaker form (here every prop2 row
    is given the finite-channel scope) reads "PROVED (finite-channel form only)",
    never plain PROVED, and the JSON rows carry the scope; the same rows with the
    paper's scope read PROVED."""
    from vistalab.theory._proofs import _formal

    monkeypatch.setenv("COLUMNS", "400")  # one table row per line
    monkeypatch.setattr(theory, "certify_all", lambda only=None: _fake_report(chain_ok=True))
    monkeypatch.setattr(theory, "tightness_report", lambda: None)
    monkeypatch.setattr(_formal, "check_formal", lambda: _fake_formal("proved"))
    assert main(["verify"]) == 0
    out = capsys.readouterr().out
    assert out.count("PROVED (finite-channel form only)") >= 4  # 4 rows of prop2 / prop2-tight
    assert main(["verify", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["formal"]
    scopes = {r["theorem"]: r["scope"] for r in rows}
    assert scopes["proposition2_content"] == "finite-channel"
    assert scopes["theorem1_tradeoff"] == "paper"
    assert {m.scope for m in _formal.MAIN_THEOREMS} <= set(_formal.SCOPES)
    monkeypatch.setattr(_formal, "check_formal", lambda: _fake_formal("proved",
                                                                       prop2_scope="paper"))
    assert main(["verify"]) == 0
    assert "finite-channel form only" not in capsys.readouterr().out
