"""``vista-lab bound``: evaluate the paper's bounds and the exact frontier at
one point (Proposition 1, Proposition 2, Theorem 1, the optimal frontier)."""

from __future__ import annotations

import argparse
import math
from typing import Any

from ._args import parse_int as _int
from ._args import parse_real as _real

__all__ = ["register", "run"]

_JSON_HEAD_MAX = 1000  # p_head is printed in full only up to this many ranks
_LAW_MAX = 10**7  # gibbs_law materialises kappa probabilities


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "bound",
        help="evaluate a bound or the exact frontier at one point",
        description=(
            "Evaluate Proposition 1 (recovery), Proposition 2 (content channel), "
            "Theorem 1 (make-room trade-off) or the exact optimal frontier at one point."
        ),
    )
    what = parser.add_subparsers(dest="what", metavar="WHAT")
    what.required = True

    rec = what.add_parser(
        "recovery", help="Proposition 1: lossy success bound and VISTA feasibility",
        description="Success bound B/(Nk)+1/k of any non-recovering method on T_{N,k}, and "
        "whether VISTA's instruction + N handles + one block fit in B bits.",
    )
    rec.add_argument("--N", required=True, metavar="INT", help="number of evidence blocks")
    rec.add_argument("--k", required=True, metavar="INT", help="bits per block")
    rec.add_argument("--budget", required=True, metavar="BITS", help="prompt budget B in bits")
    rec.add_argument("--c0", default="1.0", metavar="X", help="handle bits per log2 N (default 1)")
    rec.add_argument("--instruction", default="0", metavar="BITS",
                     help="instruction size in bits (default 0)")
    rec.add_argument("--json", action="store_true", help="print JSON instead of a table")
    rec.set_defaults(func=_run_recovery, _parser=rec)

    con = what.add_parser(
        "content", help="Proposition 2: information in noisy content-derived sizes",
        description="The paper's bound ln2 (log2 kappa)^2/sigma^2 bits; with --n also the "
        "tighter (1-1/n)/2 bound and the exact I(J*;W).",
    )
    con.add_argument("--kappa", required=True, metavar="INT", help="size ratio L/l (>= 2)")
    con.add_argument("--sigma", required=True, metavar="X", help="log-size noise (> 0)")
    con.add_argument("--n", default=None, metavar="INT", help="number of blocks (optional)")
    con.add_argument("--json", action="store_true", help="print JSON instead of a table")
    con.set_defaults(func=_run_content, _parser=con)

    mr = what.add_parser(
        "makeroom", help="Theorem 1: lower bound on E[Z] vs the exact frontier and buckets",
        description="Theorem 1's lower bound kappa[1-(I+1)/nu]_+ at rate I, next to the "
        "exact optimal E[Z], the balanced-bucket construction, and the rates needed for "
        "E[Z] <= delta*kappa. Needs 2 <= kappa < n/2.",
    )
    mr.add_argument("--n", required=True, metavar="INT", help="blocks in the working set")
    mr.add_argument("--kappa", required=True, metavar="INT", help="size ratio, 2 <= kappa < n/2")
    mr.add_argument("--rate", required=True, metavar="BITS", help="interface rate I(J*;Y)")
    mr.add_argument("--delta", default="0.5", metavar="X",
                    help="target fraction for the threshold rows (default 0.5)")
    mr.add_argument("--json", action="store_true", help="print JSON instead of a table")
    mr.set_defaults(func=_run_makeroom, _parser=mr)

    fr = what.add_parser(
        "frontier", help="the exact optimal frontier and its Gibbs rank law",
        description="Smallest E[Z] at a rate (--rate) or smallest rate at an E[Z] "
        "(--mean-z), with the optimal rank law p_r ∝ exp(-lam min(r-1, kappa)).",
    )
    fr.add_argument("--n", required=True, metavar="INT", help="blocks, n >= kappa + 1")
    fr.add_argument("--kappa", required=True, metavar="INT", help="size ratio, >= 1")
    target = fr.add_mutually_exclusive_group(required=True)
    target.add_argument("--rate", metavar="BITS", help="rate budget in bits")
    target.add_argument("--mean-z", dest="mean_z", metavar="X", help="target E[Z]")
    fr.add_argument("--json", action="store_true", help="print JSON instead of a table")
    fr.set_defaults(func=_run_frontier, _parser=fr)


def run(args: argparse.Namespace) -> int:
    """Dispatch to the chosen quantity (the parsers set ``func`` directly)."""
    return int(args.func(args))


# ---------------------------------------------------------------------------
# Parsing numbers ourselves, so a bad value is a DomainError naming the option
# ---------------------------------------------------------------------------


_EZ = "blocks (E[Z])"
_PROB = "probability"
#: Unit of every quantity each subcommand prints, per subcommand: one name can
#: mean different things in different subcommands (``lower_bound`` is a rate in
#: bits for ``content`` but an E[Z] in blocks for ``makeroom``). Every printed
#: key has an entry (pinned by a test); a pure number says "dimensionless".
UNITS: dict[str, dict[str, str]] = {
    "recovery": {
        "N": "blocks", "k": "bits", "budget": "bits", "c0": "bits per log2 N",
        "instruction": "bits", "lossy_success_bound": _PROB, "lossy_success_cap": _PROB,
        "sharp_success_bound": _PROB, "vista_feasible": "yes/no", "vista_success": _PROB,
        "required_bits": "bits", "handle_bits_each": "bits", "handles_total": "bits",
        "block_bits": "bits", "slack": "bits", "gap": _PROB,
    },
    "content": {
        "kappa": "L/l (ratio)", "sigma": "log-size std. dev.", "paper_bound_bits": "bits",
        "n": "blocks", "log2_n": "bits", "tight_bound_bits": "bits",
        "capped_tight_bound_bits": "bits", "exact_rate_bits": "bits", "exact_rate": "bits",
        "product_bound": "bits", "lower_bound": "bits", "product_bound_radius": "bits",
        "lower_bound_radius": "bits",
    },
    "makeroom": {
        "n": "blocks", "kappa": "L/l (ratio)", "rate": "bits", "delta": "fraction of kappa",
        "nu": "bits", "lower_bound": _EZ, "list_fano_lower_bound": _EZ,
        "sharp_lower_bound": _EZ, "c_star": "bits", "optimal_mean_z": _EZ, "gap": _EZ,
        "blind_mean_z": _EZ, "bucket_M_at_rate": "buckets", "bucket_mean_z_at_rate": _EZ,
        "bucket_rate_needed": "bits", "bucket_M_needed": "buckets",
        "price_per_bit": "blocks per bit", "threshold_rate": "bits",
        "optimal_rate_for_delta": "bits", "bucket_sufficient_rate": "bits",
        "optimal_rate_over_nu": "dimensionless (R*/nu)", "second_order_term": "bits",
    },
    "frontier": {
        "n": "blocks", "kappa": "L/l (ratio)", "rate": "bits", "mean_z": _EZ,
        "log2_n": "bits", "blind_mean_z": _EZ, "lam": "1/bit", "p_tail": _PROB,
        "p_head (r = 1..kappa)": _PROB,
    },
}


def _emit(args: argparse.Namespace, doc: dict[str, Any], title: str) -> int:
    from .._output import emit_json, emit_table

    if args.json:
        emit_json(doc)
    else:
        units = UNITS[args.what]
        # a key without a unit is a bug caught by the tests, not a blank cell
        rows = [(k, v, units[k])
                for k, v in doc.items() if not isinstance(v, (list, tuple, dict))]
        emit_table(("quantity", "value", "unit"), rows, title=title)
    return 0


# ---------------------------------------------------------------------------
# The four quantities
# ---------------------------------------------------------------------------


def _run_recovery(args: argparse.Namespace) -> int:
    from vistalab.theory import (
        HandleCostModel,
        recovery_feasibility,
        recovery_success_bound,
        recovery_success_bound_sharp,
    )

    N, k = _int("N", args.N), _int("k", args.k)
    budget = _real("budget", args.budget)
    cost = HandleCostModel(
        c0=_real("c0", args.c0), instruction=_real("instruction", args.instruction)
    )
    bound = recovery_success_bound(N, k, budget)
    feas = recovery_feasibility(N, k, budget, cost=cost)
    doc = {
        "N": N, "k": k, "budget": budget, "c0": cost.c0, "instruction": cost.instruction,
        "lossy_success_bound": bound,
        "lossy_success_cap": min(1.0, bound),
        "sharp_success_bound": recovery_success_bound_sharp(N, k, budget),
        "vista_feasible": feas.feasible,
        "vista_success": 1.0 if feas.feasible else None,
        "required_bits": feas.required,
        "handle_bits_each": cost.handle_size(N),
        "handles_total": feas.handles_total,
        "block_bits": feas.block,
        "slack": feas.slack,
        "gap": 1.0 - min(1.0, bound) if feas.feasible else None,
    }
    return _emit(args, doc, "Proposition 1: recovery under budget pressure")


def _run_content(args: argparse.Namespace) -> int:
    from vistalab.theory import (
        CONTENT_SNR_MAX,
        content_jensen_lower_bound,
        content_product_bound,
        content_rate_bound,
        content_rate_bound_tight,
        content_rate_exact,
    )

    kappa, sigma = _int("kappa", args.kappa), _real("sigma", args.sigma)
    doc: dict[str, Any] = {"kappa": kappa, "sigma": sigma}
    doc["paper_bound_bits"] = content_rate_bound(kappa, sigma)
    if args.n is not None:
        n = _int("n", args.n)
        tight = content_rate_bound_tight(n, kappa, sigma)
        doc["n"] = n
        doc["log2_n"] = math.log2(n)
        doc["tight_bound_bits"] = tight
        doc["capped_tight_bound_bits"] = min(tight, math.log2(n))
        snr = math.log(kappa) / sigma
        # beyond the quadrature's range the exact value is the Fano endpoint log2 n
        doc["exact_rate_bits"] = content_rate_exact(n, kappa, sigma)
        # certified sandwich lower_bound <= exact_rate <= product_bound (bits)
        doc["exact_rate"] = doc["exact_rate_bits"]
        if snr <= CONTENT_SNR_MAX:
            up = content_product_bound(n, kappa, sigma)
            lo = content_jensen_lower_bound(n, kappa, sigma)
            doc["product_bound"] = up.upper
            doc["lower_bound"] = max(0.0, lo.lower)
            doc["product_bound_radius"] = up.radius
            doc["lower_bound_radius"] = lo.radius
        else:
            doc["product_bound"] = doc["lower_bound"] = None
    return _emit(args, doc, "Proposition 2: content-derived information (bits)")


def _run_makeroom(args: argparse.Namespace) -> int:
    from vistalab.theory import (
        SHARP_KAPPA_MAX,
        blind_mean_z,
        bucket_ledger,
        bucket_ledger_for_mean_z,
        bucket_sufficient_rate,
        first_order_point,
        list_fano_mean_z_bound,
        makeroom_lower_bound,
        makeroom_nu,
        optimal_mean_z,
        optimal_rate,
        price_per_bit,
        sharp_constant,
        sharp_mean_z_bound,
        threshold_rate,
    )

    n, kappa = _int("n", args.n), _int("kappa", args.kappa)
    rate, delta = _real("rate", args.rate), _real("delta", args.delta)
    nu = makeroom_nu(n, kappa)  # validates 2 <= kappa < n/2 first
    lower = makeroom_lower_bound(n, kappa, rate)
    best = optimal_mean_z(n, kappa, rate)
    needed = bucket_ledger_for_mean_z(n, kappa, best)
    m_at_rate = max(1, min(n, int(math.floor(2.0 ** min(rate, math.log2(n))))))
    doc: dict[str, Any] = {
        "n": n, "kappa": kappa, "rate": rate, "delta": delta,
        "nu": nu,
        "lower_bound": lower,
        "list_fano_lower_bound": list_fano_mean_z_bound(n, kappa, rate),
        "sharp_lower_bound": (
            sharp_mean_z_bound(n, kappa, rate) if kappa <= SHARP_KAPPA_MAX else None
        ),
        "c_star": sharp_constant(n, kappa),
        "optimal_mean_z": best,
        "gap": best - lower,
        "blind_mean_z": blind_mean_z(n, kappa),
        "bucket_M_at_rate": m_at_rate,
        "bucket_mean_z_at_rate": bucket_ledger(n, kappa, m_at_rate).mean_z,
        "bucket_rate_needed": needed.rate_bits,
        "bucket_M_needed": needed.M,
        "price_per_bit": price_per_bit(n, kappa),
        "threshold_rate": threshold_rate(n, kappa, delta),
        "optimal_rate_for_delta": optimal_rate(n, kappa, delta * kappa),
        "bucket_sufficient_rate": bucket_sufficient_rate(n, kappa, delta),
    }
    # first order (R*/nu -> 1 - delta) and the exact second-order term
    fo = first_order_point(n, kappa, delta, with_buckets=False)
    doc["optimal_rate_over_nu"] = fo.exact_over_nu
    doc["second_order_term"] = fo.second_order
    doc["second_order_bounds"] = [fo.bound_lo, fo.bound_hi]
    return _emit(args, doc, "Theorem 1: information-recovery trade-off")


def _run_frontier(args: argparse.Namespace) -> int:
    from vistalab.theory import blind_mean_z, gibbs_law, optimal_mean_z, optimal_rate

    n, kappa = _int("n", args.n), _int("kappa", args.kappa)
    with_law = kappa <= _LAW_MAX
    if args.rate is not None:
        rate = _real("rate", args.rate)
        mean_z = optimal_mean_z(n, kappa, rate)
        law = gibbs_law(n, kappa, rate=rate) if with_law else None
    else:
        mean_z = _real("mean_z", args.mean_z)
        rate = optimal_rate(n, kappa, mean_z)
        law = gibbs_law(n, kappa, mean_z=mean_z) if with_law else None
    head = None if law is None or kappa > _JSON_HEAD_MAX else list(law.p_head)
    doc: dict[str, Any] = {
        "n": n, "kappa": kappa,
        "rate": rate,
        "mean_z": mean_z,
        "log2_n": math.log2(n),
        "blind_mean_z": blind_mean_z(n, kappa),
        "lam": None if law is None else law.lam,
        "p_tail": None if law is None else law.p_tail,
        "p_head": head,
    }
    if not args.json and head is not None:
        shown = ", ".join(f"{p:.4g}" for p in head[:6]) + (", ..." if len(head) > 6 else "")
        doc["p_head (r = 1..kappa)"] = shown
    return _emit(args, doc, "Exact optimal frontier")
