"""Each figure's data checks pass on its computed table and fail on a broken
one (preamble: "every checker must be shown to fail on a broken input").

Tables are computed once per module with small parameters and a fixed seed; a
"broken" table is the same table with one cell changed the way a real bug
would change it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from vistalab.figures import TidyTable, load_figure

SEED = 20260522

# Small but honest parameters: every check still has data to look at.
SMALL: dict[str, dict[str, Any]] = {
    "fig1_recovery": {"x_points": 6, "trials": 400, "engine_x": [1.0], "engine_trials": 2},
    "fig2_separation": {"mc_N": [16, 64], "mc_trials": 300},
    "fig3_content_channel": {"kappas": [2, 4], "sigmas": [0.5, 1.0, 2.0], "curve_points": 8,
                             "ns_b": [32, 128], "trials": 400, "log2_n_max_b": 24},
    "fig4_tradeoff": {"curve_points": 21, "sigmas": [0.5, 1.0], "mc_buckets": [4],
                      "gibbs_rates": [2.0], "trials": 3000, "engine": False},
    "fig5_phase_transition": {"log10_n_max": 6, "points_per_decade": 2, "mc_n": [64, 1024],
                              "trials": 3000},
    "fig6_paper_tables": {},
}

_cache: dict[str, TidyTable] = {}


def table_of(name: str) -> TidyTable:
    if name not in _cache:
        fig = load_figure(name)
        params = {**fig.default_params(quick=True), **SMALL[name]}
        _cache[name] = fig.compute(params, rng=np.random.default_rng(SEED))
    return _cache[name]


def statuses(name: str, table: TidyTable) -> dict[str, str]:
    return {c.id: c.status for c in load_figure(name).checks(table)}


def edit(table: TidyTable, match: dict[str, Any], **changes: Any) -> TidyTable:
    """The table with ``changes`` applied to the FIRST row matching ``match``."""
    idx = {c: i for i, c in enumerate(table.columns)}
    rows = [list(r) for r in table.rows]
    for r in rows:
        if all(r[idx[k]] == v for k, v in match.items()):
            for k, v in changes.items():
                r[idx[k]] = v
            break
    else:  # pragma: no cover - a test asking for a row that is not there is a test bug
        raise AssertionError(f"no row matches {match}")
    return TidyTable(table.columns, tuple(tuple(r) for r in rows), table.units)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_checks_pass_on_the_computed_table(name):
    """Figures 1-6: the computed data satisfies every statement the figure checks
    (Propositions 1-2, Theorem 1, the exact frontier, Table 2's prices)."""
    got = statuses(name, table_of(name))
    assert got, "a figure with data checks must return at least one"
    assert all(s == "pass" for s in got.values()), got


def _first(table: TidyTable, **match: Any) -> dict[str, Any]:
    return table.where(**match).records()[0]


def test_fig1_checks_fail_on_broken_tables():
    """Proposition 1: a lossy strategy above B/(Nk)+1/k, an estimate far from its closed
    form, or a recovering method failing where it fits must each be flagged."""
    t = table_of("fig1_recovery")
    low = _first(t, series="keep-blocks", budget_bits=t.where(series="bound").values(
        "budget_bits")[1])
    above = edit(t, {"series": "keep-blocks", "budget_bits": low["budget_bits"]},
                 value=1.0, ci_low=0.99, ci_high=1.0)
    assert statuses("fig1_recovery", above)["fig1.lossy_below_bound"] == "fail"
    off = edit(t, {"series": "keep-blocks", "budget_bits": low["budget_bits"]},
               value=low["value"] + 0.2)
    assert statuses("fig1_recovery", off)["fig1.mc_matches_exact"] == "fail"
    feasible = _first(t, series="recover", feasible=True)
    lost = edit(t, {"series": "recover", "budget_bits": feasible["budget_bits"]}, value=0.0)
    assert statuses("fig1_recovery", lost)["fig1.recover_exact"] == "fail"
    fits = _first(t, series="recover-engine", budget_share=1.0)
    assert fits["fit_share"] == 1.0
    short = edit(t, {"series": "recover-engine", "budget_share": 1.0}, value=0.5)
    assert statuses("fig1_recovery", short)["fig1.engine_recover_exact"] == "fail"
    garbled = edit(t, {"series": "recover-engine", "budget_share": 1.0}, byte_exact=False)
    assert statuses("fig1_recovery", garbled)["fig1.engine_recover_exact"] == "fail"


def test_fig2_checks_fail_on_broken_tables():
    """Proposition 1, asymptotic separation (Appendix B): the bound must vanish, the
    recovering method must stay feasible and exact, Monte Carlo must stay below the bound."""
    t = table_of("fig2_separation")
    n_max = int(np.nanmax(t.column("N")))
    c = t.values("c")[0]
    stuck = edit(t, {"series": "bound", "N": n_max, "c": c}, value=0.5)
    assert statuses("fig2_separation", stuck)["fig2.bound_vanishes"] == "fail"
    tight = edit(t, {"series": "recover-theory", "N": n_max, "c": c}, feasible=False)
    assert statuses("fig2_separation", tight)["fig2.recover_feasible"] == "fail"
    mc = _first(t, series="keep-blocks-mc", N=64)
    beat = edit(t, {"series": "keep-blocks-mc", "N": 64, "c": mc["c"]},
                value=1.0, ci_low=1.0, ci_high=1.0)
    if min(1.0, mc["budget_bits"] / (64 * mc["k"]) + 1 / mc["k"]) < 1.0:
        assert statuses("fig2_separation", beat)["fig2.mc_below_bound"] == "fail"
    miss = edit(t, {"series": "recover-mc"}, value=0.99)
    assert statuses("fig2_separation", miss)["fig2.recover_mc_one"] == "fail"


def test_fig3_checks_fail_on_broken_tables():
    """Proposition 2: an estimate above the bound or far from the exact rate, an exact
    rate above the tighter bound, or a rate still growing with n must be flagged."""
    t = table_of("fig3_content_channel")
    r = _first(t, series="mc", panel="a")
    big = edit(t, {"series": "mc", "panel": "a", "sigma": r["sigma"], "kappa": r["kappa"]},
               value=r["value"] + 5.0)
    got = statuses("fig3_content_channel", big)
    assert got["fig3.mc_below_prop2_tight"] == "fail"
    assert got["fig3.mc_matches_exact"] == "fail"
    vague = edit(t, {"series": "mc", "panel": "a", "sigma": r["sigma"], "kappa": r["kappa"]},
                 se=1e11)
    assert statuses("fig3_content_channel", vague)["fig3.mc_matches_exact"] == "fail"
    e = _first(t, series="exact", panel="a")
    over = edit(t, {"series": "exact", "panel": "a", "sigma": e["sigma"], "kappa": e["kappa"]},
                value=e["value"] + 1.0)
    assert statuses("fig3_content_channel", over)["fig3.exact_below_tight_bound"] == "fail"
    n_max = int(np.nanmax(t.where(panel="b").column("n")))
    grows = edit(t, {"series": "exact", "panel": "b", "n": n_max}, value=2.0)
    assert statuses("fig3_content_channel", grows)["fig3.flat_in_n"] == "fail"


def test_fig4_checks_fail_on_broken_tables():
    """Theorem 1 and the exact frontier: a point below the bound or the frontier, an
    estimate far from its exact value, or a Gibbs point off the frontier must be flagged."""
    t = table_of("fig4_tradeoff")
    # the noisiest channel has the lowest rate, where Theorem 1's bound is positive
    g = max(t.where(series="mc", interface="gaussian").records(), key=lambda r: r["value"])
    free = edit(t, {"series": "mc", "interface": "gaussian", "sigma": g["sigma"]},
                value=0.0, ci_low=0.0, ci_high=0.0, se=1e-6)
    got = statuses("fig4_tradeoff", free)
    assert got["fig4.above_thm1"] == "fail"
    assert got["fig4.above_frontier"] == "fail"
    assert got["fig4.mc_matches_exact"] == "fail"
    g1 = _first(t, series="mc", interface="gaussian")
    vague = edit(t, {"series": "mc", "interface": "gaussian", "sigma": g1["sigma"]},
                 rate_bits_se=1e11)
    assert statuses("fig4_tradeoff", vague)["fig4.rate_se_plausible"] == "fail"
    gb = _first(t, series="mc", interface="gibbs")
    off = edit(t, {"series": "mc", "interface": "gibbs"}, value=gb["value"] + 0.2)
    assert statuses("fig4_tradeoff", off)["fig4.gibbs_on_frontier"] == "fail"


def test_fig5_checks_fail_on_broken_tables():
    """Theorem 1's phase transition: the Gaussian channel must stay above the bound at
    the Proposition 2 cap and rise toward 1, Monte Carlo must match the exact value, the
    ledger must have Z = 0, and necessary <= frontier <= sufficient rates."""
    t = table_of("fig5_phase_transition")
    n0 = int(t.where(series="gaussian-exact").values("n")[2])
    low = edit(t, {"series": "gaussian-exact", "n": n0}, value=0.0)
    got = statuses("fig5_phase_transition", low)
    assert got["fig5.gaussian_above_bounds"] == "fail"
    assert got["fig5.gaussian_tends_to_one"] == "fail"
    m = _first(t, series="gaussian-mc")
    off = edit(t, {"series": "gaussian-mc", "n": m["n"]}, value=m["value"] + 0.1)
    assert statuses("fig5_phase_transition", off)["fig5.mc_matches_exact"] == "fail"
    led = edit(t, {"series": "ledger-mc"}, value=0.01)
    assert statuses("fig5_phase_transition", led)["fig5.ledger_zero"] == "fail"
    nec = _first(t, series="necessary")
    swapped = edit(t, {"series": "necessary", "n": nec["n"], "delta": nec["delta"]},
                   value=1e3)
    assert statuses("fig5_phase_transition", swapped)["fig5.rate_sandwich"] == "fail"


def test_fig6_check_fails_when_a_cost_does_not_add_up():
    """Table 2: each printed cost must equal the priced token ledger within rounding."""
    t = table_of("fig6_paper_tables")
    wrong = edit(t, {"panel": "cost", "metric": "cost_output"},
                 value=_first(t, panel="cost", metric="cost_output")["value"] + 0.05)
    assert statuses("fig6_paper_tables", wrong)["fig6.cost_recomputed"] == "fail"


def test_compute_is_reproducible_and_seed_dependent():
    """DESIGN.md rule 2: the same seed gives the same table; another seed changes the
    Monte Carlo rows but not the exact ones."""
    fig = load_figure("fig1_recovery")
    params = {**fig.default_params(quick=True), **SMALL["fig1_recovery"], "engine_x": []}
    a = fig.compute(params, rng=np.random.default_rng(SEED))
    b = fig.compute(params, rng=np.random.default_rng(SEED))
    c = fig.compute(params, rng=np.random.default_rng(SEED + 1))
    assert a == b
    assert a.where(series="bound") == c.where(series="bound")
    assert a.where(series="keep-blocks") != c.where(series="keep-blocks")


def test_bad_parameters_name_the_parameter():
    """DESIGN.md rule 6: an unknown or out-of-domain parameter is a clear error."""
    from vistalab.theory import DomainError, UnknownNameError

    fig = load_figure("fig4_tradeoff")
    with pytest.raises(UnknownNameError, match=r"parameter of fig4_tradeoff 'trails'.*'trials'"):
        fig.compute({"trails": 10})
    with pytest.raises(DomainError, match=r"`kappa` must satisfy 2 <= kappa < n/2"):
        fig.compute({"n": 8, "kappa": 4})
