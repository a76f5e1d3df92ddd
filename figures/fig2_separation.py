"""Figure 2 -- asymptotic separation of Proposition 1 (Appendix B, "Asymptotic
separation"): with k = ceil(sqrt N) bits per block and a budget B = c N log2 N
bits, the non-recovering bound B/(Nk) + 1/k falls to 0 as N grows while the
recovering method stays feasible (N handles + one block fit in B) and succeeds
with probability 1.

Panel (a): success probability against N -- the bound for several c, Monte
Carlo of the best non-recovering strategy (keep whole blocks) and of the
recovering method. Panel (b): the share of B the recovering method needs.
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

NAME = "fig2_separation"
TITLE = "Asymptotic separation: the lossy bound vanishes, recovery stays feasible"
STOCHASTIC = True

_COLUMNS = ("series", "N", "c", "k", "budget_bits", "value", "ci_low", "ci_high",
            "feasible", "used_share", "trials")
_UNITS = {
    "series": "bound | recover-theory | keep-blocks-mc | recover-mc",
    "N": "number of evidence blocks",
    "c": "budget constant: B = c N log2 N",
    "k": "bits per block, ceil(sqrt N)",
    "budget_bits": "prompt budget B in bits",
    "value": "success probability (bound: min(1, B/(Nk) + 1/k))",
    "ci_low": "95% exact binomial CI, lower (Monte Carlo rows)",
    "ci_high": "95% exact binomial CI, upper (Monte Carlo rows)",
    "feasible": "instruction + N handles + one block fit in B",
    "used_share": "(N handles + one block) / B for the recovering method",
    "trials": "Monte Carlo trials (empty for exact rows)",
}
_SERIES = ("bound", "recover-theory", "keep-blocks-mc", "recover-mc")


def default_params(quick: bool = False) -> dict[str, Any]:
    """N from 4 to 2^30 for the exact curves; Monte Carlo at small N only."""
    return {
        "log2_N_max": 30,
        "points_per_octave": 1 if quick else 2,
        "c_values": [2.0, 4.0, 8.0],
        "c0": 1.0,
        "mc_N": [16, 64, 256] if quick else [16, 64, 256, 1024],
        "mc_trials": 400 if quick else 4000,
    }


def _params_iv(params: Mapping[str, Any] | None) -> dict[str, Any]:
    p = merge_params(NAME, default_params(), params)
    p["log2_N_max"] = as_int("log2_N_max", p["log2_N_max"], lo=3, hi=60)
    p["points_per_octave"] = as_int("points_per_octave", p["points_per_octave"], lo=1, hi=16)
    p["c0"] = as_real("c0", p["c0"], lo=0.0, lo_open=True)
    cs = [as_real("c", c, lo=0.0, lo_open=True) for c in p["c_values"]]
    if not cs:
        raise DomainError("c_values", p["c_values"], "must list at least one c")
    p["c_values"] = cs
    p["mc_N"] = [as_int("mc_N", n, lo=2, hi=1 << 16) for n in p["mc_N"]]
    p["mc_trials"] = as_int("mc_trials", p["mc_trials"], lo=1)
    return p


def compute(params: Mapping[str, Any] | None = None, *,
            rng: np.random.Generator | None = None) -> TidyTable:
    """Exact curves from theory.asymptotic_separation; Monte Carlo from sims."""
    p = _params_iv(params)
    rng = np.random.default_rng(seed_sequence(rng))  # rng= as in vistalab._core.seed_sequence
    rows: list[dict[str, Any]] = []
    steps = p["log2_N_max"] * p["points_per_octave"]
    grid = sorted({int(round(2 ** (2 + i / p["points_per_octave"])))
                   for i in range(0, steps - 2 * p["points_per_octave"] + 1)})
    cost = theory.HandleCostModel(c0=p["c0"])
    for c in p["c_values"]:
        for N in grid:
            pt = theory.asymptotic_separation(N, c, c0=p["c0"])
            feas = theory.recovery_feasibility(pt.N, pt.k, pt.budget, cost=cost)
            base = {"N": pt.N, "c": c, "k": pt.k, "budget_bits": float(pt.budget),
                    "feasible": bool(pt.feasible),
                    "used_share": float(feas.required) / float(pt.budget)}
            rows.append({**base, "series": "bound", "value": min(1.0, float(pt.lossy_bound))})
            rows.append({**base, "series": "recover-theory",
                         "value": 1.0 if pt.feasible else 0.0})
    # One independent stream per Monte Carlo point, in a fixed order, so each
    # point's numbers do not depend on which other points are computed.
    mc_points = [(c, N, s) for c in p["c_values"] for N in p["mc_N"]
                 for s in ("keep-blocks", "recover")]
    streams = rng.spawn(len(mc_points))
    for (c, N, strategy), stream in zip(mc_points, streams, strict=False):
        k = math.ceil(math.sqrt(N))
        budget = c * N * math.log2(N)
        res = sims.simulate_recovery(N, k, budget, strategy, trials=p["mc_trials"],
                                     rng=stream, handle_cost=p["c0"])
        feas = theory.recovery_feasibility(N, k, budget, cost=cost)
        lo, hi = res.success_ci
        rows.append({"series": f"{strategy}-mc", "N": N, "c": c, "k": k,
                     "budget_bits": float(budget), "value": float(res.success),
                     "ci_low": float(lo), "ci_high": float(hi), "feasible": bool(feas.feasible),
                     "used_share": float(feas.required) / float(budget),
                     "trials": int(res.trials)})
    return TidyTable.from_records(rows, columns=_COLUMNS, units=_UNITS)


def plot(table: TidyTable, out_dir: str | Path) -> tuple[Path, Path]:
    colors = [PALETTE["blue"], PALETTE["vermillion"], PALETTE["green"], PALETTE["purple"]]
    with figure_style():
        fig, axes = new_figure(1, 2, width=7.6, height=4.0)
        ax, bx = axes[0]
        cs = table.where(series="bound").unique("c")
        for i, c in enumerate(cs):
            col = colors[i % len(colors)]
            b = table.where(series="bound", c=c)
            ax.plot(b.column("N"), b.column("value"), color=col,
                    label=f"Prop. 1 bound, $c$ = {c:g}")
            mc = table.where(series="keep-blocks-mc", c=c)
            if len(mc):
                y = mc.column("value")
                err = np.vstack([y - mc.column("ci_low"), mc.column("ci_high") - y])
                ax.errorbar(mc.column("N"), y, yerr=err, fmt="o", color=col, ms=4,
                            mfc="white", label=f"keep whole blocks (MC), $c$ = {c:g}")
            r = table.where(series="recover-theory", c=c)
            bx.plot(r.column("N"), r.column("used_share"), color=col, label=f"$c$ = {c:g}")
        rt = table.where(series="recover-theory")
        feasible_all = table.where(series="recover-theory", feasible=True)
        if len(feasible_all):
            n_lo = float(np.nanmin(feasible_all.column("N")))
            n_hi = float(np.nanmax(rt.column("N")))
            ax.plot([n_lo, n_hi], [1.0, 1.0], color=PALETTE["black"], lw=2.2,
                    label="recovering method (feasible: success 1)")
        rmc = table.where(series="recover-mc")
        if len(rmc):
            # Hollow and larger than the keep-blocks circles it may sit on.
            ax.plot(rmc.column("N"), rmc.column("value"), "D", color=PALETTE["black"], ms=8,
                    mfc="none", mew=1.2, label="recovering method (MC)", zorder=4)
        ax.set_xscale("log", base=2)
        ax.set_ylim(-0.03, 1.08)
        ax.set_xlabel(r"number of blocks $N$  ($k = \lceil\sqrt{N}\,\rceil$ bits each)")
        ax.set_ylabel("success probability")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2, fontsize=6.5)
        panel_label(ax, r"(a) non-recovering bound $\rightarrow 0$")
        bx.axhline(1.0, color=PALETTE["grey"], ls="--", lw=1)
        bx.text(float(np.nanmin(rt.column("N"))), 1.02, "budget $B$", color=PALETTE["grey"],
                fontsize=7, va="bottom")
        bx.set_xscale("log", base=2)
        bx.set_ylim(0, 1.15)
        bx.set_xlabel("number of blocks $N$")
        bx.set_ylabel(r"($N$ handles + one block) / $B$")
        bx.legend(title=r"$B = c\,N\log_2 N$ bits", loc="upper right", bbox_to_anchor=(1.0, 0.84))
        panel_label(bx, "(b) recovering method stays within $B$")
        return save_figure(fig, out_dir, NAME)


def caption(table: TidyTable) -> tuple[str, str]:
    b = table.where(series="bound")
    n_max = int(np.nanmax(b.column("N")))
    worst = float(np.nanmax(b.where(N=n_max).column("value")))
    share = float(np.nanmax(table.where(series="recover-theory").column("used_share")))
    rmc = table.where(series="recover-mc")
    wins = int(round(float(np.nansum(rmc.column("value") * rmc.column("trials")))))
    total = int(np.nansum(rmc.column("trials")))
    rec = f"; simulated, it succeeded in {wins} of {total} trials" if len(rmc) else ""
    return (
        "Proposition 1 at k = ceil(sqrt N), B = c N log2 N: the success bound of every "
        "non-recovering method (lines; Monte Carlo of keep-whole-blocks as circles with 95% "
        "CIs) against the recovering method, which needs N handles plus one block.",
        f"At N = 2^{int(round(math.log2(n_max)))} the bound is at most {worst:.3g} for every c "
        f"shown, while the recovering method never needs more than {share:.2f} of B{rec}.",
    )


def checks(table: TidyTable) -> list[Check]:
    out: list[Check] = []
    b = table.where(series="bound")
    n_max = float(np.nanmax(b.column("N")))
    tail = [float(b.where(N=int(n_max), c=c).column("value")[0]) for c in b.unique("c")]
    out.append(Check(
        "fig2.bound_vanishes",
        "the non-recovering bound B/(Nk)+1/k decreases toward 0 along k = ceil(sqrt N), "
        "B = c N log2 N",
        status_of(max(tail) < 0.05 and all(
            np.all(np.diff(b.where(c=c).column("value")[-8:]) <= 1e-12)
            for c in b.unique("c"))),
        f"bound at N={int(n_max)}: max over c = {max(tail):.4g} (threshold 0.05); "
        "and non-increasing over the last 8 grid points for every c",
        "Appendix B, Asymptotic separation",
    ))
    rt = table.where(series="recover-theory")
    big_c = rt.unique("c")
    infeasible = [(r["N"], r["c"]) for r in rt.records() if not r["feasible"]]
    out.append(Check(
        "fig2.recover_feasible",
        "the recovering method's N handles plus one block fit in B = c N log2 N "
        "(c > c0) at every N",
        status_of(not infeasible),
        f"{len(rt)} grid points for c in {big_c}; infeasible at {infeasible[:3]}; "
        f"max share of B used = {float(np.nanmax(rt.column('used_share'))):.3g}",
        "Proposition 1; Appendix B",
    ))
    mc = table.where(series="keep-blocks-mc")
    if len(mc):
        bad = []
        for r in mc.records():
            bound = min(1.0, r["budget_bits"] / (r["N"] * r["k"]) + 1.0 / r["k"])
            if r["ci_low"] > bound:
                bad.append((r["N"], r["c"], r["value"], bound))
        out.append(Check(
            "fig2.mc_below_bound",
            "Monte Carlo success of keep-whole-blocks never exceeds Proposition 1's bound "
            "beyond its 95% CI",
            status_of(not bad),
            f"{len(mc)} points; violations (N, c, estimate, bound): {bad[:3]}",
            "Proposition 1",
        ))
    rmc = table.where(series="recover-mc")
    if len(rmc):
        wrong = [(r["N"], r["c"], r["value"]) for r in rmc.records()
                 if r["feasible"] and r["value"] != 1.0]
        out.append(Check(
            "fig2.recover_mc_one",
            "the simulated recovering method succeeds in every trial where it is feasible",
            status_of(not wrong),
            f"{len(rmc)} points, {int(np.nansum(rmc.column('trials')))} trials; "
            f"points below 1: {wrong[:3]}",
            "Proposition 1",
        ))
    return out


if __name__ == "__main__":  # python -m vistalab.figures.fig2_separation [--quick] [--out DIR]
    from ._script import run_as_script

    raise SystemExit(run_as_script(NAME))
