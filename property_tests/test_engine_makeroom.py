"""Engine-backed make-room (sims.simulate_makeroom_engine): the instance M_{n,L,l} built as a
real workspace, policies that see only what the engine shows, byte-exact read-back, and the
cross-check against the exact E[Z], the array simulator and Theorem 1."""

from __future__ import annotations

import dataclasses
import os
import re

import numpy as np
import pytest
from vistalab.paper_checks._engine_claims import makeroom_verdict
from vistalab.sims import _engine_common
from vistalab.theory import DomainError, UnknownNameError
from vistalab.workspace import MemoryStore, PayloadInfo, Workspace, sha256_hex

from vistalab import sims, workspace

N, KAPPA, TRIALS = 24, 3, 200


@pytest.fixture(scope="module", params=["cl100k_base", "approx"])
def layout(request):
    return sims.calibrate_makeroom(12, 3, tokenizer=request.param, rng=11)


def _build(layout, j, budget=None):
    ws = Workspace(layout.budget + layout.budget_offsets[j] if budget is None else budget,
                   tokenizer=layout.tokenizer, store=MemoryStore(layout.store_root),
                   dashboard=layout.dashboard)
    ws.register_user(layout.task)
    for p, text in enumerate(layout.light):
        ws.register_user(layout.heavy[j] if p == j else text)
    return ws


def test_calibrated_blocks_free_exactly_l_and_L(layout):
    """Definition 'Make-room instance': sizes are net prompt tokens freed after inserting the
    replacement handle. Archiving each block in the engine (a workspace built here from the
    layout's texts) frees exactly l, and the bulky text exactly L = kappa l, at every
    position."""
    assert layout.L_tokens == layout.kappa * layout.l_tokens
    for j in (0, layout.n - 1):
        ws = _build(layout, j)
        for p, bid in enumerate(layout.ids):
            freed = ws.archive(bid).freed_tokens
            assert freed == (layout.L_tokens if p == j else layout.l_tokens), (j, p)


def test_rendering_is_over_budget_by_exactly_L_wherever_the_bulky_block_is(layout):
    """Definition 'Make-room instance': 'the prompt is over budget by L tokens', for every
    position of J* (the candidate rendering preflight compares with B is B + L)."""
    for j in range(layout.n):
        r = _build(layout, j).render()
        assert r.mode == "overflow"
        assert r.candidate_tokens == layout.budget + layout.budget_offsets[j] + layout.L_tokens
    # Under cl100k the checksum's tokenisation lets every bulky handle be matched, so the
    # budget does not depend on J*. The approximate count is a function of byte lengths
    # only: where the ID's digits shift the two handles differently, the position gets its
    # own budget, and the calibration says how many positions did.
    unmatched = layout.calibration["positions_without_matched_handle"]
    assert unmatched == sum(o != 0 for o in layout.budget_offsets)
    if layout.tokenizer == "cl100k_base":
        assert unmatched == 0


def test_ledger_parse_and_bucket_coarsening_name_the_bulky_block():
    """Theorem 1, part D (balanced buckets): the ledger's ~Tok column identifies J*; the
    coarsened view only names its bucket, floor(j M / n) as in sims' BucketsInterface."""
    lay = sims.calibrate_makeroom(20, 4, rng=5)
    iface = sims.make_interface("buckets", n=20, kappa=4, buckets=3)
    for j in (0, 7, 19):
        r = _build(lay, j).render()
        rows = sims.parse_ledger(r.dashboard)
        visible = [(row.tokens, row.unit_id) for row in rows if row.status == "visible"]
        assert max(visible)[1] == lay.ids[j]
        view = sims.coarsen_ledger(r.dashboard, lay.ids, 3)
        assert re.search(rf"bucket {iface.observe(j, None) + 1} of 3", view), view
        assert lay.ids[j] not in view.split("(")[0]


@pytest.mark.parametrize(("name", "kw"), [("ledger", {}), ("buckets", {"buckets": 4}),
                                          ("gaussian", {"sigma": 1.0}), ("blind", {})])
def test_engine_mean_z_matches_exact_array_and_theory(name, kw):
    """Theorem 1 through the engine: E[Z] agrees with the exact E[Z] of the interface and with
    the array simulator (tolerance 4 standard errors, floor kappa/trials), is not below the
    Theorem 1 bound or the exact frontier, every archived load-bearing block reads back
    byte-exact, and preflight stopped where the instance's arithmetic says."""
    res = sims.simulate_makeroom_engine(N, KAPPA, name, trials=TRIALS, rng=2024,
                                        array_trials=50_000, **kw)
    tol = 4 * max(res.mean_z_se, KAPPA / TRIALS)
    assert abs(res.mean_z - res.exact_mean_z) <= tol
    assert res.agrees_with_array and res.consistent_with_theory and res.agrees_with_exact
    assert res.all_recoveries_byte_exact
    assert res.read_events == res.byte_exact_recoveries == res.recovery_obligations
    assert res.queries == TRIALS * (N - 1) == res.queries_answered
    assert (res.size_mismatches, res.budget_mismatches, res.stop_mismatches) == (0, 0, 0)
    assert sum(res.z_counts) == TRIALS and res.mode == "engine"
    assert makeroom_verdict(res).status == "pass"


@pytest.mark.parametrize(("name", "kw"), [("blind", {}), ("buckets", {"buckets": 4}),
                                          ("gaussian", {"sigma": 0.7})])
def test_reused_workspaces_give_the_same_law_and_return_to_their_state(name, kw):
    """Theorem 1 through reused workspaces: one workspace per block of 64 trials, every
    archive restored after each trial (the paper's Q_undo: the canonical state hash returns
    to the initial one every time); E[Z] still agrees with the exact value and the array
    simulator, because for these interfaces Z's law does not depend on J*'s position."""
    res = sims.simulate_makeroom_engine(N, KAPPA, name, trials=TRIALS, rng=77, reuse=True,
                                        array_trials=50_000, **kw)
    assert res.reuse and res.workspaces == -(-TRIALS // 64) and res.undo_mismatches == 0
    assert res.agrees_with_exact and res.agrees_with_array and res.consistent_with_theory
    assert res.all_recoveries_byte_exact and res.stop_mismatches == 0
    assert res.queries_answered == res.queries == TRIALS * (N - 1)


def test_restore_returns_the_workspace_to_its_rendering():
    """Implementation details (restore, Q_undo): after archiving blocks and restoring them
    the engine renders exactly what it rendered before, which is what lets a reused
    workspace show every trial the same initial observation."""
    lay = sims.calibrate_makeroom(16, 3, rng=2)
    ws = _build(lay, 5)
    before, state = ws.render(), ws.state_hash()
    for bid in (lay.ids[0], lay.ids[5], lay.ids[9]):
        ws.context_workspace_archive(bid)
    for bid in (lay.ids[9], lay.ids[0], lay.ids[5]):
        ws.restore(bid)
    after = ws.render()
    assert ws.state_hash() == state
    assert after.messages == before.messages and after.dashboard == before.dashboard
    assert after.candidate_tokens == before.candidate_tokens


def test_reuse_is_refused_where_z_depends_on_the_position():
    """Theorem 1, part D: with unequal buckets Z's law depends on J*'s bucket, so one J* per
    block of trials would bias E[Z]; reuse is refused there."""
    with pytest.raises(DomainError, match=r"`reuse` needs buckets of equal size"):
        sims.simulate_makeroom_engine(20, 3, "buckets", buckets=3, trials=4, reuse=True)


def test_ledger_interface_never_archives_a_load_bearing_block():
    """Theorem 1: 'The full ledger identifies J* and attains Z = 0' (through the rendered
    dashboard's ~Tok column): one archive per trial, no reads."""
    res = sims.simulate_makeroom_engine(40, 5, "ledger", trials=60, rng=1, array_trials=1000)
    assert res.z_counts[0] == 60 and res.archive_events == 60 and res.read_events == 0


def test_results_are_reproducible_and_depend_on_the_seed():
    """DESIGN.md 'randomness is passed': the same seed gives the same trials; another seed
    gives other trials; the seed is recorded."""
    a = sims.simulate_makeroom_engine(16, 3, "blind", trials=64, rng=7, array_trials=1000)
    b = sims.simulate_makeroom_engine(16, 3, "blind", trials=64, rng=7, array_trials=1000)
    c = sims.simulate_makeroom_engine(16, 3, "blind", trials=64, rng=8, array_trials=1000)
    assert a.z_counts == b.z_counts and a.archive_events == b.archive_events
    assert a.seed_entropy == 7
    assert (a.z_counts, a.archive_events) != (c.z_counts, c.archive_events)


class _LyingStore(MemoryStore):
    """Stores a corrupted copy and reports the corrupted copy's checksum (a store whose own
    checks all pass)."""

    def put(self, key: str, data: bytes) -> PayloadInfo:
        bad = bytes(data[:-1]) + b"?"
        self._blobs[key] = bad
        return PayloadInfo(key, f"{self.root}/{key}", len(bad), sha256_hex(bad))


def test_a_corrupting_store_is_caught_by_the_byte_exact_check(monkeypatch):
    """Definition 'Make-room instance': every load-bearing block is queried later; an archived
    one must read back as the original bytes. A store that corrupts payloads consistently
    (and reports the corrupted bytes' checksum) fails the engine's own checksum on every read,
    each read counts as a mismatch, and the Theorem 1 claim fails."""
    monkeypatch.setattr(_engine_common, "MemoryStore", _LyingStore)
    res = sims.simulate_makeroom_engine(16, 3, "blind", trials=30, rng=3, array_trials=1000)
    assert res.read_events > 0
    assert res.byte_exact_recoveries == 0 and res.byte_mismatches == res.read_events
    assert not res.all_recoveries_byte_exact
    out = makeroom_verdict(res)
    assert out.status == "fail" and "byte-exact" in out.detail


def test_disk_store_reads_back_byte_exact_and_cleans_up(tmp_path):
    """Implementation details (payload store): the same experiment on real files (atomic
    write, fsync) reads every archived block back exactly; a given folder is kept, the
    default temporary folder is removed."""
    res = sims.simulate_makeroom_engine(12, 3, "blind", trials=6, rng=4, store="disk",
                                        store_dir=tmp_path / "arch", array_trials=1000)
    assert res.store == "disk" and res.read_events > 0 and res.all_recoveries_byte_exact
    assert (res.size_mismatches, res.budget_mismatches, res.stop_mismatches) == (0, 0, 0)
    # The given folder is kept; each finished trial removed its own payloads, so
    # the next trial could write the same IDs (nothing is overwritten, audit item 2).
    assert (tmp_path / "arch").is_dir()
    assert not any(p.name.endswith(".txt") for p in (tmp_path / "arch").iterdir())
    before = set(os.listdir(os.path.realpath("/tmp")))
    sims.simulate_makeroom_engine(12, 3, "ledger", trials=2, rng=4, store="disk",
                                  array_trials=1000)
    leaked = {d for d in set(os.listdir(os.path.realpath("/tmp"))) - before
              if d.startswith("vista-engine-")}
    assert not leaked


def test_approx_tokenizer_keeps_sizes_exact_and_reports_dashboard_rounding():
    """Definition 'Make-room instance' under the approximate tokenizer: sizes and budget stay
    exact; the ledger's status column grows a byte per archive and the approximate count
    rounds the whole dashboard up, so preflight may clear one archive late. That residual is
    reported (stop_mismatches, z_excess), never hidden, and it can only raise Z."""
    res = sims.simulate_makeroom_engine(16, 3, "blind", trials=120, rng=9, tokenizer="approx",
                                        array_trials=20_000)
    assert res.tokenizer == "approx" and res.all_recoveries_byte_exact
    assert (res.size_mismatches, res.budget_mismatches) == (0, 0)
    exact = sims.simulate_makeroom_engine(16, 3, "blind", trials=120, rng=9,
                                          array_trials=20_000)
    assert exact.stop_mismatches == 0
    # Same trials (same seed): late stops only add archives.
    assert res.archive_events - exact.archive_events >= res.stop_mismatches > 0
    assert res.mean_z >= exact.mean_z


@pytest.mark.parametrize(("kwargs", "exc", "match"), [
    ({"interface": "gibbs", "lam": 0.5}, UnknownNameError, r"Unknown engine interface 'gibbs'"),
    ({"interface": "ledgr"}, UnknownNameError, r"Did you mean 'ledger'\?"),
    ({"interface": "blind", "store": "memroy"}, UnknownNameError, r"Did you mean 'memory'\?"),
    ({"interface": "blind", "tokenizer": "cl100k"}, UnknownNameError,
     r"Unknown tokenizer 'cl100k'"),
    ({"interface": "blind", "store_dir": "x"}, DomainError,
     r"`store_dir` is only used with store='disk'"),
    ({"interface": "blind", "l_tokens": 0}, DomainError,
     r"`l_tokens` must be an integer with 1 <= value <= 100000 \(got l_tokens=0\)"),
    ({"interface": "blind", "trials": 0}, DomainError, r"`trials` must be an integer >= 1"),
    ({"interface": "blind", "policy": "greedy"}, UnknownNameError, r"Unknown policy 'greedy'"),
])
def test_bad_input_names_parameter_rule_and_fix(kwargs, exc, match):
    """DESIGN.md 'validate once, at the door': each bad argument raises one error naming the
    parameter, the value and the rule, before any work."""
    args = {"trials": 5, **kwargs}
    name = args.pop("interface")
    with pytest.raises(exc, match=match):
        sims.simulate_makeroom_engine(16, 3, name, **args)


def test_instance_bounds_are_checked():
    """Definition 'Make-room instance': 2 <= kappa < n; engine mode also caps n."""
    with pytest.raises(DomainError, match=r"`kappa` must be an integer with 2 <= kappa < n"):
        sims.simulate_makeroom_engine(5, 5, "blind", trials=1)
    with pytest.raises(DomainError, match=r"`n` must be at most 10000 in engine mode"):
        sims.calibrate_makeroom(10_001, 3)


def test_result_is_a_makeroom_result_with_engine_keys():
    """the same JSON keys as the array mode plus archive_events,
    read_events and byte_exact_recoveries; the result is a MakeRoomResult (frozen)."""
    res = sims.simulate_makeroom_engine(12, 3, "blind", trials=4, rng=1, array_trials=500)
    assert isinstance(res, sims.MakeRoomResult)
    array_keys = set(sims.simulate_makeroom(12, 3, "blind", trials=10, rng=1).to_dict())
    d = res.to_dict()
    assert array_keys <= set(d)
    assert {"archive_events", "read_events", "byte_exact_recoveries"} <= set(d)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.mean_z = 0.0  # type: ignore[misc]
    assert np.isfinite(d["calibration_seconds"]) and workspace.Workspace


def test_fresh_trials_fork_a_built_workspace_checked_against_a_fresh_build(monkeypatch):
    """Definition 'Make-room instance', fresh J* per trial: trial workspaces are forks of one
    built workspace with the bulky text substituted at J*; the first fork of a run is compared
    with registering the instance from scratch, and a fork that differs stops the run."""
    res = sims.simulate_makeroom_engine(12, 3, "blind", trials=8, rng=5, array_trials=500)
    assert res.workspaces == 8 and res.budget_mismatches == 0 and res.all_recoveries_byte_exact
    real_fork = Workspace.fork

    def wrong_fork(self, *, store=None, substitute=None):
        # Puts the bulky text one position off: a workspace, but not the instance's.
        (bid, text), = substitute.items()
        moved = f"B{int(bid[1:]) % 12 + 2}"
        return real_fork(self, store=store, substitute={moved: text})

    monkeypatch.setattr(Workspace, "fork", wrong_fork)
    with pytest.raises(DomainError, match=r"`engine` must give a forked trial workspace the "
                                          r"state, log and rendering of registering the "
                                          r"instance from scratch"):
        sims.simulate_makeroom_engine(12, 3, "blind", trials=4, rng=5, array_trials=500)


def test_an_interrupted_disk_run_leaves_no_temporary_folder(monkeypatch):
    """Implementation details (payload store): the temporary payload folder a run creates is
    removed even when the run stops with an error, and when a store spec is dropped without
    being closed."""
    import gc

    from vistalab.sims import _engine_makeroom

    made = []

    def recording_store_iv(*args, **kwargs):
        spec = _engine_common.store_iv(*args, **kwargs)
        made.append(spec.directory)
        return spec

    def boom(*args, **kwargs):
        assert made[0].is_dir(), "the run's folder exists while it runs"
        raise RuntimeError("interrupted")

    monkeypatch.setattr(_engine_makeroom, "store_iv", recording_store_iv)
    monkeypatch.setattr(_engine_makeroom, "_trial", boom)
    with pytest.raises(RuntimeError, match="interrupted"):
        sims.simulate_makeroom_engine(12, 3, "blind", trials=2, rng=4, store="disk",
                                      array_trials=500)
    assert made[0].name.startswith("vista-engine-") and not made[0].exists()
    spec = _engine_common.store_iv("disk")
    folder = spec.directory
    assert folder.is_dir()
    del spec
    gc.collect()
    assert not folder.exists()
