"""`vista-lab recovery` and `vista-lab makeroom` (issue section 5): JSON
documents with the promised keys, and one-line errors with exit status 2
naming the parameter, value, rule and fix."""

from __future__ import annotations

import json

import pytest

from vistalab import sims
from vistalab.cli import main


def _json(capsys, argv):
    status = main(argv)
    out = capsys.readouterr().out
    return status, json.loads(out)


def test_makeroom_json_issue_example(capsys):
    """Issue section 5 example: n=64, kappa=4, gaussian sigma=1 has exact
    E[Z] about 2.7199 and a rate about 1.32 bits (Proposition 2's channel)."""
    status, doc = _json(capsys, ["makeroom", "--n", "64", "--kappa", "4", "--interface",
                                 "gaussian", "--sigma", "1", "--trials", "200000", "--seed",
                                 "5", "--json"])
    assert status == 0
    for key in ("mean_z", "mean_z_ci", "rate_bits", "rate_bits_se", "lower_bound",
                "exact_mean_z", "optimal_mean_z", "nu", "trials", "seed", "trials_per_second"):
        assert key in doc
    assert doc["exact_mean_z"] == sims.gaussian_exact_mean_z(64, 4, 1.0)
    assert doc["exact_mean_z"] == pytest.approx(2.7199, abs=5e-5)
    assert doc["rate_bits"] == pytest.approx(1.32, abs=0.01) and doc["rate_bits_se"] > 0
    assert doc["mean_z_ci"][0] <= doc["exact_mean_z"] + 4 * doc["mean_z_se"]
    assert doc["seed"] == 5 and doc["trials"] == 200_000


def test_makeroom_json_nulls_outside_theorem(capsys):
    """Issue section 5: lower_bound (and nu) are null outside kappa < n/2, with
    a note; rate_bits_se is 0 for an exact rate."""
    status, doc = _json(capsys, ["makeroom", "--n", "10", "--kappa", "6", "--interface",
                                 "buckets", "--buckets", "4", "--trials", "1000", "--seed", "1",
                                 "--json"])
    assert status == 0
    assert doc["lower_bound"] is None and doc["nu"] is None
    assert "outside Theorem 1's domain" in doc["lower_bound_note"]
    assert doc["rate_bits_se"] == 0
    assert doc["exact_mean_z"] is not None


def test_makeroom_table_output(capsys):
    """The default output is a table (rich) naming the key quantities."""
    assert main(["makeroom", "--n", "30", "--kappa", "3", "--interface", "gibbs", "--rate",
                 "1.5", "--trials", "1000", "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert "optimal_mean_z" in out and "gibbs" in out


def test_recovery_json(capsys):
    """Issue section 5: success, success_ci [low, high], bound, exact_success,
    trials, seed (Proposition 1)."""
    status, doc = _json(capsys, ["recovery", "--N", "16", "--k", "8", "--budget", "64",
                                 "--strategy", "keep-blocks", "--trials", "4000", "--seed", "3",
                                 "--json"])
    assert status == 0
    assert set(("success", "success_ci", "bound", "exact_success", "trials", "seed")) <= set(doc)
    assert doc["bound"] == pytest.approx(64 / (16 * 8) + 1 / 8)
    assert doc["success_ci"][0] <= doc["exact_success"] <= doc["success_ci"][1]
    _, rec = _json(capsys, ["recovery", "--N", "16", "--k", "8", "--budget", "100",
                            "--strategy", "recover", "--handle-cost", "2", "--trials", "50",
                            "--seed", "3", "--json"])
    # 16 handles of 2*log2(16) = 8 bits plus one 8-bit block: 136 > 100 bits.
    assert rec["feasible"] is False and rec["success"] == 0.0 and rec["exact_success"] == 0.0


def test_recovery_table_output(capsys):
    """The default output is a table."""
    assert main(["recovery", "--N", "8", "--k", "4", "--budget", "10", "--strategy",
                 "keep-bits", "--trials", "100", "--seed", "1"]) == 0
    assert "consistent_with_bound" in capsys.readouterr().out


MAKEROOM = ["makeroom", "--n", "64", "--kappa", "4", "--trials", "100"]


@pytest.mark.parametrize("argv,match", [
    (MAKEROOM + ["--interface", "gaussian"], r"`sigma` is required for interface 'gaussian'"),
    (MAKEROOM + ["--interface", "buckets", "--buckets", "65"],
     r"`buckets` must be an integer number of buckets with 1 <= M <= n \(got buckets=65, n=64\)"),
    (["makeroom", "--n", "64", "--kappa", "2.5", "--interface", "blind"],
     r"`kappa` must be an integer \(got kappa='2.5'\); pass a whole number"),
    (["makeroom", "--n", "64", "--kappa", "64", "--interface", "blind"],
     r"`kappa` must be an integer with 2 <= kappa < n \(got kappa=64, n=64\)"),
    (["makeroom", "--n", "64", "--kappa", "4", "--interface", "blind", "--trials", "0"],
     r"`trials` must be an integer >= 1 \(got trials=0\)"),
    (["makeroom", "--n", "64", "--kappa", "4", "--interface", "blind", "--trials", "-5"],
     r"`trials` must be an integer >= 1 \(got trials=-5\)"),
    (MAKEROOM + ["--interface", "gausian", "--sigma", "1"],
     r"Unknown interface 'gausian'\. Did you mean 'gaussian'\?"),
    (MAKEROOM + ["--interface", "gibbs", "--lam", "1", "--rate", "2"], r"not allowed with"),
    (MAKEROOM + ["--interface", "blind", "--policy", "greedy"], r"Unknown policy 'greedy'"),
    (["recovery", "--N", "8", "--k", "4", "--budget", "10", "--strategy", "keep-block"],
     r"Unknown strategy 'keep-block'\. Did you mean 'keep-blocks'\?"),
    (["recovery", "--N", "0", "--k", "4", "--budget", "10", "--strategy", "keep-bits"],
     r"`N` must be an integer >= 1 \(got N=0\)"),
    (["recovery", "--N", "8", "--k", "4", "--budget", "ten", "--strategy", "keep-bits"],
     r"`budget` must be a number \(got budget='ten'\)"),
])
def test_bad_input_is_one_line_exit_2(argv, match, capsys):
    """Issue section 5 / DESIGN.md rule 6: a clear one-line error, exit status 2."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("vista-lab: error:") and err.count("\n") == 1
    assert "Traceback" not in err
    import re

    assert re.search(match, err), err
