"""The dashboard ledger's rows (paper, "Dashboard format"): one frozen record
per top-level unit, and the table that holds them, a block's row as a few
cells of flat columns by block number rather than a record of its own."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, NamedTuple, TypeVar

from ._dashboard import row_prefix, row_suffix
from ._records import BlockType, Status

__all__ = ["UnitRow", "RowTable", "FirstIndex", "TurnCounts"]


class _RowFields(NamedTuple):
    first: int
    turn: int
    archived: bool
    newest: int
    tokens: int
    prefix: str
    suffix: str
    piece_tokens: int
    type: str
    level: int
    parent: str
    status: str


#: A row's stored cell (``prefix`` and ``suffix`` may hold what their texts are
#: made from, see UnitRow), typed as Any: read in every put, so no ``cast`` call.
_CELL: Any = tuple.__getitem__


class UnitRow(_RowFields):
    """One top-level unit's ledger row, cached until the unit changes.

    Attributes
    ----------
    first, newest : int
        Sequence numbers of the unit's first and newest leaf block (position
        order is by ``first``; archived rows are kept newest first).
    turn : int
        The turn of the newest leaf (the row's age is ``ws.turn - turn``).
    archived : bool
        True for archived units (blocks out of the prompt and groups).
    tokens : int
        ~Tok as the ledger prints it.
    prefix, suffix : str
        The row's text before and after its age field.
    piece_tokens : int
        Tokens of ``prefix`` plus ``suffix`` (the age piece is counted apart).
    type, parent, status : str
        The row's printed fields; ``level`` its compression level.

    A row the ledger keeps holds the texts it can remake from its own fields
    by what they are made from: ``prefix`` as the unit's ID (shared with the
    ledger's key; a printed prefix always has a space in it) and ``suffix``
    as the layout, compact or not (a bool), when they are the dashboard's
    standard texts (paper, "Dashboard format"). Reading ``prefix`` or
    ``suffix`` gives the text either way.
    """

    __slots__ = ()

    @property
    def prefix(self) -> str:  # type: ignore[override]  # noqa: D102 - see the class
        p: str = _CELL(self, 5)
        return p if " " in p else row_prefix(p, self[4])

    @property
    def suffix(self) -> str:  # type: ignore[override]  # noqa: D102 - see the class
        s: str | bool = _CELL(self, 6)
        if type(s) is bool:
            return row_suffix(self[8], self[9], self[10], self[11], compact=s)
        return s


def _kept(uid: str, row: UnitRow) -> UnitRow:
    """``row`` holding its standard texts by what they are made from (see UnitRow)."""
    p: str = _CELL(row, 5)
    s: str | bool = _CELL(row, 6)
    kp, ks = p, s
    if p is not uid and " " in p and p == row_prefix(uid, row.tokens):
        kp = uid
    if type(s) is not bool and row.parent != "-":  # else one shared text per kind of row
        for compact in (False, True):
            if s == row_suffix(row.type, row.level, row.parent, row.status, compact=compact):
                ks = compact
                break
    if kp is p and ks is s:
        return row
    # row._replace(prefix=kp, suffix=ks), without its pass over every field by name
    return tuple.__new__(UnitRow, (*row[:5], kp, ks, *row[7:]))  # type: ignore[no-any-return]


_T = TypeVar("_T", "RowTable", "FirstIndex", "TurnCounts")
#: The column types a table holds; every other slot holds an immutable value.
_COLUMNS = (bytearray, list, dict)


def _copied(table: _T) -> _T:
    """An independent copy of a column table (:class:`RowTable`,
    :class:`FirstIndex`, :class:`TurnCounts`): each of its slots' columns
    (byte arrays, lists, dicts) copied, a scalar shared. The tables' one copy,
    so a column added to a table's slots is copied with the others."""
    cls = type(table)
    new = cls.__new__(cls)
    for name in cls.__slots__:
        value = getattr(table, name)
        setattr(new, name, value.copy() if isinstance(value, _COLUMNS) else value)
    return new


#: A block row's type and status cells as codes (a row with another is kept whole).
_TYPES = tuple(t.value for t in BlockType)
_STATUSES = tuple(s.value for s in Status)
_TYPE_CODE = {t: i for i, t in enumerate(_TYPES)}
_STATUS_CODE = {s: i for i, s in enumerate(_STATUSES)}
#: code -> (archived, type, status); code 0 means "no row in the columns".
_DECODE: tuple[tuple[bool, str, str] | None, ...] = (None,) + tuple(
    (bool(a), _TYPES[t], _STATUSES[s])
    for s in range(len(_STATUSES))
    for t in range(len(_TYPES))
    for a in (0, 1)
)
#: Shared suffix texts a table numbers (codes 2 ..; 0 and 1 are the layouts).
_TEXTS_CAP = 254


def _slot(uid: object) -> int:
    """Block ``B<n>``'s column index ``n - 1``; -1 for any other key."""
    if type(uid) is str and uid[:1] == "B":
        d = uid[1:]
        if d.isdigit() and d.isascii() and d[0] != "0":
            return int(d) - 1
    return -1


class RowTable:
    """The ledger's rows by unit ID, read and written like a dict (``get``,
    ``[uid]``, ``pop``, ``in``, ``len``, ``values``, ``items``, ``copy``).

    A block's row in its usual shape (first and newest leaf the block itself,
    the standard prefix, a standard or shared suffix, a block type and status
    of the enums', a level below 256) is kept as cells of flat columns indexed
    by block number: the objects it holds (first leaf, turn, ~Tok, piece
    tokens, parent) as list entries shared with the records they come from,
    the rest as one byte each, about 43 bytes a row where a record and its
    dict entry take about 200 at 100,000 blocks. Reading it makes the equal
    :class:`UnitRow`, whose prefix is the key it was read by. Any other row (a
    group's, a text of its own) is kept whole in a dict. Iteration gives the
    column rows in block order, then the others in insertion order."""

    __slots__ = (
        "_code", "_sfx", "_lvl", "_first", "_turn", "_tok", "_ptok", "_par", "_n",
        "_other", "_texts", "_text_code",
    )

    def __init__(self) -> None:
        self._code = bytearray()  # per block: 0 no row, else 1 + archived + 2 * (type + 5 * status)
        self._sfx = bytearray()  # 0 / 1: standard suffix (compact False / True), k: _texts[k - 2]
        self._lvl = bytearray()
        self._first: list[int | None] = []
        self._turn: list[int | None] = []
        self._tok: list[int | None] = []
        self._ptok: list[int | None] = []
        self._par: list[str | None] = []
        self._n = 0  # rows in the columns
        self._other: dict[str, UnitRow] = {}
        self._texts: list[str] = []
        self._text_code: dict[str, int] = {}

    def copy(self) -> RowTable:
        """An independent copy (rows and their objects are immutable and shared)."""
        return _copied(self)

    def __len__(self) -> int:
        return self._n + len(self._other)

    def __contains__(self, uid: object) -> bool:
        i = _slot(uid)
        if 0 <= i < len(self._code) and self._code[i]:
            return True
        return uid in self._other

    def _row(self, i: int, uid: str) -> UnitRow:
        archived, type_, status = _DECODE[self._code[i]]  # type: ignore[misc]
        s = self._sfx[i]
        first = self._first[i]
        return tuple.__new__(  # type: ignore[no-any-return]
            UnitRow,
            (
                first,
                self._turn[i],
                archived,
                first,
                self._tok[i],
                uid,
                s == 1 if s < 2 else self._texts[s - 2],
                self._ptok[i],
                type_,
                self._lvl[i],
                self._par[i],
                status,
            ),
        )

    def briefs(
        self, units: list[tuple[int, str]]
    ) -> tuple[list[str], list[int], list[int], list[bool], list[str]]:
        """For units at their first leaves (``(first, uid)`` from the ledger's
        index of first leaves), in order: fresh copies of their IDs, their ~Tok,
        first leaves and archived flags, and the archived ones' IDs, read off
        the cells without making the rows. A row kept whole is looked up by
        ID; any other is the block row at ``first`` (a block row in the columns
        sits at its own number), so ``uid`` is not parsed."""
        code, tok, firsts_col, other = self._code, self._tok, self._first, self._other
        n = len(code)
        uids: list[str] = []
        tokens: list[int] = []
        firsts: list[int] = []
        flags: list[bool] = []
        archived: list[str] = []
        for first, uid in units:
            r = other.get(uid) if other else None
            if r is not None:
                t, f, a = r.tokens, r.first, r.archived
            else:
                c = code[first - 1] if 0 < first <= n else 0
                if not c:
                    raise KeyError(uid)
                t, f, a = tok[first - 1], firsts_col[first - 1], not c & 1  # type: ignore[assignment]
            uids.append(uid[0] + uid[1:])
            tokens.append(t)  # type: ignore[arg-type]
            firsts.append(f)  # type: ignore[arg-type]
            flags.append(a)
            if a:
                archived.append(uid)
        return uids, tokens, firsts, flags, archived

    def text_parts(self, uid: str) -> tuple[str, str, int, int]:
        """(prefix, suffix, turn, piece tokens) of ``uid``'s row, as the row
        reads them (the ledger's text of a chunk is made of these)."""
        i = _slot(uid)
        if 0 <= i < len(self._code):
            c = self._code[i]
            if c:
                s = self._sfx[i]
                if s >= 2:
                    suffix = self._texts[s - 2]
                else:
                    _, type_, status = _DECODE[c]  # type: ignore[misc]
                    suffix = row_suffix(type_, self._lvl[i], self._par[i], status, compact=s == 1)  # type: ignore[arg-type]
                tok = self._tok[i]
                return row_prefix(uid, tok), suffix, self._turn[i], self._ptok[i]  # type: ignore[arg-type,return-value]
        r = self._other[uid]
        return r.prefix, r.suffix, r.turn, r.piece_tokens

    def get(self, uid: str, default: UnitRow | None = None) -> UnitRow | None:
        i = _slot(uid)
        if 0 <= i < len(self._code) and self._code[i]:
            return self._row(i, uid)
        return self._other.get(uid, default)

    def __getitem__(self, uid: str) -> UnitRow:
        row = self.get(uid)
        if row is None:
            raise KeyError(uid)
        return row

    def _codes(self, i: int, uid: str, row: UnitRow) -> tuple[int, int] | None:
        """(code, suffix code) of ``row`` in the columns at ``i``, or None when
        it has another shape (see the class)."""
        p = tuple.__getitem__(row, 5)
        s = tuple.__getitem__(row, 6)
        first = row.first
        if type(first) is not int or first != i + 1 or p != uid:
            return None
        newest = row.newest
        if type(newest) is not int or newest != first:
            return None
        t = _TYPE_CODE.get(row.type)
        st = _STATUS_CODE.get(row.status)
        a = row.archived
        lv = row.level
        if t is None or st is None or type(a) is not bool or type(lv) is not int:
            return None
        if not 0 <= lv < 256:
            return None
        if type(s) is bool:
            sc = int(s)
        elif type(s) is str:
            k = self._text_code.get(s)
            if k is None:
                if len(self._texts) >= _TEXTS_CAP:
                    return None
                k = self._text_code[s] = len(self._texts) + 2
                self._texts.append(s)
            sc = k
        else:
            return None
        return 1 + a + 2 * (t + 5 * st), sc

    def __setitem__(self, uid: str, row: UnitRow) -> None:
        i = _slot(uid)
        codes = None if i < 0 else self._codes(i, uid, row)
        if codes is None:
            if 0 <= i < len(self._code) and self._code[i]:
                self._clear(i)
            self._other[uid] = row
            return
        if self._other and uid in self._other:
            del self._other[uid]
        code = self._code
        if i >= len(code):
            grow = i + 1 - len(code)
            code.extend(bytes(grow))
            self._sfx.extend(bytes(grow))
            self._lvl.extend(bytes(grow))
            for col in (self._first, self._turn, self._tok, self._ptok, self._par):
                col.extend([None] * grow)
        if not code[i]:
            self._n += 1
        code[i], self._sfx[i], self._lvl[i] = codes[0], codes[1], row.level
        self._first[i], self._turn[i], self._tok[i] = row.first, row.turn, row.tokens
        self._ptok[i], self._par[i] = row.piece_tokens, row.parent

    def _clear(self, i: int) -> None:
        self._code[i] = 0
        self._first[i] = self._turn[i] = self._tok[i] = self._ptok[i] = self._par[i] = None
        self._n -= 1

    def pop(self, uid: str, default: UnitRow | None = None) -> UnitRow | None:
        i = _slot(uid)
        if 0 <= i < len(self._code) and self._code[i]:
            row = self._row(i, uid)
            self._clear(i)
            return row
        return self._other.pop(uid, default)

    def __delitem__(self, uid: str) -> None:
        if self.pop(uid) is None:
            raise KeyError(uid)

    def _items(self) -> Iterator[tuple[str, UnitRow]]:
        code = self._code
        for i in range(len(code)):
            if code[i]:
                uid = f"B{i + 1}"
                yield uid, self._row(i, uid)
        yield from self._other.items()

    def __iter__(self) -> Iterator[str]:
        return (uid for uid, _ in self._items())

    def items(self) -> _View:
        """A view of (unit ID, row) pairs, iterable again and again like a dict's."""
        return _View(self, self._items)

    def keys(self) -> _View:
        """A view of the unit IDs."""
        return _View(self, self.__iter__)

    def values(self) -> _View:
        """A view of the rows."""
        return _View(self, lambda: (row for _, row in self._items()))


class _View:
    """A live view of a :class:`RowTable` (each iteration reads it afresh)."""

    __slots__ = ("_table", "_it")

    def __init__(self, table: RowTable, it: Callable[[], Iterator[Any]]) -> None:
        self._table, self._it = table, it

    def __iter__(self) -> Iterator[Any]:
        return self._it()

    def __len__(self) -> int:
        return len(self._table)


class FirstIndex:
    """The unit whose row sits at each first leaf, read and written like a
    ``dict[int, str]`` (``get``, ``[first]``, ``in``, ``del``, ``copy``): a
    list by position (8 bytes a leaf) rather than a dict entry per row (about
    50 at 100,000 rows); a key that is not a positive ``int`` is kept in a dict."""

    __slots__ = ("_at", "_other")

    def __init__(self) -> None:
        self._at: list[str | None] = []
        self._other: dict[int, str] = {}

    def copy(self) -> FirstIndex:
        """An independent copy."""
        return _copied(self)

    def get(self, first: int, default: str | None = None) -> str | None:
        if type(first) is int and 0 < first <= len(self._at):
            u = self._at[first - 1]
            return default if u is None else u
        return self._other.get(first, default)

    def __getitem__(self, first: int) -> str:
        u = self.get(first)
        if u is None:
            raise KeyError(first)
        return u

    def __contains__(self, first: object) -> bool:
        return self.get(first) is not None  # type: ignore[arg-type]

    def __setitem__(self, first: int, uid: str) -> None:
        if type(first) is int and first > 0:
            at = self._at
            if first > len(at):
                at.extend([None] * (first - len(at)))
            at[first - 1] = uid
        else:
            self._other[first] = uid

    def __delitem__(self, first: int) -> None:
        if type(first) is int and 0 < first <= len(self._at) and self._at[first - 1] is not None:
            self._at[first - 1] = None
        else:
            del self._other[first]

    def units_in(self, lo: int, hi: int) -> list[tuple[int, str]]:
        """(first leaf, unit) for every first leaf in ``lo .. hi - 1``, ascending."""
        start = max(lo, 1)
        at = self._at[start - 1 : max(hi, 1) - 1]
        out = [(start + k, u) for k, u in enumerate(at) if u is not None]
        if self._other:
            out.extend((f, u) for f, u in self._other.items() if type(f) is int and lo <= f < hi)
            out.sort(key=lambda fu: fu[0])
        return out

    def pop(self, first: int, *default: str | None) -> str | None:
        u = self.get(first)
        if u is None:
            if default:
                return default[0]
            raise KeyError(first)
        del self[first]
        return u

    def items(self) -> Iterator[tuple[int, str]]:
        """(first leaf, unit) pairs: the list's in position order, then the others."""
        for i, u in enumerate(self._at):
            if u is not None:
                yield i + 1, u
        yield from self._other.items()

    def __iter__(self) -> Iterator[int]:
        return (f for f, _ in self.items())

    def __len__(self) -> int:
        return len(self._at) - self._at.count(None) + len(self._other)


class TurnCounts:
    """Rows per row turn, read and written like the ``dict[int, int]`` it
    replaces in the main ledger (``get``, ``[t]``, ``del``, ``items``, ``len``,
    ``copy``; only nonzero counts are entries): a list indexed by turn, 8
    bytes a turn where a dict entry takes about 50 at 50,000 turns (rows have
    the turns of their blocks, consecutive from 0). A turn that is not a
    non-negative ``int`` is kept in a dict."""

    __slots__ = ("_c", "_n", "_other")

    def __init__(self) -> None:
        self._c: list[int] = []
        self._n = 0  # nonzero entries of _c
        self._other: dict[int, int] = {}

    def copy(self) -> TurnCounts:
        """An independent copy."""
        return _copied(self)

    def get(self, t: int, default: int | None = None) -> int | None:
        c = self._c
        if type(t) is int and 0 <= t < len(c):
            v = c[t]
            return v if v else default
        return self._other.get(t, default)

    def __getitem__(self, t: int) -> int:
        v = self.get(t)
        if v is None:
            raise KeyError(t)
        return v

    def __setitem__(self, t: int, v: int) -> None:
        if type(t) is int and t >= 0:  # a count of 0 is no entry
            c = self._c
            if t >= len(c):
                c.extend([0] * (t + 1 - len(c)))
            self._n += (v != 0) - (c[t] != 0)
            c[t] = v
        else:
            self._other[t] = v

    def __delitem__(self, t: int) -> None:
        c = self._c
        if type(t) is int and 0 <= t < len(c) and c[t]:
            c[t] = 0
            self._n -= 1
        else:
            del self._other[t]

    def __len__(self) -> int:
        return self._n + len(self._other)

    def items(self) -> Iterator[tuple[int, int]]:
        """(turn, rows) of every nonzero count, the listed turns ascending first."""
        for t, v in enumerate(self._c):
            if v:
                yield t, v
        yield from self._other.items()
