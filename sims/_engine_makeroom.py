"""The make-room instance M_{n,L,l} run through the reference workspace engine:
calibrated block texts, a budget over by exactly L, archives through the agent's
tool until preflight reports normal mode, byte-exact read-back of every archived
load-bearing block, cross-checked with the array simulator.

Each trial is a real :class:`workspace.Workspace`: a pinned task and n user
blocks whose net archive sizes (block tokens minus the tokens of the handle
that replaces it, under the engine's tokenizer) are exactly l, and L for the
bulky block J*. The policy sees the instance only through the engine:

- ``ledger``: parses the ~Tok column of the dashboard the engine renders;
- ``buckets``: sees a coarsening of that dashboard that only names which of M
  position buckets holds the largest block;
- ``gaussian``: reads the block texts (the content channel): a perceived
  log size ``ln(net tokens) + sigma * N(0, 1)`` per block, no dashboard;
- ``blind``: sees neither.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from vistalab.theory import DomainError
from vistalab.theory._validate import as_int
from vistalab.workspace import (
    ARCHIVE_TOOL,
    DashboardConfig,
    Rendering,
    Workspace,
    WorkspaceError,
    handle_text,
    message_tokens,
    parse_ledger_rows,
    sha256_hex,
)

from vistalab import theory

from ._engine_common import (
    MemoTokenizer,
    StoreSpec,
    fit_text,
    random_words,
    store_iv,
    tokenizer_iv,
)
from ._interfaces import Interface, make_interface, makeroom_iv
from ._makeroom import CHECK_SIGMAS, MakeRoomResult, simulate_makeroom
from ._policies import Policy, make_policy
from ._seeding import MAX_ENGINE_TRIALS, SeedInfo, block_sizes, root_seed, stream, trials_iv
from ._seeding import stream_seq as _stream_seq
from ._stats import confidence_iv, mean_from_counts, normal_quantile

__all__ = [
    "ENGINE_INTERFACES",
    "ENGINE_BLOCK",
    "EngineMakeRoomResult",
    "MakeRoomLayout",
    "simulate_makeroom_engine",
    "EventCounters",
    "makeroom_event_counters",
    "calibrate_makeroom",
    "parse_ledger",
    "coarsen_ledger",
]

#: Interfaces with an engine observation (the gibbs frontier interface announces
#: an abstract order and has no engine counterpart).
ENGINE_INTERFACES: tuple[str, ...] = ("ledger", "gaussian", "buckets", "blind")
ENGINE_BLOCK = 64
"""Trials per random-stream block (the unit of reproducibility)."""
MAX_ENGINE_N = 10_000
"""Largest n: the ledger keeps one row per archived unit (no folding) up to it."""
DEFAULT_ARRAY_TRIALS = 200_000
_FIRST_BLOCK = 2  # B1 is the pinned task; the instance is B2..B{n+1}
_TASK = ("Task: keep every evidence block of this conversation available. Each load-bearing "
         "block will be queried later and must be reproduced exactly; the largest block is "
         "not needed again.")


# --------------------------------------------------------------------------- layout


@dataclass(frozen=True)
class MakeRoomLayout:
    """Calibrated texts and budget of one engine-backed make-room run.

    Attributes
    ----------
    n, kappa : int
        The instance.
    l_tokens, L_tokens : int
        Net sizes in engine tokens: ``L_tokens = kappa * l_tokens``.
    budget : int
        Engine budget B: a rendering with the bulky block in place is
        ``B + L_tokens`` tokens.
    tokenizer, store_root : str
        What the calibration depends on (handles show the payload path).
    ids : tuple of str
        Block IDs of the instance, position order.
    light, heavy : tuple of str
        Load-bearing and bulky text of each position; a trial uses
        ``heavy[J*]`` at J* and ``light`` elsewhere.
    light_bytes : tuple of bytes
        The exact bytes each load-bearing block must read back as.
    budget_offsets : tuple of int
        Budget correction when J* is at each position: 0 wherever the bulky
        text's handle was matched (the budget is then the same for every J*).
    perceived : dict
        Net tokens of each text (content minus its handle), what the content
        channel perceives.
    task : str
        The pinned task text.
    dashboard : DashboardConfig
        Ledger layout (archived rows never fold, so the ledger's own size
        stays fixed while blocks are archived).
    calibration : dict
        Residuals and cost of the search: block and handle token ranges,
        text search evaluations, budget fixed-point iterations, seconds.
    """

    n: int
    kappa: int
    l_tokens: int
    L_tokens: int
    budget: int
    tokenizer: str
    store_root: str
    ids: tuple[str, ...]
    light: tuple[str, ...]
    heavy: tuple[str, ...]
    light_bytes: tuple[bytes, ...]
    budget_offsets: tuple[int, ...]
    perceived: dict[str, int]
    task: str
    dashboard: DashboardConfig
    calibration: dict[str, Any] = field(default_factory=dict)


def _measure_for(tok: MemoTokenizer, block_id: str, root: str) -> Callable[[str], tuple[int, int]]:
    path = f"{root}/{block_id}.txt"
    plain = _Plain(tok.base.count)  # search candidates are not worth memoising

    def measure(text: str) -> tuple[int, int]:
        data = text.encode("utf-8")
        handle = handle_text(block_id, level=1, path=path, size=len(data),
                             sha256=sha256_hex(data), replacement="")
        # Both render as user messages: framing and role cancel in the difference,
        # but count them as the engine does so the numbers are the ledger's.
        return (message_tokens({"role": "user", "content": text}, plain),
                message_tokens({"role": "user", "content": handle}, plain))

    return measure


class _Plain:
    """Tokenizer shim counting with a bare function (no memo)."""

    name = "plain"
    additive = False

    def __init__(self, count: Callable[[str], int]) -> None:
        self.count = count


def _handle_modes(tok: MemoTokenizer, bid: str, root: str, l_tokens: int, L_tokens: int,
                  gen: np.random.Generator, draws: int = 24) -> tuple[int, int]:
    """Most common handle sizes of a load-bearing and a bulky text at ``bid``,
    over random checksums (sizes from texts of roughly the right length)."""
    path = f"{root}/{bid}.txt"
    out = []
    for net in (l_tokens, L_tokens):
        size = len(" ".join(random_words(gen, net + 40)).encode("utf-8"))
        counts = [tok.base.count(handle_text(bid, level=1, path=path, size=size,
                                             sha256=gen.bytes(32).hex(), replacement=""))
                  for _ in range(draws)]
        values, freq = np.unique(counts, return_counts=True)
        out.append(int(values[np.argmax(freq)]) + message_tokens({"role": "user"}, tok))
    return out[0], out[1]


def _build(layout: MakeRoomLayout, budget: int, j: int | None, tok: MemoTokenizer,
           store: Any) -> Workspace:
    """Register the instance block by block: the pinned task, then the bulky text at
    position ``j`` and load-bearing texts elsewhere (everywhere if ``j`` is None)."""
    ws = Workspace(budget, tokenizer=tok, store=store, dashboard=layout.dashboard)
    ws.register_user(layout.task)
    reg = ws.register_user
    for p, text in enumerate(layout.light):
        reg(layout.heavy[p] if p == j else text)
    return ws


class _Forks:
    """Fresh trial workspaces without re-registering n blocks.

    One workspace per budget holds the pinned task and a load-bearing text at
    every position. A trial forks it with the bulky text substituted at J*
    (``Workspace.fork(substitute=...)``): the engine state, canonical hash, event
    log and renderings of registering that instance from scratch, at the cost of
    copying the engine's indexes. The first fork is compared with a from-scratch
    build (``check``).
    """

    def __init__(self, layout: MakeRoomLayout, tok: MemoTokenizer, *, check: bool) -> None:
        self.layout = layout
        self.tok = tok
        self.check = check
        self._light: dict[int, Workspace] = {}

    def new(self, j: int, budget: int, store: Any) -> Workspace:
        light = self._light.get(budget)
        if light is None:
            from vistalab.workspace import MemoryStore

            # Never archives: its forks write to their own stores.
            light = self._light[budget] = _build(self.layout, budget, None, self.tok,
                                                 MemoryStore(self.layout.store_root))
        ws = light.fork(store=store, substitute={self.layout.ids[j]: self.layout.heavy[j]})
        if self.check:
            self.check = False
            _check_fork(ws, self.layout, budget, j, self.tok)
        return ws


def _check_fork(ws: Workspace, layout: MakeRoomLayout, budget: int, j: int,
                tok: MemoTokenizer) -> None:
    from vistalab.workspace import MemoryStore

    ref = _build(layout, budget, j, tok, MemoryStore(layout.store_root))
    same = (ws.state_hash() == ref.state_hash() == ws.recompute_state_hash()
            and ws.render() == ref.render()
            and [e.to_plain() for e in ws.events] == [e.to_plain() for e in ref.events])
    if not same:
        raise DomainError("engine", "fork", "must give a forked trial workspace the state, log "
                          "and rendering of registering the instance from scratch",
                          "report this as a workspace bug", context=f"n={layout.n}, J*={j}")


def calibrate_makeroom(
    n: int, kappa: int, *, l_tokens: int | None = None, tokenizer: str = "cl100k_base",
    store_root: str = "mem://archive", rng: Any = None,
) -> MakeRoomLayout:
    """Calibrate block texts and the budget of an engine-backed make-room run.

    Every position gets a load-bearing text of net size exactly ``l`` and a
    bulky text of net size exactly ``L = kappa l`` whose handle costs the
    same tokens as the load-bearing one's, so the rendering's size does not
    depend on where the bulky block is. The budget is the fixed point
    ``B = tokens(rendering under budget B) - L`` (the budget is printed in the
    protocol and the dashboard, so it is solved, not assumed).

    Parameters
    ----------
    n, kappa : int
        The instance, ``2 <= kappa < n <= 10000``.
    l_tokens : int, optional
        Net tokens of a load-bearing block; default ``max(4, min(40, 900 // kappa))``
        (keeps every block under 1,000 tokens, so ledger rows print sizes
        with the same number of digits), doubled while the instance is too
        small for the engine's minimum budget.
    tokenizer : {"cl100k_base", "approx"}
    store_root : str
        Root of the payload paths the handles will show.
    rng : seed
        Seed of the random words.

    Returns
    -------
    MakeRoomLayout
    """
    n, kappa = makeroom_iv(n, kappa)
    if n > MAX_ENGINE_N:
        raise DomainError("n", n, f"must be at most {MAX_ENGINE_N} in engine mode",
                          "use the array simulator for larger instances")
    if l_tokens is not None:
        l_tokens = as_int("l_tokens", l_tokens, lo=1, hi=100_000,
                          fix="the net tokens a load-bearing block frees when archived")
    tok = tokenizer_iv(tokenizer)
    seed = root_seed(rng)
    return _calibrate_auto(n, kappa, l_tokens, tok, store_root, seed)


def _calibrate(n: int, kappa: int, l_tokens: int, tok: MemoTokenizer, root: str,
               seed: SeedInfo) -> MakeRoomLayout:
    t0 = time.perf_counter()
    gen = stream(seed, 2)
    L_tokens = kappa * l_tokens
    ids = tuple(f"B{p + _FIRST_BLOCK}" for p in range(n))
    light: list[str] = []
    heavy: list[str] = []
    perceived: dict[str, int] = {}
    gross_l, gross_h, handles, evals = [], [], [], 0
    heavy_start = random_words(gen, L_tokens)
    # The bulky text's handle must cost the load-bearing handle's tokens plus one
    # fixed offset at every position, so the rendering's size does not depend on
    # J*. Both are aimed at the most common handle sizes, which a checksum re-draw
    # hits in a few tries.
    modes: dict[int, tuple[int, int]] = {}
    offsets: list[int] = []
    unmatched = 0
    delta: int | None = None
    for p, bid in enumerate(ids):
        measure = _measure_for(tok, bid, root)
        header = f"evidence {p + 1}:"
        if len(bid) not in modes:
            modes[len(bid)] = _handle_modes(tok, bid, root, l_tokens, L_tokens, gen)
        mode_l, mode_h = modes[len(bid)]
        if delta is None:
            delta = mode_h - mode_l
        text, g, h, e = fit_text(header, l_tokens, measure, gen, handle_tokens=mode_l)
        evals += e
        light.append(text)
        perceived[text] = g - h
        gross_l.append(g)
        handles.append(h)
        try:
            text, g2, h2, e = fit_text(header, L_tokens, measure, gen, handle_tokens=h + delta,
                                       start_words=heavy_start, max_evals=400)
        except DomainError:
            # Reported, not hidden: trials with J* here get their own budget.
            unmatched += 1
            text, g2, h2, e = fit_text(header, L_tokens, measure, gen, start_words=heavy_start)
        evals += e
        heavy.append(text)
        perceived[text] = g2 - h2
        gross_h.append(g2)
        offsets.append((g2 - g) - (L_tokens - l_tokens + delta))
    layout = MakeRoomLayout(
        n=n, kappa=kappa, l_tokens=l_tokens, L_tokens=L_tokens, budget=0,
        tokenizer=tok.name, store_root=root, ids=ids, light=tuple(light), heavy=tuple(heavy),
        light_bytes=tuple(t.encode("utf-8") for t in light), budget_offsets=tuple(offsets),
        perceived=perceived, task=_TASK,
        dashboard=DashboardConfig(archived_rows=min(MAX_ENGINE_N, max(8, n))),
    )
    budget, iters = _fit_budget(layout, tok)
    calib = {
        "block_tokens_light": [min(gross_l), max(gross_l)],
        "block_tokens_bulky": [min(gross_h), max(gross_h)],
        "handle_tokens": [min(handles), max(handles)],
        "bulky_handle_offset": delta,
        "handle_modes": {f"id_chars_{k}": list(v) for k, v in sorted(modes.items())},
        "positions_without_matched_handle": unmatched,
        "text_search_evaluations": evals,
        "budget_iterations": iters,
        "seconds": time.perf_counter() - t0,
    }
    return MakeRoomLayout(**{**layout.__dict__, "budget": budget, "calibration": calib})


class _BelowFloor(DomainError):
    """The instance is too small: B = tokens(rendering) - L would be below the engine's own
    minimum budget (its overflow rendering must always fit)."""


def _fit_budget(layout: MakeRoomLayout, tok: MemoTokenizer) -> tuple[int, int]:
    """Solve ``B = candidate_tokens(B) - L`` by iteration (the budget's digits
    appear in the protocol notice and the dashboard, so the candidate's size
    moves a little with B)."""
    from vistalab.workspace import MemoryStore

    budget = 1 << 30
    seen: list[int] = []
    for it in range(1, 40):
        try:
            ws = _build(layout, budget, 0, tok, MemoryStore(layout.store_root))
        except WorkspaceError:
            raise _BelowFloor(
                "l_tokens", layout.l_tokens, "must make the instance larger than the engine's "
                "minimum budget (B = rendering - L is below the floor its overflow rendering "
                "needs)", "raise l_tokens (--block-tokens) or n",
                context=f"n={layout.n}, budget would be {budget}") from None
        total = ws.render().candidate_tokens
        target = total - layout.L_tokens
        if target == budget:
            # Solved with J* at position 0: the shared budget excludes its offset.
            return budget - layout.budget_offsets[0], it
        if target in seen:  # a digit-boundary cycle: take the smaller self-consistent side
            budget = min(budget, target)
            seen.clear()
            continue
        seen.append(budget)
        budget = target
    raise DomainError("budget", budget, "has no fixed point B = tokens(rendering) - L",
                      "change l_tokens or n slightly")


def _calibrate_auto(n: int, kappa: int, l_tokens: int | None, tok: MemoTokenizer, root: str,
                    seed: SeedInfo) -> MakeRoomLayout:
    """Calibrate; with the default block size, grow l until the instance clears the
    engine's minimum budget (small n with a small tokenizer count)."""
    if l_tokens is not None:
        return _calibrate(n, kappa, l_tokens, tok, root, seed)
    l_tokens = max(4, min(40, 900 // kappa))
    while True:
        try:
            return _calibrate(n, kappa, l_tokens, tok, root, seed)
        except _BelowFloor:
            if l_tokens >= 100_000:
                raise
            l_tokens = 2 * l_tokens


# --------------------------------------------------------------------------- observation


def parse_ledger(dashboard: str) -> list[tuple[str, int, str]]:
    """Rows of a rendered dashboard as ``(unit id, ~Tok, status)``.

    Works on the normal and the management (overflow) form, full or compact
    columns: a row starts with the unit ID and its ~Tok figure and ends with
    its status.
    """
    if not isinstance(dashboard, str):
        raise DomainError("dashboard", dashboard, "must be a rendered dashboard (str)",
                          "pass Rendering.dashboard")
    return [(r.unit_id, r.tokens, r.status) for r in parse_ledger_rows(dashboard)]


def coarsen_ledger(dashboard: str, ids: tuple[str, ...], buckets: int) -> str:
    """The bucket view of a dashboard: only which of ``buckets`` balanced
    position buckets holds the largest visible block (Theorem 1, part D)."""
    if isinstance(ids, (str, bytes)) or not isinstance(ids, (tuple, list)) or not ids \
            or not all(isinstance(i, str) for i in ids):
        raise DomainError("ids", ids, "must be a non-empty tuple of block ids (str)",
                          "pass the layout's ids in position order")
    buckets = as_int("buckets", buckets, lo=1, hi=len(ids),
                     rule="must be an integer with 1 <= buckets <= len(ids)",
                     context=f"len(ids)={len(ids)}", fix="a bucket holds at least one block")
    index = {bid: p for p, bid in enumerate(ids)}
    best, best_tok = -1, -1
    for uid, tok, status in parse_ledger(dashboard):
        p = index.get(uid)
        if p is not None and status == "visible" and tok > best_tok:
            best, best_tok = p, tok
    if best < 0:
        return "largest block: unknown"
    n = len(ids)
    b = best * buckets // n
    lo = -((-b * n) // buckets)
    hi = -((-(b + 1) * n) // buckets) - 1
    return f"largest block: bucket {b + 1} of {buckets} ({ids[lo]}-{ids[hi]})"


_BUCKET = re.compile(r"bucket ([0-9]+) of ([0-9]+)")


def _observe(name: str, layout: MakeRoomLayout, ws: Workspace, r: Rendering,
             iface: Interface, gen: np.random.Generator) -> Any:
    n = layout.n
    if name == "ledger":
        index = {bid: p for p, bid in enumerate(layout.ids)}
        y = np.zeros(n)
        for uid, tok, status in parse_ledger(r.dashboard):
            p = index.get(uid)
            if p is not None and status == "visible":
                y[p] = tok
        return y
    if name == "buckets":
        view = coarsen_ledger(r.dashboard, layout.ids, int(iface.params["buckets"]))
        m = _BUCKET.search(view)
        return 0 if m is None else int(m.group(1)) - 1
    if name == "gaussian":
        sigma = float(iface.params["sigma"])
        blocks = ws.blocks[_FIRST_BLOCK - 1:]
        net = np.fromiter((layout.perceived[b.content or ""] for b in blocks), float, n)
        # ln(net) up to the common shift ln(l): the array channel's ln(size in units of l).
        return np.log(net / layout.l_tokens) + sigma * gen.standard_normal(n)
    return None


# --------------------------------------------------------------------------- trials


@dataclass
class _Tally:
    counts: np.ndarray
    archive_events: int = 0
    read_events: int = 0
    byte_exact: int = 0
    byte_mismatches: int = 0
    queries: int = 0
    queries_ok: int = 0
    size_mismatches: int = 0
    size_residual_max: int = 0
    budget_mismatches: int = 0
    stop_mismatches: int = 0
    z_excess: int = 0
    bulky_archived: int = 0
    undo_mismatches: int = 0
    workspaces: int = 0

    def add(self, other: _Tally) -> None:
        self.counts += other.counts
        for f in ("archive_events", "read_events", "byte_exact", "byte_mismatches", "queries",
                  "queries_ok", "size_mismatches", "budget_mismatches", "stop_mismatches",
                  "z_excess", "bulky_archived"):
            setattr(self, f, getattr(self, f) + getattr(other, f))
        self.size_residual_max = max(self.size_residual_max, other.size_residual_max)


@dataclass
class _Template:
    """A built workspace kept across the trials of one block (``reuse=True``): its bulky
    position, first rendering and canonical state hash, to which every trial returns."""

    ws: Workspace
    j: int
    rendering: Rendering
    state: str
    events: int


def _new_workspace(layout: MakeRoomLayout, j: int, forks: _Forks, spec: StoreSpec,
                   tally: _Tally) -> tuple[Workspace, Rendering]:
    budget = layout.budget + layout.budget_offsets[j]
    ws = forks.new(j, budget, spec.new())
    r = ws.render()
    if r.candidate_tokens != budget + layout.L_tokens:
        tally.budget_mismatches += 1
    return ws, r


def _trial(layout: MakeRoomLayout, name: str, iface: Interface, pol: Policy, forks: _Forks,
           spec: StoreSpec, gen: np.random.Generator, tally: _Tally, *, verify: bool,
           template: _Template | None = None) -> None:
    """One trial: a fresh workspace with J* drawn here, or (``template``) the block's
    workspace, which the trial restores to its initial state afterwards."""
    n, kappa = layout.n, layout.kappa
    if template is None:
        j = int(gen.integers(n))
        ws, r = _new_workspace(layout, j, forks, spec, tally)
        first_event = ws.event_count
    else:
        # The trial starts in the template's canonical state (checked after every
        # trial), of which the template's rendering is the engine's rendering.
        ws, j, r, first_event = template.ws, template.j, template.rendering, template.events
    y = _observe(name, layout, ws, r, iface, gen)
    order = np.asarray(pol.order(iface, y, gen))
    ids = layout.ids
    paths: dict[int, str] = {}
    call = ws.call_tool
    for p in order:
        p = int(p)
        out = call(ARCHIVE_TOOL, {"block_id": ids[p]})
        if not out.ok:
            raise DomainError("engine", out.text, "must accept every archive of a visible block",
                              "report this as a workspace bug")
        paths[p] = out.text
        if ws.mode == "normal":
            break
    else:
        raise DomainError("engine", "overflow", "must reach normal mode once every block is "
                          "archived", "check the budget calibration")
    tally.archive_events += len(paths)
    z = len(paths) - (1 if j in paths else 0)
    tally.bulky_archived += j in paths
    # The instance's arithmetic: archives needed in this order with exact sizes.
    ideal = min(int(np.flatnonzero(order == j)[0]) + 1, kappa)
    if len(paths) != ideal:
        tally.stop_mismatches += 1
    # Z > kappa only if preflight outlasted the exact sizes; counted, then clipped
    # so z_counts keeps the array simulator's shape.
    tally.z_excess += z > kappa
    tally.counts[min(z, kappa)] += 1
    if verify:
        freed = [int(ev.effects.get("freed_tokens", -1)) for ev in ws.events_since(first_event)
                 if ev.op == "archive" and ev.ok]
        want = [layout.L_tokens if p == j else layout.l_tokens for p in paths]
        for got, exp in zip(freed, want, strict=True):
            if got != exp:
                tally.size_mismatches += 1
                tally.size_residual_max = max(tally.size_residual_max, abs(got - exp))
    # Every load-bearing block is queried: archived ones are read back by path,
    # the others are answered from the prompt (their text, compared in one pass).
    light_bytes = layout.light_bytes
    read = ws.read_path
    expected = list(layout.light)
    for p in paths:
        expected[p] = None  # type: ignore[call-overload]
    expected[j] = None  # type: ignore[call-overload]
    # An archived block's record keeps no content (its bytes are in the store).
    shown = [b.content for b in ws.blocks[_FIRST_BLOCK - 1:]]
    shown[j] = None
    if shown == expected:
        tally.queries_ok += n - 1 - len(paths) + (j in paths)
    else:
        tally.queries_ok += sum(1 for p, (a, b) in enumerate(zip(shown, expected, strict=True))
                                if p != j and p not in paths and a == b)
    tally.queries += n - 1
    for p, path in paths.items():
        if p == j:
            continue
        tally.read_events += 1
        try:
            ok = read(path) == light_bytes[p]
        except WorkspaceError:
            ok = False
        tally.byte_exact += ok
        tally.byte_mismatches += not ok
        tally.queries_ok += ok
    if template is not None:
        # Undo (the paper's Q_undo): restoring every archive must give back the
        # template's canonical state, so the next trial starts from the same workspace.
        for p in paths:
            ws.restore(ids[p])
        if ws.state_hash() != template.state:
            tally.undo_mismatches += 1
            template.state = ws.state_hash()
        template.events = ws.event_count


# --------------------------------------------------------------------------- result


@dataclass(frozen=True)
class EngineMakeRoomResult(MakeRoomResult):
    """A make-room run through the workspace engine (``mode == "engine"``).

    Every field of :class:`MakeRoomResult` (E[Z] and its interval, the rate,
    Theorem 1's bound, the exact frontier, the exact E[Z], the consistency
    checks, the seed), computed from the engine trials, plus:

    Attributes
    ----------
    store, tokenizer : str
        Payload store (``memory`` or ``disk``) and engine tokenizer.
    l_tokens, L_tokens, budget_tokens : int
        Net sizes of load-bearing and bulky blocks and the engine budget B.
    archive_events : int
        Archive tool calls over all trials.
    read_events : int
        Payload reads over all trials (one per archived load-bearing block).
    recovery_obligations : int
        Sum of Z: load-bearing blocks that had to be made available again.
    byte_exact_recoveries : int
        Reads that returned exactly the original bytes.
    byte_mismatches : int
        Reads that failed or returned other bytes.
    queries, queries_answered : int
        Load-bearing blocks queried after the overflow cleared, and how many
        were answered with the original text (from the prompt or by a read).
    size_mismatches, size_residual_max : int
        Archives whose engine-reported freed tokens differ from the calibrated
        net size (checked in ``verify`` runs), and the largest difference.
    budget_mismatches : int
        Trials whose first rendering was not exactly B + L tokens.
    stop_mismatches : int
        Trials where preflight cleared the overflow after a different number
        of archives than the instance's arithmetic (exact sizes) predicts.
    z_excess : int
        Trials with more than kappa load-bearing blocks archived (possible only
        with a stop mismatch); ``z_counts`` counts them at kappa.
    reuse : bool
        Whether workspaces were reused across trials (see the driver).
    workspaces : int
        Workspaces built (= trials without reuse).
    undo_mismatches : int
        Reuse only: trials after which restoring every archive did not give
        back the initial canonical state hash.
    cpu_seconds : float
        Process CPU time of the trials (on a shared machine the wall time in
        ``elapsed_seconds`` also measures the scheduler).
    array_mean_z, array_mean_z_se : float
        The array simulator's E[Z] for the same interface and policy.
    array_trials : int
    z_score : float
        ``(mean_z - array_mean_z) / sqrt(se^2 + array_se^2)``.
    agrees_with_array : bool
        ``|z_score| <= CHECK_SIGMAS``.
    all_recoveries_byte_exact : bool
        No read failed or differed, and every query was answered.
    calibration : dict
        The layout's calibration residuals and cost.
    calibration_seconds : float
    """

    store: str = "memory"
    tokenizer: str = "cl100k_base"
    l_tokens: int = 0
    L_tokens: int = 0
    budget_tokens: int = 0
    archive_events: int = 0
    read_events: int = 0
    recovery_obligations: int = 0
    byte_exact_recoveries: int = 0
    byte_mismatches: int = 0
    queries: int = 0
    queries_answered: int = 0
    size_mismatches: int = 0
    size_residual_max: int = 0
    budget_mismatches: int = 0
    stop_mismatches: int = 0
    z_excess: int = 0
    reuse: bool = False
    workspaces: int = 0
    undo_mismatches: int = 0
    cpu_seconds: float = 0.0
    array_mean_z: float = math.nan
    array_mean_z_se: float = math.nan
    array_trials: int = 0
    z_score: float = math.nan
    agrees_with_array: bool = False
    all_recoveries_byte_exact: bool = False
    calibration: dict[str, Any] = field(default_factory=dict)
    calibration_seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """The array mode's JSON document plus the engine's counters."""
        d = super().to_dict()
        d.update({
            "store": self.store,
            "tokenizer": self.tokenizer,
            "l_tokens": self.l_tokens,
            "L_tokens": self.L_tokens,
            "budget_tokens": self.budget_tokens,
            "archive_events": self.archive_events,
            "read_events": self.read_events,
            "recovery_obligations": self.recovery_obligations,
            "byte_exact_recoveries": self.byte_exact_recoveries,
            "byte_mismatches": self.byte_mismatches,
            "queries": self.queries,
            "queries_answered": self.queries_answered,
            "size_mismatches": self.size_mismatches,
            "size_residual_max": self.size_residual_max,
            "budget_mismatches": self.budget_mismatches,
            "stop_mismatches": self.stop_mismatches,
            "z_excess": self.z_excess,
            "reuse": self.reuse,
            "workspaces": self.workspaces,
            "undo_mismatches": self.undo_mismatches,
            "cpu_seconds": self.cpu_seconds,
            "array_mean_z": self.array_mean_z,
            "array_mean_z_se": self.array_mean_z_se,
            "array_trials": self.array_trials,
            "z_score": self.z_score,
            "agrees_with_array": self.agrees_with_array,
            "all_recoveries_byte_exact": self.all_recoveries_byte_exact,
            "calibration": dict(self.calibration),
            "calibration_seconds": self.calibration_seconds,
        })
        return d


# --------------------------------------------------------------------------- driver


def _engine_iv(n: Any, kappa: Any, interface: Any, policy: Any, trials: Any,
               array_trials: Any, confidence: Any, params: dict[str, Any]
               ) -> tuple[Interface, Policy, int, int, float]:
    trials = trials_iv(trials, hi=MAX_ENGINE_TRIALS)
    if not isinstance(interface, str):
        raise DomainError("interface", interface, "must be an interface name in engine mode",
                          f"use one of {', '.join(ENGINE_INTERFACES)}")
    if interface not in ENGINE_INTERFACES:
        from vistalab.theory import UnknownNameError

        raise UnknownNameError("engine interface", interface, ENGINE_INTERFACES)
    iface = make_interface(interface, n=n, kappa=kappa, **params)
    if iface.n > MAX_ENGINE_N:
        raise DomainError("n", iface.n, f"must be at most {MAX_ENGINE_N} in engine mode",
                          "use the array simulator for larger instances")
    if policy is None or isinstance(policy, str):
        pol = make_policy(policy)
    else:
        raise DomainError("policy", policy, "must be a policy name in engine mode",
                          "use 'bayes' or 'random'")
    array_trials = trials_iv(array_trials, name="array_trials", lo=2,
                             fix="trials of the array simulator cross-check")
    return iface, pol, trials, array_trials, confidence_iv(confidence)


def simulate_makeroom_engine(
    n: int,
    kappa: int,
    interface: str,
    *,
    policy: str | None = None,
    trials: int,
    rng: Any = None,
    store: str = "memory",
    store_dir: Any = None,
    tokenizer: str = "cl100k_base",
    l_tokens: int | None = None,
    array_trials: int = DEFAULT_ARRAY_TRIALS,
    rate_trials: int | None = None,
    confidence: float = 0.95,
    verify: bool = True,
    reuse: bool = False,
    **params: Any,
) -> EngineMakeRoomResult:
    """Run M_{n,L,l} through the workspace engine and compare with the theory
    and with the array simulator.

    Parameters
    ----------
    n, kappa : int
        The instance, ``2 <= kappa < n <= 10000``.
    interface : {"ledger", "gaussian", "buckets", "blind"}
        What the policy sees (see the module docstring); ``sigma`` for
        gaussian and ``buckets`` for buckets as keyword arguments.
    policy : {"bayes", "random"}, optional
        Order by the posterior of the observation (default) or at random.
    trials : int
        Engine trials, each on a fresh workspace of its own J*: the instance
        is registered once per budget with load-bearing texts everywhere, and
        each trial forks it with the bulky text at J*
        (``Workspace.fork(substitute=...)``, the exact state of registering
        that instance from scratch; with ``verify`` the run's first fork is
        compared with such a build).
    rng : None, int, SeedSequence or Generator
        Seed of the run; recorded in the result.
    store : {"memory", "disk"}
        Payload store; ``store_dir`` is the disk folder (default: a temporary
        folder removed at the end). Handles show the payload path, so the
        calibrated texts depend on the folder (the law of Z does not).
    tokenizer : {"cl100k_base", "approx"}
        The engine's tokenizer, in which the sizes are calibrated.
    l_tokens : int, optional
        Net tokens of a load-bearing block (see :func:`calibrate_makeroom`).
    array_trials : int
        Trials of the array simulator run for the cross-check.
    rate_trials : int, optional
        Gaussian: Monte Carlo trials of the rate (as in the array simulator).
    confidence : float
        Level of ``mean_z_ci``.
    verify : bool
        Also check each archive's freed tokens in the engine's event log and
        the first fork against a from-scratch build (default True).
    reuse : bool
        Build one workspace per block of 64 trials (J* drawn once for the
        block) and return it to its initial state after each trial by
        restoring every archive; each return is checked against the initial
        canonical state hash (``undo_mismatches``). It exercises restore (the
        paper's Q_undo) in every trial. It gives the same law of Z only
        where that law does not depend on J*'s position (ledger, gaussian,
        blind, the random policy, and buckets of equal size), so other cases
        are refused. Default False: a fresh workspace and J* per trial.

    Returns
    -------
    EngineMakeRoomResult
    """
    iface, pol, trials, array_trials, confidence = _engine_iv(
        n, kappa, interface, policy, trials, array_trials, confidence, params)
    for flag, value in (("verify", verify), ("reuse", reuse)):
        if not isinstance(value, (bool, np.bool_)):
            raise DomainError(flag, value, "must be True or False", f"pass {flag}=True")
    n, kappa = iface.n, iface.kappa
    _reuse_iv(reuse, iface, pol)
    seed = root_seed(rng)
    spec = store_iv(store, store_dir)
    try:
        tok = tokenizer_iv(tokenizer)
        if l_tokens is not None:
            l_tokens = as_int("l_tokens", l_tokens, lo=1, hi=100_000,
                              fix="the net tokens a load-bearing block frees when archived")
        layout = _calibrate_auto(n, kappa, l_tokens, tok, spec.root, seed)
        tally = _Tally(np.zeros(kappa + 1, dtype=np.int64))
        forks = _Forks(layout, tok, check=verify)
        t0, c0 = time.perf_counter(), time.process_time()
        for i, size in enumerate(block_sizes(trials, ENGINE_BLOCK)):
            gen = stream(seed, 0, i)
            template = None
            if reuse:
                j = int(gen.integers(n))
                ws, r = _new_workspace(layout, j, forks, spec, tally)
                template = _Template(ws, j, r, ws.state_hash(), ws.event_count)
            tally.workspaces += 1 if reuse else size
            for _ in range(size):
                _trial(layout, iface.name, iface, pol, forks, spec, gen, tally, verify=verify,
                       template=template)
        elapsed = time.perf_counter() - t0
        cpu = time.process_time() - c0
    finally:
        spec.close()

    fast = getattr(pol, "fast_sampler", None)
    mode = "fast" if callable(fast) and fast(iface) is not None else "literal"
    array = simulate_makeroom(n, kappa, iface, policy=pol, trials=array_trials,
                              rng=stream_seq(seed, 3), mode=mode, rate_trials=rate_trials,
                              confidence=confidence)
    return _result(layout, iface, pol, tally, array, seed, spec, trials, elapsed, confidence,
                   reuse, cpu)


@dataclass(frozen=True)
class EventCounters:
    """Archive and read events of one batch of engine runs per interface, the counters the
    paper's ablation reports for the full dashboard versus no dashboard (Section 3.7).

    Attributes
    ----------
    n, kappa, trials : int
        The instance and the engine trials per interface.
    rows : tuple of dict
        One per interface, in decreasing rate: ``interface``, ``params``, ``rate_bits``,
        ``archive_events``, ``read_events``, ``recovery_obligations`` (sum of Z),
        ``byte_exact_recoveries``, ``mean_z``, ``mean_z_se``, ``archives_per_trial``,
        ``reads_per_trial``.
    results : tuple of EngineMakeRoomResult
        The runs behind the rows.
    """

    n: int
    kappa: int
    trials: int
    rows: tuple[dict[str, Any], ...]
    results: tuple[EngineMakeRoomResult, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"n": self.n, "kappa": self.kappa, "trials": self.trials,
                "rows": [dict(r) for r in self.rows]}


#: The interfaces of :func:`makeroom_event_counters` by default: full ledger, a coarse
#: dashboard, the dashboard-free content channel, and nothing.
COUNTER_INTERFACES: tuple[tuple[str, dict[str, Any]], ...] = (
    ("ledger", {}), ("buckets", {"buckets": 4}), ("gaussian", {"sigma": 1.0}), ("blind", {}))


def makeroom_event_counters(
    n: int, kappa: int, *, trials: int, rng: Any = None,
    interfaces: Any = COUNTER_INTERFACES, **engine_kwargs: Any,
) -> EventCounters:
    """Run :func:`simulate_makeroom_engine` once per interface (seeds spawned from ``rng``)
    and tabulate total archive and read events, as the paper's ablation does.

    Theorem 1 predicts that the lower the rate, the more load-bearing blocks are archived
    and must be read back (the ledger owes none; the blind order is what every Bayes order
    improves on).
    """
    seq = root_seed(rng).seq
    specs = _interfaces_iv(interfaces)
    if not specs:
        raise DomainError("interfaces", interfaces, "must name at least one interface",
                          "e.g. (('ledger', {}), ('blind', {}))")
    results = [simulate_makeroom_engine(n, kappa, name, trials=trials, rng=child,
                                        **engine_kwargs, **kw)
               for (name, kw), child in zip(specs, seq.spawn(len(specs)), strict=True)]
    results.sort(key=lambda r: -r.rate_bits)
    rows = tuple({
        "interface": r.interface, "params": dict(r.params), "rate_bits": r.rate_bits,
        "archive_events": r.archive_events, "read_events": r.read_events,
        "recovery_obligations": r.recovery_obligations,
        "byte_exact_recoveries": r.byte_exact_recoveries, "mean_z": r.mean_z,
        "mean_z_se": r.mean_z_se, "archives_per_trial": r.archive_events / r.trials,
        "reads_per_trial": r.read_events / r.trials,
    } for r in results)
    return EventCounters(n=results[0].n, kappa=results[0].kappa, trials=results[0].trials,
                         rows=rows, results=tuple(results))


def _interfaces_iv(interfaces: Any) -> list[tuple[str, dict[str, Any]]]:
    """``((name, params), ...)`` pairs: a name of ENGINE_INTERFACES and a dict."""
    rule = "must be a sequence of (interface name, params dict) pairs"
    fix = "e.g. (('ledger', {}), ('buckets', {'buckets': 4}))"
    if isinstance(interfaces, (str, bytes)) or not isinstance(interfaces, (list, tuple)):
        raise DomainError("interfaces", interfaces, rule, fix)
    specs = []
    for item in interfaces:
        if (not isinstance(item, (list, tuple)) or len(item) != 2 or not isinstance(item[0], str)
                or not isinstance(item[1], dict)):
            raise DomainError("interfaces", interfaces, rule, fix, context=f"item {item!r}")
        if item[0] not in ENGINE_INTERFACES:
            raise DomainError("interfaces", interfaces, f"must name engine interfaces "
                              f"({', '.join(ENGINE_INTERFACES)})", fix,
                              context=f"unknown {item[0]!r}")
        specs.append((item[0], dict(item[1])))
    return specs


def _reuse_iv(reuse: Any, iface: Interface, pol: Policy) -> None:
    if not isinstance(reuse, bool):
        raise DomainError("reuse", reuse, "must be True or False")
    if not reuse or pol.name == "random" or iface.name != "buckets":
        return
    M = int(iface.params["buckets"])
    if iface.n % M:
        raise DomainError("reuse", reuse, "needs buckets of equal size (n divisible by M): "
                          "otherwise Z's law depends on J*'s bucket",
                          "pass reuse=False or choose M dividing n",
                          context=f"n={iface.n}, buckets={M}")


def stream_seq(seed: SeedInfo, *key: int) -> np.random.SeedSequence:
    """The SeedSequence of sub-stream ``key`` (:func:`vistalab._core.child_seq`)."""
    return _stream_seq(seed, *key)


def _result(layout: MakeRoomLayout, iface: Interface, pol: Policy, tally: _Tally,
            array: MakeRoomResult, seed: SeedInfo, spec: StoreSpec, trials: int,
            elapsed: float, confidence: float, reuse: bool, cpu: float
            ) -> EngineMakeRoomResult:
    n, kappa = layout.n, layout.kappa
    counts = tally.counts
    mean, se = mean_from_counts(counts)
    zq = normal_quantile(confidence)
    ci = (max(0.0, mean - zq * se), min(float(kappa), mean + zq * se))
    # Same rules as the array simulator's checks, applied to the engine's estimate.
    tol = CHECK_SIGMAS * max(se, kappa / trials)
    exact = array.exact_mean_z
    agrees = None if exact is None else bool(abs(mean - exact) <= tol)
    top = math.log2(n)
    rate_hi = min(top, array.rate_bits + CHECK_SIGMAS * array.rate_bits_se)
    upper = mean + tol
    consistent = upper >= theory.optimal_mean_z(n, kappa, rate_hi) - 1e-9
    if array.lower_bound is not None:
        consistent = consistent and upper >= theory.makeroom_lower_bound(n, kappa, rate_hi) - 1e-9
    spread = math.hypot(se, array.mean_z_se)
    diff = mean - array.mean_z
    z = diff / spread if spread > 0 else (0.0 if diff == 0 else math.copysign(math.inf, diff))
    # A zero-variance pair (the ledger's Z = 0) must match exactly; otherwise 4 SE,
    # with the same kappa/trials floor as the exact check for rare events.
    agrees_array = abs(diff) <= CHECK_SIGMAS * max(spread, kappa / trials) if spread > 0 \
        else diff == 0
    exact_reads = (tally.byte_mismatches == 0 and tally.queries_ok == tally.queries
                   and tally.undo_mismatches == 0)
    return EngineMakeRoomResult(
        n=n, kappa=kappa, interface=iface.name, params=dict(iface.params), policy=pol.name,
        mode="engine", mean_z=mean, mean_z_se=se, mean_z_ci=ci, confidence=confidence,
        z_counts=tuple(int(c) for c in counts), rate_bits=array.rate_bits,
        rate_bits_se=array.rate_bits_se, rate_exact=array.rate_exact,
        rate_trials=array.rate_trials, lower_bound=array.lower_bound,
        lower_bound_note=array.lower_bound_note, nu=array.nu, exact_mean_z=exact,
        optimal_mean_z=array.optimal_mean_z, agrees_with_exact=agrees,
        consistent_with_theory=bool(consistent), trials=trials, seed_entropy=seed.entropy,
        seed_spawn_key=seed.spawn_key, elapsed_seconds=elapsed,
        trials_per_second=trials / elapsed if elapsed > 0 else math.inf,
        store=spec.kind, tokenizer=layout.tokenizer, l_tokens=layout.l_tokens,
        L_tokens=layout.L_tokens, budget_tokens=layout.budget,
        archive_events=tally.archive_events, read_events=tally.read_events,
        recovery_obligations=int(np.dot(np.arange(kappa + 1), counts)),
        byte_exact_recoveries=tally.byte_exact, byte_mismatches=tally.byte_mismatches,
        queries=tally.queries, queries_answered=tally.queries_ok,
        size_mismatches=tally.size_mismatches, size_residual_max=tally.size_residual_max,
        budget_mismatches=tally.budget_mismatches, stop_mismatches=tally.stop_mismatches,
        z_excess=tally.z_excess, reuse=reuse, workspaces=tally.workspaces, cpu_seconds=cpu,
        undo_mismatches=tally.undo_mismatches,
        array_mean_z=array.mean_z, array_mean_z_se=array.mean_z_se,
        array_trials=array.trials, z_score=z, agrees_with_array=bool(agrees_array),
        all_recoveries_byte_exact=bool(exact_reads),
        calibration=dict(layout.calibration),
        calibration_seconds=float(layout.calibration.get("seconds", 0.0)),
    )

