"""The conformance runner in control: the manager runs in a child process.

``vista-lab conformance MANAGER`` imports and runs MANAGER in a fresh Python
process (:func:`run_isolated`); this process only watches it. The child reports
over a pipe when the manager has imported and when each call of the manager's
own code (the trimmer or factory, ``register``/``render``, ``placeholder``,
``recover``, ``min_budget``) begins and returns, and at the end sends its
verdict (the report's text and exit status). Whatever the manager does, the
parent ends with one verdict:

- the manager does not import within the import timeout, or raises anything
  (``SystemExit`` included) while importing: one line, exit 2;
- a call does not return within the per-call timeout and the child cannot even
  say so (the manager holds the interpreter lock, e.g. a regular expression
  that backtracks catastrophically): the child is killed, one line, exit 2;
- the child ends without a verdict (``os._exit``, a signal, a crash in native
  code): one line naming the exit status or signal and what was running, exit 2;
- an output of more than :data:`~vistalab.conformance.MAX_OUTPUT_CHARS`
  characters: the check stops, one line, exit 2.

Exit status 0 only comes with a report that says every invariant held. This
keeps the runner in control of a manager that crashes, exits, hangs or floods;
it is not a sandbox (the manager runs with the user's rights and could forge
the pipe's messages on purpose).
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from typing import Any

from vistalab._core import VistaLabError

from ._managers import ManagerProcessError

__all__ = ["run_isolated", "DEFAULT_IMPORT_TIMEOUT"]

#: Seconds the manager's module may take to import (in the child) by default.
DEFAULT_IMPORT_TIMEOUT = 60.0
#: Seconds a fresh child may take to start and import vista-lab's own suite
#: (Hypothesis, the tokenizer) before the manager is imported.
STARTUP_TIMEOUT = 300.0
#: Most bytes of the child's verdict message (a --json report with its
#: counterexamples is far smaller).
MAX_VERDICT_BYTES = 512 << 20


def _grace(timeout: float) -> float:
    """Seconds past the per-call timeout before the parent kills the child: the
    child's own timer reports an ordinary hang (ManagerTimeoutError) in that
    window; only a call that holds the interpreter lock outlives it."""
    return max(2.0, 0.5 * timeout)


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"was killed by {name}"
    return f"ended its process with exit status {code} (os._exit, or a crash in native code)"


def run_isolated(job: dict[str, Any], *, manager: str, timeout: float, child: str,
                 import_timeout: float = DEFAULT_IMPORT_TIMEOUT) -> tuple[int, str]:
    """Run one conformance job in a child process and watch it.

    Parameters
    ----------
    job : dict
        JSON data: ``{"kind": "check" | "replay", ...}``, the command's
        validated options (see ``vistalab._commands.conformance``).
    manager : str
        The manager's spec (named in every verdict line).
    timeout : float
        Seconds one call of the manager may take.
    child : str
        The Python code the child runs (``python -c``): it imports the job's
        executor and calls :func:`_child_main` with it. The caller (the
        command layer, which owns the executor) names it, so this module never
        imports the layer above it.
    import_timeout : float
        Seconds the manager's import may take.

    Returns
    -------
    tuple of (int, str)
        The exit status and the text the command prints.

    Raises
    ------
    ManagerProcessError
        The manager did not import in time, exited, was killed or held the
        interpreter past the per-call timeout.
    VistaLabError
        The child's own one-line error (the manager does not import, has the
        wrong signature, hangs, floods).
    """
    read_fd, write_fd = os.pipe()
    config = {"job": job, "fd": write_fd, "sys_path": list(sys.path)}
    try:
        proc = subprocess.Popen(
            [sys.executable, "-c", child], stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, pass_fds=(write_fd,),
            close_fds=True, start_new_session=True)
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)
    assert proc.stdin is not None and proc.stderr is not None
    try:
        proc.stdin.write(json.dumps(config).encode())
        proc.stdin.close()
    except OSError:
        pass
    try:
        return _watch(proc, read_fd, manager=manager, timeout=timeout,
                      import_timeout=import_timeout)
    finally:
        os.close(read_fd)
        if proc.poll() is None:
            _kill(proc)
        proc.stderr.close()


def _kill(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        proc.kill()
    proc.wait()


def _watch(proc: subprocess.Popen[bytes], fd: int, *, manager: str, timeout: float,
           import_timeout: float) -> tuple[int, str]:
    assert proc.stderr is not None
    err_fd = proc.stderr.fileno()
    phase = "startup"  # startup -> import -> idle <-> call
    calls = 0
    deadline: float | None = time.monotonic() + STARTUP_TIMEOUT
    pending = b""
    open_fds = {fd, err_fd}
    while fd in open_fds:
        # at most a second per wait: a child that ended while a process it started
        # keeps the pipe open is noticed by its exit, not by the pipe's end
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        ready, _, _ = select.select(list(open_fds), [], [], 1.0 if left is None
                                    else min(left, 1.0))
        if not ready and proc.poll() is not None:
            break
        if not ready and (left is None or left > 1.0):
            continue
        if not ready:
            _kill(proc)
            if phase == "import":
                raise ManagerProcessError(
                    manager, f"did not import within the import timeout of "
                    f"{import_timeout:g} s (a blocking import; the child process was "
                    "killed; raise --import-timeout if it is only slow)")
            if phase == "call":
                raise ManagerProcessError(
                    manager, f"call {calls} did not return within the per-call timeout of "
                    f"{timeout:g} s and kept the interpreter busy for {_grace(timeout):g} s "
                    "more (it holds the interpreter lock, e.g. a regular expression that "
                    "backtracks catastrophically); the child process was killed")
            raise ManagerProcessError(
                manager, f"the conformance process did not start within {STARTUP_TIMEOUT:g} s")
        if err_fd in ready:
            # the manager's own stderr: drained so it never blocks, not kept
            if not os.read(err_fd, 1 << 16):
                open_fds.discard(err_fd)
        if fd not in ready:
            continue
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            break
        pending += chunk
        if len(pending) > MAX_VERDICT_BYTES:
            _kill(proc)
            raise ManagerProcessError(manager, f"the conformance process sent more than "
                                      f"{MAX_VERDICT_BYTES >> 20} MiB")
        *lines, pending = pending.split(b"\n")
        for raw in lines:
            try:
                msg = json.loads(raw)
                event = msg["ev"]
            except (ValueError, KeyError, TypeError):
                continue  # not ours (the manager wrote to the pipe)
            if event == "ready":
                phase, deadline = "import", time.monotonic() + import_timeout
            elif event == "imported":
                phase, deadline = "idle", None
            elif event == "call":
                calls += 1
                phase, deadline = "call", time.monotonic() + timeout + _grace(timeout)
            elif event == "ret":
                phase, deadline = "idle", None
            elif event == "error":
                _finish(proc)
                raise VistaLabError(str(msg.get("line", "the conformance process failed")))
            elif event == "verdict":
                _finish(proc)
                return int(msg["status"]), str(msg["text"])
    status = proc.wait()
    _kill_group(proc)
    where = {"startup": "while the conformance process started",
             "import": "while its module was imported",
             "idle": "between calls, while the suite checked its output",
             "call": f"during call {calls}"}[phase]
    raise ManagerProcessError(manager, f"{_describe_exit(status)} {where}, before any "
                              "verdict (no report: the check did not finish)")


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill what the child left running in its process group."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass


def _finish(proc: subprocess.Popen[bytes]) -> None:
    """Give the child a moment to exit after its verdict, then kill it (a thread
    the manager left behind must not keep it alive)."""
    try:
        proc.wait(timeout=2.0)
    except subprocess.TimeoutExpired:
        _kill(proc)
    _kill_group(proc)


class _Channel:
    def __init__(self, fd: int) -> None:
        self.fd = fd

    def send(self, **msg: Any) -> None:
        data = (json.dumps(msg) + "\n").encode()
        view = memoryview(data)
        while view:
            n = os.write(self.fd, view)
            view = view[n:]


def _die_with_parent() -> None:  # pragma: no cover - runs in the child
    """Linux: the kernel kills this child when the watching process dies (even by
    SIGKILL), so a hung manager is never left running; elsewhere the next message
    to a closed pipe ends it."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() == 1:
        os._exit(1)


def _child_main(execute_job: Any) -> None:  # pragma: no cover - runs in the child
    """The child: read the job from stdin, run it with ``execute_job(job,
    imported=...)`` (the command layer's executor), send the verdict."""
    _die_with_parent()
    config = json.loads(sys.stdin.buffer.read())
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    sys.path[:] = config["sys_path"]
    channel = _Channel(int(config["fd"]))
    from vistalab._core._oneline import ONE_LINE_ERRORS, failure_line

    from . import _managers
    from ._registry import _load_named

    _load_named()  # the suite's own imports are done before the import timer starts

    _managers._WATCH.append(lambda event: channel.send(ev=event))
    channel.send(ev="ready")
    try:
        status, text = execute_job(config["job"], imported=lambda: channel.send(ev="imported"))
    except ONE_LINE_ERRORS as exc:
        line, _ = failure_line(exc)
        channel.send(ev="error", line=line.removeprefix("error: "))
    except BaseException as exc:  # noqa: BLE001 - the manager's SystemExit, or a suite bug
        from ._managers import raised

        channel.send(ev="error", line=f"the conformance check failed: {raised(exc)}")
    else:
        channel.send(ev="verdict", status=status, text=text)
    os._exit(0)
