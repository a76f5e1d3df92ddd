"""The CLI's error contract (DESIGN.md rule 6): bad input is one line on
stderr with exit status 2, never a traceback."""

import subprocess
import sys

import pytest

from vistalab.cli import main


def test_unknown_subcommand_is_one_line_exit_2(capsys):
    status = main(["verfy"])
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1
    assert "verfy" in err
    assert "Traceback" not in err


def test_no_subcommand_is_usage_error(capsys):
    assert main([]) == 2
    assert "required" in capsys.readouterr().err


def test_console_script_runs_as_module():
    proc = subprocess.run(
        [sys.executable, "-m", "vistalab.cli", "--version"], capture_output=True, text=True
    )
    assert proc.returncode == 0
    assert "vista-lab" in proc.stdout


@pytest.mark.parametrize("argv", [["--nonsense"], ["verify", "--jsn"]])
def test_unrecognized_options_exit_2(argv, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("vista-lab: error:")
    assert err.count("\n") == 1
