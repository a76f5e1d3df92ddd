"""A cache that keeps every run: full and quick runs into one
folder do not evict each other, --quick has its own default folder, the proof
steps run once per reproduce, and Hypothesis never writes ``.hypothesis/`` into
the user's current folder."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from vistalab._reproduce import _pipeline, _stages
from vistalab._reproduce._pipeline import default_out, run_reproduce

FIGS = ["fig2_separation", "fig6_paper_tables"]


@pytest.fixture(autouse=True)
def _fingerprint_once(monkeypatch):
    """The real code fingerprint, taken once for the module (hashing the source
    for every run is the slow part of these tests)."""
    global _FP
    if _FP is None:
        _FP = _pipeline.code_fingerprint()
    fp = _FP
    monkeypatch.setattr(_pipeline, "code_fingerprint", lambda: fp)


_FP: str | None = None


def _fake_checks(monkeypatch, calls):
    """Fast stand-ins for the check stages (and the Coq stage). The stage names and parameters
    (hence the cache keys) are the pipeline's own; only the work is replaced."""

    def proof(params, rng, *, hypothesis_dir=None):
        calls.append("verify")
        return [{"source": "proof", "id": "thm1.A/step", "claim": "c", "status": "pass",
                 "numbers": "", "where": ""}]

    def paper(params, rng, *, hypothesis_dir=None, proof_rows=None):
        calls.append(("paper", None if proof_rows is None else len(proof_rows)))
        return [{"source": "paper", "id": "thm1.x", "claim": "c", "status": "pass",
                 "numbers": "", "where": ""}]

    def engine(params, rng, *, hypothesis_dir=None):
        calls.append("engine")
        return []

    def formal(params, rng):
        calls.append("formal")
        return {"rows": [], "available": False, "proved": 0, "total": 2,
                "message": "coqc not found (a stand-in)"}

    monkeypatch.setattr(_pipeline, "_proof_stage", proof)
    monkeypatch.setattr(_pipeline, "_paper_stage", paper)
    monkeypatch.setattr(_pipeline, "_engine_stage", engine)
    monkeypatch.setattr(_pipeline, "formal_stage", formal)


@pytest.mark.slow
def test_full_then_quick_then_full_computes_nothing_the_third_time(tmp_path, monkeypatch):
    """Full, then --quick, then full again into the same
    folder; the third run takes every stage from the cache (the quick run's
    records sit beside the full run's instead of replacing them). Figures 2
    and 6 with their real full and quick parameters."""
    calls: list = []
    _fake_checks(monkeypatch, calls)
    out = tmp_path / "out"
    full = run_reproduce(out, figures=FIGS, jobs=1)
    quick = run_reproduce(out, quick=True, figures=FIGS, jobs=1)
    again = run_reproduce(out, figures=FIGS, jobs=1)
    assert {s.name: s.status for s in full.stages}["sim:fig2_separation"] == "computed"
    assert {s.name: s.status for s in quick.stages}["sim:fig2_separation"] == "computed"
    assert [s.status for s in again.stages] == ["cached"] * len(again.stages), again.stages
    assert {s.name: s.key for s in again.stages} == {s.name: s.key for s in full.stages}
    # The quick keys differ where the parameters differ, and both records are kept.
    fk = {s.name: s.key for s in full.stages}
    qk = {s.name: s.key for s in quick.stages}
    assert fk["sim:fig2_separation"] != qk["sim:fig2_separation"]
    cache = out / ".cache"
    assert (cache / f"sim--fig2_separation--{fk['sim:fig2_separation'][:24]}.json").exists()
    assert (cache / f"sim--fig2_separation--{qk['sim:fig2_separation'][:24]}.json").exists()
    # Proof steps ran once (first run) and the paper checks got their rows.
    assert calls.count("verify") == 1 and ("paper", 1) in calls
    assert ("paper", None) not in calls


def test_paper_stage_key_follows_the_verify_stage(tmp_path, monkeypatch):
    """The paper checks take their certificates from the verify stage, so their
    cache key is derived from verify's key (a change in the proofs re-runs them)."""
    calls: list = []
    _fake_checks(monkeypatch, calls)
    res = run_reproduce(tmp_path / "o", quick=True, figures=["fig6_paper_tables"], jobs=1)
    keys = {s.name: s.key for s in res.stages}
    from vistalab._reproduce._cache import cache_key

    run = _pipeline._Runner(tmp_path / "o", seed=res.seed, force=False)
    assert keys["paper_checks"] == cache_key("paper_checks", {"certificates": keys["verify"]},
                                             run.fingerprint)


def test_quick_runs_get_their_own_default_folder(tmp_path, monkeypatch):
    """--quick writes to vista-lab-out/quick by default, so it never replaces the
    full run's report and figures in vista-lab-out."""
    assert default_out(False).as_posix() == "vista-lab-out"
    assert default_out(True).as_posix() == "vista-lab-out/quick"
    calls: list = []
    _fake_checks(monkeypatch, calls)
    monkeypatch.chdir(tmp_path)
    res = run_reproduce(quick=True, figures=["fig6_paper_tables"], jobs=1)
    assert res.report_path == tmp_path / "vista-lab-out" / "quick" / "report.md" or \
        res.report_path.resolve() == (tmp_path / "vista-lab-out" / "quick" / "report.md")
    assert not (tmp_path / "vista-lab-out" / "report.md").exists()


def test_paper_checks_use_given_certificates():
    """The verify stage's rows stand in for theory.certify_all() in the paper
    checks: a failed certificate makes its linked claim fail, without running
    any proof step again."""
    from vistalab import paper_checks as pc

    claim = next(c for c in pc.all_claims() if "prop1" in c.certificates)
    rows = [{"id": "prop1/some_step", "status": "pass"}]
    ok = pc.run_claims(claims=[claim], certificates=_stages._Certificates(rows))
    assert ok.results[0].status == "pass", ok.results[0].detail
    assert "prop1 1/1 steps pass" in ok.results[0].detail
    bad = pc.run_claims(claims=[claim], certificates=_stages._Certificates(
        [{"id": "prop1/some_step", "status": "fail"}]))
    assert bad.results[0].status == "fail" and "failed: some_step" in bad.results[0].detail


_HYP_SCRIPT = textwrap.dedent("""
    import sys
    from vistalab._reproduce import hypothesis_home
    hypothesis_home(sys.argv[1])
    from vistalab.theory._proofs._randomized import run_property
    from hypothesis import strategies as st

    def prop(x):
        assert x == x

    print(run_property(prop, st.text(max_size=3), max_examples=20).ok)
""")


@pytest.mark.slow
def test_hypothesis_never_writes_into_the_current_folder(tmp_path):
    """Hypothesis-certified proof steps leave no
    .hypothesis/ in the current folder: the pipeline's stages keep it under
    <out>/.cache/hypothesis, and a CLI command (verify) keeps it in a temporary
    folder removed on exit. Subprocesses in a fresh cwd, with no
    HYPOTHESIS_STORAGE_DIRECTORY set."""
    env = {k: v for k, v in os.environ.items() if k != "HYPOTHESIS_STORAGE_DIRECTORY"}
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    store = tmp_path / "out" / ".cache" / "hypothesis"
    done = subprocess.run([sys.executable, "-c", _HYP_SCRIPT, str(store)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert not (cwd / ".hypothesis").exists()
    assert store.is_dir()
    # Without the pipeline's folder, Hypothesis would have written into cwd:
    # the same script with hypothesis_home(None) shows the check can fail.
    bare = subprocess.run([sys.executable, "-c", _HYP_SCRIPT.replace(
        "hypothesis_home(sys.argv[1])", "hypothesis_home(None)"), "x"], cwd=cwd, env=env,
        capture_output=True, text=True, timeout=120)
    assert bare.returncode == 0, bare.stderr
    assert (cwd / ".hypothesis").exists()
    cwd2 = tmp_path / "cwd2"
    cwd2.mkdir()
    cli = subprocess.run([sys.executable, "-m", "vistalab.cli", "verify", "--only",
                          "prop1:fano_random_laws", "--json"], cwd=cwd2, env=env,
                         capture_output=True, text=True, timeout=300)
    assert cli.returncode == 0, cli.stderr
    assert list(cwd2.iterdir()) == []
