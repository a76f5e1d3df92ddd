"""The Python API audit (user audit of the library API): errors raised from
Python name the Python parameters and Python fixes while the command line keeps
its option names; public results are named records; theory records serialise."""

from __future__ import annotations

import pytest
from vistalab.theory import DomainError

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
