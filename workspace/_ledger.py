"""The dashboard ledger's rows, one per top-level unit, as frozen records, with
the running sums that give the ledger's token count without walking the rows."""

from __future__ import annotations

import bisect
import heapq
import itertools
from collections.abc import Callable
from typing import NamedTuple

from ._ledger_rows import FirstIndex, RowTable, TurnCounts, UnitRow, _kept
from ._seqtree import add_sorted

__all__ = [
    "UnitRow",
    "Ledger",
    "LedgerChunk",
    "CHUNK",
    "Fold",
    "UnitOrder",
    "ManagementIndex",
    "AgeSteps",
]

#: Block positions per ledger chunk (rows are grouped by their first leaf).
CHUNK = 256
#: Archived-set versions, unique across every ledger and copy (so a fork and
#: its parent never share a version number for different archived rows).
_VERSIONS = itertools.count(1)


class LedgerChunk(NamedTuple):
    """The rows whose first leaf lies in one run of ``CHUNK`` positions, in
    position order, as flat tuples (a rendering reads these in sequence instead
    of looking up every row by ID in a large dict, whose entries are scattered
    over the heap: at 100k units each look-up is a cache and TLB miss).

    ``uids`` are fresh copies of the unit IDs, allocated together, for the
    same reason; ``archived`` the archived units among them."""

    uids: tuple[str, ...]
    tokens: tuple[int, ...]
    firsts: tuple[int, ...]
    flags: tuple[bool, ...]  # archived, per row
    archived: tuple[str, ...]


class Ledger:
    """Rows by unit ID with incremental sums (prefix/suffix tokens, archived
    rows, rows per turn) and, per chunk of positions, the rows in position order.

    Parameters
    ----------
    age_piece : callable
        ``age -> (text, tokens)`` of a row's age field (the dashboard renderer's).
    """

    __slots__ = (
        "rows",
        "piece_tokens",
        "archived_rows",
        "_turns",
        "_age",
        "_age_piece",
        "_steps",
        "archived_ids",
        "_by_first",
        "_cdata",
        "_ctext",
        "_per_chunk",
        "_occupied",
        "_shown",
        "_blank",
        "archived_version",
        "fold",
        "index",
        "_cols",
        "_cols_dirty",
    )

    def __init__(
        self,
        age_piece: Callable[[int], tuple[str, int]],
        keep: int | None = None,
        *,
        indexed: bool = False,
    ) -> None:
        self.rows = RowTable()  # see RowTable: a block's row as column cells
        self.piece_tokens = 0  # sum of every row's prefix + suffix tokens
        self.archived_rows = 0
        self.archived_ids: set[str] = set()  # units with an archived row
        # row turn -> rows with that turn (the main ledger's as a list by turn)
        self._turns: dict[int, int] | TurnCounts = TurnCounts() if indexed else {}
        self._age: tuple[int, int] | None = None  # (turn, age tokens)
        self._age_piece = age_piece
        # Ages where a row's age piece changes its token count (see AgeSteps),
        # so advancing the age sum by one turn costs a few look-ups instead of
        # a pass over every turn.
        self._steps = AgeSteps()
        # Rows by first leaf, and per chunk of positions the flat row data and
        # the ledger text around the age fields (dropped when a row in it changes).
        self._by_first = FirstIndex()  # first leaf -> unit (a list by position)
        self._cdata: dict[int, LedgerChunk] = {}
        self._ctext: dict[int, tuple[tuple[str, ...], tuple[str, ...], tuple[int, ...], int]] = {}
        # Rows per chunk, and the chunks holding any, ascending: a session that
        # archives in groups has a few rows over many positions, and a
        # rendering visits only these chunks.
        self._per_chunk: dict[int, int] = {}
        self._occupied: list[int] = []
        # The chunks that may show a row in the dashboard, ascending: every
        # chunk holding a row that is not folded, and perhaps a few chunks
        # found to show none since (``_blank``, dropped on the next read). A
        # session that archives in groups folds its old groups, so a rendering
        # visits the chunks of the rows it prints, not one per 256 positions.
        self._shown: list[int] = []
        self._blank: set[int] = set()
        #: Changes whenever an archived row is added, changed or removed.
        self.archived_version = 0
        #: With ``keep``: the archived rows split into the ``keep`` newest and
        #: the folded rest, kept up to date by put and drop. Its sums ledger
        #: shares this ledger's step ages: it holds few rows (one per folded
        #: unit), too few to pay for learning the steps up to the current turn
        #: on its own, so it would sum over every folded unit's turn each turn.
        self.fold: Fold | None = None
        if keep is not None:
            self.fold = Fold(keep, Ledger(age_piece))
            self.fold.sums._steps = self._steps
        #: With ``indexed``: what the management rendering reads, kept up to
        #: date by put and drop (a ledger of sums only does without).
        self.index: ManagementIndex | None = ManagementIndex() if indexed else None
        # token_columns' list, one entry per occupied chunk (None: rebuild it
        # whole), and the chunks changed since it was last read.
        self._cols: list[tuple[tuple[str, ...], tuple[int, ...], tuple[int, ...]]] | None = None
        self._cols_dirty: set[int] = set()

    def copy(self) -> Ledger:
        """An independent copy (rows are immutable and shared)."""
        new = Ledger(self._age_piece)
        new.rows = self.rows.copy()
        new.piece_tokens, new.archived_rows = self.piece_tokens, self.archived_rows
        new.archived_ids = self.archived_ids.copy()
        new._turns = self._turns.copy()
        new._age = self._age
        new._steps = self._steps.copy()
        new._by_first = self._by_first.copy()
        new._cdata, new._ctext = self._cdata.copy(), self._ctext.copy()
        new._per_chunk, new._occupied = self._per_chunk.copy(), self._occupied.copy()
        new._shown, new._blank = self._shown.copy(), self._blank.copy()
        new.archived_version = self.archived_version
        new.fold = None if self.fold is None else self.fold.copy()
        new.index = None if self.index is None else self.index.copy()
        new._cols = None if self._cols is None else self._cols.copy()
        new._cols_dirty = self._cols_dirty.copy()
        if new.fold is not None:
            new.fold.sums._steps = new._steps
        return new

    def for_sums(self, rows: list[UnitRow]) -> Ledger:
        """A ledger holding only the running sums of ``rows`` (piece tokens,
        archived rows, rows per turn, hence :meth:`age_tokens`, which advances
        turn by turn from this ledger's known step ages), built in one pass; it
        has no rows by ID and takes no puts."""
        new = Ledger(self._age_piece)
        new._steps = self._steps.copy()
        turns: dict[int, int] = {}
        piece = archived = 0
        for r in rows:
            piece += r.piece_tokens
            archived += r.archived
            turns[r.turn] = turns.get(r.turn, 0) + 1
        new.piece_tokens, new.archived_rows, new._turns = piece, archived, turns
        return new

    def __contains__(self, uid: object) -> bool:
        return uid in self.rows

    def __len__(self) -> int:
        return len(self.rows)

    def uid_at(self, first: int) -> str:
        """The unit whose row sits at first leaf ``first``."""
        return self._by_first[first]

    def token_columns(
        self, prompt_of: Callable[[str], int]
    ) -> list[tuple[tuple[str, ...], tuple[int, ...], tuple[int, ...]]]:
        """Per chunk holding rows, in position order: its units, their ~Tok and
        their tokens in the candidate rendering (``prompt_of`` of each archived
        unit; a visible unit's ~Tok is its prompt cost), as a new list of
        immutable tuples, so a rendering may read them later. The list is kept
        between calls and only the chunks changed since are rebuilt (a turn
        changes one), so a call costs a list copy, not a pass over the rows."""
        cols = self._cols
        if cols is None:
            cols = self._cols = [self._column(c, prompt_of) for c in self._occupied]
            self._cols_dirty.clear()
        elif self._cols_dirty:
            occ = self._occupied
            for c in self._cols_dirty:
                i = bisect.bisect_left(occ, c)
                if i < len(occ) and occ[i] == c:
                    cols[i] = self._column(c, prompt_of)
            self._cols_dirty.clear()
        return cols.copy()

    def _column(
        self, c: int, prompt_of: Callable[[str], int]
    ) -> tuple[tuple[str, ...], tuple[int, ...], tuple[int, ...]]:
        ch = self.chunk(c)
        if not ch.archived:
            return ch.uids, ch.tokens, ch.tokens
        prompts = tuple(
            prompt_of(u) if a else t for u, t, a in zip(ch.uids, ch.tokens, ch.flags, strict=True)
        )
        return ch.uids, ch.tokens, prompts

    def _changed(self, c: int) -> None:
        """Chunk ``c``'s rows or an archived unit's prompt tokens in it changed."""
        if self._cols is not None:
            self._cols_dirty.add(c)
        self._reshow(c)

    def _reshow(self, c: int) -> None:
        """Chunk ``c`` may show a row again: back in :meth:`shown_chunks`."""
        self._blank.discard(c)
        add_sorted(self._shown, c)

    def shown_chunks(self) -> list[int]:
        """Ascending, every chunk holding a row that is not folded (so the
        dashboard lists it), and perhaps a chunk or two that no longer does
        (its :meth:`chunk_text` is then empty); do not modify. Chunks whose
        rows are all folded are left out, so reading the ledger's text costs
        O(chunks it prints), not O(positions / CHUNK)."""
        if self._blank:
            blank = self._blank
            self._shown = [c for c in self._shown if c not in blank]
            self._blank = set()
        return self._shown

    def prompt_changed(self, uid: str) -> None:
        """Archived unit ``uid``'s tokens in the candidate rendering changed
        without its row (a group's leaf did)."""
        row = self.rows.get(uid)
        if row is not None:
            self._changed((row.first - 1) // CHUNK)

    def put(self, uid: str, row: UnitRow, turn: int) -> None:
        """Insert or replace ``uid``'s row; ``turn`` is the workspace's turn now."""
        row = _kept(uid, row)
        old = self.rows.get(uid)
        if self.index is not None:
            self.index.put(uid, old, row)
        if row.archived or (old is not None and old.archived):
            self.archived_version = next(_VERSIONS)
            if self.fold is not None:
                if old is not None and old.archived:
                    self._promoted(self.fold.remove(uid, turn))
                if row.archived:
                    self.fold.add(uid, row, turn)
        if old is not None:
            self._out(old, turn)
            self.archived_ids.discard(uid)
            if old.first == row.first and self._by_first.get(row.first) == uid:
                self._patch(row)  # the row keeps its place (the common replacement)
            else:
                self._unplace(uid, old.first)
        if row.first not in self._by_first:
            self._occupy(row.first, +1)
        self._by_first[row.first] = uid
        if old is None:
            self._append_or_invalidate(uid, row)
        elif old.first != row.first:
            self._invalidate(row.first)
        self.rows[uid] = row
        self._in(row, turn)
        if row.archived:
            self.archived_ids.add(uid)

    def drop(self, uid: str, turn: int) -> None:
        """Remove ``uid``'s row if it has one."""
        row = self.rows.pop(uid, None)
        if row is not None:
            if self.index is not None:
                self.index.drop(uid, row)
            if row.archived:
                self.archived_version = next(_VERSIONS)
                if self.fold is not None:
                    self._promoted(self.fold.remove(uid, turn))
            self._out(row, turn)
            self.archived_ids.discard(uid)
            self._unplace(uid, row.first)

    def _promoted(self, row: UnitRow | None) -> None:
        """The fold moved ``row``'s unit from the folded rows to the shown ones."""
        if row is not None:
            self._reshow((row.first - 1) // CHUNK)

    def _unplace(self, uid: str, first: int) -> None:
        # A group's row may take its first leaf's place before that leaf's row
        # is dropped: only the unit still holding the place gives it up.
        if self._by_first.get(first) == uid:
            del self._by_first[first]
            self._occupy(first, -1)
        self._invalidate(first)

    def _occupy(self, first: int, change: int) -> None:
        c = (first - 1) // CHUNK
        n = self._per_chunk.get(c, 0) + change
        if n:
            self._per_chunk[c] = n
            if n == change:  # was empty
                bisect.insort(self._occupied, c)
                self._cols = None
        else:
            del self._per_chunk[c]
            del self._occupied[bisect.bisect_left(self._occupied, c)]
            self._cols = None
            self._blank.add(c)  # no row: shows none

    def occupied(self) -> list[int]:
        """The chunks holding at least one row, ascending; do not modify."""
        return self._occupied

    def _append_or_invalidate(self, uid: str, row: UnitRow) -> None:
        """A new row after every row of its chunk (the common case: a newly
        registered block) extends the chunk's cached tuples, which is what
        :meth:`chunk` would rebuild; any other new row invalidates the chunk."""
        c = (row.first - 1) // CHUNK
        ch = self._cdata.get(c)
        if ch is None or (ch.firsts and ch.firsts[-1] >= row.first):
            self._invalidate(row.first)
            return
        self._changed(c)
        self._cdata[c] = LedgerChunk(
            ch.uids + (uid[0] + uid[1:],),
            ch.tokens + (row.tokens,),
            ch.firsts + (row.first,),
            ch.flags + (row.archived,),
            ch.archived + (uid,) if row.archived else ch.archived,
        )
        text = self._ctext.get(c)
        if text is None or row.archived:
            self._ctext.pop(c, None)
            return
        hk, pieces, turns, ptok = text
        self._ctext[c] = (
            hk,
            pieces[:-1] + (pieces[-1] + row.prefix, row.suffix),
            turns + (row.turn,),
            ptok + row.piece_tokens,
        )

    def _invalidate(self, first: int) -> None:
        c = (first - 1) // CHUNK
        self._cdata.pop(c, None)
        self._ctext.pop(c, None)
        self._changed(c)

    def _patch(self, row: UnitRow) -> None:
        """A replaced row in its old place: the cached chunk's columns get its
        ~Tok and archived flag (one tuple copy each, not a rebuild of the
        chunk from the rows); its text is dropped."""
        c = (row.first - 1) // CHUNK
        self._ctext.pop(c, None)
        self._changed(c)
        ch = self._cdata.get(c)
        if ch is None:
            return
        i = bisect.bisect_left(ch.firsts, row.first)
        flags, archived = ch.flags, ch.archived
        if flags[i] != row.archived:
            flags = flags[:i] + (row.archived,) + flags[i + 1 :]
            archived = tuple(u for u, a in zip(ch.uids, flags, strict=True) if a)
        tokens = ch.tokens
        if tokens[i] != row.tokens:
            tokens = tokens[:i] + (row.tokens,) + tokens[i + 1 :]
        self._cdata[c] = LedgerChunk(ch.uids, tokens, ch.firsts, flags, archived)

    def chunk(self, c: int) -> LedgerChunk:
        """The rows whose first leaf is in positions ``c * CHUNK + 1 ..
        (c + 1) * CHUNK``, in position order (built once per change)."""
        hit = self._cdata.get(c)
        if hit is None:
            # uids are fresh copies, next to their neighbours; firsts the rows'
            # own ints (== the positions, no new one per row)
            uids, tokens, firsts, flags, archived = self.rows.briefs(
                self._by_first.units_in(c * CHUNK + 1, (c + 1) * CHUNK + 1)
            )
            hit = self._cdata[c] = LedgerChunk(
                tuple(uids), tuple(tokens), tuple(firsts), tuple(flags), tuple(archived)
            )
        return hit

    def chunk_text(self, c: int, hidden: set[str]) -> tuple[tuple[str, ...], tuple[int, ...], int]:
        """Chunk ``c``'s ledger lines without their age fields: ``pieces`` (one
        more than the shown rows: the text before the first age field, between
        consecutive ones, and after the last), the shown rows' turns, and their
        prefix + suffix tokens. Rows in ``hidden`` (folded) are left out."""
        ch = self.chunk(c)
        hk = tuple(u for u in ch.archived if u in hidden) if hidden and ch.archived else ()
        hit = self._ctext.get(c)
        if hit is None or hit[0] != hk:
            parts = self.rows.text_parts
            pieces: list[str] = []
            turns: list[int] = []
            ptok = 0
            prev = ""
            for u in ch.uids:
                if hk and u in hk:
                    continue
                prefix, suffix, t, pt = parts(u)
                pieces.append(prev + prefix)
                prev = suffix
                turns.append(t)
                ptok += pt
            pieces.append(prev)
            hit = self._ctext[c] = (hk, tuple(pieces), tuple(turns), ptok)
        if not hit[2] and self._all_folded(ch.uids):
            self._blank.add(c)
        return hit[1], hit[2], hit[3]

    def _all_folded(self, uids: tuple[str, ...]) -> bool:
        """Every unit of ``uids`` is folded (a chunk of them shows no row,
        whatever set of hidden units the caller passed)."""
        fold = self.fold
        if fold is None:
            return not uids
        folded = fold.folded
        return all(u in folded for u in uids)

    def age_tokens(self, turn: int) -> int:
        """Tokens of every row's age piece at ``turn``; ages shift with each new
        turn, so the sum is rebuilt from the per-turn row counts once per turn."""
        cached = self._age
        if cached is not None and cached[0] == turn:
            return cached[1]
        if cached is not None and self._advance(cached, turn):
            return self._age[1]  # type: ignore[index]
        age_piece = self._age_piece
        n = sum(cnt * age_piece(turn - t)[1] for t, cnt in self._turns.items())
        self._age = (turn, n)
        return n

    def _advance(self, cached: tuple[int, int], turn: int) -> bool:
        """Move the cached age sum forward to ``turn`` one turn at a time (every
        row ages by one; only rows at a step age change their count), when that
        is cheaper than the pass over the per-turn counts; False otherwise."""
        start, n = cached
        steps = turn - start
        rows = len(self._turns)
        if steps < 0 or turn - self._steps.upto > 4 * rows + 64:
            return False
        self._steps.extend(turn, self._age_piece)
        ages = self._steps.ages
        if steps * (len(ages) + 1) > rows:
            return False
        turns = self._turns
        for k in range(start, turn):
            for a, d in ages:
                if a > k:
                    break
                cnt = turns.get(k - a)
                if cnt:
                    n += cnt * d
        self._age = (turn, n)
        return True

    def recount(self) -> tuple[int, int]:
        """(piece tokens, archived rows) summed from scratch (checks the sums)."""
        rows = self.rows.values()
        return sum(r.piece_tokens for r in rows), sum(r.archived for r in rows)

    def _in(self, row: UnitRow, turn: int) -> None:
        self.piece_tokens += row.piece_tokens
        self.archived_rows += row.archived
        t = row.turn
        self._turns[t] = (self._turns.get(t) or 0) + 1  # counts are >= 1
        self._shift_age(turn, t, +1)

    def _out(self, row: UnitRow, turn: int) -> None:
        self.piece_tokens -= row.piece_tokens
        self.archived_rows -= row.archived
        t = row.turn
        left = self._turns[t] - 1
        if left:
            self._turns[t] = left
        else:
            del self._turns[t]
        self._shift_age(turn, t, -1)

    def _shift_age(self, turn: int, row_turn: int, sign: int) -> None:
        cached = self._age
        if cached is None:
            return
        if cached[0] != turn and not self._advance(cached, turn):
            self._age = None
            return
        self._age = (turn, self._age[1] + sign * self._age_piece(turn - row_turn)[1])  # type: ignore[index]


class UnitOrder:
    """Units by first leaf, ascending, with their ~Tok sum, so the summary line
    of a set of units (``_id_summary`` of them in position order) is written
    from its first few items: adding or removing a unit costs O(log n) plus a
    memmove, instead of a pass over the set per line written.

    ``firsts`` are the units' first leaves in position order (``group_firsts``
    those of groups)."""

    __slots__ = ("firsts", "_at", "group_firsts", "tokens")

    def __init__(self) -> None:
        self.firsts: list[int] = []
        # first leaf -> units (two only for a moment, within one action: a new
        # group's row arrives before its first member's row leaves)
        self._at: dict[int, list[str]] = {}
        self.group_firsts: list[int] = []
        self.tokens = 0

    def __len__(self) -> int:
        return len(self.firsts)

    def copy(self) -> UnitOrder:
        new = UnitOrder()
        new.firsts = self.firsts.copy()
        new._at = {f: us.copy() for f, us in self._at.items()}
        new.group_firsts, new.tokens = self.group_firsts.copy(), self.tokens
        return new

    def add(self, uid: str, row: UnitRow) -> None:
        bisect.insort(self.firsts, row.first)
        self._at.setdefault(row.first, []).append(uid)
        if uid[0] != "B":
            bisect.insort(self.group_firsts, row.first)
        self.tokens += row.tokens

    def remove(self, uid: str, row: UnitRow) -> None:
        del self.firsts[bisect.bisect_left(self.firsts, row.first)]
        at = self._at[row.first]
        at.remove(uid)
        if not at:
            del self._at[row.first]
        if uid[0] != "B":
            del self.group_firsts[bisect.bisect_left(self.group_firsts, row.first)]
        self.tokens -= row.tokens

    def summary(self, limit: int = 8) -> str:
        """``_id_summary`` of the units in position order, from its first
        ``limit`` items: runs of consecutive blocks found by bisection (a
        block's first leaf is its number), a group ends a run."""
        firsts, at, groups = self.firsts, self._at, self.group_firsts
        parts: list[str] = []
        i, n = 0, len(firsts)
        while i < n and len(parts) < limit:
            uid = at[firsts[i]][0]
            if uid[0] != "B":
                parts.append(uid)
                i += 1
                continue
            g = bisect.bisect_right(groups, firsts[i])
            end = bisect.bisect_left(firsts, groups[g]) if g < len(groups) else n
            lo, hi, first = i, end - 1, firsts[i]
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if firsts[mid] - first == mid - i:
                    lo = mid
                else:
                    hi = mid - 1
            parts.append(uid if lo == i else f"{uid}-{at[firsts[lo]][0]}")
            i = lo + 1
        if i < n:
            parts.append(f"+{n - i} more")
        return ",".join(parts)


class AgeSteps:
    """The ages where a row's age piece changes its token count: ``(a, d)`` in
    ``ages`` means ``tokens(age a + 1) - tokens(age a) = d != 0``, listed for
    every ``a < upto``. A few per tokenizer (cl100k: at 99 and 999); a function
    of the age pieces alone, so a ledger and its fold's sums share one."""

    __slots__ = ("ages", "upto")

    def __init__(self) -> None:
        self.ages: list[tuple[int, int]] = []
        self.upto = 0

    def copy(self) -> AgeSteps:
        """An independent copy (a fork's ledger learns its own steps)."""
        new = AgeSteps()
        new.ages, new.upto = self.ages.copy(), self.upto
        return new

    def extend(self, upto: int, age_piece: Callable[[int], tuple[str, int]]) -> None:
        """Know every step age below ``upto`` (ages never exceed the turn)."""
        a = self.upto
        if a >= upto:
            return
        prev = age_piece(a)[1]
        while a < upto:
            nxt = age_piece(a + 1)[1]
            if nxt != prev:
                self.ages.append((a, nxt - prev))
            prev = nxt
            a += 1
        self.upto = upto


class Fold:
    """The archived rows split into the ``keep`` newest (shown in the ledger)
    and the rest (folded into one summary line), kept up to date row by row:
    an archive, restore, delete or guard offload changes it in O(log n) plus a
    memmove, instead of a pass over every archived unit.

    ``folded`` maps the folded units to their rows; ``sums`` holds their
    running sums (piece tokens, age tokens); ``order`` their first leaves in
    position order, so the summary line is written from its first few items."""

    __slots__ = ("keep", "shown", "folded", "_heap", "order", "sums")

    def __init__(self, keep: int, sums: Ledger) -> None:
        self.keep = keep
        self.shown: dict[str, UnitRow] = {}  # the keep newest archived units
        self.folded: dict[str, UnitRow] = {}
        self._heap: list[tuple[int, str]] = []  # (-newest, uid), stale entries skipped
        self.order = UnitOrder()
        self.sums = sums

    @property
    def tokens(self) -> int:
        """~Tok of the folded units."""
        return self.order.tokens

    def copy(self) -> Fold:
        new = Fold(self.keep, self.sums.copy())
        new.shown, new.folded = self.shown.copy(), self.folded.copy()
        new._heap, new.order = self._heap.copy(), self.order.copy()
        return new

    def add(self, uid: str, row: UnitRow, turn: int) -> None:
        """An archived row enters (its unit has no archived row now)."""
        shown = self.shown
        if len(shown) < self.keep:
            shown[uid] = row
            return
        if self.keep:
            oldest = min(shown, key=lambda u: shown[u].newest)
            if row.newest > shown[oldest].newest:
                self._fold_in(oldest, shown.pop(oldest), turn)
                shown[uid] = row
                return
        self._fold_in(uid, row, turn)

    def remove(self, uid: str, turn: int) -> UnitRow | None:
        """An archived row leaves; returns the row of the folded unit it moves
        to the shown ones in its place, if any."""
        if self.shown.pop(uid, None) is None:
            self._fold_out(uid, turn)
            return None
        heap, folded = self._heap, self.folded
        while heap:
            neg, u = heap[0]
            r = folded.get(u)
            if r is not None and r.newest == -neg:
                self._fold_out(u, turn)
                self.shown[u] = r
                return r
            heapq.heappop(heap)
        return None

    def _fold_in(self, uid: str, row: UnitRow, turn: int) -> None:
        self.folded[uid] = row
        heap = self._heap
        if len(heap) > 2 * len(self.folded) + 64:  # drop the stale entries
            heap[:] = [(-r.newest, u) for u, r in self.folded.items()]
            heapq.heapify(heap)
        else:
            heapq.heappush(heap, (-row.newest, uid))
        self.order.add(uid, row)
        self.sums.put(uid, row, turn)

    def _fold_out(self, uid: str, turn: int) -> None:
        row = self.folded.pop(uid)
        self.order.remove(uid, row)
        self.sums.drop(uid, turn)

    def summary(self, limit: int = 8) -> str:
        """``_id_summary`` of the folded units in position order (see
        :meth:`UnitOrder.summary`)."""
        return self.order.summary(limit)


class ManagementIndex:
    """What the management rendering (eq. overflow) reads, kept up to date row
    by row by :meth:`Ledger.put` and :meth:`Ledger.drop`, so that rendering it
    costs O(rows it prints), not O(units ever registered):

    * the visible rows' first leaves as runs of consecutive positions (the
      summary of the visible units the ledger does not list is written from
      its first few runs), their count and ~Tok sum, and per ~Tok value the
      first leaves holding it, ascending (the largest rows, ties older first,
      are read off from the largest value down);
    * the archived rows in position order (:class:`UnitOrder`).

    Visible rows are blocks (a group's row is always archived), so a visible
    row's first leaf is its block number.
    """

    __slots__ = (
        "_starts",
        "_ends",
        "visible",
        "visible_tokens",
        "_by_size",
        "_sizes",
        "archived",
    )

    def __init__(self) -> None:
        # Runs of visible first leaves: [_starts[i], _ends[i]], ascending, disjoint
        # and not adjacent.
        self._starts: list[int] = []
        self._ends: list[int] = []
        self.visible = 0
        self.visible_tokens = 0
        self._by_size: dict[int, list[int]] = {}
        self._sizes: list[int] = []  # the keys of _by_size, ascending
        self.archived = UnitOrder()

    def copy(self) -> ManagementIndex:
        new = ManagementIndex()
        new._starts, new._ends = self._starts.copy(), self._ends.copy()
        new.visible, new.visible_tokens = self.visible, self.visible_tokens
        new._by_size = {t: fs.copy() for t, fs in self._by_size.items()}
        new._sizes, new.archived = self._sizes.copy(), self.archived.copy()
        return new

    # ----------------------------------------------------------- updates
    def put(self, uid: str, old: UnitRow | None, row: UnitRow) -> None:
        if old is None:
            self._enter(uid, row)
        elif old.archived != row.archived or old.first != row.first or old.tokens != row.tokens:
            self._leave(uid, old)
            self._enter(uid, row)

    def drop(self, uid: str, row: UnitRow) -> None:
        self._leave(uid, row)

    def _enter(self, uid: str, row: UnitRow) -> None:
        if row.archived:
            self.archived.add(uid, row)
            return
        self.visible += 1
        self.visible_tokens += row.tokens
        self._run_add(row.first)
        fs = self._by_size.get(row.tokens)
        if fs is None:
            self._by_size[row.tokens] = [row.first]
            bisect.insort(self._sizes, row.tokens)
        elif row.first > fs[-1]:
            fs.append(row.first)
        else:
            bisect.insort(fs, row.first)

    def _leave(self, uid: str, row: UnitRow) -> None:
        if row.archived:
            self.archived.remove(uid, row)
            return
        self.visible -= 1
        self.visible_tokens -= row.tokens
        self._run_remove(row.first)
        fs = self._by_size[row.tokens]
        if len(fs) == 1:
            del self._by_size[row.tokens]
            del self._sizes[bisect.bisect_left(self._sizes, row.tokens)]
        else:
            del fs[bisect.bisect_left(fs, row.first)]

    def _run_add(self, p: int) -> None:
        starts, ends = self._starts, self._ends
        if not ends or p > ends[-1]:  # after every run: a newly registered block
            if ends and ends[-1] == p - 1:
                ends[-1] = p
            else:
                starts.append(p)
                ends.append(p)
            return
        i = bisect.bisect_right(starts, p) - 1  # the run before p (p is in none)
        left = i >= 0 and ends[i] == p - 1
        right = i + 1 < len(starts) and starts[i + 1] == p + 1
        if left and right:
            ends[i] = ends[i + 1]
            del starts[i + 1], ends[i + 1]
        elif left:
            ends[i] = p
        elif right:
            starts[i + 1] = p
        else:
            starts.insert(i + 1, p)
            ends.insert(i + 1, p)

    def _run_remove(self, p: int) -> None:
        starts, ends = self._starts, self._ends
        i = bisect.bisect_right(starts, p) - 1  # the run holding p
        s, e = starts[i], ends[i]
        if s == e:
            del starts[i], ends[i]
        elif p == s:
            starts[i] = p + 1
        elif p == e:
            ends[i] = p - 1
        else:
            ends[i] = p - 1
            starts.insert(i + 1, p + 1)
            ends.insert(i + 1, e)

    # ----------------------------------------------------------- reads
    def runs(self) -> list[tuple[int, int]]:
        """The runs of visible first leaves, ascending (first and last, inclusive)."""
        return list(zip(self._starts, self._ends, strict=True))

    def largest(self, k: int) -> list[int]:
        """First leaves of the ``k`` visible rows with the most ~Tok (ties: the
        older first), in that order."""
        out: list[int] = []
        by_size = self._by_size
        for t in reversed(self._sizes):
            out.extend(by_size[t][: k - len(out)])
            if len(out) >= k:
                break
        return out

    def visible_summary(self, skip: list[int], name: Callable[[int], str], limit: int = 8) -> str:
        """``_id_summary`` of the visible units but those at first leaves
        ``skip`` (ascending, all visible), in position order; ``name`` gives the
        unit at a first leaf. Reads the runs until ``limit`` items are written:
        O(limit + len(skip)) runs."""
        parts: list[str] = []
        covered = j = 0
        m = len(skip)

        def item(a: int, b: int) -> str:
            return name(a) if a == b else f"{name(a)}-{name(b)}"

        for s, e in zip(self._starts, self._ends, strict=True):
            while s <= e and len(parts) < limit:
                while j < m and skip[j] < s:
                    j += 1
                if j < m and skip[j] <= e:  # the run breaks at a unit left out
                    t = skip[j]
                    j += 1
                    if t > s:
                        parts.append(item(s, t - 1))
                        covered += t - s
                    s = t + 1
                else:
                    parts.append(item(s, e))
                    covered += e - s + 1
                    s = e + 1
            if len(parts) >= limit:
                break
        rest = self.visible - m - covered
        if rest:
            parts.append(f"+{rest} more")
        return ",".join(parts)
