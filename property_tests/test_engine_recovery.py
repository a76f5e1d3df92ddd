"""Engine-backed recovery task (sims.simulate_recovery_engine): N random k-bit blocks as tool
results, a token budget below the raw history, strategies acting through the agent's tools,
the answer checked byte for byte; the handle cost and the feasibility region (Proposition 1)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from vistalab.paper_checks._engine_claims import (
    baselines_verdict,
    feasibility_verdict,
    recovery_verdict,
)
from vistalab.theory import DomainError, UnknownNameError

from vistalab import sims, workspace

N, K = 16, 512


@pytest.fixture(scope="module")
def fmap():
    return sims.recovery_feasibility_map((4, 16), K, rng=5)


@pytest.fixture(scope="module")
def threshold(fmap):
    return fmap.engine_threshold[fmap.N.index(N)]


def test_feasibility_region_is_theory_condition_with_measured_costs(fmap):
    """Proposition 1: VISTA is correct 'whenever the instruction, the N handles, and one
    recovered block fit within B'. The engine's smallest working budget equals that sum with
    the engine's measured token costs (within 1%, or the engine's own floor where it binds)."""
    assert max(fmap.relative_error_measured) <= 0.01, fmap.to_dict()
    for b, t, floor in zip(fmap.engine_threshold, fmap.theory_threshold_measured,
                           fmap.engine_floor, strict=True):
        assert b >= floor and abs(b - max(t, floor)) <= 0.01 * b


def test_recover_succeeds_inside_the_region_and_fails_below(threshold):
    """Proposition 1, achievability: with B inside the feasibility region (and below the raw
    history) the recovering method reads block i* back byte-exact in every trial; just below
    the region it cannot fit the block and fails every trial."""
    good = sims.simulate_recovery_engine(N, K, threshold + 150, "recover", trials=16, rng=1)
    bad = sims.simulate_recovery_engine(N, K, threshold - 30, "recover", trials=6, rng=2)
    assert good.budget < good.raw_history_tokens
    assert good.success == 1.0 and good.byte_exact_recoveries == good.read_events == 16
    assert good.archive_events == 16 * N and good.engine_feasible == 1.0 and good.feasible
    assert bad.success == 0.0 and not bad.feasible
    assert recovery_verdict(good, bad).status == "pass"
    # The checker fails on a broken result (a trial that did not recover).
    broken = dataclasses.replace(good, successes=good.successes - 1)
    assert recovery_verdict(broken, bad).status == "fail"


@pytest.mark.parametrize("name", ["delete", "keep-bits", "keep-blocks"])
def test_non_recovering_engine_policies_never_beat_prop1(name, threshold):
    """Proposition 1: a non-recovering method whose in-prompt state holds H bits of the blocks
    succeeds with probability at most H/(Nk) + 1/k (here with a budget below the raw history,
    the largest b or s that fits)."""
    res = sims.simulate_recovery_engine(N, K, threshold + 150, name, trials=60, rng=3)
    assert not res.recovering and res.read_events == 0
    assert res.consistent_with_bound is True
    assert res.success_ci[0] <= min(1.0, res.bound)
    assert res.success <= res.exact_success + 4 * np.sqrt(0.25 / res.trials)
    if name == "keep-blocks":
        assert 0 < res.kept < N and res.entropy_bits == res.kept * K
    if name == "keep-bits":
        assert 0 < res.kept < K and res.entropy_bits == N * res.kept
    if name == "delete":
        assert res.delete_events == 60 and res.entropy_bits == 0
    assert baselines_verdict({name: res}).status == "pass"
    cheat = dataclasses.replace(res, success=1.0, success_ci=(0.95, 1.0),
                                consistent_with_bound=False)
    assert baselines_verdict({name: cheat}).status == "fail"


def test_handle_cost_fit():
    """Proposition 1's handle model c0 log2 N: the engine's handles cost a nearly constant
    number of tokens (tag, level, size, checksum, path), so the affine fit is tight and the
    through-origin c0 fit carries the model error, which is reported."""
    fit = sims.measure_handle_cost((2, 8, 32), k=32, rng=1)
    assert fit.N == (2, 8, 32) and len(fit.handle_tokens) == 3
    assert 20 < fit.intercept < 80 and abs(fit.slope) < 2
    assert fit.affine_residual_max < 2.0
    x = np.log2(fit.N)
    assert fit.c0 == pytest.approx(np.dot(x, fit.handle_tokens) / np.dot(x, x))
    assert fit.c0_residual_max > fit.affine_residual_max


def test_feasibility_checker_fails_on_a_wrong_threshold(fmap):
    """The feasibility claim's checker rejects an engine threshold that disagrees with
    theory's condition (a broken map)."""
    fit = sims.measure_handle_cost((2, 8), k=32, rng=1)
    assert feasibility_verdict(fmap, fit).status == "pass"
    wrong = dataclasses.replace(fmap, relative_error_measured=(0.0, 0.2))
    out = feasibility_verdict(wrong, fit)
    assert out.status == "fail" and "N=16" in out.detail


def test_disk_store_and_approx_tokenizer(fmap, tmp_path):
    """Implementation details: the recovering method reads real payload files back exactly;
    the approximate tokenizer gives its own (measured) token costs."""
    # Handles show the payload folder's path, so token costs depend on the folder: the
    # region is mapped for this folder's own root (measured, not guessed), and the disk run
    # gets the same margin above it as the in-memory runs above theirs.
    folder = tmp_path / "archive"
    root = workspace.DiskStore(folder).root
    disk = sims.recovery_feasibility_map((N,), K, c0=fmap.c0, store_root=root, rng=5)
    mem = sims.recovery_feasibility_map((N,), K, c0=fmap.c0, rng=5)  # same blocks, in memory
    assert disk.engine_threshold[0] > mem.engine_threshold[0]  # a longer path costs more
    res = sims.simulate_recovery_engine(N, K, disk.engine_threshold[0] + 150, "recover",
                                        trials=3, rng=4, store="disk", store_dir=folder)
    assert res.budget < res.raw_history_tokens
    assert res.store == "disk" and res.success == 1.0 and res.byte_exact_recoveries == 3
    approx = sims.simulate_recovery_engine(N, K, 4000, "recover", trials=3, rng=4,
                                           tokenizer="approx")
    assert approx.tokenizer == "approx" and approx.success == 1.0
    assert approx.block_tokens != res.block_tokens


def test_feasibility_map_refuses_a_bad_store_root():
    """DESIGN.md 'validate once, at the door': the store root must be a usable root."""
    with pytest.raises(DomainError, match=r"`store_root` must be a payload root without a "
                                          r"trailing slash"):
        sims.recovery_feasibility_map((4,), 16, store_root="archive/")


def test_json_keys_extend_the_array_mode(threshold):
    """`vista-lab recovery --engine` has the array mode's JSON keys plus
    handle_tokens; the result is a RecoveryResult."""
    res = sims.simulate_recovery_engine(4, 16, 2000, "delete", trials=2, rng=1)
    assert isinstance(res, sims.RecoveryResult)
    array = sims.simulate_recovery(4, 16, 32.0, "keep-blocks", trials=2, rng=1).to_dict()
    assert set(array) <= set(res.to_dict()) and "handle_tokens" in res.to_dict()


@pytest.mark.parametrize(("args", "exc", "match"), [
    ((8, 16, 3000, "recovr"), UnknownNameError, r"Did you mean 'recover'\?"),
    ((8, 16, 3000, "random-subset"), UnknownNameError, r"Unknown engine strategy"),
    ((8, 16, 50, "recover"), DomainError, r"`budget` must be at least [0-9,]+ tokens in engine"),
    ((8, 16, 2.5, "recover"), DomainError, r"`budget` must be an integer"),
    ((0, 16, 3000, "recover"), DomainError, r"`N` must be an integer with 1 <= value"),
    ((2048, 1024, 3000, "recover"), DomainError, r"must keep N\*k <= 1048576"),
])
def test_bad_input(args, exc, match):
    """DESIGN.md 'validate once, at the door': parameter, value, rule and fix."""
    with pytest.raises(exc, match=match):
        sims.simulate_recovery_engine(*args, trials=1)


def test_a_failed_read_of_a_visible_handle_is_an_engine_error(threshold, monkeypatch):
    """A read of a handle the rendering shows must succeed; if the engine refuses it,
    the simulator stops with DomainError naming the engine instead of counting the
    trial as a failed recovery (which would bias the success rate silently)."""
    real = workspace.Workspace.call_tool

    def refusing_reads(self, name, arguments):
        if name == workspace.READ_PATH_TOOL:
            return workspace.ToolOutcome.failed(workspace.ToolFailure.REFUSED, "read broke")
        return real(self, name, arguments)

    monkeypatch.setattr(workspace.Workspace, "call_tool", refusing_reads)
    with pytest.raises(DomainError, match="read broke"):
        sims.simulate_recovery_engine(N, K, threshold + 150, "recover", trials=2, rng=1)
