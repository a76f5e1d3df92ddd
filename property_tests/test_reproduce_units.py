"""Pieces of the reproduce pipeline: the cache key and store, the
per-stage seeds, the report's Markdown, and the errors of bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from vistalab.theory import DomainError, UnknownNameError

from vistalab._reproduce import CheckRow, run_reproduce
from vistalab._reproduce._cache import CacheRecord, StageCache, cache_key
from vistalab._reproduce._pipeline import _stage_seed
from vistalab._reproduce._report import FigureEntry, build_report, md_cell
from vistalab._reproduce._rows import count_statuses, rows_from_payload, rows_to_table
from vistalab._reproduce._sources import normalise_status
from vistalab.cli import main

params = st.dictionaries(st.text(min_size=1, max_size=5),
                         st.one_of(st.integers(), st.floats(allow_nan=False,
                                                            allow_infinity=False),
                                   st.lists(st.integers(), max_size=3)), max_size=4)


@given(params, st.text(min_size=1, max_size=8))
def test_cache_key_is_order_free_and_sensitive_to_everything(p, stage):
    """"Re-running reuses cached results unless the parameters or the code version
    changed": the key ignores dict order but not stage, params or code."""
    key = cache_key(stage, p, "code-a")
    assert key == cache_key(stage, dict(reversed(list(p.items()))), "code-a")
    assert key != cache_key(stage, p, "code-b")
    assert key != cache_key(stage + "x", p, "code-a")
    assert key != cache_key(stage, {**p, "__extra__": 1}, "code-a")


def test_cache_store_hit_miss_and_corruption(tmp_path):
    """A record is returned only for its own key; records of other keys of the
    same stage coexist (quick and full runs do not evict each other);
    a damaged record is a miss, not a crash."""
    cache = StageCache(tmp_path)
    rec = CacheRecord("sim:x", "k1", {"rows": [[1, 2.5]]}, {"params": {}}, 0.25)
    cache.store(rec)
    assert cache.load("sim:x", "k1") == rec
    assert cache.load("sim:x", "k2") is None
    assert cache.load("sim:y", "k1") is None
    other = CacheRecord("sim:x", "k2", {"rows": []}, {"params": {"quick": True}}, 0.1)
    cache.store(other)
    assert cache.load("sim:x", "k1") == rec and cache.load("sim:x", "k2") == other
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sim--x--k1.json", "sim--x--k2.json"]
    (tmp_path / "sim--x--k1.json").write_text("{not json")
    assert cache.load("sim:x", "k1") is None


def test_stage_seeds_depend_only_on_seed_and_stage_name():
    """DESIGN.md rule 2: each stage draws from its own stream, so adding or dropping other
    stages never changes a stage's numbers; different seeds give different streams."""
    a = np.random.default_rng(_stage_seed(7, "sim:fig1_recovery")).random(4)
    b = np.random.default_rng(_stage_seed(7, "sim:fig1_recovery")).random(4)
    c = np.random.default_rng(_stage_seed(7, "sim:fig3_content_channel")).random(4)
    d = np.random.default_rng(_stage_seed(8, "sim:fig1_recovery")).random(4)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c) and not np.array_equal(a, d)


@given(st.text(max_size=40))
def test_md_cell_is_one_safe_table_cell(text):
    """Any text stays inside one Markdown cell: no newline, no unescaped pipe."""
    cell = md_cell(text)
    assert "\n" not in cell and "\r" not in cell
    assert cell.replace("\\\\", "").replace("\\|", "").count("|") == 0
    assert md_cell("x" * 50, limit=10).endswith("…") and len(md_cell("x" * 50, limit=10)) == 10


def test_report_has_one_row_per_check_and_two_caption_lines():
    """One table per area with every check, its status and numbers; every figure
    embedded with a two-line caption."""
    rows = [
        CheckRow("paper", "t.a", "claim a | with pipe", "pass", "1.0 vs 1.0", "Table 1"),
        CheckRow("proof", "prop1/step1", "Fano", "fail", "gap 0.1", "App. B"),
        CheckRow("simulation", "fig1.x", "below bound", "not_checkable", "-", "Prop. 1"),
    ]
    figs = [FigureEntry("fig3_content_channel", "Content channel", ("line one", "line two"),
                        "figures/fig3_content_channel.png"),
            FigureEntry("fig7_dashboard_overhead", "Overhead", None, None)]
    text = build_report(checks=rows, figures=figs, stages=[], counts=count_statuses(rows),
                        quick=True, seed=1, fingerprint="f" * 64, commit="abc", version="0.1")
    areas = text[text.index("## Checks by area"):text.index("## Figures")]
    table = [ln for ln in areas.splitlines() if ln.startswith("| `")]
    assert len(table) == 3
    assert table[0].startswith("| `prop1/step1`")  # proof steps listed first
    assert "### Proof steps and chains (0 of 1 pass)" in areas
    assert "**FAIL**" in text and "claim a \\| with pipe" in text
    assert "| failed | 1 |" in text and "| not checkable | 1 |" in text
    assert "| checked | 1 |" in text  # the passing paper claim: exact arithmetic
    failures = text[text.index("## Failures"):text.index("## Checks by area")]
    assert "`prop1/step1`" in failures  # a failure is also on the first screen
    assert "### Figure 3. Content channel" in text
    assert "![Content channel](figures/fig3_content_channel.png)\n\nline one  \nline two\n" in text
    assert "### Figure 7. Overhead" in text and "Not produced in this run" in text


def test_report_first_screen_states_counts_findings_and_skips():
    """The report leads with its counts by strength (proved / checked / sampled), the
    failures, the findings and what was skipped with the fix; the Markdown renders to
    an HTML page whose area sections are collapsible."""
    from vistalab._reproduce._report import Skipped, report_html

    rows = [
        CheckRow("proof", "lemma1/a", "s", "pass", "n", "App. A", "proved"),
        CheckRow("proof", "lemma1/b", "s", "pass", "n", "App. A", "checked"),
        CheckRow("engine", "e", "s", "pass", "n", "Thm 1"),
        CheckRow("paper-data", "table1.x", "tokens add up", "fail", "7.29 vs 6.72", "Table 1"),
    ]
    skipped = [Skipped("paper transcription", 45, "the paper's LaTeX was not given",
                       "pass --paper PATH to run them")]
    text = build_report(checks=rows, figures=[], stages=[], counts=count_statuses(rows),
                        quick=True, seed=0, fingerprint="0" * 64, commit=None, version="0",
                        skipped=skipped)
    first = text[:text.index("## Checks by area")]
    for line in ("| proved | 1 |", "| checked | 1 |", "| sampled | 1 |", "| failed | 0 |",
                 "| findings | 1 |", "| skipped | 45 |"):
        assert line in first
    assert ("**45 paper transcription checks skipped**: the paper's LaTeX was not given; "
            "pass --paper PATH to run them.") in first
    assert "tokens add up" in first and "7.29 vs 6.72" in first
    assert "no check of the toolkit failed" in first
    html = report_html(text)
    assert html.startswith("<!DOCTYPE html>") and "<table>" in html
    assert "<details open><summary><h2>Summary</h2>" in html
    assert "<details><summary><h3>Proof steps and chains (2 of 2 pass)</h3>" in html


def test_check_rows_round_trip_through_the_results_table():
    rows = [CheckRow("engine", "e1", "c", "pass", "n", "w")]
    table = rows_to_table(rows)
    assert rows_from_payload(table.records()) == rows
    assert table.columns == ("source", "id", "claim", "status", "strength", "numbers", "where")


@pytest.mark.parametrize(("word", "status"), [
    ("pass", "pass"), ("certified", "pass"), (True, "pass"), ("FAIL", "fail"),
    ("failed", "fail"), (False, "fail"), ("not_checkable", "not_checkable"),
    ("not-checkable", "not_checkable"), ("skipped", "not_checkable"),
])
def test_status_words_are_normalised(word, status):
    assert normalise_status(word) == status


def test_bad_pipeline_arguments_are_clear_errors(tmp_path):
    """DESIGN.md rule 6: parameter, value, rule and fix; close-match suggestions."""
    afile = tmp_path / "f.txt"
    afile.write_text("x")
    with pytest.raises(DomainError, match=r"`out` must be a folder, not a file"):
        run_reproduce(afile)
    with pytest.raises(DomainError, match=r"`seed` must be an integer >= 0"):
        run_reproduce(tmp_path / "o", seed=-1)
    with pytest.raises(UnknownNameError, match=r"Did you mean 'fig2_separation'"):
        run_reproduce(tmp_path / "o", figures=["fig2_separaton"])
    with pytest.raises(UnknownNameError, match=r"parameter of fig6_paper_tables 'tabels'"):
        run_reproduce(tmp_path / "o", figures=["fig6_paper_tables"],
                      params={"fig6_paper_tables": {"tabels": []}})
    assert not (tmp_path / "o").exists()  # input errors fail before any work


def test_cli_bad_input_is_one_line_exit_2(tmp_path, capsys):
    afile = tmp_path / "f.txt"
    afile.write_text("x")
    assert main(["reproduce", "--quick", "--out", str(afile)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "must be a folder" in err
    assert main(["reproduce", "--seed", "abc"]) == 2
    assert "`--seed` must be an integer (got --seed='abc')" in capsys.readouterr().err
    assert main(["reproduce", "--qiuck"]) == 2
    assert "did you mean '--quick'" in capsys.readouterr().err


def test_stage_outcomes_serialise(tmp_path):
    """The run record is plain JSON (what the cache tests read)."""
    from vistalab._reproduce import StageOutcome

    o = StageOutcome("sim:a", "simulations", "cached", "k", 0.5)
    assert json.loads(json.dumps(o.__dict__))["status"] == "cached"


def test_force_and_refresh_recompute_a_cached_stage(tmp_path):
    """--force ignores the cache; so does a stage whose output went missing."""
    from vistalab._reproduce._pipeline import _Runner

    calls = []

    def fn(p, r):
        calls.append(r.random() if r is not None else None)
        return {"v": len(calls)}

    run = _Runner(tmp_path, seed=3, force=False)
    first = run.cached("sim:x", "g", {"a": 1}, fn, stochastic=True)
    again = run.cached("sim:x", "g", {"a": 1}, fn, stochastic=True)
    assert first is not None and again is not None and again.payload == first.payload
    assert [o.status for o in run.outcomes] == ["computed", "cached"]
    run.cached("sim:x", "g", {"a": 1}, fn, stochastic=True, refresh=True)
    forced = _Runner(tmp_path, seed=3, force=True)
    forced.cached("sim:x", "g", {"a": 1}, fn, stochastic=True)
    assert forced.outcomes[0].status == "computed"
    assert len(calls) == 3 and calls[0] == calls[1] == calls[2]  # same seed, same stream
    other = _Runner(tmp_path, seed=4, force=False)
    other.cached("sim:x", "g", {"a": 1}, fn, stochastic=True)
    assert other.outcomes[0].status == "computed" and calls[3] != calls[0]


def test_a_crashing_stage_is_a_failed_check_not_a_crash(tmp_path):
    """One broken stage must not hide the others: it becomes a 'fail' row with the
    exception, and the traceback is kept for results/errors.log."""
    from vistalab._reproduce._pipeline import _Runner

    def boom(p, r):
        raise RuntimeError("disk on fire")

    run = _Runner(tmp_path, seed=1, force=False)
    assert run.cached("sim:y", "g", {}, boom, stochastic=False) is None
    rows = run.problem_rows()
    assert rows[0].status == "fail" and "RuntimeError: disk on fire" in rows[0].numbers
    assert "disk on fire" in run.errors[0]
    assert run.cache.load("sim:y", run.outcomes[0].key or "") is None  # failures not cached


def test_a_code_change_invalidates_the_cache(tmp_path, monkeypatch):
    """The code fingerprint is part of every key: same stage and params, new code ->
    recomputed ('unless the parameters or the code version changed')."""
    from vistalab._reproduce import _pipeline

    monkeypatch.setattr(_pipeline, "code_fingerprint", lambda: "code-v1")
    _pipeline._Runner(tmp_path, seed=1, force=False).cached(
        "sim:z", "g", {"a": 1}, lambda p, r: {"v": 1}, stochastic=False)
    same = _pipeline._Runner(tmp_path, seed=1, force=False)
    same.cached("sim:z", "g", {"a": 1}, lambda p, r: {"v": 1}, stochastic=False)
    monkeypatch.setattr(_pipeline, "code_fingerprint", lambda: "code-v2")
    edited = _pipeline._Runner(tmp_path, seed=1, force=False)
    edited.cached("sim:z", "g", {"a": 1}, lambda p, r: {"v": 1}, stochastic=False)
    assert same.outcomes[0].status == "cached"
    assert edited.outcomes[0].status == "computed"


def _result_with(*rows: CheckRow):
    from pathlib import Path

    from vistalab._reproduce import ReproduceResult

    return ReproduceResult(Path("."), True, 0, (), tuple(rows), Path("report.md"), 0.0,
                           count_statuses(rows))


def test_exit_status_fails_on_toolkit_checks_and_on_findings_only_when_strict():
    """"Exit status non-zero if any check fails". A failed claim about the
    paper's own tables/text (source paper-data) is a finding about the paper: it is
    reported, and fails the run only with --strict; any other failure always fails."""
    ok = CheckRow("proof", "prop1/s", "c", "pass", "", "")
    finding = CheckRow("paper-data", "table2.x", "c", "fail", "7.29 vs 6.72", "Table 2")
    broken = CheckRow("simulation", "fig4.x", "c", "fail", "z=9", "Thm 1")
    assert _result_with(ok).exit_status_for(strict=True) == 0
    assert _result_with(ok, finding).exit_status_for(strict=False) == 0
    assert _result_with(ok, finding).exit_status_for(strict=True) == 1
    assert _result_with(ok, broken).exit_status_for(strict=False) == 1
    assert _result_with(ok, finding).findings == 1
    report = build_report(checks=[ok, finding], figures=[], stages=[],
                          counts=count_statuses([ok, finding]), quick=True, seed=0,
                          fingerprint="f" * 64, commit=None, version="0")
    findings = report[report.index("## Findings about the paper"):]
    assert "7.29 vs 6.72" in findings.split("\n## ")[0]


def test_paper_option_checks_the_transcription(tmp_path):
    """`reproduce --paper PATH`: a missing file fails before any work;
    the stage turns each table and quote into a row of source "transcription", failing
    when the LaTeX does not contain the data's numbers."""
    from vistalab._reproduce import _stages

    with pytest.raises(DomainError, match=r"`--paper` must be the paper's LaTeX source file"):
        run_reproduce(tmp_path / "o", paper=tmp_path / "nope.tex")
    assert not (tmp_path / "o").exists()
    empty = tmp_path / "paper.tex"
    empty.write_text("nothing\n")
    rows = _stages._transcription_stage({"paper": str(empty)}, None)
    assert rows and {r["source"] for r in rows} == {"transcription"}
    assert all(r["status"] == "fail" for r in rows if ".table." in r["id"])


def test_proof_rows_never_call_a_check_a_proof(monkeypatch):
    """reproduce's proof rows say "proved for all parameters"
    only for generality "all", "checked on <domain>" for finite checks and
    "sampled on <domain>" for Hypothesis; each main result adds a chain row,
    which fails when the chain is broken."""
    from vistalab.theory._proofs._registry import StepCertificate

    from vistalab import theory
    from vistalab._reproduce._sources import proof_step_rows

    certs = (
        StepCertificate("thm1.E", "a", "lp-shannon", "any J, Y", "s", "r", "pass", "ok", 0.0,
                        "all", ("thm1.E:b", "thm1.E:gone"), ("thm1.E",)),
        StepCertificate("thm1.E", "b", "enumeration", "n <= 3", "s", "r", "pass", "ok", 0.0,
                        "finite"),
        StepCertificate("thm1.E", "c", "hypothesis", "n <= 12", "s", "r", "pass", "ok", 0.0,
                        "sampled"),
    )
    report = theory.VerificationReport(certs, 3, 0, 0.0, None,
                                       theory.check_chains(certs, ("thm1.E",)))
    monkeypatch.setattr(theory, "certify_all", lambda: report)
    rows = {r["id"]: r for r in proof_step_rows()}
    assert rows["thm1.E/a"]["numbers"].startswith("proved for all parameters")
    assert rows["thm1.E/b"]["numbers"].startswith("checked on n <= 3")
    assert rows["thm1.E/c"]["numbers"].startswith("sampled on n <= 12")
    for key in ("thm1.E/b", "thm1.E/c"):
        assert "proved" not in rows[key]["numbers"] and "not a proof" in rows[key]["numbers"]
    chain = rows["chain/thm1.E"]
    assert chain["status"] == "fail" and "thm1.E:gone" in chain["numbers"]
