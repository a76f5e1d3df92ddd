"""Translation validation at run time: ``Workspace(..., check_model=True)``.

Every operation a session performs on the workspace (registrations, the agent's
archive / restore / delete, reads and recoveries, renderings) is replayed into
the extracted Coq model of the engine (``theory/coq/engine``, built by
:func:`~vistalab.workspace.build_engine_model`), one long-lived model process per
workspace fed one line per operation (``theory/coq/engine/FORMAT.md``), and the
engine's state after the operation is compared with the model's. The first
disagreement raises :class:`~vistalab.workspace.ModelDisagreementError`, naming
the operation, the field, both values and how to report it.

The translation of operations into model lines and of the engine's state into
observations is the differential test's (:class:`._diff_model.ModelTranslator`,
:func:`._diff_model.engine_observation`, the driver's measuring helpers in
:mod:`._diff_drive`); the model's process and the comparison live in
:mod:`._check_model`; this module only hooks the workspace's operations.

Why an option of the constructor, implemented as a subclass: the hooks must see
every operation however the session reaches it (``register_message`` of an SDK
object, ``register_messages`` of an Anthropic turn holding three tool results,
an agent tool call through ``call_tool``): those front doors all end in the
primitive operations (``register_system`` ... ``register_tool_result``,
``archive``, ``restore``, ``delete``, ``recover``, ``read_path``, ``render``),
and only a subclass sees the calls the engine makes on itself. So
``Workspace(..., check_model=True)`` constructs an instance of a subclass
(``ModelChecked[Workspace]``, made once per engine class, so an engine subclass
is checked the same way) whose primitives run the engine's and then check; the
unchecked class is not touched, which is why the option costs nothing when off.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ._accounting import OPAQUE_PART_TOKENS, opaque_parts
from ._check_model import ModelCheck, _executable
from ._diff_drive import _payload_bytes_of_call
from ._diff_model import (
    _store_structure,
    byte_token,
    engine_observation,
    guard_offloads,
    parse_observation,
    refusal_reason,
    resolve_spec,
)
from ._errors import (
    ModelCheckError,
    ModelCoverageError,
    WorkspaceArgumentError,
    WorkspaceError,
)
from ._events import last_event
from ._handles import rejection_text
from ._sdk import plain_sdk
from ._validate import _tool_calls_iv

__all__ = ["ModelCheckedWorkspace", "checked_class", "check_model_iv"]

_BLOCK_ID = re.compile(r"B[1-9][0-9]*\Z")
#: Observation fields a rendering shows (a ``render()`` call is compared on these).
_VIEW_FIELDS = ("mode", "tokens", "total", "overhead", "conversation", "dashboard", "units",
                "render")


def check_model_iv(value: Any) -> Any:
    """``check_model``: False / True, or the path of a built model executable."""
    if isinstance(value, bool) or value is None:
        return bool(value)
    if isinstance(value, (str, os.PathLike)) and not isinstance(os.fspath(value), bytes):
        path = os.fspath(value)
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise WorkspaceArgumentError(
        "check_model", value, "must be True, False or the path of the engine model's "
        "executable file", "pass check_model=True (the model is built on demand) or "
        "check_model=str(vistalab.workspace.build_engine_model())",
    )


def _brief(name: str, *args: Any) -> str:
    parts = []
    for a in args:
        text = repr(a)
        parts.append(text if len(text) <= 40 else text[:37] + "...")
    return f"{name}({', '.join(parts)})"


# ---------------------------------------------------------------- the workspace


class ModelCheckedWorkspace:
    """The mixin of ``Workspace(..., check_model=True)``: every primitive operation
    runs the engine's own and is then replayed into the model and compared.

    Not used directly: ``Workspace(budget, ..., check_model=True)`` (or any engine
    subclass with the same argument) builds an instance of ``ModelChecked[<class>]``.
    """

    _model_check: ModelCheck | None

    def __init__(self, budget: Any, *args: Any, check_model: Any = True, **kwargs: Any) -> None:
        option = check_model_iv(check_model)
        self._model_check = None
        super().__init__(budget, *args, check_model=False, **kwargs)  # type: ignore[call-arg]
        if option is False:
            return
        exe = _executable(option)
        chk = ModelCheck(self, exe)
        self._model_check = chk
        with self._lock:  # type: ignore[attr-defined]
            chk.depth += 1
            try:
                chk.start()
            finally:
                chk.depth -= 1

    # ------------------------------------------------------------ plumbing
    @property
    def model_check(self) -> ModelCheck | None:
        """The run-time check (None when constructed with ``check_model=False``)."""
        return self._model_check

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the workspace (its event log) and end the model process."""
        try:
            super().close()  # type: ignore[misc]
        finally:
            if self._model_check is not None:
                self._model_check.close()

    def _checking(self) -> ModelCheck | None:
        chk = self._model_check
        if chk is None or chk.depth:
            return None
        if chk.failure is not None:
            raise chk.failure  # sticky: the session is not trusted after a disagreement
        return None if chk.stopped else chk

    def _run(self, operation: Callable[[], str], call: Callable[[], Any],
             line_ok: Callable[[ModelCheck, Any], tuple[str, dict[str, Any]]],
             line_refused: Callable[[ModelCheck, BaseException], tuple[str, str] | None],
             prepare: Callable[[ModelCheck], Any] | None = None) -> Any:
        """Run one primitive: the engine's, then its model line and the comparison.
        ``line_ok(check, value)`` gives the line and the observation's other fields
        after a success; ``line_refused(check, exc)`` the line and status of a
        refusal the model states (None: a refusal it states no rule for, then the
        engine's state must be unchanged)."""
        with self._lock:  # type: ignore[attr-defined]
            chk = self._checking()
            if chk is None:
                return call()
            chk.depth += 1
            try:
                before = self.state_hash()  # type: ignore[attr-defined]
                extra = prepare(chk) if prepare is not None else None
                try:
                    value = call() if extra is None else extra(call)
                except Exception as exc:
                    if isinstance(exc, ModelCheckError):
                        raise
                    got = line_refused(chk, exc) if isinstance(exc, WorkspaceError) else None
                    if got is None:
                        chk.unchanged(before, operation(), exc)
                    else:
                        chk.step(operation(), got[0], got[1])
                    raise
                line, fields = line_ok(chk, value)
                chk.step(operation(), line, "ok", result=value, **fields)
                return value
            except BaseException as exc:
                if not isinstance(exc, Exception):  # KeyboardInterrupt mid-transition
                    chk.close(f"interrupted by {type(exc).__name__} during an operation")
                raise
            finally:
                chk.depth -= 1

    # ------------------------------------------------------------ registrations
    def _plain(self, kind: str, call: Callable[[], str], content: Any, pinned: Any) -> str:
        if self._checking() is not None:
            _covered_text(f"a {kind} message", content)
        def pin(chk: ModelCheck) -> bool:
            if pinned is not None:
                return bool(pinned)
            return kind == "system" or (kind == "user" and not chk.user_seen)

        def ok(chk: ModelCheck, value: str) -> tuple[str, dict[str, Any]]:
            line = chk.tr.plain_line(kind, content, pin(chk), chk.dash())
            chk.user_seen = chk.user_seen or kind == "user"
            return line, {}

        def refused(chk: ModelCheck, exc: BaseException) -> tuple[str, str] | None:
            why = refusal_reason(exc)
            if why == "refused" or not isinstance(content, str):
                return None
            return chk.tr.plain_line(kind, content, pin(chk), chk.dash()), why

        return self._run(lambda: _brief(f"register_{kind}", content), call, ok, refused)  # type: ignore[no-any-return]

    def register_system(self, content: str, *, pinned: bool = True) -> str:
        """Register a system message (pinned by default); checked against the model."""
        return self._plain("system", lambda: super(ModelCheckedWorkspace, self)
                           .register_system(content, pinned=pinned), content, pinned)  # type: ignore[misc]

    def register_user(self, content: str, *, pinned: bool | None = None) -> str:
        """Register a user message (the first one pinned); checked against the model."""
        return self._plain("user", lambda: super(ModelCheckedWorkspace, self)
                           .register_user(content, pinned=pinned), content, pinned)  # type: ignore[misc]

    def register_assistant(self, content: str, *, pinned: bool = False) -> str:
        """Register an assistant message without tool calls; checked against the model."""
        return self._plain("assistant", lambda: super(ModelCheckedWorkspace, self)
                           .register_assistant(content, pinned=pinned), content, pinned)  # type: ignore[misc]

    def register_tool_call(self, tool_calls: Sequence[Mapping[str, Any]], *,
                           content: str | None = None) -> str:
        """Register an assistant message with tool calls; checked against the model."""
        if self._checking() is not None:
            _covered_text("a tool call's text", content)

        def ok(chk: ModelCheck, value: str) -> tuple[str, dict[str, Any]]:
            b = chk.ws.blocks[-1]
            # The calls as the engine normalised them (SDK objects, argument dicts:
            # the engine's front door, outside the model).
            got = [(c.id, c.name, c.arguments) for c in (b.tool_calls or ())]
            data = _payload_bytes_of_call(content, got)
            return chk.tr.call_line(content, got, data, chk.dash()), {}

        def refused(chk: ModelCheck, exc: BaseException) -> tuple[str, str] | None:
            why = refusal_reason(exc)
            if why == "refused":
                return None
            try:
                calls = _tool_calls_iv(plain_sdk(tool_calls, "tool_calls"))
            except WorkspaceError:
                return None
            got = [(c.id, c.name, c.arguments) for c in calls]
            data = _payload_bytes_of_call(content, got)
            return chk.tr.call_line(content, got, data, chk.dash()), why

        return self._run(  # type: ignore[no-any-return]
            lambda: _brief("register_tool_call", [
                c.get("id") if isinstance(c, Mapping) else getattr(c, "id", c)
                for c in (tool_calls or ())]),
            lambda: super(ModelCheckedWorkspace, self).register_tool_call(  # type: ignore[misc]
                tool_calls, content=content),
            ok, refused)

    def register_tool_result(self, tool_call_id: str, content: str, *,
                             name: str | None = None) -> str:
        """Register a tool result through the budget guard; checked against the model
        (the guard's decision, what it offloaded, and the state after)."""
        state: dict[str, Any] = {}
        if self._checking() is not None:
            _covered_text("a tool result", content)

        def prepare(chk: ModelCheck) -> Callable[[Callable[[], str]], str]:
            ws = chk.ws
            state["parent"] = None
            if isinstance(tool_call_id, str) and tool_call_id in ws.pending_calls:
                for b in reversed(ws.blocks):
                    if b.type.value == "tool_call" and tool_call_id in b.call_ids:
                        state["parent"] = b.id
                        break
            state["bid"] = f"B{len(ws.blocks) + 1}"
            state["before"] = {b.id: b.status.value for b in ws.blocks}
            dashes: list[int] = []
            state["dashes"] = dashes

            def run(call: Callable[[], str]) -> str:
                # The guard's evaluations, each with the dashboard it measured
                # (the model takes one dashboard cost per candidate).
                probe = ws._candidate_total
                own = ws.__dict__.get("_candidate_total")  # another probe already set

                def recording() -> int:
                    dashes.append(chk.dash())
                    return probe()  # type: ignore[no-any-return]

                ws._candidate_total = recording
                try:
                    return call()
                finally:
                    if own is None:
                        del ws._candidate_total
                    else:
                        ws._candidate_total = own

            return run

        def ok(chk: ModelCheck, value: str) -> tuple[str, dict[str, Any]]:
            ws = chk.ws
            b = ws.blocks[-1]
            eff = last_event(ws).effects
            if b.rejected:
                notice = b.content or ""
                guard = "reject:" + str(eff.get("decided_by", "cap"))
            else:
                notice = rejection_text(current=0, limit=0, attempted=0, cap=0)
                guard = "admit"
            before = state["before"]
            offloaded, _ = guard_offloads(ws.blocks, before, eff)
            dashes = [*state["dashes"], chk.dash()]
            line = chk.tr.result_line(
                bid=b.id, call_id=tool_call_id, name=b.name, parent=b.parent,
                data=content.encode("utf-8"), notice=notice, dashes=dashes,
            )
            return line, {"guard": guard, "offloaded": offloaded}

        def refused(chk: ModelCheck, exc: BaseException) -> tuple[str, str] | None:
            why = refusal_reason(exc)
            if why == "refused" or not isinstance(content, str) or not isinstance(
                    tool_call_id, str) or not tool_call_id:
                return None
            line = chk.tr.result_line(
                bid=state["bid"], call_id=tool_call_id, name=None, parent=state["parent"],
                data=content.encode("utf-8"), notice="", dashes=[chk.dash()],
            )
            return line, why

        return self._run(  # type: ignore[no-any-return]
            lambda: _brief("register_tool_result", tool_call_id, content),
            lambda: super(ModelCheckedWorkspace, self).register_tool_result(  # type: ignore[misc]
                tool_call_id, content, name=name),
            ok, refused, prepare)

    # ------------------------------------------------------------ actions
    def _action(self, kind: str, call: Callable[[], Any], spec: Any, args: tuple[Any, ...]
                ) -> Any:
        units: list[list[str] | None] = [None]

        def prepare(chk: ModelCheck) -> None:
            ws = chk.ws
            units[0] = resolve_spec(spec, ws.blocks, ws.groups) if isinstance(spec, str) else None
            return None

        def ok(chk: ModelCheck, value: Any) -> tuple[str, dict[str, Any]]:
            got = units[0]
            if got is None:
                # The engine accepted a selection its own spec rules refuse.
                got = ["?spec"]
            line = f"{kind} units={','.join(got) or '-'}"
            if kind == "archive":
                line += chk._archive_costs(value)
            return line + f" dash={chk.dash()}", {}

        def refused(chk: ModelCheck, exc: BaseException) -> tuple[str, str] | None:
            why = refusal_reason(exc)
            got = units[0]
            if why == "refused" or got is None:
                return None
            h = " h=0/0" if kind == "archive" else ""
            return f"{kind} units={','.join(got) or '-'}{h} dash={chk.dash()}", why

        return self._run(lambda: _brief(kind, spec, *args), call, ok, refused, prepare)

    def archive(self, block_id: str, replacement: str = "") -> Any:
        """Archive blocks or groups (the paper's archive); checked against the model."""
        return self._action("archive", lambda: super(ModelCheckedWorkspace, self).archive(  # type: ignore[misc]
            block_id, replacement), block_id, (replacement,) if replacement else ())

    def delete(self, block_id: str, reason: str) -> Any:
        """Delete blocks or groups permanently; checked against the model."""
        return self._action("delete", lambda: super(ModelCheckedWorkspace, self).delete(  # type: ignore[misc]
            block_id, reason), block_id, (reason,))

    def restore(self, block_id: str) -> Any:
        """Restore archived units one level; checked against the model."""
        return self._action("restore", lambda: super(ModelCheckedWorkspace, self).restore(  # type: ignore[misc]
            block_id), block_id, ())

    def _run_tool(self, action: str, args: Mapping[str, Any]) -> Any:
        # The agent tools turn a WorkspaceError into an error text for the agent;
        # a disagreement with the model must reach the caller instead.
        chk = self._model_check
        earlier = None if chk is None else chk.failure
        out = super()._run_tool(action, args)  # type: ignore[misc]
        if chk is not None and chk.failure is not None and chk.failure is not earlier:
            raise chk.failure
        return out

    # ------------------------------------------------------------ reads
    def recover(self, block_id: str) -> bytes:
        """The exact bytes of a live block; checked against the model's ``recover``."""
        call = lambda: super(ModelCheckedWorkspace, self).recover(block_id)  # type: ignore[misc]  # noqa: E731
        if not (isinstance(block_id, str) and _BLOCK_ID.match(block_id)):
            # Not a block ID the model can name: the engine refuses it; checked
            # only to change nothing.
            return self._run(lambda: _brief("recover", block_id), call,  # type: ignore[no-any-return]
                             _no_line("recover of a unit that is not a block"),
                             lambda chk, exc: None)

        def ok(chk: ModelCheck, value: bytes) -> tuple[str, dict[str, Any]]:
            return f"recover unit={block_id}", {"recovered": byte_token(value)}

        def refused(chk: ModelCheck, exc: BaseException) -> tuple[str, str] | None:
            why = "refused:deleted" if "deleted" in str(exc) else "refused:unknown"
            return f"recover unit={block_id}", why

        return self._run(lambda: _brief("recover", block_id), call, ok, refused)  # type: ignore[no-any-return]

    def read_path(self, path: str, selector: Any = None) -> bytes:
        """Bytes of a payload (or part of it); checked against the model's store."""
        call = lambda: super(ModelCheckedWorkspace, self).read_path(path, selector)  # type: ignore[misc]  # noqa: E731
        with self._lock:  # type: ignore[attr-defined]
            chk = self._checking()
            if chk is None:
                return call()  # type: ignore[no-any-return]
            chk.depth += 1
            try:
                data = call()
                _check_read(chk, path, selector, data)
                return data  # type: ignore[no-any-return]
            finally:
                chk.depth -= 1

    def render(self, format: str = "openai") -> Any:
        """The rendering sent to the model; checked against the model's rendering."""
        call = lambda: super(ModelCheckedWorkspace, self).render(format)  # type: ignore[misc]  # noqa: E731
        with self._lock:  # type: ignore[attr-defined]
            chk = self._checking()
            if chk is None:
                return call()
            chk.depth += 1
            try:
                r = call()
                _check_rendering(chk, r, format)
                return r
            finally:
                chk.depth -= 1

    # ------------------------------------------------------------ copies
    def fork(self, **kwargs: Any) -> Any:
        """An independent copy; a plain fork is checked too (its own model process,
        fed this session's history), a ``substitute`` fork is not (its history
        differs from the one the model was fed)."""
        with self._lock:  # type: ignore[attr-defined]
            chk = self._model_check
            if chk is not None:
                chk.depth += 1
            try:
                new = super().fork(**kwargs)  # type: ignore[misc]
            finally:
                if chk is not None:
                    chk.depth -= 1
            new._model_check = None
            if chk is not None and chk.active and not kwargs.get("substitute"):
                new._model_check = chk.clone(new)
            return new

    @classmethod
    def load(cls, *args: Any, **kwargs: Any) -> Any:
        """Refused: a snapshot starts mid-session, the model starts empty."""
        raise ModelCoverageError(
            "a workspace loaded from a snapshot (the model replays a session from its "
            "start)", "load it without check_model (Workspace.load), or rebuild it under "
            "the check from its event log: Workspace(...) with check_model=True fed the "
            "same operations",
        )

    @classmethod
    def salvage(cls, *args: Any, **kwargs: Any) -> Any:
        """Refused, as :meth:`load`."""
        return cls.load(*args, **kwargs)


def _no_line(what: str) -> Callable[[ModelCheck, Any], tuple[str, dict[str, Any]]]:
    def ok(chk: ModelCheck, value: Any) -> tuple[str, dict[str, Any]]:
        raise ModelCoverageError(what, "call it without check_model")

    return ok


def _check_read(chk: ModelCheck, path: Any, selector: Any, data: bytes) -> None:
    """What ``read_path`` returned against the payload the model's store holds at
    that key (a block's token, or a group payload's entries)."""
    ws = chk.ws
    root = ws.store.root
    op = _brief("read_path", path, *((selector,) if selector is not None else ()))
    if not isinstance(path, str) or not path.startswith(root + "/"):
        return  # a path the engine resolved another way: not a payload key the model names
    key = path[len(root) + 1:]
    model = chk.model_store()
    sel = selector if isinstance(selector, str) and selector else None
    if key in model and sel is not None and sel.startswith("member="):
        bid = sel[len("member="):]
        if _BLOCK_ID.match(bid):  # the model's recover finds a block wherever it is
            chk.step(op, f"recover unit={bid}", "ok", recovered=byte_token(data), result=data)
        return
    index = chk.operations
    chk.operations += 1
    if key not in model:
        chk.disagree(index, op, (f"store: engine read {len(data)} bytes at {key} vs model "
                                 f"no payload at {key}",), data)
        return
    whole = data if sel is None else chk.store_bytes().get(key, b"")
    if key.startswith("G"):
        got = _store_structure({key: whole})[0].partition(":")[2]
    else:
        got = byte_token(whole)
    if got != model[key]:
        chk.disagree(index, op, (f"store: engine {key}:{got} vs model {key}:{model[key]}",), data)
    if sel is not None and data not in whole:
        chk.disagree(index, op, (f"store: engine a range of {len(data)} bytes that is not part "
                                 f"of {key} vs model a part of {key}",), data)


def _check_rendering(chk: ModelCheck, r: Any, format: Any) -> None:
    """A rendering the session asked for, against the model's latest observation
    (the fields a rendering shows; an Anthropic one by its turns)."""
    index = chk.operations
    chk.operations += 1
    op = _brief("render", format)
    model = parse_observation(chk.last)
    if format != "openai":
        mode = "normal" if r.mode == "normal" else "management"
        diffs = [] if mode == model.get("mode") else [
            f"mode: engine {mode} vs model {model.get('mode')}"]
        turns = _anthropic_turns(r.messages)
        # (Gemini contents have parts, not blocks: the mode is what is compared)
        want = _model_turns(model.get("turns")) if format != "gemini" else None
        if want is not None and turns != want:
            diffs.append(f"turns: engine {','.join(turns) or '-'} vs model "
                         f"{','.join(want) or '-'}")
        chk.disagree(index, op, diffs, r)
        return
    engine = parse_observation(engine_observation(
        status=model.get("status", "ok"), ws=chk.ws, rendering=r, tokens=chk.recount(r),
        store={}, guard="-", offloaded=(), recovered="", tok=chk.tok, translator=chk.tr,
    ))
    diffs = [f"{f}: engine {engine.get(f, '?')} vs model {model.get(f, '?')}"
             for f in _VIEW_FIELDS if engine.get(f, "?") != model.get(f, "?")
             and not (f == "tokens" and model.get("mode") == "management"
                      and engine.get(f, "?").isdigit() and model.get(f, "?").isdigit()
                      and int(engine[f]) <= int(model[f]))]
    chk.disagree(index, op, diffs, r)


def _anthropic_turns(messages: Sequence[Mapping[str, Any]]) -> list[str]:
    """An Anthropic request's turns as ``<side>:<tool results>:<tool uses>`` counts
    (text parts are not compared: the model counts merged text messages, and a
    call message's own text is a part of its turn, not a message)."""
    out = []
    for m in messages:
        content = m.get("content")
        parts = content if isinstance(content, list) else []
        kinds = [p.get("type") for p in parts if isinstance(p, Mapping)]
        out.append(f"{m.get('role')}:{kinds.count('tool_result')}:{kinds.count('tool_use')}")
    return out


def _model_turns(field: str | None) -> list[str] | None:
    """The model's ``turns`` field as the same counts (ids are the model's own)."""
    if field is None:
        return None
    if field == "-":
        return []
    out = []
    for t in field.split(","):
        side, results, uses, _texts = t.split(":")
        n = [0 if x == "-" else len(x.split(";")) for x in (results, uses)]
        out.append(f"{side}:{n[0]}:{n[1]}")
    return out


def _covered_text(what: str, text: Any) -> None:
    """Refuse (before the engine runs, so nothing changes) a text holding an
    opaque part's stand-in line: the engine charges such a part a fixed estimate
    that the model's cost translation does not measure."""
    if isinstance(text, str) and "[opaque " in text and opaque_parts(text):
        raise ModelCoverageError(
            f"{what} with opaque content parts (images, audio, files: the engine charges "
            f"each a fixed {OPAQUE_PART_TOKENS}-token estimate that the model's cost "
            "translation does not measure)",
            "send text parts only under check_model, or run this session without it",
        )


# ---------------------------------------------------------------- the classes

_CLASSES: dict[type, type] = {}
_CLASSES_LOCK = threading.Lock()


def checked_class(cls: type) -> type:
    """``ModelChecked[cls]``: the engine class ``cls`` with its operations checked
    against the model (made once per class)."""
    if issubclass(cls, ModelCheckedWorkspace):
        return cls
    with _CLASSES_LOCK:
        got = _CLASSES.get(cls)
        if got is None:
            got = type(f"ModelChecked[{cls.__name__}]", (ModelCheckedWorkspace, cls),
                       {"__module__": cls.__module__, "__doc__": cls.__doc__})
            _CLASSES[cls] = got
        return got
