"""The machine-checked proof steps of Appendices B-D: every registered step
passes, and each certification method rejects a deliberately broken step
(a checker that cannot fail is worthless)."""

from __future__ import annotations

import re
from fractions import Fraction

import pytest
import sympy as sp
from vistalab.theory import PROOF_CLAIMS, PROOF_METHODS, DomainError, UnknownNameError
from vistalab.theory._proofs import (
    _registry,
    _steps_lemma1,
    _steps_prop1,
    _steps_thm1_b,
    _steps_thm1_d,
    _steps_thm1_e,
)
from vistalab.theory._proofs._enumerate import bucket_mean_z, simulate_makeroom
from vistalab.theory._proofs._interval import certify_positive
from vistalab.theory._proofs._registry import Outcome, Step, get_step, run_step
from vistalab.theory._proofs._symbolic import (
    certify_identities,
    certify_identity,
    certify_nonneg_combination,
    certify_sign,
)

from vistalab import theory

STEPS = theory.list_steps()


def test_registry_covers_every_result():
    """at least 25 named steps (we aim for 35+) across
    Prop. 1, Prop. 2 (+ tight), Lemma 1 and Theorem 1 parts A-E."""
    assert len(STEPS) >= 35
    claims = {s.claim for s in STEPS}
    assert claims == set(PROOF_CLAIMS)
    assert {s.method for s in STEPS} == set(PROOF_METHODS)
    keys = [s.key for s in STEPS]
    assert len(keys) == len(set(keys))
    for s in STEPS:
        assert re.fullmatch(r"[a-z][a-z0-9_]*", s.name), s.name
        assert s.domain.strip() and s.statement.strip() and s.ref.strip()


@pytest.mark.parametrize("step", STEPS, ids=[s.key for s in STEPS])
def test_step_is_certified(step: Step):
    """Each step of the proofs of Prop. 1 (App. B), Prop. 2 (App. C), its
    tighter variant, Lemma 1 and Theorem 1 (App. D) passes its certifier."""
    cert = run_step(step)
    assert cert.status == "pass", cert.detail
    assert cert.claim == step.claim and cert.step == step.name and cert.method == step.method


# --- each method rejects a broken step ----------------------------------------------


def test_sympy_identity_rejects_off_by_one_tail_sum():
    """Eq. (tailsum) with the sum starting at m = 0 instead of 1 is not an identity."""
    p = sp.symbols("p0:4", nonnegative=True)
    mean = sum(z * p[z] for z in range(4))
    broken = sum(p[z] for m in range(0, 4) for z in range(m, 4))
    out = certify_identities([("kappa=3", mean, broken)])
    assert not out.ok and "not proved" in out.detail


def test_sympy_identity_rejects_dropped_one_over_k():
    """Prop. 1 Step 3 with the +1/k dropped from the success bound."""
    n, k, b = sp.symbols("N k B", positive=True)
    assert not certify_identity(1 - (1 - 1 / k - b / (n * k)), b / (n * k)).ok


def test_sympy_nonneg_rejects_fano_without_plus_one():
    """Prop. 1 Step 1 relaxation with the +1 dropped: Pe k - Hb - Pe log2(2^k-1)
    is not a non-negative combination of the facts."""
    pe, k, hb, lg = sp.symbols("P_e k H_b L", nonnegative=True)
    facts = {"1 - Hb >= 0": 1 - hb, "k - log2(2^k-1) >= 0": k - lg}
    out = certify_nonneg_combination(
        pe * k - (hb + pe * lg), facts, {"1 - Hb >= 0": sp.Integer(1), "k - log2(2^k-1) >= 0": pe}
    )
    assert not out.ok


def test_sympy_nonneg_rejects_negative_multiplier():
    """Theorem 1 part (B) rearrangement with a multiplier of unknown sign."""
    i_, pc, b, c = sp.symbols("I P_c b c", real=True)
    nu = sp.Symbol("nu", positive=True)
    t = sp.Symbol("t", real=True)
    facts = {"f": 1 + pc * (b - nu) + (1 - pc) * b - (c - i_), "g": c - b}
    out = certify_nonneg_combination(
        (t * (i_ + 1)) / nu - t * pc, facts, {"f": t / nu, "g": t / nu}
    )
    assert not out.ok and "not manifestly >= 0" in out.detail


def test_sympy_sign_rejects_flipped_inequality():
    """Prop. 2 tight: tight - paper >= 0 (the flipped comparison) cannot be proved."""
    m, kappa, s = sp.symbols("m kappa sigma", positive=True)
    n = m + 1
    paper = sp.log(2) * sp.log(kappa, 2) ** 2 / s**2
    tight = (1 - 1 / n) * paper / 2
    assert certify_sign(paper - tight).ok
    assert not certify_sign(tight - paper).ok


def test_interval_rejects_fano_without_plus_one():
    """Prop. 1 Step 1 (interval method): without the +1 the function is negative
    somewhere on [0, 1] and branch and bound finds a counterexample."""
    f, g = _steps_prop1.fano_relaxed_function(4, plus_one=False)
    out = certify_positive(f, [(Fraction(0), Fraction(1))], grad=g, max_boxes=2000)
    assert not out.ok and "counterexample" in out.detail


def test_interval_gives_up_on_a_touching_minimum():
    """A non-strict claim with an interior zero (1 - Hb(p) at p = 1/2) cannot be
    certified by naive boxes: the checker reports 'undecided', not 'pass'."""
    from vistalab.theory._proofs._interval import xlogx

    def one_minus_hb(xs):
        from flint import arb

        p = xs[0]
        return 1 + (xlogx(p) + xlogx(1 - p)) / arb(2).log()

    out = certify_positive(one_minus_hb, [(Fraction(0), Fraction(1))], max_boxes=300)
    assert not out.ok and "undecided" in out.detail


def _broken_makeroom(order, j_star, kappa):
    """Stops one archive late (the classic off-by-one in the stop rule)."""
    run = simulate_makeroom(order, j_star, kappa)
    seq = list(order)
    extra = seq[len(run.archived) : len(run.archived) + 1]
    z = run.z + sum(1 for b in extra if b != j_star)
    return type(run)(run.archived + tuple(extra), run.flags + ("clear",) * len(extra), z, run.tau)


@pytest.mark.parametrize(
    ("module", "key"), [(_steps_thm1_b, "thm1.B:stop_time_and_z"),
                        (_steps_thm1_b, "thm1.B:z_ge_m_iff_not_in_prefix"),
                        (_steps_thm1_e, "thm1.E:flag_reads_over_until_stop")]
)
def test_enumeration_rejects_off_by_one_process(monkeypatch, module, key):
    """Eq. (Z-search) / (Z-list) and part (E): if the process archived one block
    too many, the exhaustive checks over all orders report failure."""
    monkeypatch.setattr(module, "simulate_makeroom", _broken_makeroom)
    claim, name = key.split(":")
    cert = run_step(get_step(claim, name))
    assert cert.status == "fail", cert.detail


def test_enumeration_rejects_wrong_bucket_cost(monkeypatch):
    """Part (D): counting P instead of P - 1 archived blocks breaks E[Z] < n/(2M)."""
    monkeypatch.setattr(
        _steps_thm1_d, "bucket_mean_z", lambda n, kappa, m: bucket_mean_z(n, kappa, m) + 1
    )
    cert = run_step(get_step("thm1.D", "bucket_mean_below_half_n_over_m"))
    assert cert.status == "fail"


def test_hypothesis_rejects_bound_without_plus_one(monkeypatch):
    """Theorem 1 without the +1 (kappa[1 - I/nu]_+) is false; the randomized
    check over interfaces finds a violating one."""
    monkeypatch.setattr(
        _steps_thm1_b,
        "floor_bound",
        lambda n, kappa, rate: kappa * max(0.0, 1 - rate / _steps_thm1_b.nu_bits(n, kappa)),
    )
    cert = run_step(get_step("thm1.B", "bound_vs_random_interfaces"))
    assert cert.status == "fail" and "falsified" in cert.detail


def test_hypothesis_rejects_lemma_without_plus_one(monkeypatch):
    """Lemma 1 without the +1 is false; both the randomized and the exhaustive
    checks reject it."""
    def no_plus_one(n, m, pc):
        import math

        return pc * math.log2(m) + (1 - pc) * math.log2(n - m)

    monkeypatch.setattr(_steps_lemma1, "list_fano_rhs", no_plus_one)
    assert run_step(get_step("lemma1", "random_interfaces")).status == "fail"
    assert run_step(get_step("lemma1", "exhaustive_deterministic")).status == "fail"


def test_lp_step_rejects_dropped_plus_one():
    """Theorem 1 part (A) skeleton without the +1: the LP prover refuses it."""
    out = _steps_prop1.lp_outcome(
        "H(J|Y,U) <= H(J|E,Y,U)",
        (theory.functional_dependence("E", ("J", "Y", "U")), "H(E) <= 1"),
    )
    assert not out.ok


def test_crashing_check_is_a_failure():
    """A certifier that raises certifies nothing (reported as fail, not skipped)."""
    def boom() -> Outcome:
        raise ZeroDivisionError("x")

    cert = run_step(Step("prop1", "boom", "enumeration", "none", "none", "none", boom))
    assert cert.status == "fail" and "ZeroDivisionError" in cert.detail


def test_non_outcome_return_is_a_failure():
    """A check must return an Outcome; True alone is not a certificate."""
    cert = run_step(Step("prop1", "lazy", "enumeration", "-", "-", "-", lambda: True))  # type: ignore[arg-type, return-value]
    assert cert.status == "fail"


# --- registry API -------------------------------------------------------------------


def test_filtering_and_report_counts():
    """`--only` semantics: exact claim first, else substring; globs; counts add up."""
    prop2 = theory.list_steps("prop2")
    assert prop2 and {s.claim for s in prop2} == {"prop2"}
    assert {s.claim for s in theory.list_steps("prop2*")} == {"prop2", "prop2-tight"}
    assert all("fano" in s.name for s in theory.list_steps("fano"))
    lp = theory.list_steps("lp-shannon")
    assert lp and {s.method for s in lp} == {"lp-shannon"}
    report = theory.certify_all("thm1.C")
    assert report.passed + report.failed == len(report.steps) == len(theory.list_steps("thm1.C"))
    assert report.ok and report.by_claim() == {"thm1.C": (report.passed, 0)}


def test_filter_matching_nothing_is_a_domain_error():
    """An --only pattern that selects nothing names the valid claims and methods."""
    with pytest.raises(DomainError, match="must match at least one claim.*thm1.A"):
        theory.certify_all("no_such_step")
    with pytest.raises(DomainError, match="non-empty"):
        theory.list_steps("  ")


def test_unknown_step_and_claim_suggest_names():
    """Unknown names raise UnknownNameError with a close-match hint (rule 6)."""
    with pytest.raises(UnknownNameError, match="Did you mean 'prop2-tight'"):
        get_step("prop2-tigth", "x")
    with pytest.raises(UnknownNameError, match="Did you mean 'tail_sum_identity'"):
        get_step("thm1.B", "tail_sum_identty")


def test_register_rejects_unknown_method_and_duplicates():
    """Registration validates claim and method and keeps names unique per claim."""
    with pytest.raises(UnknownNameError, match="method"):
        _registry.register_step("prop1", "x", "sympy", "d", "s", "r")
    with pytest.raises(UnknownNameError, match="claim"):
        _registry.register_step("prop3", "x", "sympy-identity", "d", "s", "r")
    with pytest.raises(DomainError, match="unique"):
        _registry.register_step("prop1", "step3_sum", "sympy-identity", "d", "s", "r")(
            lambda: Outcome(True, "")
        )


def test_independent_derivations_agree_with_closed_forms():
    """Cross-check (not a certification): the sympy-derived tight Prop. 2 value
    and the enumerated bucket E[Z] match theory's closed-form implementations."""
    n_s, kappa_s, sigma_s = sp.symbols("n kappa sigma", positive=True)
    tight = (sp.log(kappa_s) ** 2 * (1 - 1 / n_s) / (2 * sigma_s**2)) / sp.log(2)
    for n, kappa, sigma in ((2, 2, 0.5), (8, 16, 1.0), (1000, 4, 3.0)):
        mine = float(tight.subs({n_s: n, kappa_s: kappa, sigma_s: sigma}))
        assert mine == pytest.approx(theory.content_rate_bound_tight(n, kappa, sigma), rel=1e-12)
    for n, kappa, m in ((16, 2, 3), (40, 7, 5), (70, 30, 70)):
        assert float(bucket_mean_z(n, kappa, m)) == pytest.approx(
            theory.bucket_ledger(n, kappa, m).mean_z, rel=1e-12
        )
