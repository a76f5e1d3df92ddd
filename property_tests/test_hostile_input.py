"""Hostile input at every door keeps the error contract (DESIGN rule 6): the Python
API, the file readers, the Anthropic request builder, the payload store and the CLI.
Each case below is one a hostile user found; each failed (a foreign exception, a hang,
an invalid request called valid, an unhelpful line) before the doors were mended.

The MCP transports are covered in ``test_workspace_mcp_limits.py``; the fuzzer over
every public name in ``test_api_fuzz.py``.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal

import numpy as np
import pytest

from vistalab import theory as T
from vistalab._core import VistaLabError
from vistalab.cli import main


@contextlib.contextmanager
def no_hang(seconds: float = 30.0):
    """A hang detector, not a speed check: fail (instead of blocking the suite) if
    the body does not return within a generous ``seconds``."""

    def fire(signum, frame):
        raise AssertionError(f"no answer within {seconds} s (a hang)")

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def deep_list(depth: int):
    value: object = "x"
    for _ in range(depth):
        value = [value]
    return value


def deep_dict(depth: int):
    value: dict = {}
    for _ in range(depth):
        value = {"a": value}
    return value


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


def _raises(call, parameter: str | None = None) -> VistaLabError:
    with no_hang(), pytest.raises(VistaLabError) as info:
        call()
    text = str(info.value)
    assert "\n" not in text and len(text) < 1000, text
    if parameter is not None:
        assert getattr(info.value, "parameter", None) == parameter or f"`{parameter}`" in text, \
            text
    return info.value


# ----------------------------------------------------------------- the bounded repr


def test_short_repr_is_bounded_and_never_fails():
    """DESIGN 'Mend these': every repr of user input is bounded (depth and length) and
    never recursive, whatever the value."""

    from vistalab._core import short_repr

    class Loud:
        def __repr__(self):
            raise RuntimeError("no")

    cyclic: list = []
    cyclic.append(cyclic)
    for value in (deep_list(100_000), deep_dict(100_000), "x" * 10**6, 10**5000, Loud(),
                  cyclic, np.zeros((1000, 1000))):
        text = short_repr(value)
        assert isinstance(text, str) and len(text) <= 160
    assert short_repr([1, 2]) == "[1, 2]"


def test_error_message_of_a_deeply_nested_argument_is_bounded():
    """169 foreign RecursionErrors came from the message's own repr() of the argument."""
    err = _raises(lambda: T.content_rate_bound(deep_list(10_000), 1.0), "kappa")
    assert len(str(err)) < 500


# ----------------------------------------------------------------- Python API doors


def test_parse_ledger_rows_none():
    from vistalab.workspace import parse_ledger_rows

    _raises(lambda: parse_ledger_rows(None), "dashboard")


def test_load_config_none():
    from vistalab.sweep import load_config

    _raises(lambda: load_config(None), "config")


def test_binomial_interval_level_out_of_range():
    from vistalab.testing import binomial_interval

    _raises(lambda: binomial_interval(3, 10, level=1.5), "level")
    lo, hi = binomial_interval(3, 10, level=0.05)
    assert 0 <= lo < 0.3 < hi <= 1


def test_render_format_array():
    from vistalab.workspace import Workspace

    ws = Workspace(4000, tokenizer="approx")
    ws.register_user("hi")
    _raises(lambda: ws.render(format=np.array([])))


def test_replay_of_messages_instead_of_events_names_the_missing_key():
    from vistalab.workspace import Workspace

    err = _raises(lambda: Workspace.replay([{"role": "user", "content": "x"}]))
    assert "'seq'" in str(err)


@pytest.mark.parametrize("sigma", [1e300, 1e-300, 10**400])
def test_content_rate_limit_extremes_are_refused_naming_the_range(sigma):
    """Overflow/underflow: refused with the representable range (not OverflowError or
    ZeroDivisionError)."""
    err = _raises(lambda: T.content_rate_limit(4, sigma), "sigma")
    assert "1.8e308" in str(err)


def _float_parameters():
    """(function, parameter) for every float-annotated parameter of a theory or sims
    function that has a valid call in the error-contract table."""
    import inspect
    import typing

    import vistalab.sims as S

    from .test_error_contract_api import GOOD

    out = []
    for mod in (T, S):
        for name in mod.__all__:
            fn = getattr(mod, name)
            if not inspect.isfunction(fn) or name not in GOOD:
                continue
            params = inspect.signature(fn).parameters
            for p, ann in typing.get_type_hints(inspect.unwrap(fn)).items():
                if ann is float and p in params:
                    out.append((fn, name, p))
    return out


def test_any_float_parameter_given_10_to_the_400_is_refused():
    """'any float parameter given 10**400 -> OverflowError': every float parameter
    of theory and sims (from a valid call, one at a time) is refused by the contract."""
    cases = _float_parameters()
    assert len(cases) >= 20
    from .test_error_contract_api import GOOD

    for fn, name, p in cases:
        with no_hang(), pytest.raises(VistaLabError):
            fn(**{**GOOD[name], p: 10**400})


def test_to_openai_messages_refuses_text_and_nan():
    from vistalab.workspace import to_openai_messages

    _raises(lambda: to_openai_messages("abc"), "items")
    bad = [{"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "f", "input": {"x": math.nan}}]}]
    _raises(lambda: to_openai_messages(bad))


def test_check_store_with_absurd_stateful_examples_is_refused():
    from vistalab.workspace import DiskStore

    from vistalab.testing import check_store

    _raises(lambda: check_store(DiskStore, stateful_examples=2**63), "stateful_examples")


@pytest.mark.parametrize("value", [deep_list(10_000), np.array([]), np.array([math.nan]),
                                   None, 3, "bogus", "x" * 5_000_000])
def test_enum_lookups_refuse_any_non_member(value):
    """Python's enum compares the value with each member (an empty array cannot be
    compared) and takes repr(value) for its own message before _missing_ is heard (a
    RecursionError at 10,000 levels)."""
    from vistalab.workspace import BlockType, Status, ToolFailure

    for enum_type in (BlockType, Status, ToolFailure):
        _raises(lambda e=enum_type: e(value), "value")
    assert BlockType("system") is BlockType.SYSTEM and Status(Status.PINNED) is Status.PINNED


def test_certify_all_names_a_progress_callback_that_cannot_take_a_certificate():
    _raises(lambda: T.certify_all("binary_entropy_at_most_one", progress=int), "progress")
    seen = []
    T.certify_all("binary_entropy_at_most_one", progress=seen.append)
    assert seen


def test_content_rate_bounds_document_their_inf():
    """content_rate_bound_tight(sigma=1e-300) returned an undocumented inf: the
    bound is beyond the double range there (vacuous), and the Returns section says so."""
    for fn, args in ((T.content_rate_bound_tight, (64, 4, 1e-300)),
                     (T.content_rate_bound, (4, 1e-300))):
        assert fn(*args) == math.inf
        returns = fn.__doc__.split("Returns", 1)[1]
        assert "``inf``" in returns


def test_engine_model_doors_refuse_before_any_build(monkeypatch):
    """build_engine_model / run_engine_model: hostile arguments are refused at the
    door (no compiler is started: COQC points nowhere here)."""
    from vistalab.workspace import build_engine_model, run_engine_model

    monkeypatch.setenv("COQC", "/nonexistent/coqc")
    monkeypatch.setenv("OCAMLOPT", "/nonexistent/ocamlopt")
    _raises(lambda: run_engine_model("x" * 5_000_000), "lines")
    _raises(lambda: run_engine_model(deep_list(10_000)), "lines")
    _raises(lambda: run_engine_model(["a\nb"]), "lines")
    _raises(lambda: run_engine_model(["a"], executable="/nonexistent/model"), "executable")
    _raises(lambda: run_engine_model(["a"], timeout=math.nan), "timeout")
    for bad in (math.nan, math.inf, -1.0, 0, "10", 10**400):
        _raises(lambda b=bad: build_engine_model(timeout=b), "timeout")
    for bad in (3, deep_list(10_000), "", "x\0y", "x" * 5_000_000):
        _raises(lambda b=bad: build_engine_model(cache_dir=b), "cache_dir")
        _raises(lambda b=bad: build_engine_model(source_dir=b), "source_dir")
    assert run_engine_model([]) == []  # nothing to run: no build


def test_differential_test_checks_every_argument_before_running():
    """Hostile values in traces, model, shrink_seconds, progress, or an absurd number
    of sequences or operations, ran the default 200 sequences (or for ever) first."""
    from vistalab.workspace import differential_test

    for kw, name in (({"traces": True}, "traces"), ({"traces": "t.json"}, "traces"),
                     ({"model": "/nonexistent/model"}, "model"), ({"model": 3}, "model"),
                     ({"shrink_seconds": math.nan}, "shrink_seconds"),
                     ({"shrink_seconds": True}, "shrink_seconds"),
                     ({"progress": "x"}, "progress"), ({"sequences": 2**63}, "sequences"),
                     ({"max_ops": 2**63}, "max_ops"), ({"request_check": int}, "request_check"),
                     ({"request_check": lambda request, protocol: None}, "request_check"),
                     ({"request_check": lambda request, protocol: [3]}, "request_check")):
        _raises(lambda kw=kw: differential_test(**kw), name)


def test_conformance_doors():
    """The conformance suite's public helpers keep the contract: a 5 MB string or a
    wrong protocol is refused at once, a counter that cannot count is named, and
    run_study checks everything before it runs a peer."""
    pytest.importorskip("hypothesis")
    from vistalab.conformance import check, fidelity_problems, run_study, tail_trimmer, units

    huge = "x" * 5_000_000
    _raises(lambda: units(huge), "request")
    _raises(lambda: units([{"role": "user", "content": "q"}], protocol=[math.nan]), "protocol")
    _raises(lambda: fidelity_problems(huge, []), "conversation")
    _raises(lambda: fidelity_problems([], [], placeholder="x"), "placeholder")
    assert units([{"role": "user", "content": "q"}]) == [{"role": "user", "content": "q"}]
    for counter in (int, lambda request: None, lambda request: 2.5):
        _raises(lambda c=counter: check(tail_trimmer, counter=c, examples=2), "counter")
    _raises(lambda: check(tail_trimmer, examples=2**63), "examples")
    for kw, name in (({"out": ""}, "out"), ({"out": "x\0y"}, "out"),
                     ({"out": "o", "figure": "f"}, "figure"),
                     ({"out": "o", "examples": 0}, "examples"),
                     ({"out": "o", "timeout": math.inf}, "timeout")):
        _raises(lambda kw=kw: run_study(**kw), name)


# ----------------------------------------------------------------- depth at registration


def test_tool_arguments_nested_deeper_than_the_limit_are_refused_and_rendering_survives():
    """A tool call whose arguments are valid JSON nested 10,000 deep made every
    render(format='anthropic') raise RecursionError; it is refused at registration,
    naming `arguments`, and the limit itself still registers and renders."""
    from vistalab.workspace import Workspace, anthropic_problems

    ws = Workspace(8000, tokenizer="approx")
    ws.register_user("hi")
    deep = "[" * 10_000 + "]" * 10_000

    def call(args: str) -> list:
        return [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": args}}]

    _raises(lambda: ws.register_tool_call(call(deep)), "arguments")
    from vistalab._core import MAX_JSON_DEPTH

    at_limit = "[" * (MAX_JSON_DEPTH - 1) + "{}" + "]" * (MAX_JSON_DEPTH - 1)
    ws.register_tool_call(call(at_limit))
    ws.register_tool_result("c1", "ok")
    req = ws.render(format="anthropic").as_request()
    assert anthropic_problems(req) == []


def test_anthropic_tool_use_input_nested_500_deep_is_refused_at_registration():
    from vistalab.workspace import Workspace

    ws = Workspace(8000, tokenizer="approx")
    ws.register_user("hi")
    msg = [{"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "f", "input": deep_dict(500)}]}]
    _raises(lambda: ws.register_messages(msg), "messages")


# ----------------------------------------------------------------- special files


def test_fifo_is_refused_by_every_reader(fifo):
    """A FIFO blocked load_config, run_sweep, read_event_log, load_probe_answers and
    score_probe_answers forever."""
    from vistalab.workspace import load_probe_answers, read_event_log, score_probe_answers

    from vistalab.sweep import load_config, run_sweep

    for call in (lambda: load_config(fifo), lambda: run_sweep(fifo),
                 lambda: list(read_event_log(fifo)), lambda: load_probe_answers(fifo),
                 lambda: score_probe_answers([], answers=str(fifo))):
        err = _raises(call)
        assert "FIFO" in str(err) or "pipe" in str(err) or "kit" in str(err), str(err)


def test_dev_zero_is_refused_not_read_to_exhaustion():
    from vistalab.workspace import HFTokenizer, Workspace, load_probe_answers, read_event_log

    from vistalab.sweep import load_config

    for call in (lambda: Workspace.replay("/dev/zero"),
                 lambda: HFTokenizer("/dev/zero", name="x"),
                 lambda: list(read_event_log("/dev/zero")),
                 lambda: load_probe_answers("/dev/zero"), lambda: load_config("/dev/zero")):
        assert "/dev" in str(_raises(call))


@pytest.mark.parametrize("argv", [["sweep", "/proc/kmsg"],
                                  ["check-paper", "--paper", "/proc/kmsg"],
                                  ["reproduce", "--paper", "/proc/kmsg", "--out", "OUT"]])
def test_cli_refuses_proc_files(argv, capsys, tmp_path):
    argv = [str(tmp_path / "o") if a == "OUT" else a for a in argv]
    with no_hang():
        status = main(argv)
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "/proc" in err, err


# ----------------------------------------------------------------- Anthropic validity


@pytest.mark.parametrize("cid", ["a b", "call:1/2", "x" * 3 + "é"])
def test_anthropic_request_ids_are_valid_by_construction(cid):
    """A call id outside the API's pattern was rendered as-is and called valid."""
    from vistalab.workspace import Workspace, anthropic_problems

    ws = Workspace(8000, tokenizer="approx")
    ws.register_user("hi")
    ws.register_tool_call([{"id": cid, "type": "function",
                            "function": {"name": "f", "arguments": "{}"}}])
    ws.register_tool_result(cid, "ok")
    first = ws.render(format="anthropic").as_request()
    assert anthropic_problems(first) == []
    uses = [b for m in first["messages"] for b in m["content"] if b["type"] == "tool_use"]
    results = [b for m in first["messages"] for b in m["content"] if b["type"] == "tool_result"]
    assert len(uses) == 1 and uses[0]["id"] != cid
    assert results[0]["tool_use_id"] == uses[0]["id"]
    ws.register_user("more")
    second = ws.render(format="anthropic").as_request()
    # deterministic: the renamed id a request carried never changes (the cache prefix)
    again = [b["id"] for m in second["messages"] for b in m["content"] if b["type"] == "tool_use"]
    assert again == [uses[0]["id"]]


def test_anthropic_problems_checks_the_apis_rules():
    from vistalab.workspace import anthropic_problems

    def req(block):
        return {"messages": [{"role": "user", "content": [{"type": "text", "text": "q"}]},
                             {"role": "assistant", "content": [block]},
                             {"role": "user", "content": [
                                 {"type": "tool_result", "tool_use_id": block["id"],
                                  "content": "r"}]}]}

    good = {"type": "tool_use", "id": "t_1", "name": "f", "input": {}}
    assert anthropic_problems(req(good)) == []
    assert any("does not match" in p for p in anthropic_problems(req({**good, "id": "a b"})))
    assert any("input must be an object" in p
               for p in anthropic_problems(req({**good, "input": "abc"})))
    assert anthropic_problems({"messages": [3]}) != []
    _raises(lambda: anthropic_problems(None), "request")


def test_non_object_tool_use_input_is_refused_at_registration():
    from vistalab.workspace import Workspace

    ws = Workspace(8000, tokenizer="approx")
    ws.register_user("hi")
    msg = [{"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "f", "input": "abc"}]}]
    assert "must be an object" in str(_raises(lambda: ws.register_messages(msg)))


def test_replay_renders_valid_requests_for_odd_ids():
    """replay's protocol check (render_format='anthropic') called a request carrying
    the id 'call:1/2' valid; the request now carries a valid id, and the check holds."""
    import re

    from vistalab.workspace import replay_trace

    trace = [{"role": "user", "content": "q"},
             {"role": "assistant", "content": None, "tool_calls": [
                 {"id": "call:1/2", "type": "function",
                  "function": {"name": "f", "arguments": "{}"}}]},
             {"role": "tool", "tool_call_id": "call:1/2", "content": "r"}]
    rep = replay_trace(trace, budget=8000, tokenizer="approx", render_format="anthropic")
    last = rep.turns[-1]
    ids = [b["id"] for m in last.request["messages"] for b in m["content"]
           if b["type"] == "tool_use"]
    assert ids and all(re.fullmatch(r"[A-Za-z0-9_-]+", i) for i in ids), ids
    assert all(not t.protocol_problems for t in rep.turns)


# ----------------------------------------------------------------- the store


def test_store_survives_a_temp_named_folder(tmp_path):
    from vistalab.workspace import DiskStore

    stray = tmp_path / (".B1.txt." + "a" * 32 + ".tmp")
    stray.mkdir()
    store = DiskStore(tmp_path)
    assert store.skipped_entries == (stray.name,)
    assert stray.is_dir() and store.keys() == []


def test_workspace_load_and_cli_replay_survive_a_temp_named_folder(tmp_path, capsys):
    """The stray folder made Workspace.load and `replay --archive-dir` fail (and the
    CLI's line named only the file)."""
    from vistalab.workspace import DiskStore, Workspace

    arch = tmp_path / "arch"
    ws = Workspace(4000, tokenizer="approx", store=DiskStore(arch))
    ws.register_system("s")
    ws.register_user("q")
    ws.register_tool_call([{"id": "c1", "type": "function",
                            "function": {"name": "f", "arguments": "{}"}}])
    ws.register_tool_result("c1", "r " * 50)
    ws.register_user("next")
    ws.archive("B4")
    ws.save(tmp_path / "ws.json")
    (arch / (".B9.txt." + "b" * 32 + ".tmp")).mkdir()
    again = Workspace.load(tmp_path / "ws.json", tokenizer=ws.tokenizer)
    assert again.state_hash() == ws.state_hash()
    with no_hang():
        status = main(["workspace", "replay", _ops(), "--budget", "3000", "--archive-dir",
                       str(arch)])
    assert status == 0, capsys.readouterr().err


def test_store_says_plainly_when_its_folder_was_swapped(tmp_path):
    from vistalab.workspace import DiskStore

    root = tmp_path / "archive"
    store = DiskStore(root)
    store.put("B5.txt", b"x")
    root.rename(tmp_path / "elsewhere")
    root.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(VistaLabError, match="replaced by a symlink"):
        store.key_of(str(root / "B5.txt"))


# ----------------------------------------------------------------- CLI gaps


def _one_line_exit_2(argv, capsys) -> str:
    with no_hang():
        status = main(argv)
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1, err
    return err


def test_version_with_extra_arguments(capsys):
    assert "--version" in _one_line_exit_2(["--version", "extra"], capsys)


def test_serve_port_under_stdio_is_refused(capsys):
    pytest.importorskip("mcp")
    err = _one_line_exit_2(["workspace", "serve", "--budget", "3000", "--port", "80"], capsys)
    assert "--port" in err and "http" in err


def _ops() -> str:
    from ._data import TRACES

    return str(TRACES / "ops_agent.json")


#: Every command-line door that reads a JSON or TOML file, given one nested 5,000
#: deep: (argv with DEEP for the file, what the line must name). Ten of these
#: refused without naming the argument (or quoted the file's text as its value).
DEEP_DOORS = [
    (["workspace", "replay", "DEEP", "--budget", "3000"], "trace"),
    (["workspace", "replay", "DEEP_DICT", "--budget", "3000"], "trace"),
    (["workspace", "dashboard", "DEEP", "--budget", "4000"], "trace"),
    (["workspace", "reward", "DEEP", "--budget", "4000"], "trace"),
    (["workspace", "probe", "DEEP", "--budget", "4000"], "trace"),
    (["workspace", "probe", "OPS", "--budget", "4000", "--answers", "DEEP"], "--answers"),
    (["sweep", "DEEP_TOML", "--out", "OUT"], "CONFIG"),
    (["workspace", "serve", "--budget", "3000", "--task-tools", "DEEP"], "--task-tools"),
    (["conformance", "--replay", "DEEP"], "--replay"),
]


@pytest.mark.parametrize("argv,names", DEEP_DOORS, ids=lambda v: "-".join(v)
                         if isinstance(v, list) else v)
def test_deeply_nested_inputs_are_refused_naming_the_argument(argv, names, tmp_path, capsys):
    """One line, exit 2, naming the argument and the file's path (never its text)."""
    if "serve" in argv:
        pytest.importorskip("mcp")
    files = {"DEEP": tmp_path / "deep.json", "DEEP_DICT": tmp_path / "deep_dict.json",
             "DEEP_TOML": tmp_path / "deep.toml"}
    files["DEEP"].write_text("[" * 5000 + "]" * 5000)
    files["DEEP_DICT"].write_text('{"a":' * 5000 + "1" + "}" * 5000)
    files["DEEP_TOML"].write_text("x = " + "[" * 5000 + "]" * 5000 + "\n")
    subst = {**{k: str(v) for k, v in files.items()}, "OPS": _ops(), "OUT": str(tmp_path / "o")}
    argv = [subst.get(a, a) for a in argv]
    err = _one_line_exit_2(argv, capsys)
    path = next(a for a in argv if a in {str(v) for v in files.values()})
    assert names in err and path in err, err
    assert "nested" in err or "deep" in err, err
    assert "[[[" not in err and '{"a"' not in err, err


def test_budget_below_a_pinned_message_is_the_budgets_problem(tmp_path, capsys):
    trace = tmp_path / "t.json"
    trace.write_text(json.dumps([{"role": "system", "content": "word " * 2000},
                                 {"role": "user", "content": "q"}]))
    err = _one_line_exit_2(["workspace", "replay", str(trace), "--budget", "2000"], capsys)
    assert "malformed" not in err and "budget" in err and "message 0" in err


@pytest.mark.parametrize("budget", ["1", "10", "1000"])
def test_budget_below_the_engines_floor_is_reported_as_such(budget, capsys):
    """A budget below the engine's floor names the budget and the floor, on a trace
    that is fine (never 'malformed trace')."""
    err = _one_line_exit_2(["workspace", "replay", _ops(), "--budget", budget], capsys)
    assert "malformed" not in err and "`budget` must be at least" in err, err
