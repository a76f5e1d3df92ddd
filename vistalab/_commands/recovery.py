"""``vista-lab recovery``: Monte Carlo of the recovery task T_{N,k} with one
strategy, next to Proposition 1's bound and the strategy's exact success."""

from __future__ import annotations

import argparse
from typing import Any

from vistalab._core import DomainError

from ._args import add_engine_group, api_names, refuse_engine_only
from ._args import given as _given
from ._args import parse_int as _int
from ._args import parse_real as _real
from ._args import store_dir as _store_dir

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    from vistalab.sims import STRATEGIES

    parser = subparsers.add_parser(
        "recovery",
        help="simulate the recovery task T_{N,k} (Proposition 1)",
        description=(
            "Draw N uniform k-bit blocks per trial, let a strategy build its in-prompt state "
            "within B bits (or archive everything, for 'recover'), reveal a uniform index and "
            "compare the strategy's block with the original bit for bit. Reports the success "
            "rate with an exact binomial interval, Proposition 1's bound B/(Nk)+1/k and the "
            "strategy's closed-form success probability. Exit status 1 if a non-recovering "
            "strategy beats the bound."
        ),
    )
    parser.add_argument("--N", required=True, metavar="INT", help="evidence blocks per trial")
    parser.add_argument("--k", required=True, metavar="INT", help="bits per block")
    parser.add_argument("--budget", required=True, metavar="B",
                        help="prompt budget B in bits (in tokens with --engine)")
    parser.add_argument("--strategy", required=True, metavar="NAME",
                        help=f"one of: {', '.join(STRATEGIES)}")
    parser.add_argument("--handle-cost", dest="handle_cost", default=None, metavar="C",
                        help="bits per handle per log2 N for 'recover' (default 1)")
    parser.add_argument("--trials", default=None, metavar="INT",
                        help="number of trials (default 10000; 200 with --engine)")
    parser.add_argument("--seed", default=None, metavar="INT",
                        help="seed (default: fresh entropy, printed in the output)")
    parser.add_argument("--workers", default="1", metavar="INT", help="threads (default 1)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    add_engine_group(
        parser, "run every trial through the reference workspace engine (workspace/): N "
        "blocks of k random bits as tool results, the budget B in tokens, strategies acting "
        "through the agent's context tools (recover, delete, keep-bits, keep-blocks), the "
        "answer checked byte for byte")
    parser.set_defaults(func=run, _parser=parser)


_ENGINE_ONLY = ("store", "store_dir", "tokenizer")


def run(args: argparse.Namespace) -> int:
    from vistalab.sims import simulate_recovery

    from .._output import emit_json, emit_table

    if args.engine:
        return _run_engine(args)
    refuse_engine_only(args, _ENGINE_ONLY)
    with api_names(handle_cost="handle-cost", store_dir="store-dir", rng="seed"):
        result = simulate_recovery(
            _int("N", args.N), _int("k", args.k), _real("budget", args.budget), args.strategy,
            trials=_int("trials", _given(args.trials, "10000")),
            rng=None if args.seed is None else _int("seed", args.seed),
            handle_cost=(None if args.handle_cost is None
                         else _real("handle-cost", args.handle_cost)),
            workers=_int("workers", args.workers),
        )
    doc = result.to_dict()
    if args.json:
        emit_json(doc)
    else:
        rows = [(key, doc[key]) for key in (
            "strategy", "N", "k", "budget", "success", "success_ci", "bound", "exact_success",
            "consistent_with_bound", "entropy_bits", "feasible", "trials", "seed",
            "trials_per_second")]
        emit_table(("quantity", "value", "unit"), _with_units(rows, "bits"),
                   title="Recovery task T_{N,k} (Proposition 1)")
    return 1 if result.consistent_with_bound is False else 0


def _run_engine(args: argparse.Namespace) -> int:
    from vistalab.sims import simulate_recovery_engine

    from .._output import emit_json, emit_table

    if args.handle_cost is not None:
        raise DomainError("handle-cost", args.handle_cost, "is not used with --engine",
                          "the engine measures its handle cost (handle_tokens)")
    if _int("workers", args.workers) != 1:
        raise DomainError("workers", args.workers, "must be 1 with --engine",
                          "engine trials run in one thread")
    # the engine's budget floor names the option (`--budget` must be at least ...)
    with api_names(handle_cost="handle-cost", store_dir="store-dir", rng="seed",
                   budget="--budget"):
        result = simulate_recovery_engine(
            _int("N", args.N), _int("k", args.k), _int("budget", args.budget), args.strategy,
            trials=_int("trials", _given(args.trials, "200")),
            rng=None if args.seed is None else _int("seed", args.seed),
            store=_given(args.store, "memory"), store_dir=_store_dir(args.store_dir),
            tokenizer=_given(args.tokenizer, "cl100k_base"),
        )
    doc = result.to_dict()
    if args.json:
        emit_json(doc)
    else:
        rows = [(key, doc[key]) for key in (
            "strategy", "N", "k", "budget", "success", "success_ci", "bound", "exact_success",
            "consistent_with_bound", "entropy_bits", "feasible", "engine_feasible",
            "handle_tokens", "instruction_tokens", "read_tokens", "raw_history_tokens", "kept",
            "archive_events", "delete_events", "read_events", "byte_exact_recoveries",
            "tokenizer", "store", "trials", "seed", "trials_per_second")]
        emit_table(("quantity", "value", "unit"), _with_units(rows, "tokens"),
                   title="Recovery task T_{N,k} through the workspace engine (budget in tokens)")
    failed = result.consistent_with_bound is False or (
        result.recovering and result.read_events != result.byte_exact_recoveries)
    return 1 if failed else 0


#: Unit of each printed quantity that has one (the budget's unit depends on the mode).
UNITS: dict[str, str] = {
    "N": "blocks", "k": "bits", "success": "probability", "success_ci": "probability",
    "bound": "probability", "exact_success": "probability", "entropy_bits": "bits",
    "engine_feasible": "fraction of trials", "handle_tokens": "tokens",
    "instruction_tokens": "tokens", "read_tokens": "tokens", "raw_history_tokens": "tokens",
    "archive_events": "calls", "delete_events": "calls", "read_events": "calls",
    "byte_exact_recoveries": "reads", "trials": "trials", "trials_per_second": "trials/s",
}


def _with_units(rows: list[tuple[str, Any]], budget_unit: str) -> list[tuple[str, Any, str]]:
    out = []
    for k, v in rows:
        shown = f"[{v[0]:.6g}, {v[1]:.6g}]" if isinstance(v, list) else v
        unit = budget_unit if k == "budget" else UNITS.get(k, "")
        if k == "kept":
            unit = "bits (keep-bits) or blocks (keep-blocks)"
        out.append((k, shown, unit))
    return out
