"""The study's newer peers (paper, Methodology, "Workspace invariants"): the
OpenAI Agents SDK session (Responses items), semantic-kernel's truncation
reducer, haystack's sliding-window compactor, and the JavaScript peers run
through the JSON-lines protocol (``examples/conformance/peers/peers.mjs``).

Light by design: one hand-made conversation per peer, each test skipped with
one line naming the install command when its peer is not installed.
"""

from __future__ import annotations

import json

import pytest

pytest.importorskip("hypothesis")

from vistalab.conformance import as_counter, request_problems  # noqa: E402
from vistalab.conformance._peers import PEERS, get_peer, load_peer  # noqa: E402
from vistalab.conformance._peers_more import JsPeer, js_peers_folder  # noqa: E402

# the parallel-call conversation of the first peers' tests
from .test_conformance_peers import CONVERSATION as CHAT  # noqa: E402
from .test_conformance_peers import COUNT  # noqa: E402

ITEMS = [
    {"type": "message", "role": "system", "content": "You are a helpful assistant."},
    {"type": "message", "role": "user", "content": "Weather in Paris?"},
    {"type": "function_call", "call_id": "call_1", "name": "weather",
     "arguments": '{"city": "Paris"}'},
    {"type": "function_call_output", "call_id": "call_1", "output": "Paris: 18C, cloudy"},
    {"type": "message", "role": "assistant", "content": "Paris is 18C and cloudy."},
    {"type": "message", "role": "user", "content": "Thanks!"},
]


def _need(name):
    peer = get_peer(name)
    if not peer.installed():
        pytest.skip(f"peer {name} not installed ({peer.missing()}): {peer.pip}")
    return peer


def _run(manager, messages, budget, count):
    if isinstance(manager, type):
        adapter = manager(budget)
        for m in json.loads(json.dumps(messages)):
            adapter.register(m)
        return adapter.render(budget)
    try:
        return manager(json.loads(json.dumps(messages)), budget, count)
    finally:
        close = getattr(manager, "close", None)
        if close is not None:
            close()


PY_CHAT = ["semantic-kernel-truncation", "haystack-sliding-window",
           "haystack-sliding-window-no-note", "haystack-sliding-window-min0",
           "langchain-last-system", "langchain-last-documented", "langchain-last-approximate"]
JS = [p.name for p in PEERS if isinstance(p, JsPeer)]


@pytest.mark.parametrize("name", PY_CHAT + [n for n in JS if get_peer(n).protocol == "openai"])
def test_chat_peer_keeps_everything_that_fits_and_trims_what_does_not(name):
    """With room for all, the input comes back whole, in order; at a budget
    that does not fit the whole conversation the peer returns less (so the
    adapter really hands the budget to the peer)."""
    peer = _need(name)
    manager = peer.load()
    full = COUNT(CHAT)
    whole = _run(manager, CHAT, 4 * full, COUNT)
    assert whole == CHAT
    part = _run(peer.load(), CHAT, 20, COUNT)
    assert isinstance(part, list) and len(part) < len(CHAT)


def test_a_js_peer_breaks_the_protocol_where_its_python_twin_does():
    """@langchain/core's trimMessages(strategy 'last') orphans the tool results
    at the budget where langchain-core's does: the process peer is the package's
    own function, not a reimplementation of the suite's."""
    _need("langchainjs-last")
    py = load_peer("langchain-last")(json.loads(json.dumps(CHAT)), 60, COUNT)
    js = _run(load_peer("langchainjs-last"), CHAT, 60, COUNT)
    assert js == py and js[0]["role"] == "tool"
    assert request_problems(js, "openai")


@pytest.mark.parametrize("name", ["openai-agents-session", "openai-agentsjs-session"])
def test_session_peers_return_the_last_items_that_fit(name):
    """A session read back with a limit is the input's last items (Responses
    format), the largest suffix that fits: at a budget for the last two items
    the output is exactly those."""
    peer = _need(name)
    count = as_counter(None, "responses")
    assert _run(peer.load(), ITEMS, 4 * count(ITEMS), count) == ITEMS
    budget = count(ITEMS[-2:])
    assert _run(peer.load(), ITEMS, budget, count) == ITEMS[-2:]


def test_a_js_peer_without_its_packages_is_listed_with_its_npm_command(tmp_path,
                                                                       monkeypatch):
    """No node_modules: the peer is 'not installed', and its install command is
    npm ci on the peers folder shipped with the project."""
    import vistalab.conformance._peers_more as more

    monkeypatch.setattr(more, "js_peers_folder", lambda: tmp_path)
    peer = get_peer("ai-prune-tool-calls")
    assert peer.missing() in ("node", "ai")
    assert peer.pip == f"npm ci --prefix {tmp_path}"
    assert peer.versions() == {"ai": None}


def test_the_js_peers_folder_pins_every_package_it_runs():
    """package.json pins exact versions and package-lock.json exists, so
    `npm ci` installs the same packages the study recorded."""
    folder = js_peers_folder()
    pkg = json.loads((folder / "package.json").read_text())
    assert (folder / "package-lock.json").is_file() and (folder / "peers.mjs").is_file()
    deps = pkg["dependencies"]
    for p in PEERS:
        if isinstance(p, JsPeer):
            assert all(d in deps and deps[d][0].isdigit() for d in p.distributions)
