"""``vista-lab conformance`` stays in control of a hostile manager: the manager
runs in a child process the command watches, so a manager that exits, is
killed, holds the interpreter lock, blocks its import, returns objects the
suite cannot read or floods its output ends as one stderr line and a non-zero
exit naming what happened; exit 0 only comes with a report in which every
invariant held. Each hostile manager is a small module written to ``tmp_path``
and run through the command line."""

from __future__ import annotations

import sys
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
    "os_exit_leaving_a_process_behind": (
        "import os, time\ndef trim(messages, budget, count):\n"
        "    if os.fork() == 0:\n        time.sleep(600)\n    os._exit(0)\n",
        ["--examples", "3"], ["exit status 0", "during call 1"]),
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


# ----------------------------------------------------------------- the Python API
# The same hostile objects through `check` in this process (no exit, no lock): the
# suite copies every output to plain data first, so none of them gives a traceback.

class _Raising:
    def __eq__(self, other):
        raise RuntimeError("no eq")

    def __str__(self):
        raise RuntimeError("no str")

    __repr__ = __str__
    __hash__ = None  # type: ignore[assignment]


class _BadExc(Exception):
    def __str__(self):
        raise RuntimeError("no str")


def _check(manager, **kw):
    from vistalab.conformance import check

    return check(manager, examples=kw.pop("examples", 5), **kw)


def test_api_non_json_output_is_a_manager_output_error():
    from vistalab.conformance import ManagerOutputError

    with pytest.raises(ManagerOutputError, match=r"output\[0\]\['content'\] is a _Raising"):
        _check(lambda messages, budget, count: [{"role": "user", "content": _Raising()}])
    with pytest.raises(ManagerOutputError, match="nested more than 64"):
        deep: list = []
        for _ in range(100):
            deep = [deep]
        _check(lambda messages, budget, count: deep)


def test_api_str_subclass_is_read_without_its_methods():
    """A str subclass whose __eq__ and __str__ raise is read as its characters: the
    tail trimmer's own output, so every invariant holds."""
    from vistalab.conformance import tail_trimmer

    class S(str):
        def __eq__(self, other):
            raise RuntimeError("no eq")

        def __str__(self):
            raise RuntimeError("no str")

        __hash__ = str.__hash__

    def trim(messages, budget, count):
        out = tail_trimmer(messages, budget, count)
        return [{k: S(v) if isinstance(v, str) else v for k, v in m.items()} for m in out]

    assert _check(trim, examples=10).ok


def test_api_exception_with_raising_str_is_a_crash():
    def trim(messages, budget, count):
        raise _BadExc()

    report = _check(trim)
    assert [v.check for v in report.violations] == ["crash.raised"]
    assert "BadExc: <_BadExc object whose str() fails>" in report.violations[0].message


def test_api_hostile_hooks_are_named():
    """min_budget raising SystemExit or returning a non-integer, and a refuses
    attribute that is not exception classes: ManagerSignatureError naming the hook."""
    from vistalab.conformance import ManagerSignatureError, tail_trimmer

    def with_floor(value):
        def trim(messages, budget, count):
            return tail_trimmer(messages, budget, count)

        def floor(conversation):
            if isinstance(value, BaseException):
                raise value
            return value

        trim.min_budget = floor
        return trim

    for value, needle in ((SystemExit(0), "SystemExit: 0"), (_Raising(), "_Raising"),
                          (10**400, "below 10\\*\\*12"), (-1, "non-negative")):
        with pytest.raises(ManagerSignatureError, match=needle):
            _check(with_floor(value))
    trim = with_floor(0)
    trim.refuses = (_Raising(),)
    with pytest.raises(ManagerSignatureError, match="refuses"):
        _check(trim)


def test_api_hostile_placeholder_and_recover():
    """A placeholder that raises is a crash of the manager; a recover that returns an
    object whose __eq__ raises is an unrecoverable payload (never compared)."""
    from vistalab.conformance import tail_trimmer

    def trim(messages, budget, count):
        return tail_trimmer(messages, budget, count)

    def placeholder(unit):
        raise SystemExit(0)

    trim.placeholder = placeholder
    report = _check(trim)
    assert "crash.raised" in {v.check for v in report.violations}
    assert any("placeholder(unit) failed (SystemExit: 0)" in v.message
               for v in report.violations)

    def trim2(messages, budget, count):
        return tail_trimmer(messages, budget, count)

    trim2.placeholder = lambda unit: ("p1",)
    trim2.recover = lambda pid: _Raising()
    report = _check(trim2)
    assert any(v.check == "recoverability.lost" and "_Raising" in v.message
               for v in report.violations), [v.message for v in report.violations]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_the_child_dies_with_the_watching_process(tmp_path):
    """The watching process killed by SIGKILL while the manager holds the interpreter:
    the child running the manager is killed by the kernel too (never left running).
    The waits below only poll for a state; none is a timing assertion."""
    import os
    import signal
    import subprocess
    import time

    marker = tmp_path / "spinning"
    (tmp_path / "hostile_spin.py").write_text(
        "import re\ndef trim(messages, budget, count):\n"
        f"    open({str(marker)!r}, 'w').close()\n"
        "    re.match(r'(a+)+$', 'a' * 40 + 'b')\n    return messages\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    parent = subprocess.Popen([sys.executable, "-m", "vistalab.cli", "conformance",
                               "hostile_spin:trim", "--timeout", "600", "--examples", "3"],
                              cwd=tmp_path, env=env, stderr=subprocess.DEVNULL)
    try:
        children: list[str] = []
        for _ in range(1500):  # until the manager spins (startup is slow under load)
            if marker.exists():
                break
            time.sleep(0.2)
        children = subprocess.run(["pgrep", "-P", str(parent.pid)], capture_output=True,
                                  text=True).stdout.split()
        assert marker.exists() and children, "the watched child never ran the manager"
    finally:
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
    child = children[0]
    for _ in range(300):
        if not os.path.exists(f"/proc/{child}") or \
                open(f"/proc/{child}/stat").read().split()[2] == "Z":
            break
        time.sleep(0.1)
    else:
        os.kill(int(child), signal.SIGKILL)
        raise AssertionError("the child outlived the watching process")


def test_api_seed_is_bounded():
    """seed=10**400 is refused at the door (the fuzzer saw run_study spend minutes)."""
    from vistalab._core import DomainError
    from vistalab.conformance import check, run_study, tail_trimmer

    with pytest.raises(DomainError, match=r"0 <= seed < 2\*\*64"):
        check(tail_trimmer, seed=10**400)
    with pytest.raises(DomainError, match=r"0 <= seed < 2\*\*64"):
        run_study(out="unused", peers=["tokentrim"], examples=2, seed=2**64)
