"""Figure 4 -- the information-recovery trade-off of Theorem 1 at fixed
(n, kappa): expected recovery obligations E[Z]/kappa against the interface
rate I = I(J*;Y) in bits. Shown: Theorem 1's lower bound kappa[1-(I+1)/nu]_+,
the exact optimal frontier (theory.optimal_mean_z), the balanced M-bucket
ledgers (exact), the Gaussian content channel at several sigma (Monte Carlo
rate and E[Z], with the exact E[Z]), the ledger and blind endpoints, the
frontier-achieving Gibbs interface, and engine-measured points from
``sims.simulate_makeroom_engine`` (policies that see the instance only through
the workspace engine's dashboard or content, archiving through its tool).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from vistalab.theory import DomainError
from vistalab.theory._validate import as_int, as_real

from vistalab import sims, theory
from vistalab._core import seed_sequence

from ._checks import Check, status_of
from ._labels import PointLabel, place_labels
from ._registry import merge_params
from ._style import PALETTE, figure_style, new_figure, panel_label, save_figure
from ._table import TidyTable

NAME = "fig4_tradeoff"
TITLE = "Information-recovery trade-off: E[Z]/kappa against the interface rate (Theorem 1)"
STOCHASTIC = True

_COLUMNS = ("series", "interface", "sigma", "buckets", "rate", "n", "kappa", "rate_bits",
            "rate_bits_se", "value", "ci_low", "ci_high", "se", "exact", "trials")
_UNITS = {
    "series": "lower-bound | frontier | buckets | mc | engine",
    "interface": "ledger | gaussian | buckets | blind | gibbs (Monte Carlo / engine rows)",
    "sigma": "noise of the gaussian size channel (gaussian rows), log-size std. dev.",
    "buckets": "number of buckets M (bucket rows)",
    "rate": "target rate of the gibbs interface, bits (gibbs rows)",
    "n": "number of blocks",
    "kappa": "size ratio L/l",
    "rate_bits": "I(J*;Y) in bits",
    "rate_bits_se": "standard error of an estimated rate, bits (0 when exact)",
    "value": "E[Z]/kappa (recovery obligations per kappa)",
    "ci_low": "95% CI of E[Z]/kappa, lower",
    "ci_high": "95% CI of E[Z]/kappa, upper",
    "se": "standard error of E[Z]/kappa",
    "exact": "exact E[Z]/kappa where an evaluator exists",
    "trials": "Monte Carlo trials",
}


def default_params(quick: bool = False) -> dict[str, Any]:
    return {
        "n": 64,
        "kappa": 4,
        "curve_points": 61 if quick else 241,
        "sigmas": [0.5, 1.0, 2.0] if quick else [0.35, 0.5, 0.71, 1.0, 1.41, 2.0, 4.0],
        "bucket_M": [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64],
        "mc_buckets": [4, 16] if quick else [2, 4, 8, 16, 32],
        "gibbs_rates": [1.0, 3.0] if quick else [0.5, 1.0, 2.0, 3.0, 4.0, 5.0],
        "trials": 2000 if quick else 40000,
        "engine": True,
        "engine_sigmas": [1.0] if quick else [0.5, 1.0, 2.0],
        "engine_buckets": [] if quick else [4, 16],
        "engine_trials": 10 if quick else 100,
    }


def _params_iv(params: Mapping[str, Any] | None) -> dict[str, Any]:
    p = merge_params(NAME, default_params(), params)
    p["n"] = as_int("n", p["n"], lo=5)
    p["kappa"] = as_int("kappa", p["kappa"], lo=2)
    if not 2 * p["kappa"] < p["n"]:
        raise DomainError("kappa", p["kappa"], "must satisfy 2 <= kappa < n/2 (Theorem 1)",
                          "lower kappa or raise n", context=f"n={p['n']}")
    p["curve_points"] = as_int("curve_points", p["curve_points"], lo=3)
    p["sigmas"] = [as_real("sigmas", s, lo=0.0, lo_open=True, fix="list noise levels above 0")
                   for s in p["sigmas"]]
    n, top = p["n"], math.log2(p["n"])
    # The default lists are cut to what n allows (M <= n buckets, rates <= log2 n bits),
    # so every n >= 5 runs with them; a list given in their place is checked whole.
    defaults = (default_params(quick=False), default_params(quick=True))
    for key in ("bucket_M", "mc_buckets", "engine_buckets"):
        if any(p[key] == d[key] for d in defaults):
            p[key] = [m for m in p[key] if m <= n]
        p[key] = [as_int(key, m, lo=1, hi=n, fix=f"list bucket counts M from 1 to n = {n}")
                  for m in p[key]]
    if any(p["gibbs_rates"] == d["gibbs_rates"] for d in defaults):
        p["gibbs_rates"] = [r for r in p["gibbs_rates"] if r <= top]
    p["gibbs_rates"] = [as_real("gibbs_rates", r, lo=0.0, hi=top,
                                fix=f"list rates from 0 to log2(n) = {top:.3g} bits")
                        for r in p["gibbs_rates"]]
    p["trials"] = as_int("trials", p["trials"], lo=2)
    if not isinstance(p["engine"], bool):
        raise DomainError("engine", p["engine"], "must be true or false",
                          "false leaves out the engine-measured points")
    p["engine_sigmas"] = [as_real("engine_sigmas", s, lo=0.0, lo_open=True,
                                  fix="list noise levels above 0")
                          for s in p["engine_sigmas"]]
    p["engine_trials"] = as_int("engine_trials", p["engine_trials"], lo=1)
    return p


def _z_stats(res: Any, kappa: int) -> tuple[float, float, float, float]:
    """(mean, se, ci_low, ci_high) of Z/kappa from a MakeRoomResult."""
    mean = float(res.mean_z) / kappa
    counts = getattr(res, "z_counts", None)
    if counts:
        c = np.asarray(counts, dtype=float)
        z = np.arange(c.size, dtype=float)
        n = c.sum()
        var = float((c * (z - z @ c / n) ** 2).sum() / max(n - 1, 1))
        se = math.sqrt(var / n) / kappa
    else:
        lo, hi = res.mean_z_ci
        se = (float(hi) - float(lo)) / (2 * 1.96) / kappa
    lo, hi = res.mean_z_ci
    return mean, se, float(lo) / kappa, float(hi) / kappa


def compute(params: Mapping[str, Any] | None = None, *,
            rng: np.random.Generator | None = None) -> TidyTable:
    p = _params_iv(params)
    rng = np.random.default_rng(seed_sequence(rng))  # rng= as in vistalab._core.seed_sequence
    n, kappa = p["n"], p["kappa"]
    top = math.log2(n)
    rows: list[dict[str, Any]] = []
    base = {"n": n, "kappa": kappa}
    for rate in np.linspace(0.0, top, p["curve_points"]):
        r = float(rate)
        rows.append({**base, "series": "lower-bound", "rate_bits": r,
                     "value": theory.makeroom_lower_bound(n, kappa, r) / kappa})
        rows.append({**base, "series": "frontier", "rate_bits": r,
                     "value": theory.optimal_mean_z(n, kappa, r) / kappa})
    for M in p["bucket_M"]:
        led = theory.bucket_ledger(n, kappa, M)
        rows.append({**base, "series": "buckets", "interface": "buckets", "buckets": M,
                     "rate_bits": float(led.rate_bits), "rate_bits_se": 0.0,
                     "value": float(led.mean_z) / kappa, "exact": float(led.mean_z) / kappa})
    jobs: list[tuple[str, str, float | None, dict[str, Any]]] = [
        ("mc", "ledger", None, {}), ("mc", "blind", None, {}),
    ]
    jobs += [("mc", "gaussian", s, {"sigma": s}) for s in p["sigmas"]]
    jobs += [("mc", "buckets", float(m), {"buckets": m}) for m in p["mc_buckets"]]
    jobs += [("mc", "gibbs", r, {"rate": r}) for r in p["gibbs_rates"]]
    engine = sims.simulate_makeroom_engine if p["engine"] else None
    if engine is not None:
        jobs += [("engine", "ledger", None, {}), ("engine", "blind", None, {})]
        jobs += [("engine", "gaussian", s, {"sigma": s}) for s in p["engine_sigmas"]]
        jobs += [("engine", "buckets", float(m), {"buckets": m}) for m in p["engine_buckets"]]
    streams = rng.spawn(len(jobs))
    for (series, name, _param_value, kw), stream in zip(jobs, streams, strict=False):
        if series == "engine":
            assert engine is not None  # engine jobs exist only when it does
            res: Any = engine(n, kappa, name, trials=p["engine_trials"], rng=stream, **kw)
        else:
            iface = sims.make_interface(name, n=n, kappa=kappa, **kw)
            res = sims.simulate_makeroom(n, kappa, iface, trials=p["trials"], rng=stream)
        mean, se, lo, hi = _z_stats(res, kappa)
        exact = getattr(res, "exact_mean_z", None)
        rows.append({**base, "series": series, "interface": name, **kw,
                     "rate_bits": float(res.rate_bits),
                     "rate_bits_se": float(res.rate_bits_se or 0.0),
                     "value": mean, "ci_low": lo, "ci_high": hi, "se": se,
                     "exact": None if exact is None else float(exact) / kappa,
                     "trials": int(res.trials)})
    return TidyTable.from_records(rows, columns=_COLUMNS, units=_UNITS)


def plot(table: TidyTable, out_dir: str | Path) -> tuple[Path, Path]:
    n = int(table.values("n")[0])
    kappa = int(table.values("kappa")[0])
    top = math.log2(n)
    with figure_style():
        fig, axes = new_figure(1, 1, width=8.2, height=4.2)
        ax = axes[0, 0]
        lb = table.where(series="lower-bound")
        ax.plot(lb.column("rate_bits"), lb.column("value"), color=PALETTE["black"], lw=1.6, ls="--",
                label=r"Theorem 1 lower bound $[1-(I+1)/\nu]_+$")
        fr = table.where(series="frontier")
        ax.plot(fr.column("rate_bits"), fr.column("value"), color=PALETTE["purple"], lw=2.2,
                label="exact optimal frontier")
        bk = table.where(series="buckets")
        ax.plot(bk.column("rate_bits"), bk.column("value"), "s", color=PALETTE["green"], ms=4,
                mfc="white", label=r"balanced $M$-bucket ledgers (exact)")
        mc = table.where(series="mc")
        styles = {
            "gaussian": ("o", PALETTE["blue"], r"Gaussian content channel (MC, $\sigma$ marked)"),
            "buckets": ("s", PALETTE["green"], "bucket ledgers (MC)"),
            "gibbs": ("^", PALETTE["purple"], "Gibbs interface on the frontier (MC)"),
            "ledger": ("*", PALETTE["vermillion"], r"full ledger ($I = \log_2 n$)"),
            "blind": ("X", PALETTE["orange"], r"size-blind ($I = 0$)"),
        }
        for name, (marker, col, label) in styles.items():
            t = mc.where(interface=name)
            if not len(t):
                continue
            y = t.column("value")
            yerr = np.vstack([y - t.column("ci_low"), t.column("ci_high") - y])
            ax.errorbar(t.column("rate_bits"), y, yerr=yerr, xerr=2 * t.column("rate_bits_se"),
                        fmt=marker, color=col, ms=7 if marker in "*X" else 4.5, label=label,
                        zorder=3)
        labels: list[PointLabel] = []
        eng = table.where(series="engine")
        if len(eng):
            # Hollow, larger diamonds: the array point of the same interface stays
            # visible inside; each is labelled with its interface.
            y = eng.column("value")
            yerr = np.vstack([y - eng.column("ci_low"), eng.column("ci_high") - y])
            ax.errorbar(eng.column("rate_bits"), y, yerr=yerr, fmt="D", color=PALETTE["black"],
                        mfc="none", mew=1.2, ms=9, elinewidth=1, capsize=3,
                        label="engine-measured (workspace/), by interface", zorder=4)
            labels += [PointLabel(f"engine: {r['interface']}", r["rate_bits"], r["value"],
                                  {"fontsize": 6.5, "color": PALETTE["black"]},
                                  prefix="engine: ")
                       for r in eng.records()]
        # The longer engine labels are placed first; the short sigma labels fit around them.
        labels += [PointLabel(f"$\\sigma$={r['sigma']:g}", r["rate_bits"], r["value"],
                              {"fontsize": 6.5, "color": PALETTE["blue"]}, prefix="$\\sigma$=")
                   for r in mc.where(interface="gaussian").records()]
        ax.set_xlim(-0.1, top + 0.15)
        ax.set_ylim(-0.04, 1.08)
        ax.set_xlabel(r"interface rate $I(J^*; Y)$  [bits]")
        ax.set_ylabel(r"$\mathrm{E}[Z]\,/\,\kappa$  (recovery obligations per $\kappa$)")
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=7)
        panel_label(ax, f"$n$ = {n}, $\\kappa$ = {kappa}, "
                        r"$\nu = \log_2((n-\kappa)/\kappa)$ = "
                        f"{math.log2((n - kappa) / kappa):.2f} bits")
        place_labels(ax, labels)  # last: the limits and every mark are final
        return save_figure(fig, out_dir, NAME)


def _param(r: Mapping[str, Any]) -> Any:
    """The interface's own parameter of a row: sigma, buckets or the gibbs target rate."""
    return next((r[k] for k in ("sigma", "buckets", "rate") if r.get(k) is not None), None)


def _mean_excess(table: TidyTable, interface: str) -> float:
    """Mean of E[Z]/kappa minus the frontier at the same rate over one family's points."""
    fr = table.where(series="frontier")
    rates, values = fr.column("rate_bits"), fr.column("value")
    pts = table.where(series="mc", interface=interface)
    if not len(pts):
        return float("nan")
    return float(np.mean(pts.column("value") - np.interp(pts.column("rate_bits"), rates, values)))


def caption(table: TidyTable) -> tuple[str, str]:
    n = int(table.values("n")[0])
    kappa = int(table.values("kappa")[0])
    g = table.where(series="mc", interface="gaussian")
    trials = int(np.nanmax(table.column("trials")))
    return (
        f"Make-room instance with n = {n}, kappa = {kappa}: expected recovery obligations "
        "per kappa against the interface rate, with Theorem 1's bound (dashed) and the exact "
        "optimal frontier (purple); Monte Carlo with 95% CIs.",
        f"Mean distance above the frontier: Gaussian channel {_mean_excess(table, 'gaussian'):.3f}"
        f" ({len(g)} sigmas, {trials} trials each), balanced buckets "
        f"{_mean_excess(table, 'buckets'):.3f}, Gibbs interface "
        f"{abs(_mean_excess(table, 'gibbs')):.3f} (it attains the frontier).",
    )


def checks(table: TidyTable) -> list[Check]:
    out = []
    n = int(table.values("n")[0])
    kappa = int(table.values("kappa")[0])
    top = math.log2(n)
    pts = [r for r in table.records() if r["series"] in ("mc", "engine")]
    viol_lb, viol_fr = [], []
    for r in pts:
        # The bounds decrease in I, so an estimated rate is given its 4-SE benefit.
        rate = min(top, r["rate_bits"] + 4 * (r["rate_bits_se"] or 0.0))
        lb = theory.makeroom_lower_bound(n, kappa, rate) / kappa
        fr = theory.optimal_mean_z(n, kappa, rate) / kappa
        if r["value"] + 4 * r["se"] < lb - 1e-12:
            viol_lb.append((r["interface"], _param(r), round(r["value"], 4), round(lb, 4)))
        if r["value"] + 4 * r["se"] < fr - 1e-9:
            viol_fr.append((r["interface"], _param(r), round(r["value"], 4), round(fr, 4)))
    out.append(Check(
        "fig4.above_thm1", "no simulated interface beats Theorem 1's lower bound "
        "(4 SE on E[Z] and on an estimated rate)",
        status_of(not viol_lb), f"{len(pts)} points; violations: {viol_lb[:3]}", "Theorem 1",
    ))
    out.append(Check(
        "fig4.above_frontier", "no simulated interface beats the exact optimal frontier "
        "(4 SE on E[Z] and on an estimated rate)",
        status_of(not viol_fr), f"{len(pts)} points; violations: {viol_fr[:3]}",
        "Theorem 1; exact frontier (theory/FRONTIER.md)",
    ))
    # A rate error bar wider than a quarter of [0, log2 n] cannot place a point on the
    # rate axis, and would let the two checks above pass vacuously.
    wide = [(r["interface"], _param(r), f"{r['rate_bits_se']:.3g}") for r in pts
            if not 0.0 <= (r["rate_bits_se"] or 0.0) <= top / 4]
    out.append(Check(
        "fig4.rate_se_plausible", "every estimated interface rate has a standard error below "
        "log2(n)/4 bits", status_of(not wide),
        f"{len(pts)} points; max rate SE {max((r['rate_bits_se'] or 0.0) for r in pts):.3g} bits; "
        f"implausible: {wide[:3]}", "Theorem 1 (rate axis)",
    ))
    exact = [r for r in pts if r["series"] == "mc" and r["exact"] is not None]
    if exact:
        zs = [(abs(r["value"] - r["exact"]) / r["se"] if r["se"] > 0 else
               (0.0 if r["value"] == r["exact"] else math.inf), r) for r in exact]
        worst, wr = max(zs, key=lambda z: z[0])
        out.append(Check(
            "fig4.mc_matches_exact", "Monte Carlo E[Z] agrees with the exact evaluator of each "
            "interface within 4 standard errors",
            status_of(worst <= 4.0),
            f"{len(zs)} points; max |z| = {worst:.2f} ({wr['interface']}, param={_param(wr)})",
            "Theorem 1 (exact E[Z] of ledger, blind, buckets, gibbs, Gaussian)",
        ))
    gibbs = [r for r in pts if r["interface"] == "gibbs" and r["series"] == "mc"]
    if gibbs:
        gz: list[float] = []
        for r in gibbs:
            fr = theory.optimal_mean_z(n, kappa, min(top, r["rate_bits"])) / kappa
            gz.append(abs(r["value"] - fr) / r["se"] if r["se"] > 0 else
                      (0.0 if abs(r["value"] - fr) < 1e-12 else math.inf))
        out.append(Check(
            "fig4.gibbs_on_frontier", "the Gibbs interface attains the optimal frontier at its "
            "rate (Monte Carlo within 4 SE)",
            status_of(max(gz) <= 4.0), f"{len(gz)} rates; max |z| = {max(gz):.2f}",
            "exact frontier (theory/FRONTIER.md)",
        ))
    return out


if __name__ == "__main__":  # python -m vistalab.figures.fig4_tradeoff [--quick] [--out DIR]
    from ._script import run_as_script

    raise SystemExit(run_as_script(NAME))
