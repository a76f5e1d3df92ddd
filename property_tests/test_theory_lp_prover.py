"""The Shannon-type inequality prover (Yeung's ITIP method) used by the
``lp-shannon`` proof steps: it proves textbook inequalities with certificates
that re-check exactly, refuses false ones, and is sound on real distributions.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from vistalab.theory import (
    DomainError,
    conditional_independence,
    functional_dependence,
    independence,
    prove_shannon_inequality,
)
from vistalab.theory._proofs._lp import LinearEntropyExpr, parse_information_relation

TEXTBOOK = [
    ("I(X;Y) <= H(Y)", ()),
    ("I(X;Y) >= 0", ()),
    ("I(X;Y|Z) >= 0", ()),
    ("H(X,Y) <= H(X) + H(Y)", ()),
    ("H(X|Y,Z) <= H(X|Y)", ()),
    ("H(X,Y) = H(X) + H(Y|X)", ()),
    ("I(X;Y,Z) = I(X;Y) + I(X;Z|Y)", ()),
    # data processing: X - Y - Z
    ("I(X;Z) <= I(X;Y)", (conditional_independence("X", "Z", "Y"),)),
    # superadditivity under independence (Prop. 1, Step 2)
    ("I(A,B;R) >= I(A;R) + I(B;R)", (independence("A", "B"),)),
    # Fano's chain-rule skeleton (Lemma 1), inhomogeneous: H(E) <= 1
    ("H(J|Y,U) <= 1 + H(J|E,Y,U)", (functional_dependence("E", ("J", "Y", "U")), "H(E) <= 1")),
]

FALSE = [
    ("I(X;Y) <= I(X;Y|Z)", ()),  # fails for X = Y = Z
    ("I(X;Y|Z) <= I(X;Y)", ()),  # fails for Z = X xor Y
    ("H(X) <= I(X;R)", ()),  # fails for R constant
    ("I(X1,X2;R) >= I(X1;R) + I(X2;R)", ()),  # needs independence: fails for X1 = X2 = R
    ("H(X) + H(Y) <= H(X,Y)", ()),
    # Lemma 1 skeleton with the +1 dropped
    ("H(J|Y,U) <= H(J|E,Y,U)", (functional_dependence("E", ("J", "Y", "U")), "H(E) <= 1")),
]


def _replay_certificate(proof) -> bool:
    """Rebuild sum(multiplier * inequality) from the certificate's *labels* and
    compare it with the statement exactly: an independent check of the proof."""
    rel = parse_information_relation(proof.statement)
    given = [parse_information_relation(g) for g in proof.given]
    directions = {"": rel.expr}
    if rel.kind == "eq":
        directions["reverse:"] = -rel.expr
    for prefix, target in directions.items():
        acc = LinearEntropyExpr()
        slack = Fraction(0)
        for label, mult in proof.certificate:
            if not label.startswith(prefix) or (prefix == "" and label.startswith("reverse:")):
                continue
            body = label[len(prefix) :]
            if body == "constant slack":
                slack += mult
                continue
            if body.startswith("given["):
                g = given[int(body[6:-1])]
                if g.kind == "ge" and mult < 0:
                    return False
                acc = acc + g.expr.scale(mult)
                continue
            assert mult > 0
            if body.startswith("H(") and body.endswith("|rest)>=0"):
                var = body[2:-9]
                others = [v for v in proof.variables if v != var]
                acc = acc + LinearEntropyExpr.entropy([var], others).scale(mult)
            else:
                acc = acc + parse_information_relation(body).expr.scale(mult)
        acc = acc + LinearEntropyExpr.constant(slack)
        diff = target - acc
        if diff.terms or diff.const != 0:
            return False
    return True


@pytest.mark.parametrize("statement,given", TEXTBOOK)
def test_proves_textbook_inequalities_with_replayable_certificates(statement, given):
    """Prop. 1 Step 2, Lemma 1 / Theorem 1 part (A), and the textbook Shannon
    inequalities: each is proved and its certificate re-derives the statement."""
    proof = prove_shannon_inequality(statement, given=given)
    assert proof.proved, proof.detail
    assert proof.counterexample is None
    assert _replay_certificate(proof)


@pytest.mark.parametrize("statement,given", FALSE)
def test_refuses_false_statements(statement, given):
    """The prover must refuse statements that are not Shannon-type (false in
    general), returning a point of the Shannon outer bound that violates them."""
    proof = prove_shannon_inequality(statement, given=given)
    assert not proof.proved
    assert proof.certificate == ()
    assert proof.counterexample is not None
    assert "not Shannon-provable" in proof.detail


def _entropies(joint: np.ndarray, names: list[str]) -> dict[frozenset[str], float]:
    """Joint entropies (bits) of every non-empty subset of the axes of ``joint``."""
    out = {}
    for r in range(1, len(names) + 1):
        for sub in itertools.combinations(range(len(names)), r):
            axes = tuple(i for i in range(len(names)) if i not in sub)
            p = joint.sum(axis=axes).ravel()
            p = p[p > 0]
            out[frozenset(names[i] for i in sub)] = float(-(p * np.log2(p)).sum())
    return out


def _value(expr: LinearEntropyExpr, h: dict[frozenset[str], float]) -> float:
    return float(expr.const) + sum(float(c) * h[s] for s, c in expr.terms.items())


def test_false_statements_are_really_false_on_distributions():
    """Second method for the refusals: explicit distributions violating them
    (X = Y = Z bits; Z = X xor Y; R constant; X1 = X2 = R)."""
    bit = np.array([0.5, 0.5])
    copy3 = np.zeros((2, 2, 2))
    copy3[0, 0, 0] = copy3[1, 1, 1] = 0.5
    xor = np.zeros((2, 2, 2))
    for x, y in itertools.product(range(2), repeat=2):
        xor[x, y, x ^ y] = 0.25
    const_r = np.stack([bit, np.zeros(2)], axis=1)  # X uniform, R = 0
    cases = [
        ("I(X;Y) <= I(X;Y|Z)", copy3, ["X", "Y", "Z"]),
        ("I(X;Y|Z) <= I(X;Y)", xor, ["X", "Y", "Z"]),
        ("H(X) <= I(X;R)", const_r, ["X", "R"]),
        ("I(X1,X2;R) >= I(X1;R) + I(X2;R)", copy3, ["X1", "X2", "R"]),
    ]
    for statement, joint, names in cases:
        rel = parse_information_relation(statement)
        assert _value(rel.expr, _entropies(joint, names)) < -0.5, statement


@st.composite
def _joint_pmfs(draw, n_vars=3):
    shape = tuple(draw(st.integers(2, 3)) for _ in range(n_vars))
    size = int(np.prod(shape))
    w = np.array(draw(st.lists(st.floats(0, 1), min_size=size, max_size=size))) + 1e-9
    return (w / w.sum()).reshape(shape)


@given(_joint_pmfs())
def test_proved_inequalities_hold_on_random_distributions(joint):
    """Soundness of the unconstrained textbook proofs (Sec. Theory / App. B-D use
    them) on random joint laws of three variables (float, tol 1e-9)."""
    h = _entropies(joint, ["X", "Y", "Z"])
    for statement, constraints in TEXTBOOK:
        names = parse_information_relation(statement).expr.variables
        if constraints or not names <= {"X", "Y", "Z"}:
            continue
        rel = parse_information_relation(statement)
        v = _value(rel.expr, h)
        assert v >= -1e-9 if rel.kind == "ge" else abs(v) <= 1e-9, statement


@given(st.lists(st.integers(0, 3), min_size=9, max_size=9), st.integers(0, 2**16))
def test_nonnegative_combinations_of_elemental_inequalities_are_proved(weights, seed):
    """Completeness on the Shannon cone: any non-negative combination of the
    elemental inequalities of 3 variables is proved (App. B-D LP steps)."""
    rng = np.random.default_rng(seed)
    names = ["X", "Y", "Z"]
    elemental = [LinearEntropyExpr.entropy([v], [w for w in names if w != v]) for v in names]
    for a, b in itertools.combinations(names, 2):
        rest = [v for v in names if v not in (a, b)]
        for r in range(len(rest) + 1):
            for k in itertools.combinations(rest, r):
                elemental.append(LinearEntropyExpr.mutual_info([a], [b], k))
    assert len(elemental) == 9
    expr = LinearEntropyExpr()
    for w, e in zip(weights, elemental, strict=True):
        expr = expr + e.scale(w)
    if not expr.terms:
        return
    # Write it as "lhs >= rhs" by moving the negative coefficients across.
    pos = {s: c for s, c in expr.terms.items() if c > 0}
    neg = {s: -c for s, c in expr.terms.items() if c < 0}

    def show(terms):
        order = list(terms.items())
        rng.shuffle(order)
        return " + ".join(f"{c}*H({','.join(sorted(s))})" for s, c in order) or "0"

    statement = f"{show(pos)} >= {show(neg)}"
    proof = prove_shannon_inequality(statement)
    assert proof.proved, statement
    assert _replay_certificate(proof)


def test_tampered_certificate_fails_exact_recheck():
    """The exact re-check is what certifies (not the LP's word): perturbing one
    multiplier of a valid certificate makes it fail (Prop. 1 Step 2 LP)."""
    from vistalab.theory._proofs import _lp

    rel = parse_information_relation("I(A,B;R) >= I(A;R) + I(B;R)")
    cons = (parse_information_relation(independence("A", "B")),)
    space = _lp._EntropySpace(("A", "B", "R"))
    ok, items, _, _ = _lp._prove_direction(space, rel.expr, cons)
    assert ok
    # Rebuild the multiplier vector and perturb the first elemental multiplier.
    label_to_col = {lab: i for i, lab in enumerate(space.labels)}
    fx = [Fraction(0)] * (len(space.labels) + 2)
    for label, mult in items:
        if label in label_to_col:
            fx[label_to_col[label]] = mult
        elif label == "given[0]":
            fx[len(space.labels) + (0 if mult > 0 else 1)] = abs(mult)
    eqs = [(0, space.vector(cons[0].expr), cons[0].expr.const)]
    b = space.vector(rel.expr)
    assert _lp._check_exact(space, b, rel.expr.const, eqs, [], fx)[0]
    first = next(i for i, v in enumerate(fx) if v)
    fx[first] += Fraction(1, 1000)
    assert not _lp._check_exact(space, b, rel.expr.const, eqs, [], fx)[0]


def test_constant_bound_matters():
    """Lemma 1 skeleton (App. D (A)): with H(E) <= 1 the +1 suffices; with a
    weaker constant it does not (the LP tracks constants, not just the cone)."""
    given = (functional_dependence("E", ("J", "Y", "U")), "H(E) <= 1")
    assert prove_shannon_inequality("H(J|Y,U) <= 1 + H(J|E,Y,U)", given=given).proved
    assert not prove_shannon_inequality("H(J|Y,U) <= 1/2 + H(J|E,Y,U)", given=given).proved
    assert prove_shannon_inequality("H(J|Y,U) <= 3/2 + H(J|E,Y,U)", given=given).proved


@pytest.mark.parametrize(
    "statement,match",
    [
        ("I(X;Y) < H(X)", "malformed|only H"),
        ("I(X;Y) H(X)", "one relation"),
        ("H(X) >= 0 junk", "trailing|malformed"),
        ("I(X Y) >= 0", "malformed"),
        ("3 >= 1", "at least one random variable"),
        ("H(" + ",".join(f"V{i}" for i in range(10)) + ") >= 0", "at most 9 random variables"),
    ],
)
def test_bad_statements_raise_domain_error(statement, match):
    """Door validation of the prover's input language (DESIGN.md rule 5/6)."""
    with pytest.raises(DomainError, match=match):
        prove_shannon_inequality(statement)


def test_non_string_statement_rejected():
    """The statement must be text (DESIGN.md rule 6: name parameter and fix)."""
    with pytest.raises(DomainError, match="`statement` must be a string"):
        prove_shannon_inequality(42)  # type: ignore[arg-type]


def test_constraint_builders_text():
    """The constraint helpers produce the documented relation text."""
    assert independence("X1", "X2", "X3") == "H(X1,X2,X3) = H(X1) + H(X2) + H(X3)"
    assert functional_dependence("E", ("J", "Y")) == "H(E|J,Y) = 0"
    assert conditional_independence("X", "Z", "Y") == "I(X;Z|Y) = 0"
    with pytest.raises(DomainError, match="at least two groups"):
        independence("X")


def test_equality_statement_needs_both_directions():
    """An '=' statement is proved only if both directions are (Prop. 1 chain rule)."""
    assert prove_shannon_inequality("H(X,Y) = H(X) + H(Y|X)").proved
    # H(X) + H(Y) >= H(X,Y) holds, the reverse needs independence.
    proof = prove_shannon_inequality("H(X) + H(Y) = H(X,Y)")
    assert not proof.proved
    assert "(reverse direction)" in proof.detail
    assert prove_shannon_inequality(
        "H(X) + H(Y) = H(X,Y)", given=(independence("X", "Y"),)
    ).proved
