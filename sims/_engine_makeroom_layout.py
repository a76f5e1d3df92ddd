"""Calibration of the engine-backed make-room instance: block texts of exact net
token sizes, a self-consistent budget, and the trial workspaces built from them."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from vistalab.theory import DomainError
from vistalab.theory._validate import as_int
from vistalab.workspace import (
    DashboardConfig,
    Workspace,
    WorkspaceError,
    handle_text,
    message_tokens,
    sha256_hex,
)

from ._engine_common import (
    MemoTokenizer,
    fit_text,
    random_words,
    store_root_iv,
    tokenizer_iv,
)
from ._interfaces import makeroom_iv
from ._seeding import SeedInfo, root_seed, stream

__all__ = ["MakeRoomLayout", "calibrate_makeroom"]

MAX_ENGINE_N = 10_000
"""Largest n: the ledger keeps one row per archived unit (no folding) up to it."""
_FIRST_BLOCK = 2  # B1 is the pinned task; the instance is B2..B{n+1}
_TASK = ("Task: keep every evidence block of this conversation available. Each load-bearing "
         "block will be queried later and must be reproduced exactly; the largest block is "
         "not needed again.")


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
        Root of the payload paths the handles will show (at most 4096
        characters, no trailing slash, whitespace or control characters).
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
    store_root = store_root_iv(store_root)
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
