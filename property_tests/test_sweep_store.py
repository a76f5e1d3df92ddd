"""The results store: in-memory and on-disk stores give the same table, stored
cells are skipped, damaged or foreign cells are detected, a folder holding
another sweep is refused, and failed cells are retried on resume (issue
"Sweeps that scale"; DESIGN rule 9; cells are Proposition 1 recovery runs)."""

from __future__ import annotations

import json

import numpy as np
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from vistalab._sweep import (
    EXPERIMENTS,
    CellRecord,
    DirectoryStore,
    Experiment,
    LocalBackend,
    MemoryStore,
    OutputSpec,
    ParamSpec,
    SweepStoreError,
    parse_config,
    read_results,
    run_sweep,
)

DOC = {
    "experiment": "recovery",
    "seed": 11,
    "params": {"N": 16, "k": 8, "trials": 200, "budget": [16, 48, 96]},
    "grid": [{"strategy": ["keep-blocks", "random-subset"]},
             {"strategy": "recover", "handle_cost": [1.0, 4.0]}],
}


def _run(cfg, out=None, **kw):
    return run_sweep(cfg, out=out, backend=LocalBackend(1), **kw)


def test_memory_and_directory_stores_agree(tmp_path):
    """Both store implementations build the identical Proposition 1 table, and
    the files on disk read back to it (parquet exactly, CSV value for value)."""
    cfg = parse_config(DOC)
    mem = _run(cfg)
    disk = _run(cfg, tmp_path / "o")
    assert mem.table is not None and disk.table is not None
    assert mem.table.equals(disk.table)
    assert pq.read_table(tmp_path / "o" / "results.parquet").equals(disk.table)
    csv = pacsv.read_csv(tmp_path / "o" / "results.csv")
    assert csv.num_rows == cfg.n_cells
    assert np.allclose(csv["success"].to_numpy(), disk.table["success"].to_numpy(), rtol=0,
                       atol=0)
    assert read_results(tmp_path / "o").equals(disk.table)
    side = json.loads((tmp_path / "o" / "results.json").read_text())
    assert side["seed_entropy"] == "11"
    assert side["sweep"]["n_cells"] == cfg.n_cells and side["packages"]["pyarrow"]
    assert "git_commit" in side and side["params"]["experiment"] == "recovery"
    assert {c["name"] for c in side["sweep"]["columns"]} == set(disk.table.column_names)


def test_table_is_tidy_with_documented_columns():
    """One row per (N, k, B, strategy, c0) cell of Proposition 1's task, each
    with its bound, and the cell column holding each cell's content key in
    canonical order."""
    cfg = parse_config(DOC)
    t = _run(cfg).table
    assert t is not None
    assert t["cell"].to_pylist() == [c.key for c in cfg.cells]
    rows = t.to_pylist()
    for r, c in zip(rows, cfg.cells, strict=True):
        assert {k: r[k] for k in c.params} == dict(c.params)
        assert r["bound"] == pytest.approx(r["budget"] / (r["N"] * r["k"]) + 1 / r["k"])
    assert "elapsed_seconds" not in t.column_names and "trials_per_second" not in t.column_names


def test_rerun_skips_stored_cells_and_rewrites_identical_bytes(tmp_path):
    """A second run of a complete Proposition 1 sweep computes nothing and
    writes byte-identical table files."""
    cfg = parse_config(DOC)
    first = _run(cfg, tmp_path / "o")
    before = {f: (tmp_path / "o" / f).read_bytes() for f in ("results.parquet", "results.csv")}
    again = _run(cfg, tmp_path / "o")
    assert first.summary.computed == cfg.n_cells
    assert again.summary.computed == 0 and again.summary.skipped == cfg.n_cells
    for f, data in before.items():
        assert (tmp_path / "o" / f).read_bytes() == data


def test_damaged_cell_file_is_detected_and_recomputed(tmp_path):
    """The checksum catches a tampered cell record; it is discarded, recomputed,
    and the final Proposition 1 table is unchanged."""
    cfg = parse_config(DOC)
    ref = _run(cfg, tmp_path / "o").table
    victim = tmp_path / "o" / "cells" / f"{cfg.cells[3].key}.json"
    doc = json.loads(victim.read_text())
    doc["row"]["success"] = 0.123456  # a plausible but wrong value
    victim.write_text(json.dumps(doc))
    truncated = tmp_path / "o" / "cells" / f"{cfg.cells[5].key}.json"
    truncated.write_text(truncated.read_text()[:40])
    res = _run(cfg, tmp_path / "o")
    assert res.summary.computed == 2
    assert len(res.summary.discarded) == 2
    assert all("checksum" in d for d in res.summary.discarded)
    assert res.table is not None and res.table.equals(ref)


def test_folder_with_another_experiment_or_seed_is_refused(tmp_path):
    """Extending a folder that holds another experiment's cells, or the same
    experiment under another seed, is refused; --fresh discards the old cells."""
    cfg = parse_config(DOC)
    _run(cfg, tmp_path / "o")
    other = parse_config({"experiment": "makeroom", "seed": 11,
                          "params": {"n": 16, "kappa": 4, "interface": "ledger",
                                     "trials": 50}})
    with pytest.raises(SweepStoreError,
                       match=r"must hold cells of experiment 'makeroom'.*holds experiment "
                             r"'recovery'.*fresh=True"):
        _run(other, tmp_path / "o")
    reseeded = parse_config({**DOC, "seed": 12})
    with pytest.raises(SweepStoreError, match=r"started with seed 11 \(config says 12\)"):
        _run(reseeded, tmp_path / "o")
    res = _run(other, tmp_path / "o", fresh=True)
    assert res.summary.computed == other.n_cells and res.summary.skipped == 0


def test_adding_values_extends_the_store_and_keeps_every_cell(tmp_path):
    """Add a budget and a handle cost to a Proposition 1
    sweep and rerun into the same folder. Every existing cell record is byte
    identical, its row in the new table equals its old row, and only the new
    cells are computed; a shuffled, shrunk config reuses everything."""
    cfg = parse_config(DOC)
    first = _run(cfg, tmp_path / "o")
    cells_dir = tmp_path / "o" / "cells"
    before = {f.name: f.read_bytes() for f in cells_dir.glob("*.json")}
    assert len(before) == cfg.n_cells
    bigger_doc = {**DOC, "params": {**DOC["params"], "budget": [96, 16, 32, 48]},
                  "grid": [{"strategy": ["random-subset", "keep-blocks"]},
                           {"strategy": "recover", "handle_cost": [4.0, 2.0, 1.0]}]}
    bigger = parse_config(bigger_doc)
    new_keys = {c.key for c in bigger.cells} - {c.key for c in cfg.cells}
    second = _run(bigger, tmp_path / "o")
    assert second.summary.computed == len(new_keys) == bigger.n_cells - cfg.n_cells
    assert second.summary.skipped == cfg.n_cells
    after = {f.name: f.read_bytes() for f in cells_dir.glob("*.json")}
    assert {k: after[k] for k in before} == before
    old_rows = {r["cell"]: r for r in first.table.to_pylist()}
    new_rows = {r["cell"]: r for r in second.table.to_pylist()}
    assert all(new_rows[k] == row for k, row in old_rows.items())
    # The same bigger sweep in a fresh folder gives the same table (no history effect).
    fresh = _run(bigger, tmp_path / "p")
    assert fresh.table.equals(second.table)
    # Back to the small config: nothing to compute, the same table as the first run.
    again = _run(cfg, tmp_path / "o")
    assert again.summary.computed == 0 and again.table.equals(first.table)


def test_seedless_config_records_and_reuses_fresh_entropy(tmp_path):
    """Without a seed the run draws fresh entropy, records it, and a resume
    reuses it (DESIGN rule 2: seed entropy recorded in every result)."""
    doc = {k: v for k, v in DOC.items() if k != "seed"}
    cfg = parse_config(doc)
    a = _run(cfg, tmp_path / "o")
    manifest = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert manifest["seed_entropy"] == str(a.summary.seed_entropy)
    b = _run(cfg, tmp_path / "o")
    assert b.summary.seed_entropy == a.summary.seed_entropy
    seeded = _run(parse_config({**DOC, "seed": a.summary.seed_entropy}))
    assert seeded.table is not None and seeded.table.equals(a.table)


def test_folder_lock_and_foreign_results(tmp_path):
    """Two sweeps cannot write one folder at once, and a folder with results
    files but no manifest is not overwritten."""
    held = DirectoryStore(tmp_path / "o")
    try:
        with pytest.raises(SweepStoreError, match="in use by another running sweep"):
            DirectoryStore(tmp_path / "o")
    finally:
        held.close()
    (tmp_path / "f").mkdir()
    (tmp_path / "f" / "results.parquet").write_bytes(b"not ours")
    with pytest.raises(SweepStoreError, match="holds results files but no sweep manifest"):
        DirectoryStore(tmp_path / "f")
    with pytest.raises(SweepStoreError, match="must be a sweep folder or a results file"):
        read_results(tmp_path / "missing")


_BROKEN = {"on": True}


def _flaky(params, rng):
    if _BROKEN["on"] and params["x"] == 2:
        raise RuntimeError("cell x=2 exploded")
    return {"y": float(np.random.default_rng(rng).random()) + params["x"]}


FLAKY = Experiment(
    "flaky", "test experiment that fails on one cell",
    params=(ParamSpec("x", "int", "value", required=True),),
    outputs=(OutputSpec("y", "real", "x plus a uniform draw"),),
    run=_flaky,
)


def test_failed_cell_is_reported_not_stored_and_retried(tmp_path):
    """A raising cell is reported, no partial table is written, and the
    resumed run computes only that cell; the table then equals a clean run's."""
    cfg = parse_config({"experiment": "flaky", "seed": 5, "params": {"x": [1, 2, 3]}},
                       registry={"flaky": FLAKY})
    _BROKEN["on"] = True
    bad = _run(cfg, tmp_path / "o")
    assert not bad.summary.complete and bad.table is None
    assert [f.index for f in bad.summary.failed] == [1]
    assert "cell x=2 exploded" in bad.summary.failed[0].error
    assert not (tmp_path / "o" / "results.parquet").exists()
    _BROKEN["on"] = False
    good = _run(cfg, tmp_path / "o")
    assert good.summary.computed == 1 and good.summary.skipped == 2
    clean = _run(cfg)
    assert good.table is not None and good.table.equals(clean.table)


def test_malformed_rows_are_failures():
    """An experiment returning the wrong keys or types fails its cells with a
    message naming the experiment (the row contract of the registry)."""
    def bad(params, rng):
        return {"y": "not a number"} if params["x"] == 1 else {"z": 1.0}

    exp = Experiment("bad", "returns bad rows", params=(ParamSpec("x", "int", "x",
                                                                  required=True),),
                     outputs=(OutputSpec("y", "real", "y"),), run=bad)
    cfg = parse_config({"experiment": "bad", "params": {"x": [1, 2]}}, registry={"bad": exp})
    res = _run(cfg)
    errors = [f.error for f in res.summary.failed]
    assert len(errors) == 2
    assert any("must be of kind 'real'" in e for e in errors)
    assert any("missing ['y'], unexpected ['z']" in e for e in errors)


def test_registry_lists_the_builtin_experiments():
    """makeroom (Theorem 1) and recovery (Proposition 1) are registered with
    documented parameters and outputs."""
    assert {"makeroom", "recovery"} <= set(EXPERIMENTS)
    for exp in EXPERIMENTS.values():
        assert all(p.doc for p in exp.params) and all(o.doc for o in exp.outputs)


# ---------------------------------------------------------------------------
# Model-based test of the on-disk store against the in-memory one (DESIGN rules
# 9 and 10): puts, restarts and outside damage in any order.

_CELLS = parse_config(DOC).cells
_VALUES = st.one_of(st.floats(allow_nan=False), st.integers(-2**62, 2**62), st.booleans(),
                    st.none(), st.text(max_size=5))


class StoreMachine(RuleBasedStateMachine):
    """DirectoryStore behaves as MemoryStore under puts and restarts; damaged
    records are detected and dropped, never returned (Proposition 1 cells)."""

    def __init__(self):
        super().__init__()
        import tempfile

        self._tmp = tempfile.TemporaryDirectory()
        self.disk = DirectoryStore(self._tmp.name)
        self.mem = MemoryStore()
        self.model: dict[str, dict] = {}

    @rule(i=st.integers(0, len(_CELLS) - 1), value=_VALUES)
    def put(self, i, value):
        rec = CellRecord(i, _CELLS[i].key, {"v": value}, 0.1, "test", dict(_CELLS[i].params))
        self.disk.put(rec)
        self.mem.put(rec)
        self.model[_CELLS[i].key] = {"v": value}

    @rule()
    def restart(self):
        self.disk.close()
        self.disk = DirectoryStore(self._tmp.name)

    @rule(data=st.data())
    def damage(self, data):
        if not self.model:
            return
        key = data.draw(st.sampled_from(sorted(self.model)))
        path = self.disk._cell_path(key)
        doc = json.loads(path.read_text())
        doc["row"] = {"v": "tampered"}
        path.write_text(json.dumps(doc))
        del self.model[key]
        self._rebuild_mem()

    def _rebuild_mem(self):
        self.mem = MemoryStore()
        by_key = {c.key: c for c in _CELLS}
        for key, row in self.model.items():
            self.mem.put(CellRecord(0, key, row, 0.1, "test", dict(by_key[key].params)))

    @rule(i=st.integers(0, len(_CELLS) - 1), j=st.integers(0, len(_CELLS) - 1))
    def mislabelled_record(self, i, j):
        """A record filed under cell i's key but holding cell j's parameters is discarded."""
        if i == j:
            return
        self.disk.put(CellRecord(i, _CELLS[i].key, {"v": 1}, 0.1, "other",
                                 dict(_CELLS[j].params)))
        self.model.pop(_CELLS[i].key, None)
        self._rebuild_mem()

    @rule()
    def record_of_another_config(self):
        """Cells of another config in the same folder are kept but not returned."""
        other = parse_config({**DOC, "params": {**DOC["params"], "budget": 7}}).cells[0]
        self.disk.put(CellRecord(0, other.key, {"v": 2}, 0.1, "other", dict(other.params)))

    @invariant()
    def same_records(self):
        disk = self.disk.load_records(_CELLS)
        mem = self.mem.load_records(_CELLS)
        assert {i: r.row for i, r in disk.items()} == {i: r.row for i, r in mem.items()} \
            == self.model

    def teardown(self):
        self.disk.close()
        self._tmp.cleanup()


TestStoreMachine = StoreMachine.TestCase
TestStoreMachine.settings = settings(stateful_step_count=12)
