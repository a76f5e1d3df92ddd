"""The stateful model-based test of the workspace engine as a public base class
(a Hypothesis ``RuleBasedStateMachine``), and a runner for the conformance checks.
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.errors import Flaky
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from vistalab.workspace import (
    DiskStore,
    MemoryStore,
    PayloadStore,
    Status,
    Tokenizer,
    ToolFailure,
    Workspace,
    WorkspaceError,
    anthropic_problems,
    count_request_tokens,
    is_error_text,
    message_tokens,
    protocol_problems,
)

__all__ = ["WorkspaceMachine", "machine_budget", "run_machine"]


_WORDS = st.sampled_from(
    ["alpha", "beta", "row", "42", "naïve", "日本", "\n", "  ", '{"k": 1}', "@@ B3 x", "é"]
)


def _text(max_words: int) -> st.SearchStrategy[str]:
    return st.lists(_WORDS, min_size=0, max_size=max_words).map(" ".join)


# Tool-result sizes from tiny to far above the budget (approx: 4 bytes/token).
_SIZES = st.sampled_from([0, 1, 20, 300, 1500, 6000, 14000])
_BUDGET_LINE = re.compile(r"\(~([\d,]+) / ([\d,]+) tokens\)")
_SPLIT_LINE = re.compile(r"overhead ~([\d,]+) \| conversation ~([\d,]+) \| dashboard ~([\d,]+)")
_ROW = re.compile(r"^([BG]\d+)\s+([\d,]+)\s+(\d+)r\s+(\S+)", re.M)


def _n(s: str) -> int:
    return int(s.replace(",", ""))


#: The pinned messages every machine run starts with.
_SYSTEM = "You are a test agent."
_USER = "Task: keep evidence recoverable."
#: Room above the management floor: about 3,200 bytes of the machine's own words
#: (800 approx tokens, as the fixed budget of 2,400 used to leave), so short
#: messages fit in normal mode while the 1,500- to 14,000-byte tool results push
#: the workspace into overflow, whatever the tokenizer's density.
_ROOM_TEXT = " ".join(["alpha", "beta", "row", "42", "naïve", "日本", '{"k": 1}', "@@ B3 x", "é"]
                      * 64)[:3200]
#: Budget at which the floor is measured: the dashboard's worst case grows with
#: the width of the numbers it prints, so measuring at a larger budget gives an
#: upper bound for every smaller one.
_PROBE_BUDGET = 10**9


def machine_budget(tokenizer: str | Tokenizer) -> int:
    """The token budget :class:`WorkspaceMachine` uses for ``tokenizer`` by default.

    The engine's own management floor (tool schemas, protocol, the machine's
    pinned system and user messages, the worst-case management dashboard,
    reply priming; ``Workspace.management_floor``) plus ``tokenizer``'s count
    of about 3,200 bytes of the machine's words. Any tokenizer meeting the
    ``Tokenizer`` contract can construct the machine's workspace, and the
    room scales with the tokenizer's density, so the machine's large tool
    results still drive it into overflow.

    Parameters
    ----------
    tokenizer : str or Tokenizer
        A registered name or an instance.

    Returns
    -------
    int
        The budget B.
    """
    probe = Workspace(_PROBE_BUDGET, tokenizer=tokenizer, store=MemoryStore())
    probe.register_system(_SYSTEM)
    probe.register_user(_USER)
    return probe.management_floor() + probe.tokenizer.count(_ROOM_TEXT)


class WorkspaceMachine(RuleBasedStateMachine):
    """Two workspace engines driven in lockstep against a byte-level model.

    The engine under test (``self.ws``) uses the store built by
    :meth:`make_store` (default: a :class:`~vistalab.workspace.DiskStore` in a
    fresh temporary folder); its twin (``self.twin``) uses a
    :class:`~vistalab.workspace.MemoryStore` with the same display root. Both
    count with :attr:`tokenizer`. Hypothesis drives registrations (tool results
    from tiny to larger than the budget), archives (single, lists, ranges,
    groups, nested groups), deletes, restores, payload reads, forks and
    malformed calls; after every step the invariants below are checked
    (paper, Methodology "Workspace invariants", eq. workspace-render, eq.
    overflow, eq. archive-contract, "Structure preservation", "Hierarchical
    recovery"; Algorithm 1).

    Subclass it to drive your own tokenizer or store, or to add invariants::

        class MyMachine(WorkspaceMachine):
            tokenizer = MyTokenizer()          # an instance, or a registered name

            def make_store(self, directory):
                return MyStore(directory)

            @invariant()
            def my_rule(self):
                if hasattr(self, "ws"):
                    assert ...

        TestMyMachine = MyMachine.TestCase     # collected by pytest

    Attributes
    ----------
    tokenizer : str or Tokenizer
        Tokenizer of both engines (default ``"approx"``, fast).
    budget : int or None
        Token budget B of both engines; None (the default) sizes it to the
        tokenizer with :func:`machine_budget` (the engine's management floor
        plus room for about 3,200 bytes of text), so every tokenizer meeting
        the contract can drive the machine. Set an int to pin it.
    ws, twin : Workspace
        The engine under test and its in-memory twin (set by ``setup``).
    original : dict of str to bytes
        The model: each registered block's original bytes.
    deleted : set of str
        The model: the IDs of deleted blocks.
    """

    tokenizer: str | Tokenizer = "approx"
    budget: int | None = None

    def make_store(self, directory: str) -> PayloadStore:
        """The store of the engine under test, in the fresh folder ``directory``.

        Override it to drive your own store.

        Parameters
        ----------
        directory : str
            A fresh temporary folder, removed in :meth:`teardown`.

        Returns
        -------
        PayloadStore
            By default a :class:`~vistalab.workspace.DiskStore` in
            ``directory/archive``.
        """
        return DiskStore(os.path.join(directory, "archive"))

    @initialize()
    def setup(self) -> None:
        # Removed in teardown, or by its finalizer if the run stops before that.
        """Build both engines (the store of :meth:`make_store` and its in-memory
        twin with the same display root), size the budget if unset, and register
        the same system and user messages in both.
        """
        self._tmpdir = tempfile.TemporaryDirectory(prefix="vista-ws-")
        self.tmp = self._tmpdir.name
        store = self.make_store(self.tmp)
        if self.budget is None:
            self.budget = machine_budget(self.tokenizer)
        self.ws = Workspace(self.budget, tokenizer=self.tokenizer, store=store)
        self.twin = Workspace(self.budget, tokenizer=self.tokenizer,
                              store=MemoryStore(store.root))
        self.original: dict[str, bytes] = {}
        self.deleted: set[str] = set()
        self.n_calls = 0
        self.max_id = 0
        self._both("register_system", _SYSTEM)
        self._both("register_user", _USER)

    def teardown(self) -> None:
        """Check that the engine's event log replays to the same canonical state
        hash (with the same tokenizer instance), then remove the temporary folder.
        """
        try:
            if hasattr(self, "ws"):
                # The log replays to the same canonical hash, event by event (with the
                # same tokenizer instance: a user's tokenizer need not be registered).
                again = Workspace.replay(self.ws.events, store=MemoryStore(self.ws.store.root),
                                         tokenizer=self.ws.tokenizer)
                assert again.state_hash() == self.ws.state_hash()
        finally:
            if hasattr(self, "_tmpdir"):
                self._tmpdir.cleanup()

    # ------------------------------------------------------------ helpers
    def _both(self, method: str, *args, **kwargs):
        """Call on both engines; results (or errors) must agree exactly."""
        out = []
        for eng in (self.ws, self.twin):
            try:
                out.append(("ok", getattr(eng, method)(*args, **kwargs)))
            except WorkspaceError as exc:
                out.append(("err", f"{type(exc).__name__}: {exc}"))
        assert out[0] == out[1], out
        kind, value = out[0]
        if kind == "ok" and isinstance(value, str) and value.startswith("B"):
            self.original[value] = self.ws.recover(value)
            self.max_id = max(self.max_id, int(value[1:]))
        return kind, value

    def _live_ids(self) -> list[str]:
        return [b.id for b in self.ws.blocks if b.status is not Status.DELETED]

    def _top_units(self) -> list[str]:
        return list(self.ws.render().block_tokens)

    # ------------------------------------------------------------ rules
    @precondition(lambda self: not self.ws.pending_calls)
    @rule(text=_text(30), assistant=st.booleans())
    def plain_message(self, text: str, assistant: bool) -> None:
        """Register a short user or assistant message in both engines (Section
        "Context Stream").

        Parameters
        ----------
        text : str
            The message text.
        assistant : bool
            Register it as an assistant message (else as a user message).
        """
        self._both("register_assistant" if assistant else "register_user", text)

    @precondition(lambda self: not self.ws.pending_calls)
    @rule(sizes=st.lists(_SIZES, min_size=1, max_size=3), finish=st.booleans(), data=st.data())
    def tool_call(self, sizes: list[int], finish: bool, data: st.DataObject) -> None:
        """Register an assistant message with one to three tool calls, then answer
        all of them or a prefix (the rest stay pending).

        Parameters
        ----------
        sizes : list of int
            The size in bytes of each call's result.
        finish : bool
            Answer every call (else a drawn number of them).
        data : hypothesis.strategies.DataObject
            Hypothesis's interactive draws.
        """
        calls = []
        for _ in sizes:
            self.n_calls += 1
            calls.append(
                {
                    "id": f"call_{self.n_calls}",
                    "type": "function",
                    "function": {"name": "fetch", "arguments": f'{{"n": {self.n_calls}}}'},
                }
            )
        kind, _ = self._both("register_tool_call", calls, content=data.draw(_text(5)))
        assert kind == "ok"
        answer = len(calls) if finish else data.draw(st.integers(0, len(calls) - 1))
        for call, size in zip(calls[:answer], sizes[:answer], strict=True):
            self._result(str(call["id"]), size, data)

    # Tool traffic drives overflow and the guard; two more entry points make
    # Hypothesis pick it as often as the other rules combined.
    @precondition(lambda self: not self.ws.pending_calls)
    @rule(
        sizes=st.lists(st.sampled_from([300, 1500, 6000]), min_size=2, max_size=3), data=st.data()
    )
    def parallel_tool_calls(self, sizes: list[int], data: st.DataObject) -> None:
        """Two or three parallel calls with results of 300 to 6,000 bytes, all
        answered: the tool traffic that drives overflow and the budget guard.

        Parameters
        ----------
        sizes : list of int
            The size in bytes of each call's result.
        data : hypothesis.strategies.DataObject
            Hypothesis's interactive draws.
        """
        self.tool_call(sizes, True, data)

    @precondition(lambda self: not self.ws.pending_calls)
    @rule(size=_SIZES, data=st.data())
    def single_tool_call(self, size: int, data: st.DataObject) -> None:
        """One call, answered with a result of ``size`` bytes.

        Parameters
        ----------
        size : int
            The result's size in bytes.
        data : hypothesis.strategies.DataObject
            Hypothesis's interactive draws.
        """
        self.tool_call([size], True, data)

    @rule(data=st.data())
    def archive_siblings(self, data: st.DataObject) -> None:
        """Archive results of one assistant message while the call stays visible:
        the non-first members must keep stub tool messages (structure preservation).

        Parameters
        ----------
        data : hypothesis.strategies.DataObject
            Hypothesis's interactive draws.
        """
        waiting = self._waiting_batch()
        parents = [b for b in self.ws.blocks if b.in_prompt and b.type.value == "tool_call"
                   and b.id != waiting]
        kids = {
            p.id: [
                c
                for c in self.ws.blocks
                if c.parent == p.id and c.group is None and c.status is not Status.DELETED
            ]
            for p in parents
        }
        choices = [k for k in kids.values() if len(k) >= 2]
        if not choices:
            return
        group = data.draw(st.sampled_from(choices))
        kind, res = self._both("archive", ",".join(c.id for c in group), "siblings")
        assert kind == "ok", res

    def _waiting_batch(self) -> str | None:
        """The tool-call block whose batch the engine keeps whole while calls of
        it wait (``keep_pending``: its results are not archived until then)."""
        if not getattr(self.ws, "keep_pending", False) or not self.ws.pending_calls:
            return None
        cid = self.ws.pending_calls[0]
        return next((b.id for b in self.ws.blocks if b.type.value == "tool_call"
                     and cid in b.call_ids), None)

    def _result(self, cid: str, size: int, data: st.DataObject) -> None:
        body = ("x" * size) if data.draw(st.booleans()) else (data.draw(_text(8)) * 40)[:size]
        kind, bid = self._both("register_tool_result", cid, body)
        assert kind == "ok"
        b = self.ws.block(bid)
        if b.rejected:
            assert (b.content or "").startswith("[budget guard] Tool result rejected")
        else:
            assert self.original[bid] == body.encode()

    @precondition(lambda self: bool(self.ws.pending_calls))
    @rule(data=st.data())
    def answer_pending(self, data: st.DataObject) -> None:
        """Answer every pending call; before that, the rendering shows one stub
        result per pending call (unless in overflow).

        Parameters
        ----------
        data : hypothesis.strategies.DataObject
            Hypothesis's interactive draws.
        """
        r = self.ws.render()
        stubs = [m for m in r.messages if m.get("content", "").startswith("[no result registered")]
        assert r.mode == "overflow" or len(stubs) == len(self.ws.pending_calls)
        for cid in list(self.ws.pending_calls):
            self._result(cid, data.draw(_SIZES), data)

    @rule(data=st.data())
    def archive(self, data: st.DataObject) -> None:
        """Archive a drawn selection in both engines: a refusal leaves the state
        hash unchanged; a success lists the unit, stores its payload, and
        ``read_path`` returns it whole (eq. archive-contract).

        Parameters
        ----------
        data : hypothesis.strategies.DataObject
            Hypothesis's interactive draws.
        """
        spec = data.draw(self._selection())
        before = self.ws.state_hash()
        kind, value = self._both("archive", spec, data.draw(_text(4)))
        if kind == "err":
            assert self.ws.state_hash() == before
            return
        assert value.unit_id in self._top_units()
        assert self.ws.store.contains(os.path.basename(value.path))
        # eq. archive-contract: read_path(h, {}) returns the payload, checksum intact.
        data_bytes = self.ws.read_path(value.path)
        assert len(data_bytes) == value.size

    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        """Delete a drawn selection in both engines: a refusal leaves the state
        hash unchanged; deleted blocks join the model's deleted set.

        Parameters
        ----------
        data : hypothesis.strategies.DataObject
            Hypothesis's interactive draws.
        """
        spec = data.draw(self._selection())
        before = self.ws.state_hash()
        kind, value = self._both("delete", spec, "no longer needed")
        if kind == "err":
            assert self.ws.state_hash() == before
            return
        self.deleted.update(value.blocks)

    @rule(data=st.data())
    def restore(self, data: st.DataObject) -> None:
        """Restore a drawn selection in both engines: a refusal leaves the state
        hash unchanged.

        Parameters
        ----------
        data : hypothesis.strategies.DataObject
            Hypothesis's interactive draws.
        """
        spec = data.draw(self._selection())
        before = self.ws.state_hash()
        kind, _ = self._both("restore", spec)
        if kind == "err":
            assert self.ws.state_hash() == before

    @rule(data=st.data())
    def archive_then_restore_is_undo(self, data: st.DataObject) -> None:
        """eq. process-reward (Q_undo): an archive-restore pair restores the hash.

        Parameters
        ----------
        data : hypothesis.strategies.DataObject
            Hypothesis's interactive draws.
        """
        visible = [
            b.id
            for b in self.ws.blocks
            if b.status is Status.VISIBLE
            and not (b.type.value == "tool_call" and set(b.call_ids) & set(self.ws.pending_calls))
            and not (b.parent is not None and b.parent == self._waiting_batch())
        ]
        if not visible:
            return
        uid = data.draw(st.sampled_from(visible))
        before = self.ws.state_hash()
        kind, res = self._both("archive", uid, "")
        assert kind == "ok"
        self._both("restore", res.unit_id)
        assert self.ws.state_hash() == before

    @rule(data=st.data())
    def read_range(self, data: st.DataObject) -> None:
        """Partial reads of an archived block's payload equal the model's bytes:
        a ``bytes=a:z`` slice and a ``lines=i-j`` range.

        Parameters
        ----------
        data : hypothesis.strategies.DataObject
            Hypothesis's interactive draws.
        """
        archived = [b for b in self.ws.blocks if b.payload is not None]
        if not archived:
            return
        b = data.draw(st.sampled_from(archived))
        assert b.payload is not None
        path = self.ws.payload_path(b.payload.key)
        raw = self.original[b.id]
        a = data.draw(st.integers(0, len(raw) + 2))
        z = data.draw(st.integers(a, len(raw) + 5))
        assert self.ws.read_path(path, f"bytes={a}:{z}") == raw[a:z]
        lines = raw.split(b"\n")
        first = data.draw(st.integers(1, len(lines) + 1))
        got = self.ws.read_path(path, f"lines={first}-{first + 1}")
        want = b"\n".join(lines[first - 1 : first + 1])
        if first + 1 < len(lines):
            want += b"\n"
        assert got == want

    @rule(data=st.data())
    def fork_and_diverge(self, data: st.DataObject) -> None:
        """Workspace invariants on a copy: a fork renders, hashes and recovers exactly as the
        workspace it copies; acting on the fork leaves the original untouched.

        Parameters
        ----------
        data : hypothesis.strategies.DataObject
            Hypothesis's interactive draws.
        """
        f = self.ws.fork(store=MemoryStore(self.ws.store.root))
        r = self.ws.render()
        assert f.state_hash() == self.ws.state_hash() and f.render() == r
        for bid, raw in self.original.items():
            if bid not in self.deleted:
                assert f.recover(bid) == raw
        units = [u for u in self._top_units() if not u.startswith("B")
                 or self.ws.block(u).status is not Status.PINNED]
        if units:
            try:
                f.archive(data.draw(st.sampled_from(units)), "fork")
            except WorkspaceError:
                pass
        if not f.pending_calls:
            f.register_user("only in the fork")
        assert self.ws.render() == r and self.ws.state_hash() == self.twin.state_hash()

    @rule(
        bad=st.sampled_from(
            [
                "B0",
                "B-3",
                "B5--B10",
                "G99",
                "",
                "B3,,B4",
                "B３",
                "B 3",
                "B1-B999999",
                "G1-G2",
                " , ",
                "B1x",
                "B99999999999999",
            ]
        ),
        tool=st.sampled_from(["context_workspace_archive", "context_workspace_delete"]),
    )
    def malformed_call(self, bad: str, tool: str) -> None:
        """A malformed block ID through the agent tool path: both engines answer
        the same refusal, and neither the state hash nor the store changes.

        Parameters
        ----------
        bad : str
            A malformed or unknown ID (``B0``, ``B5--B10``, a full-width digit...).
        tool : str
            ``context_workspace_archive`` or ``context_workspace_delete``.
        """
        before = self.ws.state_hash()
        keys = set(self.ws.store.keys())
        args = {"block_id": bad} if tool.endswith("archive") else {"block_id": bad, "reason": "x"}
        outs = [eng.call_tool(tool, args) for eng in (self.ws, self.twin)]
        assert outs[0] == outs[1]
        assert outs[0].failure is ToolFailure.REFUSED and is_error_text(outs[0].text)
        assert self.ws.state_hash() == before and set(self.ws.store.keys()) == keys

    @rule(
        path=st.sampled_from(
            [
                "../../etc/passwd",
                "/etc/passwd",
                "B1.txt/../../x",
                "G1.txt\x00",
                "../archive/../../G1.txt",
                "nothere.txt",
            ]
        )
    )
    def traversal_read(self, path: str) -> None:
        """``read_path`` refuses a path outside the archive (traversal, absolute,
        NUL byte, unknown name).

        Parameters
        ----------
        path : str
            The hostile path.
        """
        try:
            self.ws.read_path(path)
        except WorkspaceError:
            return
        raise AssertionError(f"read_path({path!r}) outside the archive was not refused")

    # ------------------------------------------------------------ selections
    def _selection(self) -> st.SearchStrategy[str]:
        """Mostly actionable units (so actions succeed), sometimes anything."""
        ids = [b.id for b in self.ws.blocks] or ["B1"]
        units = [
            u
            for u in self._top_units()
            if not (u.startswith("B") and self.ws.block(u).status is Status.PINNED)
        ]
        nested = list(self.ws.groups)
        good = st.sampled_from(units) if units else st.sampled_from(ids)
        any_id = st.sampled_from(ids + nested)
        n = len(self.ws.blocks)
        rng = st.tuples(st.integers(3, max(n, 3)), st.integers(3, max(n, 3))).map(
            lambda t: f"B{min(t)}-B{max(t)}"
        )
        many = st.lists(good, min_size=2, max_size=4).map(",".join)
        mixed = st.lists(st.one_of(good, any_id, rng), min_size=2, max_size=3).map(",".join)
        return st.one_of(good, good, many, rng, any_id, mixed)

    # ------------------------------------------------------------ invariants
    @invariant()
    def rendering_within_budget_and_recounted(self) -> None:
        """``|C_t|`` <= B after preflight and final assembly; the cached count equals a
        from-scratch recount; both stores render identically."""
        if not hasattr(self, "ws"):
            return
        r = self.ws.render()
        tok = self.ws.tokenizer
        budget = self.ws.budget
        assert budget == self.budget
        assert r.tokens <= budget
        assert count_request_tokens(r.messages, r.tools, tok) == r.tokens
        assert r.mode == ("overflow" if r.candidate_tokens > budget else "normal")
        assert protocol_problems(r.messages) == []
        # The same rendering in Anthropic Messages form keeps that format's rules.
        assert anthropic_problems(self.ws.render(format="anthropic").as_request()) == []
        t = self.twin.render()
        assert (t.messages, t.tokens, t.dashboard) == (r.messages, r.tokens, r.dashboard)
        if r.mode == "overflow":
            assert set(r.allowed_tools) == {"context_workspace_archive", "context_workspace_delete"}
            assert self.ws.gate("fetch") is not None
        else:
            assert self.ws.gate("fetch") is None

    @invariant()
    def dashboard_numbers_equal_preflight(self) -> None:
        """The dashboard reports the same token numbers the preflight enforces."""
        if not hasattr(self, "ws"):
            return
        r = self.ws.render()
        budget_line = _BUDGET_LINE.search(r.dashboard)
        split_line = _SPLIT_LINE.search(r.dashboard)
        assert budget_line is not None and split_line is not None, r.dashboard
        used, budget = budget_line.groups()
        assert (_n(used), _n(budget)) == (r.candidate_tokens, self.ws.budget)
        o, c, d = (_n(x) for x in split_line.groups())
        assert (o, c, d) == (r.overhead_tokens, r.conversation_tokens, r.dashboard_tokens)
        assert o + c + d == r.candidate_tokens
        rows = _ROW.findall(r.dashboard)
        for uid, tok, _age, _type in rows:
            assert _n(tok) == r.block_tokens[uid]
        listed = [uid for uid, *_ in rows]
        assert len(listed) == len(set(listed)), f"a unit has two ledger rows: {listed}"
        if r.mode == "normal":
            # Every block in the prompt has its row (archived units may fold).
            shown = {b.id for b in self.ws.blocks if b.in_prompt}
            assert shown <= set(listed), (sorted(shown - set(listed)), r.dashboard)
            assert message_tokens(r.messages[-1], self.ws.tokenizer) == r.dashboard_tokens
            for uid, tok in r.block_tokens.items():
                if uid.startswith("B") and self.ws.block(uid).in_prompt:
                    assert tok == r.prompt_tokens[uid]

    @invariant()
    def ids_unique_stable_never_reused(self) -> None:
        """Block IDs are ``B1..Bn`` in registration order: unique, stable, never
        reused, and every registered block is still listed.
        """
        if not hasattr(self, "ws"):
            return
        ids = [b.id for b in self.ws.blocks]
        assert ids == [f"B{i}" for i in range(1, len(ids) + 1)]
        assert len(ids) >= self.max_id
        assert set(self.original) <= set(ids)

    @invariant()
    def archived_bytes_recoverable_deleted_gone(self) -> None:
        """eq. archive-contract and hierarchical recovery: every live block's exact
        original bytes come back (walking groups down); deleted content does not,
        and the store holds exactly the live units' payloads."""
        if not hasattr(self, "ws"):
            return
        for bid, raw in self.original.items():
            if bid in self.deleted:
                assert self.ws.block(bid).status is Status.DELETED
                try:
                    self.ws.recover(bid)
                except WorkspaceError:
                    pass
                else:
                    raise AssertionError(f"deleted {bid} is still recoverable")
            else:
                assert self.ws.recover(bid) == raw
        live = {b.payload.key for b in self.ws.blocks if b.payload is not None}
        live |= {g.payload.key for g in self.ws.groups.values()}
        assert set(self.ws.store.keys()) == live == set(self.twin.store.keys())

    @invariant()
    def canonical_hash_deterministic(self) -> None:
        """The canonical state hash equals its from-scratch recomputation and the
        twin's.
        """
        if not hasattr(self, "ws"):
            return
        h = self.ws.state_hash()
        assert h == self.ws.recompute_state_hash() == self.twin.state_hash()


def run_machine(*, tokenizer: Any = None, store_factory: Callable[[Path], Any] | None = None,
                examples: int = 5, steps: int = 30) -> list[str]:
    """Run :class:`WorkspaceMachine` with ``tokenizer`` and/or stores from
    ``store_factory(directory)``; the failing example as one problem line, or ``[]``."""
    attrs: dict[str, Any] = {}
    if tokenizer is not None:
        attrs["tokenizer"] = tokenizer
    if store_factory is not None:
        attrs["make_store"] = lambda self, directory: store_factory(Path(directory))
    machine = type("CheckedMachine", (WorkspaceMachine,), attrs)
    config = settings(max_examples=examples, stateful_step_count=steps, deadline=None,
                      derandomize=True, database=None, print_blob=False,
                      suppress_health_check=list(HealthCheck))
    try:
        run_state_machine_as_test(machine, settings=config)
    except (AssertionError, Flaky) as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return [f"stateful machine: an invariant failed ({first})"]
    except Exception as exc:  # noqa: BLE001 - the implementation crashed mid-run
        return [f"stateful machine: {type(exc).__name__}: {' '.join(str(exc).split())}"]
    return []
