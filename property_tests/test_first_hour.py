"""What a newcomer reaches for first: one figure at other parameters from the
CLI (``vista-lab figure``), the dashboard as records (``Workspace.ledger_rows``),
an agent tool's refusal told apart from its success in Python (``ToolReply``),
and a ``reproduce`` console summary that says what report.md's first lines say,
with one plain line per stage off a terminal."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest
from vistalab.workspace import (
    LedgerRow,
    ToolFailure,
    ToolReply,
    Workspace,
    format_ledger_row,
    parse_ledger_rows,
)

from vistalab.cli import main


# ------------------------------------------------------------ vista-lab figure
def test_figure_command_draws_at_the_parameters_given(tmp_path, capsys):
    """``vista-lab figure fig8_beyond --quick --kappas 4,50 --points 5`` writes the
    CSV, PNG and PDF, and the table holds exactly those kappas (the options reach
    the computation, as with ``python -m vistalab.figures.fig8_beyond``)."""
    out = tmp_path / "o"
    status = main(["figure", "fig8_beyond", "--quick", "--kappas", "4,50", "--points", "5",
                   "--out", str(out)])
    assert status == 0, capsys.readouterr()
    assert {p.suffix for p in out.iterdir()} == {".csv", ".png", ".pdf"}
    with open(out / "fig8_beyond.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["panel"] == "a"]
    assert {int(r["kappa"]) for r in rows} == {4, 50}


@pytest.mark.parametrize(("argv", "pattern"), [
    (["figure", "fig4_tradeof"], r"unknown value 'fig4_tradeof'; did you mean 'fig4_tradeoff'"),
    (["figure", "fig4_tradeoff", "--n", "10", "--kappa", "6"],
     r"^vista-lab figure fig4_tradeoff: error: `--kappa` must satisfy 2 <= kappa < n/2"),
    (["figure", "fig4_tradeoff", "--kapa", "3"], r"'--kapa' \(did you mean '--kappa'\?\)"),
])
def test_figure_command_refuses_bad_input_in_one_line(argv, pattern, capsys, tmp_path):
    """A bad figure name or parameter: one stderr line naming it, exit status 2,
    nothing computed or written."""
    assert main([*argv, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert re.search(pattern, err, re.M), err
    assert not (tmp_path / "o").exists()


def test_figure_command_help_lists_the_figures_parameters(capsys):
    """``vista-lab figure NAME --help`` is the figure's own help: every parameter."""
    with pytest.raises(SystemExit) as exc:
        main(["figure", "fig4_tradeoff", "--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: vista-lab figure fig4_tradeoff")
    assert "--kappa" in out and "--engine-trials" in out


# ------------------------------------------------------------ the state as data
def _session() -> Workspace:
    ws = Workspace(3000)
    ws.register_system("You are careful.")
    ws.register_user("the task")
    ws.register_tool_call([{"id": "c1", "type": "function",
                            "function": {"name": "search", "arguments": "{}"}}])
    ws.register_tool_result("c1", "result text " * 120)
    ws.register_tool_call([{"id": "c2", "type": "function",
                            "function": {"name": "search", "arguments": "{}"}}])
    ws.register_tool_result("c2", "short")
    return ws


def test_ledger_rows_are_the_dashboards_rows():
    """In a normal rendering with nothing folded, the records are exactly the rows
    the dashboard prints (its columns ID, ~Tok, Age, Type, Level, Parent, Status),
    before and after an archive; each prints back to its own dashboard line."""
    ws = _session()
    rows = ws.ledger_rows
    assert all(isinstance(r, LedgerRow) for r in rows)
    assert list(rows) == parse_ledger_rows(ws.dashboard())
    assert [r.unit_id for r in rows] == ["B1", "B2", "B3", "B4", "B5", "B6"]
    assert rows[3].parent == "B3" and rows[3].type == "tool_result"
    for r in rows:
        assert format_ledger_row(r) in ws.dashboard() + "\n"
    ws.archive("B3,B4", "search one")
    rows = ws.ledger_rows
    assert list(rows) == parse_ledger_rows(ws.dashboard())
    group = next(r for r in rows if r.unit_id == "G1")
    assert (group.type, group.level, group.status) == ("group", 1, "archived")


def test_ledger_rows_list_the_units_the_dashboard_folds():
    """With ``archived_rows=1`` the dashboard prints one archived row and folds the
    rest into a note; ``ledger_rows`` still lists every unit."""
    from vistalab.workspace import DashboardConfig

    ws = Workspace(3000, dashboard=DashboardConfig(archived_rows=1))
    ws.register_user("task")
    for i in range(3):
        ws.register_tool_call([{"id": f"c{i}", "type": "function",
                                "function": {"name": "f", "arguments": "{}"}}])
        ws.register_tool_result(f"c{i}", "text " * 50)
    ws.archive("B3")
    ws.archive("B5")
    printed = {r.unit_id for r in parse_ledger_rows(ws.dashboard())}
    listed = {r.unit_id for r in ws.ledger_rows}
    assert "folded" in ws.dashboard() and printed < listed
    assert {"B3", "B5"} <= listed


def test_agent_tool_replies_tell_refusal_from_success():
    """The agent gets the same text as before (a str, equal to the outcome's text,
    serialising as that text); Python code reads ``.ok`` and ``.failure``."""
    ws = _session()
    refused = ws.context_workspace_archive("B2")  # the task: pinned
    assert isinstance(refused, ToolReply) and isinstance(refused, str)
    assert not refused.ok and refused.failure is ToolFailure.REFUSED
    assert refused.startswith("Error:") and json.loads(json.dumps(refused)) == str(refused)
    bad = ws.dispatch("context_workspace_archive", "{not json")
    assert not bad.ok and bad.failure is ToolFailure.BAD_CALL
    done = ws.dispatch("context_workspace_archive", {"block_id": "B4"})
    assert done.ok and done.failure is None and done.outcome.text == str(done)
    assert done.endswith("B4.txt")
    deleted = ws.context_workspace_delete("B6", "not needed")
    assert deleted.ok and deleted.startswith("Deleted B6")


# ------------------------------------------------------------ reproduce's summary
def test_summary_headline_names_no_failure_when_none_failed():
    """The console's first line is report.md's verdict with the counts: findings
    about the paper are counted as findings, never as failures."""
    from vistalab._reproduce._formal import FormalSummary
    from vistalab._reproduce._report import build_report, summarize
    from vistalab._reproduce._rows import CheckRow

    rows = [CheckRow("proof", "a", "s", "pass", "n", "", "proved"),
            CheckRow("engine", "e", "s", "pass", "n", ""),
            CheckRow("paper-data", "t", "tokens add up", "fail", "7 vs 6", "Table 1")]
    no_coq = FormalSummary(False, 0, 25, "coqc not found; install Coq")
    s = summarize(rows, (), no_coq)
    line = s.headline()
    assert line.startswith("no check of the toolkit failed: 1 proved, 0 checked, 1 sampled")
    assert "1 finding(s) about the paper" in line and "fail" not in line.replace(
        "failed", "")
    assert s.skipped == 25
    assert s.formal == "Coq not installed: 25 formal rows skipped (coqc not found; install Coq)"
    report = build_report(checks=rows, figures=[], stages=[], counts={}, quick=True, seed=0,
                          fingerprint="0" * 64, commit=None, version="0", formal=no_coq)
    first = report[:report.index("## Findings about the paper")]
    assert f"**{s.verdict}**" in first and s.formal in first and "| skipped | 25 |" in first
    failing = summarize([*rows, CheckRow("simulation", "x", "s", "fail", "n", "")])
    assert failing.headline().startswith("some checks of the toolkit FAILED (1, listed below)")
    proved = FormalSummary(True, 25, 25, "25/25 formal theorems proved")
    assert summarize(rows, (), proved).formal.startswith("Coq: 25 of 25 formal theorems proved")
    versioned = FormalSummary(True, 25, 25, "25/25 formal theorems proved (coqc: Coq 8.16.1)")
    assert versioned.line() == "Coq: 25 of 25 formal theorems proved (coqc: Coq 8.16.1)"
    partial = FormalSummary(True, 24, 25, "1 theorem failed: foo")
    assert partial.line() == "Coq: 24 of 25 formal theorems proved (1 theorem failed: foo)"


def test_progress_writes_one_plain_line_per_stage():
    """Off a terminal the progress writes one line per finished stage: its title,
    steps done (or "from cache") and wall time."""
    from vistalab._reproduce import RichProgress

    bars, lines = io.StringIO(), io.StringIO()
    progress = RichProgress(bars, lines=lines)
    with progress.stage("simulations", 3) as bar:
        for name in ("a", "b", "c"):
            bar.advance(name)
    with progress.stage("paper checks", 1) as bar:
        bar.advance("from cache")
    out = lines.getvalue().splitlines()
    assert len(out) == 2
    assert re.fullmatch(r"reproduce: simulations: 3/3 in \d+\.\d s", out[0])
    assert re.fullmatch(r"reproduce: paper checks: from cache in \d+\.\d s", out[1])
    assert bars.getvalue() == ""  # no bar is drawn off a terminal


def test_tables_off_a_terminal_are_as_wide_as_their_cells(monkeypatch):
    """Off a terminal without $COLUMNS a table does not wrap at 80 columns."""
    from vistalab._output import emit_table

    monkeypatch.delenv("COLUMNS", raising=False)
    buf = io.StringIO()
    long = "x" * 150
    emit_table(("check", "numbers"), [("c1", long)], stream=buf)
    assert any(long in line for line in buf.getvalue().splitlines())


# ------------------------------------------------------------ the small messages
def test_a_number_given_as_text_gets_a_hint_about_its_type():
    """``makeroom_lower_bound("64", 4, 1.0)``: the hint says to pass an int, and which
    one, not Theorem 1's range (the value is in range; its type is wrong)."""
    from vistalab.theory import DomainError, makeroom_lower_bound

    with pytest.raises(DomainError) as exc:
        makeroom_lower_bound("64", 4, 1.0)
    assert exc.value.fix == "pass a whole number (an int, not a str), e.g. n=64"
    assert exc.value.rule == "must be an integer"  # its type, not Theorem 1's range
    with pytest.raises(DomainError) as exc:
        makeroom_lower_bound(64, 4, "one")
    assert exc.value.fix == "pass a number (a float, not a str)"


def test_a_budget_below_one_names_the_fix(capsys):
    """``workspace replay --budget 0``: the rule and the fix, in one line."""
    from ._data import TRACES

    trace = TRACES / "ops_agent.json"
    assert main(["workspace", "replay", str(trace), "--budget", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "`--budget` must be >= 1 (got --budget='0'); pass a whole number of tokens >= 1, " \
        "e.g. --budget 128000" in err
