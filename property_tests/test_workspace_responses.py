"""The engine's OpenAI Responses format: input items registered (a model turn,
its reasoning included, one block) and rendered back as the items registered,
the reasoning kept with its calls through archive, restore, offload and the
guard; checked with the conformance suite's independent Responses checker."""

from __future__ import annotations

import json

from vistalab.workspace import Workspace, detect_format

from vistalab.conformance._responses import responses_problems


def _turn(n: int, text: str = "think") -> list[dict]:
    return [
        {"type": "reasoning", "id": f"rs_{n}", "encrypted_content": f"gA{n}",
         "summary": [{"type": "summary_text", "text": text}]},
        {"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": "fetch",
         "arguments": "{}"},
    ]


def _out(n: int, body: str) -> dict:
    return {"type": "function_call_output", "call_id": f"call_{n}", "output": body}


ITEMS = [
    {"type": "message", "role": "developer", "content": "Be careful."},
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Find it."}]},
    *_turn(1), _out(1, "one " * 40),
    *_turn(2), _out(2, "two " * 40),
    {"type": "message", "role": "assistant", "id": "msg_9",
     "content": [{"type": "output_text", "text": "Done."}]},
]


def _items(ws) -> list[dict]:
    return json.loads(json.dumps([dict(m) for m in ws.render(format="responses").messages]))


def test_items_render_back_as_registered():
    ws = Workspace(6000)
    assert detect_format(ITEMS) == "responses"
    ids = ws.register_messages(ITEMS)
    assert len(ids) == 7  # developer, user, (turn, output) x 2, the answer
    got = _items(ws)
    assert got[1:-1] == ITEMS  # between the protocol notice and the dashboard
    assert responses_problems(got) == []
    req = ws.render(format="responses").as_request()
    assert set(req) == {"input", "tools"} and req["tools"][0]["type"] == "function"


def test_reasoning_stays_with_its_calls_through_archive_and_restore():
    ws = Workspace(6000)
    ws.register_messages(ITEMS)
    res = ws.archive("B3-B4", "the first lookup")
    got = _items(ws)
    assert not any(i.get("id") in ("rs_1", "fc_1") for i in got)  # gone together
    assert any(i.get("id") == "rs_2" for i in got) and responses_problems(got) == []
    ws.restore(res.unit_id)
    assert _items(ws)[1:-1] == ITEMS


def test_same_projection_keeps_each_turns_own_items():
    """Two model turns with the same text and calls keep their own item ids."""
    ws = Workspace(6000)
    ws.register_messages([{"type": "message", "role": "user", "content": "go"}])
    for n in (1, 2):
        turn = [{**i, "id": f"{i['id']}_{n}"} for i in _turn(1)]
        ws.register_messages([*turn, _out(1, "same")])
    ids = [i.get("id") for i in _items(ws) if i.get("type") == "reasoning"]
    assert ids == ["rs_1_1", "rs_1_2"]


def test_guard_notice_and_offload_are_not_the_original_output():
    ws = Workspace(2200, hard_limit=2200)
    ws.register_messages([{"type": "message", "role": "user", "content": "go"}])
    ws.register_messages([*_turn(1), _out(1, " ".join(f"w{i}" for i in range(900)))])
    outs = [i for i in _items(ws) if i.get("type") == "function_call_output"]
    assert outs and outs[0]["output"].startswith("[budget guard]")
    assert responses_problems(_items(ws)) == []


def test_a_saved_workspace_keeps_the_items(tmp_path):
    ws = Workspace(6000)
    ws.register_messages(ITEMS)
    ws.save(tmp_path / "ws.json")
    back = Workspace.load(tmp_path / "ws.json")
    assert _items(back)[1:-1] == ITEMS
    fork = ws.fork()
    assert _items(fork)[1:-1] == ITEMS
