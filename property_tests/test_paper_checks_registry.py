"""The claim registry's contract: registration from another package (plugins), statuses,
crash handling, filters, reproducible seeds, and the link to theory/'s proof certificates."""

from __future__ import annotations

import sys
import textwrap
from dataclasses import dataclass

import pytest
import vistalab.paper_checks as pc
from vistalab.paper_checks import _registry
from vistalab.theory import DomainError


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    """A throw-away plugin module registering three claims; unregistered afterwards."""
    name = "vl_test_plugin_claims"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent('''
        from vistalab.paper_checks import Outcome, Unavailable, claim, register_claim

        @claim("plugin.ok", section="Engine-backed checks", where="nowhere",
               statement="a passing claim", tolerance="exact", kind="engine")
        def _ok(ctx):
            return Outcome.passed("fine", value=ctx.table("loca_dense").row(
                method_id="vista")["correct"])

        def _missing(ctx):
            raise Unavailable("needs the engine")

        register_claim("plugin.missing", _missing, section="Engine-backed checks",
                       where="nowhere", statement="needs something", tolerance="n/a")

        @claim("plugin.crash", section="Engine-backed checks", where="nowhere",
               statement="a buggy check", tolerance="n/a")
        def _crash(ctx):
            return 1 / 0
    '''))
    monkeypatch.syspath_prepend(str(tmp_path))
    pc.add_plugin(name)
    yield name
    for cid in ("plugin.ok", "plugin.missing", "plugin.crash"):
        _registry._REGISTRY.pop(cid, None)
    _registry._PLUGINS.remove(name)
    _registry._LOADED.discard(name)
    sys.modules.pop(name, None)


def test_plugin_claims_register_and_run(plugin):
    """Engine-backed checks register themselves: a plugin module listed with
    add_plugin is imported on first use and its claims run like built-in ones."""
    assert plugin in pc.plugin_modules()
    ids = {c.id for c in pc.all_claims()}
    assert {"plugin.ok", "plugin.missing", "plugin.crash"} <= ids
    report = pc.run_claims("plugin.*", certificates=False)
    status = {r.id: r for r in report.results}
    assert status["plugin.ok"].status == "pass"
    assert status["plugin.ok"].numbers["value"] == pc.load_table("loca_dense").row(
        method_id="vista")["correct"]
    assert status["plugin.missing"].status == "not_checkable"
    assert status["plugin.missing"].detail == "needs the engine"
    assert status["plugin.crash"].status == "fail"
    assert "ZeroDivisionError" in status["plugin.crash"].detail
    assert report.counts == {"pass": 1, "fail": 1, "not_checkable": 1}
    assert not report.ok
    # engine-backed claims sort after the paper's sections
    assert pc.all_claims()[-1].section == "Engine-backed checks"


def test_duplicate_ids_from_another_module_are_refused(plugin):
    """One claim, one id (Section: the registry)."""
    pc.all_claims()
    with pytest.raises(DomainError, match="must be unique"):
        pc.register_claim("table8.rows-add-up", lambda ctx: pc.Outcome.passed("x"),
                          section="x", where="x", statement="x", tolerance="x")


def test_register_claim_validates_fields():
    with pytest.raises(DomainError, match="`where` must be a non-empty string"):
        pc.register_claim("x.y", lambda ctx: pc.Outcome.passed("x"), section="s", where=" ",
                          statement="s", tolerance="t")
    with pytest.raises(DomainError, match="must be one of pass, fail, not_checkable"):
        pc.Outcome("ok", "detail")  # type: ignore[arg-type]


def test_builtin_claims_are_complete_and_well_formed():
    """Every built-in claim names where it is, what it says, its tolerance and its data,
    and uses one of the paper's sections."""
    claims = [c for c in pc.all_claims() if c.module in {
        "vistalab.paper_checks._claims_tables", "vistalab.paper_checks._claims_text",
        "vistalab.paper_checks._claims_prop1", "vistalab.paper_checks._claims_prop2",
        "vistalab.paper_checks._claims_lemma1", "vistalab.paper_checks._claims_thm1"}]
    assert len(claims) >= 60
    for c in claims:
        assert c.section in pc.SECTIONS, c.id
        assert c.where and c.statement and c.tolerance, c.id
    kinds = {c.kind for c in claims}
    assert {"table", "text", "theory"} <= kinds
    linked = {cert for c in claims for cert in c.certificates}
    assert {"prop1", "prop2", "prop2-tight", "lemma1", "thm1.A", "thm1.B", "thm1.C",
            "thm1.D", "thm1.E"} <= linked


def test_select_claims_patterns():
    """--only accepts globs, substrings and comma-separated lists; no match is an error."""
    assert {c.id for c in pc.select_claims("table8.*")} == {"table8.rows-add-up"}
    assert all("thm1" in c.id or "Theorem 1" in c.section for c in pc.select_claims("thm1"))
    both = {c.id for c in pc.select_claims("table8.*,table3.marks")}
    assert both == {"table8.rows-add-up", "table3.marks"}
    with pytest.raises(DomainError, match="must match at least one claim"):
        pc.select_claims("no-such-claim")


def test_random_claims_do_not_depend_on_the_filter():
    """Seeds are derived from the claim id or a shared name (DESIGN rule 2), so a claim's
    numbers are the same alone or in a larger run; another root seed changes them (Lemma 1
    on random interfaces)."""
    alone = pc.run_claims("lemma1.list-fano", certificates=False).by_id("lemma1.list-fano")
    with_others = pc.run_claims("table8.*,prop1.asymptotic-separation,lemma1.*",
                                certificates=False).by_id("lemma1.list-fano")
    assert alone.numbers == with_others.numbers
    assert alone.status == with_others.status
    other = pc.run_claims("lemma1.list-fano", certificates=False, rng=12345).by_id(
        "lemma1.list-fano")
    assert other.numbers["mean_interface_rate_bits"] != alone.numbers["mean_interface_rate_bits"]
    assert other.numbers["seed_entropy"] == 12345
    assert pc.run_claims("table8.*", certificates=False).seed_entropy == pc.DEFAULT_ENTROPY


@dataclass(frozen=True)
class _Cert:
    claim: str
    step: str
    status: str


@dataclass(frozen=True)
class _Report:
    steps: tuple[_Cert, ...]


def test_linked_certificates_decide_theory_claims():
    """Proposition 1's claim holds only if theory/'s proof steps for 'prop1' are certified:
    a failed step turns it into a failure, missing steps too."""
    ok = _Report((_Cert("prop1", "step1_fano", "pass"), _Cert("prop1", "step2", "pass")))
    bad = _Report((_Cert("prop1", "step1_fano", "pass"), _Cert("prop1", "step2", "fail")))
    none = _Report(())
    base = pc.run_claims("prop1.bound", certificates=False).by_id("prop1.bound")
    assert "certificates not run" in base.detail
    with_ok = pc.run_claims("prop1.bound", certificates=ok).by_id("prop1.bound")
    assert with_ok.status == base.status
    assert "prop1 2/2 steps pass" in with_ok.detail
    with_bad = pc.run_claims("prop1.bound", certificates=bad).by_id("prop1.bound")
    assert with_bad.status == "fail"
    assert "failed: step2" in with_bad.detail
    with_none = pc.run_claims("prop1.bound", certificates=none).by_id("prop1.bound")
    assert with_none.status == "fail"
    assert "no proof steps registered" in with_none.detail


def test_report_json_shape():
    """`check-paper --json`: claims with id, where, status, detail and the three counts."""
    doc = pc.run_claims("table8.*,text.cross-backbone", certificates=False).to_dict()
    assert set(doc) >= {"claims", "pass", "fail", "not_checkable"}
    for c in doc["claims"]:
        assert set(c) >= {"id", "where", "status", "detail"}
    assert doc["pass"] + doc["fail"] + doc["not_checkable"] == len(doc["claims"])


def test_run_claims_validates_its_arguments(tmp_path):
    """Validate once at the door (DESIGN rule 5), naming the parameter and the fix."""
    with pytest.raises(DomainError, match="must be True, False or a theory VerificationReport"):
        pc.run_claims("table8.*", certificates="yes")
    with pytest.raises(DomainError, match="`rng` must be a non-negative integer seed"):
        pc.run_claims("table8.*", rng=-1)
    with pytest.raises(DomainError, match="must be a sequence of registered Claim objects"):
        pc.run_claims(claims=["table8.rows-add-up"])  # type: ignore[list-item]
    with pytest.raises(DomainError, match="omit it to check the shipped data"):
        pc.run_claims("table8.*", data_dir=tmp_path / "missing")


@dataclass(frozen=True)
class _GCert:
    claim: str
    step: str
    status: str
    generality: str


def test_linked_certificates_say_how_far_they_reach():
    """the certificate summary separates proofs for all parameters from
    finite and sampled checks (a sampled pass is never reported as a proof)."""
    rep = _Report((_GCert("prop1", "a", "pass", "all"), _GCert("prop1", "b", "pass", "finite"),
                   _GCert("prop1", "c", "pass", "sampled")))  # type: ignore[arg-type]
    res = pc.run_claims("prop1.bound", certificates=rep).by_id("prop1.bound")
    assert ("prop1 3/3 steps pass (1 proved for all parameters, 1 checked on a finite domain, "
            "1 sampled)") in res.detail
