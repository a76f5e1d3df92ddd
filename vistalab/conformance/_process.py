"""Managers in any language: a context manager run as a process that speaks
JSON lines over its stdin and stdout (``vista-lab conformance --command CMD``;
the protocol is documented in ``docs/guide/conformance.md``, "Managers in any
language").

One process serves every case of a run, one case at a time. For each case the
suite writes one line::

    {"type": "case", "protocol": "openai", "budget": 1200, "pinned": "system",
     "conversation": [...]}

(``conversation`` is the input in its wire format: a list of messages or
items, or for Anthropic a ``{"system", "messages"}`` document.) The manager
answers with any number of count requests, each answered by the suite on one
line, so that it counts tokens exactly as the suite does::

    -> {"type": "count", "request": [...]}
    <- {"type": "tokens", "tokens": 57}

and then exactly one final line: the request it would send, or a refusal
(below the pinned floor, where no valid request keeps the pinned messages)::

    -> {"type": "request", "request": [...]}
    -> {"type": "refuse", "reason": "budget 40 is below the pinned floor"}

A process that ends, writes a line that is not JSON, or answers with another
type is a crash of the manager on that case (the process is started again for
the next one); its stderr is kept (the last lines) for the message.
"""

from __future__ import annotations

import contextlib
import json
import shlex
import subprocess
import threading
from collections import deque
from typing import Any

from vistalab._core import DomainError

from ._managers import BudgetTooSmall

__all__ = ["CommandManager", "ProcessProtocolError", "PROTOCOL_VERSION"]

#: The version of the JSON-lines protocol (sent in every case line as ``"v"``).
PROTOCOL_VERSION = 1
#: Most bytes of one line the manager writes.
MAX_LINE_BYTES = 16 << 20


class ProcessProtocolError(RuntimeError):
    """The manager's process broke the JSON-lines protocol (a crash of the
    manager on that case)."""


class ProcessRefusal(BudgetTooSmall):
    """A ``{"type": "refuse"}`` answer: the process refuses the budget."""

    def __init__(self, budget: int, reason: str) -> None:
        super().__init__(budget)
        self.args = (f"the process refused budget {budget:,}: {reason[:200]}",)


def _close_pipes(proc: subprocess.Popen[bytes]) -> None:
    """Close an ended process's stdin and stdout (its stderr is closed by the
    thread that reads it); a pipe the process broke may fail to flush."""
    for pipe in (proc.stdin, proc.stdout):
        if pipe is not None:
            with contextlib.suppress(OSError):
                pipe.close()


class CommandManager:
    """A trimmer ``(messages, budget, count) -> request`` backed by a process.

    Parameters
    ----------
    command : str
        The command line (split like a POSIX shell does, run without a shell),
        e.g. ``"node trim.mjs"``.
    protocol : str
        The wire format of the run's conversations.
    pinned : str
        The pinned rule of the run (sent with each case).
    """

    def __init__(self, command: str, protocol: str, pinned: str = "system") -> None:
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise DomainError("--command", command, f"must be a command line ({exc})",
                              'pass e.g. --command "node trim.mjs"') from None
        if not argv:
            raise DomainError("--command", command, "must name a program",
                              'pass e.g. --command "node trim.mjs"')
        self.argv = argv
        self.command = command
        self.protocol = protocol
        self.pinned = pinned
        self.__module__ = ""
        self.__qualname__ = f"--command {command!r}"
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: deque[str] = deque(maxlen=20)
        self._lock = threading.Lock()

    def start(self) -> None:
        """Start the process (done on the first case; raises :class:`DomainError`
        naming ``--command`` when the program cannot be started)."""
        try:
            proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE)
        except OSError as exc:
            raise DomainError("--command", self.command,
                              f"cannot be started ({exc.strerror or exc})",
                              "check the program's name and that it is on PATH") from None
        self._proc = proc
        self._stderr.clear()
        threading.Thread(target=self._drain, args=(proc,), daemon=True,
                         name="vista-lab-command-stderr").start()

    def _drain(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stderr is not None
        with proc.stderr:  # closed here, at its end of file: this thread reads it
            for raw in proc.stderr:
                self._stderr.append(raw.decode("utf-8", "replace").rstrip()[:300])

    def close(self) -> None:
        """End the process (closing its stdin, then killing it if it lingers)
        and close its pipes."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            assert proc.stdin is not None
            proc.stdin.close()
            proc.wait(timeout=2)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
            proc.wait()
        _close_pipes(proc)

    def _send(self, proc: subprocess.Popen[bytes], doc: Any) -> None:
        assert proc.stdin is not None
        proc.stdin.write((json.dumps(doc, ensure_ascii=False) + "\n").encode("utf-8"))
        proc.stdin.flush()

    def _receive(self, proc: subprocess.Popen[bytes]) -> Any:
        assert proc.stdout is not None
        raw = proc.stdout.readline(MAX_LINE_BYTES + 1)
        if not raw:
            code = proc.wait()
            self._proc = None
            _close_pipes(proc)
            tail = "; stderr: " + " | ".join(list(self._stderr)[-3:]) if self._stderr else ""
            raise ProcessProtocolError(f"the process ended (exit status {code}) before its "
                                       f"answer{tail}")
        if len(raw) > MAX_LINE_BYTES:
            self._abandon()
            raise ProcessProtocolError(f"the process wrote a line of more than "
                                       f"{MAX_LINE_BYTES >> 20} MiB")
        try:
            return json.loads(raw)
        except ValueError:
            self._abandon()
            raise ProcessProtocolError(f"the process wrote a line that is not JSON: "
                                       f"{raw[:120].decode('utf-8', 'replace')!r} (stdout "
                                       "carries only protocol lines; log to stderr)") from None

    def _abandon(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.kill()
            proc.wait()
            _close_pipes(proc)

    def __call__(self, messages: Any, budget: int, count: Any) -> Any:
        """Run one case through the process.

        Parameters
        ----------
        messages : list or dict
            The conversation in the run's wire format.
        budget : int
            The token budget.
        count : callable
            The suite's counter (serves the process's count requests).

        Returns
        -------
        list or dict
            The request the process answered with.

        Raises
        ------
        BudgetTooSmall
            The process refused the budget.
        ProcessProtocolError
            The process broke the protocol or ended.
        """
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self.start()
            proc = self._proc
            assert proc is not None
            try:
                self._send(proc, {"type": "case", "v": PROTOCOL_VERSION,
                                  "protocol": self.protocol, "budget": budget,
                                  "pinned": self.pinned, "conversation": messages})
                while True:
                    msg = self._receive(proc)
                    kind = msg.get("type") if isinstance(msg, dict) else None
                    if kind == "count":
                        try:
                            answer: dict[str, Any] = {"type": "tokens",
                                                      "tokens": count(msg.get("request"))}
                        except Exception as exc:  # noqa: BLE001 - told to the process
                            answer = {"type": "error", "message": f"cannot count it: {exc}"}
                        self._send(proc, answer)
                    elif kind == "request":
                        return msg.get("request")
                    elif kind == "refuse":
                        raise ProcessRefusal(budget, str(msg.get("reason", "")))
                    else:
                        self._abandon()
                        raise ProcessProtocolError(
                            f"the process answered with {json.dumps(msg)[:120]}, not a "
                            "count, request or refuse line")
            except (BrokenPipeError, OSError) as exc:
                self._abandon()
                raise ProcessProtocolError(f"the process closed its stdin ({exc})") from None
