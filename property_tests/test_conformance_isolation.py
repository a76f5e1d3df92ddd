"""``vista-lab conformance`` stays in control of a hostile manager: the manager
runs in a child process the command watches, so a manager that exits, is
killed, holds the interpreter lock, blocks its import, returns objects the
suite cannot read or floods its output ends as one stderr line and a non-zero
exit naming what happened; exit 0 only comes with a report in which every
invariant held. Each hostile manager is a small module written to ``tmp_path``
and run through the command line."""

from __future__ import annotations

import textwrap

import pytest

from vistalab.cli import main

#: A trimmer that passes (the suite's own reference, re-exported by each module).
PASSING = "from vistalab.conformance import tail_trimmer as good\n"

HOSTILE = {
    "os_exit": ("import os\ndef trim(messages, budget, count):\n    os._exit(0)\n",
                ["--examples", "3"], ["exit status 0", "during call 1", "no report"]),
    "os_exit_at_import": ("import os\nos._exit(0)\ndef trim(m, b, c):\n    return m\n",
                          ["--examples", "3"], ["exit status 0", "while its module was "
                                                "imported"]),
    "sys_exit_at_import": ("import sys\nsys.exit(0)\ndef trim(m, b, c):\n    return m\n",
                           ["--examples", "3"], ["does not import", "SystemExit: 0"]),
    "sigkill": ("import os, signal\ndef trim(m, b, c):\n"
                "    os.kill(os.getpid(), signal.SIGKILL)\n",
                ["--examples", "3"], ["killed by SIGKILL", "during call 1"]),
    "regex_holds_the_lock": (
        "import re\ndef trim(messages, budget, count):\n"
        "    re.match(r'(a+)+$', 'a' * 40 + 'b')\n    return messages\n",
        ["--examples", "3", "--timeout", "0.5"],
        ["per-call timeout of 0.5 s", "interpreter lock", "killed"]),
    "blocking_import": ("import time\ntime.sleep(600)\ndef trim(m, b, c):\n    return m\n",
                        ["--examples", "3", "--import-timeout", "1"],
                        ["did not import within the import timeout of 1 s", "killed"]),
    "raising_eq": (
        "class Bad:\n"
        "    def __eq__(self, other):\n        raise RuntimeError('no eq')\n"
        "    __hash__ = None\n"
        "def trim(messages, budget, count):\n    return [Bad()]\n",
        ["--examples", "3"], ["output[0] is a Bad object, not JSON data"]),
    "raising_str_and_iter": (
        "from collections.abc import Mapping\n"
        "class Bad(Mapping):\n"
        "    def __str__(self):\n        raise RuntimeError('no str')\n"
        "    __repr__ = __str__\n"
        "    def __getitem__(self, key):\n        raise RuntimeError('no item')\n"
        "    def __iter__(self):\n        raise RuntimeError('no iter')\n"
        "    def __len__(self):\n        raise RuntimeError('no len')\n"
        "def trim(messages, budget, count):\n    return {'role': Bad()}\n",
        ["--examples", "3"],
        ["output['role'] is a Bad that cannot be read", "RuntimeError: no "]),
    "output_200_mb": ("def trim(messages, budget, count):\n"
                      "    return [{'role': 'user', 'content': 'x' * 200_000_000}]\n",
                      ["--examples", "3"], ["more than 8,000,000 characters"]),
    "sys_exit_in_a_call_hook": (
        "import sys\ndef trim(messages, budget, count):\n    return messages\n"
        "def _floor(conversation):\n    sys.exit(0)\ntrim.min_budget = _floor\n",
        ["--examples", "3"], ["min_budget", "SystemExit: 0"]),
}


def _run(tmp_path, monkeypatch, capsys, name: str, source: str, options: list[str]):
    (tmp_path / f"hostile_{name}.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path))
    status = main(["conformance", f"hostile_{name}:trim", *options])
    return status, capsys.readouterr()


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_manager_is_one_line_non_zero(name, tmp_path, monkeypatch, capsys):
    """Each hostile manager: exit 2, nothing on stdout (no report, so nothing a CI
    could read as a pass), one stderr line naming the manager and what happened."""
    source, options, needles = HOSTILE[name]
    status, out = _run(tmp_path, monkeypatch, capsys, name, source, options)
    assert status == 2, (status, out)
    assert out.out == "" and out.err.count("\n") == 1, out
    assert out.err.startswith("vista-lab: error: ") and "Traceback" not in out.err
    assert f"hostile_{name}:trim" in out.err, out.err
    for needle in needles:
        assert needle in out.err, (needle, out.err)


def test_raising_exception_is_a_crash_report(tmp_path, monkeypatch, capsys):
    """An exception whose __str__ raises, and a SystemExit inside a call, are the
    crash invariant broken: a report, exit 1, no traceback."""
    source = ("import sys\nclass BadExc(Exception):\n"
              "    def __str__(self):\n        raise RuntimeError('no str')\n"
              "def trim(messages, budget, count):\n"
              "    if len(messages) > 1:\n        sys.exit(0)\n    raise BadExc()\n")
    status, out = _run(tmp_path, monkeypatch, capsys, "raising_exc", source,
                       ["--examples", "20"])
    assert status == 1 and "Traceback" not in out.err + out.out, out
    assert "[crash.raised] the manager raised BadExc: <BadExc object whose str() fails>" \
        in out.out or "[crash.raised] the manager raised SystemExit: 0" in out.out, out.out
    assert "all invariants held" not in out.out


def test_a_noisy_passing_manager_still_passes(tmp_path, monkeypatch, capsys):
    """A manager that writes megabytes to stdout and stderr (and a thread it leaves
    running) does not disturb the verdict: exit 0 with the full report."""
    source = (PASSING + "import os, sys, threading, time\n"
              "threading.Thread(target=time.sleep, args=(600,)).start()\n"
              "def trim(messages, budget, count):\n"
              "    sys.stdout.write('x' * 2_000_000)\n"
              "    os.write(2, b'y' * 2_000_000)\n"
              "    return good(messages, budget, count)\n")
    status, out = _run(tmp_path, monkeypatch, capsys, "noisy", source, ["--examples", "5"])
    assert status == 0, out
    assert out.err == "" and "x" * 100 not in out.out
    assert "all invariants held on the sampled conversations" in out.out


def test_replay_with_a_hostile_manager_is_one_line(tmp_path, monkeypatch, capsys):
    """`--replay FILE` with MANAGER runs the manager isolated too."""
    from vistalab.conformance import Violation

    path = Violation("crash", "raised", 50, [{"role": "user", "content": "hi"}], None,
                     check="crash.raised").write(tmp_path / "crash.json")
    source = "import os\ndef trim(messages, budget, count):\n    os._exit(3)\n"
    status, out = _run(tmp_path, monkeypatch, capsys, "replay_exit", source,
                       ["--replay", path])
    assert status == 2 and out.out == "" and out.err.count("\n") == 1
    assert "exit status 3" in out.err


def test_import_timeout_is_validated(capsys):
    """--import-timeout must be a positive number of seconds (one line, exit 2)."""
    for bad in ("0", "-1", "nan", "x"):
        assert main(["conformance", "vistalab.conformance:tail_trimmer",
                     "--import-timeout", bad]) == 2
        err = capsys.readouterr().err
        assert "import-timeout" in err and err.count("\n") == 1
