"""The door's remaining limits (DESIGN rule 6, the error contract): integers bounded
before conversion in every reader, payload sizes checked before reading, tool names
and text blocks held to the providers' documented rules, ids bounded in length,
bounded example counts, and an untrusted event log that names a foreign store.

Each case is one a hostile user found (a foreign exception, a traceback, a whole
3 GiB file read, a request the provider refuses called valid); each test fails on the
code before the door was mended.
"""

from __future__ import annotations

import json
import os

import pytest

from vistalab._core import MAX_INT_DIGITS, VistaLabError, json_loads, toml_loads
from vistalab.cli import main


def _ops() -> str:
    from ._data import TRACES

    return str(TRACES / "ops_agent.json")


# ----------------------------------------------------------------- integers in input files

BIG = "9" * (MAX_INT_DIGITS + 700)


def test_the_bounded_readers_refuse_a_long_integer_and_keep_the_limit_itself():
    """Checked on the stated cases: the limit's own length is read, one more digit is
    refused as invalid JSON / TOML at the integer's line (never a bare ValueError)."""
    assert json_loads("[-" + "9" * MAX_INT_DIGITS + "]")[0] == -(10**MAX_INT_DIGITS - 1)
    with pytest.raises(json.JSONDecodeError) as info:
        json_loads('[1,\n  "x", ' + "9" * (MAX_INT_DIGITS + 1) + "]")
    assert info.value.lineno == 2 and f"{MAX_INT_DIGITS + 1:,} digits" in info.value.msg
    assert toml_loads("x = " + "9" * MAX_INT_DIGITS)["x"] == 10**MAX_INT_DIGITS - 1
    import tomllib

    with pytest.raises(tomllib.TOMLDecodeError, match="at line 2"):
        toml_loads("a = 1\nx = " + BIG + "\n")
    assert toml_loads(f'x = "{BIG}"')["x"] == BIG  # digits in a string are text


#: Every command-line door that reads a JSON or TOML file (the six that gave a
#: traceback on an integer of more than 4,300 digits, and the others).
INT_DOORS = [
    ["workspace", "replay", "BIG", "--budget", "3000"],
    ["workspace", "replay", "BIG_LINE", "--budget", "3000"],
    ["workspace", "dashboard", "BIG", "--budget", "4000"],
    ["workspace", "reward", "BIG", "--budget", "4000"],
    ["workspace", "probe", "BIG", "--budget", "4000"],
    ["workspace", "probe", "OPS", "--budget", "4000", "--answers", "BIG"],
    ["sweep", "BIG_TOML", "--out", "OUT"],
    ["workspace", "serve", "--budget", "3000", "--task-tools", "BIG"],
    ["conformance", "--replay", "BIG"],
]


@pytest.mark.parametrize("argv", INT_DOORS, ids=lambda v: "-".join(v))
def test_an_integer_longer_than_the_limit_is_one_line_exit_2(argv, tmp_path, capsys):
    if "serve" in argv:
        pytest.importorskip("mcp")
    files = {"BIG": tmp_path / "big.json", "BIG_LINE": tmp_path / "big.jsonl",
             "BIG_TOML": tmp_path / "big.toml"}
    files["BIG"].write_text(f'[{{"role": "user", "content": "x", "n": {BIG}}}]')
    files["BIG_LINE"].write_text(f'{{"role": "user", "content": "x", "n": {BIG}}}\n')
    files["BIG_TOML"].write_text(f"x = {BIG}\n")
    subst = {**{k: str(v) for k, v in files.items()}, "OPS": _ops(), "OUT": str(tmp_path / "o")}
    status = main([subst.get(a, a) for a in argv])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1, err
    assert f"at most {MAX_INT_DIGITS:,} digits" in err and BIG[:50] not in err, err


def test_the_python_readers_refuse_a_long_integer_with_their_own_error(tmp_path):
    from vistalab.workspace import Workspace, load_probe_answers, load_trace, read_event_log

    from vistalab.sweep import load_config

    path = tmp_path / "big.json"
    path.write_text(f'[{{"role": "user", "content": "x", "n": {BIG}}}]')
    toml = tmp_path / "big.toml"
    toml.write_text(f"x = {BIG}\n")
    log = tmp_path / "events.jsonl"  # a long integer in a line before the last
    log.write_text(f'{{"seq": {BIG}}}\n{{"seq": 1}}\n')
    for call in (lambda: load_trace(path), lambda: list(read_event_log(log)),
                 lambda: load_probe_answers(path), lambda: Workspace.load(path),
                 lambda: load_config(toml)):
        with pytest.raises(VistaLabError, match="digits"):
            call()


# ----------------------------------------------------------------- payload sizes


def _archived(tmp_path):
    from vistalab.workspace import DiskStore, Workspace

    ws = Workspace(4000, tokenizer="approx", store=DiskStore(tmp_path / "arch"))
    ws.register_system("s")
    ws.register_user("q")
    ws.register_tool_call([{"id": "c1", "type": "function",
                            "function": {"name": "f", "arguments": "{}"}}])
    ws.register_tool_result("c1", "r " * 50)
    ws.register_user("next")
    return ws, ws.archive("B4")


def test_a_huge_sparse_payload_is_refused_by_its_size_before_it_is_read(tmp_path):
    """A 3 GiB sparse file in a payload's place: refused from ``fstat`` under a 1 GiB
    address-space limit (reading it whole there is a MemoryError), in a child."""
    import resource

    ws, res = _archived(tmp_path)
    with open(res.path, "r+b") as fh:
        fh.truncate(3 << 30)
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 3
        try:
            resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
            for call in (lambda: ws.restore("B4"), lambda: ws.read_path(res.path),
                         lambda: ws.store.get("B4.txt", size=res.size)):
                try:
                    call()
                    code = 4
                except VistaLabError as exc:
                    if "3,221,225,472 bytes" not in str(exc):
                        code = 5
            code = 0 if code == 3 else code
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0, status
    assert ws.block("B4").status.value == "archived"  # the failed restore changed nothing


def test_a_payload_of_another_length_is_refused_by_both_stores(tmp_path):
    from vistalab.workspace import DiskStore, MemoryStore, PayloadIntegrityError

    for store in (DiskStore(tmp_path / "d"), MemoryStore()):
        store.put("B1.txt", b"abc")
        assert store.get("B1.txt", size=3) == b"abc"
        with pytest.raises(PayloadIntegrityError, match="has 3 bytes, the workspace recorded 4"):
            store.get("B1.txt", size=4)
        with pytest.raises(VistaLabError, match="size"):
            store.get("B1.txt", size=-1)


# ----------------------------------------------------------------- tool names, text blocks


def _ws():
    from vistalab.workspace import Workspace

    ws = Workspace(4000, tokenizer="approx")
    ws.register_system("s")
    ws.register_user("q")
    return ws


@pytest.mark.parametrize("name", ["a b", "f\0", "x" * 65, "caf\u00e9", "\U0001f600", "a.b"])
def test_a_tool_name_outside_the_providers_rule_is_refused(name):
    """Both providers require ^[a-zA-Z0-9_-]{1,64}$; such a name was rendered unchanged
    and the request reported valid."""
    from vistalab.workspace import Workspace, WorkspaceArgumentError

    ws = _ws()
    call = [{"id": "c1", "type": "function", "function": {"name": name, "arguments": "{}"}}]
    with pytest.raises(WorkspaceArgumentError, match=r"\^\[a-zA-Z0-9_-\]\{1,64\}\$") as info:
        ws.register_tool_call(call)
    assert info.value.parameter == "tool_calls item 0 name"
    assert not ws.pending_calls  # nothing registered
    schema = {"type": "function", "function": {"name": name, "parameters": {}}}
    with pytest.raises(WorkspaceArgumentError, match="task_tools item 0 name"):
        Workspace(4000, tokenizer="approx", task_tools=[schema])


def test_the_limit_of_the_tool_name_rule_itself_is_accepted():
    ws = _ws()
    name = "a-Z_9" + "x" * 59
    ws.register_tool_call([{"id": "c1", "type": "function",
                            "function": {"name": name, "arguments": "{}"}}])
    assert ws.block("B3").call_names == (name,)


def test_anthropic_problems_names_bad_tool_names_and_blank_text():
    from vistalab.workspace import anthropic_problems

    req = {"messages": [{"role": "user", "content": [{"type": "text", "text": " \n\t"}]}],
           "tools": [{"name": "a b", "input_schema": {}}]}
    problems = anthropic_problems(req)
    assert any("whitespace only" in p for p in problems), problems
    assert any("tools item 0" in p for p in problems), problems
    use = {"messages": [{"role": "user", "content": [{"type": "text", "text": "q"}]},
                        {"role": "assistant", "content": [
                            {"type": "tool_use", "id": "c1", "name": "x" * 65, "input": {}}]},
                        {"role": "user", "content": [
                            {"type": "tool_result", "tool_use_id": "c1", "content": "r"}]}]}
    assert any("name" in p and "{1,64}" in p for p in anthropic_problems(use))
    assert anthropic_problems({**req, "tools": 5}) != []  # a wrong type is a problem


def test_whitespace_only_text_is_dropped_from_the_anthropic_request():
    """The documented rule: the engine keeps a whitespace-only message (its OpenAI
    rendering shows it), the Anthropic request drops the block (the API refuses a
    text block without non-whitespace text), and the request stays valid."""
    from vistalab.workspace import anthropic_problems

    ws = _ws()
    ws.register_assistant("  \n ")
    ws.register_user("\t")
    ws.register_user("real question")
    openai = ws.render().messages
    assert any(m.get("content") == "  \n " for m in openai)
    req = ws.render(format="anthropic").as_request()
    texts = [b.get("text") for m in req["messages"] for b in m["content"]]
    assert all(t is None or t.strip() for t in texts), texts
    assert anthropic_problems(req) == []


# ----------------------------------------------------------------- ids, bounded ints


@pytest.mark.parametrize("cls_name", ["Block", "Group"])
def test_a_10001_character_unit_id_in_a_record_is_refused_by_length(cls_name):
    import vistalab.workspace as W

    ws = _ws()
    ws.register_tool_call([{"id": "c1", "type": "function",
                            "function": {"name": "f", "arguments": "{}"}}])
    ws.register_tool_result("c1", "r " * 60)
    ws.register_user("next")
    ws.archive("B3-B4")
    plain = (ws.block("B1") if cls_name == "Block" else ws.groups["G1"]).to_plain()
    cls = getattr(W, cls_name)
    assert cls.from_plain(plain).to_plain() == plain
    with pytest.raises(W.WorkspaceArgumentError, match="at most 13 characters"):
        cls.from_plain({**plain, "id": "B" + "1" * 10_000})
    for bad in (5, {}, {**plain, "level": "x"}):
        with pytest.raises(W.WorkspaceArgumentError):
            cls.from_plain(bad)


def test_event_from_plain_refuses_what_is_not_an_event():
    from vistalab.workspace import Event, WorkspaceArgumentError

    ws = _ws()
    assert Event.from_plain(ws.events[0].to_plain()) == ws.events[0]
    for bad in (None, [], {"op": "init"}, {"seq": "x", "op": "a", "ok": True}):
        with pytest.raises(WorkspaceArgumentError):
            Event.from_plain(bad)


def test_check_tokenizer_refuses_an_unbounded_example_count():
    from vistalab.workspace import ApproxTokenizer

    from vistalab.testing import check_tokenizer
    from vistalab.testing._workspace import MAX_STATEFUL_EXAMPLES

    for bad in (10**400, -1, True, 1.5, MAX_STATEFUL_EXAMPLES + 1):
        with pytest.raises(VistaLabError, match="stateful_examples"):
            check_tokenizer(ApproxTokenizer(), stateful_examples=bad)
    with pytest.raises(VistaLabError, match="samples"):
        check_tokenizer(ApproxTokenizer(), samples="abc", stateful_examples=0)
    assert check_tokenizer(ApproxTokenizer(), stateful_examples=0) == []


# ----------------------------------------------------------------- folders and stores


def test_a_folder_named_like_the_snapshots_temp_file_is_left_alone(tmp_path):
    """It made load raise IsADirectoryError (the clean-up of an interrupted save
    unlinked everything with the temp file's name)."""
    ws = _ws()
    ws.save(tmp_path / "ws.json")
    stray = tmp_path / (".ws.json." + "a" * 32 + ".tmp")
    stray.mkdir()
    (stray / "keep").write_text("mine")
    leftover = tmp_path / (".ws.json." + "b" * 32 + ".tmp")
    leftover.write_text("torn")  # a real leftover of a killed save is still removed
    again = type(ws).load(tmp_path / "ws.json")
    assert again.state_hash() == ws.state_hash()
    assert (stray / "keep").read_text() == "mine" and not leftover.exists()


def _loaded_log(tmp_path):
    from vistalab.workspace import DiskStore, Workspace

    ws = Workspace(4000, tokenizer="approx", store=DiskStore(tmp_path / "arch"))
    ws.register_system("s")
    ws.register_user("q")
    ws.save(tmp_path / "ws.json")
    again = Workspace.load(tmp_path / "ws.json")
    again.register_user("more")
    log = tmp_path / "log.jsonl"  # its whole log, the init event holding the snapshot
    log.write_text("".join(e.to_json() + "\n" for e in again.events))
    return again, log


def test_replay_of_an_untrusted_log_does_not_open_a_foreign_store(tmp_path):
    """The init event of a loaded workspace's log names its store folder; replay opened
    it wherever it was. Now the snapshot rule of load applies: under the log file's
    own folder by default, or under ``allow_store_under``."""
    from vistalab.workspace import SnapshotError, Workspace

    again, log = _loaded_log(tmp_path)
    assert Workspace.replay(log).state_hash() == again.state_hash()  # its own folder
    victim = tmp_path / "victim"
    victim.mkdir()
    temp = victim / (".B1.txt." + "c" * 32 + ".tmp")
    temp.write_text("not the engine's")
    lines = log.read_text().splitlines()
    first = json.loads(lines[0])
    first["args"]["config"]["store_root"] = str(victim)
    first["args"]["snapshot"]["config"]["store_root"] = str(victim)
    elsewhere = tmp_path / "logs" / "evil.jsonl"
    elsewhere.parent.mkdir()
    elsewhere.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    with pytest.raises(SnapshotError, match="outside"):
        Workspace.replay(elsewhere, verify=False)
    assert temp.read_text() == "not the engine's"  # nothing touched
    with pytest.raises(SnapshotError, match="outside"):
        Workspace.replay([json.loads(x) for x in elsewhere.read_text().splitlines()],
                         verify=False, allow_store_under=tmp_path / "logs")
    ok = Workspace.replay(elsewhere, verify=False, allow_store_under=tmp_path)
    assert ok.store.root == str(victim)
