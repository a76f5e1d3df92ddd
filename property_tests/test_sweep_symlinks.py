"""Sweeps never write or delete through a symlink: an output folder whose
``cells`` (or lock, manifest, results, key file) is a symlink is refused before
anything is touched, so ``--fresh`` deletes nothing outside the output folder;
cell records carry a keyed checksum, so a record edited outside the sweep with
its checksum recomputed is still discarded and recomputed."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

from vistalab._sweep import DirectoryStore, LocalBackend, SweepStoreError, parse_config, run_sweep

DOC = {
    "experiment": "recovery",
    "seed": 11,
    "params": {"N": 16, "k": 8, "trials": 50, "budget": [16, 48]},
    "grid": {"strategy": ["keep-blocks"]},
}


def _victim(tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    for name in ("precious.json", "other.json"):
        (victim / name).write_text('{"mine": true}')
    return victim


@pytest.mark.parametrize("name", ["cells", ".lock", "manifest.json", "results.csv", ".cell-key"])
def test_symlinked_entry_is_refused_and_nothing_outside_is_touched(tmp_path, name):
    victim = _victim(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    target = victim if name == "cells" else victim / "precious.json"
    os.symlink(target, out / name)
    with pytest.raises(SweepStoreError, match=f"symlink as {name}"):
        DirectoryStore(out, fresh=True)
    assert sorted(p.name for p in victim.iterdir()) == ["other.json", "precious.json"]
    assert (victim / "precious.json").read_text() == '{"mine": true}'


def test_cli_sweep_fresh_with_symlinked_cells_deletes_nothing_outside(tmp_path):
    victim = _victim(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    os.symlink(victim, out / "cells")
    cfg = tmp_path / "sweep.toml"
    cfg.write_text('experiment = "recovery"\nseed = 11\n[params]\nN = 16\nk = 8\n'
                   'trials = 50\nbudget = [16, 48]\n[grid]\nstrategy = ["keep-blocks"]\n')
    proc = subprocess.run(
        [sys.executable, "-m", "vistalab.cli", "sweep", str(cfg), "--out", str(out), "--fresh"],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert "symlink" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert sorted(p.name for p in victim.iterdir()) == ["other.json", "precious.json"]


def test_edited_record_with_recomputed_plain_checksum_is_discarded(tmp_path):
    cfg = parse_config(DOC)
    out = tmp_path / "out"
    run_sweep(cfg, out=out, backend=LocalBackend(1))
    victim = out / "cells" / f"{cfg.cells[0].key}.json"
    doc = json.loads(victim.read_text())
    doc["row"]["success"] = 0.5
    payload = {"key": doc["key"], "params": doc["params"], "row": doc["row"]}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), allow_nan=True)
    doc["checksum"] = hashlib.sha256(text.encode()).hexdigest()  # unkeyed, recomputed
    victim.write_text(json.dumps(doc))
    res = run_sweep(cfg, out=out, backend=LocalBackend(1))
    assert res.summary.computed == 1 and len(res.summary.discarded) == 1
    assert oct((out / ".cell-key").stat().st_mode & 0o777) == "0o600"
