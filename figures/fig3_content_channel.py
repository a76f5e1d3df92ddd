"""Figure 3 -- the content channel of Proposition 2 (Appendix A/C): the agent
sees W_j = ln s_j + N(0, sigma^2) for every block. Panel (a): I(J*;W) against
sigma for several kappa (Monte Carlo over the exact posterior, error bars of 2
standard errors) with the Proposition 2 bound ln2 (log2 kappa)^2 / sigma^2 and
its tighter form. Panel (b): I(J*;W) against n for fixed (kappa, sigma) stays
flat while the size ledger carries log2 n bits.
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
from ._registry import merge_params
from ._style import PALETTE, figure_style, new_figure, panel_label, save_figure
from ._table import TidyTable

NAME = "fig3_content_channel"
TITLE = "Content channel: size information from noisy content is bounded (Proposition 2)"
STOCHASTIC = True

_COLUMNS = ("panel", "series", "n", "kappa", "sigma", "value", "se", "trials", "exact")
_UNITS = {
    "panel": "a (against sigma) | b (against n)",
    "series": "mc | exact | prop2 | prop2-tight | ledger",
    "n": "number of blocks",
    "kappa": "size ratio L/l",
    "sigma": "log-size noise standard deviation",
    "value": "I(J*;W) in bits (bound rows: the bound; ledger: log2 n)",
    "se": "standard error of the Monte Carlo estimate, bits",
    "trials": "Monte Carlo trials",
    "exact": "exact I(J*;W) at the Monte Carlo point (theory.content_rate_exact), bits",
}


def default_params(quick: bool = False) -> dict[str, Any]:
    return {
        "n_a": 64,
        "kappas": [2, 4, 8],
        "sigma_range": [0.3, 4.0],
        "curve_points": 25 if quick else 60,
        "sigmas": ([0.35, 0.5, 0.71, 1.0, 1.41, 2.0, 2.83, 4.0] if quick else
                   [0.3, 0.35, 0.42, 0.5, 0.59, 0.71, 0.84, 1.0, 1.19, 1.41, 1.68, 2.0, 2.38,
                    2.83, 3.36, 4.0]),
        "kappa_b": 4,
        "sigma_b": 1.0,
        "log2_n_max_b": 30,
        "ns_b": [8, 32, 128, 512] if quick else [8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096],
        "trials": 400 if quick else 4000,
    }


def _params_iv(params: Mapping[str, Any] | None) -> dict[str, Any]:
    p = merge_params(NAME, default_params(), params)
    p["n_a"] = as_int("n_a", p["n_a"], lo=2)
    p["kappas"] = [as_int("kappa", k, lo=2) for k in p["kappas"]]
    lo, hi = (as_real("sigma_range", s, lo=0.0, lo_open=True) for s in p["sigma_range"])
    if not lo < hi:
        raise DomainError("sigma_range", p["sigma_range"], "must be [low, high] with low < high")
    p["sigma_range"] = [lo, hi]
    p["curve_points"] = as_int("curve_points", p["curve_points"], lo=2)
    p["sigmas"] = [as_real("sigma", s, lo=0.0, lo_open=True) for s in p["sigmas"]]
    p["kappa_b"] = as_int("kappa_b", p["kappa_b"], lo=2)
    p["sigma_b"] = as_real("sigma_b", p["sigma_b"], lo=0.0, lo_open=True)
    p["log2_n_max_b"] = as_int("log2_n_max_b", p["log2_n_max_b"], lo=4, hi=40)
    p["ns_b"] = [as_int("n", n, lo=2) for n in p["ns_b"]]
    p["trials"] = as_int("trials", p["trials"], lo=2)
    return p


def compute(params: Mapping[str, Any] | None = None, *,
            rng: np.random.Generator | None = None) -> TidyTable:
    """Exact rate and both bounds on fine grids; Monte Carlo at the listed points."""
    p = _params_iv(params)
    rng = np.random.default_rng(seed_sequence(rng))  # rng= as in vistalab._core.seed_sequence
    rows: list[dict[str, Any]] = []

    def exact_rows(panel: str, n: int, kap: int, s: float) -> None:
        base = {"panel": panel, "n": n, "kappa": kap, "sigma": s}
        rows.append({**base, "series": "exact", "value": theory.content_rate_exact(n, kap, s)})
        rows.append({**base, "series": "prop2", "value": theory.content_rate_bound(kap, s)})
        rows.append({**base, "series": "prop2-tight",
                     "value": theory.content_rate_bound_tight(n, kap, s)})
        if panel == "b":
            rows.append({**base, "series": "ledger", "value": math.log2(n)})

    lo, hi = p["sigma_range"]
    for kap in p["kappas"]:
        for s in np.geomspace(lo, hi, p["curve_points"]):
            exact_rows("a", p["n_a"], kap, float(s))
    for e in range(3, p["log2_n_max_b"] + 1):
        exact_rows("b", 2**e, p["kappa_b"], p["sigma_b"])
    jobs = ([("a", p["n_a"], kap, s) for kap in p["kappas"] for s in p["sigmas"]]
            + [("b", n, p["kappa_b"], p["sigma_b"]) for n in p["ns_b"]])
    streams = rng.spawn(len(jobs))
    for (panel, n, kap, s), stream in zip(jobs, streams, strict=False):
        est = sims.estimate_gaussian_rate(n, kap, s, trials=p["trials"], rng=stream)
        rows.append({"panel": panel, "n": n, "kappa": kap, "sigma": s, "series": "mc",
                     "value": float(est.bits), "se": float(est.se), "trials": int(est.trials),
                     "exact": theory.content_rate_exact(n, kap, s)})
    return TidyTable.from_records(rows, columns=_COLUMNS, units=_UNITS)


def plot(table: TidyTable, out_dir: str | Path) -> tuple[Path, Path]:
    colors = [PALETTE["blue"], PALETTE["vermillion"], PALETTE["green"], PALETTE["purple"],
              PALETTE["orange"]]
    a = table.where(panel="a")
    b = table.where(panel="b")
    with figure_style():
        fig, axes = new_figure(1, 2, width=8.2, height=4.4)
        ax, bx = axes[0]
        n_a = int(a.values("n")[0])
        for i, kap in enumerate(a.unique("kappa")):
            col = colors[i % len(colors)]
            for series, ls, lw in (("prop2", "-", 1.0), ("prop2-tight", "--", 1.0),
                                   ("exact", "-", 2.2)):
                t = a.where(kappa=kap, series=series)
                ax.plot(t.column("sigma"), t.column("value"), color=col, ls=ls, lw=lw,
                        alpha=0.55 if series != "exact" else 1.0)
            t = a.where(kappa=kap, series="mc")
            ax.errorbar(t.column("sigma"), t.column("value"), yerr=2 * t.column("se"),
                        fmt="o", color=col, ms=3.5, mfc="white", label=f"$\\kappa$ = {kap}")
        ax.plot([], [], color=PALETTE["grey"], lw=2.2, label=r"exact $I(J^*;W)$")
        ax.plot([], [], "o", color=PALETTE["grey"], mfc="white", label="Monte Carlo (2 SE)")
        ax.plot([], [], color=PALETTE["grey"], lw=1.0,
                label=r"Prop. 2: $\ln 2\,(\log_2\kappa)^2/\sigma^2$")
        ax.plot([], [], color=PALETTE["grey"], lw=1.0, ls="--",
                label=r"tighter: $(1-1/n)\ln 2\,(\log_2\kappa)^2/(2\sigma^2)$")
        ax.axhline(math.log2(n_a), color=PALETTE["black"], ls=":", lw=1)
        ax.text(float(np.nanmax(a.column("sigma"))), math.log2(n_a),
                f"ledger: $\\log_2 n$ = {math.log2(n_a):g}", ha="right", va="bottom", fontsize=7)
        ax.set_xscale("log")
        _plain_log_ticks(ax, a.column("sigma"))
        ax.set_ylim(0, math.log2(n_a) * 1.12)
        ax.set_xlabel(r"perception noise $\sigma$  (std. dev. of ln-size noise)")
        ax.set_ylabel(r"$I(J^*; W)$  [bits]")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2, fontsize=6.5)
        panel_label(ax, f"(a) against $\\sigma$, $n$ = {n_a}")

        kap_b, sig_b = int(b.values("kappa")[0]), float(b.values("sigma")[0])
        # One colour meaning per figure: the content channel keeps its kappa's colour
        # from (a), and the ledger is black as its dotted line in (a).
        kappas = list(a.unique("kappa"))
        kcol = colors[kappas.index(kap_b) % len(colors)] if kap_b in kappas else PALETTE["grey"]
        for series, col, ls, lw, label in (
            ("ledger", PALETTE["black"], ":", 1.8, r"size ledger: $\log_2 n$"),
            ("prop2", kcol, "-", 1.0, "Prop. 2 bound (flat in $n$)"),
            ("prop2-tight", kcol, "--", 1.0, "tighter bound"),
            ("exact", kcol, "-", 2.2, "content channel, exact"),
        ):
            t = b.where(series=series)
            bx.plot(t.column("n"), t.column("value"), color=col, ls=ls, lw=lw, label=label,
                    alpha=0.6 if series.startswith("prop2") else 1.0)
        t = b.where(series="mc")
        bx.errorbar(t.column("n"), t.column("value"), yerr=2 * t.column("se"), fmt="o",
                    color=kcol, ms=3.5, mfc="white",
                    label="content channel, Monte Carlo")
        bx.set_xscale("log", base=2)
        # log y: the ledger's log2 n and the flat content rate both stay readable
        bx.set_yscale("log", base=2)
        bx.set_ylim(0.5, 2 * float(np.nanmax(b.column("value"))))
        from matplotlib.ticker import FuncFormatter

        bx.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        bx.set_xlabel("number of blocks $n$")
        bx.set_ylabel("rate about the bulky block  [bits]")
        bx.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2, fontsize=6.5)
        panel_label(bx, f"(b) against $n$, $\\kappa$ = {kap_b}, $\\sigma$ = {sig_b:g}")
        return save_figure(fig, out_dir, NAME)


def _plain_log_ticks(ax: Any, values: np.ndarray) -> None:
    """Major ticks at round numbers inside the data range, no minor labels."""
    from matplotlib.ticker import FixedLocator, NullFormatter, ScalarFormatter

    lo, hi = float(np.nanmin(values)), float(np.nanmax(values))
    ticks = [t for t in (0.1, 0.2, 0.3, 0.5, 1, 2, 3, 5, 10, 20) if lo <= t <= hi]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())


def caption(table: TidyTable) -> tuple[str, str]:
    b = table.where(panel="b", series="exact")
    n_max = int(np.nanmax(b.column("n")))
    exact = float(b.where(n=n_max).column("value")[0])
    bound = float(table.where(panel="b", series="prop2").column("value")[0])
    return (
        "Information a noisy content channel W_j = ln s_j + N(0, sigma^2) carries about the "
        "bulky block: exact rate (thick), Monte Carlo (circles, 2 SE), Proposition 2's bound "
        "(thin) and its tighter form (dashed).",
        f"For fixed (kappa, sigma) the rate saturates ({exact:.3f} bits at n = 2^"
        f"{int(round(math.log2(n_max)))}) below the bound {bound:.3f} bits, while a size "
        "ledger's log2 n grows without limit.",
    )


def checks(table: TidyTable) -> list[Check]:
    out = []
    mc = table.where(series="mc").records()
    for fn, claim_id, name, where in (
        (lambda r: theory.content_rate_bound(r["kappa"], r["sigma"]), "fig3.mc_below_prop2",
         "Proposition 2 bound", "Proposition 2"),
        (lambda r: theory.content_rate_bound_tight(r["n"], r["kappa"], r["sigma"]),
         "fig3.mc_below_prop2_tight", "tighter Proposition 2 bound",
         "Proposition 2 (tighter product-Gaussian reference)"),
    ):
        zs = [((r["value"] - min(fn(r), math.log2(r["n"]))) / max(r["se"], 1e-12), r)
              for r in mc]
        worst, wr = max(zs, key=lambda z: z[0])
        out.append(Check(
            claim_id,
            f"every Monte Carlo estimate of I(J*;W) stays below the {name} (capped at "
            "log2 n) within 4 standard errors",
            status_of(worst <= 4.0),
            f"{len(zs)} points; max (estimate - bound)/SE = {worst:.2f} at n={wr['n']}, "
            f"kappa={wr['kappa']}, sigma={wr['sigma']:g}",
            where,
        ))
    zs = [(abs(r["value"] - r["exact"]) / max(r["se"], 1e-12), r) for r in mc]
    worst, wr = max(zs, key=lambda z: z[0])
    # An error bar wider than a quarter of the rate range [0, log2 n] would make any
    # estimate "agree": such a standard error is itself a failure.
    wide = [(r["n"], r["kappa"], r["sigma"], f"{r['se']:.3g}") for r in mc
            if not 0.0 <= r["se"] <= math.log2(r["n"]) / 4]
    out.append(Check(
        "fig3.mc_matches_exact",
        "Monte Carlo estimates of I(J*;W) agree with the exact quadrature within 4 standard "
        "errors, with standard errors below log2(n)/4",
        status_of(worst <= 4.0 and not wide),
        f"{len(zs)} points; max |z| = {worst:.2f} at n={wr['n']}, kappa={wr['kappa']}, "
        f"sigma={wr['sigma']:g}; implausible SEs (n, kappa, sigma, se): {wide[:3]}",
        "Proposition 2 (exact channel rate)",
    ))
    ex = table.where(series="exact").records()
    over = []
    for r in ex:
        tight = table.where(series="prop2-tight", panel=r["panel"], n=r["n"], kappa=r["kappa"],
                            sigma=r["sigma"]).values("value")[0]
        assert isinstance(tight, float)
        if r["value"] > tight + 1e-9:
            over.append((r["n"], r["kappa"], round(r["sigma"], 3), round(r["value"], 5),
                         round(tight, 5)))
    out.append(Check(
        "fig3.exact_below_tight_bound",
        "the exact rate never exceeds the tighter bound (1-1/n) ln2 (log2 kappa)^2/(2 sigma^2), "
        "hence never the paper's bound",
        status_of(not over),
        f"{len(ex)} grid points; violations (n, kappa, sigma, exact, bound): {over[:3]}",
        "Proposition 2",
    ))
    b = table.where(panel="b", series="exact")
    ns = sorted(int(v) for v in b.column("n"))
    top, prev = (float(b.where(n=n).column("value")[0]) for n in (ns[-1], ns[-2]))
    bound = float(table.where(panel="b", series="prop2").column("value")[0])
    ok = top <= bound and math.log2(ns[-1]) > bound and abs(top - prev) < 1e-3
    out.append(Check(
        "fig3.flat_in_n",
        "for fixed (kappa, sigma) the content rate converges to a constant below the bound, "
        "while log2 n (the ledger) exceeds it",
        status_of(ok),
        f"exact I = {prev:.6f} at n={ns[-2]}, {top:.6f} at n={ns[-1]} (change < 1e-3); "
        f"bound {bound:.4f}; log2 n = {math.log2(ns[-1]):.1f}",
        "Proposition 2 (constant in n)",
    ))
    return out


if __name__ == "__main__":  # python -m vistalab.figures.fig3_content_channel [--quick] [--out DIR]
    from ._script import run_as_script

    raise SystemExit(run_as_script(NAME))
