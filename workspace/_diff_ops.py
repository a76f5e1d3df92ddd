"""Operation sequences for the differential test of the engine against its
executable model (paper, Methodology: "Workspace invariants", Algorithm 1):
plain, frozen records and one generator that draws them from any source of
choices (Hypothesis, which shrinks them, or a seeded ``random.Random``).

An operation is a plain dict with an ``"op"`` key; a sequence carries the
workspace configuration it runs under. Nothing here touches an engine except
:func:`minimal_budget`, which asks the reference engine for the smallest
budget a configuration accepts (a number the generator then offsets).
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from ._errors import WorkspaceArgumentError

__all__ = [
    "OperationSequence",
    "Choices",
    "RandomChoices",
    "HypothesisChoices",
    "generate_sequence",
    "sequence_strategy",
    "minimal_budget",
    "OP_KINDS",
]

#: Every operation kind the generator produces (and the driver applies).
OP_KINDS = (
    "system",  # register a system message
    "user",  # register a user message
    "assistant",  # register an assistant message without tool calls
    "call",  # register an assistant message with (parallel) tool calls
    "result",  # register the result of a pending call, through the budget guard
    "archive",  # archive blocks / ranges / groups (API or agent tool)
    "delete",  # delete units (API or agent tool)
    "restore",  # restore archived units one level
    "read",  # read a payload by key or display path, with a selector
)

_WORDS = (
    "alpha", "beta", "gamma", "delta", "order", "refund", "pending", "shipped", "log", "error",
    "scheduler", "01:00", "row", "42", "3.14", "id", "csv", "json", "{\"k\": 1}", "naïve",
    "日本", "emoji😀", "\n", "tab\t", "x",
)
_TOOL_NAMES = ("search", "fetch_page", "export_orders", "read_log", "run_sql")
_CONTEXT_TOOLS = ("context_workspace_archive", "context_workspace_delete")
_RANGE_SEPS = ("-", ":", "..", " to ", "\u2013")


@dataclass(frozen=True, slots=True)
class OperationSequence:
    """One generated run: the workspace configuration and its operations.

    Attributes
    ----------
    config : dict
        ``budget``, ``tokenizer`` (``"approx"`` or ``"cl100k_base"``), ``store``
        (``"memory"`` or ``"disk"``), ``format`` (``"openai"`` or
        ``"anthropic"``: the wire format messages are registered and rendered
        in), ``hard_limit`` (None: the engine's default), ``protocol``,
        ``cache_prefix`` and ``keep_pending`` (the engine's options; an absent
        ``keep_pending`` is False), and sometimes ``dashboard``
        (``archived_rows``, ``management_rows``, ``compact``: the
        ``DashboardConfig`` the workspace is built with).
    ops : tuple of dict
        The operations, each ``{"op": kind, ...}`` (see :data:`OP_KINDS`).
    """

    config: Mapping[str, Any]
    ops: tuple[Mapping[str, Any], ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data (``{"config": ..., "ops": [...]}``).

        Returns
        -------
        dict
            The configuration and the operations, as new dicts.
        """
        return {"config": dict(self.config), "ops": [dict(o) for o in self.ops]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> OperationSequence:
        """The sequence :meth:`to_dict` wrote (a reproducing sequence read back
        from a divergence report).

        Parameters
        ----------
        d : Mapping
            ``{"config": ..., "ops": [...]}``.

        Returns
        -------
        OperationSequence
            The sequence.

        Raises
        ------
        WorkspaceArgumentError
            If ``d`` is not a mapping with a ``config`` mapping and an ``ops`` list of
            mappings.
        """
        fix = "pass what to_dict() wrote: {'config': {...}, 'ops': [{'op': ...}, ...]}"
        if not isinstance(d, Mapping):
            raise WorkspaceArgumentError("d", d, "must be a mapping with 'config' and 'ops'", fix)
        for key in ("config", "ops"):
            if key not in d:
                raise WorkspaceArgumentError("d", d, f"must have the key {key!r}", fix)
        config, ops = d["config"], d["ops"]
        if not isinstance(config, Mapping):
            raise WorkspaceArgumentError("d", config, "must map 'config' to a mapping", fix)
        ops_rule = "must map 'ops' to a list of mappings"
        if isinstance(ops, (str, bytes, Mapping)) or not isinstance(ops, Iterable):
            raise WorkspaceArgumentError("d", ops, ops_rule, fix)
        ops = list(ops)
        if not all(isinstance(o, Mapping) for o in ops):
            raise WorkspaceArgumentError("d", ops, ops_rule, fix)
        return cls(dict(config), tuple(dict(o) for o in ops))

    def __len__(self) -> int:
        return len(self.ops)

    def describe(self) -> str:
        """One line: the configuration and the operations as compact JSON.

        Returns
        -------
        str
            :meth:`to_dict` as JSON without spaces, non-ASCII kept as is.
        """
        return json.dumps(self.to_dict(), separators=(",", ":"), ensure_ascii=False)


class Choices(Protocol):
    """A source of choices: Hypothesis (which shrinks toward ``lo`` and the
    first option) or a seeded random generator."""

    def integer(self, lo: int, hi: int) -> int: ...


class RandomChoices:
    """Choices from a seeded ``random.Random`` (fast; used for long runs)."""

    __slots__ = ("_rng",)

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng

    def integer(self, lo: int, hi: int) -> int:
        return self._rng.randint(lo, hi)


class HypothesisChoices:
    """Choices drawn through a Hypothesis ``draw`` function (so failures shrink)."""

    __slots__ = ("_draw", "_st")

    def __init__(self, draw: Callable[[Any], Any]) -> None:
        from hypothesis import strategies as st  # the testing extra, imported lazily

        self._draw = draw
        self._st = st

    def integer(self, lo: int, hi: int) -> int:
        return int(self._draw(self._st.integers(lo, hi)))


def _pick(c: Choices, options: Sequence[Any]) -> Any:
    return options[c.integer(0, len(options) - 1)]


def _weighted(c: Choices, weights: Sequence[tuple[str, int]]) -> str:
    """A kind by integer weights (the first kind is what shrinking tends to)."""
    total = sum(w for _, w in weights)
    x = c.integer(0, total - 1)
    for kind, w in weights:
        if x < w:
            return kind
        x -= w
    raise AssertionError("unreachable")


@functools.lru_cache(maxsize=32)
def minimal_budget(tokenizer: str, protocol: bool) -> int:
    """The smallest budget the reference engine accepts for this configuration
    (its management rendering must fit; ``budget`` itself appears in the
    protocol's budget notice, so the floor is found by bisection)."""
    from ._engine import Workspace
    from ._errors import BudgetConfigError

    def ok(b: int) -> bool:
        try:
            Workspace(b, tokenizer=tokenizer, protocol=protocol)
        except BudgetConfigError:
            return False
        return True

    lo, hi = 1, 1024
    while not ok(hi):
        lo, hi = hi, hi * 2
    while lo < hi:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid + 1
    return hi


def _text(c: Choices, budget: int, *, size: str | None = None) -> str:
    """Message text: a size class relative to the budget, words of mixed
    scripts (so byte and token counts differ)."""
    kind = size or _weighted(c, (("small", 6), ("empty", 1), ("medium", 3), ("large", 2)))
    if kind == "empty":
        return ""
    if kind == "small":
        n = c.integer(1, 12)
    elif kind == "medium":
        n = c.integer(12, max(13, budget // 12))
    else:  # up to twice the budget's worth of words: guard offloads and rejections
        n = c.integer(budget // 6, max(budget // 6 + 1, budget // 2))
    start = c.integer(0, len(_WORDS) - 1)
    step = c.integer(1, 7)
    return " ".join(_WORDS[(start + i * step) % len(_WORDS)] for i in range(n))


def _block_ref(c: Choices, n_blocks: int) -> int:
    # Mostly existing blocks after the system prompt and the task (which are
    # pinned); sometimes any block, or one past the end (refused by both).
    if n_blocks >= 3 and c.integer(0, 3) != 0:
        return c.integer(max(3, n_blocks - 10), n_blocks)
    return c.integer(1, max(1, n_blocks + (1 if c.integer(0, 9) == 0 else 0)))


def _answered(calls: Sequence[int], pending: Sequence[str]) -> list[int]:
    """The call blocks whose results are all registered (the newest call is not
    while any call is pending)."""
    return list(calls[:-1]) if pending else list(calls)


def _results_range(c: Choices, calls: Sequence[int], results: dict[int, tuple[int, int]],
                   done: Sequence[int], widths: Mapping[int, int]) -> str:
    """The results of one call without the call (``B5-B6`` after call ``B4``);
    mostly on a call whose results were archived before, one block wider
    (``done``: the calls whose results are all registered, the ones aimed at;
    ``widths``: how many calls each call block made)."""
    if not done:
        return f"B{_pick(c, calls) + 1}"
    again = [cb for cb in sorted(results) if cb in done]
    wide = [cb for cb in done if widths.get(cb, 1) >= 2]  # parallel calls first
    cb = _pick(c, again) if again and c.integer(0, 2) else _pick(c, wide or list(done))
    lo, hi = results.get(cb, (0, 0))
    if hi == 0:
        lo = 2 if widths.get(cb, 1) >= 3 and c.integer(0, 1) else 1
        hi = lo + 1
    elif lo > 1:
        lo -= 1
    else:
        hi += 1
    results[cb] = (lo, hi)
    return f"B{cb + lo}-B{cb + hi}"


def _spec(c: Choices, n_blocks: int, n_groups: int, calls: Sequence[int] = (),
          results: dict[int, tuple[int, int]] | None = None,
          done: Sequence[int] = (), widths: Mapping[int, int] | None = None) -> str:
    """A block selector in the forms agents write (``B3``, ``b3``, ranges with
    several separators, lists, group IDs), aimed now and then at the newest
    block, at a tool call together with the block before it (a group that
    takes a call and leaves its results outside), or at the results of a call
    without it: ``results`` remembers the last such range per call, and the
    next one on that call widens it by one block (a group of that group and
    one more result, nested, whose members' calls stay in the prompt: member
    stubs naming the top group, a handle at a level above 1)."""
    kind = _weighted(
        c,
        (("block", 5), ("range", 4), ("group", 3), ("list", 2), ("newest", 2),
         ("call", 2), ("bad", 1), ("results", 4)),
    )
    if kind == "results" and calls and results is not None:
        return _results_range(c, calls, results, done, widths or {})
    if kind == "newest" and n_blocks:
        return f"B{n_blocks}"
    if kind == "call" and calls:
        cb = _pick(c, calls)
        if cb > 1:
            return f"B{cb - 1}-B{cb}" if c.integer(0, 1) else f"B{cb},B{cb - 1}"
    if kind == "group" and n_groups:
        return f"{_pick(c, 'Gg')}{c.integer(1, n_groups + (1 if c.integer(0, 5) == 0 else 0))}"
    if kind == "range" and n_blocks >= 2:
        a = _block_ref(c, n_blocks)
        b = min(n_blocks, a + c.integer(1, 5))
        if c.integer(0, 4) == 0:
            a, b = b, a  # descending: the same blocks
        sep = _pick(c, _RANGE_SEPS)
        return f"B{a}{sep}{'' if sep == '-' and c.integer(0, 3) == 0 else 'B'}{b}"
    if kind == "list" and n_blocks >= 2:
        parts = [f"B{_block_ref(c, n_blocks)}" for _ in range(c.integer(2, 3))]
        if n_groups and c.integer(0, 1):
            parts.append(f"G{c.integer(1, n_groups)}")
        return (", " if c.integer(0, 1) else ",").join(parts)
    if kind == "bad":
        return _pick(c, ("B0", "", "X3", "B-1", "G1-G2", "B1,,B2"))
    return f"{_pick(c, 'Bb')}{_block_ref(c, n_blocks)}"


def _read_path(c: Choices, n_blocks: int, n_groups: int, archived: list[str]) -> dict[str, Any]:
    if archived and c.integer(0, 2) != 0:
        key = f"{_pick(c, archived).upper()}.txt"
    elif n_groups and c.integer(0, 1):
        key = f"G{c.integer(1, n_groups)}.txt"
    else:
        key = f"B{_block_ref(c, n_blocks)}.txt"
    form = _weighted(c, (("key", 3), ("display", 3), ("escape", 1)))
    path = {"key": key, "display": "@root/" + key, "escape": "../" + key}[form]
    sel = _weighted(c, (("none", 4), ("bytes", 2), ("lines", 2), ("member", 2)))
    selector = {
        "none": None,
        "bytes": f"bytes={c.integer(0, 40)}:{c.integer(40, 400)}",
        "lines": f"lines={c.integer(1, 3)}-{c.integer(3, 9)}",
        "member": f"member=B{_block_ref(c, n_blocks)}",
    }[sel]
    return {"op": "read", "path": path, "selector": selector}


def generate_sequence(c: Choices, *, max_ops: int = 30) -> OperationSequence:
    """Draw one configuration and up to ``max_ops`` operations.

    The generator tracks only the shape of the run it writes (how many blocks
    and groups it asked for, which calls are pending, which call ids were
    answered), never an engine's state, so the same sequence can be fed to the
    engine and to the model. Refused operations are generated on purpose
    (unknown IDs, a second result for one call, messages while calls are
    pending, malformed selectors): both sides must refuse them alike.
    """
    tokenizer = _pick(c, ("approx", "cl100k_base"))
    protocol = c.integer(0, 3) != 0
    floor = minimal_budget(tokenizer, protocol)
    # Tight budgets: a few hundred tokens above the floor, sometimes more.
    extra = _pick(c, (0, 1, 2, 8)) if c.integer(0, 5) == 0 else c.integer(0, 1500)
    # The guard's hard limit: the engine's default 2B, or close to B (then the
    # guard, not the per-result cap, decides most admissions).
    hard_kind = c.integer(0, 2)
    config = {
        "budget": floor + extra,
        "hard_limit": None if hard_kind == 0 else floor + extra + (
            _pick(c, (0, 1, 40)) if hard_kind == 1 else c.integer(0, floor + extra)
        ),
        "tokenizer": tokenizer,
        "store": _pick(c, ("memory", "disk")),
        "format": _pick(c, ("openai", "anthropic")),
        "protocol": protocol,
        # The model has both values of both options: half of the runs use
        # cache_prefix (the engine's default: its management rendering keeps the
        # cacheable prefix, then the pinned blocks after it).
        "cache_prefix": c.integer(0, 1) == 1,
    }
    budget = config["budget"]
    ops: list[dict[str, Any]] = []
    n_blocks = n_groups = 0
    pending: list[str] = []
    answered: list[str] = []
    next_call = 1
    archived: list[str] = []  # specs asked to be archived (restore and read target them)
    call_blocks: list[int] = []  # block numbers of the tool calls asked for
    result_ranges: dict[int, tuple[int, int]] = {}  # call block -> results last archived
    call_width: dict[int, int] = {}  # call block -> how many calls it made
    n = c.integer(1, max_ops)
    # A system prompt and the task first, most of the time (the agent loop's shape).
    if c.integer(0, 3) != 0:
        ops.append({"op": "system", "text": _text(c, budget, size="small"), "pinned": True})
        ops.append({"op": "user", "text": _text(c, budget, size="small"), "pinned": None})
        n_blocks = 2
    while len(ops) < n:
        if pending and c.integer(0, 5) != 0:
            kind = "result"
        else:
            kind = _weighted(
                c,
                (
                    ("call", 6),
                    ("archive", 5),
                    ("user", 2),
                    ("assistant", 2),
                    ("delete", 3),
                    ("restore", 3),
                    ("read", 2),
                    ("system", 1),
                    ("result", 1),
                    ("pins", 2),
                ),
            )
        if kind == "pins":
            # A few small pinned messages in a row (the task's follow-ups, a new
            # system note): several pinned blocks after an overflow's cacheable
            # prefix, each kept, in position order, by the management rendering.
            for _ in range(c.integer(2, 3)):
                if len(ops) >= max_ops:
                    break
                pk = _pick(c, ("user", "system"))
                ops.append({"op": pk, "text": _text(c, budget, size="small"), "pinned": True})
                n_blocks += 0 if pending else 1
            continue
        if kind in ("system", "user", "assistant"):
            op: dict[str, Any] = {"op": kind, "text": _text(c, budget)}
            if kind != "assistant":
                op["pinned"] = _pick(c, (None, False, True)) if kind == "user" else (
                    c.integer(0, 2) != 0
                )
            ops.append(op)
            n_blocks += 0 if pending else 1
        elif kind == "call":
            calls = []
            k = _weighted(c, (("1", 5), ("2", 2), ("3", 1)))
            used: set[str] = set()
            for _ in range(int(k)):
                reuse = [a for a in answered if a not in used]
                if reuse and c.integer(0, 3) == 0:
                    cid = _pick(c, reuse)  # an id reused once its call was answered
                else:
                    cid = _pick(c, ("call_", "toolu_0", "fc_", "c"))+str(next_call)
                    next_call += 1
                used.add(cid)
                if c.integer(0, 4) == 0:
                    name = _pick(c, _CONTEXT_TOOLS)
                    sp = _spec(c, n_blocks, n_groups, call_blocks, result_ranges,
                               _answered(call_blocks, pending), call_width)
                    args = {"block_id": sp}
                    if name == "context_workspace_delete":
                        args["reason"] = "no longer needed"
                    else:
                        args["replacement"] = _pick(c, ("", "index: earlier tool output"))
                    arguments = json.dumps(args)
                else:
                    name = _pick(c, _TOOL_NAMES)
                    arguments = json.dumps({"q": _text(c, budget, size="small")})
                calls.append([cid, name, arguments])
            text = _text(c, budget, size="small") if c.integer(0, 2) == 0 else None
            ops.append({"op": "call", "calls": calls, "text": text})
            if not pending:
                n_blocks += 1
                call_blocks.append(n_blocks)
                call_width[n_blocks] = len(calls)
                pending = [cl[0] for cl in calls]
        elif kind == "result":
            if pending and c.integer(0, 9) != 0:
                cid = pending[0] if c.integer(0, 2) != 0 else _pick(c, pending)
            else:  # not pending: unknown, or answered already
                cid = _pick(c, answered) if answered and c.integer(0, 1) else "call_unknown"
            op = {"op": "result", "id": cid}
            how = _weighted(c, (("text", 6), ("fit", 2), ("huge", 1)))
            if how == "fit":
                # A result sized to the guard's boundary (resolved against the
                # engine when applied): delta tokens past what is admitted as is.
                op["fit"] = c.integer(-2, 2)
            elif how == "huge":
                op["text"] = _text(c, budget, size="large") * 3
            else:
                op["text"] = _text(c, budget)
            ops.append(op)
            if cid in pending:
                pending.remove(cid)
                answered.append(cid)
                n_blocks += 1
        elif kind in ("archive", "delete", "restore"):
            if kind != "archive" and archived and c.integer(0, 2) != 0:
                spec = _pick(c, archived)
            elif kind == "archive" and result_ranges and c.integer(0, 2) == 0:
                # Widen a range of results archived before: a nested group.
                spec = _results_range(c, sorted(result_ranges), result_ranges,
                                      _answered(call_blocks, pending), call_width)
            else:
                spec = _spec(c, n_blocks, n_groups, call_blocks, result_ranges,
                             _answered(call_blocks, pending), call_width)
            op = {"op": kind, "spec": spec}
            if kind == "archive":
                op["replacement"] = _pick(c, ("", "", "index: rows 1-40, totals", "x" * 3))
            if kind == "delete":
                op["reason"] = "stale output" if c.integer(0, 5) else _pick(c, ("", "  "))
            if kind != "restore":
                op["via"] = _pick(c, ("api", "tool"))
            ops.append(op)
            if kind == "archive":
                if any(s in spec for s in (",", *_RANGE_SEPS)):
                    n_groups += 1
                    archived.append(f"G{n_groups}")
                else:
                    archived.append(spec)
        else:
            ops.append(_read_path(c, n_blocks, n_groups, archived))
    # Drawn last, so the operations a seed gives do not depend on it: now and then a
    # small ledger (few archived rows before they fold, few management rows), so the
    # folded lines of the dashboard (paper, "Does the dashboard scale?") and the
    # management dashboard's halving show up in short runs; sometimes the compact
    # columns of the paper's instance.
    if c.integer(0, 3) == 0:
        config["dashboard"] = {"archived_rows": c.integer(0, 3),
                               "management_rows": c.integer(0, 4),
                               "compact": c.integer(0, 1) == 1}
    # One run in three keep_pending (the engine's default: the management rendering
    # keeps the batch still waiting for results), drawn last for the same reason; at
    # the generator's tight budgets it refuses many calls whose batch would not fit,
    # so the other runs reach the states behind them.
    config["keep_pending"] = c.integer(0, 2) == 0
    return OperationSequence(config, tuple(ops))


def sequence_strategy(*, max_ops: int = 30) -> Any:
    """A Hypothesis strategy of :class:`OperationSequence` (shrinks toward short
    sequences of small operations)."""
    from hypothesis import strategies as st

    @st.composite
    def _seq(draw: Callable[..., Any]) -> OperationSequence:
        return generate_sequence(HypothesisChoices(draw), max_ops=max_ops)

    return _seq()
