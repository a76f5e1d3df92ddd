"""`vista-lab reproduce --quick` end to end, once, into a temporary folder
(figures/, results/ with tidy CSV + JSON sidecars, report.md with the
check table and every figure; cached re-runs; exit status 1 iff a check fails).

The first run is shared by the tests of this module; the cache tests reuse its
folder, so nothing is computed twice except what a test changes on purpose.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from vistalab.figures import FIGURE_NAMES

from vistalab._reproduce import run_reproduce
from vistalab.cli import main

pytestmark = pytest.mark.slow

SIDECAR_KEYS = {"params", "seed_entropy", "packages", "git_commit", "code_fingerprint",
                "cache_key", "columns"}


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    """One quick run. The code fingerprint is taken once and held for the module, so
    an edit elsewhere in a shared working tree during the tests cannot invalidate the
    cache between runs (that a code change does invalidate it is tested in
    test_reproduce_units.py)."""
    from vistalab._provenance import code_fingerprint
    from vistalab._reproduce import _pipeline

    fingerprint = code_fingerprint()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_pipeline, "code_fingerprint", lambda: fingerprint)
        out = tmp_path_factory.mktemp("reproduce") / "out"
        status = main(["reproduce", "--quick", "--out", str(out)])
        yield out, status


def _run_record(out: Path) -> dict:
    return json.loads((out / "results" / "run.json").read_text())


def _checks(out: Path) -> list[dict[str, str]]:
    with (out / "results" / "checks.csv").open() as fh:
        return list(csv.DictReader(fh))


def test_quick_run_writes_every_figure_result_and_the_report(first_run):
    """DIR/figures (PNG + PDF per figure), DIR/results (tidy CSV + JSON sidecar of
    parameters, seed entropy, package versions and git commit), DIR/report.md."""
    out, _ = first_run
    record = _run_record(out)
    produced = [s["name"][len("plot:"):] for s in record["stages"]
                if s["name"].startswith("plot:") and s["status"] in ("computed", "cached")]
    # Every figure, exactly, and no stage skipped: the first-party packages are imported
    # statically, so a stage can only be skipped for a missing third-party extra, and the
    # test environment installs them all.
    assert sorted(produced) == sorted(FIGURE_NAMES)
    skipped = [(s["name"], s["note"]) for s in record["stages"] if s["status"] == "skipped"]
    assert skipped == []
    for name in produced:
        png = out / "figures" / f"{name}.png"
        pdf = out / "figures" / f"{name}.pdf"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert pdf.read_bytes()[:4] == b"%PDF"
        side = json.loads((out / "results" / f"{name}.json").read_text())
        assert SIDECAR_KEYS <= set(side)
        assert side["packages"]["numpy"] and side["stage"] == f"sim:{name}"
        header = (out / "results" / f"{name}.csv").read_text().splitlines()[0]
        assert header.split(",") == list(side["columns"])


def test_report_lists_every_check_and_embeds_every_figure(first_run):
    """'one table of every check with its status and numbers, and every figure
    embedded with a two-line caption'; exit status non-zero iff a check of the toolkit
    fails (failed claims about the paper's own numbers, source paper-data, are findings
    that fail the run only with --strict)."""
    out, status = first_run
    report = (out / "report.md").read_text()
    checks = _checks(out)
    assert checks, "the run must check something"
    areas = report[report.index("## Checks by area"):report.index("## Figures")]
    table_rows = [ln for ln in areas.splitlines() if ln.startswith("| `")]
    assert len(table_rows) == len(checks)
    assert (out / "report.html").read_text().startswith("<!DOCTYPE html>")
    for c in checks:
        assert f"`{c['id']}`" in report
    sources = {c["source"] for c in checks}
    assert {"proof", "paper", "simulation", "engine"} <= sources
    for name in FIGURE_NAMES:
        png = f"figures/{name}.png"
        if (out / png).exists():
            i = report.index(f"]({png})")
            caption = report[i:].split("\n\n")[1].split("\n")
            assert len(caption) == 2 and all(len(line.strip()) > 20 for line in caption)
    side = json.loads((out / "results" / "checks.json").read_text())
    assert SIDECAR_KEYS - {"cache_key"} <= set(side) and side["rows"] == len(checks)
    failed = [c for c in checks if c["status"] == "fail"]
    gating = [c for c in failed if c["source"] != "paper-data"]
    assert status == (1 if gating else 0)
    counts = _run_record(out)["checks"]
    assert counts["fail"] == len(failed)


def test_second_run_reuses_every_cached_stage(first_run):
    """'Re-running reuses cached results unless the parameters or the code version
    changed' -- asserted on the run record, not on a timing."""
    out, status = first_run
    before = _run_record(out)
    assert main(["reproduce", "--quick", "--out", str(out)]) == status
    after = _run_record(out)
    ran = [s for s in after["stages"] if s["status"] not in ("skipped",)]
    assert ran and all(s["status"] == "cached" for s in ran), [
        (s["name"], s["status"]) for s in ran if s["status"] != "cached"]
    keys = {s["name"]: s["key"] for s in before["stages"]}
    assert all(keys[s["name"]] == s["key"] for s in after["stages"])


def test_changed_parameter_recomputes_only_that_stage(first_run):
    """A changed parameter changes the cache key of its stage only: that simulation and
    its plot are recomputed, every other stage comes from the cache."""
    out, _ = first_run
    res = run_reproduce(out, quick=True, figures=["fig2_separation"],
                        params={"fig2_separation": {"mc_trials": 123}})
    status = {s.name: s.status for s in res.stages}
    assert status["sim:fig2_separation"] == "computed"
    assert status["plot:fig2_separation"] == "computed"
    assert status["verify"] == "cached" and status["paper_checks"] == "cached"
    side = json.loads((out / "results" / "fig2_separation.json").read_text())
    assert side["params"]["mc_trials"] == 123


def test_changed_seed_recomputes_stochastic_stages_only(first_run):
    """The seed is part of the key of stochastic stages only: the paper's tables
    (figure 6), the proof steps and the paper checks (which use paper_checks' own
    fixed seed, like `vista-lab check-paper`) are reused."""
    out, _ = first_run
    res = run_reproduce(out, quick=True, seed=7, figures=["fig1_recovery", "fig6_paper_tables"])
    status = {s.name: s.status for s in res.stages}
    assert status["sim:fig1_recovery"] == "computed"
    assert status["sim:fig6_paper_tables"] == "cached"
    assert status["verify"] == "cached" and status["paper_checks"] == "cached"
    side = json.loads((out / "results" / "fig1_recovery.json").read_text())
    assert side["seed_entropy"] == "7"


def test_missing_figure_file_is_redrawn(first_run):
    """A cache hit is only trusted while its output files exist."""
    out, _ = first_run
    (out / "figures" / "fig4_tradeoff.png").unlink()
    res = run_reproduce(out, quick=True, figures=["fig4_tradeoff"])
    status = {s.name: s.status for s in res.stages}
    assert status["sim:fig4_tradeoff"] == "cached"
    assert status["plot:fig4_tradeoff"] == "computed"
    assert (out / "figures" / "fig4_tradeoff.png").exists()
