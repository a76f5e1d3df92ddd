"""Exceptions of the workspace engine (independent of theory/ and sims/).

One root, :class:`WorkspaceError`; each subclass also inherits the matching
builtin so callers can catch ``ValueError`` / ``KeyError`` / ``PermissionError``.
Every message names the offending value, the rule it breaks and the fix.
"""

from __future__ import annotations

import functools as _functools
import re as _re
from collections.abc import Iterable
from collections.abc import Mapping as _Mapping
from typing import Any

from vistalab._core import DomainError, VistaLabError
from vistalab._core import UnknownNameError as _CoreUnknownNameError

__all__ = [
    "WorkspaceError",
    "WorkspaceArgumentError",
    "BlockSpecError",
    "UnknownBlockError",
    "UnknownNameError",
    "BlockStateError",
    "ProtocolOrderError",
    "BudgetConfigError",
    "PayloadIntegrityError",
    "PathEscapeError",
    "PayloadConflictError",
    "TraceError",
    "ReplayMismatchError",
    "SnapshotError",
    "SnapshotWriteError",
    "ModelCheckError",
    "ModelDisagreementError",
    "ModelCoverageError",
    "ModelCheckUnavailableError",
    "StorageError",
]


class WorkspaceError(VistaLabError):
    """Root of every error the workspace engine raises on purpose (itself under the one
    vista-lab root, :class:`vistalab._core.VistaLabError`)."""


class WorkspaceArgumentError(WorkspaceError, DomainError):
    """An argument breaks a rule of the function that received it.

    Attributes
    ----------
    parameter : str
        Name of the offending parameter.
    value : Any
        The value received.
    rule : str
        The rule it breaks, phrased as "must be ...".
    fix : str
        What to do instead.
    """

    max_repr = 120

    def __init__(self, parameter: str, value: Any, rule: str, fix: str = "") -> None:
        DomainError.__init__(self, parameter, value, rule, fix)


class BlockSpecError(WorkspaceArgumentError):
    """A block selector such as ``"B3,B4"`` / ``"B10-B20"`` / ``"G2"`` is malformed."""


class BudgetConfigError(WorkspaceArgumentError):
    """The budget cannot hold the management rendering (refused rather than deadlock)."""


class _KeyMessageMixin:
    message: str

    def __str__(self) -> str:  # KeyError would repr() the message
        return self.message


class UnknownBlockError(_KeyMessageMixin, WorkspaceError, KeyError):
    """A block or group ID is well formed but does not name a live unit."""

    def __init__(self, unit_id: str, detail: str) -> None:
        self.unit_id = unit_id
        self.message = f"{unit_id} {detail}"
        super().__init__(self.message)


class UnknownNameError(WorkspaceError, _CoreUnknownNameError):
    """A registered name (tokenizer, tool, selector kind) is not known."""

    def __init__(self, kind: str, name: str, known: Iterable[str]) -> None:
        _CoreUnknownNameError.__init__(self, kind, name, known)


class BlockStateError(WorkspaceError, ValueError):
    """The action is not allowed for the unit's current status (pinned, deleted...)."""

    def __init__(self, unit_id: str, problem: str, fix: str = "") -> None:
        self.unit_id = unit_id
        self.problem = problem
        self.fix = fix
        msg = f"{unit_id} {problem}"
        if fix:
            msg += f"; {fix}"
        super().__init__(msg)


class ProtocolOrderError(WorkspaceError, ValueError):
    """A registration would break the tool-call protocol (orphan or duplicate result...)."""


class PayloadIntegrityError(WorkspaceError, ValueError):
    """A stored payload is missing or its bytes no longer match the recorded sha256."""

    def __init__(self, key: str, problem: str) -> None:
        self.key = key
        self.problem = problem
        super().__init__(f"payload {key!r}: {problem}")


class PathEscapeError(WorkspaceError, PermissionError, ValueError):
    """A path points outside the archive folder (traversal, symlink) or is not a payload."""

    def __init__(self, path: str, problem: str) -> None:
        self.path = path
        self.problem = problem
        msg = f"path {path!r} {problem}"
        super().__init__(msg)

    def __str__(self) -> str:  # OSError would format (errno, strerror)
        return str(self.args[0])


class PayloadConflictError(VistaLabError, FileExistsError):
    """A payload file already holds other bytes that this store or workspace did
    not write: writing would destroy them, so the write is refused.

    A store failure (like a full disk), not a refused action: it is an
    ``OSError`` and deliberately not a :class:`WorkspaceError`, so the engine's
    tool path reports it as ``ToolFailure.STORE`` (nothing changed, nothing
    logged) and a replay stops with one line.
    """

    def __init__(self, key: str, folder: str, problem: str) -> None:
        self.key = key
        self.folder = folder
        self.problem = problem
        super().__init__(
            f"payload {key!r} in {folder} {problem}; nothing is ever overwritten that this "
            "workspace did not write itself (another workspace's archive, or your own file, "
            "would be lost). Use a fresh archive folder, or load the workspace that owns "
            "these payloads (Workspace.load)"
        )

    def __str__(self) -> str:  # OSError would format (errno, strerror)
        return str(self.args[0])


class TraceError(WorkspaceError, ValueError):
    """A conversation trace is malformed; names the message index and the problem."""

    def __init__(self, index: int | None, problem: str, *, source: str = "") -> None:
        self.index = index
        self.problem = problem
        where = f"{source}: " if source else ""
        at = f"message {index}: " if index is not None else ""
        super().__init__(f"malformed trace: {where}{at}{problem}")


class ReplayMismatchError(WorkspaceError, ValueError):
    """Replaying an event log did not reproduce the recorded canonical hash."""

    def __init__(self, seq: int, expected: str, got: str) -> None:
        self.seq = seq
        self.expected = expected
        self.got = got
        super().__init__(
            f"event {seq}: replay produced state hash {got[:16]}... but the log records "
            f"{expected[:16]}...; the log was edited or written by a different engine version"
        )


class SnapshotError(WorkspaceError, ValueError):
    """A saved workspace cannot be loaded as it is: names the file, the record
    (``block B4``, ``group G2``, ``field 'turn'``) and the problem.

    ``Workspace.salvage`` loads what is intact when the problem is lost or
    damaged content (payload files, edited texts)."""

    def __init__(self, path: str, where: str, problem: str, fix: str = "") -> None:
        self.path = path
        self.where = where
        self.problem = problem
        tail = f"; {fix}" if fix else ""
        super().__init__(f"snapshot {path}: {where} {problem}{tail}")


class SnapshotWriteError(WorkspaceError, OSError):
    """``Workspace.save`` could not write its snapshot (a full disk, a folder made
    read-only meanwhile): names the path and the cause. Nothing changed: the
    previous snapshot at ``path``, if any, and the payloads it needs are intact.

    Still an ``OSError`` carrying the original ``errno`` and ``strerror``, so code
    that caught the raw ``OSError`` keeps working.

    Attributes
    ----------
    path : str
        The snapshot path given to ``save``.
    problem : str
        What failed (the operating system's reason).
    """

    def __init__(self, path: str, problem: str, *, errno: int | None = None) -> None:
        self.path = path
        self.problem = problem
        msg = (
            f"cannot save the workspace to {path}: {problem}; nothing was changed (an "
            "earlier snapshot there, and the payloads it needs, are intact); free space "
            "or choose another path, then save again"
        )
        super().__init__(msg)
        self.errno = errno  # type: ignore[misc]
        self.strerror = problem  # type: ignore[misc]

    def __str__(self) -> str:  # OSError would format (errno, strerror)
        return str(self.args[0])


class ModelCheckError(WorkspaceError, RuntimeError):
    """Root of the errors of ``Workspace(..., check_model=True)``, the run-time
    check of the engine against its extracted Coq model (translation validation,
    ``docs/guide/engine-differential.md``)."""


#: How to report a disagreement (the message of :class:`ModelDisagreementError`).
MODEL_REPORT_HINT = (
    "this is a bug in vista-lab's engine (or in its model): report it to the vista-lab "
    "maintainers with this message and the error's model_input (the model's input so far, "
    "one operation per line, theory/coq/engine/FORMAT.md; piping it into the executable of "
    "vistalab.workspace.build_engine_model() replays the model's side)"
)


class ModelDisagreementError(ModelCheckError):
    """The engine and its Coq model disagree after an operation of a session run
    under ``check_model=True``.

    The operation took effect in the engine (what it returned is ``result``). Every
    later operation on the workspace raises this error again, until
    ``ws.model_check.stop()`` lets the session go on unchecked.

    Attributes
    ----------
    index : int
        Number of the operation in the session (0: the workspace's construction).
    operation : str
        The operation, e.g. ``"register_tool_result('call_7', ...)"``.
    field : str
        The observation field that disagreed (``guard``, ``units``, ``render``,
        ``store``, ``recovered``, ...; theory/coq/engine/FORMAT.md).
    engine_value, model_value : str
        That field as the engine shows it and as the model computes it.
    differences : tuple of str
        Every field that disagreed (``field: engine X vs model Y``).
    model_input : str
        The model's input lines so far (the last one is this operation's).
    result : Any
        What the operation returned in the engine (None if it raised).
    """

    def __init__(self, index: int, operation: str, field: str, engine_value: str,
                 model_value: str, *, differences: tuple[str, ...] = (),
                 model_input: str = "", result: Any = None) -> None:
        self.index = index
        self.operation = operation
        self.field = field
        self.engine_value = engine_value
        self.model_value = model_value
        self.differences = differences or (f"{field}: engine {engine_value} vs model "
                                           f"{model_value}",)
        self.model_input = model_input
        self.result = result
        more = len(self.differences) - 1
        also = f" (and {more} more field{'s' if more > 1 else ''})" if more > 0 else ""
        super().__init__(
            f"check_model: after operation {index}, {operation}, the engine and its Coq "
            f"model disagree on {field!r}: engine {_short(engine_value)}, model "
            f"{_short(model_value)}{also}; {MODEL_REPORT_HINT}"
        )


class ModelCoverageError(ModelCheckError, NotImplementedError):
    """A session under ``check_model=True`` asked for something the Coq model of
    the engine does not cover, so it cannot be checked (nothing was changed).

    Attributes
    ----------
    what : str
        What the model does not cover.
    fix : str
        What to do instead (often: run this part without ``check_model``).
    """

    def __init__(self, what: str, fix: str) -> None:
        self.what = what
        self.fix = fix
        super().__init__(f"check_model: the engine's Coq model does not cover {what}; {fix}")


class ModelCheckUnavailableError(ModelCheckError):
    """``check_model=True`` could not start the model's executable (Coq or OCaml
    missing, the build failed, or the executable does not run).

    Attributes
    ----------
    problem : str
        Why (the builder's message, naming what to install).
    """

    def __init__(self, problem: str) -> None:
        self.problem = problem
        super().__init__(
            f"check_model=True needs the engine's extracted Coq model, which is unavailable: "
            f"{problem}. Install it (then vistalab.workspace.build_engine_model() builds the "
            "executable once), pass check_model=<path of a built executable>, or construct "
            "the workspace without check_model"
        )


def _short(value: str, limit: int = 300) -> str:
    return value if len(value) <= limit else value[: limit - 3] + "..."
class StorageError(VistaLabError, OSError):
    """The payload store or the event log failed while an operation ran (a full
    disk, a read-only folder, a file-size limit, an I/O error): names the
    operation and the cause. The operation was rolled back: the state, the
    store and the event log are as they were before it, so it can be retried
    once the cause is fixed.

    Like :class:`PayloadConflictError` a store failure, not a refused action:
    an ``OSError`` carrying the original ``errno`` and ``strerror``, and
    deliberately not a :class:`WorkspaceError` (the agent-facing tools report
    it as ``ToolFailure.STORE``; nothing changed, nothing was logged).

    Attributes
    ----------
    operation : str
        The public method that was rolled back (``register_tool_result``, ...).
    problem : str
        The operating system's reason.
    """

    def __init__(self, operation: str, problem: str, *, errno: int | None = None) -> None:
        self.operation = operation
        self.problem = problem
        super().__init__(
            f"{operation} failed: the payload store or event log could not be written "
            f"({problem}); the operation was rolled back (state, store and log are as "
            "before it). Free disk space or fix the folder's permissions, then retry"
        )
        self.errno = errno  # type: ignore[misc]
        self.strerror = problem  # type: ignore[misc]

    def __str__(self) -> str:  # OSError would format (errno, strerror)
        return str(self.args[0])


#: Longest unit id accepted in a record (``B`` or ``G`` and up to 12 digits, as a
#: block spec reads them: :mod:`vistalab.workspace._spec`).
UNIT_ID_RE = _re.compile(r"[BG][1-9][0-9]{0,11}\Z")


def plain_door(kind: str, id_fields: tuple[str, ...] = ()) -> Any:
    """Decorate a ``from_plain(cls, d)`` classmethod body: ``d`` must be a mapping,
    the ``id_fields`` present must be unit ids (``B``/``G`` and at most 12 digits, so
    a 10,001-character id is refused by length), and a record missing a key or
    holding a wrong type is refused as a :class:`WorkspaceArgumentError` naming
    ``d`` (never a ``KeyError`` or ``TypeError`` from inside)."""

    def deco(fn: Any) -> Any:
        @_functools.wraps(fn)
        def wrapper(cls: Any, d: Any) -> Any:
            fix = f"pass a dict as {kind}.to_plain() returns it"
            if not isinstance(d, _Mapping):
                raise WorkspaceArgumentError("d", d, f"must be a mapping (a {kind} record)", fix)
            for name in id_fields:
                value = d.get(name)
                if value is not None and (not isinstance(value, str)
                                          or not UNIT_ID_RE.match(value)):
                    raise WorkspaceArgumentError(
                        f"d[{name!r}]", value, "must be a unit id: 'B' or 'G' and 1 to 12 "
                        "digits (at most 13 characters)", fix)
            try:
                return fn(cls, d)
            except VistaLabError:
                raise
            except (KeyError, ValueError, TypeError, AttributeError, IndexError) as exc:
                raise WorkspaceArgumentError(
                    "d", d, f"must be a whole {kind} record ({type(exc).__name__}: "
                    f"{str(exc)[:100]})", fix) from None

        return wrapper

    return deco
