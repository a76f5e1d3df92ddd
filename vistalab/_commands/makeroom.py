"""``vista-lab makeroom``: Monte Carlo of the make-room instance M_{n,L,l}
with one interface and policy, next to Theorem 1's bound, the exact frontier
and the exact E[Z]."""

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
    from vistalab.sims import INTERFACES, POLICIES

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
    parser.add_argument("--trials", default=None, metavar="INT",
                        help="number of trials (default 100000; 500 with --engine)")
    parser.add_argument("--rate-trials", dest="rate_trials", default=None, metavar="INT",
                        help="gaussian: Monte Carlo trials for the rate")
    parser.add_argument("--seed", default=None, metavar="INT",
                        help="seed (default: fresh entropy, printed in the output)")
    parser.add_argument("--workers", default="1", metavar="INT", help="threads (default 1)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    engine = add_engine_group(
        parser, "run every trial through the reference workspace engine (workspace/): "
        "calibrated block texts, a budget over by exactly L, archives through the agent's "
        "tool until preflight clears, byte-exact read-back of every archived load-bearing "
        "block, and a cross-check against the array simulator (interfaces: ledger, gaussian, "
        "buckets, blind)")
    engine.add_argument("--block-tokens", dest="block_tokens", default=None, metavar="INT",
                        help="engine: net tokens l of a load-bearing block (default "
                             "max(4, min(40, 900 // kappa)))")
    engine.add_argument("--array-trials", dest="array_trials", default=None, metavar="INT",
                        help="engine: trials of the array-simulator cross-check (default 200000)")
    engine.add_argument("--reuse", action="store_true",
                        help="engine: one workspace per 64 trials (J* drawn per block), "
                             "restored after each trial; much faster at large n, refused where "
                             "Z's law depends on J*'s position")
    parser.set_defaults(func=run, _parser=parser)


_ENGINE_ONLY = ("store", "store_dir", "tokenizer", "block_tokens", "array_trials")
#: API parameter -> command-line option, for errors raised by either simulator.
_API_OPTIONS = {
    "l_tokens": "block-tokens",
    "array_trials": "array-trials",
    "rate_trials": "rate-trials",
    "store_dir": "store-dir",
    "rng": "seed",
}


def run(args: argparse.Namespace) -> int:
    from vistalab.sims import simulate_makeroom

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
    if args.engine:
        return _run_engine(args, params)
    if args.reuse:
        raise DomainError("reuse", True, "is only used with --engine",
                          "add --engine or drop the option")
    refuse_engine_only(args, _ENGINE_ONLY)
    with api_names(**_API_OPTIONS):
        result = simulate_makeroom(
            _int("n", args.n), _int("kappa", args.kappa), args.interface,
            policy=args.policy, trials=_int("trials", _given(args.trials, "100000")),
            rng=None if args.seed is None else _int("seed", args.seed), mode=args.mode,
            rate_trials=None if args.rate_trials is None else _int("rate-trials", args.rate_trials),
            workers=_int("workers", args.workers), **params,
        )
    doc = result.to_dict()
    if args.json:
        emit_json(doc)
    else:
        keys = ("interface", "params", "policy", "mode", "n", "kappa", "mean_z", "mean_z_ci",
                "law_of_z", "exact_mean_z", "rate_bits", "rate_bits_se", "lower_bound",
                "lower_bound_note", "optimal_mean_z", "nu", "agrees_with_exact",
                "consistent_with_theory", "trials", "seed", "trials_per_second")
        emit_table(("quantity", "value", "unit"), _rows(doc, keys),
                   title="Make-room instance M_{n,L,l} (Theorem 1)")
    failed = result.agrees_with_exact is False or not result.consistent_with_theory
    return 1 if failed else 0


_ENGINE_KEYS = ("store", "tokenizer", "l_tokens", "L_tokens", "budget_tokens", "array_mean_z",
                "z_score", "agrees_with_array", "archive_events", "read_events",
                "byte_exact_recoveries", "queries_answered", "size_mismatches",
                "budget_mismatches", "stop_mismatches", "reuse", "workspaces")


def _run_engine(args: argparse.Namespace, params: dict[str, Any]) -> int:
    from vistalab.sims import simulate_makeroom_engine

    from .._output import emit_json, emit_table

    if args.mode != "fast":
        raise DomainError("mode", args.mode, "is not used with --engine",
                          "engine trials always run in full; drop --mode")
    if _int("workers", args.workers) != 1:
        raise DomainError("workers", args.workers, "must be 1 with --engine",
                          "engine trials run in one thread")
    if args.rate is not None or args.lam is not None:
        raise DomainError("interface", "gibbs", "has no engine counterpart",
                          "use ledger, gaussian, buckets or blind with --engine")
    extra: dict[str, Any] = {}
    if args.block_tokens is not None:
        extra["l_tokens"] = _int("block-tokens", args.block_tokens)
    if args.array_trials is not None:
        extra["array_trials"] = _int("array-trials", args.array_trials)
    with api_names(**_API_OPTIONS):
        result = simulate_makeroom_engine(
            _int("n", args.n), _int("kappa", args.kappa), args.interface,
            policy=args.policy, trials=_int("trials", _given(args.trials, "500")),
            rng=None if args.seed is None else _int("seed", args.seed),
            store=_given(args.store, "memory"), store_dir=_store_dir(args.store_dir),
            tokenizer=_given(args.tokenizer, "cl100k_base"), reuse=bool(args.reuse),
            rate_trials=None if args.rate_trials is None else _int("rate-trials", args.rate_trials),
            **extra, **params,
        )
    doc = result.to_dict()
    if args.json:
        emit_json(doc)
    else:
        keys = ("interface", "params", "policy", "mode", "n", "kappa", "mean_z", "mean_z_ci",
                "law_of_z", "exact_mean_z", "rate_bits", "lower_bound", "optimal_mean_z",
                "agrees_with_exact", "consistent_with_theory", *_ENGINE_KEYS, "trials", "seed",
                "trials_per_second")
        emit_table(("quantity", "value", "unit"), _rows(doc, keys),
                   title="Make-room instance M_{n,L,l} through the workspace engine")
    failed = (result.agrees_with_exact is False or not result.consistent_with_theory
              or not result.agrees_with_array or not result.all_recoveries_byte_exact)
    return 1 if failed else 0


#: Unit of each printed quantity that has one (blocks of size l; Z counts them).
UNITS: dict[str, str] = {
    "n": "blocks", "kappa": "L/l (ratio)", "mean_z": "blocks", "mean_z_ci": "blocks",
    "law_of_z": "P(Z = z), z in blocks", "exact_mean_z": "blocks", "rate_bits": "bits",
    "rate_bits_se": "bits", "lower_bound": "blocks", "optimal_mean_z": "blocks",
    "nu": "bits", "trials": "trials", "trials_per_second": "trials/s",
    "l_tokens": "tokens", "L_tokens": "tokens", "budget_tokens": "tokens",
    "array_mean_z": "blocks", "z_score": "standard errors", "archive_events": "calls",
    "read_events": "calls", "byte_exact_recoveries": "reads", "queries_answered": "queries",
    "size_mismatches": "archives", "budget_mismatches": "trials", "stop_mismatches": "trials",
    "workspaces": "workspaces",
}


def law_of_z(counts: Any, *, shown: int = 8) -> str:
    """The empirical law of Z from its counts: ``P(Z=0)=0.31, P(Z=1)=0.27, ...``.

    The ``shown`` most likely values are listed in order of z; the rest are
    summed into one "other" term so the line stays short.
    """
    counts = [int(c) for c in counts]
    total = sum(counts)
    if total == 0:
        return "-"
    nonzero = [(z, c) for z, c in enumerate(counts) if c]
    top = sorted(sorted(nonzero, key=lambda zc: -zc[1])[:shown])
    parts = [f"P(Z={z})={c / total:.4g}" for z, c in top]
    rest = total - sum(c for _, c in top)
    if rest:
        parts.append(f"other z: {rest / total:.4g}")
    return ", ".join(parts)


def _rows(doc: dict[str, Any], keys: Any) -> list[tuple[str, Any, str]]:
    rows = []
    for key in keys:
        if key == "law_of_z":
            v: Any = law_of_z(doc.get("z_counts") or [])
        else:
            v = doc[key]
        if isinstance(v, list):
            v = f"[{v[0]:.6g}, {v[1]:.6g}]"
        elif isinstance(v, dict):
            v = ", ".join(f"{a}={b:g}" for a, b in v.items()) or "-"
        rows.append((key, v, UNITS.get(key, "")))
    return rows
