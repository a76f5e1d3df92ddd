"""The CLI user audit (issue: CLI problems): each test pins one fix and fails on
the behaviour the audit reported."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from vistalab.cli import main

from ._data import TRACES

DATA = TRACES
OPS = str(DATA / "ops_agent.json")


def _call(name: str) -> dict:
    return {"id": name, "type": "function", "function": {"name": "search", "arguments": "{}"}}


def _write(path: Path, messages: list) -> str:
    path.write_text(json.dumps(messages))
    return str(path)


# ------------------------------------------------ 1. failed check says why

def test_failed_protocol_check_lists_the_problems(monkeypatch, tmp_path, capsys):
    """Audit item 1: text-mode replay printed 'check protocol_valid: FAILED' with no
    reason. Under the failed check it now lists the first 5 problems with their
    turn and message, then how many more (and where to find them). The checker is
    made to fail (7 problems per turn) since the traces in the suite are valid."""
    from vistalab.workspace import _trace

    monkeypatch.setattr(_trace, "protocol_problems",
                        lambda messages: [f"problem {i} (probe)" for i in range(7)])
    assert main(["workspace", "replay", OPS, "--budget", "3000"]) == 1
    out = capsys.readouterr().out
    tail = out[out.index("check protocol_valid: FAILED"):].splitlines()
    listed = [line for line in tail[1:] if line.startswith("  turn ")]
    assert len(listed) == 5
    assert listed[0] == "  turn 1 (before message 2): problem 0 (probe)"
    turns = out.count("=== turn ")
    assert f"  ... {7 * turns - 5} more; see --json" in out


def test_passed_protocol_check_lists_nothing(capsys):
    """Audit item 1: a valid trace prints no problem lines."""
    assert main(["workspace", "replay", OPS, "--budget", "3000"]) == 0
    out = capsys.readouterr().out
    assert "check protocol_valid: ok" in out and "more; see --json" not in out


# ------------------------------------------------ 2. the guard's real reason

def test_rejection_by_per_result_cap_names_the_cap(tmp_path, capsys):
    """Audit item 2: a result refused by the per-result cap printed the hard limit
    ('+4,932 tokens, limit 10,000'); it now names the cap, which it exceeds."""
    trace = _write(tmp_path / "big.json", [
        {"role": "user", "content": "look it up"},
        {"role": "assistant", "content": None, "tool_calls": [_call("c1")]},
        {"role": "tool", "tool_call_id": "c1", "content": "word " * 4000},
        {"role": "assistant", "content": "done"},
    ])
    assert main(["workspace", "replay", trace, "--budget", "3000"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if "guard rejected" in x)
    assert "per-result cap" in line and "hard limit" not in line
    attempted, cap = (int(v.replace(",", "")) for v in
                      re.search(r"\+([0-9,]+) tokens, over the per-result cap ([0-9,]+)",
                                line).groups())
    assert attempted > cap


def test_rejection_by_hard_limit_names_the_hard_limit(tmp_path, capsys):
    """Audit item 2: a result under the cap refused because nothing could be
    offloaded names the hard limit and a total above it."""
    trace = _write(tmp_path / "hard.json", [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "word " * 2500},
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "word " * 2500},
        {"role": "assistant", "content": None, "tool_calls": [_call("c1")]},
        {"role": "tool", "tool_call_id": "c1", "content": "word " * 1500},
        {"role": "assistant", "content": "done"},
    ])
    assert main(["workspace", "replay", trace, "--budget", "3000"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if "guard rejected" in x)
    total, limit = (int(v.replace(",", "")) for v in
                    re.search(r"would be ([0-9,]+) tokens, over the hard limit ([0-9,]+)",
                              line).groups())
    assert total > limit == 6000


# ------------------------------------------------ 3. bound units per subcommand

BOUND_LINES = [
    ["recovery", "--N", "8", "--k", "4", "--budget", "10"],
    ["recovery", "--N", "8", "--k", "4", "--budget", "100"],
    ["content", "--kappa", "4", "--sigma", "1"],
    ["content", "--kappa", "4", "--sigma", "1", "--n", "8"],
    ["content", "--kappa", "4", "--sigma", "0.01", "--n", "8"],
    ["makeroom", "--n", "64", "--kappa", "4", "--rate", "1"],
    ["frontier", "--n", "64", "--kappa", "4", "--rate", "1"],
    ["frontier", "--n", "64", "--kappa", "4", "--mean-z", "1"],
]


def _table_units(text: str) -> dict[str, str]:
    """quantity -> unit from a printed table (rich's box rows: │ q │ v │ unit │)."""
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("│").split("│")]
        if len(cells) == 3 and cells[0] not in ("quantity", ""):
            rows[cells[0]] = cells[2]
    return rows


@pytest.mark.parametrize("line", BOUND_LINES, ids=[" ".join(x) for x in BOUND_LINES])
def test_every_bound_output_has_a_unit(line, capsys, monkeypatch):
    """Audit item 3: one global unit table keyed by name gave `bound content`'s
    lower_bound (a rate) the unit 'blocks (E[Z])' and left sharp_success_bound,
    exact_rate, product_bound, sharp_lower_bound, c_star, ... blank. Every key
    every `bound` subcommand prints (text and JSON) now has a unit of its own
    subcommand."""
    from vistalab._commands.bound import UNITS

    monkeypatch.setenv("COLUMNS", "200")
    assert main(["bound", *line]) == 0
    shown = _table_units(capsys.readouterr().out)
    assert len(shown) >= 3 and all(shown.values()), shown
    assert main(["bound", *line, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    scalar = {k for k, v in doc.items() if not isinstance(v, (list, dict))}
    assert scalar <= set(UNITS[line[0]]) and all(UNITS[line[0]][k] for k in scalar)


def test_content_lower_bound_is_in_bits(capsys, monkeypatch):
    """Audit item 3: `bound content --kappa 4 --sigma 1 --n 8` showed lower_bound
    in 'blocks (E[Z])'; it is the certified lower bound on the rate I(J*;W)."""
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["bound", "content", "--kappa", "4", "--sigma", "1", "--n", "8"]) == 0
    units = _table_units(capsys.readouterr().out)
    assert units["lower_bound"] == units["exact_rate"] == units["product_bound"] == "bits"
    assert main(["bound", "makeroom", "--n", "64", "--kappa", "4", "--rate", "1"]) == 0
    units = _table_units(capsys.readouterr().out)
    assert units["lower_bound"] == units["sharp_lower_bound"] == "blocks (E[Z])"


# ------------------------------------------------ 4. the figure scripts' door

FIG = "fig4_tradeoff"
FIG_PROG = f"python -m vistalab.figures.{FIG}"


@pytest.fixture
def no_compute(monkeypatch):
    """The figure's compute fails loudly: a door check must refuse first."""
    from vistalab.figures._catalog import FIGURES

    def refuse(*args, **kwargs):
        raise AssertionError("computed before the door checks")

    monkeypatch.setattr(FIGURES[FIG], "compute", refuse)


@pytest.mark.parametrize("argv,words", [
    (["--quick", "--out", "{file}"], ["--out", "must be a folder"]),
    (["--out", "/proc/x"], ["--out", "/proc"]),
    (["--out", "/dev/null"], ["--out"]),
    (["--out", "{file}/sub"], ["--out", "creatable"]),
    (["--seed", "-3"], ["--seed", "non-negative integer", "e.g. --seed"]),
    (["--seed", "abc"], ["--seed", "non-negative integer"]),
    (["--seed", ""], ["--seed"]),
    (["--bogus"], ["unrecognized", "--help"]),
], ids=lambda x: " ".join(x) if isinstance(x, list) else None)
def test_figure_script_bad_input_is_one_line_before_compute(argv, words, tmp_path, capsys,
                                                             no_compute):
    """Audit item 4: `python -m vistalab.figures.fig4_tradeoff --quick --out FILE`
    raised FileExistsError after the computation, `--out /proc/x` and `--seed -3`
    tracebacks. Every bad option is now one stderr line, exit 2, naming the option,
    before anything is computed (compute is made to fail)."""
    from vistalab.figures._script import run_as_script

    file = tmp_path / "empty.json"
    file.write_text("")
    argv = [a.replace("{file}", str(file)) for a in argv]
    assert run_as_script(FIG, argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{FIG_PROG}: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in err and all(w in err for w in words), err


def test_figure_script_as_a_module_keeps_the_contract(tmp_path):
    """Audit item 4, end to end: the documented `python -m` command exits 2 with
    one line for an existing file as --out."""
    import subprocess
    import sys

    file = tmp_path / "empty.json"
    file.write_text("")
    proc = subprocess.run([sys.executable, "-m", f"vistalab.figures.{FIG}", "--quick",
                           "--out", str(file)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "`--out`" in proc.stderr


def test_figure_script_write_failure_is_one_line(tmp_path, capsys, monkeypatch):
    """Audit item 4: a write the environment refuses after the door checks (here
    the CSV write) is one line, exit 2, as in the main CLI."""
    from vistalab.figures import _script
    from vistalab.figures._catalog import FIGURES

    monkeypatch.setattr(FIGURES[FIG], "compute", lambda params, rng: _Table())

    def refuse(path, data):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(_script, "atomic_write", refuse)
    assert _script.run_as_script(FIG, ["--quick", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Permission denied" in err and "Traceback" not in err


class _Table:
    def to_csv(self) -> str:
        return "x\n1\n"


# ------------------------------------------------ 5. argparse type errors

@pytest.mark.parametrize("argv,option", [
    (["reproduce", "--quick", "--seed", "abc"], "--seed"),
    (["check-paper", "--seed", "1.5"], "--seed"),
    (["sweep", "x.toml", "--workers", "abc"], "--workers"),
])
def test_argparse_type_errors_name_rule_and_fix(argv, option, capsys):
    """Audit item 5: `reproduce --quick --seed abc` printed argparse's bare
    "argument --seed: invalid int value: 'abc'"; the CLI's parser hook now
    rewrites type errors to name the rule and a fix."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "invalid int value" not in err
    assert f"`{option}` must be an integer (got {option}=" in err
    assert f"e.g. {option} " in err


# ------------------------------------------------ 5. one-line, rule-and-fix messages

def test_huge_integer_bound_is_compact(capsys):
    """Audit item 5: `bound recovery --N -5` printed the bound 10**300 as a 301-digit
    integer (a 420-character line); bounds are rendered compactly (1e300)."""
    assert main(["bound", "recovery", "--N", "-5", "--k", "4", "--budget", "10"]) == 2
    err = capsys.readouterr().err
    assert "1 <= value <= 1e300 (got N=-5)" in err and len(err) < 200


@pytest.mark.parametrize("value,text", [
    (5, "5"), (-7, "-7"), (10**15 - 1, "999999999999999"), (10**300, "1e300"),
    (-(10**300), "-1e300"), (12 * 10**18, "1.2e19"), (2**64, "~1.8446e19"),
])
def test_int_text(value, text):
    """Audit item 5: the message form of an integer bound (exact up to 15 digits,
    then compact, marked '~' when rounded)."""
    from vistalab.theory._validate import int_text

    assert int_text(value) == text


def test_engine_budget_floor_is_one_clean_sentence(capsys):
    """Audit item 5: `recovery --engine --budget 10` gave a nested, repeated message
    whose fixes were not CLI options ('drop task tool schemas or set
    protocol=False'). It now names --budget and its minimum once; the minimum is
    exact: it runs, one token less does not."""
    base = ["recovery", "--engine", "--N", "8", "--k", "4", "--strategy", "recover",
            "--trials", "2", "--seed", "1"]
    assert main([*base, "--budget", "10"]) == 2
    err = capsys.readouterr().err
    m = re.search(r"`--budget` must be at least ([0-9,]+) tokens in engine mode", err)
    assert m and err.count("\n") == 1 and "protocol=False" not in err
    assert err.count("budget") == 3 and "(`" not in err  # rule, got, fix: no nesting
    floor = int(m.group(1).replace(",", ""))
    assert main([*base, "--budget", str(floor - 1)]) == 2
    assert f"at least {m.group(1)} tokens" in capsys.readouterr().err
    assert main([*base, "--budget", str(floor)]) in (0, 1)


@pytest.mark.parametrize("text,words", [
    ("{", ["is not valid JSON", "pass a JSON list"]),
    ("{}", ["must hold a JSON list", "got a JSON object", "wrap the schemas"]),
])
def test_task_tools_path_is_shown_plainly(text, words, tmp_path, capsys):
    """Audit item 5: `workspace serve --task-tools broken.json` printed
    "PosixPath('broken.json') is not valid JSON"; the path is shown plainly and the
    message ends with a fix."""
    pytest.importorskip("mcp")
    bad = tmp_path / "broken.json"
    bad.write_text(text)
    assert main(["workspace", "serve", "--budget", "4000", "--task-tools", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "PosixPath" not in err and f"'{bad}'" in err
    assert all(w in err for w in words), err


def test_plot_sweep_missing_results_says_file_or_folder(tmp_path, capsys):
    """Audit item 5: `plot-sweep nodir` said 'must be an existing file' though a
    results folder is accepted."""
    assert main(["plot-sweep", str(tmp_path / "nodir")]) == 2
    assert "`RESULTS` must be an existing file or folder" in capsys.readouterr().err


# ------------------------------------------------ 6. help names both trace formats

@pytest.mark.parametrize("sub", [[], ["replay"], ["dashboard"], ["reward"], ["probe"]],
                         ids=lambda s: " ".join(s) or "workspace")
def test_workspace_help_names_anthropic_traces(sub, capsys, monkeypatch):
    """Audit item 6: `workspace --help` and the TRACE help said 'OpenAI chat
    messages' only, though Anthropic Messages traces are detected."""
    monkeypatch.setenv("COLUMNS", "2000")
    with pytest.raises(SystemExit) as stop:
        main(["workspace", *sub, "--help"])
    assert stop.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Anthropic Messages" in out and "detected" in out
    if sub in (["replay"], ["dashboard"]):
        trace_help = out[out.index("TRACE JSON list"):]
        assert trace_help.index("Anthropic") < trace_help.index("--budget")


# ------------------------------------------------ 7. --paper must be the paper

NOT_THE_PAPER = [
    ("empty.json", "", "no \\begin{document}"),
    ("notes.tex", "\\section{Notes}\nsome text\n", "no \\begin{document}"),
    ("other.tex", "\\documentclass{article}\n\\begin{document}\nhi\n\\end{document}\n",
     "none of its"),
    ("binary.tex", b"\xff\xfe\x00\x01begin", "not UTF-8"),
]


@pytest.mark.parametrize("name,content,rule", NOT_THE_PAPER,
                         ids=[n for n, _, _ in NOT_THE_PAPER])
@pytest.mark.parametrize("command", [["check-paper", "--no-certificates"],
                                     ["reproduce", "--quick"]], ids=["check-paper", "reproduce"])
def test_paper_that_is_not_the_paper_is_bad_input(name, content, rule, command, tmp_path,
                                                  capsys):
    """Audit item 7: `check-paper --paper empty.json` ran ~45 transcription checks
    that all failed (exit 1, a toolkit failure); a file that is not the paper's
    LaTeX is refused at the door, one line, exit 2 (for `reproduce --paper` too,
    before any stage runs or the output folder is made)."""
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    out = tmp_path / "out"
    argv = [*command, "--paper", str(path)]
    if command[0] == "reproduce":
        argv += ["--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "`--paper` must be" in err and rule in err, err
    assert "paper.tex" in err and not out.exists()


def test_the_paper_passes_the_door():
    """Audit item 7: the real paper (when present here) passes the new door check,
    so the check does not refuse the input it exists for."""
    from vistalab.paper_checks._transcription import paper_source_iv

    paper = Path(os.environ.get("VISTA_LAB_PAPER", "/work/shared/paper/paper.tex"))
    if not paper.is_file():
        pytest.skip("the paper's LaTeX source is not available here")
    assert paper_source_iv(paper) == paper


# ------------------------------------------------ 8. probe prompt file names

def test_probe_prompt_files_do_not_start_with_a_dash(tmp_path, capsys):
    """Audit item 8: `probe --prompts DIR` wrote '-dash_total.txt' (read as an option
    by shell tools). Every written name starts with a letter or digit; each file
    holds the prompt of its (condition, question), with the paper's '-dash' as
    'without-dash' and '+dash' as 'with-dash'."""
    from vistalab.workspace import PROBE_CONDITIONS, PROBE_QUESTIONS

    from vistalab._commands._workspace_analysis import prompt_file_name

    out = tmp_path / "prompts"
    assert main(["workspace", "probe", OPS, "--budget", "4000", "--seed", "7", "--json",
                 "--prompts", str(out)]) == 0
    kit = json.loads(capsys.readouterr().out)["kits"][0]
    written = sorted(p.name for p in (out / kit["snapshot_id"]).iterdir())
    assert written and all(re.match(r"[A-Za-z0-9]", name) for name in written), written
    assert "without-dash_total.txt" in written and "with-dash_total.txt" in written
    names = {prompt_file_name(c, q) for c in PROBE_CONDITIONS for q in PROBE_QUESTIONS}
    assert len(names) == len(PROBE_CONDITIONS) * len(PROBE_QUESTIONS)  # no collisions
    assert names | {"truth.json"} == set(written)
    assert prompt_file_name("-other", "total") == "other_total.txt"


def test_figure_script_happy_path_writes_all_three(tmp_path, capsys):
    """Audit item 4: the door checks do not refuse a good run: a new nested --out
    folder gets the CSV, PNG and PDF (fig2, the quickest figure)."""
    from vistalab.figures._script import run_as_script

    out = tmp_path / "new" / "figs"
    assert run_as_script("fig2_separation", ["--quick", "--out", str(out), "--seed", "3"]) == 0
    assert sorted(p.suffix for p in out.iterdir()) == [".csv", ".pdf", ".png"]
    assert "wrote" in capsys.readouterr().err
