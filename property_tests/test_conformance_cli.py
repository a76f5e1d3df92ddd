"""``vista-lab conformance``: exit 0 when every invariant held, 1 with the report
when one broke, 2 with one line for a manager that does not import, has the
wrong signature or hangs (its per-call timeout is stated); counterexample files
are read back by ``--replay`` and by ``vista-lab workspace replay`` (the paper's
workspace invariants, Methodology, "Workspace invariants")."""

from __future__ import annotations

import json
import time

from vistalab.cli import main

from . import test_conformance_broken as broken

#: The broken managers live in one place; the CLI finds them by module:function.
BROKEN = broken.__name__


def hanging(messages, budget, count):
    time.sleep(5)
    return messages


def test_passing_manager_exits_0(capsys):
    """A correct trimmer: exit 0, every invariant listed as passing."""
    status = main(["conformance", "vistalab.conformance:tail_trimmer", "--examples", "10"])
    out = capsys.readouterr().out
    assert status == 0, out
    for name in ("budget", "protocol", "fidelity", "recoverability", "crash", "determinism"):
        assert f"  {name}" in out
    assert "FAIL" not in out and "not a proof" in out


def test_violation_exits_1_and_files_replay(tmp_path, capsys):
    """A broken trimmer: exit 1; --out writes the report and a counterexample file
    that --replay re-checks (still broken on the recorded output, fixed by a
    correct trimmer) and that `workspace replay` reads as a trace."""
    out = tmp_path / "out"
    status = main(["conformance", f"{BROKEN}:orphaning_trimmer", "--examples", "40", "--out",
                   str(out), "--json"])
    doc = json.loads(capsys.readouterr().out)
    assert status == 1 and not doc["ok"]
    assert doc["files"]["protocol.orphan-result"].endswith("protocol.orphan-result.json")
    assert json.loads((out / "report.json").read_text())["violations"] == doc["violations"]
    file = doc["files"]["protocol.orphan-result"]
    assert main(["conformance", "--replay", file]) == 1
    assert "protocol.orphan-result is still broken" in capsys.readouterr().out
    assert main(["conformance", "vistalab.conformance:tail_trimmer", "--replay", file]) == 0
    assert "no longer broken" in capsys.readouterr().out
    assert main(["workspace", "replay", file, "--budget", "3000"]) == 0
    capsys.readouterr()


def test_anthropic_counterexample_replays_through_the_workspace(tmp_path, capsys):
    """An Anthropic counterexample file keeps its top-level system, so `workspace
    replay` detects the format."""
    out = tmp_path / "out"
    status = main(["conformance", f"{BROKEN}:alternation_breaker", "--protocol", "anthropic",
                   "--examples", "40", "--out", str(out)])
    assert status == 1
    text = capsys.readouterr().out
    assert "protocol        FAIL    [protocol.alternation]" in text
    trace = json.loads((out / "protocol.alternation.json").read_text())
    assert "system" in trace and trace["conformance"]["protocol"] == "anthropic"
    assert main(["workspace", "replay", str(out / "protocol.alternation.json"), "--budget",
                 "3000",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["format"] == "anthropic"


def test_hanging_manager_is_one_line_exit_2(capsys):
    """A manager that does not return within --timeout: one line naming the timeout."""
    status = main(["conformance", f"{__name__}:hanging", "--timeout", "0.2",
                   "--examples", "3"])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1
    assert "per-call timeout of 0.2 s" in err and "Traceback" not in err


def test_replay_of_crash_needs_the_manager(tmp_path, capsys):
    """A crash counterexample has no output to re-check: without MANAGER it is
    bad input (exit 2), with one it is re-run."""
    from vistalab.conformance import Violation

    v = Violation("crash", "raised", 50, [{"role": "user", "content": "hi"}], None)
    path = v.write(tmp_path / "crash.json")
    assert main(["conformance", "--replay", path]) == 2
    assert "needed" in capsys.readouterr().err
    assert main(["conformance", "vistalab.conformance:tail_trimmer", "--replay", path]) == 0


def test_help_states_the_library_defaults():
    """The option help's defaults are the library's (the parser is built without
    importing the suite, so they are written twice and compared here)."""
    import re

    from vistalab.cli import build_parser
    from vistalab.conformance import DEFAULT_TIMEOUT, check

    sub = build_parser()._subparsers._group_actions[0].choices["conformance"]
    helps = {a.dest: a.help for a in sub._actions}
    assert re.search(rf"default {DEFAULT_TIMEOUT:g}\)", helps["timeout"])
    defaults = check.__kwdefaults__
    assert f"default {defaults['examples']})" in helps["examples"]
    assert f"default {defaults['seed']})" in helps["seed"]


def test_no_hypothesis_folder_in_the_current_folder(tmp_path):
    """The command keeps Hypothesis's files out of the user's folder (as verify does);
    run as a subprocess, since under pytest Hypothesis is already imported."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "HYPOTHESIS_STORAGE_DIRECTORY"}
    proc = subprocess.run(
        [sys.executable, "-m", "vistalab.cli", "conformance",
         "vistalab.conformance:tail_trimmer", "--examples", "3"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / ".hypothesis").exists()
