"""`vista-lab sweep` under the error contract (sweep items, owned by
): bad --scheduler and empty --out are one-line errors with exit 2, a
huge --workers is capped and says so, and SIGKILL to the sweep's process does
not leave its worker processes running. Cells are Proposition 1 recovery runs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from vistalab.cli import main

SMALL = """
experiment = "recovery"
seed = 1
[params]
N = 16
k = 8
trials = 50
budget = [16, 64]
strategy = "keep-bits"
"""


@pytest.fixture
def cfg(tmp_path):
    p = tmp_path / "small.toml"
    p.write_text(textwrap.dedent(SMALL))
    return p


@pytest.mark.parametrize("scheduler", ["bogus", "", "http://host:8786", "tcp://host:port"])
def test_bad_scheduler_is_one_line_exit_2(cfg, tmp_path, capsys, scheduler):
    """--scheduler bogus / '' / a wrong scheme / a bad port: exit 2, one line
    naming --scheduler and the fix, no traceback, no folder created."""
    status = main(["sweep", str(cfg), "--scheduler", scheduler, "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1 and "`--scheduler`" in err and "tcp://" in err
    assert "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_empty_out_is_refused(cfg, tmp_path, capsys, monkeypatch):
    """--out '' is refused (it used to write into the current folder)."""
    monkeypatch.chdir(tmp_path)
    assert main(["sweep", str(cfg), "--out", ""]) == 2
    err = capsys.readouterr().err
    assert "`--out` must be a non-empty folder path" in err and err.count("\n") == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["small.toml"]


def test_huge_worker_count_is_capped_and_reported(cfg, tmp_path, capsys):
    """--workers 100000 for 2 cells runs with at most 2 workers and says so on
    stderr and in the JSON summary and the manifest."""
    out = tmp_path / "o"
    assert main(["sweep", str(cfg), "--workers", "100000", "--out", str(out), "--json",
                 "--no-progress"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["workers"] <= 2
    assert any("--workers 100000 capped at" in n for n in doc["notes"])
    assert "--workers 100000 capped at" in captured.err
    manifest = json.loads((out / "manifest.json").read_text())
    assert "capped" in manifest["runs"][-1]["notes"][0]


SLOW = """
experiment = "recovery"
seed = 2024
[params]
N = 256
k = 128
trials = 20000
budget = [2048, 8192, 16384, 4096]
strategy = ["keep-blocks", "keep-bits", "random-subset"]
"""


def _session_members(sid: int) -> list[int]:
    """Live (non-zombie) processes of session ``sid``."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        state, session = fields[0], int(fields[3])
        if session == sid and state != "Z":
            out.append(int(d.name))
    return out


@pytest.mark.slow
def test_sigkill_of_the_sweep_leaves_no_workers(tmp_path):
    """SIGKILL to the sweep's own process (not its group) must not
    leave loky workers or resource trackers running: within 10 s every process
    of its session is gone (they used to run on for more than 20 s)."""
    cfg = tmp_path / "slow.toml"
    cfg.write_text(textwrap.dedent(SLOW))
    out = tmp_path / "o"
    proc = subprocess.Popen(
        [sys.executable, "-m", "vistalab.cli", "sweep", str(cfg), "--out", str(out),
         "--workers", "2", "--no-progress"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    sid = proc.pid
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and proc.poll() is None:
            if len(_session_members(sid)) >= 3 and (out / "manifest.json").exists():
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the sweep ended before the kill"
        assert len(_session_members(sid)) >= 3, "no worker processes to watch"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _session_members(sid):
            time.sleep(0.1)
        left = _session_members(sid)
    finally:
        for pid in _session_members(sid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    assert left == [], f"processes still running 10 s after the kill: {left}"
