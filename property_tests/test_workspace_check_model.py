"""``Workspace(..., check_model=True)``: translation validation at run time, every
operation of a session replayed into the extracted Coq model of the engine
(paper, Methodology: "Workspace invariants"; the model's I/O contract is
``theory/coq/engine/FORMAT.md``).

A real session passes; each injected engine bug raises at the operation where
its effect first shows; the option is off by default and then leaves the class
untouched; the model process never outlives its workspace.
"""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import pytest
from vistalab.examples import traces
from vistalab.workspace import (
    ModelCheckUnavailableError,
    ModelCoverageError,
    ModelDisagreementError,
    Workspace,
    WorkspaceError,
)
from vistalab.workspace._diff_drive import run_sequence
from vistalab.workspace._diff_model import compare_observations, run_model
from vistalab.workspace._model import build_engine_model
from vistalab.workspace._tools import drive_trace
from vistalab.workspace._trace import load_trace

from ._engine_bugs import BUGS, OffByOneGuard

TRACES = Path(str(traces.__path__[0]))


@pytest.fixture(scope="module")
def model() -> str:
    """The model's executable, built from the Coq sources (cached)."""
    return str(build_engine_model())


def _call(cid: str, name: str = "search", args: str = '{"q": "refunds"}') -> dict:
    return {"role": "assistant", "content": None,
            "tool_calls": [{"id": cid, "type": "function",
                            "function": {"name": name, "arguments": args}}]}


# ---------------------------------------------------------------- real sessions


@pytest.mark.parametrize("keep_pending", [False, True])
@pytest.mark.parametrize("name", ["ops_agent.json", "anthropic_ops_agent.json",
                                  "parallel_weather.jsonl", "long_session.json"])
def test_a_shipped_session_runs_under_the_model(name, keep_pending, model):
    """A recorded agent session (its messages, context tool calls run by the
    engine, harness actions), then both renderings and every block recovered:
    the engine agrees with the model at every operation."""
    items = load_trace(str(TRACES / name))
    with Workspace(6000, cache_prefix=False, keep_pending=keep_pending, check_model=model) as ws:
        drive_trace(ws, items, lambda i, a: None, lambda i, e: e)
        ws.render()
        ws.render(format="anthropic")
        for b in ws.blocks:
            try:
                ws.recover(b.id)
            except WorkspaceError:
                assert b.status.value == "deleted"
        chk = ws.model_check
        assert chk is not None and chk.active and chk.failure is None
        assert chk.operations > len(items) // 2


def test_an_agent_session_through_every_door(model, tmp_path):
    """SDK-shaped messages, content parts, a reused call id, spec ranges, the
    agent tools (archive, delete, read) and direct API calls, on a disk store."""
    from vistalab.workspace import DiskStore

    store = DiskStore(str(tmp_path / "archive"))
    with Workspace(3000, cache_prefix=False, keep_pending=False, store=store,
                   check_model=model) as ws:
        ws.register_messages([
            {"role": "system", "content": "You are careful."},
            {"role": "user", "content": [{"type": "text", "text": "Find the refunds."},
                                         {"type": "text", "text": "Order 42."}]},
        ])
        ws.register_message(_call("c1"))
        ws.register_message({"role": "tool", "tool_call_id": "c1", "content": "row " * 300})
        ws.register_message(_call("c1", args='{"q": "again"}'))  # reused once answered
        ws.register_tool_result("c1", "12 rows")
        ws.register_assistant("Two results.")
        path = ws.call_tool("context_workspace_archive", {"block_id": "B3-B6",
                                                           "replacement": "search"}).text
        assert path.endswith("G1.txt")
        assert ws.read_path(path)
        assert ws.read_path(path, "member=B4") == ("row " * 300).encode()
        assert ws.read_path(path, "bytes=0:5")
        assert ws.recover("B4") == ("row " * 300).encode()
        assert ws.call_tool("context_workspace_delete",
                            {"block_id": "B7", "reason": "stale"}).ok
        ws.restore("G1")
        ws.archive("B4")
        ws.render(format="anthropic")
        with pytest.raises(WorkspaceError):
            ws.recover("B7")  # deleted: the model refuses it too
        with pytest.raises(WorkspaceError):
            ws.archive("B99")
        assert ws.model_check.failure is None


def test_a_fork_is_checked_with_its_own_model_process(model):
    with Workspace(3000, cache_prefix=False, keep_pending=False, check_model=model) as ws:
        ws.register_system("You are careful.")
        ws.register_user("Find the refunds.")
        fork = ws.fork()
        assert fork.model_check is not ws.model_check
        assert fork.model_check.model.proc is not ws.model_check.model.proc
        fork.register_assistant("Looking.")
        ws.register_assistant("Elsewhere.")
        assert fork.model_check.failure is None and ws.model_check.failure is None
        fork.close()
        assert fork.model_check.model.proc is None
        ws.register_assistant("Still checked.")


# ---------------------------------------------------------------- injected bugs


def _first_divergence(seq, bug, model) -> int:
    """The operation at which the differential test sees ``bug`` first."""
    run = run_sequence(seq, bug)
    got = run_model(model, run.model_lines)
    for e, m, step in zip(run.engine_lines, got, run.line_step, strict=True):
        if compare_observations(e, m):
            return step
    raise AssertionError("the witness does not show the bug")


@pytest.mark.parametrize("name", sorted(BUGS))
def test_an_injected_bug_raises_at_its_operation(name, model):
    """Each bug (a subclass of the engine changing one transition) raises
    ModelDisagreementError at the first operation where the differential test
    sees it; the real engine runs the same operations under the check."""
    from .test_workspace_differential import WITNESSES

    bug, _ = BUGS[name]
    seq = WITNESSES[name]
    want = _first_divergence(seq, bug, model)

    def checked(cls):
        return lambda budget, **cfg: cls(budget, check_model=model, **cfg)

    with pytest.raises(ModelDisagreementError) as info:
        run_sequence(seq, checked(bug))
    err = info.value
    assert getattr(err, "_diff_step", None) == want, (err._diff_step, want, str(err))
    assert err.field and err.engine_value != err.model_value
    assert err.operation in str(err) and "report it" in str(err)
    assert err.model_input.count("\n") >= 1
    run_sequence(seq, checked(Workspace))  # the real engine: no disagreement


def test_the_error_names_operation_field_and_both_values(model):
    """A guard one token off (admitting at hard_limit + 1): the result's
    registration is the operation named, with the two decisions."""
    ws = OffByOneGuard(2500, hard_limit=2500, cache_prefix=False, keep_pending=False,
                       check_model=model)
    ws.register_system("You are careful.")
    ws.register_user("Find the refunds.")
    ws.register_message(_call("c1"))
    probe = ws.fork()
    probe.model_check.stop()
    # the longest result the broken guard admits: one token past the real limit
    lo, hi = 0, 40_000
    while lo < hi:
        mid = (lo + hi + 1) // 2
        p = probe.fork()
        p.register_tool_result("c1", "a" * mid)
        if p.events[-1].effects.get("admitted") and not p.events[-1].effects.get("offloaded"):
            lo = mid
        else:
            hi = mid - 1
    with pytest.raises(ModelDisagreementError) as info:
        ws.register_tool_result("c1", "a" * lo)
    msg = str(info.value)
    assert "register_tool_result('c1'" in msg
    assert info.value.field in msg and info.value.engine_value[:20] in msg
    assert info.value.result == "B4"  # the operation took effect, its value kept
    # Sticky: a caller that swallowed it meets it again; stop() lets it go on.
    with pytest.raises(ModelDisagreementError) as again:
        ws.render()
    assert again.value is info.value
    ws.model_check.stop()
    assert ws.recover("B4") == b"a" * lo
    ws.close()


def test_a_disagreement_in_an_agent_tool_reaches_the_caller(model):
    """The agent tools turn engine errors into texts for the agent; a
    disagreement with the model is raised to the caller instead."""
    bug, _ = BUGS["result_orphaned_by_group_archive"]
    ws = bug(3000, cache_prefix=False, keep_pending=False, protocol=False, check_model=model)
    ws.register_system("You are careful.")
    ws.register_user("Find the refunds.")
    ws.register_assistant("Looking.")
    ws.register_message(_call("c1"))
    ws.register_tool_result("c1", "12 rows")
    with pytest.raises(ModelDisagreementError) as info:
        ws.call_tool("context_workspace_archive", {"block_id": "B3-B4"})
    assert info.value.operation.startswith("archive('B3-B4'")
    ws.model_check.stop()


# ---------------------------------------------------------------- off by default


def test_off_by_default_leaves_the_class_untouched(monkeypatch):
    """No option: the plain class, its own methods, no model process started."""
    import vistalab.workspace._check_model as check

    def no_process(*a, **k):
        raise AssertionError("a model process was started")

    monkeypatch.setattr(check, "_ModelProcess", no_process)
    for ws in (Workspace(3000), Workspace(3000, check_model=False)):
        assert type(ws) is Workspace
        assert not hasattr(ws, "model_check")
        ws.register_user("Find the refunds.")
        ws.render()
    for name in ("register_user", "register_tool_result", "archive", "render", "recover"):
        assert name not in Workspace.__dict__  # the engine's own method, no wrapper


def test_a_subclass_is_checked_as_itself(model):
    ws = OffByOneGuard(3000, cache_prefix=False, keep_pending=False, check_model=model)
    assert isinstance(ws, OffByOneGuard) and isinstance(ws, Workspace)
    assert type(ws).__name__ == "ModelChecked[OffByOneGuard]"
    again = OffByOneGuard(3000, cache_prefix=False, keep_pending=False, check_model=model)
    assert type(again) is type(ws)
    ws.close()


# ---------------------------------------------------------------- what is not covered


def test_cache_prefix_true_is_refused_or_checked(model):
    """The engine's default configuration: refused with a clear error while the
    model fixes cache_prefix=False; checked once the model covers it."""
    from vistalab.workspace._diff_model import ModelTranslator

    probe = Workspace(3000)
    tr = ModelTranslator(probe.tokenizer, 3000, probe.hard_limit, probe.store.root)
    covered = "cache_prefix=1" in tr.init_line(probe, 0)
    if covered:
        with Workspace(3000, keep_pending=False, check_model=model) as ws:
            ws.register_user("Find the refunds.")
            assert ws.model_check.failure is None
    else:
        with pytest.raises(ModelCoverageError, match="cache_prefix=True") as info:
            Workspace(3000, keep_pending=False, check_model=model)
        assert "cache_prefix=False" in info.value.fix


@pytest.mark.parametrize("cache_prefix", [False, True])
def test_keep_pending_is_checked(model, cache_prefix):
    """The engine's default keep_pending=True is modelled: a session that overflows
    while a batch of calls waits for results (the management rendering keeps the
    calling message, the result so far and a placeholder, after the prefix with
    cache_prefix) runs under check_model with no disagreement."""
    with Workspace(3000, cache_prefix=cache_prefix, check_model=model) as ws:
        assert ws.keep_pending
        ws.register_user("Find the refunds.")
        for i in range(6):
            ws.register_message({"role": "user", "content": f"note {i} " + "ledger " * 400})
        ws.register_message({"role": "assistant", "content": None, "tool_calls": [
            {"id": f"c{k}", "type": "function", "function": {"name": "search", "arguments": "{}"}}
            for k in (1, 2)]})
        ws.register_tool_result("c1", "refund " * 100)
        r = ws.render()
        assert r.mode == "overflow"
        roles = [m.get("role") for m in r.messages]
        assert roles[-4:] == ["assistant", "tool", "tool", "user"]  # the batch, kept whole
        assert (roles.count("user") > 2) == cache_prefix  # the prefix only with cache_prefix
        chk = ws.model_check
        assert chk is not None and chk.active and chk.failure is None


def test_opaque_content_parts_are_refused_before_anything_changes(model):
    with Workspace(3000, cache_prefix=False, keep_pending=False, check_model=model) as ws:
        ws.register_user("Find the refunds.")
        before = (ws.state_hash(), len(ws.blocks))
        image = {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}}
        with pytest.raises(ModelCoverageError, match="opaque content parts"):
            ws.register_message({"role": "user", "content": [
                {"type": "text", "text": "Here is a chart."}, image]})
        assert (ws.state_hash(), len(ws.blocks)) == before
        ws.register_assistant("Go on.")  # still checked, still in step
        assert ws.model_check.failure is None


def test_a_loaded_snapshot_is_refused(model, tmp_path):
    ws = Workspace(3000, cache_prefix=False)
    ws.register_user("Find the refunds.")
    ws.save(tmp_path / "ws.json")
    checked = type(Workspace(3000, cache_prefix=False, keep_pending=False, check_model=model))
    with pytest.raises(ModelCoverageError, match="snapshot"):
        checked.load(tmp_path / "ws.json")


def test_check_model_argument_is_checked():
    with pytest.raises(WorkspaceError, match="check_model"):
        Workspace(3000, cache_prefix=False, keep_pending=False, check_model="/no/such/model")


def test_missing_coq_names_the_fix(monkeypatch, tmp_path):
    monkeypatch.setenv("COQC", str(tmp_path / "no-coqc"))
    monkeypatch.setenv("VISTA_LAB_CACHE", str(tmp_path / "cache"))
    with pytest.raises(ModelCheckUnavailableError) as info:
        Workspace(3000, cache_prefix=False, keep_pending=False, check_model=True)
    msg = str(info.value)
    assert "no-coqc" in msg and "apt-get install" in msg and "check_model" in msg


# ---------------------------------------------------------------- the process


def test_close_ends_and_reaps_the_model_process(model):
    ws = Workspace(3000, cache_prefix=False, keep_pending=False, check_model=model)
    proc = ws.model_check.model.proc
    assert proc.poll() is None
    ws.close()
    assert proc.returncode is not None  # waited for: no zombie
    assert ws.model_check.stopped and not ws.model_check.active
    ws.register_user("after close: unchecked, still working")


def test_a_dropped_workspace_ends_its_model_process(model):
    ws = Workspace(3000, cache_prefix=False, keep_pending=False, check_model=model)
    proc = ws.model_check.model.proc
    del ws
    gc.collect()
    assert proc.returncode is not None


def test_a_model_that_dies_is_reported(model, tmp_path):
    exe = tmp_path / "dying-model"
    exe.write_text(f"#!{sys.executable}\nimport sys\nsys.exit(3)\n")
    exe.chmod(0o755)
    with pytest.raises(WorkspaceError, match=r"stopped \(exit status 3\)"):
        Workspace(3000, cache_prefix=False, keep_pending=False, check_model=str(exe))


def test_the_check_changes_nothing_in_the_session(model):
    """The same session with and without the check: the same return values, the
    same state hash, the same event log (the check reads the store directly,
    never through read_path, so it logs nothing)."""

    def session(ws):
        out = [ws.register_system("You are careful."), ws.register_user("Find the refunds.")]
        out.append(ws.register_message(_call("c1")))
        out.append(ws.register_tool_result("c1", "row " * 400))
        out.append(ws.archive("B4", "rows").path)
        out.append(ws.read_path(out[-1], "bytes=0:8"))
        out.append(ws.render().tokens)
        out.append(ws.recover("B4"))
        return out, ws.state_hash(), [(e.op, e.ok, e.result, e.state_hash) for e in ws.events]

    plain = session(Workspace(3000, cache_prefix=False, keep_pending=False))
    with Workspace(3000, cache_prefix=False, keep_pending=False, check_model=model) as ws:
        checked = session(ws)
    assert checked == plain


class _ReadsOtherBytes(Workspace):
    """read_path hands back the payload with its first byte changed."""

    def read_path(self, path, selector=None):
        data = super().read_path(path, selector)
        return bytes([data[0] ^ 1]) + data[1:] if data else data


class _RenderDropsAMessage(Workspace):
    """render() leaves out the newest message before the dashboard."""

    def render(self, format="openai"):
        r = super().render(format)
        if format == "openai" and len(r.messages) > 3:
            import dataclasses

            msgs = tuple(r.messages)
            return dataclasses.replace(r, messages=msgs[:-2] + msgs[-1:])
        return r


def test_a_read_of_other_bytes_raises_at_the_read(model):
    ws = _ReadsOtherBytes(3000, cache_prefix=False, keep_pending=False, check_model=model)
    ws.register_user("Find the refunds.")
    ws.register_assistant("Looking at the order log now.")
    path = ws.archive("B2").path
    with pytest.raises(ModelDisagreementError) as info:
        ws.read_path(path)
    assert info.value.operation.startswith("read_path(") and info.value.field == "store"
    ws.model_check.stop()
    real = Workspace(3000, cache_prefix=False, keep_pending=False, check_model=model)
    real.register_user("Find the refunds.")
    real.register_assistant("Looking at the order log now.")
    real.read_path(real.archive("B2").path)
    real.close()


def test_a_rendering_that_drops_a_message_raises(model):
    ws = _RenderDropsAMessage(3000, cache_prefix=False, keep_pending=False, check_model=model)
    ws.register_system("You are careful.")
    with pytest.raises(ModelDisagreementError) as info:
        ws.register_user("Find the refunds.")  # the check's own rendering shows it first
    assert any(d.startswith("render:") for d in info.value.differences)
    assert "register_user('Find the refunds.')" in str(info.value)
    ws.model_check.stop()
