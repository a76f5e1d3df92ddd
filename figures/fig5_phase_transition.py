"""Figure 5 -- the phase transition of Theorem 1 as the workspace grows.
Panel (a): E[Z]/kappa against n for a fixed Gaussian content channel (exact
evaluator and Monte Carlo), which tends to 1, and for the ledger, which stays
at 0, with Theorem 1's bound and the optimal frontier evaluated at the
channel's exact rate (theory.content_rate_exact). Panel (b): the rate needed
for E[Z] <= delta kappa: the necessary rate (1-delta)nu - 1, the balanced
buckets' sufficient rate, and the exact frontier's rate, against the content
channel's (constant) exact rate.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
from vistalab.theory._validate import as_int, as_real

from vistalab import sims, theory
from vistalab._core import seed_sequence

from ._checks import Check, status_of
from ._registry import merge_params
from ._style import PALETTE, figure_style, new_figure, panel_label, save_figure
from ._table import TidyTable

NAME = "fig5_phase_transition"
TITLE = "Phase transition: a fixed content channel loses as n grows, the ledger does not"
STOCHASTIC = True

_COLUMNS = ("panel", "series", "n", "kappa", "sigma", "delta", "value", "ci_low", "ci_high",
            "se", "exact", "trials")
_UNITS = {
    "panel": "a (E[Z]/kappa against n) | b (rates against n)",
    "series": "a: gaussian-exact, gaussian-mc, ledger-mc, blind, thm1-at-rate, frontier-at-rate;"
              " b: necessary, sufficient-buckets, frontier, content-rate, ledger",
    "n": "number of blocks",
    "kappa": "size ratio L/l",
    "sigma": "content-channel noise",
    "delta": "target E[Z] <= delta kappa (panel b)",
    "value": "panel a: E[Z]/kappa; panel b: rate in bits",
    "ci_low": "95% CI, lower (Monte Carlo rows)",
    "ci_high": "95% CI, upper (Monte Carlo rows)",
    "se": "standard error (Monte Carlo rows)",
    "exact": "exact E[Z]/kappa at the same n (Monte Carlo rows)",
    "trials": "Monte Carlo trials",
}


def default_params(quick: bool = False) -> dict[str, Any]:
    return {
        "kappa": 4,
        "sigma": 1.0,
        "log10_n_max": 9,
        "points_per_decade": 2 if quick else 4,
        "mc_n": [16, 256, 4096] if quick else [16, 64, 256, 1024, 4096, 16384, 65536],
        "trials": 2000 if quick else 40000,
        "deltas": [0.5] if quick else [0.25, 0.5],
    }


def _params_iv(params: Mapping[str, Any] | None) -> dict[str, Any]:
    p = merge_params(NAME, default_params(), params)
    p["kappa"] = as_int("kappa", p["kappa"], lo=2)
    p["sigma"] = as_real("sigma", p["sigma"], lo=0.0, lo_open=True)
    p["log10_n_max"] = as_int("log10_n_max", p["log10_n_max"], lo=2, hi=9)
    p["points_per_decade"] = as_int("points_per_decade", p["points_per_decade"], lo=1, hi=20)
    p["mc_n"] = [as_int("n", n, lo=2 * p["kappa"] + 1) for n in p["mc_n"]]
    p["trials"] = as_int("trials", p["trials"], lo=2)
    p["deltas"] = [as_real("delta", d, lo=0.0, hi=1.0, lo_open=True, hi_open=True)
                   for d in p["deltas"]]
    return p


def _n_grid(kappa: int, log10_max: int, per_decade: int) -> list[int]:
    lo = math.log10(4 * kappa)
    count = int(math.ceil((log10_max - lo) * per_decade)) + 1
    return sorted({int(round(10 ** x)) for x in np.linspace(lo, log10_max, count)})


def compute(params: Mapping[str, Any] | None = None, *,
            rng: np.random.Generator | None = None) -> TidyTable:
    p = _params_iv(params)
    rng = np.random.default_rng(seed_sequence(rng))  # rng= as in vistalab._core.seed_sequence
    kappa, sigma = p["kappa"], p["sigma"]
    rows: list[dict[str, Any]] = []
    for n in _n_grid(kappa, p["log10_n_max"], p["points_per_decade"]):
        base = {"n": n, "kappa": kappa, "sigma": sigma}
        rate = theory.content_rate_exact(n, kappa, sigma)
        rows.append({**base, "panel": "a", "series": "gaussian-exact",
                     "value": sims.gaussian_exact_mean_z(n, kappa, sigma) / kappa})
        rows.append({**base, "panel": "a", "series": "blind",
                     "value": theory.blind_mean_z(n, kappa) / kappa})
        rows.append({**base, "panel": "a", "series": "thm1-at-rate",
                     "value": theory.makeroom_lower_bound(n, kappa, rate) / kappa})
        rows.append({**base, "panel": "a", "series": "frontier-at-rate",
                     "value": theory.optimal_mean_z(n, kappa, rate) / kappa})
        rows.append({**base, "panel": "b", "series": "content-rate", "value": rate})
        rows.append({**base, "panel": "b", "series": "ledger", "value": math.log2(n)})
        for d in p["deltas"]:
            bd = {**base, "panel": "b", "delta": d}
            rows.append({**bd, "series": "necessary", "value": theory.threshold_rate(n, kappa, d)})
            rows.append({**bd, "series": "sufficient-buckets",
                         "value": theory.bucket_sufficient_rate(n, kappa, d)})
            rows.append({**bd, "series": "frontier",
                         "value": theory.optimal_rate(n, kappa, d * kappa)})
    jobs = [(name, n) for name in ("gaussian", "ledger") for n in p["mc_n"]]
    streams = rng.spawn(len(jobs))
    for (name, n), stream in zip(jobs, streams, strict=False):
        kw = {"sigma": sigma} if name == "gaussian" else {}
        exact = sims.gaussian_exact_mean_z(n, kappa, sigma) / kappa if name == "gaussian" else 0.0
        iface = sims.make_interface(name, n=n, kappa=kappa, **kw)
        res = sims.simulate_makeroom(n, kappa, iface, trials=p["trials"], rng=stream)
        lo, hi = res.mean_z_ci
        counts = np.asarray(res.z_counts, dtype=float)
        z = np.arange(counts.size, dtype=float)
        tot = counts.sum()
        var = float((counts * (z - z @ counts / tot) ** 2).sum() / max(tot - 1, 1))
        rows.append({"panel": "a", "series": f"{name}-mc", "n": n, "kappa": kappa,
                     "sigma": sigma if name == "gaussian" else None,
                     "value": float(res.mean_z) / kappa, "ci_low": float(lo) / kappa,
                     "ci_high": float(hi) / kappa, "se": math.sqrt(var / tot) / kappa,
                     "exact": exact, "trials": int(res.trials)})
    return TidyTable.from_records(rows, columns=_COLUMNS, units=_UNITS)


def plot(table: TidyTable, out_dir: str | Path) -> tuple[Path, Path]:
    a = table.where(panel="a")
    b = table.where(panel="b")
    kappa = int(table.values("kappa")[0])
    sigma = float(a.where(series="gaussian-exact").values("sigma")[0])
    with figure_style():
        fig, axes = new_figure(1, 2, width=8.0, height=4.6)
        ax, bx = axes[0]
        g = a.where(series="gaussian-exact")
        ax.plot(g.column("n"), g.column("value"), color=PALETTE["blue"], lw=2,
                label=f"Gaussian channel, exact ($\\sigma$ = {sigma:g})")
        gm = a.where(series="gaussian-mc")
        if len(gm):
            y = gm.column("value")
            ax.errorbar(gm.column("n"), y,
                        yerr=np.vstack([y - gm.column("ci_low"), gm.column("ci_high") - y]),
                        fmt="o", color=PALETTE["blue"], mfc="white", ms=4,
                        label="Gaussian channel, Monte Carlo")
        bl = a.where(series="blind")
        ax.plot(bl.column("n"), bl.column("value"), color=PALETTE["orange"], lw=1.2, ls="-.",
                label="size-blind ($I = 0$)")
        t1 = a.where(series="thm1-at-rate")
        ax.plot(t1.column("n"), t1.column("value"), color=PALETTE["black"], lw=1.4, ls="--",
                label="Theorem 1 bound at the channel's rate")
        fc = a.where(series="frontier-at-rate")
        ax.plot(fc.column("n"), fc.column("value"), color=PALETTE["purple"], lw=1.4,
                label="optimal frontier at the channel's rate")
        ax.plot(g.column("n"), np.zeros(len(g)), color=PALETTE["vermillion"], lw=1.2,
                label="full ledger, exact ($Z = 0$)")
        lm = a.where(series="ledger-mc")
        if len(lm):
            ax.plot(lm.column("n"), lm.column("value"), "*", color=PALETTE["vermillion"], ms=8,
                    label="full ledger, Monte Carlo")
        ax.set_xscale("log")
        ax.set_ylim(-0.04, 1.08)
        ax.set_xlabel("number of blocks $n$")
        ax.set_ylabel(r"$\mathrm{E}[Z]\,/\,\kappa$")
        # Legends sit under their panels, outside the data.
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, fontsize=6.5)
        panel_label(ax, f"(a) recovery obligations, $\\kappa$ = {kappa}")

        deltas = [d for d in b.unique("delta") if d is not None]
        dash = ["-", "--", ":"]
        for i, d in enumerate(deltas):
            ls = dash[i % len(dash)]
            for series, col, label in (
                ("necessary", PALETTE["black"], r"necessary $(1-\delta)\nu - 1$"),
                ("frontier", PALETTE["purple"], "exact frontier rate"),
                ("sufficient-buckets", PALETTE["green"], "sufficient (buckets)"),
            ):
                t = b.where(series=series, delta=d)
                bx.plot(t.column("n"), t.column("value"), color=col, ls=ls,
                        label=f"{label}, $\\delta$ = {d:g}")
        cap = b.where(series="content-rate")
        bx.plot(cap.column("n"), cap.column("value"), color=PALETTE["blue"], lw=2,
                label=f"Gaussian content channel's rate, $\\sigma$ = {sigma:g}")
        lg = b.where(series="ledger")
        bx.plot(lg.column("n"), lg.column("value"), color=PALETTE["vermillion"], lw=1.2,
                label=r"ledger: $\log_2 n$")
        bx.set_xscale("log")
        bx.set_ylim(bottom=0)
        bx.set_xlabel("number of blocks $n$")
        bx.set_ylabel(r"rate for $\mathrm{E}[Z] \leq \delta\kappa$  [bits]")
        bx.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, fontsize=6.5)
        panel_label(bx, "(b) necessary vs sufficient rate")
        return save_figure(fig, out_dir, NAME)


def caption(table: TidyTable) -> tuple[str, str]:
    g = table.where(panel="a", series="gaussian-exact")
    n_max = int(np.nanmax(g.column("n")))
    v_max = float(g.where(n=n_max).column("value")[0])
    v_min = float(g.column("value")[0])
    n_min = int(g.column("n")[0])
    return (
        "Theorem 1's phase transition: a content channel with fixed (kappa, sigma) carries a "
        "bounded rate, so its recovery obligations E[Z]/kappa rise toward 1 as n grows, "
        "while the ledger stays at 0.",
        f"Exact E[Z]/kappa of the Gaussian channel goes from {v_min:.4f} at n = {n_min} to "
        f"{v_max:.4f} at n = 10^{math.log10(n_max):.0f}; (b): the necessary and sufficient "
        "rates grow like log2(n/kappa), the content channel's rate stays flat.",
    )


def checks(table: TidyTable) -> list[Check]:
    out = []
    a = table.where(panel="a")
    g = {r["n"]: r["value"] for r in a.where(series="gaussian-exact").records()}
    t1 = {r["n"]: r["value"] for r in a.where(series="thm1-at-rate").records()}
    fc = {r["n"]: r["value"] for r in a.where(series="frontier-at-rate").records()}
    below = [(n, round(g[n], 5), round(fc[n], 5)) for n in g if g[n] < fc[n] - 1e-9]
    below += [(n, round(g[n], 5), round(t1[n], 5)) for n in g if g[n] < t1[n] - 1e-9]
    out.append(Check(
        "fig5.gaussian_above_bounds",
        "the exact E[Z] of the Gaussian channel is at least Theorem 1's bound and the optimal "
        "frontier evaluated at the channel's exact rate, at every n",
        status_of(not below), f"{len(g)} values of n; violations (n, E[Z]/kappa, bound): "
        f"{below[:3]}", "Theorem 1 + Proposition 2 (exact channel rate)",
    ))
    ns = sorted(g)
    vals = [g[n] for n in ns]
    rising = all(b2 >= b1 - 1e-9 for b1, b2 in zip(vals, vals[1:], strict=False))
    out.append(Check(
        "fig5.gaussian_tends_to_one",
        "the Gaussian channel's E[Z]/kappa increases with n toward 1 (Theorem 1, endpoint (i))",
        status_of(rising and vals[-1] > vals[0] and vals[-1] >= t1[ns[-1]]),
        f"E[Z]/kappa = {vals[0]:.4f} at n={ns[0]} -> {vals[-1]:.4f} at n={ns[-1]}; "
        f"Theorem 1 bound at n={ns[-1]}: {t1[ns[-1]]:.4f}; monotone: {rising}",
        "Theorem 1, Corollary (i)",
    ))
    mc = a.where(series="gaussian-mc").records()
    if mc:
        zs = [(abs(r["value"] - r["exact"]) / r["se"] if r["se"] > 0 else math.inf, r["n"])
              for r in mc]
        worst = max(zs)
        out.append(Check(
            "fig5.mc_matches_exact",
            "Monte Carlo E[Z] of the Gaussian channel agrees with the exact evaluator within "
            "4 standard errors",
            status_of(worst[0] <= 4.0), f"{len(zs)} values of n; max |z| = {worst[0]:.2f} at "
            f"n = {worst[1]}", "Theorem 1 (Gaussian channel exact E[Z])",
        ))
    led = a.where(series="ledger-mc").records()
    if led:
        out.append(Check(
            "fig5.ledger_zero", "the full ledger never archives a load-bearing block (Z = 0)",
            status_of(all(r["value"] == 0.0 for r in led)),
            f"{len(led)} values of n; max E[Z]/kappa = {max(r['value'] for r in led):g}",
            "Theorem 1, Corollary (i)",
        ))
    b = table.where(panel="b")
    bad = []
    for d in [d for d in b.unique("delta") if d is not None]:
        nec = {r["n"]: r["value"] for r in b.where(series="necessary", delta=d).records()}
        fro = {r["n"]: r["value"] for r in b.where(series="frontier", delta=d).records()}
        suf = {r["n"]: r["value"] for r in b.where(series="sufficient-buckets", delta=d).records()}
        for n in nec:
            if not (nec[n] <= fro[n] + 1e-9 and fro[n] <= suf[n] + 1e-9):
                bad.append((d, n, round(nec[n], 4), round(fro[n], 4), round(suf[n], 4)))
    out.append(Check(
        "fig5.rate_sandwich",
        "necessary rate (1-delta)nu - 1 <= exact frontier rate <= balanced buckets' sufficient "
        "rate, at every n and delta",
        status_of(not bad), f"{len(b.where(series='necessary'))} (n, delta) points; "
        f"violations (delta, n, nec, frontier, suff): {bad[:3]}",
        "Theorem 1 (ii) and Appendix D (D)",
    ))
    return out



if __name__ == "__main__":  # python -m vistalab.figures.fig5_phase_transition [--quick] [--out DIR]
    from ._script import run_as_script

    raise SystemExit(run_as_script(NAME))
