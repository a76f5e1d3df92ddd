"""The conformance study's adapters of real context managers (the peers) and the
study itself (paper, Methodology, "Workspace invariants" and "Structure
preservation": the invariants the study checks each peer against).

Adapters are checked on a hand-made conversation (two parallel tool calls, as
in the paper's agent loop) against the manager contract; the study runs end to
end on langchain-core, whose ``trim_messages`` (default ``strategy="last"``)
returns a ``tool`` message without its assistant call, a request OpenAI
rejects: the study must find that by itself and write it up.
"""

from __future__ import annotations

import csv
import json

import pytest

pytest.importorskip("hypothesis")

from vistalab._core import UnknownNameError, VistaLabError  # noqa: E402
from vistalab.conformance import as_counter, request_problems  # noqa: E402
from vistalab.conformance._model import CHECKED, Violation  # noqa: E402
from vistalab.conformance._peers import (  # noqa: E402
    PEERS,
    Peer,
    PeerNotInstalledError,
    get_peer,
    load_peer,
    peer_names,
)
from vistalab.conformance._study import (  # noqa: E402
    bug_writeup,
    provider_rules,
    run_study,
)

COUNT = as_counter(None, "openai")

CONVERSATION = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "What's the weather in Paris and in Rome?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function",
         "function": {"name": "weather", "arguments": '{"city": "Paris"}'}},
        {"id": "call_2", "type": "function",
         "function": {"name": "weather", "arguments": '{"city": "Rome"}'}},
    ]},
    {"role": "tool", "tool_call_id": "call_1", "content": "Paris: 18C, cloudy"},
    {"role": "tool", "tool_call_id": "call_2", "content": "Rome: 24C, sunny"},
    {"role": "assistant", "content": "Paris is 18C and cloudy; Rome is 24C and sunny."},
    {"role": "user", "content": "Thanks!"},
]


def _run(manager, messages, budget):
    """One call through the suite's contract (a trimmer, or an adapter factory)."""
    if isinstance(manager, type):
        adapter = manager(budget)
        for m in json.loads(json.dumps(messages)):
            adapter.register(m)
        return adapter.render(budget)
    return manager(json.loads(json.dumps(messages)), budget, COUNT)


# the OpenAI-chat peers written in Python (the JS and Responses peers are checked in
# test_conformance_peers_more.py)
INSTALLED = [p.name for p in PEERS if p.installed() and p.protocol == "openai"
             and p.modules]


def test_registry_names_are_unique_and_cover_twelve_libraries():
    """The study knows at least 25 settings of 12 libraries (3 of them
    JavaScript), each under one name."""
    names = peer_names()
    assert len(names) == len(set(names))
    assert len({p.settings for p in PEERS}) >= 25
    assert len({p.distributions[0] for p in PEERS}) >= 12
    assert len({p.distributions[0] for p in PEERS if not p.modules}) >= 3  # the JS peers


@pytest.mark.parametrize("name", INSTALLED)
def test_adapter_follows_the_manager_contract(name):
    """Each installed peer's adapter returns a list of OpenAI dicts (never a
    peer object), and with room for everything the input's own messages in
    their order (settings such as start_on='human' may still drop some)."""
    manager = load_peer(name)
    full = COUNT(CONVERSATION)
    for budget in (40, 60, 80, full):
        try:
            out = _run(manager, CONVERSATION, budget)
        except Exception:  # noqa: BLE001 - a peer's own crash is a finding, not an adapter bug
            continue
        assert isinstance(out, list)
        assert all(isinstance(m, dict) and m.get("role") in
                   ("system", "user", "assistant", "tool") for m in out)
    # with room for everything, what comes back is input messages, in order
    whole = _run(manager, CONVERSATION, 4 * full)
    assert whole and whole[-1] == CONVERSATION[-1]
    positions = [CONVERSATION.index(m) for m in whole]
    assert positions == sorted(positions)


def test_adapter_maps_passed_through_messages_to_the_original_dicts():
    """A message langchain passes through is the input dict itself, so its lossy
    conversion back (``None`` content to ``""``) never reads as an alteration."""
    out = load_peer("langchain-first")(list(CONVERSATION), 80, COUNT)
    assert out and all(any(m is c for c in CONVERSATION) for m in out)
    assert out[2]["content"] is None


def test_a_partial_message_keeps_langchain_s_own_content():
    """allow_partial copies a message with fewer content blocks; the adapter shows
    exactly those blocks (not langchain's string rendering of them), so the
    fidelity write-up names the change langchain made and nothing else."""
    conv = [{"role": "system", "content": "ok"},
            {"role": "user", "content": [{"type": "text", "text": "ok"},
                                         {"type": "text", "text": "ok"}]}]
    manager = load_peer("langchain-last-partial")
    budget = next(b for b in range(1, 40)
                  if len(manager(list(conv), b, COUNT)) == 2)
    out = manager(list(conv), budget, COUNT)
    assert out[0] is conv[0]
    assert out[1] == {"role": "user", "content": [{"type": "text", "text": "ok"}]}


def test_langchain_last_orphans_a_tool_message_on_the_parallel_call_conversation():
    """The case as a user meets it: strategy='last' at a budget that cuts the
    assistant call but keeps its results (paper, "Structure preservation")."""
    out = load_peer("langchain-last")(list(CONVERSATION), 60, COUNT)
    assert out[0]["role"] == "tool"
    assert request_problems(out, "openai")
    rules = provider_rules(out)
    assert rules and "must be a response to a preceding message with 'tool_calls'" in rules[0]


def test_a_peer_call_left_running_leaves_the_process_output_alone(monkeypatch):
    """The tokentrim adapter silences tokentrim's warning in tokentrim's own module,
    never by redirecting ``sys.stdout``: a call the suite's per-call timeout leaves
    running in its worker thread (paper, Methodology: a hanging manager is reported,
    not waited for) held the process's stdout redirected until it ended, so a
    ``run_study(timeout=1.5)`` printed nothing, and the API fuzzer's own redirection
    interleaved with it. Two overlapping calls, ended in either order, restore
    tokentrim's module as it was."""
    import sys
    import threading

    pytest.importorskip("tokentrim")
    import tokentrim.tokentrim as tt

    real_encoding, real_trim = tt.get_encoding, tt.trim
    inside = [threading.Event(), threading.Event()]
    release = [threading.Event(), threading.Event()]
    seen: list[tuple[object, object]] = []

    def trim(messages, max_tokens, system_message=None):  # a call that waits to be released
        i = len(seen) % 2
        seen.append((sys.stdout, getattr(tt, "print", print)))
        inside[i].set()
        release[i].wait(30)
        return real_trim(messages, max_tokens=max_tokens, system_message=system_message)

    monkeypatch.setattr(tt, "trim", trim)
    manager = load_peer("tokentrim")
    stdout = sys.stdout
    for order in ((0, 1), (1, 0)):
        for ev in (*inside, *release):
            ev.clear()
        threads = [threading.Thread(target=manager, args=(list(CONVERSATION), 4000, COUNT))
                   for _ in range(2)]
        for i, t in enumerate(threads):
            t.start()
            assert inside[i].wait(30)  # the call is inside tokentrim
        assert sys.stdout is stdout
        assert tt.get_encoding is not real_encoding and "print" in vars(tt)
        for i in order:
            release[i].set()
            threads[i].join(30)
        assert tt.get_encoding is real_encoding and "print" not in vars(tt), order
    assert [out for out, _ in seen] == [stdout] * 4
    assert all(p is not print for _, p in seen)


def test_unknown_and_missing_peers_are_named_errors():
    with pytest.raises(UnknownNameError, match="langchain-last"):
        get_peer("langchain-lats")
    ghost = Peer("ghost", ("vistalab-no-such-dist",), ("vistalab_no_such_module",),
                 "ghost()", lambda: None)
    assert not ghost.installed()
    assert ghost.versions() == {"vistalab-no-such-dist": None}
    with pytest.raises(PeerNotInstalledError, match="pip install vistalab-no-such-dist") as e:
        ghost.load()
    assert isinstance(e.value, VistaLabError) and isinstance(e.value, ImportError)


# ------------------------------------------------------------------ provider rules


def _call(*ids):
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}} for i in ids]}


def _res(i):
    return {"role": "tool", "tool_call_id": i, "content": "r"}


@pytest.mark.parametrize(("output", "expected"), [
    ([{"role": "user", "content": "q"}, _call("a", "b"), _res("a"), _res("b")], None),
    ([_res("a"), {"role": "user", "content": "q"}], "must be a response to a preceding"),
    ([_call("a", "b"), _res("a"), {"role": "user", "content": "q"}], "responding to each"),
    ([_call("a", "b"), _res("a")], "responding to each"),
    ([_call("a"), _res("a"), _res("a")], "a second time"),
    ([_call("a"), {"role": "user", "content": "q"}, _res("a")], "must be a response"),
    ([], "too short"),
])
def test_provider_rules_agree_with_the_suite(output, expected):
    """The write-ups' own reading of the chat protocol finds a broken rule
    exactly when the suite's protocol check does (each rule shown to fire)."""
    rules = provider_rules(output)
    if expected is None:
        assert rules == [] and request_problems(output, "openai") == []
    else:
        assert any(expected in r for r in rules)
        assert request_problems(output, "openai")


def test_bug_writeup_recounts_the_budget_and_names_the_altered_message():
    peer = get_peer("langchain-last")
    over = Violation("budget", "over", 20, CONVERSATION[:2], CONVERSATION[:2])
    text = bug_writeup(peer, over, COUNT, COUNT.name, {"langchain-core": "1"}, "x.json")
    got = COUNT(CONVERSATION[:2])
    assert f"costs {got} tokens, over the budget of 20 by {got - 20}" in text
    altered = [CONVERSATION[0], dict(CONVERSATION[1], content="What's the")]
    fid = Violation("fidelity", "altered", 99, CONVERSATION[:2], altered)
    text = bug_writeup(peer, fid, COUNT, COUNT.name, {"langchain-core": "1"}, "x.json")
    assert "Output message 1 is input message 1 altered" in text


# ------------------------------------------------------------------ the study


@pytest.mark.slow
def test_study_runs_end_to_end_on_langchain(tmp_path):
    """run_study finds langchain-core's orphaned tool message by itself (the
    protocol invariant broken on a confirmed, shrunk counterexample whose output
    holds a tool message answering a call not in front of it) and writes the
    table, CSV, JSON (with package versions), figure, the replayable
    counterexample and its write-up; a peer that is not installed is a row with
    its pip command. 60 conversations: with seed 0 the generator reaches a
    conversation that shows it between the 30th and the 40th."""
    ghost = Peer("ghost", ("vistalab-no-such-dist",), ("vistalab_no_such_module",),
                 "ghost()", lambda: None)
    from vistalab._study_figure import draw_study_figure

    result = run_study(tmp_path, peers=["langchain-last", ghost], examples=60, seed=0,
                       figure=draw_study_figure)
    rows = {r.peer: r for r in result.rows}
    lc = rows["langchain-last"]
    assert lc.status == "checked" and lc.versions["langchain-core"]
    assert lc.cells["protocol"] == "counterexamples/langchain-last__protocol.orphan-result.json"
    assert rows["ghost"].status == "not installed"
    assert rows["ghost"].note == "pip install vistalab-no-such-dist"
    from vistalab.conformance import read_violation

    found = lc.report.violation("protocol")
    assert found is not None and found.confirmed
    assert len(found.conversation) < 7  # shrunk below the hand-made case above
    assert any("must be a response to a preceding message" in r
               for r in provider_rules(found.output))
    v = read_violation(tmp_path / lc.cells["protocol"])
    assert v.invariant == "protocol" and request_problems(v.output, "openai")
    assert v.output == found.output
    bug = (tmp_path / "bugs" / "langchain-last__protocol.orphan-result.md").read_text()
    assert "langchain-core " + lc.versions["langchain-core"] in bug
    assert "must be a response to a preceding message with 'tool_calls'" in bug
    table = (tmp_path / "study.md").read_text()
    assert "| langchain-last | langchain-core " in table and "## Bugs found" in table
    with open(tmp_path / "study.csv", newline="") as fh:
        csv_rows = {r["peer"]: r for r in csv.DictReader(fh)}
    assert csv_rows["langchain-last"]["protocol"].endswith(".json")
    assert set(CHECKED) <= set(csv_rows["ghost"])
    doc = json.loads((tmp_path / "study.json").read_text())
    assert doc["environment"]["vista-lab"] and doc["rows"][0]["report"]["conversations"] > 0
    assert (tmp_path / "study.png").stat().st_size > 0


# ------------------------------------------------------------------ command line and report


def test_study_command_refuses_a_missing_out_and_an_unknown_peer(tmp_path):
    import argparse

    from vistalab._commands._conformance_study import run_study_command
    from vistalab._errors import CliUsageError

    with pytest.raises(CliUsageError, match="--out DIR"):
        run_study_command(argparse.Namespace(study=True, out=None, peers=None))
    with pytest.raises(UnknownNameError, match="Did you mean 'langchain-last'"):
        run_study_command(argparse.Namespace(study=True, out=str(tmp_path),
                                             peers="langchain-lats"))
    with pytest.raises(VistaLabError, match="examples"):
        run_study_command(argparse.Namespace(study=True, out=str(tmp_path), examples="many"))
    with pytest.raises(CliUsageError, match="drop MANAGER"):
        run_study_command(argparse.Namespace(study=True, out=str(tmp_path),
                                             manager="langchain-last"))


def test_study_command_passes_its_timeout_on(tmp_path, monkeypatch):
    """``--study --timeout S`` is the per-call timeout of every peer's run (it was
    dropped, and every study ran at the default), and a bad one is refused."""
    import argparse

    import vistalab.conformance._study as study
    from vistalab._commands._conformance_study import run_study_command

    seen = {}

    def fake_run_study(out, **kw):
        seen.update(kw)
        raise RuntimeError("stop here")

    monkeypatch.setattr(study, "run_study", fake_run_study)
    with pytest.raises(RuntimeError, match="stop here"):
        run_study_command(argparse.Namespace(study=True, out=str(tmp_path), timeout="60"))
    assert seen["timeout"] == 60.0
    with pytest.raises(VistaLabError, match="timeout"):
        run_study_command(argparse.Namespace(study=True, out=str(tmp_path), timeout="0"))


@pytest.mark.slow
def test_study_command_prints_the_table(tmp_path, capsys):
    from vistalab.cli import main

    assert main(["conformance", "--study", "--out", str(tmp_path), "--peers",
                 "langchain-first", "--examples", "10"]) == 0
    out = capsys.readouterr().out
    assert "1 of 1 peers checked, 10 conversations each" in out and "study written to" in out
    assert "langchain-first" in out and "versions: langchain-core " in out
    assert (tmp_path / "study.md").is_file() and (tmp_path / "study.json").is_file()


def test_a_missing_peer_is_one_line_with_its_pip_command(monkeypatch, capsys):
    """`vista-lab conformance NAME` for a peer that is not installed: exit 2 and
    one line naming the pip command, never a traceback."""
    import vistalab.conformance._registry as registry
    from vistalab.cli import main

    ghost = Peer("ghost", ("vistalab-no-such-dist",), ("vistalab_no_such_module",),
                 "ghost()", lambda: None)
    registry._load_named()
    monkeypatch.setitem(registry.NAMED_MANAGERS, "ghost", ghost.load)
    assert main(["conformance", "ghost"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install vistalab-no-such-dist" in err[0]


def test_report_section_shows_the_table_or_how_to_install(monkeypatch, tmp_path):
    """The reproduce report's section: the peer x invariant table with versions
    from the study's record, or the install line when a peer is missing."""
    import vistalab.conformance._peers as peers_mod
    from vistalab._reproduce._report import md_cell
    from vistalab._reproduce._study import study_params, study_section

    lines = study_section(None, md_cell)
    assert any("pip install 'vista-lab[peers]'" in x for x in lines)
    record = {
        "invariants": list(CHECKED), "examples": 5, "seed": 0, "counter": "cl100k_base",
        "rows": [{"peer": "langchain-last", "status": "checked",
                  "versions": {"langchain-core": "9.9"}, "bugs": ["bugs/x.md"],
                  "cells": {**{i: "pass" for i in CHECKED},
                            "protocol": "counterexamples/langchain-last__protocol.json"}}],
    }
    text = "\n".join(study_section(record, md_cell))
    assert "| langchain-last | langchain-core 9.9 | pass | **violated** |" in text
    assert "1 break at least one" in text
    ghost = Peer("ghost", ("vistalab-no-such-dist",), ("vistalab_no_such_module",),
                 "ghost()", lambda: None)
    monkeypatch.setattr(peers_mod, "PEERS", (*PEERS, ghost))
    assert study_params(tmp_path, quick=True, seed=0) is None
    monkeypatch.setattr(peers_mod, "PEERS", (get_peer("langchain-last"),))
    params = study_params(tmp_path, quick=True, seed=0)
    assert params is not None and params["versions"]["langchain-core"]
