"""`vista-lab sweep` end to end on the shipped small config (Theorem 1's
make-room trade-off at n=64, kappa=4), the summary, and the progress reports
(issue "Sweeps that scale")."""

from __future__ import annotations

import io
import json

import pyarrow.parquet as pq
import pytest

from vistalab._commands.sweep import _ProgressBar
from vistalab._examples import example_files
from vistalab._sweep import LocalBackend, SweepProgress, parse_config, run_sweep
from vistalab.cli import main

SMALL = example_files()["sweeps/small.toml"]  # shipped in the package (vistalab.examples)


@pytest.mark.slow
def test_small_example_end_to_end(tmp_path, capsys):
    """The small example runs, every cell respects Theorem 1's bound and the
    exact frontier within its interval, and plot-sweep draws it."""
    out = tmp_path / "small"
    assert main(["sweep", str(SMALL), "--out", str(out), "--workers", "1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["complete"] and doc["computed"] == doc["cells"] == 11 and doc["failed"] == 0
    t = pq.read_table(out / "results.parquet").to_pylist()
    assert len(t) == 11
    for r in t:
        assert r["mean_z_ci_high"] >= r["optimal_mean_z"]
        if r["lower_bound"] is not None:
            assert r["mean_z_ci_high"] >= r["lower_bound"]
        assert r["agrees_with_exact"] is not False
        assert r["consistent_with_theory"] is not False
    by = {r["interface"]: r for r in t}
    assert by["ledger"]["mean_z"] == 0.0 and by["ledger"]["rate_bits"] == 6.0
    assert main(["plot-sweep", str(out), "--y", "mean_z/kappa", "--out",
                 str(tmp_path / "f.png")]) == 0
    assert (tmp_path / "f.png").stat().st_size > 10_000
    # a rerun resumes everything and says so
    assert main(["sweep", str(SMALL), "--out", str(out), "--workers", "1"]) == 0
    text = capsys.readouterr().out
    assert "0 computed now, 11 resumed, 0 failed" in text and "complete" in text


def test_progress_reports_count_up_from_resumed_cells():
    """The progress callback starts at the resumed count and ends at the total,
    one report per cell (Proposition 1 grid)."""
    cfg = parse_config({"experiment": "recovery", "seed": 1,
                        "params": {"N": 8, "k": 4, "trials": 20, "budget": [4, 8, 16],
                                   "strategy": ["keep-blocks", "keep-bits"]}})
    events: list[SweepProgress] = []
    run_sweep(cfg, backend=LocalBackend(1), progress=events.append)
    assert [e.done for e in events] == list(range(cfg.n_cells + 1))
    assert all(e.total == cfg.n_cells and e.skipped == 0 and e.failed == 0 for e in events)


def test_progress_bar_shows_cells_rate_and_time_left():
    """The CLI's bar shows cells done of total, cells/s and time left (issue:
    progress bar with cells done, rate and time left)."""
    from rich.console import Console

    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=150)
    with _ProgressBar(console, 10, enabled=True) as bar:
        bar.update(SweepProgress(10, 4, 4, 0, 0.0))
        bar.update(SweepProgress(10, 6, 4, 1, 1.0))
    text = buf.getvalue()
    assert "6/10" in text and "2 cells/s" in text and "1 failed" in text and "left" in text
