"""Sweep configs are rejected before any work starts, with the file, the key,
the rule and a close-match suggestion (issue "Sweeps that scale"; the
experiments are Proposition 1's recovery task and Theorem 1's make-room
instance, paper Section "Theory")."""

from __future__ import annotations

import textwrap

import pytest
from vistalab.theory import DomainError, UnknownNameError

from vistalab._examples import example_files
from vistalab._sweep import (
    SweepConfigError,
    UnknownSweepNameError,
    load_config,
    parse_config,
)
from vistalab.cli import main

RECOVERY_OK = """
experiment = "recovery"
seed = 3
[params]
N = 16
k = 8
trials = 50
budget = [16, 64]
[[grid]]
strategy = ["keep-blocks", "keep-bits"]
[[grid]]
strategy = "recover"
handle_cost = [1.0, 2.0]
"""


def _write(tmp_path, text, name="cfg.toml"):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def test_valid_recovery_config_expands_union_of_blocks(tmp_path):
    """Proposition 1 sweep over (B, strategy): each [[grid]] block is a product,
    the sweep their union, in canonical order with handle_cost only where it applies."""
    cfg = load_config(_write(tmp_path, RECOVERY_OK))
    assert cfg.n_cells == 2 * 2 + 2 * 2
    assert [c.index for c in cfg.cells] == list(range(8))
    for c in cfg.cells:
        assert (c.params["handle_cost"] is None) == (c.params["strategy"] != "recover")
    assert cfg.seed == 3 and cfg.experiment.name == "recovery"


@pytest.mark.parametrize(
    ("text", "exc", "pattern"),
    [
        # unknown experiment, with the close match and the file
        ('experiment = "recovry"\n', UnknownSweepNameError,
         r"Unknown experiment 'recovry' in .*cfg\.toml.*Did you mean 'recovery'\?"),
        # misspelt parameter key inside a block
        (RECOVERY_OK.replace("budget =", "budgt ="), UnknownSweepNameError,
         r"Unknown parameter 'budgt' in .*cfg\.toml, \[params\].*Did you mean 'budget'\?"),
        # misspelt top-level key
        (RECOVERY_OK.replace("seed = 3", "sede = 3"), UnknownSweepNameError,
         r"Unknown key 'sede' in .*cfg\.toml, top level\. Did you mean 'seed'\?"),
        # a parameter written at top level gets told where it belongs
        ('experiment = "recovery"\nN = 4\n', UnknownSweepNameError,
         r"Unknown key 'N'.*top level.*put it under \[params\]"),
        # missing parameter
        (RECOVERY_OK.replace("trials = 50\n", ""), SweepConfigError,
         r"`trials` is required by experiment 'recovery'.*cfg\.toml"),
        # out-of-domain value, located in its block
        (RECOVERY_OK.replace("handle_cost = [1.0, 2.0]", "handle_cost = [1.0, -2.0]"),
         SweepConfigError, r"`handle_cost` must be .*0 <= handle_cost.*\[\[grid\]\] block 2"),
        (RECOVERY_OK.replace("N = 16", "N = 0"), SweepConfigError,
         r"`N` must be an integer >= 1 \(got N=0, in .*cfg\.toml, \[params\]\)"),
        # unknown choice with a close match
        (RECOVERY_OK.replace('"keep-bits"]', '"keep-bitz"]'), UnknownSweepNameError,
         r"Unknown strategy 'keep-bitz' in .*block 1, key `strategy`\. Did you mean 'keep-bits'"),
        # a parameter where it does not apply
        (RECOVERY_OK.replace("[[grid]]\nstrategy = [", "[[grid]]\nhandle_cost = 1.0\nstrategy = ["),
         SweepConfigError, r"`handle_cost` applies only when strategy is 'recover'"),
        # wrong type
        (RECOVERY_OK.replace("k = 8", 'k = "eight"'), SweepConfigError,
         r"`k` must be an integer >= 1 \(got k='eight'"),
        # cross-parameter rule from the experiment's check (N*k too large for one trial)
        (RECOVERY_OK.replace("k = 8", "k = 100000000"), SweepConfigError,
         r"`k` must keep N\*k <= 2\*\*30"),
        # the same cell listed twice across blocks
        (RECOVERY_OK + '[[grid]]\nstrategy = "keep-bits"\n', SweepConfigError,
         r"must list each cell once \(also in \[\[grid\]\] block 1\)"),
        # a key both shared and in a block
        (RECOVERY_OK.replace('strategy = "recover"', 'strategy = "recover"\nN = 4'),
         SweepConfigError, r"`N` is set both in \[params\] and in this block"),
        # repeated value
        (RECOVERY_OK.replace("budget = [16, 64]", "budget = [16, 16.0]"), SweepConfigError,
         r"`budget` must not list a value twice"),
        # missing experiment
        ("seed = 1\n", SweepConfigError, r"`experiment` is required.*recovery"),
        # empty list
        (RECOVERY_OK.replace("budget = [16, 64]", "budget = []"), SweepConfigError,
         r"`budget` must be a value or a non-empty list"),
        # syntax
        ("experiment = \n", SweepConfigError, r"must be valid UTF-8 TOML .*cfg\.toml"),
    ],
)
def test_bad_config_is_rejected_with_file_key_rule(tmp_path, text, exc, pattern):
    """Each broken config (unknown experiment, misspelt key, missing parameter,
    out-of-domain value for Proposition 1's (N, k, B), ...) fails at the door
    with a message naming the file, the key and the rule."""
    with pytest.raises(exc, match=pattern):
        load_config(_write(tmp_path, text))


def test_config_errors_inherit_builtin_types(tmp_path):
    """DESIGN rule 6: errors carry their values and inherit ValueError/KeyError
    (checked on a Proposition 1 config)."""
    with pytest.raises(DomainError) as info:
        load_config(_write(tmp_path, RECOVERY_OK.replace("N = 16", "N = -3")))
    assert isinstance(info.value, ValueError)
    assert info.value.parameter == "N" and info.value.value == -3
    assert info.value.file.endswith("cfg.toml") and info.value.where == "[params]"
    with pytest.raises(UnknownNameError) as info2:
        parse_config({"experiment": "recovery", "grid": {"strategi": "recover"}})
    assert isinstance(info2.value, KeyError) and info2.value.name == "strategi"


def test_missing_file_is_a_config_error(tmp_path):
    """A config path that does not exist is named in the error (Proposition 1 sweeps)."""
    with pytest.raises(SweepConfigError, match=r"`config` must be a readable TOML file"):
        load_config(tmp_path / "nope.toml")


def test_cli_rejects_bad_config_before_any_work(tmp_path, capsys):
    """The CLI turns a bad Proposition 1 config into one line on stderr, exit 2,
    and creates no output folder: nothing ran."""
    cfg = _write(tmp_path, RECOVERY_OK.replace("trials = 50", "trails = 50"))
    out = tmp_path / "out"
    status = main(["sweep", str(cfg), "--out", str(out), "--workers", "1"])
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1 and "Did you mean 'trials'?" in err and "cfg.toml" in err
    assert not out.exists()


def test_cli_workers_and_scheduler_are_exclusive(tmp_path, capsys):
    """--workers applies to local runs only (Proposition 1 sweep config)."""
    cfg = _write(tmp_path, RECOVERY_OK)
    status = main(["sweep", str(cfg), "--out", str(tmp_path / "o"), "--workers", "2",
                   "--scheduler", "tcp://127.0.0.1:1"])
    assert status == 2
    assert "`--workers` applies to local runs only" in capsys.readouterr().err
    with pytest.raises(DomainError, match=r"`workers` must be an integer >= 1"):
        from vistalab._sweep import LocalBackend

        LocalBackend(0)


MAKEROOM_OK = """
experiment = "makeroom"
seed = 1
[params]
n = 64
kappa = 4
trials = 100
[[grid]]
interface = "gaussian"
sigma = [0.5, 1.0]
[[grid]]
interface = "buckets"
buckets = [2, 8]
"""


@pytest.mark.parametrize(
    ("old", "new", "exc", "pattern"),
    [
        ('interface = "gaussian"', 'interface = "gausian"', UnknownSweepNameError,
         r"Unknown interface 'gausian' in .*cfg\.toml, \[\[grid\]\] block 1, key `interface`\. "
         r"Did you mean 'gaussian'\?"),
        ("sigma = [0.5, 1.0]\n", "", SweepConfigError,
         r"`sigma` is required by experiment 'makeroom' when interface is 'gaussian'.*block 1"),
        ("sigma = [0.5, 1.0]", "sigma = [0.5, 0.0]", SweepConfigError,
         r"`sigma` must be a finite real number with 0 < sigma.*block 1"),
        ("buckets = [2, 8]", "buckets = [2, 65]", SweepConfigError,
         r"`buckets` must be an integer number of buckets with 1 <= M <= n.*block 2"),
        ("kappa = 4", "kappa = 64", SweepConfigError,
         r"`kappa` must be an integer with 2 <= kappa < n.*\[params\]"),
        ('interface = "buckets"', 'interface = "buckets"\nsigma = 1.0', SweepConfigError,
         r"`sigma` applies only when interface is 'gaussian' \(got sigma=1\.0, in .*block 2; "
         r"interface='buckets'; cell buckets=2\)"),
        ('interface = "buckets"\nbuckets = [2, 8]', 'interface = "gibbs"', SweepConfigError,
         r"exactly one of lam, rate"),
        ("trials = 100", "trials = 100\npolicy = \"bays\"", UnknownSweepNameError,
         r"Unknown policy 'bays'.*Did you mean 'bayes'\?"),
    ],
)
def test_bad_makeroom_config_uses_sims_rules(tmp_path, old, new, exc, pattern):
    """Theorem 1's instance M_{n,L,l} (2 <= kappa < n) and each interface's
    parameters are checked at the door with sims' own rules, located in the file."""
    assert old in MAKEROOM_OK
    with pytest.raises(exc, match=pattern):
        load_config(_write(tmp_path, MAKEROOM_OK.replace(old, new)))


@pytest.mark.parametrize(("name", "cells"), [("small.toml", 11), ("figure4.toml", 27)])
def test_example_configs_are_valid(name, cells):
    """The shipped configs (small; the one behind figure 4, Theorem 1's
    trade-off at n=64, kappa=4) validate and expand to the documented grids."""

    path = example_files()[f"sweeps/{name}"]
    cfg = load_config(path)
    assert cfg.experiment.name == "makeroom" and cfg.n_cells == cells
    assert {c.params["interface"] for c in cfg.cells} == \
        {"ledger", "blind", "gaussian", "buckets", "gibbs"}
    assert {(c.params["n"], c.params["kappa"]) for c in cfg.cells} == {(64, 4)}


def test_defaults_are_filled_and_count_for_duplicates():
    """A recovering strategy gets the default handle cost c0 = 1 (Proposition 1's
    handle model), and writing that default explicitly is the same cell."""
    base = {"experiment": "recovery", "params": {"N": 8, "k": 4, "trials": 5, "budget": 8}}
    cfg = parse_config({**base, "grid": {"strategy": "recover"}})
    assert cfg.cells[0].params["handle_cost"] == 1.0
    with pytest.raises(SweepConfigError, match="must list each cell once"):
        parse_config({**base, "grid": [{"strategy": "recover"},
                                       {"strategy": "recover", "handle_cost": 1.0}]})


def test_seed_accepts_big_entropy_as_digit_string():
    """A recorded 128-bit seed entropy (above TOML's 2**63 - 1) can be given back
    as a string of digits (DESIGN rule 2: rerun from the recorded entropy)."""
    base = {"experiment": "recovery", "params": {"N": 8, "k": 4, "trials": 5, "budget": 8,
                                                 "strategy": "keep-bits"}}
    big = 2**127 + 12345
    assert parse_config({**base, "seed": str(big)}).seed == big
    with pytest.raises(SweepConfigError, match=r"`seed` must be an integer >= 0.*top level"):
        parse_config({**base, "seed": "twelve"})
    with pytest.raises(SweepConfigError, match=r"`seed` must be an integer >= 0"):
        parse_config({**base, "seed": -1})
