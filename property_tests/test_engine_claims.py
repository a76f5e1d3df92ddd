"""The engine-backed claims registered into paper_checks: present in the
registry, passing on the engine, and each checker failing on a broken result."""

from __future__ import annotations

import dataclasses

import pytest
import vistalab.paper_checks as pc
from vistalab.paper_checks import _engine_claims as ec

from vistalab import sims

ENGINE_IDS = {"engine.makeroom-ledger", "engine.makeroom-buckets", "engine.makeroom-gaussian",
              "engine.makeroom-blind", "engine.ablation-counters", "engine.recovery-recover",
              "engine.recovery-baselines", "engine.recovery-feasibility"}


@pytest.fixture(scope="module")
def counters():
    """A small make-room batch per interface (fixed seed): the ablation's counters."""
    return sims.makeroom_event_counters(24, 3, trials=160, rng=100, array_trials=50_000)


@pytest.fixture(scope="module")
def runs(counters):
    return {r.interface: r for r in counters.results}


def test_event_counters_table(counters):
    """Section 3.7 / Figure 5(b): total archive and read events per interface over a batch,
    rows in decreasing rate, each read an obligation (one per archived load-bearing block)
    and byte-exact."""
    names = [r["interface"] for r in counters.rows]
    assert names == ["ledger", "buckets", "gaussian", "blind"]
    rates = [r["rate_bits"] for r in counters.rows]
    assert rates == sorted(rates, reverse=True)
    for row, res in zip(counters.rows, counters.results, strict=True):
        assert row["archive_events"] == res.archive_events >= counters.trials
        assert row["read_events"] == row["recovery_obligations"] == row["byte_exact_recoveries"]
    assert counters.rows[0]["read_events"] == 0
    # Blind: archives per trial are min(tau, kappa) with tau uniform on 1..n (eq. Z-search),
    # mean kappa - kappa(kappa-1)/(2n); its sd is at most kappa/2.
    n, kappa, t = counters.n, counters.kappa, counters.trials
    exact = kappa - kappa * (kappa - 1) / (2 * n)
    assert abs(counters.rows[-1]["archives_per_trial"] - exact) <= 4 * (kappa / 2) / t**0.5
    assert counters.rows[0]["archives_per_trial"] == 1.0


def test_engine_claims_are_registered_in_their_section():
    """each engine-versus-theory comparison is a registered check with a
    place in the paper, shown by check-paper and the reproduce report."""
    claims = {c.id: c for c in pc.all_claims()}
    assert ENGINE_IDS <= set(claims)
    for cid in ENGINE_IDS:
        c = claims[cid]
        assert c.kind == "engine" and c.section == "Engine-backed checks"
        assert c.module == "vistalab.paper_checks._engine_claims" and "paper.tex" in c.where


@pytest.mark.slow
def test_registered_makeroom_and_ablation_claims_pass():
    """Theorem 1 and Section 3.7 through the registry's own runner (its seed)."""
    report = pc.run_claims("engine.makeroom-*,engine.ablation-*", certificates=False)
    assert report.counts["pass"] == 5, [(r.id, r.detail) for r in report.results]
    abl = report.by_id("engine.ablation-counters")
    assert abl.numbers["paper"]["no-dashboard"]["archive_events"] == 255


def test_makeroom_checker_fails_on_broken_results(runs):
    """Theorem 1: the check fails when the engine disagrees with the array simulator, falls
    below the frontier, reads back other bytes, or preflight stops at the wrong archive."""
    good = runs["blind"]
    assert ec.makeroom_verdict(good).status == "pass"
    breaks = [
        dict(mean_z=good.mean_z - 1.0, agrees_with_array=False),
        dict(mean_z=0.0, mean_z_se=0.0, agrees_with_array=True),
        dict(byte_mismatches=1),
        dict(byte_exact_recoveries=good.read_events - 1),
        dict(stop_mismatches=2),
        dict(budget_mismatches=1),
        dict(size_mismatches=1),
        dict(read_events=good.read_events + 1, byte_exact_recoveries=good.read_events + 1),
    ]
    for change in breaks:
        out = ec.makeroom_verdict(dataclasses.replace(good, **change))
        assert out.status == "fail", change
        assert any(ch.isdigit() for ch in out.detail)


def test_ablation_checker(runs):
    """Section 3.7 / Theorem 1: interfaces sit between the full ledger and the blind order,
    and the dashboard-free ones archive and owe more than the ledger; the check fails when the
    blind agent archives no more than the ledger or an interface owes fewer than the ledger."""
    paper = {"full": {"archive_events": 69, "read_events": 105},
             "no-dashboard": {"archive_events": 255, "read_events": 57}}
    out = ec.ablation_verdict(runs, paper)
    assert out.status == "pass", out.detail
    rows = out.numbers["interfaces"]
    assert rows["blind"]["archives_per_trial"] > rows["ledger"]["archives_per_trial"] == 1.0
    assert rows["ledger"]["obligations_per_trial"] == 0.0
    ledger = runs["ledger"]
    lazy = dataclasses.replace(runs["blind"], archive_events=ledger.archive_events,
                               read_events=0, mean_z=0.0, mean_z_se=0.0)
    assert ec.ablation_verdict({**runs, "blind": lazy}, paper).status == "fail"
    over = dataclasses.replace(runs["buckets"], mean_z=runs["blind"].mean_z + 1.0)
    assert ec.ablation_verdict({**runs, "buckets": over}, paper).status == "fail"
