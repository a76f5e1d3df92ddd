"""``reproduce --quick`` after a full run is a smoke run of the simulations and
figures: the stages that do not depend on --quick (the proof steps' certificates,
the paper checks on them, the engine checks, the beyond rows) are read from the
full run's cache beside it (same key, same code fingerprint), and a full run
reads them from the quick run's."""

from __future__ import annotations

from pathlib import Path

from vistalab._reproduce._cache import CacheRecord, StageCache, cache_key
from vistalab._reproduce._pipeline import SHARED_STAGES, _Runner, sibling_caches


def test_sibling_caches_follow_the_default_layout(tmp_path):
    """Quick in X/quick reads X/.cache; full in X reads X/quick/.cache; a quick run
    elsewhere has no sibling."""
    x = tmp_path / "vista-lab-out"
    assert sibling_caches(x / "quick", True) == [x / ".cache"]
    assert sibling_caches(x, False) == [x / "quick" / ".cache"]
    assert sibling_caches(tmp_path / "elsewhere", True) == []


def _record(stage: str, runner: _Runner, params: dict) -> CacheRecord:
    key = cache_key(stage, params, runner.fingerprint)
    return CacheRecord(stage, key, {"rows": [stage]}, {"computed": "full run"}, 12.5)


def test_quick_run_reuses_the_full_runs_shared_stages_only(tmp_path):
    """A shared stage is found in the sibling cache and copied into this run's;
    a figure's simulation (keyed by its quick parameters) never is."""
    full, quick = tmp_path / "out", tmp_path / "out" / "quick"
    runner = _Runner(quick, seed=1, force=False, shared=sibling_caches(quick, True))
    sibling = StageCache(full / ".cache")
    shared = _record("verify", runner, {})
    own = _record("sim:fig1_recovery", runner, {"trials": 300})
    sibling.store(shared)
    sibling.store(own)
    assert "verify" in SHARED_STAGES and "sim:fig1_recovery" not in SHARED_STAGES

    assert runner._lookup("verify", shared.key) == shared
    assert StageCache(quick / ".cache").load("verify", shared.key) == shared  # copied
    assert runner._lookup("sim:fig1_recovery", own.key) is None
    # another key (other code, other params) is a miss, not a stale reuse
    assert runner._lookup("verify", "0" * 64) is None


def test_without_a_sibling_nothing_is_shared(tmp_path):
    """The check can fail: a runner without sibling caches misses the same record."""
    full, quick = tmp_path / "out", tmp_path / "out" / "quick"
    runner = _Runner(quick, seed=1, force=False)
    record = _record("verify", runner, {})
    StageCache(full / ".cache").store(record)
    assert runner._lookup("verify", record.key) is None
    assert not Path(quick / ".cache").exists() or not any((quick / ".cache").iterdir())
