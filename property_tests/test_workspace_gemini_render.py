"""``Workspace.render(format="gemini")``: the engine's rendering as Gemini
``generateContent`` contents (Gemini API reference, Content and Part,
ai.google.dev/api/caching#Content), like the Anthropic and Responses formats;
and the Gemini call ids (``GeminiIds``) kept in the workspace's wire table, so
a snapshot taken between a call without an id and its response still matches
the response to its call after ``load``.
"""

from __future__ import annotations

import json

import pytest
from vistalab.workspace import FORMATS, GeminiIds, Workspace, register_gemini, render_gemini
from vistalab.workspace._errors import UnknownNameError

from vistalab.conformance import request_problems

SYSTEM = {"role": "system", "parts": [{"text": "Be brief."}]}
USER = {"role": "user", "parts": [{"text": "hi"}]}
CALLS = {"role": "model", "parts": [
    {"functionCall": {"name": "search", "args": {"q": "a"}}, "thoughtSignature": "S1"},
    {"functionCall": {"name": "read_file", "args": {}}}]}
RESULTS = {"role": "user", "parts": [
    {"functionResponse": {"name": "search", "response": {"result": "x"}}},
    {"functionResponse": {"name": "read_file", "response": {"result": "y"}}}]}
AGAIN = {"role": "model", "parts": [{"functionCall": {"name": "search", "args": {"q": "b"}}}]}
AGAIN_RESULT = {"role": "user", "parts": [
    {"functionResponse": {"name": "search", "response": {"result": "z"}}}]}


def _ws(contents=(SYSTEM, USER, CALLS), ids=None):
    ws = Workspace(4000)
    for c in contents:
        register_gemini(ws, c, ids)
    return ws


def test_every_format_renders():
    assert FORMATS == ("openai", "anthropic", "responses", "gemini")
    ws = _ws((SYSTEM, USER, CALLS, RESULTS))
    for fmt in FORMATS:
        assert ws.render(format=fmt).format == fmt


def test_render_gemini_format_gives_the_original_contents():
    ws = _ws((SYSTEM, USER, CALLS, RESULTS))
    r = ws.render(format="gemini")
    req = r.as_request()
    assert req["contents"][:3] == [USER, CALLS, RESULTS]
    assert {"text": "Be brief."} in req["systemInstruction"]["parts"]
    assert request_problems(req, "gemini") == []
    # the same request render_gemini writes, with the tools as functionDeclarations
    legacy, openai = render_gemini(ws)
    assert legacy["contents"] == req["contents"]
    assert legacy["systemInstruction"] == req["systemInstruction"]
    names = [d["name"] for d in req["tools"][0]["functionDeclarations"]]
    assert names == [t["function"]["name"] for t in openai.tools]
    assert r.tokens == openai.tokens and r.mode == openai.mode


def test_the_gemini_rendering_is_read_only_and_as_request_a_copy():
    r = _ws().render(format="gemini")
    with pytest.raises(TypeError):
        r.messages[0]["role"] = "model"  # type: ignore[index]
    req = r.as_request()
    req["contents"].clear()
    assert r.as_request()["contents"]


def test_an_unknown_format_names_the_choices():
    with pytest.raises(UnknownNameError, match="gemini"):
        _ws().render(format="Gemini")


@pytest.mark.parametrize("own_ids", [False, True])
def test_gemini_ids_survive_save_and_load(tmp_path, own_ids):
    """Calls without ids, a snapshot, then their responses (matched by name):
    the loaded workspace renders what the original does (the third call's
    made-up id is gemini-fc-2; a fresh GeminiIds would answer gemini-fc-0)."""
    ids = GeminiIds() if own_ids else None
    ws = _ws((SYSTEM, USER, CALLS, RESULTS, AGAIN), ids)
    ws.save(str(tmp_path / "snap"))
    back = Workspace.load(str(tmp_path / "snap"))
    register_gemini(ws, AGAIN_RESULT, ids)
    register_gemini(back, AGAIN_RESULT)  # no ids object: the snapshot's
    a, b = ws.render(format="gemini").as_request(), back.render(format="gemini").as_request()
    assert json.dumps(a) == json.dumps(b)
    assert a["contents"][:5] == [USER, CALLS, RESULTS, AGAIN, AGAIN_RESULT]
    assert request_problems(a, "gemini") == []


def test_a_fork_keeps_its_own_ids():
    ws = _ws((SYSTEM, USER, CALLS, RESULTS, AGAIN))
    fork = ws.fork()
    register_gemini(fork, AGAIN_RESULT)
    assert fork.render(format="gemini").as_request()["contents"][4] == AGAIN_RESULT
    # the parent's call is still open: its own response matches it too
    register_gemini(ws, AGAIN_RESULT)
    assert ws.render(format="gemini").as_request()["contents"][4] == AGAIN_RESULT
