"""The ``<context_workspace_status>`` dashboard in the paper's format: a 20-cell
budget bar, the overhead / conversation / dashboard split and a ledger row per
actionable unit, counted from cached pieces so a turn never re-tokenises it."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from vistalab._core._door import unnetted

from ._accounting import MESSAGE_FRAMING
from ._errors import WorkspaceArgumentError
from ._tokenizers import WORD_SPLITS, Tokenizer, utf8_length

__all__ = [
    "DashboardConfig",
    "LedgerRow",
    "DashboardText",
    "DashboardRenderer",
    "BAR_CELLS",
    "format_ledger_row",
    "parse_ledger_rows",
]

#: Cells of the budget bar (paper: ``[############--------] 62%``).
BAR_CELLS = 20
OPEN_TAG = "<context_workspace_status>"
CLOSE_TAG = "</context_workspace_status>"
_BLOCKS_TITLE = "## Context Blocks  (Age = root-turn distance; 0r newest)"
_HEADER_COMPACT = "ID     ~Tok   Age  Type               Status"
_HEADER_FULL = "ID     ~Tok   Age  Type               Level  Parent  Status"
_RULE_COMPACT = "-" * 48
_RULE_FULL = "-" * 60
#: Role of the dashboard message (a user-side observation injected each turn).
DASHBOARD_ROLE = "user"
#: Dashboard heads memoised (their keys change with every registration, so a
#: large memo would hold one head per block).
_HEAD_CACHE = 64
#: Head pieces memoised (the constant lines and a few turns' figures).
_HEAD_PIECES = 1024
#: The constant word-start pieces of the head's budget-bar chunk, between its
#: figures (see DashboardRenderer._plain_head_count).
_HEAD_WORDS = (" /", " tokens)\n  overhead", " |", " conversation", " |", " dashboard")


def _budget_lines() -> str:
    """The head's first lines, before the budget bar."""
    return f"{OPEN_TAG}\n## Context Budget\n"


# The two halves of WORD_SPLITS, the additive contract's split positions: a
# line start, and a word start within a line (see DashboardRenderer._head_count).
_LINE_SPLITS = re.compile(r"(?<=\n)(?=[^\s/])")
_SPACE_SPLITS = re.compile(r"(?<=\S)(?= )")
assert WORD_SPLITS.pattern == _SPACE_SPLITS.pattern + "|" + _LINE_SPLITS.pattern


@dataclass(frozen=True, slots=True)
class DashboardConfig:
    """How the ledger is laid out.

    Attributes
    ----------
    archived_rows : int
        The newest archived units are listed one per row; older ones fold
        into one summary line, so the dashboard's cost stays bounded as
        archives accumulate (paper, "Does the dashboard scale?").
    management_rows : int
        Rows of the overflow (management) dashboard, largest visible units
        first; the rest fold into summary lines.
    compact : bool
        Print the paper's compact column subset (no Level / Parent).
    """

    archived_rows: int = 8
    management_rows: int = 24
    compact: bool = False

    def __post_init__(self) -> None:
        for name in ("archived_rows", "management_rows"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= 10_000:
                raise WorkspaceArgumentError(name, v, "must be an integer with 0 <= value <= 10000")
        if not isinstance(self.compact, bool):
            raise WorkspaceArgumentError("compact", self.compact, "must be True or False")

    def to_plain(self) -> dict[str, object]:
        """Plain data of the layout (recorded in the engine's configuration and
        snapshots).

        Returns
        -------
        dict
            ``archived_rows``, ``management_rows`` and ``compact``.
        """
        return {
            "archived_rows": self.archived_rows,
            "management_rows": self.management_rows,
            "compact": self.compact,
        }


@dataclass(frozen=True, slots=True)
class LedgerRow:
    """One actionable unit as the ledger shows it (one dashboard row).

    The fields are the dashboard's columns, in order; ``Workspace.ledger_rows``
    gives every unit's row, :func:`parse_ledger_rows` reads them back from a
    dashboard's text.

    Attributes
    ----------
    unit_id : str
        ID: ``B<n>`` for a block, ``G<n>`` for an archive group.
    tokens : int
        ~Tok: the unit's tokens (for an archived unit, its tokens when last
        visible).
    age : int
        Age: root turns since the unit's newest block (``0`` is newest, the
        dashboard prints ``0r``).
    type : str
        Type: the block type (``system``, ``user_message``, ``tool_call``, ...)
        or ``group`` for an archive group.
    level : int
        Level: compression level (0 raw, 1 archived or offloaded alone, a group
        one above its highest member).
    parent : str
        Parent: the tool-call block a tool result answers, ``-`` otherwise.
    status : str
        Status: ``visible``, ``pinned``, ``archived`` or ``offloaded_placeholder``.
    """

    unit_id: str
    tokens: int
    age: int
    type: str
    level: int
    parent: str
    status: str


def row_prefix(unit_id: str, tokens: int) -> str:
    """A ledger row's ID and ~Tok cells."""
    return f"{unit_id:<5} {tokens:>6,}"


def age_text(age: int) -> str:
    """A ledger row's Age cell (``"   8r"``)."""
    return " " + f"{age}r".rjust(4)


def row_suffix(type_: str, level: int, parent: str, status: str, *, compact: bool) -> str:
    """A ledger row's Type (Level, Parent) and Status cells and its newline."""
    if compact:
        return f"  {type_:<17}  {status}\n"
    return f"  {type_:<17}  {level:<5}  {parent:<6}  {status}\n"


def format_ledger_row(row: LedgerRow, *, compact: bool = False) -> str:
    """One ledger line as the dashboard prints it (with its newline).

    Parameters
    ----------
    row : LedgerRow
        The row.
    compact : bool
        Print the compact columns (no Level and Parent).

    Returns
    -------
    str
        The line, ending with a newline.
    """
    return (
        row_prefix(row.unit_id, row.tokens)
        + age_text(row.age)
        + row_suffix(row.type, row.level, row.parent, row.status, compact=compact)
    )


_ROW_FULL = re.compile(
    r"([BG][1-9][0-9]*) +([0-9][0-9,]*) +([0-9]+)r  (\S+) +([0-9]+) +(\S+) +(\S+)\Z"
)
_ROW_COMPACT = re.compile(r"([BG][1-9][0-9]*) +([0-9][0-9,]*) +([0-9]+)r  (\S+) +(\S+)\Z")


def parse_ledger_rows(dashboard: str) -> list[LedgerRow]:
    """The ledger rows of a dashboard (normal or management form, full or
    compact columns), in order; inverse of :func:`format_ledger_row`.

    Compact rows do not print Level and Parent: they come back as ``0`` and
    ``"-"``. Lines that are not rows (heads, notes, folded-unit lines) are skipped.

    Parameters
    ----------
    dashboard : str
        A rendered ``<context_workspace_status>`` dashboard.

    Returns
    -------
    list of LedgerRow
        In dashboard order.
    """
    rows = []
    for line in dashboard.splitlines():
        m = _ROW_FULL.match(line)
        if m:
            uid, tok, age, type_, level, parent, status = m.groups()
            rows.append(
                LedgerRow(
                    uid, int(tok.replace(",", "")), int(age), type_, int(level), parent, status
                )
            )
            continue
        m = _ROW_COMPACT.match(line)
        if m:
            uid, tok, age, type_, status = m.groups()
            rows.append(LedgerRow(uid, int(tok.replace(",", "")), int(age), type_, 0, "-", status))
    return rows


@dataclass(frozen=True, slots=True)
class DashboardText:
    """A rendered dashboard and the tokens of the message that carries it."""

    text: str
    message_tokens: int


def overflow_notice(used: int, budget: int, need: int) -> str:
    """The overflow line of the management dashboard. Its ledger lists the
    largest visible units (the ones worth freeing), in conversation order like
    every ledger the paper shows ("Dashboard format": one row per block by ID),
    and the heading says exactly that."""
    # Exactly as many bytes as the earlier wording ("Largest first:"), so the
    # management floor, and with it every budget that was valid, is unchanged.
    return (
        f"## OVERFLOW: ~{used:,} > {budget:,} tokens. Task tools are off until you "
        f"free at least ~{need:,} tokens with context_workspace_archive or "
        "context_workspace_delete (IDs, ranges like B10-B20 or groups). Largest ones, by ID:"
    )


class DashboardRenderer:
    """Builds dashboards and counts them from per-row cached pieces.

    A row is ``prefix + age + suffix``: the prefix (ID, ~Tok) and suffix
    (Type, Level, Parent, Status, newline) change only when the unit does,
    and the age piece comes from a small table, so with an additive
    tokenizer a turn costs a few dictionary look-ups per row.
    """

    def __init__(self, tokenizer: Tokenizer, config: DashboardConfig) -> None:
        self._tok = tokenizer
        # The engine's own texts (never blamed by the net, see unnetted).
        self._count = unnetted(tokenizer.count)
        self._additive = bool(getattr(tokenizer, "additive", False))
        # A tokenizer whose count is a function of the UTF-8 byte length alone
        # (``Tokenizer.count_utf8_bytes``) is counted from the pieces' byte
        # lengths, which do add up: exact by construction, never additive.
        by_bytes = getattr(tokenizer, "count_utf8_bytes", None)
        self._by_bytes: Callable[[int], int] | None = (
            None if self._additive or not callable(by_bytes) else by_bytes
        )
        self._incremental = self._additive or self._by_bytes is not None
        self._measure: Callable[[str], int] = self._count if self._additive else utf8_length
        self.config = config
        self._piece_cache: dict[str, int] = {}
        # Head lines and their figures' pieces (see _head_count), bounded: a
        # turn's figures are new, so an unbounded memo would grow per block.
        self._head_pieces: dict[str, int] = {}
        self._suffix_cache: dict[tuple[str, int, str, str], tuple[str, int]] = {}
        # (budget, overhead, conversation, body tokens) -> (dashboard tokens, head):
        # with an additive tokenizer the head's fixed point depends on nothing else.
        self._head_cache: dict[tuple[int, int, int, int], tuple[int, str]] = {}
        # Tokens of the head's constant pieces (see _plain_head_count).
        self._head_const: int | None = None
        # (bar cells, percent, budget, overhead) -> tokens of their head pieces.
        self._head_steady: dict[tuple[int, int, int, int], int] = {}
        self._role_cost = MESSAGE_FRAMING + self._count(DASHBOARD_ROLE)
        # Tokens of the age fields of ages 0 .. len - 1, for the ledgers' sums,
        # and those fields' texts, once a rendering needs them (see age_table).
        self._age_texts: list[str] = []
        self._age_tokens: list[int] = []
        # The same tables reversed (see age_columns), and the texts they reverse.
        self._age_reversed: tuple[list[str], list[str], list[int]] | None = None

    @property
    def additive(self) -> bool:
        """Whether rows are counted from cached pieces: the tokenizer is
        additive (pieces carry tokens), or counts from UTF-8 bytes alone
        (pieces carry byte lengths, see ``Tokenizer.count_utf8_bytes``)."""
        return self._incremental

    # ------------------------------------------------------------- pieces
    def _piece(self, text: str) -> int:
        n = self._piece_cache.get(text)
        if n is None:
            if len(self._piece_cache) > 65536:
                self._piece_cache.clear()
            n = self._piece_cache[text] = self._measure(text)
        return n

    def _head_count(self, head: str) -> int:
        """Tokens of a dashboard head (additive tokenizers), from cached pieces.

        The ``additive`` contract lets a count split where a newline meets a
        character that is neither whitespace nor ``/`` and where a non-space
        meets a space (:data:`WORD_SPLITS`), so ``count(head)`` is the sum of
        the counts of the pieces between such positions (summing
        ``count(a + b) == count(a) + count(b)`` left to right). The head is cut
        at line starts first: its tags, titles and table heading are lines of
        their own, counted once; a line that changed (the figures) is cut again
        at word starts, where each figure is a piece of a few characters. The
        fixed-point search counts a head several times a turn with new
        figures, and each count is then a few dictionary look-ups.
        """
        cache, count = self._head_pieces, self._count
        if len(cache) > _HEAD_PIECES:  # figures of past turns: a few per registration
            cache.clear()
        get = cache.get
        total = 0
        for chunk in _LINE_SPLITS.split(head):
            n = get(chunk)
            if n is None:
                n = 0
                for piece in _SPACE_SPLITS.split(chunk):
                    m = get(piece)
                    if m is None:
                        m = cache[piece] = count(piece)
                    n += m
                cache[chunk] = n
            total += n
        return total

    def _plain_head_count(
        self, used: int, budget: int, overhead: int, conversation: int, dashboard: int
    ) -> int:
        """:meth:`_head_count` of the head :meth:`_head` writes for these
        figures with no pad or overflow line, without writing it: the head's
        line-start pieces are its constant lines and one chunk, the budget bar's
        line and the split line below it (which starts with a space) up to the
        blank line, and that chunk's word-start pieces are its figures (an
        integer printed with ``,`` holds no space) between constant words."""
        cache = self._head_pieces
        if len(cache) > _HEAD_PIECES:  # figures of past turns: a few per registration
            cache.clear()
        const = self._head_const
        if const is None:
            const = self._head_const = (
                self._head_count(_budget_lines())
                + self._head_count(self._blocks_lines())
                + sum(map(self._head_count, _HEAD_WORDS))
            )
        frac = used / budget
        filled = min(BAR_CELLS, int(frac * BAR_CELLS))
        get = cache.get
        # Figures that stay for many turns: their pieces' sum remembered by
        # the figures themselves (no piece written while they stay).
        steady = (filled, int(frac * 100), budget, overhead)
        total = self._head_steady.get(steady, -1)
        if total < 0:
            total = 0
            for piece in (
                "[" + "#" * filled + "-" * (BAR_CELLS - filled) + "]",
                f" {steady[1]}%",
                f" {budget:,}",
                f" ~{overhead:,}",
            ):
                n = get(piece)
                if n is None:
                    n = cache[piece] = self._count(piece)
                total += n
            if len(self._head_steady) >= _HEAD_PIECES:
                self._head_steady.clear()
            self._head_steady[steady] = total
        total += const
        # The figures that change every registration are counted together: each
        # piece but the last ends with a digit and the next starts with a space,
        # a split position of the additive contract, so the count of the joined
        # text is the sum of theirs (one tokenizer call, not one each).
        fresh = []
        for piece in (f"  (~{used:,}", f" ~{conversation:,}", f" ~{dashboard:,}\n\n"):
            n = get(piece)
            if n is None:
                fresh.append(piece)
            else:
                total += n
        if len(fresh) == 1:
            total += cache.setdefault(fresh[0], self._count(fresh[0]))
        elif fresh:
            total += self._count("".join(fresh))
        return total

    def _blocks_lines(self) -> str:
        """The head's last lines: the ledger's title, column heading and rule."""
        compact = self.config.compact
        return (
            f"{_BLOCKS_TITLE}\n{_HEADER_COMPACT if compact else _HEADER_FULL}\n"
            f"{_RULE_COMPACT if compact else _RULE_FULL}\n"
        )

    def row_parts(
        self, unit_id: str, tokens: int, type_: str, level: int, parent: str, status: str
    ) -> tuple[str, str, int]:
        """(prefix, suffix, their tokens) of a ledger row; the age piece goes between.

        The prefix ends with a digit and the age and suffix pieces start with
        a space, so an additive tokenizer counts the row as the sum of the
        three pieces (0 tokens are reported for non-additive tokenizers,
        which count the assembled text instead). A suffix only this row has
        (it names a parent) is counted with the prefix, in one call.
        """
        prefix = row_prefix(unit_id, tokens)
        m = self._measure
        key = (type_, level, parent, status)
        hit = self._suffix_cache.get(key)
        if hit is None:
            suffix = row_suffix(type_, level, parent, status, compact=self.config.compact)
            if parent != "-":  # a text of this row alone: its own pieces counted at once
                return prefix, suffix, (self._row_count(prefix, suffix, unit_id, parent)
                                        if self._incremental else 0)
            hit = self._suffix_cache[key] = (suffix, m(suffix) if self._incremental else 0)
        ptok = (m(prefix) + hit[1]) if self._incremental else 0
        return prefix, hit[0], ptok

    def _row_count(self, prefix: str, suffix: str, unit_id: str, parent: str) -> int:
        """Tokens of ``prefix + suffix`` of a row that names a parent, from its
        word-start pieces (:data:`WORD_SPLITS`, as :meth:`_head_count` cuts):
        the pieces every such row shares (its ~Tok figure, Type, Level and
        Status cells) are remembered; the two that name a unit (its ID and
        its parent's) are counted together, in one call, and not kept (a row
        of its own per block)."""
        fresh = []
        total = 0
        piece = self._piece
        for text in (prefix, suffix):
            for p in _SPACE_SPLITS.split(text):
                if unit_id in p or parent in p:
                    fresh.append(p)
                else:
                    total += piece(p)
        return total + (self._measure("".join(fresh)) if fresh else 0)

    def age_piece(self, age: int) -> tuple[str, int]:
        """The Age cell (``"   8r"``) and its tokens. The tokens are read from
        a flat list of every age up to the oldest asked for (a ledger's running
        sums ask for them as blocks come, a row at a time); the text from
        :meth:`age_table`'s once a rendering has built it, else it is made
        here (it is only the age, formatted), so a history registered but not
        rendered keeps no string per age."""
        tokens = self._age_tokens
        if age >= len(tokens):
            tokens = self._age_counts(age)
        elif age < 0:  # never a row's age; counted, not cached
            text = age_text(age)
            return text, (self._measure(text) if self._incremental else 0)
        texts = self._age_texts
        return (texts[age] if age < len(texts) else age_text(age)), tokens[age]

    def _age_counts(self, upto: int) -> list[int]:
        """The tokens of the Age cell of every age ``0 .. upto`` (0 for a
        non-additive tokenizer), indexable by age; the list doubles as it
        grows, so each age is counted once (O(1) amortised)."""
        tokens = self._age_tokens
        n = len(tokens)
        if upto < n:
            return tokens
        cap = max(2 * n, upto + 1, 256)
        if self._incremental:
            count = self._measure
            tokens = tokens + [count(age_text(a)) for a in range(n, cap)]
        else:
            tokens = [0] * cap
        self._age_tokens = tokens
        return tokens

    def age_table(self, upto: int) -> tuple[list[str], list[int]]:
        """Age fields of every age ``0 .. upto`` and their tokens (0 for a
        non-additive tokenizer), indexable by age, as long as each other; do
        not modify.

        A ledger prints one per row. The texts are made when a rendering
        first needs them and re-made together whenever the table grows (it
        doubles, so each age costs O(1) amortised), so they sit next to each
        other in memory rather than scattered over the heap by the turns
        that first needed them."""
        tokens = self._age_counts(upto)
        if len(self._age_texts) != len(tokens):
            self._age_texts = [age_text(a) for a in range(len(tokens))]
        return self._age_texts, tokens

    def age_columns(self, upto: int) -> tuple[list[str], list[int], int]:
        """The age fields and their tokens of :meth:`age_table` in reverse
        order, and ``top``: entry ``top - a`` is age ``a``'s (``a <= upto``);
        do not modify. At turn ``T`` the row of turn ``t`` reads entry
        ``top - T + t``, so the rows of a run of turns read one contiguous
        slice, whatever ``T`` is (a rendering picks each chunk's ages out of
        one slice with a fixed ``operator.itemgetter``, see
        ``PreflightLayer._candidate``). Rebuilt when the table grows."""
        texts, tokens = self.age_table(upto)
        rev = self._age_reversed
        if rev is None or rev[0] is not texts:
            rev = self._age_reversed = (texts, texts[::-1], tokens[::-1])
        return rev[1], rev[2], len(texts) - 1

    def note_piece(self, note: str) -> tuple[str, int]:
        """A free-text ledger line (folded units) with its newline, and its tokens."""
        text = note + "\n"
        return text, (self._piece(text) if self._incremental else 0)

    # ------------------------------------------------------------- heads
    def _head(
        self,
        *,
        used: int,
        budget: int,
        overhead: int,
        conversation: int,
        dashboard: int,
        overflow: str = "",
        pad: int = 0,
    ) -> str:
        frac = used / budget
        filled = min(BAR_CELLS, int(frac * BAR_CELLS))
        bar = "#" * filled + "-" * (BAR_CELLS - filled)
        lines = [
            OPEN_TAG,
            "## Context Budget",
            f"[{bar}] {int(frac * 100)}%  (~{used:,} / {budget:,} tokens)",
            f"  overhead ~{overhead:,} | conversation ~{conversation:,} | dashboard ~{dashboard:,}",
        ]
        if pad:
            lines.append("  " + " ".join(["."] * pad))
        if overflow:
            lines.append(overflow)
        lines += [
            "",
            _BLOCKS_TITLE,
            _HEADER_COMPACT if self.config.compact else _HEADER_FULL,
            _RULE_COMPACT if self.config.compact else _RULE_FULL,
        ]
        return "\n".join(lines) + "\n"

    def _body(
        self,
        rows: Sequence[LedgerRow],
        notes: Sequence[str],
        pieces: Sequence[tuple[str, str, int]] | None = None,
    ) -> tuple[str, int]:
        parts: list[str] = []
        tokens = 0
        for note in notes:
            text, n = self.note_piece(note)
            parts.append(text)
            tokens += n
        for i, row in enumerate(rows):
            if pieces is None:
                prefix, suffix, n = self.row_parts(
                    row.unit_id, row.tokens, row.type, row.level, row.parent, row.status
                )
            else:
                prefix, suffix, n = pieces[i]
            age, m = self.age_piece(row.age)
            parts += (prefix, age, suffix)
            tokens += n + m
        return "".join(parts), tokens

    def _message_tokens(self, head: str, body: str, body_tokens: int) -> int:
        if self._additive:
            return self._role_cost + self._head_count(head) + body_tokens + self._piece(CLOSE_TAG)
        if self._by_bytes is not None:
            return self._role_cost + self._by_bytes(
                utf8_length(head) + body_tokens + self._piece(CLOSE_TAG)
            )
        return self._role_cost + self._count(head + body + CLOSE_TAG)

    # ------------------------------------------------------------- public
    def ledger(
        self,
        rows: Sequence[LedgerRow],
        notes: Sequence[str],
        *,
        budget: int,
        overhead: int,
        conversation: int,
    ) -> DashboardText:
        """The candidate dashboard for explicit rows (see :meth:`ledger_body`)."""
        body, body_tokens = self._body(rows, notes)
        return self.ledger_body(
            body, body_tokens, budget=budget, overhead=overhead, conversation=conversation
        )

    def ledger_body(
        self,
        body: str,
        body_tokens: int,
        *,
        budget: int,
        overhead: int,
        conversation: int,
    ) -> DashboardText:
        """The candidate dashboard around a pre-assembled ledger ``body``,
        whose budget line includes the dashboard's own cost.

        ``overhead`` and ``conversation`` are every other token of the
        rendering; ``body_tokens`` is the body's count for an additive
        tokenizer (ignored otherwise). The printed dashboard figure must equal
        the message's real token count, which depends on the digits printed,
        so it is solved as a fixed point of ``d -> tokens(dashboard printing d)``.
        """
        if self._incremental:
            d, head = self._solve_head(body_tokens, budget, overhead, conversation)
            return DashboardText(head + body + CLOSE_TAG, d)
        fixed = overhead + conversation

        def tokens_for(d: int, pad: int = 0) -> tuple[str, int]:
            head = self._head(
                used=fixed + d,
                budget=budget,
                overhead=overhead,
                conversation=conversation,
                dashboard=d,
                pad=pad,
            )
            return head, self._message_tokens(head, body, body_tokens)

        d, head = _fixed_point(tokens_for, start=(len(body) + 3) // 4 + 90)
        return DashboardText(head + body + CLOSE_TAG, d)

    def ledger_tokens(
        self, body_tokens: int, *, budget: int, overhead: int, conversation: int
    ) -> int:
        """Tokens of the candidate dashboard message around a body of
        ``body_tokens`` tokens, without assembling it (additive tokenizers only:
        the same number :meth:`ledger_body` reports for any body of that count)."""
        if not self._incremental:
            raise WorkspaceArgumentError(
                "tokenizer",
                getattr(self._tok, "name", repr(self._tok)),
                "must be additive to count a dashboard from its body's token count",
                "assemble the body and call ledger_body",
            )
        return self._solve_head(body_tokens, budget, overhead, conversation)[0]

    def _solve_head(
        self, body_tokens: int, budget: int, overhead: int, conversation: int
    ) -> tuple[int, str]:
        key = (budget, overhead, conversation, body_tokens)
        hit = self._head_cache.get(key)
        if hit is not None:
            return hit
        fixed = overhead + conversation
        tail = body_tokens + self._piece(CLOSE_TAG) + self._role_cost
        by_bytes = self._by_bytes
        close = self._piece(CLOSE_TAG)

        def head_for(d: int, pad: int = 0) -> str:
            return self._head(
                used=fixed + d,
                budget=budget,
                overhead=overhead,
                conversation=conversation,
                dashboard=d,
                pad=pad,
            )

        def tokens_for(d: int, pad: int = 0) -> tuple[str, int]:
            if by_bytes is not None:  # body_tokens is the body's UTF-8 bytes
                head = head_for(d, pad)
                return head, self._role_cost + by_bytes(utf8_length(head) + body_tokens + close)
            if not pad:  # the head is written once, for the figure found
                return "", self._plain_head_count(
                    fixed + d, budget, overhead, conversation, d
                ) + tail
            head = head_for(d, pad)
            return head, self._head_count(head) + tail

        # The start the full recount uses for a byte-counted tokenizer (an ASCII
        # body: its characters are its bytes), so the same fixed point is found.
        start = body_tokens + 90 if by_bytes is None else (body_tokens + 3) // 4 + 90
        d, head = _fixed_point(tokens_for, start=start)
        if not head:
            head = head_for(d)
        if len(self._head_cache) >= _HEAD_CACHE:  # drop the oldest: a turn asks a few keys
            del self._head_cache[next(iter(self._head_cache))]
        self._head_cache[key] = (d, head)
        return d, head

    def management(
        self,
        rows: Sequence[LedgerRow],
        notes: Sequence[str],
        *,
        budget: int,
        used: int,
        overhead: int,
        conversation: int,
        dashboard: int,
        pieces: Sequence[tuple[str, str, int]] | None = None,
    ) -> DashboardText:
        """The overflow dashboard: the candidate's figures (what preflight
        compared with the budget), an overflow notice and a capped ledger.
        ``pieces``, if given, are the rows' :meth:`row_parts`, already made."""
        overflow = overflow_notice(used, budget, used - budget)
        head = self._head(
            used=used,
            budget=budget,
            overhead=overhead,
            conversation=conversation,
            dashboard=dashboard,
            overflow=overflow,
        )
        body, body_tokens = self._body(rows, notes, pieces)
        return DashboardText(head + body + CLOSE_TAG, self._message_tokens(head, body, body_tokens))

    def worst_case_management_bytes(self, budget: int) -> int:
        """UTF-8 bytes of the largest possible row-less management dashboard
        message (role framing included): an upper bound on its tokens for any
        tokenizer honouring ``count(text) <= utf8 bytes``."""
        big = 10**15 - 1
        ids = ",".join(f"B{10**12 - 1 - 2 * i}" for i in range(8)) + ",+999999999999 more"
        notes = [
            f"(+{big:,} more visible units: {ids}; ~{big:,} tok)",
            f"(+{big:,} archived units: {ids}; ~{big:,} tok)",
        ]
        overflow = overflow_notice(big, budget, big)
        head = self._head(
            used=big,
            budget=budget,
            overhead=big,
            conversation=big,
            dashboard=big,
            overflow=overflow,
        )
        # The bar is computed from used/budget; its width is fixed, so `big` is the worst case.
        text = head + "".join(n + "\n" for n in notes) + CLOSE_TAG
        return self._role_cost + len(text.encode("utf-8"))


def _fixed_point(tokens_for: Callable[..., tuple[str, int]], *, start: int) -> tuple[int, str]:
    """Smallest self-consistent dashboard figure near ``start``.

    Iterates ``d -> f(d)``, which settles within a few steps for almost every
    dashboard. It can cycle: a BPE tokenizer may merge the budget bar's
    ``#``/``-`` run differently when one more cell fills, so printing a larger
    ``d`` can cost one token less (e.g. ``f(99) = 100`` and ``f(100) = 99``).
    Then a pad line of dots (``"  . ."``) is added to a candidate ``d`` until
    the count is exact; every candidate is re-counted, so the printed figure
    always equals the real cost. Only if that search fails too (never
    observed) is the smallest ``d`` with ``f(d) <= d`` used, an upper bound
    that still keeps the rendering within budget.
    """
    d = start
    seen: list[int] = []
    for _ in range(12):
        head, nd = tokens_for(d)
        if nd == d:
            return d, head
        seen.append(d)
        d = nd
    lo, hi = min(seen + [d]), max(seen + [d])
    for cand in range(lo, hi + 1):
        head, nd = tokens_for(cand)
        if nd == cand:
            return cand, head
    for cand in range(lo, hi + 12):
        for pad in range(1, 8):
            head, nd = tokens_for(cand, pad)
            if nd == cand:
                return cand, head
    cand = lo
    while True:  # pragma: no cover - never observed; see the docstring
        head, nd = tokens_for(cand)
        if nd <= cand:
            return cand, head
        cand += 1
