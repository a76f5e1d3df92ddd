"""``vista-lab recovery``: Monte Carlo of the recovery task T_{N,k} with one
strategy, next to Proposition 1's bound and the strategy's exact success."""

from __future__ import annotations

import argparse
import math
from typing import Any

from theory import DomainError

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    from sims import STRATEGIES

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
    parser.add_argument("--budget", required=True, metavar="BITS", help="prompt budget B in bits")
    parser.add_argument("--strategy", required=True, metavar="NAME",
                        help=f"one of: {', '.join(STRATEGIES)}")
    parser.add_argument("--handle-cost", dest="handle_cost", default=None, metavar="C",
                        help="bits per handle per log2 N for 'recover' (default 1)")
    parser.add_argument("--trials", default="10000", metavar="INT",
                        help="number of trials (default 10000)")
    parser.add_argument("--seed", default=None, metavar="INT",
                        help="seed (default: fresh entropy, printed in the output)")
    parser.add_argument("--workers", default="1", metavar="INT", help="threads (default 1)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(func=run, _parser=parser)


def _int(name: str, text: str) -> int:
    try:
        return int(str(text).strip())
    except ValueError:
        raise DomainError(name, text, "must be an integer",
                          f"pass a whole number, e.g. --{name} 4") from None


def _real(name: str, text: str) -> float:
    try:
        value = float(str(text).strip())
    except ValueError:
        raise DomainError(name, text, "must be a number", f"pass e.g. --{name} 1.5") from None
    if not math.isfinite(value):
        raise DomainError(name, text, "must be a finite number", f"pass e.g. --{name} 1.5")
    return value


def run(args: argparse.Namespace) -> int:
    from sims import simulate_recovery

    from .._output import emit_json, emit_table

    result = simulate_recovery(
        _int("N", args.N), _int("k", args.k), _real("budget", args.budget), args.strategy,
        trials=_int("trials", args.trials),
        rng=None if args.seed is None else _int("seed", args.seed),
        handle_cost=None if args.handle_cost is None else _real("handle-cost", args.handle_cost),
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
        rows = [(k, f"[{v[0]:.6g}, {v[1]:.6g}]" if isinstance(v, list) else v) for k, v in rows]
        emit_table(("quantity", "value"), rows, title="Recovery task T_{N,k} (Proposition 1)")
    return 1 if result.consistent_with_bound is False else 0
