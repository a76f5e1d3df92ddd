"""The conformance suite where context managers are written: the pytest plugin's
``conformance`` fixture and ``--conformance`` option, reproducers that run alone,
case files that keep the manager's declarations, ratcheting baselines (expected,
unexpected and stale failures), managers in another language over the JSON-lines
protocol (``--command``) and the exported corpus with its JSON Schema, read by the
Node runner of ``examples/conformance``. The invariants are the paper's
(Methodology, "Workspace invariants" and "Structure preservation")."""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
from importlib.resources import files

import pytest

from vistalab.cli import main

from . import test_conformance_broken as broken

BROKEN = broken.__name__
NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not on PATH: the JavaScript "
                                "manager and the corpus runner need Node.js")
EXAMPLES = files("vistalab.examples") / "conformance"

MYTRIM = '''
def trim(messages, budget, count):
    """Drops the oldest messages one by one: blind to tool calls."""
    system = [m for m in messages if m["role"] == "system"]
    rest = [m for m in messages if m["role"] != "system"]
    while rest and count(system + rest) > budget:
        rest = rest[1:]
    return system + rest
'''

FIVE_LINES = '''from mytrim import trim


def test_trim(conformance):
    conformance.check(trim, protocol="openai", examples=40)
'''


def _pytest(folder, *args):
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-p", "no:randomly", "--rootdir", str(folder), *args],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_five_line_test_fails_with_a_counterexample_and_a_repro_that_runs_alone(tmp_path):
    """A new author's path: a five-line test file and ``pytest`` run the suite; the
    failure names the check id, shows the shrunk counterexample and a replay command,
    and the standalone script it wrote reproduces the failure when run alone (and
    does not, run on a correct trimmer)."""
    assert len(FIVE_LINES.strip().splitlines()) == 5
    (tmp_path / "mytrim.py").write_text(MYTRIM)
    (tmp_path / "test_trim.py").write_text(FIVE_LINES)
    proc = _pytest(tmp_path)
    out = proc.stdout
    assert proc.returncode == 1, out[-3000:] + proc.stderr[-2000:]
    assert "[protocol.orphan-result]" in out and "shrunk counterexample: [" in out
    assert "replay: vista-lab conformance --replay " in out and " mytrim:trim" in out
    script = next(line.split("python ", 1)[1].strip() for line in out.splitlines()
                  if "reproduce alone: python" in line and "orphan_result" in line)
    alone = subprocess.run([sys.executable, script], cwd=tmp_path.parent, capture_output=True,
                           text=True, timeout=300)
    assert alone.returncode == 1, alone.stdout + alone.stderr
    assert "REPRODUCED: protocol.orphan-result is still broken" in alone.stdout
    assert "hypothesis" not in alone.stdout.lower()
    fixed = subprocess.run([sys.executable, script, "--manager",
                            "vistalab.conformance:tail_trimmer"], cwd=tmp_path,
                           capture_output=True, text=True, timeout=300)
    assert fixed.returncode == 0 and "not reproduced" in fixed.stdout, fixed.stdout


@pytest.mark.slow
def test_pytest_conformance_option_adds_one_test_per_manager(tmp_path):
    """``pytest --conformance MODULE:FN``: a passing manager is a passing test, in
    a folder with no test file at all."""
    proc = _pytest(tmp_path, "--conformance", "vistalab.conformance:tail_trimmer",
                   "--conformance-examples", "10")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "1 passed" in proc.stdout


def _summariser(messages, budget, count):
    """Replaces everything before the last user turn with a declared summary and
    does not count the summary, so it overshoots (budget.over) while fidelity holds."""
    from vistalab.conformance import BudgetTooSmall

    system = [m for m in messages if m["role"] == "system"]
    rest = [m for m in messages if m["role"] != "system"]
    last = max((i for i, m in enumerate(rest) if m["role"] == "user"), default=0)
    if count(system + rest) <= budget:
        return system + rest
    if last == 0:
        raise BudgetTooSmall(budget)
    return [*system, {"role": "user", "content": "[summary of earlier turns]"}, *rest[last:]]


_summariser.placeholder = lambda unit: (  # type: ignore[attr-defined]
    () if unit.get("content") == "[summary of earlier turns]" else None)


def test_case_file_keeps_declarations_so_replay_judges_it_alone(tmp_path):
    """The summary the manager declared is saved with the case: replayed without
    the manager, the file shows the same check broken and no fidelity failure; the
    same file with the declarations removed reports the summary as altered content."""
    from vistalab.conformance import check, read_violation, replay

    report = check(_summariser, examples=60, budgets=[60])
    declared = [v for v in report.violations if v.declarations]
    assert declared, [v.check for v in report.violations]
    v = declared[0]
    path = tmp_path / "case.json"
    v.write(path)
    alone = replay(read_violation(path))
    assert v.check in alone and not any(c.startswith("fidelity") for c in alone), alone
    doc = json.loads(path.read_text())
    doc["conformance"]["declarations"] = []
    assert "fidelity.altered" in replay(read_violation(doc))


def _run(capsys, *argv):
    status = main(["conformance", *argv])
    return status, capsys.readouterr().out


@pytest.mark.slow
def test_baseline_expected_unexpected_and_stale(tmp_path, capsys):
    """``--write-baseline`` records the broken checks (exit 0); against it the same run
    passes (expected failures, exit 0); a baseline that omits a broken check fails it
    as a regression (exit 1); one that lists a check that now holds fails as stale."""
    base = ["vistalab.conformance:tail_trimmer"]
    argv = [f"{BROKEN}:orphaning_trimmer", "--examples", "20"]
    written = tmp_path / "baseline.json"
    status, out = _run(capsys, *argv, "--write-baseline", str(written))
    assert status == 0 and "wrote baseline" in out, out
    listed = [e["check"] for e in json.loads(written.read_text())["expected"]]
    assert "protocol.orphan-result" in listed

    status, out = _run(capsys, *argv, "--baseline", str(written))
    assert status == 0, out
    assert "expected failure (listed in" in out and "REGRESSION" not in out

    doc = json.loads(written.read_text())
    doc["expected"] = [e for e in doc["expected"] if e["check"] != "protocol.orphan-result"]
    fewer = tmp_path / "fewer.json"
    fewer.write_text(json.dumps(doc))
    status, out = _run(capsys, *argv, "--baseline", str(fewer))
    assert status == 1 and "REGRESSION (broken, not listed in" in out
    assert "protocol.orphan-result" in out.split("REGRESSION", 1)[1]

    doc = json.loads(written.read_text())
    stale = tmp_path / "stale.json"
    stale.write_text(json.dumps({**doc, "expected": ["protocol.orphan-result"]}))
    status, out = _run(capsys, *base, "--examples", "10", "--baseline", str(stale))
    assert status == 1 and "STALE (listed in" in out and "protocol.orphan-result" in out


def test_baseline_file_is_checked():
    """A baseline naming an unknown check id is refused, naming --baseline."""
    from vistalab._core import DomainError
    from vistalab.conformance._baseline import BASELINE_TAG, Baseline, read_baseline

    verdict = Baseline(frozenset({"budget.over", "pinned.dropped"})).judge(
        ["budget.over", "protocol.orphan-result"])
    assert verdict.expected == ("budget.over",)
    assert verdict.regressions == ("protocol.orphan-result",)
    assert verdict.stale == ("pinned.dropped",) and not verdict.ok
    assert Baseline(frozenset({"budget.over"})).judge(["budget.over"]).ok
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as fh:
        json.dump({"kind": BASELINE_TAG, "expected": ["protocol.orphan"]}, fh)
    try:
        with pytest.raises(DomainError, match="--baseline"):
            read_baseline(fh.name)
    finally:
        os.unlink(fh.name)


def test_counter_option_and_modules_from_the_current_folder(tmp_path, capsys, monkeypatch):
    """A module in the current folder imports (as with ``python -m``), and
    ``--counter`` names the tokenizer budgets are counted with."""
    (tmp_path / "localtrim_xyz.py").write_text(
        "from vistalab.conformance import tail_trimmer as trim\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    status, out = _run(capsys, "localtrim_xyz:trim", "--examples", "5", "--counter", "approx")
    assert status == 0, out
    assert "counter approx" in out


@needs_node
def test_javascript_manager_runs_through_command(tmp_path, capsys):
    """A manager written in JavaScript speaks the JSON-lines protocol: the correct
    one passes, the broken variant is caught (protocol.orphan-result)."""
    trim = str(EXAMPLES / "trim.mjs")
    status, out = _run(capsys, "--command", f"node {trim}", "--examples", "15")
    assert status == 0, out
    assert "--command" in out and "FAIL" not in out
    status, out = _run(capsys, "--command", f"node {trim} --orphan", "--examples", "30",
                       "--out", str(tmp_path / "out"))
    assert status == 1 and "[protocol.orphan-result]" in out, out
    case = tmp_path / "out" / "protocol.orphan-result.json"
    status, out = _run(capsys, "--command", f"node {trim} --orphan", "--replay", str(case))
    assert status == 1 and "still broken" in out


def test_command_that_breaks_the_protocol_is_a_crash(tmp_path):
    """A process that writes something other than protocol lines crashes on the case."""
    from vistalab.conformance import check
    from vistalab.conformance._process import CommandManager

    script = tmp_path / "chatty.py"
    script.write_text("import sys\nfor line in sys.stdin:\n    print('hello', flush=True)\n")
    manager = CommandManager(f"{sys.executable} {script}", "openai")
    try:
        report = check(manager, examples=3)
    finally:
        manager.close()
    v = report.violation("crash.raised")
    assert v is not None and "not JSON" in v.message


def test_exported_corpus_validates_against_its_schema(tmp_path, capsys):
    """``--export DIR``: the corpus validates against the JSON Schema written beside
    it, and a corrupted case does not (the schema can fail)."""
    jsonschema = pytest.importorskip("jsonschema")
    status, out = _run(capsys, "--export", str(tmp_path), "--examples", "12")
    assert status == 0 and "wrote 12 cases" in out, out
    corpus = json.loads((tmp_path / "corpus.json").read_text())
    schema = json.loads((tmp_path / "corpus.schema.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    validator.validate(corpus)
    assert {c["must"] for c in corpus["cases"]} == {"request", "refuse"}
    assert all(c["reference"]["tail_trimmer"]["verdict"] == "pass" for c in corpus["cases"])
    bad = copy.deepcopy(corpus)
    bad["cases"][0]["budget"] = 0
    bad["cases"][1]["checks"] = ["protocol.bogus"]
    assert len(list(validator.iter_errors(bad))) == 2


@needs_node
def test_node_runner_consumes_the_corpus(tmp_path, capsys):
    """The Node runner reads the corpus: the JavaScript tail trimmer passes every case
    and agrees with the reference verdicts; its broken variant fails."""
    for protocol in ("openai", "anthropic"):
        folder = tmp_path / protocol
        # in a fresh process: the exported sample is then the same in every run (in
        # this worker, state left by earlier tests could change what is drawn)
        export = subprocess.run(
            [sys.executable, "-c", "import sys; from vistalab.cli import main; "
             "sys.exit(main(sys.argv[1:]))", "conformance", "--export", str(folder),
             "--examples", "15", "--protocol", protocol],
            capture_output=True, text=True, timeout=600)
        assert export.returncode == 0, export.stdout + export.stderr
        runner = str(EXAMPLES / "run_corpus.mjs")
        ok = subprocess.run([NODE, runner, str(folder / "corpus.json")], capture_output=True,
                            text=True, timeout=120)
        assert ok.returncode == 0, ok.stdout + ok.stderr
        assert "0 failed" in ok.stdout and "reference tail_trimmer's: 0" in ok.stdout
    bad = subprocess.run([NODE, runner, str(tmp_path / "openai" / "corpus.json"), "--orphan"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1 and "[protocol.orphan-result]" in bad.stdout, bad.stdout


def test_a_command_manager_closes_its_pipes(tmp_path):
    """After ``close()``, and after a process abandoned for a line that is not
    JSON, no pipe of the process is left for the garbage collector (an unclosed
    pipe is a ResourceWarning: the JavaScript peers' runs left one per run)."""
    import gc
    import warnings

    from vistalab.conformance._process import CommandManager, ProcessProtocolError

    quiet = tmp_path / "quiet.py"
    quiet.write_text("import sys\nfor line in sys.stdin:\n    pass\n")
    chatty = tmp_path / "chatty.py"
    chatty.write_text("import sys\nfor line in sys.stdin:\n    print('hello', flush=True)\n")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        m = CommandManager(f"{sys.executable} {quiet}", "openai")
        m.start()
        m.close()
        c = CommandManager(f"{sys.executable} {chatty}", "openai")
        with pytest.raises(ProcessProtocolError):
            c([{"role": "user", "content": "hi"}], 100, len)
        c.close()
        del m, c
        gc.collect()
    leaks = [w for w in seen if issubclass(w.category, ResourceWarning)]
    assert leaks == [], [str(w.message) for w in leaks]
