"""The engine-backed claims registered into paper_checks (issue 5 section 4): present in the
registry, passing on the engine, and each checker failing on a broken result."""

from __future__ import annotations

import dataclasses

import pytest

import paper_checks as pc
import sims
from paper_checks import _engine_claims as ec

ENGINE_IDS = {"engine.makeroom-ledger", "engine.makeroom-buckets", "engine.makeroom-gaussian",
              "engine.makeroom-blind", "engine.ablation-counters", "engine.recovery-recover",
              "engine.recovery-baselines", "engine.recovery-feasibility"}


@pytest.fixture(scope="module")
def runs():
    """A small make-room batch per interface (fixed seed)."""
    out = {}
    for i, (name, kw) in enumerate(ec.MAKEROOM_INTERFACES):
        out[name] = sims.simulate_makeroom_engine(24, 3, name, trials=160, rng=100 + i,
                                                  array_trials=50_000, **kw)
    return out


def test_engine_claims_are_registered_in_their_section():
    """Issue 5 section 4: each engine-versus-theory comparison is a registered check with a
    place in the paper, shown by check-paper and the reproduce report."""
    claims = {c.id: c for c in pc.all_claims()}
    assert ENGINE_IDS <= set(claims)
    for cid in ENGINE_IDS:
        c = claims[cid]
        assert c.kind == "engine" and c.section == "Engine-backed checks"
        assert c.module == "paper_checks._engine_claims" and "paper.tex" in c.where


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
