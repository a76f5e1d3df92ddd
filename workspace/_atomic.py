"""All-or-nothing operations: each public transition either completes, is logged
and returns, or raises and leaves the state, the payload store and the event log
exactly as they were.

An operation's writes (payload files, its event-log record) happen before it
returns; the journal below records what the operation changed so far, so a
failure at any write (a full disk, a read-only folder, a file-size limit) rolls
it back: records restored, the derived state rebuilt from them, payload files
the operation created removed, its log record cut back. Payload deletions are
deferred until the operation has committed (its log record written), so a
deletion can never be half of an operation that then fails.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from vistalab._core import VistaLabError

from ._errors import StorageError

__all__ = ["Txn", "atomic"]

_F = TypeVar("_F", bound=Callable[..., Any])


@dataclass(slots=True)
class Txn:
    """What one operation changed so far (first-touch values), enough to undo it.

    Attributes
    ----------
    n_blocks, turn, group_seq, user_seen, acc :
        The state's scalars before the operation (``acc``: the record
        accumulator; with ``turn`` the state hash's inputs, hashed only if
        a rollback checks itself).
    pending_undo : dict
        Call ID -> the block it was pending on before the operation (None: it
        was not pending), for each call the operation added to or answered
        from the pending calls. A log of the change, not a copy: answering one
        of N pending calls stays O(1).
    records : dict
        Record ID -> its value before the operation (None: created by it).
    created : list of str
        Payload keys the operation wrote that did not exist before it.
    own_added, adopted_added, doomed_added, doomed_removed : set of str
        Changes to the workspace's payload-ownership sets.
    deletes : list of str
        Payload deletions waiting for the commit.
    """

    n_blocks: int
    turn: int
    group_seq: int
    user_seen: bool
    acc: int
    pending_undo: dict[str, str | None] = field(default_factory=dict)
    records: dict[str, Any] = field(default_factory=dict)
    created: list[str] = field(default_factory=list)
    own_added: set[str] = field(default_factory=set)
    adopted_added: set[str] = field(default_factory=set)
    doomed_added: set[str] = field(default_factory=set)
    doomed_removed: set[str] = field(default_factory=set)
    deletes: list[str] = field(default_factory=list)
    rolled_back: bool = False

    def changed(self, ws: Any) -> bool:
        """Whether the records or scalars differ from the operation's start."""
        return bool(
            self.records
            or len(ws._blocks) != self.n_blocks
            or ws._turn != self.turn
            or ws._group_seq != self.group_seq
            or ws._user_seen != self.user_seen
            or bool(self.pending_undo)
        )


def atomic(fn: _F) -> _F:
    """Run a public transition under the workspace's lock as one transaction.

    Nested calls (``register_message`` dispatching to ``register_user``) join
    the outer transaction. An ``OSError`` from the store or the log becomes a
    :class:`StorageError` after the rollback; vista-lab errors (a refused
    action, :class:`PayloadConflictError`) are re-raised as they are.
    """

    @functools.wraps(fn)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            if self._txn is not None:
                return fn(self, *args, **kwargs)
            txn = self._txn = self._begin_txn()
            try:
                out = fn(self, *args, **kwargs)
            except OSError as exc:
                self._txn = None
                self._abort_txn(txn)
                if isinstance(exc, VistaLabError) and not isinstance(exc, StorageError):
                    raise  # PayloadConflictError: names the key and the folder itself
                problem = exc.problem if isinstance(exc, StorageError) else exc.strerror
                raise StorageError(
                    fn.__name__, problem or str(exc), errno=exc.errno
                ) from exc
            except BaseException:
                self._txn = None
                self._abort_txn(txn)
                raise
            self._txn = None
            self._commit_txn(txn)
            return out

    return cast(_F, wrapper)
