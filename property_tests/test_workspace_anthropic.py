"""Anthropic Messages format in and out of the workspace:
traces with text, tool_use, tool_result (is_error), thinking /
redacted_thinking, image blocks and a top-level system prompt replay with
every self-check true; every rendering keeps the format's protocol rules
(the way ``protocol_problems`` checks the OpenAI rendering); the token totals
equal the OpenAI replay of the projected conversation."""

from __future__ import annotations

import base64
import copy
import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from vistalab.workspace import (
    TraceError,
    Workspace,
    anthropic_problems,
    anthropic_to_openai,
    detect_format,
    message_tokens,
    replay_trace,
)

from ._data import TRACES

_WORDS = st.lists(
    st.sampled_from(["alpha", "beta", "gamma", "delta", "résumé", "日本", "42", "{}", "\n"]),
    min_size=1,
    max_size=40,
).map(" ".join).filter(str.strip)  # the API refuses a whitespace-only text block


def _image(seed: int) -> dict:
    data = base64.b64encode(bytes([seed % 256]) * (20 + seed % 50)).decode()
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}


@st.composite
def conversations(draw, reuse_ids: bool = False) -> dict:
    """A random Anthropic conversation (and context actions) that the real
    API would accept: alternating turns, every tool_use answered in the next
    user turn, thinking blocks ahead of the tool uses they led to. With
    ``reuse_ids`` the ids restart in every assistant turn (``toolu_0``,
    ``toolu_1``, ...), as agents that number calls per turn do: the engine
    accepts that, and its Anthropic rendering must make the ids unique."""
    n_rounds = draw(st.integers(1, 6))
    messages: list = [{"role": "user", "content": [{"type": "text", "text": draw(_WORDS)}]}]
    call = 0
    for _ in range(n_rounds):
        blocks: list = []
        if draw(st.booleans()):
            blocks.append({"type": "thinking", "thinking": draw(_WORDS), "signature": f"sig{call}"})
        if draw(st.integers(0, 4)) == 0:
            blocks.append({"type": "redacted_thinking", "data": f"opaque{call}"})
        if draw(st.booleans()):
            blocks.append({"type": "text", "text": draw(_WORDS)})
        uses = []
        for _ in range(draw(st.integers(0, 3))):
            call += 1
            tid = f"toolu_{len(uses)}" if reuse_ids else f"toolu_{call}"
            uses.append({"type": "tool_use", "id": tid, "name": "fetch", "input": {"q": call}})
        if not blocks and not uses:
            blocks.append({"type": "text", "text": "ok"})
        messages.append({"role": "assistant", "content": blocks + uses})
        user: list = []
        for u in uses:
            body = draw(
                st.one_of(
                    _WORDS,
                    st.integers(100, 1500).map(lambda n: "log line\n" * n),
                    st.lists(
                        st.one_of(_WORDS.map(lambda t: {"type": "text", "text": t}), st.just(None)),
                        min_size=1,
                        max_size=3,
                    ),
                )
            )
            if isinstance(body, list):
                body = [b if b is not None else _image(call) for b in body]
            result = {"type": "tool_result", "tool_use_id": u["id"], "content": body}
            if draw(st.booleans()):
                result["is_error"] = True
            user.append(result)
        if not uses or draw(st.booleans()):
            user.append({"type": "text", "text": draw(_WORDS)})
        if draw(st.integers(0, 3)) == 0:
            user.append(_image(call + 7))
        messages.append({"role": "user", "content": user})
    items: list = list(messages)
    for _ in range(draw(st.integers(0, 3))):
        at = draw(st.integers(1, len(items)))
        b = draw(st.integers(2, 12))
        act = draw(st.sampled_from(["archive", "delete"]))
        item = {"action": act, "block_id": f"B{b}"}
        if act == "delete":
            item["reason"] = "no task value"
        items.insert(at, item)
    return {"system": draw(_WORDS), "messages": items}


_EITHER = st.booleans().flatmap(lambda reuse: conversations(reuse_ids=reuse))


@given(conv=_EITHER, budget=st.sampled_from([3000, 6000, 100_000]))
def test_anthropic_trace_replays_with_every_rendering_valid(conv, budget):
    """an Anthropic trace replays (format detected) with every
    turn within budget and both renderings protocol-valid: tool results in the
    user turn after their tool_use and first in it, roles alternating from
    user, thinking kept ahead of its turn's tool_use, a cache_control
    breakpoint, at most four; also when call ids are reused across turns
    (audit item 1: the rendering must not repeat a tool_use id)."""
    res = replay_trace(conv, budget=budget, tokenizer="approx", render_format="anthropic")
    assert res.format == "anthropic"
    for t in res.turns:
        assert t.tokens <= budget
        assert t.protocol_problems == (), t.protocol_problems
        req = t.request
        assert (
            sum(1 for m in req["messages"] for b in m["content"] if "cache_control" in b)
            + sum(1 for b in req.get("system", ()) if "cache_control" in b)
            == 1
        )
    res.workspace.close()


@given(conv=_EITHER)
def test_token_totals_equal_the_openai_replay_of_the_projection(conv):
    """Under the same tokenizer the Anthropic
    replay's per-turn tokens and state hash equal the OpenAI-format replay
    of the same conversation written with the documented projection."""
    openai = anthropic_to_openai(conv["messages"], system=conv["system"])
    assert detect_format(openai) == "openai"
    a = replay_trace(conv, budget=3000, tokenizer="approx")
    o = replay_trace(openai, budget=3000, tokenizer="approx")
    assert [t.tokens for t in a.turns] == [t.tokens for t in o.turns]
    assert [t.candidate_tokens for t in a.turns] == [t.candidate_tokens for t in o.turns]
    assert a.state_hash == o.state_hash


def _strip(request: dict) -> list:
    msgs = copy.deepcopy(request["messages"])
    for m in msgs:
        for b in m["content"]:
            b.pop("cache_control", None)
    last = msgs[-1]["content"]
    assert last[-1]["text"].startswith("<context_workspace_status>")
    del last[-1]
    if not last:
        msgs.pop()
    return msgs


@given(conv=conversations())
def test_visible_blocks_render_back_unchanged(conv):
    """Nothing of the wire form is lost while a block is visible: thinking
    signatures, redacted data, image bytes and is_error flags come back
    exactly as registered (with room to spare, nothing is archived)."""
    messages = [m for m in conv["messages"] if "action" not in m]
    ws = Workspace(1_000_000, tokenizer="approx")
    ws.register_messages(messages, system=conv["system"])
    req = ws.render(format="anthropic").as_request()
    assert _strip(req) == messages
    assert req["system"][-1]["text"] == conv["system"]


def test_framing_of_a_thinking_block_is_its_projection():
    """The format's framing, documented in PROJECTION_RULES: a thinking block
    costs exactly its projection '<thinking>\\n...\\n</thinking>' in the
    assistant content; the signature is not counted."""
    thinking = {"type": "thinking", "thinking": "check the logs first", "signature": "x" * 500}
    turn = [thinking, {"type": "tool_use", "id": "t1", "name": "ls", "input": {}}]
    with_thinking = [{"role": "user", "content": "go"}, {"role": "assistant", "content": turn}]
    without = [{"role": "user", "content": "go"}, {"role": "assistant", "content": turn[1:]}]
    a = Workspace(50_000, tokenizer="cl100k_base")
    b = Workspace(50_000, tokenizer="cl100k_base")
    a.register_messages(with_thinking)
    b.register_messages(without)
    tok = a.tokenizer
    base = message_tokens({"role": "assistant", "content": None}, tok)
    framed = message_tokens(
        {"role": "assistant", "content": "<thinking>\ncheck the logs first\n</thinking>"}, tok
    )
    assert a.blocks[-1].tokens - b.blocks[-1].tokens == framed - base
    assert "x" * 50 not in json.dumps(a.render().as_request())  # the signature is not in the prompt


@pytest.mark.parametrize(
    ("request_", "needle"),
    [
        (
            {"messages": [{"role": "assistant", "content": [{"type": "text", "text": "x"}]}]},
            "first",
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "a"}]},
                    {"role": "user", "content": [{"type": "text", "text": "b"}]},
                ]
            },
            "in a row",
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "a"}]},
                    {
                        "role": "assistant",
                        "content": [
                            {"type": "tool_use", "id": "t", "name": "f", "input": {}},
                            {"type": "thinking", "thinking": "late", "signature": "s"},
                        ],
                    },
                    {
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": "t", "content": "r"}],
                    },
                ]
            },
            "after a tool_use",
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "a"}]},
                    {
                        "role": "assistant",
                        "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}],
                    },
                    {
                        "role": "user",
                        "content": [
                            {"type": "text", "text": "x"},
                            {"type": "tool_result", "tool_use_id": "t", "content": "r"},
                        ],
                    },
                ]
            },
            "must come first",
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "a"}]},
                    {
                        "role": "assistant",
                        "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}],
                    },
                    {"role": "user", "content": [{"type": "text", "text": "no result"}]},
                ]
            },
            "exactly once",
        ),
        ({"messages": [{"role": "user", "content": [{"type": "text", "text": ""}]}]}, "empty text"),
        (
            {
                "messages": [
                    {"role": "user", "content": [{"type": "text", "text": "a"}]},
                    {
                        "role": "assistant",
                        "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}],
                    },
                    {
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": "t", "content": "r"}],
                    },
                    {
                        "role": "assistant",
                        "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}],
                    },
                    {
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": "t", "content": "r"}],
                    },
                ]
            },
            "duplicate tool_use id 't'",
        ),
    ],
)
def test_anthropic_checker_fails_on_broken_requests(request_, needle):
    """The checker is shown to fail: each broken request is flagged with its rule."""
    assert any(needle in p for p in anthropic_problems(request_)), anthropic_problems(request_)


def test_bad_anthropic_blocks_name_the_message_and_block():
    """Bad input at the door: an unknown block type or a tool_result in an
    assistant turn names the message index and the rule."""
    bad = [{"role": "user", "content": [{"type": "video", "x": 1}]}]
    with pytest.raises(TraceError, match=r"message 0.*block 0 has type 'video'"):
        replay_trace(bad + [{"role": "user", "content": [{"type": "image"}]}], budget=3000)
    wrong = [
        {"role": "user", "content": "x"},
        {"role": "assistant", "content": [{"type": "tool_result", "tool_use_id": "t"}]},
    ]
    with pytest.raises(TraceError, match="tool_result belongs in a user turn"):
        replay_trace(wrong, budget=3000)


SAMPLE = str(TRACES / "anthropic_ops_agent.json")


def test_cli_replays_the_sample_anthropic_trace(capsys):
    """From the CLI: the sample Anthropic trace
    (thinking, redacted thinking, parallel tool_use, an is_error result, an
    image, a context archive) replays with every self-check true, each turn's
    Anthropic request valid, the agent's archive applied, and the thinking
    signature of a visible turn sent back as registered."""

    from vistalab.cli import main

    path = TRACES / "anthropic_ops_agent.json"
    assert (
        main(
            [
                "workspace",
                "replay",
                str(path),
                "--budget",
                "3000",
                "--json",
                "--render",
                "anthropic",
            ]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    assert doc["format"] == "anthropic"
    assert all(v for v in doc["checks"].values() if isinstance(v, bool))
    assert all(not t["protocol_problems"] for t in doc["turns"])
    archives = [e for t in doc["turns"] for e in t["events"] if e["op"] == "archive"]
    assert len(archives) == 1 and archives[0]["ok"]
    final = doc["turns"][-1]["request"]
    assert "EqQBCkYIBBgCKkD3sig2" in json.dumps(final)  # the visible turn's signature
    assert final["system"][0]["text"].startswith("CONTEXT MANAGEMENT PROTOCOL")


def test_cli_replay_json_reports_the_cacheable_share(capsys):
    """replay --json reports each turn's cacheable prefix
    tokens and share, and the run's token-weighted share."""
    from vistalab.cli import main

    assert main(["workspace", "replay", SAMPLE, "--budget", "3000", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    turns = doc["turns"]
    assert turns[0]["cacheable_tokens"] == 0
    for t in turns:
        assert 0 <= t["cacheable_tokens"] <= t["tokens"]
        assert t["cacheable_share"] == pytest.approx(t["cacheable_tokens"] / t["tokens"])
    later = turns[1:]
    weighted = sum(t["cacheable_tokens"] for t in later) / sum(t["tokens"] for t in later)
    assert doc["cacheable_share"] == pytest.approx(weighted)
    assert 0 < doc["cacheable_share"] < 1


def test_save_and_load_keep_the_wire_originals(tmp_path):
    """Nothing is lost across a snapshot: the original blocks (thinking
    signature, image data, is_error) are saved beside the state and the loaded
    workspace renders them back; a damaged originals entry is refused."""
    from vistalab.workspace import DiskStore, SnapshotError

    doc = json.loads(Path(SAMPLE).read_text())
    ws = Workspace(100_000, tokenizer="approx", store=DiskStore(tmp_path / "a"))
    ws.register_messages([m for m in doc["messages"][:5]], system=doc["system"])
    before = ws.render(format="anthropic").as_request()
    ws.save(tmp_path / "ws.json")
    again = Workspace.load(tmp_path / "ws.json", store=DiskStore(tmp_path / "a"))
    assert again.render(format="anthropic").as_request() == before
    assert "EqQBCkYIBBgCKkD3sig2" in json.dumps(before)
    saved = json.loads((tmp_path / "ws.json").read_text())
    saved["wire"] = {"k": [{"no": "type"}]}
    (tmp_path / "bad.json").write_text(json.dumps(saved))
    with pytest.raises(SnapshotError, match="wire originals"):
        Workspace.load(tmp_path / "bad.json", store=DiskStore(tmp_path / "a"))


REUSED = TRACES / "reused_call_ids.json"
_ANTHROPIC_ID = re.compile(r"^[a-zA-Z0-9_-]+$")


def _uses(request: dict) -> list[dict]:
    return [b for m in request["messages"] for b in m["content"] if b["type"] == "tool_use"]


def test_cli_replays_the_reused_call_id_trace_in_anthropic_form(capsys):
    """Audit item 1, from the CLI: the shipped trace whose agent reuses call
    ids replays with ``--render anthropic`` with every self-check true (it
    reported ``duplicate tool_use id 'call_0'`` before the fix); every
    request's tool_use ids are unique and well-formed, and an id names the
    same call in every request that carries it (derived from the call's
    block, not from its place in one rendering)."""
    from vistalab.cli import main

    argv = ["workspace", "replay", str(REUSED), "--budget", "3000", "--json"]
    assert main([*argv, "--render", "anthropic"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert all(v for v in doc["checks"].values() if isinstance(v, bool)), doc["checks"]
    assert all(not t["protocol_problems"] for t in doc["turns"])
    meaning: dict[str, tuple] = {}
    renamed = set()
    for t in doc["turns"]:
        ids = [u["id"] for u in _uses(t["request"])]
        assert len(ids) == len(set(ids))
        assert all(_ANTHROPIC_ID.match(i) for i in ids)
        for u in _uses(t["request"]):
            call = (u["name"], json.dumps(u["input"], sort_keys=True))
            assert meaning.setdefault(u["id"], call) == call, u["id"]
        renamed |= {i for i in ids if i.startswith("call_0_B")}
    assert len(renamed) >= 2  # call_0 was reused at least twice and renamed each time


def test_reused_call_ids_render_unique_and_stable_through_the_api():
    """Audit item 1, through the API (and ``render_request``, which MCP's
    ``harness_render`` uses): the first call keeps its id, a reuse gets an id
    derived from its block and its result the same tool_use_id; registering a
    further reuse does not change the earlier request (its prefix, which the
    provider's prompt cache holds, stays byte-identical); the OpenAI rendering
    keeps the ids as registered."""
    from vistalab.workspace import render_request

    def call(cid: str, q: str) -> dict:
        args = json.dumps({"q": q})
        fn = {"name": "search", "arguments": args}
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": cid, "type": "function", "function": fn}],
        }

    def result(cid: str, text: str) -> dict:
        return {"role": "tool", "tool_call_id": cid, "content": text}

    ws = Workspace(100_000, tokenizer="approx")
    ws.register_messages(
        [{"role": "user", "content": "go"}, call("c1", "a"), result("c1", "A"), call("c1", "b")]
    )
    pending = render_request(ws, "anthropic")["request"]  # B4's call still waits
    assert anthropic_problems(pending) == []
    assert [u["id"] for u in _uses(pending)] == ["c1", "c1_B4"]
    ws.register_messages([result("c1", "B")])
    first = ws.render(format="anthropic").as_request()
    assert anthropic_problems(first) == []
    answered = [
        b["tool_use_id"]
        for m in first["messages"]
        for b in m["content"]
        if b["type"] == "tool_result"
    ]
    assert answered == ["c1", "c1_B4"]
    ws.register_messages([call("c1", "c"), result("c1", "C")])
    second = ws.render(format="anthropic").as_request()
    assert anthropic_problems(second) == []
    assert [u["id"] for u in _uses(second)] == ["c1", "c1_B4", "c1_B6"]
    n = len(first["messages"]) - 1  # all but the dashboard turn
    assert _strip(second)[:n] == _strip(first)[:n]
    openai_ids = [c["id"] for m in ws.render().messages for c in m.get("tool_calls") or ()]
    assert openai_ids == ["c1", "c1", "c1"]


def test_renamed_ids_never_take_an_id_already_used():
    """Audit item 1: a renamed id never collides with an id a call already
    carries, and characters Anthropic refuses are replaced."""
    from vistalab.workspace import anthropic_tool_use_ids

    got = anthropic_tool_use_ids(
        [("B2", ["x.y"]), ("B4", ["x.y_B6"]), ("B6", ["x.y"]), ("B8", ["x.y"])]
    )
    # "x.y" is outside the API's id pattern, so even its first use is renamed
    assert got == {("B2", "x.y"): "x_y_B2", ("B4", "x.y_B6"): "x_y_B6_B4",
                   ("B6", "x.y"): "x_y_B6", ("B8", "x.y"): "x_y_B8"}
    clash = anthropic_tool_use_ids([("B2", ["a"]), ("B3", ["a_B4"]), ("B4", ["a"])])
    assert clash == {("B4", "a"): "a_B4_1"}


def test_a_reused_call_id_keeps_each_calls_own_input():
    """Anthropic in, Anthropic out: two tool_use blocks with the same id (the
    second reuses it once the first was answered) keep their own inputs on the
    wire; the codec tells messages apart by their calls' arguments, not only
    their ids (found by the differential test's byte-for-byte comparison)."""
    from vistalab.workspace import Workspace

    ws = Workspace(4000, tokenizer="approx")
    ws.register_messages([{"role": "user", "content": [{"type": "text", "text": "task"}]}])
    for q, r in (("first", "r1"), ("second", "r2")):
        ws.register_messages([{"role": "assistant", "content": [
            {"type": "tool_use", "id": "c1", "name": "search", "input": {"q": q}}]}])
        ws.register_messages([{"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "c1", "content": r}]}])
    uses = [b for t in ws.render(format="anthropic").messages for b in t["content"]
            if b.get("type") == "tool_use"]
    assert [u["input"] for u in uses] == [{"q": "first"}, {"q": "second"}]


def test_a_refused_call_does_not_replace_the_visible_calls_input():
    """A registration refused because a call with the same id is still pending
    leaves the visible call's Anthropic original as it was."""
    import pytest as _pytest
    from vistalab.workspace import ProtocolOrderError, Workspace

    ws = Workspace(3000, cache_prefix=False)

    def call(q):
        return {"role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "search", "input": {"q": q}}]}

    ws.register_messages([call("first")])
    with _pytest.raises(ProtocolOrderError):
        ws.register_messages([call("second")])
    uses = [b for t in ws.render(format="anthropic").messages for b in t["content"]
            if b.get("type") == "tool_use"]
    assert [u["input"] for u in uses] == [{"q": "first"}]
