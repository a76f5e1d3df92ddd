"""The reproduce report's "Beyond the paper" section (theory/BEYOND.md section 6): status
from the proof chains, numbers from code, failures visible."""

from __future__ import annotations

import pytest

from vistalab._reproduce._beyond import beyond_check_rows, beyond_section
from vistalab._reproduce._report import build_report, md_cell
from vistalab._reproduce._rows import CheckRow


def _row(claim: str, kind: str = "finite", holds: bool = True) -> dict:
    return {"id": f"beyond.{claim or kind}", "result": "a result | with a pipe", "claim": claim,
            "kind": kind, "holds": holds, "numbers": "x = 1.0", "where": "theory/BEYOND.md"}


def _chain(claim: str, status: str, reach: str) -> CheckRow:
    return CheckRow("proof", f"chain/{claim}", "chain", status, f"closed, {reach}: ...", "")


def test_status_follows_the_chain():
    """theory/BEYOND.md section 6: 'proved for all parameters' only when the claim's chain says so;
    a finite weakest link, a broken chain and a missing chain are each worded as such."""
    rows = [_row("prop1-sharp"), _row("first-order"), _row("thm1-sharp"), _row("gone"),
            _row("", "certified")]
    checks = [
        _chain("prop1-sharp", "pass", "proved for all parameters"),
        _chain("first-order", "pass", "weakest link finite (not a proof for all parameters)"),
        _chain("thm1-sharp", "fail", "broken"),
    ]
    text = "\n".join(beyond_section(rows, checks, md_cell))
    lines = [ln for ln in text.splitlines() if ln.startswith("| a result")]
    assert "proved for all parameters (chain closed)" in lines[0]
    assert "weakest link checked on a finite domain" in lines[1]
    assert "BROKEN" in lines[2]
    assert "not run" in lines[3]
    assert "certified (ball arithmetic)" in lines[4]
    assert "a result \\| with a pipe" in lines[0]


def test_failed_result_is_a_failed_check():
    """theory/BEYOND.md section 6: a numeric result that does not hold is a failing check row and
    is marked in the section."""
    rows = [_row("first-order", holds=False), _row("prop1-sharp")]
    crs = beyond_check_rows(rows)
    assert [c.status for c in crs] == ["fail", "pass"] and crs[0].source == "beyond"
    report = build_report(checks=crs, figures=[], stages=[], counts={"fail": 1, "pass": 1},
                          quick=True, seed=1, fingerprint="0" * 12, commit=None,
                          version="0", beyond=rows)
    assert "## Beyond the paper" in report and "**FAIL**" in report
    assert "some checks of the toolkit FAILED" in report


@pytest.mark.slow
def test_beyond_rows_all_hold():
    """theory/BEYOND.md section 6: every computed result of the section holds (about 15 s)."""
    from vistalab._reproduce._beyond import beyond_rows

    rows = beyond_rows()
    assert len(rows) >= 10 and all(r["holds"] for r in rows)
    assert {r["claim"] for r in rows} >= {"content-sandwich", "thm1-sharp", "first-order",
                                          "prop1-sharp"}
