"""the Python proof steps are honest. Every step states its
generality; sympy-identity proves only true identities (no forced rewrites);
sympy-nonneg passes only with a certificate that an independent structural
check accepts; the steps' premises link each main result into a closed chain;
and deliberately broken variants of the paper's results are refused."""

from __future__ import annotations

import math
import pathlib
import re

import pytest
import sympy as sp
from vistalab.theory import DomainError, UnknownNameError
from vistalab.theory._proofs import _registry, _steps_prop1, _steps_thm1_b
from vistalab.theory._proofs._enumerate import RecoveringRun, recovering_method
from vistalab.theory._proofs._registry import (
    ChainResult,
    Outcome,
    StepCertificate,
    check_chains,
    get_step,
    run_step,
)
from vistalab.theory._proofs._symbolic import (
    certify_identity,
    certify_nonneg,
    certify_nonneg_combination,
    certify_sign,
    manifest_sign,
    polynomial_zero_by_evaluation,
)

from vistalab import theory

STEPS = theory.list_steps()
THEORY_DIR = pathlib.Path(_registry.__file__).resolve().parents[1]

# --- generality -----------------------------------------------------------------------


def test_every_step_states_an_honest_generality():
    """each step carries "all", "finite" or "sampled";
    an enumeration is never "all" and a Hypothesis step is always "sampled"."""
    for s in STEPS:
        assert s.generality in theory.PROOF_GENERALITIES, s.key
        if s.method == "enumeration":
            assert s.generality == "finite", s.key
        if s.method == "hypothesis":
            assert s.generality == "sampled", s.key
    kinds = {s.generality for s in STEPS}
    assert kinds == set(theory.PROOF_GENERALITIES)


def test_register_refuses_all_for_a_finite_method():
    """A finite method cannot claim a proof for every parameter; unknown
    generality values and malformed premise keys are refused with the fix."""
    with pytest.raises(DomainError, match="generality='finite'"):
        _registry.register_step("prop1", "x", "enumeration", "d", "s", "r", generality="all")
    with pytest.raises(UnknownNameError, match="generality"):
        _registry.register_step("prop1", "x", "lp-shannon", "d", "s", "r", generality="most")
    with pytest.raises(DomainError, match="claim:name"):
        _registry.register_step("prop1", "x", "lp-shannon", "d", "s", "r", premises=("nope",))


def test_default_generality_never_over_claims():
    """Registering without `generality` (the old API) gives "sampled" for
    Hypothesis and "finite" otherwise, never "all"."""
    def check() -> Outcome:
        return Outcome(True, "")

    try:
        _registry.register_step("prop1", "tmp_default_a", "sympy-identity", "d", "s", "r")(check)
        _registry.register_step("prop1", "tmp_default_b", "hypothesis", "d", "s", "r")(check)
        assert get_step("prop1", "tmp_default_a").generality == "finite"
        assert get_step("prop1", "tmp_default_b").generality == "sampled"
    finally:
        _registry._REGISTRY.pop(("prop1", "tmp_default_a"), None)
        _registry._REGISTRY.pop(("prop1", "tmp_default_b"), None)


# --- sympy-identity is sound ----------------------------------------------------------


def test_no_forced_rewrite_anywhere_in_theory():
    """no `force=True` in any theory module."""
    offenders = [
        str(p) for p in THEORY_DIR.rglob("*.py") if re.search(r"force\s*=\s*True", p.read_text())
    ]
    assert offenders == []


_R = sp.symbols("x y", real=True)
_RNZ = sp.symbols("x y", real=True, nonzero=True)
_A = sp.symbols("a b", real=True)
_Z = sp.Symbol("z")

FALSE_IDENTITIES = [
    ("log(x*y)", "log(x) + log(y)", _RNZ),  # x = y = -1
    ("log(x*y)", "log(x) + log(y)", _R),  # also undefined at 0
    ("log(x**2)", "2*log(x)", _RNZ[:1]),  # x = -1
    ("x/x", "1", _R[:1]),  # undefined at x = 0
    ("x**2/x", "x", _R[:1]),
    ("(x*y)/y", "x", _R),
    ("sqrt(x**2)", "x", _R[:1]),  # x = -1
    ("sqrt(x*y)", "sqrt(x)*sqrt(y)", _RNZ),  # x = y = -1
    ("(x**a)**b", "x**(a*b)", (*_RNZ[:1], *_A)),  # x = -1, a = 2, b = 1/2
    ("log(x/y)", "log(x) - log(y)", _RNZ),
    ("log(exp(z))", "z", (_Z,)),  # z = 2 pi i
    ("asin(sin(x))", "x", _R[:1]),  # x = pi
    ("exp(log(x))", "x", _R[:1]),  # undefined at 0
]


@pytest.mark.parametrize(
    ("lhs", "rhs", "symbols"), FALSE_IDENTITIES, ids=[f"{a}={b}" for a, b, _ in FALSE_IDENTITIES]
)
def test_sympy_identity_refuses_false_identities(lhs, rhs, symbols):
    """identities that fail somewhere on the stated domain (real or
    complex symbols, possibly 0) are refused; the checker never forces a rewrite."""
    out = certify_identity(lhs, rhs, symbols=symbols)
    assert not out.ok, out.detail


@pytest.mark.parametrize(
    ("lhs", "rhs"),
    [("log(x*y)", "log(x) + log(y)"), ("log(x**2)", "2*log(x)"), ("x/x", "1"),
     ("sqrt(x**2)", "x"), ("log(x/y)", "log(x) - log(y)"), ("sqrt(x*y)", "sqrt(x)*sqrt(y)")],
)
def test_sympy_identity_proves_them_for_positive_symbols(lhs, rhs):
    """The same identities hold for positive x, y and are proved there (so the
    refusals above come from the domain, not from a checker that refuses all)."""
    x, y = sp.symbols("x y", positive=True)
    out = certify_identity(lhs, rhs, symbols=(x, y))
    assert out.ok, out.detail


def test_polynomial_fallback_states_its_bound_and_decides():
    """The evaluation fallback: degree <= d_i per variable, grid of (d_i+1) points
    per variable; a true polynomial identity passes, a wrong coefficient fails."""
    x, y = sp.symbols("x y", real=True)
    good = polynomial_zero_by_evaluation((x + y) ** 3 - (x**3 + 3 * x**2 * y + 3 * x * y**2 + y**3))
    assert good.ok and "degree <= [3, 3]" in good.method and "16 exact evaluations" in good.method
    bad = polynomial_zero_by_evaluation((x + y) ** 3 - (x**3 + 2 * x**2 * y + 3 * x * y**2 + y**3))
    assert not bad.ok and "numerator is" in bad.method
    # Logs become independent variables: log(a)^2 + log(a) - log(a)(log(a) + 1) = 0.
    a = sp.Symbol("a", positive=True)
    la = sp.log(a)
    expr = sp.Add(la**2, la, sp.Mul(-1, la, la + 1, evaluate=False), evaluate=False)
    atoms = polynomial_zero_by_evaluation(expr)
    assert atoms.ok and "1 non-polynomial atoms" in atoms.method


# --- sympy-nonneg leaves a checkable certificate ------------------------------------------

_a, _b = sp.symbols("a b", real=True)
_p = sp.Symbol("p", positive=True)
FALSE_NONNEG = [
    _a * _b,  # a = 1, b = -1
    _a**2 + _b**2 - 3 * _a * _b,  # a = b = 1
    sp.log(_p),  # p = 1/2
    _p - 1,
    -(_p**2),
    sp.sin(_a),
    (_a - _b) ** 2 - 1,
    sp.log(_p) / sp.log(2) - sp.log(_p + 1) / sp.log(2),  # log2(p/(p+1)) < 0
]


@pytest.mark.parametrize("expr", FALSE_NONNEG, ids=[str(e) for e in FALSE_NONNEG])
def test_sympy_nonneg_refuses_false_claims(expr):
    """false non-negativity claims get no certificate."""
    assert not certify_sign(expr).ok


def test_sympy_nonneg_certificate_is_checked_independently():
    """A supplied certificate must be manifestly >= 0 *and* equal to the target:
    (a-b)^2 certifies a^2 - 2ab + b^2; a^2 + b^2 (manifest but not equal) and
    a^2 - 2ab + b^2 itself (equal but not manifest) do not."""
    target = _a**2 - 2 * _a * _b + _b**2
    assert certify_nonneg(target, (_a - _b) ** 2).ok
    wrong = certify_nonneg(target, _a**2 + _b**2)
    assert not wrong.ok and "differs" in wrong.detail
    assert not certify_nonneg(target, target).ok
    assert manifest_sign((_a - _b) ** 2) == "nonneg"
    assert manifest_sign(sp.log(1 + _p)) == "pos"
    assert manifest_sign(sp.log(_p)) is None
    assert manifest_sign(_a**3) is None  # odd power of a real symbol


def test_nonneg_combination_refuses_a_multiplier_of_unknown_sign():
    """The combination certificate needs manifestly non-negative multipliers."""
    t, f = sp.symbols("t f", real=True)
    out = certify_nonneg_combination(t * f, {"f >= 0": f}, {"f >= 0": t})
    assert not out.ok and "not manifestly >= 0" in out.detail


# --- chains -----------------------------------------------------------------------------


def _cert(key: str, *, passed: bool = True, premises=(), concludes=(), generality="all"):
    claim, step = key.split(":")
    return StepCertificate(claim, step, "sympy-identity", "d", "s", "r",
                           "pass" if passed else "fail", "", 0.0, generality,
                           tuple(premises), tuple(concludes))


def test_chain_closed_and_its_weakest_link():
    """A chain whose premises are registered, passed and acyclic is closed;
    its generality is its weakest step's."""
    certs = [
        _cert("prop1:a", concludes=("prop1",), premises=("prop1:b",)),
        _cert("prop1:b", premises=("prop1:c",), generality="finite"),
        _cert("prop1:c"),
    ]
    (res,) = check_chains(certs, ("prop1",))
    assert res.closed and res.generality == "finite" and res.weakest == ("prop1:b",)
    assert set(res.steps) == {"prop1:a", "prop1:b", "prop1:c"}


@pytest.mark.parametrize(
    ("certs", "why"),
    [
        ([_cert("prop1:a", concludes=("prop1",), premises=("prop1:missing",))],
         "prop1:missing, which is not a registered step"),
        ([_cert("prop1:a", concludes=("prop1",), premises=("prop1:b",)),
          _cert("prop1:b", premises=("prop1:a",))], "premise cycle prop1:a -> prop1:b -> prop1:a"),
        ([_cert("prop1:a", concludes=("prop1",), premises=("prop1:b",)),
          _cert("prop1:b", passed=False)], "prop1:b failed"),
        ([_cert("prop1:a")], "no step concludes prop1"),
    ],
    ids=["missing-premise", "cycle", "failed-premise", "unreachable"],
)
def test_broken_chain_is_reported(certs, why):
    """a missing premise, a cycle, a failed premise or a result that
    no step concludes each break the chain, and the reason is named."""
    (res,) = check_chains(certs, ("prop1",))
    assert not res.closed and why in res.detail


def test_registered_premises_all_resolve_and_every_result_is_concluded():
    """The real registry: every premise names a registered step and every main
    result has a concluding step (checked without running the checks)."""
    keys = {s.key for s in STEPS}
    for s in STEPS:
        assert set(s.premises) <= keys, (s.key, set(s.premises) - keys)
    concluded = {c for s in STEPS for c in s.concludes}
    assert concluded >= set(_registry.MAIN_RESULTS)
    certs = [_cert(s.key, premises=s.premises, concludes=s.concludes, generality=s.generality)
             for s in STEPS]
    assert all(r.closed for r in check_chains(certs))


def test_deliberately_broken_registered_chain_fails_the_report(monkeypatch):
    """A step whose premise does not exist makes certify_all's report not ok."""
    def check() -> Outcome:
        return Outcome(True, "fine on its own")

    step = _registry.Step("thm1.E", "dangling", "sympy-identity", "d", "s", "r", check,
                          generality="all", premises=("thm1.E:no_such_step",),
                          concludes=("thm1.E",))
    monkeypatch.setitem(_registry._REGISTRY, ("thm1.E", "dangling"), step)
    monkeypatch.setattr(_registry, "run_step", lambda s: _cert(
        s.key, premises=s.premises, concludes=s.concludes, generality=s.generality))
    report = theory.certify_all()
    assert report.failed == 0 and not report.ok
    (broken,) = report.broken_chains
    assert isinstance(broken, ChainResult) and broken.result == "thm1.E"
    assert "thm1.E:no_such_step" in broken.detail


# --- deliberately broken variants of the paper's results --------------------------------


def _plus(c: float):
    return lambda n, kappa, rate: kappa * max(0.0, 1 - (rate + c) / _steps_thm1_b.nu_bits(n, kappa))


@pytest.mark.parametrize("name", ["bound_vs_exact_frontier", "bound_vs_random_interfaces"])
def test_theorem_with_plus_point_four_is_refuted(monkeypatch, name):
    """E[Z] >= kappa[1 - (I+0.4)/nu]_+ is false (n=10, kappa=2, Gibbs
    lambda=0.6933 gives E[Z]=1.2856 < 1.371); the frontier grid and the
    Hypothesis step both find a violation."""
    monkeypatch.setattr(_steps_thm1_b, "floor_bound", _plus(0.4))
    cert = run_step(get_step("thm1.B", name))
    assert cert.status == "fail", cert.detail


def test_the_issue_counterexample_to_plus_point_four():
    """The issue's numbers, recomputed from the closed form of the Gibbs interface."""
    rate, mean_z = _steps_thm1_b.gibbs_point(10, 2, 0.6933)
    assert rate == pytest.approx(0.229, abs=5e-4)
    assert mean_z == pytest.approx(1.2856, abs=5e-4)
    assert mean_z < _plus(0.4)(10, 2, rate)
    assert mean_z >= _plus(1.0)(10, 2, rate)
    assert mean_z == pytest.approx(theory.optimal_mean_z(10, 2, rate), rel=1e-9)


def test_prop1_with_wrong_constants_is_refused():
    """Prop. 1 Step 3 with a wrong constant: dividing by N instead of Nk, or a
    success bound B/(Nk) + 1/(2k), is not certified."""
    n, k, b, s = sp.symbols("N k B S", positive=True)
    fact = {"B - (Nk - N - kS) >= 0": b - (n * k - n - k * s)}
    wrong_divide = certify_nonneg_combination(
        s / n - (1 - 1 / k - b / n), fact, {"B - (Nk - N - kS) >= 0": 1 / (n * k)}
    )
    assert not wrong_divide.ok
    assert not certify_identity(1 - (1 - 1 / k - b / (n * k)), b / (n * k) + 1 / (2 * k)).ok


def test_fano_alphabet_variants(monkeypatch):
    """Fano's H(X|E,R) <= P_e log2(2^k - 1): with log2(2^k - 2) it is false and
    the sampled check finds it; with log2(2^k) it is weaker but still true (so it
    must keep passing: the replacement does not change truth)."""
    monkeypatch.setattr(_steps_prop1, "error_alphabet", lambda k: 2**k - 2)
    assert run_step(get_step("prop1", "fano_random_laws")).status == "fail"
    monkeypatch.setattr(_steps_prop1, "error_alphabet", lambda k: 2**k)
    assert run_step(get_step("prop1", "fano_random_laws")).status == "pass"


def test_prop2_tight_without_its_factor_is_refused():
    """prop2-tight: the optimal value with the (1 - 1/n) factor dropped, or with
    the factor applied the wrong way round (1 + 1/n), is not an identity; and
    the paper bound is not below the tight one."""
    from vistalab.theory._proofs._steps_prop2 import shifted_reference_objective

    n, kappa, s = sp.symbols("n kappa sigma", positive=True)
    value = shifted_reference_objective(n, sp.log(kappa) / n, kappa, s)
    assert certify_identity(value, sp.log(kappa) ** 2 * (1 - 1 / n) / (2 * s**2)).ok
    assert not certify_identity(value, sp.log(kappa) ** 2 / (2 * s**2)).ok
    assert not certify_identity(value, sp.log(kappa) ** 2 * (1 + 1 / n) / (2 * s**2)).ok
    m = sp.Symbol("m", positive=True)
    paper = sp.log(2) * sp.log(kappa, 2) ** 2 / s**2
    tight = (1 - 1 / (m + 1)) * paper / 2
    assert not certify_sign(tight - paper).ok


def test_lossy_store_breaks_the_recovering_method(monkeypatch):
    """App. B: a store that drops the top bit of each payload makes the
    recovering-method enumeration fail (the check can fail)."""
    def lossy(blocks, k, query):
        run = recovering_method(blocks, k, query)
        return RecoveringRun(run.output & ((1 << max(k - 1, 0)) - 1), run.peak_prompt_bits)

    monkeypatch.setattr(_steps_prop1, "recovering_method", lossy)
    assert run_step(get_step("prop1", "recovering_method_exact")).status == "fail"


def test_unavailable_blocks_wrong_claim_is_refused():
    """App. D (C): U = Z - R with R <= r gives U >= Z - r; the stronger claim
    U >= Z - r + 1 has no certificate from the same fact."""
    z, r, rest = sp.symbols("Z r R", nonnegative=True)
    fact = {"r - R >= 0": r - rest}
    assert certify_nonneg_combination((z - rest) - (z - r), fact, {"r - R >= 0": 1}).ok
    assert not certify_nonneg_combination((z - rest) - (z - r + 1), fact, {"r - R >= 0": 1}).ok


def test_vanishing_delta_wrong_upper_bound_is_refused():
    """App. D (D): the sufficient rate is at most nu + log2(1/delta) (certified),
    not nu + log2(1/delta) - 1 (the same certificate shape is refused)."""
    s_ = sp.Symbol("s", nonnegative=True)
    delta = sp.Symbol("delta", positive=True)
    lg = lambda e: sp.log(e, 2)  # noqa: E731
    two_nu = 1 + 2 * delta + s_
    sufficient = lg((two_nu + 1) / (2 * delta) + 1)
    cert = lg(1 + s_ / (2 + 4 * delta + s_))
    assert certify_nonneg(lg(two_nu) + lg(1 / delta) - sufficient, cert).ok
    assert not certify_nonneg(lg(two_nu) + lg(1 / delta) - 1 - sufficient, cert).ok
    assert not certify_sign(lg(two_nu) + lg(1 / delta) - 1 - sufficient).ok
    assert math.isfinite(float(sufficient.subs({s_: 1, delta: sp.Rational(1, 4)})))


def test_fact_certificates_refuse_wrong_targets_and_undeclared_facts():
    """certify_nonneg_from_facts (Sum certificates over a symbolic number of
    cells): the Fano error-branch bound passes; with an extra +1 in the claim,
    with the fact symbol not declared non-negative, or without the
    normalisation term, it is refused."""
    from vistalab.theory._proofs._symbolic import certify_nonneg_from_facts

    c = sp.Symbol("c", integer=True, positive=True)
    big_c = sp.Symbol("C", integer=True, positive=True)
    lg = sp.Symbol("L", nonnegative=True)
    w = sp.IndexedBase("w", nonnegative=True)
    h = sp.IndexedBase("h", real=True)
    phi = sp.IndexedBase("phi", nonnegative=True)
    pe = sp.Sum(w[c], (c, 1, big_c))
    h_cond = sp.Sum(w[c] * h[c], (c, 1, big_c))
    facts = {phi: (lambda j: lg - h[j], "support bound")}
    template = sp.Sum(w[c] * phi[c], (c, 1, big_c))
    assert certify_nonneg_from_facts(pe * lg - h_cond, template, facts).ok
    assert not certify_nonneg_from_facts(pe * lg - h_cond - 1, template, facts).ok
    loose = sp.IndexedBase("phi", real=True)
    out = certify_nonneg_from_facts(pe * lg - h_cond, sp.Sum(w[c] * loose[c], (c, 1, big_c)),
                                    {loose: (lambda j: lg - h[j], "support bound")})
    assert not out.ok and "not manifestly" in out.detail
    # ln m - H(p) >= 0 needs sum_i p_i = 1: without the normalisation term it fails.
    i = sp.Symbol("i", integer=True, positive=True)
    s_ = sp.Symbol("s", integer=True, positive=True)
    p = sp.IndexedBase("p", positive=True)
    gamma = sp.IndexedBase("gamma", nonnegative=True)
    target = sp.log(s_) + sp.Sum(p[i] * sp.log(p[i]), (i, 1, s_))
    g_facts = {gamma: (lambda j: 1 / (s_ * p[j]) - 1 - sp.log(1 / (s_ * p[j])), "log_inequality")}
    total = sp.Sum(p[i], (i, 1, s_))
    assert certify_nonneg_from_facts(
        target, sp.Sum(p[i] * gamma[i], (i, 1, s_)), g_facts,
        vanishing=((1 - total, sp.log(s_) - 1, "normalisation"),),
    ).ok
    assert not certify_nonneg_from_facts(target, sp.Sum(p[i] * gamma[i], (i, 1, s_)), g_facts).ok


def test_lemma1_and_part_a_chains_are_proved_for_all_parameters():
    """with the support bound, the error-branch and the conditional
    support steps proved symbolically, Lemma 1's chain has no finite or sampled
    link; with the pointwise mixture-KL, Jensen and compensation identities over
    any number of laws, neither have Prop. 2 and its tight variant (checked from
    the registry's premise graph and generalities)."""
    certs = [_cert(s.key, premises=s.premises, concludes=s.concludes, generality=s.generality)
             for s in STEPS]
    chains = {r.result: r for r in check_chains(certs)}
    assert chains["lemma1"].closed and chains["lemma1"].generality == "all"
    assert chains["thm1.A"].generality == "all"
    assert "thm1.A:conditional_support_all" in chains["lemma1"].steps
    assert chains["prop2"].generality == "all" and chains["prop2-tight"].generality == "all"
    # Theorem 1 (B-E): the finite links left are App. D (E)'s adaptivity reduction, the
    # tail sum for kappa <= 12 and two limits evaluated on stated points (not certified);
    # Coq proves each part for every parameter (test_finite_chains_name_the_coq_...).
    finite_links = {"thm1.E:adaptive_policies_exhaustive", "thm1.B:tail_sum_identity",
                    "thm1.C:low_rate_endpoint_limit", "thm1.D:order_matching_limit"}
    for part in ("thm1.B", "thm1.C", "thm1.D", "thm1.E"):
        assert set(chains[part].weakest) <= finite_links, part
    assert set(chains["prop1"].weakest) == {
        "prop1:recovering_method_exact", "prop1:separation_lossy_bound_vanishes",
        "prop1:separation_vista_feasible"}
    assert all(r.generality != "sampled" for r in chains.values())


def test_tail_sum_induction_step_with_a_wrong_increment_is_refused():
    """Eq. (tailsum) for every kappa goes by induction; an induction step that
    claims S(K+1) - S(K) = K p_{K+1} (one term short) is not an identity."""
    m, z = sp.symbols("m z", integer=True, positive=True)
    k = sp.Symbol("K", integer=True, positive=True)
    p = sp.IndexedBase("p", nonnegative=True)
    s_k = sp.Sum(p[z], (z, m, k), (m, 1, k))
    s_next = sp.Sum(sp.Sum(p[z], (z, m, k)) + p[k + 1], (m, 1, k)) + p[k + 1]
    assert certify_identity(s_next - s_k, (k + 1) * p[k + 1]).ok
    assert not certify_identity(s_next - s_k, k * p[k + 1]).ok


def test_default_chain_check_requires_every_main_result():
    """By default every main result of the paper is chain-checked, concluded or
    not (an unconcluded one is unreachable, hence broken); another claim is
    checked only when a step concludes it."""
    certs = [_cert("prop1:a", concludes=("prop1",))]
    results = {r.result: r for r in check_chains(certs)}
    assert set(results) == set(_registry.MAIN_RESULTS)
    assert results["prop1"].closed
    assert all(not r.closed for k, r in results.items() if k != "prop1")


# --- the Python layer says exactly what it checks ------------------------------------


def test_no_step_rests_on_an_uncertified_sympy_limit():
    """A limit computed by sympy.limit carries no certificate: no proof step calls
    it. Limits are certified with an explicit epsilon-N bound
    (certify_limit_inverse) or checked on stated points and labelled finite."""
    offenders = [str(p) for p in (THEORY_DIR / "_proofs").glob("*.py")
                 if re.search(r"\b(sp|sympy)\.limit\(", p.read_text())]
    assert offenders == []


def test_limit_checkers_can_fail():
    """certify_limit_inverse refuses a wrong target and a gap that is not r/var;
    check_limit_on_points refuses a gap that does not shrink and bad points."""
    from vistalab.theory._proofs._symbolic import certify_limit_inverse, check_limit_on_points

    nu = sp.Symbol("nu", positive=True)
    assert certify_limit_inverse((nu - 1) / nu, nu, 1).ok
    assert not certify_limit_inverse((nu - 1) / nu, nu, 2).ok
    assert not certify_limit_inverse(sp.log(nu) / nu, nu, 0).ok
    assert not certify_limit_inverse(1 / nu, sp.Symbol("t", real=True), 0).ok
    pts = [10**e for e in range(1, 9)]
    assert check_limit_on_points(sp.log(nu) / nu, nu, 0, pts).ok
    assert not check_limit_on_points(sp.log(nu) / nu, nu, 1, pts).ok  # gap grows to 1
    assert not check_limit_on_points(sp.sin(nu), nu, 0, pts).ok
    assert not check_limit_on_points(1 / nu, nu, 0, [10, 5]).ok


def test_pair_count_is_computed_not_typed():
    """App. C Step 3 for every n: the number of ordered pairs j != k is summed by
    sympy (a Kronecker delta over a symbolic range), not typed in as n(n-1); the
    step's source has no hand count, and the same machinery gives n(n-1) only when
    the diagonal is dropped."""
    import inspect

    src = inspect.getsource(get_step("prop2", "pair_count_combination").check)
    assert "summation" in src and "(nn - 1)" not in src and "range(" not in src
    assert run_step(get_step("prop2", "pair_count_combination")).passed
    a, b = sp.symbols("a b", integer=True, nonnegative=True)
    k = sp.Symbol("k", integer=True)
    with_diag = sp.summation(1 + 0 * sp.KroneckerDelta(1 + a, k), (k, 1, 1 + a + b))
    without = sp.summation(1 - sp.KroneckerDelta(1 + a, k), (k, 1, 1 + a + b))
    assert certify_identity(sp.simplify(without), a + b).ok
    assert not certify_identity(sp.simplify(with_diag), a + b).ok


def test_finite_chains_name_the_coq_theorems_covering_them():
    """Every main result whose Python chain has a finite link names the Coq
    theorems of Statements.v that prove its general case, and its summary says
    so; Proposition 2 and its tighter variant are covered by their Gaussian-channel
    theorems, which have the paper's scope (not by the weaker forms)."""
    from vistalab.theory._proofs import _formal

    certs = [_cert(s.key, premises=s.premises, concludes=s.concludes, generality=s.generality)
             for s in STEPS]
    text = (_formal.coq_source_dir() / "Statements.v").read_text()
    finite = 0
    for ch in check_chains(certs):
        if ch.result in _registry.MAIN_RESULTS and ch.generality != "all":
            finite += 1
            assert ch.coq, ch.result
            assert all(re.search(rf"^Theorem {t}\b", text, re.M) for t in ch.coq), ch.coq
            assert "general case stated in Coq as" in ch.detail, ch.detail
    assert finite >= 5
    scope = {m.theorem: m.scope for m in _formal.MAIN_THEOREMS}
    for result in ("prop2", "prop2-tight"):
        assert _formal.COQ_COVERAGE[result]
        assert all(scope[t] == "paper" for t in _formal.COQ_COVERAGE[result])
    listed = {m.theorem for m in _formal.MAIN_THEOREMS}
    assert {t for ts in _formal.COQ_COVERAGE.values() for t in ts} <= listed
