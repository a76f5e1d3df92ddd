"""``vista-lab makeroom``: Monte Carlo of the make-room instance M_{n,L,l}
with one interface and policy, next to Theorem 1's bound, the exact frontier
and the exact E[Z]."""

from __future__ import annotations

import argparse
from typing import Any

from .recovery import _int, _real

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    from sims import INTERFACES, POLICIES

    parser = subparsers.add_parser(
        "makeroom",
        help="simulate the make-room instance M_{n,L,l} (Theorem 1)",
        description=(
            "Archive blocks in the order chosen from an interface's observation until the "
            "overflow clears, and count the load-bearing blocks archived (Z). Reports E[Z] "
            "with a confidence interval, the interface's rate, Theorem 1's lower bound, the "
            "exact optimal frontier and the exact E[Z]. Exit status 1 if the estimate "
            "contradicts the exact value or the theory by more than 4 standard errors."
        ),
    )
    parser.add_argument("--n", required=True, metavar="INT", help="blocks in the working set")
    parser.add_argument("--kappa", required=True, metavar="INT",
                        help="size ratio L/l, an integer with 2 <= kappa < n")
    parser.add_argument("--interface", required=True, metavar="NAME",
                        help=f"one of: {', '.join(INTERFACES)}")
    parser.add_argument("--sigma", default=None, metavar="S", help="gaussian: log-size noise")
    parser.add_argument("--buckets", default=None, metavar="M", help="buckets: number of buckets")
    law = parser.add_mutually_exclusive_group()
    law.add_argument("--lam", default=None, metavar="X", help="gibbs: inverse temperature")
    law.add_argument("--rate", default=None, metavar="R", help="gibbs: target rate in bits")
    parser.add_argument("--policy", default="bayes", metavar="NAME",
                        help=f"one of: {', '.join(POLICIES)} (default bayes)")
    parser.add_argument("--mode", default="fast", metavar="MODE",
                        help="fast (O(1) per trial) or literal (full trial) (default fast)")
    parser.add_argument("--trials", default="100000", metavar="INT",
                        help="number of trials (default 100000)")
    parser.add_argument("--rate-trials", dest="rate_trials", default=None, metavar="INT",
                        help="gaussian: Monte Carlo trials for the rate")
    parser.add_argument("--seed", default=None, metavar="INT",
                        help="seed (default: fresh entropy, printed in the output)")
    parser.add_argument("--workers", default="1", metavar="INT", help="threads (default 1)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.set_defaults(func=run, _parser=parser)


def run(args: argparse.Namespace) -> int:
    from sims import simulate_makeroom

    from .._output import emit_json, emit_table

    params: dict[str, Any] = {}
    if args.sigma is not None:
        params["sigma"] = _real("sigma", args.sigma)
    if args.buckets is not None:
        params["buckets"] = _int("buckets", args.buckets)
    if args.lam is not None:
        params["lam"] = _real("lam", args.lam)
    if args.rate is not None:
        params["rate"] = _real("rate", args.rate)
    result = simulate_makeroom(
        _int("n", args.n), _int("kappa", args.kappa), args.interface,
        policy=args.policy, trials=_int("trials", args.trials),
        rng=None if args.seed is None else _int("seed", args.seed), mode=args.mode,
        rate_trials=None if args.rate_trials is None else _int("rate-trials", args.rate_trials),
        workers=_int("workers", args.workers), **params,
    )
    doc = result.to_dict()
    if args.json:
        emit_json(doc)
    else:
        keys = ("interface", "params", "policy", "mode", "n", "kappa", "mean_z", "mean_z_ci",
                "exact_mean_z", "rate_bits", "rate_bits_se", "lower_bound", "lower_bound_note",
                "optimal_mean_z", "nu", "agrees_with_exact", "consistent_with_theory",
                "trials", "seed", "trials_per_second")
        rows = []
        for key in keys:
            v = doc[key]
            if isinstance(v, list):
                v = f"[{v[0]:.6g}, {v[1]:.6g}]"
            elif isinstance(v, dict):
                v = ", ".join(f"{a}={b:g}" for a, b in v.items()) or "-"
            rows.append((key, v))
        emit_table(("quantity", "value"), rows, title="Make-room instance M_{n,L,l} (Theorem 1)")
    failed = result.agrees_with_exact is False or not result.consistent_with_theory
    return 1 if failed else 0
