"""``vista-lab bound``: each quantity's JSON matches the theory API, and bad
input is one line on stderr naming the parameter, with exit status 2."""

from __future__ import annotations

import json
import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vistalab import theory
from vistalab.cli import main


def run_json(argv, capsys):
    status = main(argv + ["--json"])
    out = capsys.readouterr()
    assert status == 0, out.err
    return json.loads(out.out)


def run_error(argv, capsys) -> str:
    status = main(argv)
    err = capsys.readouterr().err
    assert status == 2
    assert err.startswith("vista-lab: error:") and err.count("\n") == 1
    assert "Traceback" not in err
    return err


def test_bound_recovery_json(capsys):
    """Proposition 1 via the CLI: bound, feasibility and gap (None when VISTA
    does not fit, since then nothing is guaranteed)."""
    cost = theory.HandleCostModel(c0=1.5, instruction=100)
    for budget in (20000, 12000):
        doc = run_json(["bound", "recovery", "--N", "1024", "--k", "32", "--budget", str(budget),
                        "--c0", "1.5", "--instruction", "100"], capsys)
        assert doc["lossy_success_bound"] == theory.recovery_success_bound(1024, 32, budget)
        feas = theory.recovery_feasibility(1024, 32, budget, cost=cost)
        assert doc["vista_feasible"] == feas.feasible and doc["slack"] == feas.slack
        assert (doc["N"], doc["k"], doc["budget"]) == (1024, 32, float(budget))
        if feas.feasible:
            assert doc["gap"] == pytest.approx(1 - min(1.0, doc["lossy_success_bound"]))
        else:
            assert doc["gap"] is None and doc["vista_success"] is None
    assert doc["vista_feasible"] is False  # 12000 < 100 + 1024 * 15 + 32


def test_bound_content_json(capsys):
    """Proposition 2 via the CLI: paper bound, tight bound and exact rate."""
    doc = run_json(["bound", "content", "--kappa", "4", "--sigma", "1.5", "--n", "6"], capsys)
    assert doc["paper_bound_bits"] == theory.content_rate_bound(4, 1.5)
    assert doc["tight_bound_bits"] == theory.content_rate_bound_tight(6, 4, 1.5)
    assert doc["exact_rate_bits"] == theory.content_rate_exact(6, 4, 1.5)
    assert doc["exact_rate_bits"] <= doc["capped_tight_bound_bits"] <= doc["paper_bound_bits"]
    only_paper = run_json(["bound", "content", "--kappa", "4", "--sigma", "1.5"], capsys)
    assert set(only_paper) == {"kappa", "sigma", "paper_bound_bits"}


def test_bound_makeroom_json(capsys):
    """Theorem 1 via the CLI: nu, the lower bound, the exact optimum, and the
    rate a balanced ledger needs to match the optimum (bucket_rate_needed)."""
    n, kappa, rate = 500, 6, 3.0
    doc = run_json(["bound", "makeroom", "--n", str(n), "--kappa", str(kappa),
                    "--rate", str(rate)], capsys)
    assert (doc["n"], doc["kappa"], doc["rate"]) == (n, kappa, rate)
    assert doc["nu"] == theory.makeroom_nu(n, kappa)
    assert doc["lower_bound"] == theory.makeroom_lower_bound(n, kappa, rate)
    assert doc["optimal_mean_z"] == theory.optimal_mean_z(n, kappa, rate)
    assert doc["lower_bound"] <= doc["optimal_mean_z"] <= doc["bucket_mean_z_at_rate"]
    assert doc["price_per_bit"] == theory.price_per_bit(n, kappa)
    assert doc["threshold_rate"] == theory.threshold_rate(n, kappa, 0.5)
    # the cheapest balanced ledger at least as good as the optimum, and no cheaper one is
    led = theory.bucket_ledger(n, kappa, doc["bucket_M_needed"])
    assert led.mean_z <= doc["optimal_mean_z"] and led.rate_bits == doc["bucket_rate_needed"]
    assert theory.bucket_ledger(n, kappa, doc["bucket_M_needed"] - 1).mean_z > doc["optimal_mean_z"]
    assert doc["bucket_rate_needed"] >= rate


@pytest.mark.parametrize("flag,value", [("--rate", "1.25"), ("--mean-z", "0.8")])
def test_bound_frontier_json(flag, value, capsys):
    """Exact frontier via the CLI, from either side, with the Gibbs rank law."""
    doc = run_json(["bound", "frontier", "--n", "40", "--kappa", "3", flag, value], capsys)
    if flag == "--rate":
        assert doc["mean_z"] == theory.optimal_mean_z(40, 3, 1.25)
    else:
        assert doc["rate"] == theory.optimal_rate(40, 3, 0.8)
    assert len(doc["p_head"]) == 3
    assert sum(doc["p_head"]) + 37 * doc["p_tail"] == pytest.approx(1.0)


def test_bound_tables_print(capsys):
    """Human output is a rich table naming the quantities."""
    assert main(["bound", "makeroom", "--n", "100", "--kappa", "5", "--rate", "1"]) == 0
    out = capsys.readouterr().out
    assert "optimal_mean_z" in out and "lower_bound" in out and "Theorem 1" in out
    assert main(["bound", "frontier", "--n", "10", "--kappa", "3", "--rate", "1"]) == 0
    assert "p_head" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv,pattern",
    [
        (["bound", "content", "--kappa", "2.5", "--sigma", "1"], r"`kappa` must be an integer"),
        (["bound", "content", "--kappa", "4", "--sigma", "0"], r"`sigma` must be .*0 < sigma"),
        (["bound", "content", "--kappa", "4", "--sigma", "-1"], r"`sigma`"),
        (["bound", "content", "--kappa", "4", "--sigma", "nan"], r"`sigma` must be a finite"),
        (["bound", "makeroom", "--n", "10", "--kappa", "5", "--rate", "1"],
         r"`kappa` must be an integer with 2 <= kappa < n/2 \(got kappa=5, n=10\)"),
        (["bound", "makeroom", "--n", "100", "--kappa", "5", "--rate", "9"],
         r"`rate` must be a rate in bits with 0 <= rate <= log2\(n\)"),
        (["bound", "makeroom", "--n", "100", "--kappa", "5"], r"required: --rate"),
        (["bound", "frontier", "--n", "10", "--kappa", "3"], r"--rate --mean-z is required"),
        (["bound", "frontier", "--n", "3", "--kappa", "3", "--rate", "1"],
         r"`n` must be an integer with n >= kappa \+ 1"),
        (["bound", "recovery", "--N", "ten", "--k", "3", "--budget", "4"],
         r"`N` must be an integer \(got N='ten'\)"),
        (["bound", "recovery", "--N", "10", "--k", "3", "--budget", "-4"], r"`budget`"),
        (["bound", "frontiers"], r"did you mean 'frontier'"),
        (["bound"], r"required: WHAT"),
    ],
)
def test_bound_bad_input_is_one_line_exit_2(argv, pattern, capsys):
    """DESIGN rule 6 at the CLI: bad input names parameter, value, rule and fix."""
    err = run_error(argv, capsys)
    assert re.search(pattern, err), err


@given(st.floats(allow_nan=False, allow_infinity=False).filter(lambda x: x != int(x)))
def test_non_integer_kappa_is_rejected_for_every_quantity(value):
    """Non-integer kappa is a DomainError naming kappa, not a traceback."""
    for argv in (["bound", "content", "--kappa", repr(value), "--sigma", "1"],
                 ["bound", "frontier", "--n", "50", "--kappa", repr(value), "--rate", "1"]):
        assert main(argv) == 2


def test_large_n_frontier_is_fast_enough_to_use(capsys):
    """Exact frontier via the CLI for n = 10^9 (no length-n arrays)."""
    doc = run_json(["bound", "frontier", "--n", str(10**9), "--kappa", "1000", "--rate", "5"],
                   capsys)
    assert 0 < doc["mean_z"] < doc["blind_mean_z"]
    assert math.isfinite(doc["lam"]) and len(doc["p_head"]) == 1000


def test_only_hypothesis_commands_make_a_hypothesis_folder():
    """The CLI keeps Hypothesis's storage in a temporary folder only for the commands
    that run Hypothesis steps (verify, check-paper, reproduce); any other command
    (e.g. a long-lived `workspace serve` ended by a signal) creates none to leave behind.
    Run in a fresh interpreter: under pytest Hypothesis is already imported."""
    import subprocess
    import sys

    probe = (
        "import sys, tempfile\n"
        "made = []\n"
        "real = tempfile.TemporaryDirectory\n"
        "def spy(*a, **k):\n"
        "    made.append(k.get('prefix'))\n"
        "    return real(*a, **k)\n"
        "tempfile.TemporaryDirectory = spy\n"
        "from vistalab.cli import main\n"
        "main(sys.argv[1:])\n"
        "print('MADE', [p for p in made if p and p.startswith('vista-lab-hypothesis')])\n"
    )

    def made(*argv: str) -> str:
        out = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True,
                             text=True, timeout=120)
        return next(line for line in out.stdout.splitlines() if line.startswith("MADE"))

    assert made("bound", "recovery", "--N", "8", "--k", "4", "--budget", "10") == "MADE []"
    assert made("verify", "--list") == "MADE ['vista-lab-hypothesis-']"
