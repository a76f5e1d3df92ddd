"""The append-only event log: one record per registration and action, each
with the canonical workspace hash it produced."""

from __future__ import annotations

import json
import os
import warnings
from array import array
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vistalab._core import DomainError, atomic_write, check_depth, read_bounded
from vistalab._core._limits import json_loads

from ._errors import TraceError, WorkspaceArgumentError, plain_door
from ._frozen import FrozenDict, FrozenList
from ._hashing import state_hash_of

__all__ = [
    "CallParts", "Event", "EventColumns", "EventLogFile", "TornLogWarning", "call_message",
    "event_state", "last_event", "logged_event", "read_event_log",
]


class TornLogWarning(UserWarning):
    """An event log ends in a torn line (a crash or a failed write cut its last
    record short). The intact prefix is used; the warning names the file, the
    line, the byte offset and length of the tail, and where it was set aside.

    Attributes
    ----------
    path : str
        The event log.
    line : int
        The torn line's number (from 1).
    offset : int
        Byte offset of the tail in the file.
    tail : bytes
        The torn bytes themselves (nothing is dropped unreported).
    set_aside : str
        The file the tail was moved to ("" when reading only: the log is
        left as it is).
    """

    def __init__(self, path: str, line: int, offset: int, tail: bytes, set_aside: str = "") -> None:
        self.path, self.line, self.offset, self.tail, self.set_aside = (
            path, line, offset, tail, set_aside)
        where = f"; moved to {set_aside}" if set_aside else ""
        super().__init__(
            f"event log {path}: line {line} (byte {offset}, {len(tail)} bytes) is a torn "
            f"record (the write of its operation was cut short, so the operation was not "
            f"committed); the {line - 1} lines before it are used{where}"
        )


def _split_torn(data: bytes) -> tuple[bytes, bytes]:
    """(intact lines, torn tail): the tail is what follows the last newline when it
    is not a whole event record (a record complete but for its newline is kept)."""
    cut = data.rfind(b"\n") + 1
    tail = data[cut:]
    if not tail.strip():
        return data, b""
    try:
        Event.from_plain(json_loads(tail.decode("utf-8")))
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return data[:cut], tail
    return data, b""


class EventLogFile:
    """The append-only JSONL file behind ``log_path``: one ``write`` per record,
    undone (the file cut back to its length before it) when it fails, so a
    failed append leaves the log as it was. A torn tail found when the file is
    opened (a crash mid-write) is moved to ``<log>.torn-<offset>`` beside it and
    reported with :class:`TornLogWarning`, so new records never join it.

    Parameters
    ----------
    path : str or PathLike
        The log file (created if missing, appended to otherwise).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
        self._fd: int | None = os.open(self.path, flags, 0o666)
        try:
            self._recover_tail()
        except BaseException:
            self.close()
            raise

    def _recover_tail(self) -> None:
        fd = self._live()
        size = os.fstat(fd).st_size
        if size == 0:
            return
        start = max(0, size - (1 << 16))
        while True:  # find the last newline, reading backwards a window at a time
            chunk = os.pread(fd, size - start, start)
            nl = chunk.rfind(b"\n")
            if nl >= 0 or start == 0:
                break
            start = max(0, start - (1 << 16))
        cut = start + nl + 1
        tail = os.pread(fd, size - cut, cut)
        _, torn = _split_torn(tail)
        if not torn:
            return
        line = os.pread(fd, cut, 0).count(b"\n") + 1
        aside = f"{self.path}.torn-{cut}"
        atomic_write(aside, torn)
        os.ftruncate(fd, cut)
        os.fsync(fd)
        warnings.warn(TornLogWarning(self.path, line, cut, torn, aside), stacklevel=4)

    def _live(self) -> int:
        if self._fd is None:
            raise ValueError("the event log file is closed")
        return self._fd

    def append(self, line: str) -> None:
        """Append one record (``line`` plus a newline), whole or not at all.

        Raises
        ------
        OSError
            The write failed; the file was cut back to its length before it.
        """
        fd = self._live()
        data = (line + "\n").encode("utf-8")
        end = os.lseek(fd, 0, os.SEEK_END)
        try:
            view = memoryview(data)
            while view:
                n = os.write(fd, view)
                view = view[n:]
        except BaseException:
            try:
                os.ftruncate(fd, end)
            except OSError:  # the tail stays torn; the next open sets it aside
                pass
            raise

    def close(self) -> None:
        """Close the file (later appends raise)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


@dataclass(frozen=True, slots=True)
class Event:
    """One entry of the event log.

    Attributes
    ----------
    seq : int
        Position in the log, from 0 (the ``init`` event).
    op : str
        ``init``, ``register``, ``archive``, ``delete``, ``restore`` or ``read``.
    args : dict
        Plain-data arguments, enough to re-execute the operation.
    ok : bool
        False if the operation was refused (the state is then unchanged).
    result : str
        Block ID, payload path, or the error message.
    effects : dict
        What else happened (units created, blocks offloaded by the guard,
        a rejected result, tokens freed...).
    state_hash : str
        Canonical hash of the workspace after the operation.
    """

    seq: int
    op: str
    args: dict[str, Any]
    ok: bool
    result: str
    effects: dict[str, Any] = field(default_factory=dict)
    state_hash: str = ""

    def to_plain(self) -> dict[str, Any]:
        """Plain data of the event, one key per field (a line of the event log).

        Returns
        -------
        dict
            ``seq``, ``op``, ``args``, ``ok``, ``result``, ``effects`` and
            ``state_hash``.
        """
        return {
            "seq": self.seq,
            "op": self.op,
            "args": self.args,
            "ok": self.ok,
            "result": self.result,
            "effects": self.effects,
            "state_hash": self.state_hash,
        }

    def to_json(self) -> str:
        """The event as one JSON line: keys sorted, non-ASCII kept as is.

        Returns
        -------
        str
            ``json.dumps(self.to_plain(), sort_keys=True, ensure_ascii=False)``;
            for a tool result the guard refused before reading it to its end
            (``effects["attempted_at_least"]``), whose text the engine did not
            check for unpaired surrogates, the same with ``ensure_ascii=True``
            when the text holds one: JSON escapes, so the line is valid UTF-8
            and ``json.loads`` gives back the very text.
        """
        plain = self.to_plain()
        line = json.dumps(plain, sort_keys=True, ensure_ascii=False)
        if self.effects.get("attempted_at_least"):
            try:
                line.encode("utf-8")
            except UnicodeEncodeError:
                line = json.dumps(plain, sort_keys=True, ensure_ascii=True)
        return line

    @classmethod
    @plain_door("Event")
    def from_plain(cls, d: dict[str, Any]) -> Event:
        """The event :meth:`to_plain` wrote (the inverse of ``to_plain()``).

        Parameters
        ----------
        d : dict
            The plain data; ``args``, ``result``, ``effects`` and ``state_hash``
            may be absent.

        Returns
        -------
        Event
            The event.

        Raises
        ------
        KeyError
            If ``seq``, ``op`` or ``ok`` is missing.
        """
        return cls(
            seq=int(d["seq"]),
            op=str(d["op"]),
            args=dict(d.get("args") or {}),
            ok=bool(d["ok"]),
            result=str(d.get("result", "")),
            effects=dict(d.get("effects") or {}),
            state_hash=str(d.get("state_hash", "")),
        )


class CallParts(tuple):  # type: ignore[type-arg]
    """An assistant tool-call message handed to :func:`logged_event` as
    ``(content, calls)``: the text and the block's own tuple of
    :class:`~._records.ToolCall` (the log then shares them with the record
    instead of holding a dict per call)."""

    __slots__ = ()


def call_message(content: str | None, calls: tuple[Any, ...]) -> dict[str, Any]:
    """The read-only message of ``CallParts((content, calls))``: what freezing
    ``{"role": "assistant", "content": ..., "tool_calls": [c.to_openai() ...]}`` gives."""
    return FrozenDict(
        role="assistant",
        content=content,
        tool_calls=FrozenList(
            FrozenDict(
                id=c.id, type="function", function=FrozenDict(name=c.name, arguments=c.arguments)
            )
            for c in calls
        ),
    )


_TOOL_KEYS = ("role", "tool_call_id", "content")


def _tool_parts(m: Any) -> bool:
    """``m`` is exactly ``{"role": "tool", "tool_call_id": str, "content": str}``."""
    return (
        (type(m) is dict or type(m) is FrozenDict)
        and len(m) == 3
        and tuple(m) == _TOOL_KEYS
        and m["role"] == "tool"
        and type(m["tool_call_id"]) is str
        and type(m["content"]) is str
    )


class _LoggedEvent(Event):
    """An :class:`Event` as the engine's own log holds it: the state hash kept
    as the (config digest, turn, record accumulator) it is computed from and a
    registration's ``{"message": m}`` arguments as the message alone (a tool
    result's as its call id and text, a tool call's as its text and the
    block's calls), so an event costs a few pointers and no hex string or dict
    of its own. Reading ``state_hash`` or ``args`` gives the same values, JSON
    and comparisons as the plain event (the message read-only); copies,
    pickles and ``dataclasses.replace`` give a plain :class:`Event`."""

    __slots__ = ("_cfg", "_turn", "_acc", "_a", "_m")
    _cfg: int
    _turn: int
    #: The record accumulator, or its 32 big-endian bytes (an entry read
    #: from :class:`EventColumns`; turned into the int when it is needed).
    _acc: int | bytes
    #: The arguments; or None (``_m`` is the message), a call id (``_m`` is a
    #: tool result's text) or a tuple of calls (``_m`` is their message's text).
    _a: dict[str, Any] | str | tuple[Any, ...] | None
    _m: Any

    def __new__(cls, *args: Any, **kwargs: Any) -> Event:  # type: ignore[misc]
        return Event(*args, **kwargs)  # type(ev)(...) and replace() build plain events

    @property  # type: ignore[override]
    def state_hash(self) -> str:  # noqa: D102 - Event.state_hash
        return state_hash_of(self._cfg, self._turn, _acc_int(self._acc))

    @property  # type: ignore[override]
    def args(self) -> dict[str, Any]:  # noqa: D102 - Event.args
        a = self._a
        if a is None:
            return {"message": self._m}
        if type(a) is str:
            return {"message": FrozenDict(role="tool", tool_call_id=a, content=self._m)}
        if type(a) is tuple:
            return {"message": call_message(self._m, a)}
        return a  # type: ignore[return-value]

    def _plain(self) -> Event:
        return Event(self.seq, self.op, self.args, self.ok, self.result, self.effects,
                     self.state_hash)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Event):
            return NotImplemented
        return (self.seq, self.op, self.args, self.ok, self.result, self.effects,
                self.state_hash) == (other.seq, other.op, other.args, other.ok, other.result,
                                     other.effects, other.state_hash)

    # Unhashable, as a plain Event is (its dicts are).
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self._plain())

    def __reduce__(self) -> tuple[Any, ...]:
        return (Event, (self.seq, self.op, self.args, self.ok, self.result, self.effects,
                        self.state_hash))

    def __copy__(self) -> Event:
        return self._plain()

    def __deepcopy__(self, memo: dict[int, Any]) -> Event:
        import copy

        return copy.deepcopy(self._plain(), memo)


def _split_args(args: dict[str, Any]) -> tuple[Any, Any]:
    """(``_a``, ``_m``) of a logged event's arguments (see :class:`_LoggedEvent`)."""
    if len(args) == 1 and "message" in args:
        m = args["message"]
        if type(m) is CallParts:
            return m[1], m[0]
        if _tool_parts(m):
            return m["tool_call_id"], m["content"]
        return None, m
    if any(type(v) is CallParts for v in args.values()):
        args = {k: call_message(*v) if type(v) is CallParts else v for k, v in args.items()}
    return args, None


def _event_of(
    seq: int,
    op: str,
    ok: bool,
    result: str,
    effects: dict[str, Any],
    cfg: int,
    turn: int,
    acc: int,
    a: Any,
    m: Any,
) -> Event:
    ev = object.__new__(_LoggedEvent)
    _SET_SEQ(ev, seq)
    _SET_OP(ev, op)
    _SET_OK(ev, ok)
    _SET_RESULT(ev, result)
    _SET_EFFECTS(ev, effects)
    _SET_CFG(ev, cfg)
    _SET_TURN(ev, turn)
    _SET_ACC(ev, acc)
    _SET_A(ev, a)
    _SET_M(ev, m)
    return ev


def _acc_int(acc: int | bytes) -> int:
    return acc if isinstance(acc, int) else int.from_bytes(acc, "big")


def _acc_bytes(acc: int | bytes) -> bytes:
    return acc.to_bytes(32, "big") if isinstance(acc, int) else acc


# The slots' own setters (an event is built by setting each, as frozen
# dataclasses do, without the per-call attribute look-up of object.__setattr__).
_SET_SEQ = vars(Event)["seq"].__set__
_SET_OP = vars(Event)["op"].__set__
_SET_OK = vars(Event)["ok"].__set__
_SET_RESULT = vars(Event)["result"].__set__
_SET_EFFECTS = vars(Event)["effects"].__set__
_SET_CFG = vars(_LoggedEvent)["_cfg"].__set__
_SET_TURN = vars(_LoggedEvent)["_turn"].__set__
_SET_ACC = vars(_LoggedEvent)["_acc"].__set__
_SET_A = vars(_LoggedEvent)["_a"].__set__
_SET_M = vars(_LoggedEvent)["_m"].__set__


def logged_event(
    seq: int,
    op: str,
    args: dict[str, Any],
    ok: bool,
    result: str,
    effects: dict[str, Any],
    state: tuple[int, int, int],
) -> Event:
    """The engine's record of one event: ``state`` is (config digest, turn,
    record accumulator), the state hash's inputs (see ``state_hash_of``)."""
    a, m = _split_args(args)
    return _event_of(seq, op, ok, result, effects, state[0], state[1], state[2], a, m)


class EventColumns:
    """The engine's event log as columns, one cell per event: the record
    accumulator as 32 bytes of one flat byte column, the turn as a machine
    integer, the operation and ``ok`` as a 2-byte code, and pointers to the
    strings, effects and message parts the event shares with the records (see
    :class:`_LoggedEvent`). The sequence numbers and the config digest are
    kept once while they are the usual ones (consecutive; the same digest), as
    a column otherwise. An event costs about 80 bytes here instead of an object
    of 12 slots, a 256-bit int and a sequence-number int (about 220).

    Reading an entry (index, slice, iteration) builds the :class:`Event` it
    stands for, equal in every field, JSON and comparison to the one appended.
    Storing an entry (``log[k] = ev``, the log's rewrite after a substituted
    fork) replaces its cells. Only the engine's own events (``logged_event``)
    are held. Copies are independent."""

    __slots__ = (
        "_seq0",
        "_seqs",
        "_cfg0",
        "_cfgs",
        "_code",
        "_kinds",
        "_kind_of",
        "_result",
        "_effects",
        "_turn",
        "_acc",
        "_a",
        "_m",
    )

    def __init__(self) -> None:
        #: Entry k's sequence number: ``_seq0 + k``, or ``_seqs[k]`` once one is not.
        self._seq0 = 0
        self._seqs: array[int] | None = None
        #: Entry k's config digest: ``_cfg0``, or ``_cfgs[k]`` once one differs.
        self._cfg0 = 0
        self._cfgs: list[int] | None = None
        #: Entry k's (op, ok) is ``_kinds[_code[k]]`` (shared by forks: only grows).
        self._code = array("H")
        self._kinds: list[tuple[str, bool]] = []
        self._kind_of: dict[tuple[str, bool], int] = {}
        self._result: list[str] = []
        self._effects: list[dict[str, Any]] = []
        self._turn = array("q")
        self._acc = bytearray()
        self._a: list[Any] = []
        self._m: list[Any] = []

    def __len__(self) -> int:
        return len(self._result)

    def _kind(self, op: str, ok: bool) -> int:
        key = (op, ok)
        code = self._kind_of.get(key)
        if code is None:
            code = len(self._kinds)
            self._kinds = [*self._kinds, key]  # a new list: a fork's copy keeps its own
            self._kind_of = {**self._kind_of, key: code}
        return code

    def append(self, ev: Event) -> None:
        """Add ``ev`` (a ``logged_event``) as the last entry."""
        assert type(ev) is _LoggedEvent
        n = len(self._result)
        if n == 0 and self._seqs is None:
            self._seq0, self._cfg0 = ev.seq, ev._cfg
        if self._seqs is None and ev.seq != self._seq0 + n:
            self._seqs = array("q", range(self._seq0, self._seq0 + n))
        if self._seqs is not None:
            self._seqs.append(ev.seq)
        if self._cfgs is None and ev._cfg != self._cfg0:
            self._cfgs = [self._cfg0] * n
        if self._cfgs is not None:
            self._cfgs.append(ev._cfg)
        self._code.append(self._kind(ev.op, ev.ok))
        self._result.append(ev.result)
        self._effects.append(ev.effects)
        self._turn.append(ev._turn)
        self._acc += _acc_bytes(ev._acc)
        self._a.append(ev._a)
        self._m.append(ev._m)

    def _at(self, k: int) -> Event:
        return self._build(k, k + 1)[0]

    def _build(self, lo: int, hi: int) -> list[Event]:
        """The events of entries ``lo .. hi-1`` (``0 <= lo <= hi <= len``), built
        column by column (a whole log's worth costs about a microsecond an event)."""
        seqs = range(self._seq0 + lo, self._seq0 + hi) if self._seqs is None else self._seqs[lo:hi]
        cfgs = [self._cfg0] * (hi - lo) if self._cfgs is None else self._cfgs[lo:hi]
        kinds = self._kinds
        acc = bytes(self._acc[32 * lo : 32 * hi])  # bytes: no buffer export of the column
        new = object.__new__
        cls = _LoggedEvent
        out: list[Event] = []
        add = out.append
        for j, seq, code, result, effects, cfg, turn, a, m in zip(
            range(0, 32 * (hi - lo), 32),
            seqs,
            self._code[lo:hi],
            self._result[lo:hi],
            self._effects[lo:hi],
            cfgs,
            self._turn[lo:hi],
            self._a[lo:hi],
            self._m[lo:hi],
            strict=True,
        ):
            ev = new(cls)
            op, ok = kinds[code]
            _SET_SEQ(ev, seq)
            _SET_OP(ev, op)
            _SET_OK(ev, ok)
            _SET_RESULT(ev, result)
            _SET_EFFECTS(ev, effects)
            _SET_CFG(ev, cfg)
            _SET_TURN(ev, turn)
            _SET_ACC(ev, acc[j : j + 32])
            _SET_A(ev, a)
            _SET_M(ev, m)
            add(ev)
        return out

    def _index(self, k: int) -> int:
        n = len(self._result)
        if k < 0:
            k += n
        if not 0 <= k < n:
            raise IndexError("event index out of range")
        return k

    def __getitem__(self, k: int | slice) -> Any:
        if isinstance(k, slice):
            lo, hi, step = k.indices(len(self._result))
            if step == 1:
                return self._build(lo, max(lo, hi))
            return [self._at(i) for i in range(lo, hi, step)]
        return self._at(self._index(k))

    def __setitem__(self, k: int, ev: Event) -> None:
        assert type(ev) is _LoggedEvent
        k = self._index(k)
        n = len(self._result)
        if self._seqs is None and ev.seq != self._seq0 + k:
            self._seqs = array("q", range(self._seq0, self._seq0 + n))
        if self._seqs is not None:
            self._seqs[k] = ev.seq
        if self._cfgs is None and ev._cfg != self._cfg0:
            self._cfgs = [self._cfg0] * n
        if self._cfgs is not None:
            self._cfgs[k] = ev._cfg
        self._code[k] = self._kind(ev.op, ev.ok)
        self._result[k] = ev.result
        self._effects[k] = ev.effects
        self._turn[k] = ev._turn
        self._acc[32 * k : 32 * k + 32] = _acc_bytes(ev._acc)
        self._a[k] = ev._a
        self._m[k] = ev._m

    def __iter__(self) -> Iterator[Event]:
        return iter(self._build(0, len(self._result)))

    def copy(self) -> EventColumns:
        """An independent copy (the cells' strings and dicts are immutable, shared)."""
        new = EventColumns.__new__(EventColumns)
        new._seq0, new._cfg0 = self._seq0, self._cfg0
        new._seqs = None if self._seqs is None else self._seqs[:]
        new._cfgs = None if self._cfgs is None else self._cfgs[:]
        # the kind table is replaced, never changed, when it grows: shared
        new._kinds, new._kind_of = self._kinds, self._kind_of
        new._code, new._turn, new._acc = self._code[:], self._turn[:], self._acc[:]
        new._result, new._effects = self._result[:], self._effects[:]
        new._a, new._m = self._a[:], self._m[:]
        return new

    def clear(self) -> None:
        """Remove every entry."""
        EventColumns.__init__(self)


def event_state(ev: Event) -> tuple[int, int]:
    """(turn, record accumulator) after a logged event (see :func:`logged_event`)."""
    assert isinstance(ev, _LoggedEvent)
    return ev._turn, _acc_int(ev._acc)


def last_event(ws: Any) -> Event:
    """The newest event of workspace ``ws``, without building its whole log
    (``ws.events`` builds an :class:`Event` per entry): through
    ``events_since`` when ``ws`` has it, else ``ws.events[-1]``."""
    since = getattr(ws, "events_since", None)
    if callable(since):
        return since(ws.event_count - 1)[-1]  # type: ignore[no-any-return]
    return ws.events[-1]  # type: ignore[no-any-return]


def read_event_log(
    source: str | os.PathLike[str] | Iterable[Event | dict[str, Any]],
) -> Iterator[Event]:
    """Events from a JSONL log file or an iterable of events / plain dicts.

    A torn last line (a crash or a failed write cut the last record short: no
    newline after it and not a whole record) is not an error: the intact lines
    before it are yielded and the tail is reported with a
    :class:`TornLogWarning` (its line, offset and bytes), the file left as it
    is. Any other malformed line is an error naming its line.

    Parameters
    ----------
    source : str, PathLike or iterable
        A JSONL event log, or events (or their plain-dict forms).

    Yields
    ------
    Event
        In log order.
    """
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        try:  # non-blocking and size-bounded: a FIFO or /dev/zero is refused, not read
            data, torn = _split_torn(read_bounded("source", path))
            text = data.decode("utf-8")
        except DomainError as exc:
            raise WorkspaceArgumentError("source", str(path), exc.rule, exc.fix) from None
        except UnicodeDecodeError as exc:
            raise TraceError(None, f"is not UTF-8 text ({exc.reason} at byte {exc.start})",
                             source=str(path)) from None
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                check_depth(f"line {lineno}", line)
                yield Event.from_plain(json_loads(line))
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                raise TraceError(
                    None, f"line {lineno} is not an event record ({exc})", source=str(path)
                ) from None
        if torn:
            warnings.warn(
                TornLogWarning(str(path), data.count(b"\n") + 1, len(data), torn), stacklevel=2
            )
        return
    if isinstance(source, (bytes, Mapping)) or not isinstance(source, Iterable):
        raise WorkspaceArgumentError("source", source, "must be a JSONL log path or an "
                                     "iterable of events", "pass e.g. 'events.jsonl'")
    for i, item in enumerate(source):
        if isinstance(item, Event):
            yield item
            continue
        try:
            if not isinstance(item, Mapping):
                raise TypeError(f"got {type(item).__name__}, not an object")
            yield Event.from_plain(dict(item))
        except (ValueError, KeyError, TypeError, AttributeError, OverflowError) as exc:
            detail = f"missing key {exc}" if isinstance(exc, KeyError) else str(exc)
            raise TraceError(None, f"event {i} is not an event record ({detail}); events "
                             "come from Workspace.events() or an event log") from None
