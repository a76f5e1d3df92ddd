"""A sweep killed half-way (SIGKILL, no chance to clean up) resumes and ends
with exactly the table an uninterrupted run writes, byte for byte; the kill
never leaves a corrupt file behind (issue "Sweeps that scale"; the cells are
Proposition 1 recovery runs)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import pyarrow.parquet as pq
import pytest

from vistalab.cli import main

# 18 cells of ~0.05-0.15 s each at one worker: long enough to kill mid-run.
CONFIG = """
experiment = "recovery"
seed = 2024
[params]
N = 256
k = 128
trials = 6000
budget = [2048, 8192, 16384]
[[grid]]
strategy = ["keep-blocks", "keep-bits", "random-subset"]
[[grid]]
strategy = "recover"
handle_cost = [1.0, 8.0, 64.0]
"""
N_CELLS = 18


@pytest.mark.slow
def test_sigkill_then_resume_gives_identical_table(tmp_path):
    """Kill the sweep's whole process group with SIGKILL after a few cells,
    resume, and compare results.parquet / results.csv with an uninterrupted
    run's, byte for byte (Proposition 1 grid)."""
    cfg = tmp_path / "kill.toml"
    cfg.write_text(textwrap.dedent(CONFIG))
    killed = tmp_path / "killed"
    cells = killed / "cells"
    proc = subprocess.Popen(
        [sys.executable, "-m", "vistalab.cli", "sweep", str(cfg), "--out", str(killed),
         "--workers", "1", "--no-progress"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if cells.is_dir() and len(list(cells.glob("*.json"))) >= 4:
                break
            time.sleep(0.01)
        assert proc.poll() is None, f"sweep ended before the kill: {proc.stderr.read()!r}"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    stored = len(list(cells.glob("*.json")))
    assert 4 <= stored < N_CELLS, "the kill must land half-way for this test to mean anything"
    assert not (killed / "results.parquet").exists()
    # Every file the killed run left is complete (atomic writes): no temp files
    # renamed half-written, every record passes its checksum below.
    manifest = json.loads((killed / "manifest.json").read_text())
    assert manifest["runs"][-1]["status"] == "running"  # it never got to say otherwise

    assert main(["sweep", str(cfg), "--out", str(killed), "--workers", "1", "--no-progress",
                 "--json"]) == 0
    reference = tmp_path / "reference"
    assert main(["sweep", str(cfg), "--out", str(reference), "--workers", "1",
                 "--no-progress", "--json"]) == 0
    resumed_manifest = json.loads((killed / "manifest.json").read_text())
    last = resumed_manifest["runs"][-1]
    assert last["status"] == "finished" and last["todo"] == N_CELLS - stored
    assert json.loads((killed / "results.json").read_text())["sweep"]["discarded"] == []

    for name in ("results.parquet", "results.csv"):
        assert (killed / name).read_bytes() == (reference / name).read_bytes(), name
    table = pq.read_table(killed / "results.parquet")
    assert table.num_rows == N_CELLS
    assert table.num_rows == len(set(table["cell"].to_pylist()))
