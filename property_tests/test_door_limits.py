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
