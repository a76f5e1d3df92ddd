"""`vista-lab makeroom --engine` and `vista-lab recovery --engine`: the
array mode's JSON keys plus the engine's counters, and one-line errors (exit 2)."""

from __future__ import annotations

import json
import re

import pytest

from vistalab import sims
from vistalab.cli import main


def _json(capsys, argv):
    status = main(argv)
    return status, json.loads(capsys.readouterr().out)


def test_makeroom_engine_json(capsys):
    """same options and JSON keys as the array mode plus archive_events,
    read_events and byte_exact_recoveries; the engine's mean Z is reported with its z-score
    against the array simulator, and every recovery is byte-exact (Theorem 1)."""
    argv = ["makeroom", "--n", "20", "--kappa", "3", "--interface", "buckets", "--buckets",
            "4", "--trials", "80", "--seed", "5", "--array-trials", "20000"]
    status, doc = _json(capsys, [*argv, "--engine", "--json"])
    assert status == 0
    _, array = _json(capsys, [*argv[:-2], "--json"])
    assert set(array) <= set(doc)
    assert doc["mode"] == "engine" and doc["store"] == "memory"
    assert doc["archive_events"] >= doc["trials"] and doc["read_events"] > 0
    assert doc["byte_exact_recoveries"] == doc["read_events"]
    assert doc["agrees_with_array"] is True and abs(doc["z_score"]) <= 4
    assert doc["exact_mean_z"] == sims.exact_mean_z(
        sims.make_interface("buckets", n=20, kappa=3, buckets=4))


def test_makeroom_engine_table(capsys):
    """The default output is a table with the engine's counters."""
    assert main(["makeroom", "--engine", "--n", "12", "--kappa", "3", "--interface", "blind",
                 "--trials", "10", "--seed", "1", "--array-trials", "1000",
                 "--tokenizer", "approx"]) == 0
    out = capsys.readouterr().out
    assert "archive_events" in out and "stop_mismatches" in out and "approx" in out


def test_recovery_engine_json(capsys):
    """the array mode's JSON keys plus handle_tokens; budget in tokens."""
    status, doc = _json(capsys, ["recovery", "--engine", "--N", "8", "--k", "256", "--budget",
                                 "2500", "--strategy", "recover", "--trials", "4", "--seed",
                                 "2", "--json"])
    assert status == 0
    _, array = _json(capsys, ["recovery", "--N", "8", "--k", "256", "--budget", "2500",
                              "--strategy", "recover", "--trials", "4", "--seed", "2", "--json"])
    assert set(array) <= set(doc)
    assert doc["handle_tokens"] > 0 and doc["success"] == 1.0
    assert doc["read_events"] == doc["byte_exact_recoveries"] == 4


@pytest.mark.parametrize(("argv", "match"), [
    (["makeroom", "--n", "12", "--kappa", "3", "--interface", "blind", "--store", "disk"],
     r"`store` is only used with --engine"),
    (["makeroom", "--engine", "--n", "12", "--kappa", "3", "--interface", "gibbs", "--lam",
      "1"], r"`interface` has no engine counterpart"),
    (["makeroom", "--engine", "--n", "12", "--kappa", "3", "--interface", "blind", "--store",
      "cloud"], r"Unknown payload store 'cloud'"),
    (["makeroom", "--engine", "--n", "12", "--kappa", "3", "--interface", "blind", "--mode",
      "literal"], r"`mode` is not used with --engine"),
    (["makeroom", "--engine", "--n", "12", "--kappa", "3", "--interface", "blind",
      "--workers", "2"], r"`workers` must be 1 with --engine"),
    (["recovery", "--engine", "--N", "8", "--k", "64", "--budget", "3000", "--strategy",
      "recover", "--handle-cost", "2"], r"`handle-cost` is not used with --engine"),
    (["recovery", "--engine", "--N", "8", "--k", "64", "--budget", "3000", "--strategy",
      "keep-bit"], r"Did you mean 'keep-bits'\?"),
    (["recovery", "--N", "8", "--k", "64", "--budget", "3000", "--strategy", "recover",
      "--tokenizer", "approx"], r"`tokenizer` is only used with --engine"),
])
def test_engine_bad_input_is_one_line_exit_2(argv, match, capsys):
    """DESIGN.md rule 6: one line on stderr naming parameter, value, rule; exit status 2."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("vista-lab: error:") and err.count("\n") == 1
    assert re.search(match, err), err
