"""The public sweep API (``vistalab.sweep``) and self-describing results:
run_sweep/load_results locally and on a Dask
LocalCluster client, Parquet field metadata, stable CSV dtypes under pandas
(and polars when installed), every problem of a config reported in one run,
and the size bounds of the error contract. Cells are Proposition 1 recovery runs and
Theorem 1 make-room runs."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from vistalab.sweep import (
    COLUMNS,
    EXPERIMENTS,
    SweepCellError,
    SweepConfigError,
    SweepConfigErrors,
    SweepStoreError,
    column_units,
    load_results,
    run_sweep,
)

DOC = {
    "experiment": "recovery",
    "seed": 3,
    "params": {"N": 16, "k": 8, "trials": 100, "budget": [16, 64]},
    "grid": [{"strategy": ["keep-bits"]}, {"strategy": "recover", "handle_cost": [1.0]}],
}

MAKEROOM = {
    "experiment": "makeroom",
    "seed": 5,
    "params": {"n": 12, "kappa": 3, "trials": 200},
    "grid": [{"interface": "buckets", "buckets": [2, 4]}, {"interface": "ledger"},
             {"interface": "gibbs", "rate": 1.0}],
}


def test_run_sweep_returns_a_table_and_load_results_reads_it_back(tmp_path):
    """run_sweep(dict, workers=1, out=DIR) returns the pyarrow table that
    load_results(DIR) reads back (parquet and CSV), and the in-memory run
    (out=None) gives the same table."""
    table = run_sweep(DOC, workers=1, out=tmp_path / "o")
    assert table.num_rows == 4
    assert load_results(tmp_path / "o").equals(table)
    assert run_sweep(DOC, workers=1).equals(table)
    csv = load_results(tmp_path / "o" / "results.csv")
    assert csv.column_names == table.column_names
    assert csv["successes"].to_pylist() == table["successes"].to_pylist()


def test_load_results_refuses_a_damaged_table(tmp_path):
    """A results file that no longer matches the sha256 recorded in
    results.json is refused, naming the fix (rerun to rebuild)."""
    run_sweep(DOC, workers=1, out=tmp_path / "o")
    f = tmp_path / "o" / "results.csv"
    f.write_bytes(f.read_bytes().replace(b"keep-bits", b"keep-bitz"))
    with pytest.raises(SweepStoreError, match=r"must match the checksum.*rerun the sweep"):
        load_results(f)


def test_every_parquet_column_has_unit_and_description(tmp_path):
    """Every field of results.parquet carries `unit` and
    `description` metadata, taken from the one shared column vocabulary, and
    the schema metadata names the experiment and the seed entropy."""
    for doc in (DOC, MAKEROOM):
        out = tmp_path / doc["experiment"]
        run_sweep(doc, workers=1, out=out)
        table = pq.read_table(out / "results.parquet")
        units = column_units(table)
        assert set(units) == set(table.column_names)
        for name in table.column_names:
            assert name in COLUMNS, f"{name} is not in the shared vocabulary"
            assert units[name]["description"] == COLUMNS[name].description
            assert units[name]["unit"] == COLUMNS[name].unit
        meta = json.loads(table.schema.metadata[b"vista-lab"])
        assert meta["experiment"] == doc["experiment"] and meta["seed_entropy"] == str(doc["seed"])
    assert column_units(table)["mean_z"]["unit"] == "blocks"
    assert column_units(table)["rate_bits"]["unit"] == "bits"


def test_csv_dtypes_are_stable_under_pandas(tmp_path):
    """pandas reads results.csv with the declared dtypes: integer columns with
    empty cells stay integers (buckets), all-empty columns keep their type
    (lam), booleans stay booleans (Theorem 1 make-room sweep)."""
    pd = pytest.importorskip("pandas")
    out = tmp_path / "m"
    table = run_sweep(MAKEROOM, workers=1, out=out)
    side = json.loads((out / "results.json").read_text())
    dtypes = side["sweep"]["csv_dtypes"]
    df = pd.read_csv(out / "results.csv", dtype=dtypes)
    assert str(df["buckets"].dtype) == "Int64" and str(df["trials"].dtype) == "Int64"
    assert str(df["lam"].dtype) == "Float64" and df["lam"].isna().all()
    assert str(df["rate_exact"].dtype) == "boolean"
    assert df["buckets"].dropna().tolist() == [2, 4]
    # Without the declared dtypes pandas would turn buckets into float64.
    assert str(pd.read_csv(out / "results.csv")["buckets"].dtype) == "float64"
    assert table.to_pandas()["buckets"].dropna().tolist() == [2.0, 4.0]


def test_csv_dtypes_are_stable_under_polars(tmp_path):
    """polars reads the all-empty `lam` column as Float64 (not String) with the
    declared schema (Theorem 1 make-room sweep)."""
    pl = pytest.importorskip("polars")
    out = tmp_path / "m"
    run_sweep(MAKEROOM, workers=1, out=out)
    side = json.loads((out / "results.json").read_text())
    to_pl = {"Int64": pl.Int64, "Float64": pl.Float64, "boolean": pl.Boolean,
             "string": pl.String}
    schema = {k: to_pl[v] for k, v in side["sweep"]["csv_dtypes"].items()}
    df = pl.read_csv(out / "results.csv", schema_overrides=schema)
    assert df.schema["lam"] == pl.Float64 and df.schema["buckets"] == pl.Int64


def test_run_sweep_on_a_dask_local_cluster_matches_local(tmp_path):
    """run_sweep(client=Client(LocalCluster(processes=False))) gives the same
    table as the local run (seeds depend only on content)."""
    distributed = pytest.importorskip("distributed")
    local = run_sweep(DOC, workers=1)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        remote = run_sweep(DOC, client=client, out=tmp_path / "d")
        assert client.status == "running"  # the caller's client is not closed
    assert remote.equals(local)
    with pytest.raises(SweepConfigError, match=r"`workers` applies to local runs only"):
        run_sweep(DOC, workers=2, client=object())


def test_every_config_problem_is_reported_in_one_run():
    """Three independent mistakes (a misspelt top-level key, a negative N, an
    unknown strategy) are all listed in one SweepConfigErrors."""
    doc = {"experiment": "recovery", "seedd": 1,
           "params": {"N": -1, "k": 8, "trials": 10, "budget": 16, "strategy": "keep-bitz"}}
    with pytest.raises(SweepConfigErrors) as info:
        run_sweep(doc, workers=1)
    text = str(info.value)
    assert text.startswith("3 problems in <config>")
    assert "'seedd'" in text and "Did you mean 'seed'" in text
    assert "`N` must be" in text
    assert "'keep-bitz'" in text and "keep-bits" in text
    assert len(info.value.errors) == 3


def test_sizes_are_bounded_before_any_work(tmp_path):
    """trials = 2**63 - 1 is refused at the door with the bound
    stated, and so is a sweep whose total trials exceed the bound."""
    huge = {**DOC, "params": {**DOC["params"], "trials": 9223372036854775807}}
    with pytest.raises(SweepConfigError, match=r"`trials` must be .*<= 1000000000.*1e\+09"):
        run_sweep(huge, workers=1, out=tmp_path / "h")
    assert not (tmp_path / "h").exists()
    many = {"experiment": "recovery", "seed": 1,
            "params": {"N": 2, "k": 1, "trials": 10**9, "strategy": "keep-bits",
                       "budget": [float(b) for b in range(0, 2000)]}}
    with pytest.raises(SweepConfigError, match=r"must add up to at most 1e\+12 trials"):
        run_sweep(many, workers=1)
    literal = {"experiment": "makeroom", "params": {"n": 10**12, "kappa": 4, "trials": 10,
                                                    "interface": "ledger", "mode": "literal"}}
    with pytest.raises(SweepConfigError, match=r"`n` must be <= 10000000 in literal mode"):
        run_sweep(literal, workers=1)


def test_failed_cells_raise_with_the_rest_stored(tmp_path):
    """A raising cell surfaces as SweepCellError naming it; the other cells are
    stored, so the rerun computes only the failed one (Proposition 1 cells)."""
    import dataclasses

    from vistalab.sweep import parse_config

    real = EXPERIMENTS["recovery"]
    broken = {"on": True}

    def flaky(params, rng):
        if broken["on"] and params["budget"] == 64 and params["strategy"] == "keep-bits":
            raise RuntimeError("boom")
        return real.resolve_run()(params, rng)

    exp = dataclasses.replace(real, name="recovery-flaky", run=flaky)
    cfg = parse_config({**DOC, "experiment": "recovery-flaky"},
                       registry={"recovery-flaky": exp})
    with pytest.raises(SweepCellError, match=r"1 of 4 cells failed.*boom.*run again"):
        run_sweep(cfg, workers=1, out=tmp_path / "o")
    assert len(list((tmp_path / "o" / "cells").glob("*.json"))) == 3
    broken["on"] = False
    again = run_sweep(cfg, workers=1, out=tmp_path / "o")
    assert again.drop_columns([]).select(["cell", "success"]).equals(
        run_sweep(DOC, workers=1).select(["cell", "success"]))
