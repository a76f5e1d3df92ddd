"""Figure 6 -- the paper's empirical results re-plotted from its tables, read
through ``paper_checks.load_table`` (the numbers are never retyped here):
(a-c) the LOCA pressure sweep (success, steps and tokens against context size,
VISTA vs ReAct; Table 9), (d) the main results on the three benchmarks
(Table 1), (e) the ablation's archive/read events and tasks solved
(Section 3.7 text), (f) the cache-aware cost per task (Table 2), decomposed
with the stated token prices.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from vistalab import paper_checks as pc

from ._checks import Check, status_of
from ._registry import merge_params
from ._style import PALETTE, figure_style, panel_label, save_figure
from ._table import TidyTable

NAME = "fig6_paper_tables"
TITLE = "The paper's empirical results, re-plotted from its tables"
STOCHASTIC = False

_COLUMNS = ("panel", "table", "label", "id", "group", "context_k_tokens", "metric", "value",
            "derived")
_UNITS = {
    "panel": "pressure | main | ablation | cost",
    "table": "paper_checks table key the value comes from",
    "label": "method or variant as printed",
    "id": "stable method/variant identifier",
    "group": "row group of Table 1 (main panel)",
    "context_k_tokens": "context-growth setting in K tokens (pressure panel)",
    "metric": "column of the paper's table, or cost_* for the price decomposition",
    "value": "the printed number (derived rows: computed from printed numbers and prices)",
    "derived": "True when computed here from printed numbers, False when printed",
}
_PRESSURE = ("success", "steps", "tokens_m")
_BENCH = (("loca_acc", "LOCA-Bench"), ("bcp_acc", "BrowseComp-Plus"), ("gaia_acc", "GAIA"))


def default_params(quick: bool = False) -> dict[str, Any]:
    # Deterministic: the same tables in quick and default runs.
    return {"tables": ["loca_pressure", "main_results", "ablation", "cache_cost"]}


def _params_iv(params: Mapping[str, Any] | None) -> dict[str, Any]:
    return merge_params(NAME, default_params(), params)


def compute(params: Mapping[str, Any] | None = None, *,
            rng: np.random.Generator | None = None) -> TidyTable:
    """Flatten the four tables into one tidy table (``rng`` is unused)."""
    _params_iv(params)
    rows: list[dict[str, Any]] = []
    press = pc.load_table("loca_pressure")
    for r in press.rows:
        for m in _PRESSURE:
            rows.append({"panel": "pressure", "table": press.key, "label": r["method"],
                         "id": r["method_id"], "context_k_tokens": r["setting_k"], "metric": m,
                         "value": r[m], "derived": False})
    main = pc.load_table("main_results")
    for r in main.rows:
        for m, _ in _BENCH:
            rows.append({"panel": "main", "table": main.key, "label": r["method"],
                         "id": r["method_id"], "group": r["group"], "metric": m,
                         "value": r.get(m), "derived": False})
    abl = pc.load_table("ablation")
    for r in abl.rows:
        for m in ("solved", "archive_events", "read_events"):
            if r.get(m) is not None:
                rows.append({"panel": "ablation", "table": abl.key, "label": r["variant"],
                             "id": r["variant_id"], "metric": m, "value": r[m],
                             "derived": False})
    cost = pc.load_table("cache_cost")
    prices = cost.extra["prices"]
    for r in cost.rows:
        for m in ("input_m", "output_m", "cache_rate_pct", "cost_usd"):
            rows.append({"panel": "cost", "table": cost.key, "label": r["method"],
                         "id": r["method_id"], "metric": m, "value": r[m], "derived": False})
        cached = r["input_m"] * r["cache_rate_pct"] / 100.0
        parts = {
            "cost_uncached_input": (r["input_m"] - cached) * prices["uncached_input_usd_per_m"],
            "cost_cached_input": cached * prices["cached_input_usd_per_m"],
            "cost_output": r["output_m"] * prices["output_usd_per_m"],
        }
        for m, v in parts.items():
            rows.append({"panel": "cost", "table": cost.key, "label": r["method"],
                         "id": r["method_id"], "metric": m, "value": v, "derived": True})
    return TidyTable.from_records(rows, columns=_COLUMNS, units=_UNITS)


def _series(t: TidyTable, metric: str, ident: str) -> tuple[np.ndarray, np.ndarray]:
    s = t.where(metric=metric, id=ident)
    order = np.argsort(s.column("context_k_tokens"))
    return s.column("context_k_tokens")[order], s.column("value")[order]


def plot(table: TidyTable, out_dir: str | Path) -> tuple[Path, Path]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    colors = {"vista": PALETTE["blue"], "react": PALETTE["vermillion"]}
    with figure_style():
        fig = Figure(figsize=(9.6, 9.4))
        FigureCanvasAgg(fig)
        ax = fig.subplot_mosaic([["a", "b", "c"], ["d", "d", "d"], ["e", "f", "f"]],
                                height_ratios=[1.0, 1.25, 1.0])
        pr = table.where(panel="pressure")
        ylabels = {"success": "tasks solved  [% of 75]", "steps": "average steps per task",
                   "tokens_m": "average tokens per task  [M]"}
        for key, metric in zip("abc", _PRESSURE, strict=False):
            a = ax[key]
            for ident in pr.unique("id"):
                x, y = _series(pr, metric, str(ident))
                label = str(pr.where(id=ident).values("label")[0])
                a.plot(x, y, marker="o", color=colors.get(str(ident), PALETTE["grey"]),
                       label=label)
            a.set_xscale("log", base=2)
            xs = sorted({float(v) for v in pr.column("context_k_tokens")})
            a.set_xticks(xs)
            # 96K and 128K sit close on a log axis: slanted labels keep them apart.
            a.set_xticklabels([f"{v:g}K" for v in xs], fontsize=7, rotation=45)
            a.minorticks_off()
            a.set_xlabel("context size  [tokens]")
            a.set_ylabel(ylabels[metric])
            a.legend(loc="best")
            panel_label(a, f"({key}) LOCA pressure: {metric.replace('_m', '').rstrip('_')}")

        d = ax["d"]
        mn = table.where(panel="main")
        methods = mn.unique("id")
        labels = [str(mn.where(id=m).values("label")[0]) for m in methods]
        width = 0.26
        # One colour meaning per figure: blue and vermillion are the methods of (a)-(c),
        # so the benchmarks, the event kinds and the cost parts use other colours.
        bench_colors = [PALETTE["green"], PALETTE["orange"], PALETTE["purple"]]
        xpos = np.arange(len(methods))
        for j, (metric, bench) in enumerate(_BENCH):
            vals = [mn.where(id=m, metric=metric).column("value")[0] for m in methods]
            d.bar(xpos + (j - 1) * width, vals, width=width, color=bench_colors[j], label=bench)
        d.set_xticks(xpos)
        d.set_xticklabels(labels, rotation=28, ha="right", fontsize=7)
        d.set_ylabel("accuracy  [%]")
        d.set_ylim(0, max(float(np.nanmax(mn.column("value"))) * 1.18, 1.0))
        d.legend(ncols=3, loc="upper left")
        d.grid(axis="x", visible=False)
        panel_label(d, "(d) main results across three benchmarks (Table 1)")

        e = ax["e"]
        ab = table.where(panel="ablation")
        ev = [v for v in ab.unique("id")
              if len(ab.where(id=v, metric="archive_events"))]
        ev_labels = [str(ab.where(id=v).values("label")[0]) for v in ev]
        xe = np.arange(len(ev))
        arch = [ab.where(id=v, metric="archive_events").column("value")[0] for v in ev]
        reads = [ab.where(id=v, metric="read_events").column("value")[0] for v in ev]
        e.bar(xe - 0.2, arch, width=0.4, color=PALETTE["black"], label="archive events")
        e.bar(xe + 0.2, reads, width=0.4, color="white", edgecolor=PALETTE["black"],
              hatch="////", lw=0.8, label="read events")
        for i, v in enumerate(ev):
            solved = ab.where(id=v, metric="solved")
            if len(solved):
                top = max(arch[i], reads[i])
                e.text(xe[i], top * 1.04, f"{int(solved.column('value')[0])}/75 solved",
                       ha="center", fontsize=7)
        e.set_xticks(xe)
        e.set_xticklabels(ev_labels, fontsize=7.5)
        e.set_ylim(0, max(arch + reads) * 1.2)
        e.set_ylabel("events over 75 tasks")
        e.legend(loc="upper left")
        e.grid(axis="x", visible=False)
        panel_label(e, "(e) ablation: archive vs read")

        f = ax["f"]
        co = table.where(panel="cost")
        cm = co.unique("id")
        cl = [str(co.where(id=m).values("label")[0]) for m in cm]
        parts = (("cost_uncached_input", r"uncached input (\$0.50/M)", PALETTE["sky"]),
                 ("cost_cached_input", r"cached input (\$0.05/M)", PALETTE["yellow"]),
                 ("cost_output", r"output incl. thinking (\$3.00/M)", PALETTE["grey"]))
        left = np.zeros(len(cm))
        yf = np.arange(len(cm))
        for metric, label, col in parts:
            part = np.array([co.where(id=m, metric=metric).column("value")[0] for m in cm])
            f.barh(yf, part, left=left, color=col, label=label, height=0.6)
            left += part
        printed = np.array([co.where(id=m, metric="cost_usd").column("value")[0] for m in cm])
        rate = [co.where(id=m, metric="cache_rate_pct").column("value")[0] for m in cm]
        f.plot(printed, yf, "k|", ms=14, mew=2, label="printed cost (Table 2)")
        for i in range(len(cm)):
            f.text(left[i] + 0.03, yf[i], f"\\${printed[i]:.2f}  (cache {rate[i]:.1f}%)",
                   va="center", fontsize=7)
        f.set_yticks(yf)
        f.set_yticklabels(cl, fontsize=7.5)
        f.set_xlim(0, float(np.max(left)) * 1.4)
        f.set_xlabel("cost per LOCA task  [USD]")
        f.legend(loc="upper center", bbox_to_anchor=(0.5, -0.2), ncols=2, fontsize=6.5)
        f.grid(axis="y", visible=False)
        panel_label(f, "(f) cache-aware cost, Gemini-3-Flash prices (Table 2)")
        return save_figure(fig, out_dir, NAME)


def caption(table: TidyTable) -> tuple[str, str]:
    pr = table.where(panel="pressure", metric="success")
    xs = sorted({float(v) for v in pr.column("context_k_tokens")})
    return (
        "The paper's reported results re-plotted from the transcribed tables (paper_checks/"
        "data): LOCA pressure sweep, main results on three benchmarks, ablation event counts "
        "and cache-aware cost.",
        f"Context sizes {xs[0]:g}K-{xs[-1]:g}K; in (f) the bars recompute each cost from the "
        "printed token counts, cache rate and prices, and the black tick is the printed cost.",
    )


def checks(table: TidyTable) -> list[Check]:
    co = table.where(panel="cost")
    prices = pc.load_table("cache_cost").extra["prices"]
    worst, detail = 0.0, ""
    ok = True
    for m in co.unique("id"):
        got = {r["metric"]: r["value"] for r in co.where(id=m).records()}
        recomputed = got["cost_uncached_input"] + got["cost_cached_input"] + got["cost_output"]
        # Each printed input is rounded to half a unit of its last digit; propagate
        # those half-units through the price formula, plus the cost's own rounding.
        d_in, d_out, d_rate = 0.0005, 0.0005, 0.05 / 100.0
        tol = (0.005 + d_in * prices["uncached_input_usd_per_m"]
               + got["input_m"] * d_rate * (prices["uncached_input_usd_per_m"]
                                            - prices["cached_input_usd_per_m"])
               + d_out * prices["output_usd_per_m"])
        diff = abs(recomputed - got["cost_usd"])
        if diff > tol:
            ok = False
        if diff >= worst:
            worst, detail = diff, f"{m}: recomputed {recomputed:.4f} vs printed " \
                                  f"{got['cost_usd']:.2f} (tolerance {tol:.4f})"
    return [Check(
        "fig6.cost_recomputed",
        "each printed per-task cost equals uncached input x $0.50/M + cached input x $0.05/M "
        "+ output x $3.00/M from the printed tokens and cache rate, within rounding",
        status_of(ok), f"largest difference {worst:.4f} USD ({detail})",
        "Section 3.2, Table 2 and the pricing paragraph",
    )]


if __name__ == "__main__":  # python -m vistalab.figures.fig6_paper_tables [--quick] [--out DIR]
    from ._script import run_as_script

    raise SystemExit(run_as_script(NAME))
