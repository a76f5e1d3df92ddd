"""`vista-lab examples DIR`: the example sweep configs and
sample traces ship in the package and are copied out byte for byte; a
non-empty or non-folder DIR is refused with one line and exit status 2."""

from __future__ import annotations

from vistalab._examples import example_files
from vistalab.cli import main


def test_examples_are_shipped_and_copied(tmp_path, capsys):
    """Every shipped example lands in DIR with the same bytes; the copied small sweep
    config is a valid config (the README's `vista-lab sweep DIR/sweeps/small.toml`)."""
    files = example_files()
    assert {"sweeps/small.toml", "sweeps/figure4.toml", "traces/ops_agent.json",
            "traces/parallel_weather.jsonl"} <= set(files)
    dest = tmp_path / "ex"
    assert main(["examples", str(dest)]) == 0
    assert capsys.readouterr().out.split() == [str(dest / n) for n in files]
    for name, src in files.items():
        assert (dest / name).read_bytes() == src.read_bytes()
    from vistalab._sweep import load_config

    assert load_config(dest / "sweeps" / "small.toml").experiment.name == "makeroom"


def test_examples_refuse_a_non_empty_dir(tmp_path, capsys):
    """Nothing is overwritten: a non-empty folder or a file is refused, exit 2, one line."""
    (tmp_path / "keep.txt").write_text("mine")
    assert main(["examples", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "must be a new or empty folder" in err
    assert [p.name for p in tmp_path.iterdir()] == ["keep.txt"]
    assert main(["examples", str(tmp_path / "keep.txt")]) == 2
    assert "must be a folder, not a regular file" in capsys.readouterr().err


def test_examples_into_an_empty_existing_dir(tmp_path):
    assert main(["examples", str(tmp_path)]) == 0
    assert (tmp_path / "sweeps" / "small.toml").is_file()
