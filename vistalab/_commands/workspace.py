"""``vista-lab workspace``: replay a conversation trace through the reference
context workspace (``replay``) or print its final dashboard (``dashboard``).

The analysis sub-commands (``reward``, ``probe``) live in
``_workspace_analysis`` and are attached here when present.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .._output import emit_json
from .._paths import input_file, output_dir, output_file
from ._workspace_analysis import register_analysis
from ._workspace_serve import register_serve

__all__ = ["register", "run_replay", "run_dashboard"]

#: The TRACE argument's help, shared by every workspace subcommand.
TRACE_HELP = (
    "JSON list of OpenAI chat messages or of Anthropic Messages messages (the format is "
    "detected: a top-level 'system' beside 'messages', or tool_use / tool_result / thinking "
    "content blocks, mean Anthropic), or {'messages': [...]}, or JSONL; items with an "
    "'action' key (archive, delete, restore, read) are context actions"
)

# Every registered token counter (a new tokenizer is one registry entry).
_TOKENIZERS = ("cl100k_base", "o200k_base", "qwen3", "llama3", "deepseek_v4", "approx")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "workspace",
        help="replay a chat trace through the context workspace; print its dashboard",
        description=(
            "The reference VISTA context workspace (paper, Methodology and Implementation "
            "Details). 'replay' registers a trace (OpenAI chat or Anthropic Messages format, "
            "detected) turn by turn, applies its "
            "context actions and reports per turn the mode, tokens and dashboard; 'dashboard' "
            "prints the final dashboard."
        ),
    )
    sub = parser.add_subparsers(
        dest="workspace_command", metavar="SUBCOMMAND", parser_class=type(parser)
    )
    sub.required = True
    _add_replay(sub)
    _add_dashboard(sub)
    register_analysis(sub)
    register_serve(sub)
    parser.set_defaults(_parser=parser)


def _add_common(parser: argparse.ArgumentParser, *, budget_required: bool) -> None:
    parser.add_argument(
        "trace",
        metavar="TRACE",
        help=TRACE_HELP,
    )
    parser.add_argument(
        "--budget",
        metavar="TOKENS",
        required=budget_required,
        default=None if budget_required else "128000",
        help="context budget B in tokens" + ("" if budget_required else " (default 128000)"),
    )
    parser.add_argument(
        "--tokenizer",
        default="cl100k_base",
        choices=_TOKENIZERS,
        help="token counter: cl100k_base (the paper's), o200k_base (current OpenAI models), "
        "qwen3, llama3 or deepseek_v4 (open models), all offline, or approx "
        "(ceil(utf8 bytes / 4)); "
        "default cl100k_base",
    )
    parser.add_argument(
        "--hard-limit",
        dest="hard_limit",
        metavar="TOKENS",
        default=None,
        help="budget guard ceiling on the candidate rendering (default 2 x budget)",
    )
    parser.add_argument(
        "--archive-dir",
        dest="archive_dir",
        metavar="DIR",
        default=None,
        help="store payloads as files in DIR (default: in memory, paths shown as mem://archive)",
    )
    parser.add_argument(
        "--compact",
        action="store_true",
        help="print the paper's compact ledger columns (no Level / Parent)",
    )


def _add_replay(sub: Any) -> None:
    parser = sub.add_parser(
        "replay",
        help="replay a trace turn by turn: mode, tokens, dashboard and events per turn",
        description=(
            "Register the trace's messages turn by turn (a turn is rendered before every "
            "assistant message and once at the end), execute context actions (trace 'action' "
            "items and assistant calls to context_workspace_archive / _delete) and report per "
            "turn the mode (normal or overflow), the rendering's tokens, the dashboard and the "
            "events. Exit status 1 if a self-check fails (a rendering over budget or not "
            "protocol-valid, or the event log not replaying to the same state hash)."
        ),
    )
    _add_common(parser, budget_required=False)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--render",
        default=None,
        choices=("openai", "anthropic"),
        help="also build each turn's request in this wire format, check that format's "
        "protocol rules and (with --json) include it per turn; the trace's own format "
        "(OpenAI chat or Anthropic Messages) is detected",
    )
    parser.add_argument(
        "--log",
        metavar="FILE",
        default=None,
        help="also write the workspace's JSONL event log to FILE",
    )
    parser.set_defaults(func=run_replay, _parser=parser)


def _add_dashboard(sub: Any) -> None:
    parser = sub.add_parser(
        "dashboard",
        help="print the dashboard after replaying a trace",
        description="Replay TRACE and print the final <context_workspace_status> dashboard.",
    )
    _add_common(parser, budget_required=True)
    parser.set_defaults(func=run_dashboard, _parser=parser)


def _int_arg(name: str, value: Any, *, lo: int) -> int | None:
    from vistalab.workspace import WorkspaceArgumentError

    if value is None:
        return None
    text = str(value).replace("_", "").replace(",", "")
    if not text.lstrip("-").isdigit():
        raise WorkspaceArgumentError(name, value, "must be a whole number of tokens", "e.g. 128000")
    n = int(text)
    if n < lo:
        raise WorkspaceArgumentError(name, value, f"must be >= {lo}",
                                     f"pass a whole number of tokens >= {lo}, e.g. {name} 128000")
    return n


def _replay(args: argparse.Namespace, *, log_path: str | None = None) -> Any:
    from vistalab.workspace import DashboardConfig, DiskStore, replay_trace

    trace = input_file("TRACE", args.trace)
    budget = _int_arg("--budget", args.budget, lo=1)
    assert budget is not None
    hard = _int_arg("--hard-limit", args.hard_limit, lo=1)
    if log_path is not None:
        log_path = str(output_file("--log", log_path))
    archive = None if args.archive_dir is None else output_dir("--archive-dir", args.archive_dir)
    store = DiskStore(str(archive)) if archive is not None else None
    return replay_trace(
        str(trace),
        budget=budget,
        tokenizer=args.tokenizer,
        store=store,
        hard_limit=hard,
        dashboard=DashboardConfig(compact=bool(args.compact)),
        log_path=log_path,
        render_format=getattr(args, "render", None),
    )


def _self_checks(result: Any) -> dict[str, Any]:
    from vistalab.workspace import MemoryStore, ReplayMismatchError, Workspace

    over = [t.turn for t in result.turns if t.tokens > t.budget]
    invalid = [t.turn for t in result.turns if t.protocol_problems]
    ws = result.workspace
    try:  # every event must reproduce its recorded hash and outcome
        again = Workspace.replay(ws.events, store=MemoryStore(ws.store.root))
        replays = again.state_hash() == result.state_hash
    except ReplayMismatchError:
        replays = False
    return {
        "within_budget": not over,
        "turns_over_budget": over,
        "protocol_valid": not invalid,
        "turns_protocol_invalid": invalid,
        "log_replays_to_same_hash": replays,
        "incremental_hash_matches_recomputed": ws.recompute_state_hash() == result.state_hash,
    }


def run_replay(args: argparse.Namespace) -> int:
    result = _replay(args, log_path=args.log)
    try:
        checks = _self_checks(result)
    finally:
        result.workspace.close()
    ok = all(v for k, v in checks.items() if isinstance(v, bool))
    if args.json:
        doc = result.to_plain()
        doc["checks"] = checks
        emit_json(doc)
        return 0 if ok else 1
    out = sys.stdout
    for t in result.turns:
        where = f"before message {t.message_index}" if t.message_index is not None else "end"
        out.write(
            f"=== turn {t.turn} ({where}): mode={t.mode} tokens={t.tokens:,} / {t.budget:,} "
            f"(candidate {t.candidate_tokens:,}) cached-prefix {t.cacheable_share:.2f} "
            f"hash={t.state_hash[:12]}\n"
        )
        for ev in t.events:
            out.write(f"  event {ev['seq']}: {_event_line(ev)}\n")
        out.write(t.dashboard + "\n")
    out.write(
        f"final state_hash {result.state_hash}  ({result.messages} messages, {result.actions} "
        f"context actions, {len(result.turns)} turns, {result.format} format, cached-prefix "
        f"share {result.cacheable_share:.3f})\n"
    )
    for k, v in checks.items():
        if isinstance(v, bool):
            out.write(f"check {k}: {'ok' if v else 'FAILED'}\n")
            if k == "protocol_valid" and not v:
                for line in _problem_lines(result.turns):
                    out.write(f"  {line}\n")
    return 0 if ok else 1


# How many protocol problems the text report lists under a failed check; the
# rest are counted and left to --json, whose "protocol_problems" holds them all.
_SHOWN_PROBLEMS = 5


def _problem_lines(turns: Any, shown: int = _SHOWN_PROBLEMS) -> list[str]:
    """The first ``shown`` protocol problems, each with its turn and the
    message it was rendered before, then a count of the rest."""
    found = []
    for t in turns:
        where = (f"before message {t.message_index}" if t.message_index is not None
                 else "end")
        found += [f"turn {t.turn} ({where}): {p}" for p in t.protocol_problems]
    lines = found[:shown]
    if len(found) > shown:
        lines.append(f"... {len(found) - shown} more; see --json (protocol_problems per turn)")
    return lines


def _event_line(ev: dict[str, Any]) -> str:
    args = ev["args"]
    if ev["op"] == "register":
        msg = args.get("message", {})
        what = msg.get("role", "?")
        if msg.get("tool_calls"):
            what += f" calls {','.join(msg['tool_calls'])}"
        text = f"register {what} -> {ev['result']}"
    else:
        shown = ", ".join(f"{k}={v!r}" for k, v in args.items())
        text = f"{ev['op']}({shown}) -> {'ok' if ev['ok'] else 'refused'}: {ev['result']}"
    eff = ev.get("effects") or {}
    extras = []
    if eff.get("offloaded"):
        extras.append(f"guard offloaded {','.join(eff['offloaded'])}")
    if eff.get("rejected"):
        extras.append(_rejection_reason(eff))
    if "freed_tokens" in eff:
        extras.append(f"freed ~{eff['freed_tokens']:,} tokens")
    return text + (f" [{'; '.join(extras)}]" if extras else "")


def _rejection_reason(eff: dict[str, Any]) -> str:
    """Why the guard refused a result, naming the rule that decided it: the
    per-result cap (the result alone exceeds what a normal rendering could
    hold) or the hard limit (offloading older results could not make room)."""
    attempted = eff["attempted_tokens"]
    if eff.get("decided_by") == "cap" and "cap" in eff:
        return (f"guard rejected the result (+{attempted:,} tokens, over the per-result cap "
                f"{max(eff['cap'], 0):,})")
    if eff.get("decided_by") == "hard_limit":
        return (f"guard rejected the result (context would be {eff['current_tokens'] + attempted:,}"
                f" tokens, over the hard limit {eff['limit']:,} even after offloading)")
    if eff.get("decided_by") == "pending":
        return (f"guard rejected the result (+{attempted:,} tokens: the management rendering, "
                f"which keeps the pending calls' batch, would pass the budget {eff['limit']:,})")
    # a log written before effects named the deciding rule
    return f"guard rejected the result (+{attempted:,} tokens; hard limit {eff['limit']:,})"


def run_dashboard(args: argparse.Namespace) -> int:
    result = _replay(args)
    result.workspace.close()
    sys.stdout.write(result.turns[-1].dashboard + "\n")
    return 0
