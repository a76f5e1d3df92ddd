"""Figure scripts take their parameters as options (``python -m
vistalab.figures.fig4_tradeoff --n 128``): one option per key of the figure's
``default_params``, checked by the figure's own rules before the run, errors in
the command line's contract (one line naming the option, exit 2), and ``--help``
that describes the figure in full sentences (DESIGN.md rule 11: one script per
figure, whose docstring names the figure and what it shows)."""

from __future__ import annotations

import csv
import re

import pytest
from vistalab.figures import FIGURE_NAMES, load_figure
from vistalab.figures._script import _shown, option_name, option_value, run_as_script


@pytest.mark.parametrize("name", FIGURE_NAMES)
def test_help_lists_every_parameter_and_describes_the_figure(name, capsys):
    """Every default_params key is an option, with its default; the description
    is the figure's docstring as sentences (no line cut mid-sentence)."""
    with pytest.raises(SystemExit) as exc:
        run_as_script(name, ["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    flat = "".join(out.split())  # argparse wraps lines, also at hyphens
    for key, value in load_figure(name).default_params().items():
        assert option_name(key) in out
        assert "".join(f"(default {_shown(value)}".split()) in flat
    description = " ".join(out.split("options:")[0].split("\n\n", 1)[1].split())
    sentences = [s for s in re.split(r"(?<=[.!?])\s", description) if s]
    assert len(sentences) >= 2 and all(s[-1] in ".!?)" for s in sentences)


@pytest.mark.parametrize("name", FIGURE_NAMES)
def test_defaults_as_shown_read_back_as_the_defaults(name):
    """The text --help shows for each default parses back to that default (so a
    value copied from the help is accepted), and passes the figure's checks."""
    fig = load_figure(name)
    defaults = fig.default_params()
    read = {key: option_value(key, _shown(value) if value != [] else "", value)
            for key, value in defaults.items()}
    assert read == defaults
    fig._params_iv(read)


@pytest.mark.parametrize(("argv", "pattern"), [
    (["--n", "ten"], r"`--n` must be an integer \(got --n='ten'\)"),
    (["--n", "10", "--kappa", "6"], r"`--kappa` must satisfy 2 <= kappa < n/2"),
    (["--sigmas", "1,x"], r"`--sigmas` must be a finite number"),
    (["--engine", "maybe"], r"`--engine` must be true or false"),
    (["--kapa", "3"], r"'--kapa' \(did you mean '--kappa'\?\)"),
    (["--bucket-M", "[1, 2"], r"`--bucket-M` must be a JSON list"),
])
def test_bad_values_are_one_line_naming_the_option(argv, pattern, capsys, tmp_path):
    """Checked before anything is computed: one stderr line, exit status 2."""
    assert run_as_script("fig4_tradeoff", [*argv, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert re.search(pattern, err), err
    assert not (tmp_path / "o").exists()


def test_given_values_reach_the_computation(tmp_path, capsys):
    """``--kappas 4,50 --points 5`` on fig8 (quick): the table holds exactly those
    kappas, so the options are not only parsed but used."""
    out = tmp_path / "o"
    status = run_as_script("fig8_beyond", ["--quick", "--kappas", "4,50", "--points", "5",
                                           "--out", str(out)])
    assert status == 0, capsys.readouterr()
    with open(out / "fig8_beyond.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["panel"] == "a"]
    assert {int(r["kappa"]) for r in rows} == {4, 50}
