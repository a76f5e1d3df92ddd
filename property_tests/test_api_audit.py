"""The Python API audit (user audit of the library API): errors raised from
Python name the Python parameters and Python fixes while the command line keeps
its option names; public results are named records; theory records serialise."""

from __future__ import annotations

import dataclasses
import json
import math
import re

import numpy as np
import pytest
from vistalab.theory import DomainError
from vistalab.workspace import Workspace, parse_ledger_rows

from vistalab import sims, theory
from vistalab.cli import main
from vistalab.sweep import SweepConfigError, SweepStoreError, load_results, run_sweep

CFG = {"experiment": "recovery", "seed": 3,
       "params": {"N": 16, "k": 8, "trials": 20, "budget": [16], "strategy": "keep-bits"}}


def _cli_err(argv, capsys):
    status = main(argv)
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1, err
    return err


def test_run_sweep_workers_error_names_the_python_parameter():
    """Audit item 1: run_sweep(cfg, workers=0) names `workers`, not `--workers`."""
    with pytest.raises(DomainError) as info:
        run_sweep(CFG, workers=0)
    assert info.value.parameter == "workers"
    assert "--" not in str(info.value), str(info.value)


def test_run_sweep_out_file_names_out(tmp_path):
    """Audit item 1: an `out` that is a file is refused as `out`, with no CLI option."""
    f = tmp_path / "f.txt"
    f.write_text("x")
    with pytest.raises(SweepStoreError) as info:
        run_sweep(CFG, workers=1, out=f)
    assert str(info.value).startswith("`out` must be a folder")
    assert "--" not in str(info.value)


def test_reseeded_store_fix_is_python(tmp_path):
    """Audit item 1: extending a store with another seed suggests fresh=True
    (the Python spelling); the same refusal from the CLI says --fresh and --out."""
    run_sweep(CFG, workers=1, out=tmp_path / "a")
    with pytest.raises(SweepStoreError) as info:
        run_sweep(dict(CFG, seed=4), workers=1, out=tmp_path / "a")
    text = str(info.value)
    assert text.startswith("`out` must hold cells of the same seed")
    assert "fresh=True" in text and "another `out` folder" in text and "--" not in text
    assert run_sweep(dict(CFG, seed=4), workers=1, out=tmp_path / "a", fresh=True).num_rows == 1


def test_cli_keeps_option_names_for_the_same_refusal(tmp_path, capsys):
    """Audit item 1: the CLI translates the library's names back to its options."""
    cfg = tmp_path / "c.toml"
    cfg.write_text('experiment = "recovery"\nseed = 3\n[params]\nN = 16\nk = 8\ntrials = 20\n'
                   'budget = 16\nstrategy = "keep-bits"\n')
    out = tmp_path / "o"
    assert main(["sweep", str(cfg), "--out", str(out), "--workers", "1", "--no-progress"]) == 0
    capsys.readouterr()
    cfg.write_text(cfg.read_text().replace("seed = 3", "seed = 4"))
    err = _cli_err(["sweep", str(cfg), "--out", str(out), "--workers", "1", "--no-progress"],
                   capsys)
    assert "`--out` must hold cells of the same seed" in err
    assert "choose another --out folder, or pass --fresh" in err and "fresh=True" not in err
    bad = tmp_path / "bad.toml"
    bad.write_text("experiment = [")
    err = _cli_err(["sweep", str(bad), "--out", str(tmp_path / "p")], capsys)
    assert "`CONFIG.toml` must be valid UTF-8 TOML" in err


def test_load_results_and_config_path_name_the_python_parameter(tmp_path):
    """Audit item 1: load_results("nope") names `path`; run_sweep("nope.toml") names `config`."""
    with pytest.raises(SweepStoreError) as info:
        load_results(tmp_path / "nope")
    assert info.value.parameter == "path" and "RESULTS" not in str(info.value)
    with pytest.raises(SweepConfigError) as info2:
        run_sweep(tmp_path / "nope.toml")
    assert info2.value.parameter == "config" and "CONFIG" not in str(info2.value)


def test_plot_sweep_cli_still_says_results(tmp_path, capsys):
    """Audit item 1: the plot-sweep CLI names its RESULTS argument for an unreadable table."""
    bad = tmp_path / "r.parquet"
    bad.write_text("not parquet")
    err = _cli_err(["plot-sweep", str(bad), "--out", str(tmp_path / "p.png")], capsys)
    assert "`RESULTS` must be a readable table" in err


def _json_round_trip(doc):
    return json.loads(json.dumps(doc, allow_nan=False))


def _theory_records():
    t = theory
    cert = t.certify_all(only="first-order")
    report = t.tightness_report(content_grid=[(64, 2, 1.0)], makeroom_grid=[(64, 4, 1.0)],
                                threshold_grid=[(64, 4, 0.5)])
    return [
        t.HandleCostModel(c0=1.5, instruction=2.0),
        t.recovery_feasibility(64, 8, 500.0),
        t.asymptotic_separation(1024, 2.0),
        t.bucket_ledger(32, 4, 4),
        t.gibbs_law(64, 4, rate=1.0),
        report, report.content_rows[0], report.makeroom_rows[0], report.threshold_rows[0],
        t.content_sandwich(64, 4, 1.0),
        t.first_order_point(10**6, 4, 0.5),
        t.first_order_point(10**6, 4, 0.5, with_buckets=False),  # a NaN field
        t.recovery_exact_optimum(3, 1, 3),
        t.content_rate_certified(64, 4, 1.0),
        t.prove_shannon_inequality("H(X) <= H(X,Y)"),
        cert, cert.steps[0], *t.check_chains(cert.steps),
    ]


def test_theory_records_have_to_dict_that_round_trips_through_json():
    """Audit item 2: every frozen result record exported by vistalab.theory has a
    to_dict() derived from its fields that survives a strict JSON round trip
    (NaN becomes None, tuples lists), and names every field."""
    records = _theory_records()
    exported = {n for n in theory.__all__ if isinstance(getattr(theory, n), type)
                and dataclasses.is_dataclass(getattr(theory, n)) and n != "Step"}
    assert exported <= {type(r).__name__ for r in records}, "a record type is not exercised"
    for r in records:
        doc = r.to_dict()
        assert list(doc) == [f.name for f in dataclasses.fields(r)], type(r).__name__
        assert _json_round_trip(doc) == doc, type(r).__name__
    fo = theory.first_order_point(10**6, 4, 0.5, with_buckets=False).to_dict()
    assert fo["bucket_rate"] is None and fo["n"] == 10**6


def test_tuple_results_are_named_records():
    """Audit item 2: the former bare tuples are named tuples whose fields agree
    with the positional values, and unpacking keeps working."""
    b = theory.first_order_bounds(10**6, 4, 0.5)
    assert isinstance(b, theory.FirstOrderBounds) and b.lo == -1.0 and b.hi == b[1]
    lo, hi = b
    p = theory.first_order_point(10**6, 4, 0.5, with_buckets=False)
    assert (lo, hi) == (p.bound_lo, p.bound_hi)
    g = theory.content_limit_gap_bound(10**5, 4, 2.0)
    assert isinstance(g, theory.ContentGapBounds) and g.lo < g.hi < 0
    s = theory.second_order_identity(10**6, 4, 0.5)
    assert isinstance(s, theory.SecondOrderIdentity)
    assert (s.rate, s.second_order, s.identity) == (p.exact_rate, p.second_order,
                                                     p.second_order_identity)
    for rec in (b, g, s):
        assert _json_round_trip(rec.to_dict()) == rec._asdict()


def test_parse_ledger_returns_named_entries_matching_the_workspace_rows():
    """Audit item 2: sims.parse_ledger gives LedgerEntry records whose fields are
    the same-named fields of workspace.LedgerRow."""
    ws = Workspace(4000)
    for i in range(3):
        ws.register_user(f"block {i} " * (10 * (i + 1)))
    dashboard = ws.render().dashboard
    entries = sims.parse_ledger(dashboard)
    rows = parse_ledger_rows(dashboard)
    assert entries and all(isinstance(e, sims.LedgerEntry) for e in entries)
    for e, r in zip(entries, rows, strict=True):
        assert e._asdict() == {f: getattr(r, f) for f in e._fields}


def test_first_order_docstrings_cite_a_document_that_exists():
    """Audit item 3: theory/_first_order.py cites only documents that exist, and the
    section it names is in theory/BEYOND.md."""
    from pathlib import Path

    import vistalab.theory._first_order as fo

    root = Path(fo.__file__).parent
    text = (fo.__doc__ or "") + (fo.second_order_identity.__doc__ or "")
    cited = set(re.findall(r"([A-Z_]+\.md)", text))
    assert cited == {"BEYOND.md"}, cited
    beyond = (root / "BEYOND.md").read_text("utf-8")
    assert "## 3. First-order tightness of the frontier" in beyond
    assert "**The second-order term: an exact identity.**" in beyond


def test_engine_budget_refusal_states_the_minimum_the_docstring_points_to():
    """Audit item 3: the engine docstring types no budget figure; it points to the
    refusal, which states the exact minimum: that budget runs and one less is refused."""
    doc = sims.simulate_recovery_engine.__doc__ or ""
    assert "states the exact minimum" in doc and not re.search(r"\d,\d{3} tokens", doc)
    with pytest.raises(DomainError) as info:
        sims.simulate_recovery_engine(4, 4, 100, "recover", trials=2, rng=1)
    m = re.search(r"must be at least ([\d,]+) tokens", str(info.value))
    assert m, str(info.value)
    floor = int(m.group(1).replace(",", ""))
    assert sims.simulate_recovery_engine(4, 4, floor, "recover", trials=2, rng=1).trials == 2
    with pytest.raises(DomainError, match=rf"at least {m.group(1)} tokens"):
        sims.simulate_recovery_engine(4, 4, floor - 1, "recover", trials=2, rng=1)


def test_size_bound_accepts_the_float_the_message_prints():
    """Audit item 4: "must be at most 1e300" accepts 1e300 itself (int(1e300) exceeds
    10**300 by float rounding) and still refuses the next float up."""
    assert theory.optimal_mean_z(1e300, 4, 10.0) == theory.optimal_mean_z(10**300, 4, 10.0)
    with pytest.raises(DomainError, match=r"`n` must be at most 1e300"):
        theory.optimal_mean_z(math.nextafter(1e300, math.inf), 4, 10.0)
    with pytest.raises(DomainError, match=r"`n` must be at most 1e300"):
        theory.optimal_mean_z(10**300 + 1, 4, 10.0)


def test_broadcast_mismatch_names_each_parameter_and_its_shape():
    """Audit item 4: a shape mismatch names every array parameter with its shape."""
    with pytest.raises(DomainError) as info:
        theory.optimal_mean_z(np.array([10, 20]), 4, rate=np.array([1.0, 2.0, 3.0]))
    text = str(info.value)
    assert "n has shape (2,); rate has shape (3,)" in text, text
    assert "n(2,)" not in text and info.value.parameter == "rate"


def test_worker_cap_note_is_python_in_the_library():
    """Audit item 1: the note a capped worker count leaves in the summary names the
    Python parameter (the CLI rewrites it to --workers: test_sweep_cli_contract)."""
    from vistalab._sweep import LocalBackend, parse_config
    from vistalab._sweep import run_sweep as run_cells

    res = run_cells(parse_config(CFG), backend=LocalBackend(100000))
    assert any(n.startswith("workers=100000 capped at") for n in res.summary.notes), \
        res.summary.notes
    assert not any("--" in n for n in res.summary.notes)
