"""Claims about the paper's tables: counts behind percentages, row sums, cross-table
agreement, typeset best/second-best marks, and recomputed costs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from ._context import CheckContext
from ._data import PaperTable
from ._numeric import eval_interval, fmt, interval_of, percent_counts, rounds_to
from ._records import Outcome
from ._registry import claim

ROUNDING = ("the paper prints one decimal, so a percentage p is consistent with a count c "
            "of n when |100c/n - p| <= 0.05")
MAIN = "3.2 Main results (Tables 1, 2)"
PRESSURE = "3.3 Pressure regimes (Table 9)"
RL = "3.5 RL adaptation (Table 3)"
AMA = "3.6 AMA-Bench transfer (Tables 4, 10)"
ANALYSIS = "4 Analysis (Table 5, case studies, overhead)"
CAPS = "Appendix E capability matrix (Table 6)"
EVAL = "Appendix G evaluation details (Tables 7, 8, 11)"

_ACC_COLUMNS = (("loca_acc", "loca_tasks", "LOCA-Bench"), ("bcp_acc", "bcp_tasks",
                "BrowseComp-Plus"), ("gaia_acc", "gaia_tasks", "GAIA"))


def _counts_check(table: PaperTable, column: str, n: int, name_key: str) -> Outcome:
    implied: dict[str, Any] = {}
    problems = []
    for r in table:
        value = r.get(column)
        if value is None:
            continue
        counts = percent_counts(value, n, table.decimals(column))
        if counts:
            implied[r[name_key]] = counts[0] if len(counts) == 1 else counts
        else:
            near = round(value * n / 100)
            problems.append(
                f"{r[name_key]}: {value} is not c/{n} for any integer c "
                f"(nearest {near}/{n} = {fmt(100 * near / n, 5)})"
            )
            implied[r[name_key]] = None
    ok = ", ".join(f"{k} {v}/{n}" for k, v in implied.items())
    return Outcome.verdict(problems, f"every entry is a count over {n}: {ok}", n=n,
                           counts=implied)


def _make_counts_claim(column: str, size_key: str, bench: str) -> None:
    @claim(
        f"table1.{column.split('_')[0]}-acc-counts",
        section=MAIN,
        where="Table 1 (tab:main-results, paper.tex line 724); task counts in Section 3.1 "
              "and Appendix G",
        statement=f"{bench} accuracies are counts over the benchmark's task set",
        tolerance=ROUNDING,
        data=("table:main_results", "quote:benchmark-sizes"),
        kind="table",
    )
    def _check(ctx: CheckContext) -> Outcome:
        n = int(ctx.quote("benchmark-sizes")[size_key])
        return _counts_check(ctx.table("main_results"), column, n, "method")


for _col, _size, _bench in _ACC_COLUMNS:
    _make_counts_claim(_col, _size, _bench)


def _marks_problems(table: PaperTable, column: str, name_key: str, *, higher_better: bool,
                    underline: bool) -> list[str]:
    """Bold must mark exactly the best value of the column, underline the second best."""
    rows = [r for r in table if r.get(column) is not None]
    values = sorted({r[column] for r in rows}, reverse=higher_better)
    problems = []
    best = values[0]
    second = values[1] if len(values) > 1 else None
    for r in rows:
        is_bold = column in r.get("bold", ())
        is_under = column in r.get("underline", ())
        if (r[column] == best) != is_bold:
            problems.append(f"{column}: {r[name_key]} {r[column]} "
                            f"{'is' if is_bold else 'is not'} bold but the best is {best}")
        if underline and (r[column] == second) != is_under:
            problems.append(f"{column}: {r[name_key]} {r[column]} "
                            f"{'is' if is_under else 'is not'} underlined but the second best "
                            f"is {second}")
    return problems


@claim(
    "table1.marks",
    section=MAIN,
    where="Table 1 (tab:main-results), bold and underline in the Acc columns",
    statement="bold marks the best and underline the second-best accuracy of each benchmark",
    tolerance="exact comparison of the printed values",
    data=("table:main_results",),
    kind="table",
)
def _table1_marks(ctx: CheckContext) -> Outcome:
    t = ctx.table("main_results")
    problems: list[str] = []
    best = {}
    for col, _, _ in _ACC_COLUMNS:
        problems += _marks_problems(t, col, "method", higher_better=True, underline=True)
        best[col] = max(t.column(col))
    return Outcome.verdict(problems, "bold = column maximum, underline = runner-up in all "
                           "three Acc columns", best=best)


@claim(
    "table1.loca-matches-dense-ledger",
    section=MAIN,
    where="Table 1 LOCA columns vs Table 7 (tab:appendix-loca-dense)",
    statement="Table 1's LOCA Acc and Traj equal the dense ledger's Acc and Tokens",
    tolerance="exact equality of printed values (same runs, same rounding)",
    data=("table:main_results", "table:loca_dense"),
    kind="table",
)
def _table1_vs_dense(ctx: CheckContext) -> Outcome:
    main, dense = ctx.table("main_results"), ctx.table("loca_dense")
    problems, compared = [], []
    for d in dense:
        found = main.select(method_id=d["method_id"])
        if not found:
            problems.append(f"{d['method']} of Table 7 has no row in Table 1")
            continue
        m = found[0]
        compared.append(d["method_id"])
        if m["loca_acc"] != d["acc"]:
            problems.append(f"{d['method']}: Acc {m['loca_acc']} (Table 1) vs {d['acc']} "
                            f"(Table 7)")
        if m["loca_traj_m"] != d["tokens_m"]:
            problems.append(f"{d['method']}: Traj {m['loca_traj_m']}M (Table 1) vs "
                            f"{d['tokens_m']}M (Table 7)")
    return Outcome.verdict(problems, f"{len(compared)} shared methods agree on accuracy and "
                           "tokens", compared=compared)


@claim(
    "table1.incomplete-mechanisms-fall-short",
    section=MAIN,
    where="Section 3.2, paper.tex line 733: 'methods missing one of these pieces do not match "
          "the full interface consistently'",
    statement="every method lacking State, Ctrl or Recov is below full VISTA on at least one "
              "benchmark",
    tolerance="strict comparison of printed accuracies",
    data=("table:main_results",),
    kind="table",
)
def _table1_incomplete(ctx: CheckContext) -> Outcome:
    t = ctx.table("main_results")
    full = t.row(method_id="vista")
    problems, matches = [], {}
    for r in t:
        if r["method_id"] == "vista" or all(r[m] == "yes" for m in ("state", "ctrl", "recov")):
            continue
        below = [b for c, _, b in _ACC_COLUMNS if r[c] < full[c]]
        at_or_above = [f"{b} {r[c]} vs {full[c]}" for c, _, b in _ACC_COLUMNS if r[c] >= full[c]]
        if at_or_above:
            matches[r["method"]] = at_or_above
        if not below:
            problems.append(f"{r['method']} matches or beats full VISTA on every benchmark ("
                            + ", ".join(at_or_above) + ")")
    detail = "each incomplete method is below full VISTA somewhere"
    if matches:
        detail += "; matched or beaten only on " + ", ".join(
            f"{k}: {', '.join(v)}" for k, v in matches.items())
    return Outcome.verdict(problems, detail, at_or_above_vista=matches)


def _cost(prices: Mapping[str, Any]) -> Any:
    pu = Fraction(str(prices["uncached_input_usd_per_m"]))
    pc = Fraction(str(prices["cached_input_usd_per_m"]))
    po = Fraction(str(prices["output_usd_per_m"]))

    def cost(inp: Fraction, out: Fraction, rate_pct: Fraction) -> Fraction:
        share = rate_pct / 100
        return inp * (1 - share) * pu + inp * share * pc + out * po

    return cost


@claim(
    "table2.cost-from-prices",
    section=MAIN,
    where="Table 2 (tab:cache-cost, line 766) and the prices in the text (line 773)",
    statement="each cost equals the token ledger priced at $0.50/M uncached input, $0.05/M "
              "cached input, $3.00/M output",
    tolerance="interval arithmetic: inputs vary within their printed rounding (3 decimals for "
              "tokens, 1 for the cache rate); the printed cost (2 decimals) must lie within "
              "0.005 of the resulting interval",
    data=("table:cache_cost",),
    kind="table",
)
def _table2_cost(ctx: CheckContext) -> Outcome:
    t = ctx.table("cache_cost")
    cost = _cost(t.extra["prices"])
    problems, recomputed = [], {}
    for r in t:
        box = [interval_of(r["input_m"], t.decimals("input_m")),
               interval_of(r["output_m"], t.decimals("output_m")),
               interval_of(r["cache_rate_pct"], t.decimals("cache_rate_pct"))]
        lo, hi = eval_interval(cost, box)
        mid = cost(*(Fraction(str(r[k])) for k in ("input_m", "output_m", "cache_rate_pct")))
        recomputed[r["method"]] = round(float(mid), 4)
        plo, phi = interval_of(r["cost_usd"], t.decimals("cost_usd"))
        if phi < lo or plo > hi:
            problems.append(f"{r['method']}: printed ${r['cost_usd']} but the prices give "
                            f"${fmt(mid, 4)} (range {fmt(lo, 4)}-{fmt(hi, 4)})")
    ok = ", ".join(f"{k} ${v:.4f}" for k, v in recomputed.items())
    return Outcome.verdict(problems, f"recomputed costs: {ok}", recomputed_usd=recomputed)


@claim(
    "table2.tokens-match-ledger",
    section=MAIN,
    where="Table 2 (tab:cache-cost) vs Table 1 LOCA Traj / Table 7 Tokens; text line 772: "
          "'we combine the token ledger with standard Gemini-3-Flash pricing'",
    statement="the priced token ledger (input + output) is the LOCA trajectory ledger of "
              "Tables 1 and 7",
    tolerance="input and output are rounded to 0.0005M each, Traj to 0.005M: the sum must lie "
              "within 0.006M of the printed Traj",
    data=("table:cache_cost", "table:main_results"),
    kind="table",
)
def _table2_tokens(ctx: CheckContext) -> Outcome:
    t, main = ctx.table("cache_cost"), ctx.table("main_results")
    problems, sums = [], {}
    for r in t:
        total = Fraction(str(r["input_m"])) + Fraction(str(r["output_m"]))
        traj = main.row(method_id=r["method_id"])["loca_traj_m"]
        tol = (Fraction(1, 2 * 10 ** t.decimals("input_m"))
               + Fraction(1, 2 * 10 ** t.decimals("output_m"))
               + Fraction(1, 2 * 10 ** main.decimals("loca_traj_m")))
        sums[r["method"]] = {"input+output": float(total), "traj": traj}
        diff = total - Fraction(str(traj))
        if abs(diff) > tol:
            problems.append(
                f"{r['method']}: input+output = {fmt(total, 5)}M but Traj = {traj}M "
                f"(difference {float(diff):+.3f}M, {float(diff / Fraction(str(traj))):+.1%})")
    return Outcome.verdict(problems, "input + output reproduces Traj for every method",
                           ledger=sums)


@claim(
    "table3.green-gains",
    section=RL,
    where="Table 3 (tab:id-ood, line 877), green parenthesised gains; caption 'Green: gain "
          "over Base'",
    statement="each green number is the row's accuracy minus Base in the same column",
    tolerance="both accuracies are rounded to 0.05, so the true gain lies within 0.1 of the "
              "printed difference; the printed gain (itself +-0.05) must overlap that band",
    data=("table:id_ood",),
    kind="table",
)
def _table3_gains(ctx: CheckContext) -> Outcome:
    t = ctx.table("id_ood")
    base = t.row(method_id="base")
    problems, diffs = [], {}
    for r in t:
        for acc, gain in (("id_acc", "id_gain"), ("ood_acc", "ood_gain")):
            if r.get(gain) is None:
                continue
            d = Fraction(str(r[acc])) - Fraction(str(base[acc]))
            g = Fraction(str(r[gain]))
            tol = (2 * Fraction(1, 2 * 10 ** t.decimals(acc))
                   + Fraction(1, 2 * 10 ** t.decimals(gain)))
            diffs[f"{r['method']} {acc[:-4].upper()}"] = float(d)
            if abs(g - d) > tol:
                problems.append(f"{r['method']} {acc[:-4].upper()}: printed gain +{r[gain]} "
                                f"but {r[acc]} - {base[acc]} = {float(d):+.1f}")
    return Outcome.verdict(problems, "all six gains equal the printed differences: " + ", ".join(
        f"{k} {v:+.1f}" for k, v in diffs.items()), differences=diffs)


@claim(
    "table3.untrained-rows-equal",
    section=RL,
    where="Table 3 (tab:id-ood); Section 3.5: ID and OOD both evaluate on BrowseComp-Plus and "
          "differ only in the training set",
    statement="rows without training (Base, Ours zero-shot) have the same ID and OOD accuracy",
    tolerance="exact equality of printed values (same model, same evaluation set)",
    data=("table:id_ood",),
    kind="table",
)
def _table3_untrained(ctx: CheckContext) -> Outcome:
    t = ctx.table("id_ood")
    problems = [f"{r['method']}: ID {r['id_acc']} vs OOD {r['ood_acc']}" for r in t
                if r["group"] == "Zero-shot baselines" and r["id_acc"] != r["ood_acc"]]
    return Outcome.verdict(problems, "Base and zero-shot rows are identical across ID and OOD "
                           "(the training split cannot affect untrained rows)")


@claim(
    "table3.marks",
    section=RL,
    where="Table 3 (tab:id-ood), bold and underline",
    statement="bold marks the best and underline the second-best result in each column",
    tolerance="exact comparison of the printed values",
    data=("table:id_ood",),
    kind="table",
)
def _table3_marks(ctx: CheckContext) -> Outcome:
    t = ctx.table("id_ood")
    problems = []
    for col in ("id_acc", "ood_acc"):
        problems += _marks_problems(t, col, "method", higher_better=True, underline=True)
    return Outcome.verdict(problems, "bold = best, underline = runner-up in ID and OOD")


@claim(
    "table4.marks",
    section=AMA,
    where="Table 4 (tab:ama-full, line 946), bold entries",
    statement="bold marks the best value of each column (highest F1 and accuracy, lowest "
              "runtime and tokens)",
    tolerance="exact comparison of the printed values",
    data=("table:ama_full",),
    kind="table",
)
def _table4_marks(ctx: CheckContext) -> Outcome:
    t = ctx.table("ama_full")
    problems = []
    for col, higher in (("f1", True), ("acc", True), ("runtime_s", False), ("tokens_k", False)):
        problems += _marks_problems(t, col, "method", higher_better=higher, underline=False)
    return Outcome.verdict(problems, "every bold entry is its column's best and vice versa")


def _minimax_weights(targets: Sequence[tuple[Sequence[float], float]]) -> tuple[float, Any]:
    """Smallest t such that one weight vector w >= 0, sum w = 1 gives |w.v - T| <= t for
    every (v, T); solved as a linear programme."""
    from scipy.optimize import linprog

    d = len(targets[0][0])
    # variables: w_1..w_d, t ; minimise t
    c = np.zeros(d + 1)
    c[-1] = 1.0
    a_ub, b_ub = [], []
    for v, target in targets:
        a_ub.append([*v, -1.0])
        b_ub.append(target)
        a_ub.append([*(-x for x in v), -1.0])
        b_ub.append(-target)
    a_eq = [[1.0] * d + [0.0]]
    res = linprog(c, A_ub=np.array(a_ub), b_ub=np.array(b_ub), A_eq=np.array(a_eq),
                  b_eq=np.array([1.0]), bounds=[(0, None)] * d + [(0, None)], method="highs")
    if not res.success:  # pragma: no cover - the LP is always feasible (t large)
        raise RuntimeError(res.message)
    return float(res.x[-1]), res.x[:-1]


def _integer_episode_split(targets: Sequence[tuple[Sequence[float], float]], episodes: int,
                           tol: float) -> list[int] | None:
    """Integer episodes per domain (>= 1, summing to ``episodes``) reproducing every target
    within ``tol``, or None."""
    from scipy.optimize import Bounds, LinearConstraint, milp

    d = len(targets[0][0])
    rows = [np.ones(d)]
    lo: list[float] = [float(episodes)]
    hi: list[float] = [float(episodes)]
    for v, target in targets:
        rows.append(np.asarray(v, dtype=float))
        lo.append(episodes * (target - tol))
        hi.append(episodes * (target + tol))
    res = milp(c=np.zeros(d), constraints=LinearConstraint(np.array(rows), lo, hi),
               integrality=np.ones(d), bounds=Bounds(1, episodes))
    if res.x is None:
        return None
    return [int(round(x)) for x in res.x]


@claim(
    "table10.aggregates-to-table4",
    section=AMA,
    where="Table 10 (tab:ama-domain-full, line 1929) vs Table 4 (tab:ama-full); both cover "
          "the same 208 episodes (Section 3.6, Appendix G)",
    statement="the per-domain breakdown averages to the overall AMA and VISTA rows under one "
              "common set of domain sizes",
    tolerance="each printed value is rounded to 0.0005, so a weighted mean may miss an overall "
              "value by at most 0.001; the best common weights (a linear programme minimising "
              "the largest miss) must stay within that",
    data=("table:ama_domain", "table:ama_full", "quote:benchmark-sizes"),
    kind="table",
)
def _table10_aggregates(ctx: CheckContext) -> Outcome:
    dom, full = ctx.table("ama_domain"), ctx.table("ama_full")
    episodes = int(ctx.quote("benchmark-sizes")["ama_episodes"])
    methods = sorted({r["method_id"] for r in dom})
    domains = [r["domain"] for r in dom.select(method_id=methods[0])]
    targets, labels = [], []
    for mid in methods:
        overall = full.row(method_id=mid)
        for metric in ("acc", "f1"):
            vals = [dom.row(method_id=mid, domain=d)[metric] for d in domains]
            targets.append((vals, overall[metric]))
            labels.append(f"{overall['method']} {metric}")
    tol = (Fraction(1, 2 * 10 ** dom.decimals("acc"))
           + Fraction(1, 2 * 10 ** full.decimals("acc")))
    worst, weights = _minimax_weights(targets)
    per_method = {}
    for i, mid in enumerate(methods):
        w_t, _ = _minimax_weights(targets[2 * i:2 * i + 2])
        per_method[mid] = round(w_t, 5)
    w = {d: round(float(x), 3) for d, x in zip(domains, weights, strict=True)}
    misses = {lab: round(float(np.dot(v, weights)) - t, 4)
              for lab, (v, t) in zip(labels, targets, strict=True)}
    numbers = {"min_max_miss": round(worst, 5), "tolerance": float(tol),
               "best_common_weights": w, "misses_at_best_weights": misses,
               "min_max_miss_per_method_alone": per_method}
    if worst > float(tol) + 1e-12:
        return Outcome.failed(
            f"no common domain weights reproduce Table 4: the best weights still miss by "
            f"{worst:.4f} (> {float(tol):.3f}); misses {misses}; each method alone fits "
            f"within {per_method}", **numbers)
    split = _integer_episode_split(targets, episodes, float(tol))
    if split is None:
        return Outcome.failed(f"fractional weights fit (miss {worst:.4f}) but no integer split "
                              f"of {episodes} episodes does", **numbers)
    numbers["episodes_per_domain"] = dict(zip(domains, split, strict=True))
    return Outcome.passed(f"episode split {numbers['episodes_per_domain']} reproduces all "
                          f"four overall numbers", **numbers)


_MECH_TO_CAP = {"state": "dashboard", "ctrl": "agent_controlled", "recov": "exact_recovery"}


@claim(
    "table6.matches-mechanism-columns",
    section=CAPS,
    where="Table 6 (tab:method-comparison, line 1581) vs Table 1 mechanism columns",
    statement="State/Ctrl/Recov of Table 1 equal Context dashboard/Agent-controlled/Exact "
              "recovery of Table 6 for every method in both",
    tolerance="exact agreement of the marks (yes / no / partial)",
    data=("table:capability_matrix", "table:main_results"),
    kind="table",
)
def _table6_vs_table1(ctx: CheckContext) -> Outcome:
    caps, main = ctx.table("capability_matrix"), ctx.table("main_results")
    problems, compared = [], []
    for m in main:
        found = caps.select(method_id=m["method_id"])
        if not found:
            continue
        compared.append(m["method_id"])
        for mech, cap in _MECH_TO_CAP.items():
            if m[mech] != found[0][cap]:
                problems.append(f"{m['method']}: Table 1 {mech}={m[mech]} but Table 6 "
                                f"{cap}={found[0][cap]}")
    return Outcome.verdict(problems, f"{len(compared)} methods in both tables agree on all "
                           "three mechanisms", compared=compared)


@claim(
    "table6.covers-evaluated-baselines",
    section=CAPS,
    where="Appendix E, line 1545: Table 6 'summarizes the evaluated baselines and the "
          "learned-compression family'",
    statement="every baseline evaluated in Table 1 has a row in the capability matrix",
    tolerance="set inclusion of method identifiers",
    data=("table:capability_matrix", "table:main_results"),
    kind="table",
)
def _table6_coverage(ctx: CheckContext) -> Outcome:
    caps, main = ctx.table("capability_matrix"), ctx.table("main_results")
    have = set(caps.column("method_id"))
    baselines = [r for r in main if not r["method_id"].startswith("vista")]
    missing = [r["method"] for r in baselines if r["method_id"] not in have]
    if missing:
        return Outcome.failed(f"{len(missing)} of {len(baselines)} evaluated baselines have no "
                              f"row: {', '.join(missing)}", missing=missing)
    return Outcome.passed(f"all {len(baselines)} evaluated baselines have a row")


@claim(
    "table6.vista-unique",
    section=CAPS,
    where="Table 6 caption ('VISTA uniquely combines agent-facing state with exact recovery'); "
          "Appendix F line 1685 ('None combines agent-facing context-state metadata with exact "
          "evidence recovery')",
    statement="VISTA is the only method with both a context dashboard and exact recovery "
              "(Tables 1 and 6)",
    tolerance="exact marks; 'partial' does not count as having the property",
    data=("table:capability_matrix", "table:main_results"),
    kind="table",
)
def _table6_unique(ctx: CheckContext) -> Outcome:
    caps, main = ctx.table("capability_matrix"), ctx.table("main_results")
    both6 = [r["method"] for r in caps if r["dashboard"] == "yes" and r["exact_recovery"] == "yes"]
    both1 = [r["method"] for r in main if r["state"] == "yes" and r["recov"] == "yes"]
    problems = []
    for tab, rows in (("Table 6", both6), ("Table 1", both1)):
        if len(rows) != 1 or "VISTA" not in rows[0]:
            problems.append(f"{tab}: methods with dashboard and exact recovery = {rows}")
    return Outcome.verdict(problems, "only VISTA has both, in both tables",
                           table6=both6, table1=both1)


@claim(
    "table7.acc-is-correct-over-75",
    section=EVAL,
    where="Table 7 (tab:appendix-loca-dense, line 1841), Correct and Acc columns",
    statement="Acc = Correct / 75 for every method",
    tolerance=ROUNDING,
    data=("table:loca_dense", "quote:benchmark-sizes"),
    kind="table",
)
def _table7_acc(ctx: CheckContext) -> Outcome:
    t = ctx.table("loca_dense")
    n = int(ctx.quote("benchmark-sizes")["loca_tasks"])
    problems, exact = [], {}
    for r in t:
        value = Fraction(100 * r["correct"], n)
        exact[r["method"]] = round(float(value), 3)
        if not rounds_to(value, r["acc"], t.decimals("acc")):
            problems.append(f"{r['method']}: {r['correct']}/{n} = {float(value):.2f}% but "
                            f"Acc = {r['acc']}")
    return Outcome.verdict(problems, "all eight accuracies equal Correct/75 to one decimal",
                           exact_percent=exact)


@claim(
    "table7.outcomes-fit-in-75",
    section=EVAL,
    where="Table 7, Correct / Timeout / Error columns; 'full 75' in Notes",
    statement="solved, timed-out and errored tasks are disjoint parts of the 75 tasks",
    tolerance="exact integer arithmetic (cells printed '--' are skipped)",
    data=("table:loca_dense", "quote:benchmark-sizes"),
    kind="table",
)
def _table7_fit(ctx: CheckContext) -> Outcome:
    t = ctx.table("loca_dense")
    n = int(ctx.quote("benchmark-sizes")["loca_tasks"])
    problems, used = [], {}
    for r in t:
        total = r["correct"] + (r.get("timeout") or 0) + (r.get("error") or 0)
        used[r["method"]] = total
        if total > n:
            problems.append(f"{r['method']}: correct+timeout+error = {total} > {n}")
    return Outcome.verdict(problems, "correct + timeout + error <= 75 for every method; "
                           "largest " + ", ".join(f"{k} {v}" for k, v in used.items()
                                                  if v == max(used.values())),
                           accounted=used)


@claim(
    "table7.matches-pressure-128k",
    section=EVAL,
    where="Table 7 vs Table 9 (tab:loca-pressure) at the 128K setting",
    statement="the 128K rows of the pressure sweep are the main-comparison runs (success, "
              "steps, tokens)",
    tolerance="exact equality of the printed values",
    data=("table:loca_dense", "table:loca_pressure", "quote:budget-notation"),
    kind="table",
)
def _table7_vs_9(ctx: CheckContext) -> Outcome:
    dense, sweep = ctx.table("loca_dense"), ctx.table("loca_pressure")
    k = int(ctx.quote("budget-notation")["loca_budget_k"])
    problems, compared = [], []
    for r in sweep.select(setting_k=k):
        d = dense.row(method_id=r["method_id"])
        compared.append(r["method"])
        for a, b in (("success", "acc"), ("steps", "steps"), ("tokens_m", "tokens_m")):
            if r[a] != d[b]:
                problems.append(f"{r['method']} {a}: {r[a]} (Table 9) vs {d[b]} (Table 7)")
    if not compared:
        problems.append(f"Table 9 has no {k}K rows")
    return Outcome.verdict(problems, f"{', '.join(compared)} agree at {k}K")


@claim(
    "table8.rows-add-up",
    section=EVAL,
    where="Table 8 (tab:rescue, line 1861) against Table 7's Correct column",
    statement="Both + Base. = the baseline's solved count, Both + VISTA = VISTA's 38, and the "
              "four cells sum to 75, in every row",
    tolerance="exact integer arithmetic",
    data=("table:outcome_transitions", "table:loca_dense", "quote:benchmark-sizes"),
    kind="table",
)
def _table8_sums(ctx: CheckContext) -> Outcome:
    t, dense = ctx.table("outcome_transitions"), ctx.table("loca_dense")
    n = int(ctx.quote("benchmark-sizes")["loca_tasks"])
    vista = dense.row(method_id="vista")["correct"]
    problems, rows = [], {}
    for r in t:
        base = dense.row(method_id=r["method_id"])["correct"]
        b, v = r["both"] + r["baseline_only"], r["both"] + r["vista_only"]
        s = r["both"] + r["baseline_only"] + r["vista_only"] + r["neither"]
        rows[r["comparison"]] = {"both+base": b, "both+vista": v, "sum": s}
        if b != base:
            problems.append(f"{r['comparison']}: Both+Base. = {b} but the baseline solved "
                            f"{base}")
        if v != vista:
            problems.append(f"{r['comparison']}: Both+VISTA = {v} but VISTA solved {vista}")
        if s != n:
            problems.append(f"{r['comparison']}: the four cells sum to {s}, not {n}")
    return Outcome.verdict(problems, "all four rows add up to the baseline's total, VISTA's "
                           f"{vista} and {n}", rows=rows)


@claim(
    "table9.success-counts",
    section=PRESSURE,
    where="Table 9 (tab:loca-pressure, line 1890), Success column",
    statement="every success rate is a count over the 75 tasks",
    tolerance=ROUNDING,
    data=("table:loca_pressure", "quote:benchmark-sizes"),
    kind="table",
)
def _table9_counts(ctx: CheckContext) -> Outcome:
    t = ctx.table("loca_pressure")
    n = int(ctx.quote("benchmark-sizes")["loca_tasks"])
    problems, counts = [], {}
    for r in t:
        c = percent_counts(r["success"], n, t.decimals("success"))
        label = f"{r['method']} {r['setting_k']}K"
        counts[label] = c[0] if len(c) == 1 else (c or None)
        if not c:
            problems.append(f"{label}: {r['success']} is not c/{n}")
    return Outcome.verdict(problems, "all 14 rates are counts over 75: " + ", ".join(
        f"{k} {v}" for k, v in counts.items()), counts=counts)


def _series(t: PaperTable, method_id: str, column: str) -> list[tuple[int, float]]:
    return sorted((r["setting_k"], r[column]) for r in t.select(method_id=method_id))


@claim(
    "table9.degrades-with-pressure",
    section=PRESSURE,
    where="Figure 4 caption and Section 3.3 ('one-way truncation degrades while recoverable "
          "externalization remains usable'), data of Table 9",
    statement="success falls as context growth increases, for both methods, and VISTA "
              "retains a larger share of its 8K success at 256K",
    tolerance="exact comparison of printed values",
    data=("table:loca_pressure",),
    kind="table",
)
def _table9_degrades(ctx: CheckContext) -> Outcome:
    t = ctx.table("loca_pressure")
    problems, retention = [], {}
    for mid in ("vista", "react"):
        s = _series(t, mid, "success")
        for (k0, a), (k1, b) in zip(s, s[1:], strict=False):
            if b > a:
                problems.append(f"{mid}: success rises from {a} at {k0}K to {b} at {k1}K")
        retention[mid] = round(s[-1][1] / s[0][1], 4)
    if retention["vista"] <= retention["react"]:
        problems.append(f"VISTA keeps {retention['vista']:.1%} of its lowest-pressure success, "
                        f"ReAct {retention['react']:.1%}")
    return Outcome.verdict(problems, f"both decrease monotonically; highest/lowest pressure "
                           f"success: VISTA {retention['vista']:.1%}, ReAct "
                           f"{retention['react']:.1%}", retention=retention)


@claim(
    "table9.gap-grows-with-pressure",
    section=PRESSURE,
    where="Abstract ('Gains grow with context pressure'); Section 3.3 line 796 ('the gap opens "
          "as distractor volume grows'); Table 9",
    statement="VISTA's advantage over ReAct grows with context pressure",
    tolerance="trend test: VISTA >= ReAct at every setting, a positive rank correlation "
              "(Kendall tau > 0) between setting and gap, and the mean gap of the upper half of "
              "settings above that of the lower half; non-monotone steps are reported",
    data=("table:loca_pressure",),
    kind="table",
)
def _table9_gap(ctx: CheckContext) -> Outcome:
    from scipy.stats import kendalltau

    t = ctx.table("loca_pressure")
    v, r = dict(_series(t, "vista", "success")), dict(_series(t, "react", "success"))
    ks = sorted(set(v) & set(r))
    gap = {k: round(v[k] - r[k], 1) for k in ks}
    tau = float(kendalltau(ks, [gap[k] for k in ks]).statistic)
    half = len(ks) // 2
    low, high = np.mean([gap[k] for k in ks[:half]]), np.mean([gap[k] for k in ks[-half:]])
    dips = [f"{a}K->{b}K ({gap[a]}->{gap[b]})" for a, b in zip(ks, ks[1:], strict=False)
            if gap[b] < gap[a]]
    problems = [f"ReAct ahead at {k}K by {-g}" for k, g in gap.items() if g < 0]
    if tau <= 0:
        problems.append(f"Kendall tau between setting and gap = {tau:.2f}")
    if high <= low:
        problems.append(f"mean gap {high:.1f} at high pressure vs {low:.1f} at low")
    detail = (f"gap by setting {gap}; Kendall tau {tau:.2f}; mean gap {low:.1f} (low half) vs "
              f"{high:.1f} (high half)")
    if dips:
        detail += "; not monotone: gap shrinks " + ", ".join(dips)
    return Outcome.verdict(problems, detail, gap=gap, kendall_tau=round(tau, 4),
                           shrinking_steps=dips)


@claim(
    "table11.multiple-baselines-fail",
    section=EVAL,
    where="Table 11 (tab:case-study-summary, line 1966) caption: 'Tasks VISTA solves where "
          "multiple baselines fail'",
    statement="every case lists at least two failed baselines",
    tolerance="exact count",
    data=("table:case_studies", "table:main_results", "table:loca_dense"),
    kind="table",
)
def _table11_multiple(ctx: CheckContext) -> Outcome:
    t = ctx.table("case_studies")
    main_names = {r["method"] for r in ctx.table("main_results")}
    main_names |= {r["method"] for r in ctx.table("loca_dense")}
    problems = [f"{r['case']}: only {len(r['baselines_failed'])} failed baseline(s)"
                for r in t if len(r["baselines_failed"]) < 2]
    names = sorted({b for r in t for b in r["baselines_failed"]} - main_names)
    detail = "every case lists >= 2 failed baselines"
    if names:
        detail += (f"; note: {', '.join(names)} are not method names of Table 1 (abbreviations "
                   "not defined in the paper)")
    return Outcome.verdict(problems, detail, undefined_names=names)


@claim(
    "table11.within-event-totals",
    section=EVAL,
    where="Table 11 archive/read counts vs Table 7's VISTA Mgmt. events (69 archive / 105 read)",
    statement="the case studies' archive calls and payload reads fit within VISTA's totals "
              "over the 75 tasks",
    tolerance="exact integer arithmetic",
    data=("table:case_studies", "table:loca_dense"),
    kind="table",
)
def _table11_events(ctx: CheckContext) -> Outcome:
    t, dense = ctx.table("case_studies"), ctx.table("loca_dense")
    vista = dense.row(method_id="vista")
    arch = sum(r.get("archive_calls") or 0 for r in t)
    reads = sum(r.get("payload_reads") or 0 for r in t)
    problems = []
    if arch > vista["archive_events"]:
        problems.append(f"{arch} archive calls in four cases > {vista['archive_events']} in all")
    if reads > vista["read_events"]:
        problems.append(f"{reads} payload reads in four cases > {vista['read_events']} in all")
    return Outcome.verdict(problems, f"cases: {arch} archives, {reads} reads; totals "
                           f"{vista['archive_events']} / {vista['read_events']}",
                           case_archives=arch, case_reads=reads)
