"""The CLI starts at once: ``vista-lab --version`` and ``--help`` import no numpy,
scipy or sympy, and a command imports only its own module (the registry in
``vistalab._commands`` is data; see the module docstring of ``vistalab.cli``).
Each check runs in a fresh interpreter, since this one has loaded everything."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from vistalab._commands import COMMANDS
from vistalab.cli import build_parser, main

HEAVY = ("numpy", "scipy", "sympy", "mpmath", "hypothesis", "matplotlib", "rich")

#: Runs ``main(argv)`` in a fresh interpreter and prints the exit status and which
#: of the named modules got imported (``--help`` and ``--version`` raise SystemExit).
_PROBE = """
import json, sys
from vistalab.cli import main
argv, names = json.loads(sys.argv[1]), json.loads(sys.argv[2])
try:
    status = main(argv)
except SystemExit as exc:
    status = exc.code
print(json.dumps({"status": status, "loaded": [n for n in names if n in sys.modules]}))
"""


def _probe(argv: list[str], names: tuple[str, ...]) -> dict:
    proc = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(argv), json.dumps(names)],
                          capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("argv", [["--version"], ["--help"], []])
def test_version_and_help_import_nothing_heavy(argv):
    """``--version`` and ``--help`` (and the usage error of a bare call) build only
    placeholders: no numpy, scipy, sympy, mpmath, Hypothesis, matplotlib or rich."""
    out = _probe(argv, HEAVY)
    assert out["status"] in (0, 2)
    assert out["loaded"] == []


def test_a_command_imports_only_its_own_module():
    """``vista-lab bound ...`` imports the bound command and theory, never sims, the
    workspace engine or another command's module."""
    others = tuple(f"vistalab._commands.{c.module}" for c in COMMANDS if c.name != "bound")
    names = ("vistalab._commands.bound", "vistalab.theory", "vistalab.sims",
             "vistalab.workspace", "scipy", "matplotlib", *others)
    out = _probe(["bound", "recovery", "--N", "64", "--k", "8", "--budget", "100"], names)
    assert out["status"] == 0
    assert out["loaded"] == ["vistalab._commands.bound", "vistalab.theory"]


def test_the_probe_sees_a_heavy_import():
    """The probe is able to fail: a command whose run imports numpy is reported."""
    out = _probe(["bound", "recovery", "--N", "64", "--k", "8", "--budget", "100"], HEAVY)
    assert "numpy" in out["loaded"]


@pytest.mark.parametrize("entry", COMMANDS, ids=lambda c: c.name)
def test_every_declared_command_registers_its_name_and_help(entry):
    """Each registry entry loads, its module registers exactly the declared name
    with the declared help line (the placeholder ``--help`` shows the same text),
    and the parser built for that command alone has the full subparser."""
    module = entry.load()
    assert callable(module.register)
    full = build_parser()
    lazy = build_parser(entry.name)
    for parser in (full, lazy):
        sub = next(a for a in parser._actions if a.dest == "command")
        helps = {c.dest: c.help for c in sub._choices_actions}
        assert helps[entry.name] == entry.help
        assert list(sub.choices) == [c.name for c in COMMANDS]
    # the command's own parser is complete; every other one is a bare placeholder (-h)
    sub = next(a for a in lazy._actions if a.dest == "command")
    for name, parser in sub.choices.items():
        options = [a for a in parser._actions if a.dest != "help"]
        assert bool(options) == (name == entry.name), name


def test_version_with_anything_after_it_is_a_usage_error(capsys):
    """``vista-lab --version extra`` is refused (argparse alone would print the
    version and exit 0): one line, exit 2."""
    assert main(["--version", "extra"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'--version' takes no other arguments" in err
    assert "'extra'" in err
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.startswith("vista-lab ")
