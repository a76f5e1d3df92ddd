"""``vista-lab workspace reward`` and ``vista-lab workspace probe``: the paper's
analysis tools on replayed traces (process reward and group advantage; the
proprioceptive-blindness probe kit and its scorer).

``register_analysis(subparsers)`` adds both to the ``workspace`` command's
sub-subparsers.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from .._paths import input_file, output_dir

__all__ = ["register_analysis", "run_reward", "run_probe"]

# Every registered token counter (a new tokenizer is one registry entry).
_TOKENIZERS = ("cl100k_base", "o200k_base", "qwen3", "llama3", "deepseek_v4", "approx")


def register_analysis(subparsers: Any) -> None:
    """Add ``reward`` and ``probe`` to the ``workspace`` command."""
    _add_reward(subparsers)
    _add_probe(subparsers)


# ----------------------------------------------------------------- parsers


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--budget", required=True, metavar="TOKENS", help="workspace budget B in tokens"
    )
    parser.add_argument(
        "--tokenizer",
        default="cl100k_base",
        choices=_TOKENIZERS,
        help="token counter (default cl100k_base, offline)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")


def _add_reward(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "reward",
        help="process reward Q and group advantage of traces (eq. process-reward)",
        description=(
            "Replay each trace through a workspace, cutting it into LLM turns (before every "
            "assistant message and every 'action' item), and compute per turn the paper's "
            "process signal Q = Q_pressure + Q_invalid + Q_undo (eq. process-reward). With "
            "--outcome R per trace, the traces form one group and the clipped, "
            "outcome-normalised advantage (eq. context-grpo-advantage) is printed too."
        ),
    )
    parser.add_argument(
        "traces",
        nargs="+",
        metavar="TRACE",
        help="trace files, OpenAI chat or Anthropic Messages format (detected): a JSON list "
        "of messages/actions, or JSONL",
    )
    _add_common(parser)
    parser.add_argument(
        "--outcome",
        nargs="+",
        default=None,
        metavar="R",
        help="task reward R_i in [0, 1] of each trace, in order",
    )
    parser.add_argument(
        "--rho", default="0.8", metavar="X", help="soft pressure threshold (default 0.8)"
    )
    parser.add_argument(
        "--lambda-p", dest="lambda_p", default="1", metavar="X", help="pressure weight (default 1)"
    )
    parser.add_argument(
        "--lambda-i",
        dest="lambda_i",
        default="1",
        metavar="X",
        help="invalid-action weight (default 1)",
    )
    parser.add_argument(
        "--lambda-u", dest="lambda_u", default="0.2", metavar="X", help="undo weight (default 0.2)"
    )
    parser.add_argument(
        "--eps",
        default="1e-6",
        metavar="X",
        help="epsilon added to the outcome spread (default 1e-6)",
    )
    parser.set_defaults(func=run_reward, _parser=parser)


def _add_probe(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "probe",
        help="proprioception probe kit: snapshot, prompts, ground truth, scoring",
        description=(
            "Build the proprioceptive-blindness diagnostic (paper appendix) from each trace: "
            "the cleaned transcript just before the first archive call (protocol header, "
            "guard rejection notices and archive placeholders stripped), the factual ledger "
            "for the +dash condition, and the ground truth (total tokens, sampled block "
            "sizes, block pairs within 2x). With --answers, score model answers as median "
            "relative error and pairwise accuracy. Exit status 1 if a cleaned snapshot "
            "still leaks token or budget strings."
        ),
    )
    parser.add_argument("traces", nargs="+", metavar="TRACE",
                        help="trace files, OpenAI chat or Anthropic Messages format (detected)")
    _add_common(parser)
    parser.add_argument(
        "--anchor",
        default="first-archive",
        metavar="WHERE",
        help="first-archive (default), end, or a trace item index",
    )
    parser.add_argument(
        "--blocks",
        default="4",
        metavar="INT",
        help="blocks sampled for the block-size question (default 4)",
    )
    parser.add_argument(
        "--pairs",
        default="8",
        metavar="INT",
        help="pairs sampled for the pairwise question (default 8)",
    )
    parser.add_argument(
        "--max-ratio",
        dest="max_ratio",
        default="2",
        metavar="X",
        help="hard pairs: larger/smaller at most X (default 2)",
    )
    parser.add_argument(
        "--max-tokens",
        dest="max_tokens",
        default="100000",
        metavar="INT",
        help="snapshot cap, trailing blocks dropped (default 100000)",
    )
    parser.add_argument(
        "--seed",
        default=None,
        metavar="INT",
        help="seed for the sampled blocks and pairs (default: fresh, printed)",
    )
    parser.add_argument(
        "--answers", default=None, metavar="FILE", help="JSON file of model answers to score"
    )
    parser.add_argument(
        "--prompts",
        default=None,
        metavar="DIR",
        help="write every prompt and the ground truth under DIR/<snapshot>/: "
        "<condition>_<question>.txt with condition without-dash (the paper's -dash) or "
        "with-dash (+dash), and truth.json",
    )
    parser.set_defaults(func=run_probe, _parser=parser)


# ----------------------------------------------------------------- parsing helpers


def _arg_error(name: str, text: Any, rule: str, fix: str) -> Exception:
    from vistalab.workspace import WorkspaceArgumentError

    return WorkspaceArgumentError(f"--{name}", text, rule, fix)


def _int(name: str, text: str, lo: int) -> int:
    try:
        value = int(str(text).strip())
    except ValueError:
        raise _arg_error(name, text, "must be an integer", f"e.g. --{name} {max(lo, 4)}") from None
    if value < lo:
        raise _arg_error(name, text, f"must be >= {lo}", f"e.g. --{name} {max(lo, 4)}")
    return value


def _real(name: str, text: str) -> float:
    try:
        value = float(str(text).strip())
    except ValueError:
        raise _arg_error(name, text, "must be a number", f"e.g. --{name} 0.5") from None
    if not math.isfinite(value):
        raise _arg_error(name, text, "must be a finite number", f"e.g. --{name} 0.5")
    return value


def _fmt(x: float) -> str:
    return "-" if not math.isfinite(x) else f"{x:.3g}"


# ----------------------------------------------------------------- reward


def run_reward(args: argparse.Namespace) -> int:
    from vistalab.workspace import context_grpo_advantage, process_reward, trajectory_from_trace

    from .._output import emit_json, emit_table

    for path in args.traces:
        input_file("TRACE", path)
    budget = _int("budget", args.budget, 1)
    weights = {
        "rho": _real("rho", args.rho),
        "lambda_p": _real("lambda-p", args.lambda_p),
        "lambda_i": _real("lambda-i", args.lambda_i),
        "lambda_u": _real("lambda-u", args.lambda_u),
    }
    eps = _real("eps", args.eps)
    outcomes = None
    if args.outcome is not None:
        outcomes = [_real("outcome", r) for r in args.outcome]
        if len(outcomes) != len(args.traces):
            raise _arg_error(
                "outcome",
                " ".join(args.outcome),
                f"must give one R per trace ({len(args.traces)} traces, {len(outcomes)} values)",
                "list the task rewards in trace order",
            )
    trajs = [
        trajectory_from_trace(path, budget=budget, tokenizer=args.tokenizer) for path in args.traces
    ]
    rewards = [process_reward(t, **weights) for t in trajs]
    adv = context_grpo_advantage(outcomes, rewards, eps=eps) if outcomes is not None else None

    if args.json:
        doc: dict[str, Any] = {
            "config": {**weights, "eps": eps, "budget": budget, "tokenizer": args.tokenizer},
            "trajectories": [
                {
                    "trace": path,
                    "turns": [
                        {
                            "turn": turn.index,
                            "message_index": turn.message_index,
                            "mode": turn.mode,
                            "tokens": turn.tokens,
                            "actions": [a.to_plain() for a in turn.actions],
                            "tool_errors": list(turn.tool_errors),
                        }
                        for turn in t.turns
                    ],
                    "reward": q.to_plain(),
                    **({"outcome": outcomes[i]} if outcomes is not None else {}),
                    **({"advantage": adv.advantages[i].tolist()} if adv is not None else {}),
                }
                for i, (path, t, q) in enumerate(zip(args.traces, trajs, rewards, strict=True))
            ],
        }
        if adv is not None:
            doc["group"] = {k: v for k, v in adv.to_plain().items() if k != "advantages"}
        emit_json(doc)
        return 0

    for i, (path, t, q) in enumerate(zip(args.traces, trajs, rewards, strict=True)):
        cols = ["turn", "item", "mode", "tokens", "p", "Q_pressure", "Q_invalid", "Q_undo", "Q"]
        if adv is not None:
            cols.append("A")
        rows = []
        for k, turn in enumerate(t.turns):
            row: list[Any] = [
                k,
                "-" if turn.message_index is None else turn.message_index,
                turn.mode,
                turn.tokens,
                f"{q.occupancy[k]:.3f}",
                f"{q.pressure[k]:.3f}",
                f"{q.invalid[k]:.3f}",
                f"{q.undo[k]:.3f}",
                f"{q.total[k]:.3f}",
            ]
            if adv is not None:
                row.append(f"{adv.advantages[i][k]:.3f}")
            rows.append(row)
        title = f"Process reward (eq. process-reward): {path}"
        if outcomes is not None:
            title += f", R = {outcomes[i]:g}"
        emit_table(cols, rows, title=title)
        notes = [(k, "; ".join(r)) for k, r in enumerate(q.invalid_reasons) if r] + [
            (f"{a}+{r}", "undo pair (archive, recovery)") for a, r in q.undo_pairs
        ]
        if notes:
            emit_table(("turn", "why penalised"), notes)
    if adv is not None:
        emit_table(
            ("quantity", "value"),
            [
                ("mu_R", f"{adv.mu:.6g}"),
                ("sigma_R", f"{adv.sigma:.6g}"),
                ("eps", f"{adv.eps:g}"),
                ("advantage range", f"[{adv.lower:.6g}, {adv.upper:.6g}]"),
                ("degenerate (all R equal)", adv.degenerate),
            ],
            title="Group advantage (eq. context-grpo-advantage)",
        )
    return 0


# ----------------------------------------------------------------- probe


def run_probe(args: argparse.Namespace) -> int:
    import numpy as np

    from vistalab.workspace import build_probe_kit, score_probe_answers

    from .._output import emit_json, emit_table
    from ._args import cli_wording

    for path in args.traces:
        input_file("TRACE", path)
    if args.answers is not None:
        input_file("--answers", args.answers)
    prompts = None if args.prompts is None else output_dir("--prompts", args.prompts)
    budget = _int("budget", args.budget, 1)
    anchor: str | int = args.anchor
    if anchor not in ("first-archive", "end"):
        try:
            anchor = int(str(args.anchor).strip())
        except ValueError:
            raise _arg_error(
                "anchor",
                args.anchor,
                "must be first-archive, end or a trace item index",
                "e.g. --anchor end",
            ) from None
    seed = (
        _int("seed", args.seed, 0)
        if args.seed is not None
        else int(np.random.SeedSequence().entropy)  # type: ignore[arg-type]
    )
    root = np.random.SeedSequence(seed)
    kits = [
        build_probe_kit(
            path,
            budget=budget,
            tokenizer=args.tokenizer,
            anchor=anchor,
            n_blocks=_int("blocks", args.blocks, 1),
            n_pairs=_int("pairs", args.pairs, 0),
            max_ratio=_real("max-ratio", args.max_ratio),
            max_tokens=_int("max-tokens", args.max_tokens, 1),
            rng=child,
            snapshot_id=_unique_id(path, i, args.traces),
        )
        for i, (path, child) in enumerate(
            zip(args.traces, root.spawn(len(args.traces)), strict=True)
        )
    ]
    report = None
    if args.answers is not None:
        with cli_wording({"answers": "--answers"}):
            report = score_probe_answers(kits, args.answers)
    if prompts is not None:
        _write_prompts(prompts, kits)
    leaky = [k.snapshot_id for k in kits if k.leaks]

    if args.json:
        doc: dict[str, Any] = {
            "seed": seed,
            "kits": [k.to_plain() for k in kits],
        }
        if report is not None:
            doc["scores"] = report.to_plain()
        emit_json(doc)
        return 1 if leaky else 0

    emit_table(
        (
            "snapshot",
            "anchor",
            "blocks",
            "total tok",
            "sampled",
            "pairs (eligible)",
            "removed",
            "leaks",
        ),
        [
            (
                k.snapshot_id,
                f"{k.anchor} (item {k.anchor_index})",
                len(k.blocks),
                k.total_tokens,
                ", ".join(f"{b}={k.block_tokens()[b]}" for b in k.sampled_blocks),
                f"{len(k.pairs)} ({k.eligible_pairs})",
                ", ".join(f"{n}={c}" for n, c in k.removed.items() if c) or "-",
                ", ".join(k.leaks) or "none",
            )
            for k in kits
        ],
        title=f"Proprioception probe kits (seed {seed})",
    )
    if report is not None:
        models: list[str] = []
        for s in report.scores:
            if s.model not in models:
                models.append(s.model)
        rows = []
        for m in models:
            cells: list[Any] = [m]
            for attr in ("total_error", "block_error", "pairwise_accuracy"):
                for cond in ("-dash", "+dash"):
                    hit = [s for s in report.scores if s.model == m and s.condition == cond]
                    cells.append(_fmt(getattr(hit[0], attr)) if hit else "-")
            bad = [s for s in report.scores if s.model == m]
            cells.append(sum(s.invalid for s in bad))
            cells.append(sum(s.missing for s in bad))
            rows.append(cells)
        emit_table(
            (
                "model",
                "total -dash",
                "total +dash",
                "block -dash",
                "block +dash",
                "pairwise -dash",
                "pairwise +dash",
                "invalid",
                "missing",
            ),
            rows,
            title="Probe scores (size: median relative error; pairwise: accuracy)",
        )
        if report.problems:
            emit_table(("problem",), [(p,) for p in report.problems])
    return 1 if leaky else 0


def _unique_id(path: str, i: int, paths: list[str]) -> str:
    stem = Path(path).stem
    same = [p for p in paths if Path(p).stem == stem]
    return stem if len(same) == 1 else f"{stem}-{i}"


#: File-name form of each probe condition: the paper's names start with '-' or
#: '+', and a file named '-dash_total.txt' reads as an option to shell tools.
PROMPT_FILE_CONDITION = {"-dash": "without-dash", "+dash": "with-dash"}


def prompt_file_name(condition: str, question: str) -> str:
    """``<condition>_<question>.txt`` with the condition in its file-name form
    (``-dash`` -> ``without-dash``); an unlisted condition loses any leading
    '-'/'+' so no name starts with one."""
    cond = PROMPT_FILE_CONDITION.get(condition, condition.lstrip("-+") or "condition")
    return f"{cond}_{question}.txt"


def _write_prompts(root: Path, kits: list[Any]) -> None:
    from vistalab._core import atomic_write

    for k in kits:
        folder = root / k.snapshot_id
        folder.mkdir(parents=True, exist_ok=True)
        for cond, questions in k.prompts().items():
            for q, text in questions.items():
                atomic_write(folder / prompt_file_name(cond, q), text.encode("utf-8"))
        atomic_write(folder / "truth.json",
                     json.dumps(k.to_plain(), indent=2, ensure_ascii=False).encode("utf-8"))
