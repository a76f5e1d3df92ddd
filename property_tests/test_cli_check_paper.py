"""`vista-lab check-paper`: the registry of the paper's claims from the command line:
grouped table with a summary, --json document, --only, exit status."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import vistalab.paper_checks as pc

from vistalab.cli import main


@pytest.fixture
def broken_data(tmp_path):
    """A copy of the paper data where Table 8's SLIM row no longer adds up."""
    data = tmp_path / "data"
    shutil.copytree(pc.DATA_DIR, data)
    path = data / "outcome_transitions.toml"
    text = path.read_text(encoding="utf-8")
    assert text.count("both = 17") == 1
    path.write_text(text.replace("both = 17", "both = 18"), encoding="utf-8")
    return data


def test_json_document(capsys):
    """Table 8 (Appendix G): --json gives claims with id/where/status/detail and the counts."""
    status = main(["check-paper", "--only", "table8.*,text.cross-backbone", "--json",
                   "--no-certificates"])
    doc = json.loads(capsys.readouterr().out)
    assert status == (1 if doc["fail"] else 0)
    assert {c["id"] for c in doc["claims"]} == {"table8.rows-add-up", "text.cross-backbone"}
    for c in doc["claims"]:
        assert {"id", "where", "status", "detail"} <= set(c)
    assert doc["pass"] + doc["fail"] + doc["not_checkable"] == 2
    assert doc["not_checkable"] == 1


def test_failing_claim_sets_exit_status_unless_report_only(broken_data, capsys):
    """A failed claim about the paper's own table (Table 8 rows no longer add up) is a
    finding: exit 0, and 1 with --strict, as `reproduce` does (one exit policy);
    --report-only exits 0 even with --strict; each prints the discrepancy."""
    argv = ["check-paper", "--only", "table8.*", "--no-certificates", "--data-dir",
            str(broken_data)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "FAIL" in out and "Both+Base. = 23 but the baseline solved 22" in out
    assert "1 finding(s) about the paper's own numbers (reported, not failing" in out
    assert main([*argv, "--strict"]) == 1
    assert "fail the run (--strict)" in capsys.readouterr().out
    assert main([*argv, "--strict", "--report-only"]) == 0
    assert "1 claims: 0 pass, 1 fail, 0 not checkable" in capsys.readouterr().out


def test_human_output_is_grouped_by_section(capsys):
    """The table is grouped by paper section and ends with the summary count."""
    main(["check-paper", "--only", "table7.*,text.ama-qa-pairs", "--no-certificates",
          "--report-only"])
    out = capsys.readouterr().out
    assert "Appendix G evaluation details" in out
    assert "3.6 AMA-Bench transfer" in out
    assert out.index("3.6 AMA-Bench transfer") < out.index("Appendix G evaluation details")
    assert out.rstrip().splitlines()[-1].startswith("4 claims:")


def test_list_does_not_run_checks(capsys):
    assert main(["check-paper", "--list", "--json", "--only", "thm1"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["count"] == len(doc["claims"]) >= 8
    assert all("status" not in c for c in doc["claims"])


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--only", "no-such-claim"], "must match at least one claim"),
        (["--data-dir", "/nonexistent/vista"], "must be an existing folder"),
        (["--seed", "-3"], "must be a non-negative integer"),
    ],
)
def test_bad_input_is_one_line_exit_2(argv, message, capsys):
    """CLI error contract (DESIGN rule 6): one line on stderr, exit status 2."""
    assert main(["check-paper", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("vista-lab: error:") and err.count("\n") == 1
    assert message in err


def test_check_paper_with_the_papers_source(tmp_path, capsys):
    """`check-paper --paper PATH` adds the transcription check of the data against the
    LaTeX; a missing file, or a file that is not the paper's LaTeX, is one
    line and exit 2 (CLI audit item 7); a LaTeX source with the paper's labels but not its
    numbers fails the run (exit 1)."""
    assert main(["check-paper", "--only", "table8.*", "--no-certificates",
                 "--paper", str(tmp_path / "nope.tex")]) == 2
    assert "`--paper` must be the paper's LaTeX source file" in capsys.readouterr().err
    empty = tmp_path / "paper.tex"
    label = pc.load_table(pc.table_keys()[1]).label  # [0] is the prose-only ablation
    empty.write_text(f"\\begin{{document}}\n\\label{{{label}}}\nno numbers here\n")
    assert main(["check-paper", "--only", "table8.*", "--no-certificates", "--json",
                 "--paper", str(empty)]) == 1
    doc = json.loads(capsys.readouterr().out)
    checks = doc["transcription"]["checks"]
    assert checks and not any(c["ok"] for c in checks if ".table." in c["id"])
    paper = os.environ.get("VISTA_LAB_PAPER", "")
    if paper and Path(paper).is_file():
        assert main(["check-paper", "--only", "table8.*", "--no-certificates",
                     "--paper", paper]) == 0
        assert "tables and quotes match the LaTeX source" in capsys.readouterr().out
