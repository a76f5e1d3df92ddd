"""The model side of ``Workspace(..., check_model=True)``: the model's executable fed one
line per operation, and the check that compares the engine's state with each observation."""

from __future__ import annotations

import contextlib
import re
import subprocess
import tempfile
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

from ._dashboard import DASHBOARD_ROLE
from ._diff_drive import _CountCache, _Driver
from ._diff_model import (
    ModelTranslator,
    compare_observations,
    engine_observation,
    parse_observation,
)
from ._diff_texts import message_cost
from ._errors import (
    ModelCheckError,
    ModelCheckUnavailableError,
    ModelCoverageError,
    ModelDisagreementError,
)

__all__ = ["ModelCheck"]

_DIFF = re.compile(r"(\w+): engine (.*) vs model (.*)\Z", re.S)


def _executable(option: Any) -> str:
    if isinstance(option, str):
        return option
    from ._model import EngineModelBuildError, EngineModelUnavailableError, build_engine_model

    try:
        return str(build_engine_model())
    except (EngineModelUnavailableError, EngineModelBuildError) as exc:
        raise ModelCheckUnavailableError(str(exc)) from exc


# ---------------------------------------------------------------- the model process


class _ModelProcess:
    """The model's executable, fed one line at a time (one observation per line)."""

    def __init__(self, exe: str) -> None:
        self.exe = exe
        self.err = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        try:
            self.proc: subprocess.Popen[str] | None = subprocess.Popen(
                [exe], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err,
                text=True, encoding="utf-8", bufsize=1,
            )
        except OSError as exc:
            self.err.close()
            raise ModelCheckUnavailableError(f"the model executable {exe} does not run "
                                             f"({exc})") from exc

    def feed(self, line: str) -> str:
        proc = self.proc
        if proc is None or proc.stdin is None or proc.stdout is None:
            raise ModelCheckError("check_model: the model process is closed (the workspace "
                                  "was closed); construct a new workspace")
        try:
            proc.stdin.write(line + "\n")
            proc.stdin.flush()
            out = proc.stdout.readline()
        except OSError:
            out = ""
        if not out:
            try:
                code: int | None = proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                code = None
            self.err.seek(0)
            why = self.err.read().decode("utf-8", "replace").strip()[-300:]
            raise ModelCheckError(
                f"check_model: the model process {self.exe} stopped (exit status {code}) on "
                f"the line {line[:200]!r}: {why or 'no message'}; rebuild it with "
                "vistalab.workspace.build_engine_model()"
            )
        return out.rstrip("\n")

    def close(self) -> None:
        _shutdown(self.proc, self.err)
        self.proc = None

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


def _shutdown(proc: subprocess.Popen[str] | None, err: Any) -> None:
    """End the model process (end of input, then wait; killed if it lingers) and
    reap it, so no zombie is left behind."""
    if proc is not None:
        with contextlib.suppress(OSError, ValueError):
            if proc.stdin is not None:
                proc.stdin.close()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        with contextlib.suppress(OSError, ValueError):
            if proc.stdout is not None:
                proc.stdout.close()
    with contextlib.suppress(OSError, ValueError):
        err.close()


# ---------------------------------------------------------------- the check


class ModelCheck(_Driver):
    """The run-time check of one workspace against the model (``ws.model_check``).

    The differential driver's measuring helpers (``dash``, ``rendering``,
    ``recount``, ``store_bytes``, the archive costs) are inherited; this class
    does not build an engine, it watches the user's.

    Attributes
    ----------
    executable : str
        The model's executable.
    operations : int
        Operations checked so far (the construction counts as operation 0).
    stopped : str
        Why checking stopped ("" while it runs): the workspace was closed, the
        first disagreement, or :meth:`stop`.
    failure : ModelDisagreementError or None
        The first disagreement. While it is set, every further operation on the
        workspace raises it again (a caller that catches ``WorkspaceError``
        cannot lose it); :meth:`stop` clears it and lets the session go on
        unchecked.
    """

    def __init__(self, ws: Any, exe: str, *, lines: Sequence[str] = (),
                 ids: Mapping[str, str] | None = None, user_seen: bool = False) -> None:
        self._ws = weakref.ref(ws)  # no cycle: the workspace owns its check
        self.executable = exe
        self.modelled = True
        self.budget = int(ws.budget)
        self.tok = _CountCache(ws.tokenizer)
        self.tr = ModelTranslator(self.tok, self.budget, int(ws.hard_limit), ws.store.root)
        self.counter = self.tr.counter  # the independent counter the driver measures with
        if ids:
            self.tr.ids.update(ids)
        self._r_key: Any = None
        self._r: Any = None
        self._store_bytes: dict[str, bytes] | None = None
        self._tools_key: Any = None
        self._tools_cost = 0
        self.user_seen = user_seen
        self.depth = 0
        self.operations = 0
        self.stopped = ""
        self.lines: list[str] = []
        self.last = ""  # the model's latest observation
        self.failure: ModelDisagreementError | None = None
        self.model = _ModelProcess(exe)
        self._finalizer = weakref.finalize(ws, _shutdown, self.model.proc, self.model.err)
        if lines:
            for line in lines:
                self.last = self.model.feed(line)
            self.lines = list(lines)

    @property
    def ws(self) -> Any:  # type: ignore[override]
        ws = self._ws()
        if ws is None:
            raise ModelCheckError("check_model: the workspace is gone")
        return ws

    @property
    def active(self) -> bool:
        """Whether operations are still checked."""
        return not self.stopped

    # ------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Feed the ``init`` line (the workspace just constructed) and compare."""
        ws = self.ws
        line = self.tr.init_line(ws, self.dash())
        if getattr(ws, "cache_prefix", False) and "cache_prefix=1" not in line:
            self.close("cache_prefix=True is outside the model")
            raise ModelCoverageError(
                "cache_prefix=True (the management rendering that keeps the cached prefix, "
                "and the guard order that goes with it)",
                "construct the workspace with cache_prefix=False to run it under "
                "check_model, or without check_model",
            )
        self.step("Workspace(...)", line, "ok")

    def close(self, why: str = "the workspace was closed") -> None:
        """Stop checking and end the model process (idempotent)."""
        if not self.stopped:
            self.stopped = why
        self._finalizer.detach()
        self.model.close()

    def stop(self) -> None:
        """Stop checking (after a disagreement: clear it); the workspace goes on
        unchecked, every payload still readable."""
        self.failure = None
        self.close("stopped by the caller")

    def clone(self, ws: Any) -> ModelCheck:
        """The check of a fork: a new model process fed this one's history."""
        new = ModelCheck(ws, self.executable, lines=self.lines, ids=self.tr.ids,
                         user_seen=self.user_seen)
        new.operations = self.operations
        # the fork's init line was this session's: the translator learns the
        # options from it, so carry them over (the management rendering's
        # classification depends on cache_prefix)
        new.tr.cache_prefix = self.tr.cache_prefix
        new.tr.keep_pending = self.tr.keep_pending
        if new.last != self.last:
            new.close("the model's replay differs")
            raise ModelCheckError("check_model: the model replayed this session's history "
                                  "into another observation (the model is not deterministic)")
        return new

    # ------------------------------------------------------------ checking
    def store_bytes(self) -> dict[str, bytes]:
        """The store's payloads, without those a snapshot still needs (released
        since the last ``save``: the model has no snapshots and drops them at once)."""
        got = super().store_bytes()
        doomed = getattr(self.ws, "_doomed", ())
        return {k: v for k, v in got.items() if k not in doomed} if doomed else got

    def step(self, operation: str, line: str, status: str, guard: str = "-",
             offloaded: Sequence[str] = (), recovered: str = "", result: Any = None) -> None:
        """Feed one line, observe the engine, raise at a disagreement."""
        r = self.rendering()
        if r.mode != "normal" and not line.startswith("recover"):
            # the management dashboard's cost, counted independently on its text
            md = message_cost({"role": DASHBOARD_ROLE, "content": r.dashboard}, self.tr.counter)
            line = f"{line} mdash={md}"
        self.lines.append(line)
        model = self.model.feed(line)
        self.last = model
        engine = engine_observation(
            status=status, ws=self.ws, rendering=r, tokens=self.recount(r),
            store=self.store_bytes(), guard=guard, offloaded=offloaded,
            recovered=recovered, tok=self.tok, translator=self.tr,
        )
        index = self.operations
        self.operations += 1
        self.disagree(index, operation, compare_observations(engine, model), result)

    def disagree(self, index: int, operation: str, diffs: Sequence[str], result: Any) -> None:
        if not diffs:
            return
        m = _DIFF.match(diffs[0])
        field, ev, mv = (m.group(1), m.group(2), m.group(3)) if m else ("?", diffs[0], "")
        err = ModelDisagreementError(index, operation, field, ev, mv, differences=tuple(diffs),
                                     model_input="\n".join(self.lines) + "\n", result=result)
        self.close(f"operation {index}, {operation}: the engine and the model disagree on "
                   f"{field}")
        self.failure = err
        raise err

    def unchanged(self, before: str, operation: str, exc: BaseException) -> None:
        """A refusal the model states no rule for (argument checks, store failures):
        the engine says nothing changed, so its state hash must be the same."""
        after = self.ws.state_hash()
        if after != before:
            self.disagree(self.operations, operation, (
                f"state: engine changed its state although it refused ({type(exc).__name__}) "
                f"vs model a refusal changes nothing",), None)

    def model_store(self) -> dict[str, str]:
        field = parse_observation(self.last).get("store", "-")
        out: dict[str, str] = {}
        for entry in _split_store(field):
            key, _, value = entry.partition(":")
            out[key] = value
        return out


def _split_store(field: str) -> list[str]:
    """The store field's entries (group entries hold commas only inside [...])."""
    if field in ("", "-"):
        return []
    out: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in field:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return out
