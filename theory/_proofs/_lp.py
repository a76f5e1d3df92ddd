"""A prover of Shannon-type information inequalities (Yeung's ITIP method).

An inequality over joint entropies is *Shannon-provable* when it is a
non-negative combination of the elemental inequalities plus the given
constraints. We search for that combination with a linear programme (HiGHS)
and then re-check the rounded multipliers in exact rational arithmetic, so the
answer rests on a certificate anyone can verify, not on the LP's word.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from vistalab._core import PlainRecord

from .._errors import DomainError
from .._validate import as_name_list

__all__ = [
    "LinearEntropyExpr",
    "ShannonProof",
    "parse_information_relation",
    "prove_shannon_inequality",
    "independence",
    "functional_dependence",
    "conditional_independence",
    "MAX_VARIABLES",
]

#: The LP has 2^n - 1 columns and n + C(n,2) 2^(n-2) elemental rows; beyond
#: this many random variables the prover gets slow for interactive use.
MAX_VARIABLES = 9

_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_IDENT = re.compile(_NAME)
_TOKEN = re.compile(
    r"\s*(?:(?P<num>\d+(?:\.\d+)?(?:/\d+)?)|(?P<func>[HI])\s*\(|(?P<op><=|>=|==|=|[-+*(),;|)])"
    rf"|(?P<name>{_NAME}))"
)


@dataclass(frozen=True)
class LinearEntropyExpr:
    """A linear combination of joint entropies plus a constant.

    Attributes
    ----------
    terms : Mapping[frozenset[str], Fraction]
        Coefficient of the joint entropy h(S) of each non-empty variable set S.
    const : Fraction
        Constant term (bits).
    """

    terms: Mapping[frozenset[str], Fraction] = field(default_factory=dict)
    const: Fraction = Fraction(0)

    @staticmethod
    def entropy(variables: Iterable[str], given: Iterable[str] = ()) -> LinearEntropyExpr:
        """H(variables | given) = h(variables + given) - h(given)."""
        a, c = frozenset(variables), frozenset(given)
        return LinearEntropyExpr._h(a | c) - LinearEntropyExpr._h(c)

    @staticmethod
    def mutual_info(
        a: Iterable[str], b: Iterable[str], given: Iterable[str] = ()
    ) -> LinearEntropyExpr:
        """I(a; b | given) = h(a c) + h(b c) - h(a b c) - h(c)."""
        sa, sb, sc = frozenset(a), frozenset(b), frozenset(given)
        h = LinearEntropyExpr._h
        return h(sa | sc) + h(sb | sc) - h(sa | sb | sc) - h(sc)

    @staticmethod
    def constant(value: Fraction | int) -> LinearEntropyExpr:
        return LinearEntropyExpr({}, Fraction(value))

    @staticmethod
    def _h(s: frozenset[str]) -> LinearEntropyExpr:
        # h(empty set) = 0 by convention, so it contributes nothing.
        return LinearEntropyExpr({s: Fraction(1)} if s else {})

    def __add__(self, other: LinearEntropyExpr) -> LinearEntropyExpr:
        terms = dict(self.terms)
        for s, c in other.terms.items():
            terms[s] = terms.get(s, Fraction(0)) + c
        kept = {s: c for s, c in terms.items() if c != 0}
        return LinearEntropyExpr(kept, self.const + other.const)

    def __neg__(self) -> LinearEntropyExpr:
        return LinearEntropyExpr({s: -c for s, c in self.terms.items()}, -self.const)

    def __sub__(self, other: LinearEntropyExpr) -> LinearEntropyExpr:
        return self + (-other)

    def scale(self, factor: Fraction | int) -> LinearEntropyExpr:
        f = Fraction(factor)
        if f == 0:
            return LinearEntropyExpr()
        return LinearEntropyExpr({s: c * f for s, c in self.terms.items()}, self.const * f)

    @property
    def variables(self) -> frozenset[str]:
        out: frozenset[str] = frozenset()
        for s in self.terms:
            out |= s
        return out

    def __str__(self) -> str:
        parts = []
        for s, c in sorted(self.terms.items(), key=lambda kv: (len(kv[0]), sorted(kv[0]))):
            parts.append(f"{_fmt_coef(c)}h({','.join(sorted(s))})")
        if self.const or not parts:
            parts.append(str(self.const))
        return " + ".join(parts).replace("+ -", "- ")


def _fmt_coef(c: Fraction) -> str:
    if c == 1:
        return ""
    if c == -1:
        return "-"
    return f"{c}*"


@dataclass(frozen=True)
class _Relation:
    """``expr >= 0`` (kind "ge") or ``expr == 0`` (kind "eq")."""

    expr: LinearEntropyExpr
    kind: str
    text: str
    mentioned: frozenset[str] = frozenset()


def parse_information_relation(text: str) -> _Relation:
    """Parse ``"I(X;Y) <= I(X;Y|Z)"``-style text into ``expr >= 0`` or ``expr == 0``.

    Grammar: a sum of terms ``[number[*]] H(A,B|C)`` / ``I(A;B|C)`` / number,
    then one of ``<=``, ``>=``, ``=`` (``==``), then another sum. Variable
    names are identifiers; commas group several variables into one.
    """
    if not isinstance(text, str):
        raise DomainError(
            "statement", text, "must be a string such as 'I(X;Y) <= H(X)'", "pass text"
        )
    tokens = _tokenize(text)
    parser = _Parser(tokens, text)
    lhs = parser.sum()
    nxt = parser.peek()
    if nxt is None or nxt[0] != "op" or nxt[1] not in {"<=", ">=", "=", "=="}:
        raise DomainError(
            "statement", text, "must contain one relation <=, >= or =", "write e.g. 'H(X) >= 0'"
        )
    rel = parser.take("op")
    rhs = parser.sum()
    if parser.pos != len(tokens):
        raise DomainError(
            "statement", text, "has trailing text after the right-hand side", "remove it"
        )
    seen = frozenset(parser.mentioned)
    if rel == "<=":
        return _Relation(rhs - lhs, "ge", text, seen)
    if rel == ">=":
        return _Relation(lhs - rhs, "ge", text, seen)
    return _Relation(lhs - rhs, "eq", text, seen)


def _tokenize(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    stripped = text.rstrip()
    while pos < len(stripped):
        m = _TOKEN.match(stripped, pos)
        if not m or m.end() == pos:
            raise DomainError(
                "statement",
                text,
                f"must use only H(..), I(..;..), numbers, + - * and a relation (bad text at "
                f"position {pos}: {stripped[pos:pos + 10]!r})",
                "fix the expression",
            )
        kind = m.lastgroup or ""
        out.append((kind, m.group(kind)))
        pos = m.end()
    return out


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]], text: str) -> None:
        self.tokens, self.text, self.pos = tokens, text, 0
        # Variables named anywhere, even if their terms cancel (chain-rule identities).
        self.mentioned: set[str] = set()

    def _bad(self, what: str) -> DomainError:
        return DomainError("statement", self.text, f"is malformed: {what}", "fix the expression")

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, kind: str, value: str | None = None) -> str:
        tok = self.peek()
        if tok is None or tok[0] != kind or (value is not None and tok[1] != value):
            raise self._bad(f"expected {value or kind} at token {self.pos}")
        self.pos += 1
        return tok[1]

    def sum(self) -> LinearEntropyExpr:
        sign = 1
        tok = self.peek()
        if tok and tok[1] in "+-" and tok[0] == "op":
            sign = -1 if tok[1] == "-" else 1
            self.pos += 1
        acc = self.term().scale(sign)
        while (tok := self.peek()) and tok[0] == "op" and tok[1] in {"+", "-"}:
            self.pos += 1
            t = self.term()
            acc = acc + t if tok[1] == "+" else acc - t
        return acc

    def term(self) -> LinearEntropyExpr:
        tok = self.peek()
        if tok is None:
            raise self._bad("expression ends too early")
        coef = Fraction(1)
        if tok[0] == "num":
            self.pos += 1
            coef = Fraction(tok[1])
            nxt = self.peek()
            if nxt and nxt == ("op", "*"):
                self.pos += 1
            elif not (nxt and nxt[0] == "func"):
                return LinearEntropyExpr.constant(coef)
        func = self.take("func")
        if func == "H":
            a = self.varlist()
            given = self.varlist() if self._maybe("|") else []
            self.take("op", ")")
            return LinearEntropyExpr.entropy(a, given).scale(coef)
        a = self.varlist()
        self.take("op", ";")
        b = self.varlist()
        given = self.varlist() if self._maybe("|") else []
        self.take("op", ")")
        return LinearEntropyExpr.mutual_info(a, b, given).scale(coef)

    def _maybe(self, op: str) -> bool:
        if self.peek() == ("op", op):
            self.pos += 1
            return True
        return False

    def varlist(self) -> list[str]:
        names = [self.take("name")]
        while self._maybe(","):
            names.append(self.take("name"))
        self.mentioned.update(names)
        return names


def independence(*groups: str | Sequence[str]) -> str:
    """Constraint text: the groups are mutually independent, h(all) = sum h(group).

    Parameters
    ----------
    *groups : str or sequence of str
        Two or more random variables or groups of them.

    Returns
    -------
    str
        The constraint, in the syntax ``prove_shannon_inequality(given=...)`` reads.

    Examples
    --------
    >>> from vistalab.theory import prove_shannon_inequality
    >>> prove_shannon_inequality("I(A;B) <= 0", given=[independence("A", "B")]).proved
    True"""
    gs = [_group(g, "groups") for g in groups]
    if len(gs) < 2:
        raise DomainError("groups", groups, "must name at least two groups", "pass two or more")
    rhs = " + ".join(f"H({g})" for g in gs)
    return f"H({','.join(gs)}) = {rhs}"


def functional_dependence(target: str | Sequence[str], on: str | Sequence[str]) -> str:
    """Constraint text: ``target`` is a function of ``on``, H(target | on) = 0.

    Parameters
    ----------
    target : str or sequence of str
        The variables that are determined.
    on : str or sequence of str
        The variables they are a function of.

    Returns
    -------
    str
        The constraint, in the syntax ``prove_shannon_inequality(given=...)`` reads."""
    return f"H({_group(target, 'target')}|{_group(on, 'on')}) = 0"


def conditional_independence(
    a: str | Sequence[str], b: str | Sequence[str], given: str | Sequence[str]
) -> str:
    """Constraint text: I(a; b | given) = 0 (a Markov chain a - given - b).

    Parameters
    ----------
    a, b : str or sequence of str
        The two conditionally independent variables or groups.
    given : str or sequence of str
        The conditioning variables.

    Returns
    -------
    str
        The constraint, in the syntax ``prove_shannon_inequality(given=...)`` reads."""
    return f"I({_group(a, 'a')};{_group(b, 'b')}|{_group(given, 'given')}) = 0"


def _group(g: Any, name: str) -> str:
    """One variable name or a sequence of them, as comma-joined text."""
    names = as_name_list(name, g, fix="pass a variable name such as 'X' or a list of names")
    for v in names:
        if not _IDENT.fullmatch(v):
            raise DomainError(name, g, "must contain identifiers such as 'X1' or 'R_t'",
                              "use letters, digits and underscores, starting with a letter")
    return ",".join(names)


def _prove_iv(given: Any, variables: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``given`` and ``variables`` as tuples of strings (one string is refused:
    it would be read character by character)."""
    if isinstance(given, str) or not isinstance(given, (list, tuple)):
        raise DomainError("given", given, "must be a list or tuple of constraint strings",
                          "wrap one constraint in a list: given=['H(E) <= 1']")
    for i, g in enumerate(given):
        if not isinstance(g, str):
            raise DomainError("given", given, "must contain only strings",
                              f"item {i} is {type(g).__name__}; pass constraint text")
    if variables is None:
        return tuple(given), ()
    if isinstance(variables, str):
        raise DomainError("variables", variables, "must be a list or tuple of names",
                          f"wrap it: variables=[{variables!r}]")
    return tuple(given), tuple(_group(v, "variables") for v in
                               as_name_list("variables", variables))


def _parse_given(i: int, text: str) -> _Relation:
    try:
        return parse_information_relation(text)
    except DomainError as exc:
        raise DomainError("given", text, exc.rule, exc.fix,
                          context=f"constraint {i} of given") from None


@dataclass(frozen=True)
class ShannonProof(PlainRecord):
    """Outcome of :func:`prove_shannon_inequality`.

    Attributes
    ----------
    statement : str
        The inequality as given.
    given : tuple[str, ...]
        The constraints as given.
    proved : bool
        True only if an exact rational certificate was found and re-checked.
    variables : tuple[str, ...]
        The random variables, in the order used for the entropy vector.
    certificate : tuple[tuple[str, Fraction], ...]
        Non-zero multipliers: each elemental inequality (``"I(X;Y|Z)>=0"``,
        ``"H(X|rest)>=0"``) or constraint (``"given[i]"``, any sign for
        equalities, >= 0 for inequalities) with its rational weight, such that
        the statement's slack equals their weighted sum plus a non-negative
        constant. For an equality statement both directions are listed, the
        reverse one prefixed with ``"reverse:"``.
    counterexample : tuple[tuple[str, float], ...] | None
        When not proved: a point of the Shannon outer bound (satisfying all
        constraints) where the statement fails, as (``"h(X,Y)"``, value) pairs.
        It shows the statement is not *Shannon-type*; it is not always a real
        distribution.
    detail : str
        One-line human explanation.
    """

    statement: str
    given: tuple[str, ...]
    proved: bool
    variables: tuple[str, ...]
    certificate: tuple[tuple[str, Fraction], ...]
    counterexample: tuple[tuple[str, float], ...] | None
    detail: str


def prove_shannon_inequality(
    statement: str, *, given: Sequence[str] = (), variables: Sequence[str] | None = None
) -> ShannonProof:
    """Decide whether ``statement`` follows from the Shannon inequalities and ``given``.

    Parameters
    ----------
    statement : str
        A linear information relation, e.g. ``"I(X;Y) <= H(Y)"``,
        ``"H(X1,X2|R) <= H(X1|R) + H(X2|R)"`` or ``"I(A,B;R) >= I(A;R) + I(B;R)"``.
        ``=`` statements are proved in both directions. Constants are allowed
        (e.g. ``"H(J|Y) <= 1 + H(J|E,Y)"``), in bits.
    given : sequence of str
        Constraints in the same language (``=``, ``<=`` or ``>=``), e.g.
        :func:`independence` ``("X1", "X2")`` or ``"H(E) <= 1"``.
    variables : sequence of str, optional
        Extra variables to include in the entropy space (those mentioned are
        always included).

    Returns
    -------
    ShannonProof
        ``proved`` is True iff an exact rational certificate was re-verified.

    Notes
    -----
    Method: with entropy vector h indexed by the non-empty subsets of the
    variables, the elemental inequalities ``h(N) - h(N-i) >= 0`` and
    ``I(i;j|K) >= 0`` generate the Shannon cone. The statement
    ``b.h + b0 >= 0`` is provable iff there are multipliers ``y >= 0``
    (elemental), ``z`` (equalities), ``w >= 0`` (inequalities) with
    ``b = G'y + A'z + C'w`` and ``b0 - a0.z - c0.w >= 0`` (Farkas). HiGHS
    finds such multipliers (minimising their l1 norm gives a sparse vertex);
    they are rounded to small-denominator fractions and the identity is
    re-checked exactly. "Not proved" means no Shannon-type proof exists
    (the statement may still be a non-Shannon inequality, or false).
    """
    given, variables = _prove_iv(given, variables)
    rel = parse_information_relation(statement)
    cons = tuple(_parse_given(i, g) for i, g in enumerate(given))
    names: set[str] = set(rel.mentioned)
    for c in cons:
        names |= c.mentioned
    names |= set(variables)
    if not names:
        raise DomainError(
            "statement", statement, "must mention at least one random variable", "add H(...) terms"
        )
    if len(names) > MAX_VARIABLES:
        raise DomainError(
            "statement",
            statement,
            f"must involve at most {MAX_VARIABLES} random variables (got {len(names)})",
            "group variables (e.g. treat X1..X_{N-1} as one variable)",
        )
    order = tuple(sorted(names))
    space = _EntropySpace(order)
    directions = [("", rel.expr)] if rel.kind == "ge" else [("", rel.expr), ("reverse:", -rel.expr)]
    cert: list[tuple[str, Fraction]] = []
    for prefix, expr in directions:
        ok, items, counter, why = _prove_direction(space, expr, cons)
        if not ok:
            return ShannonProof(
                statement, tuple(given), False, order, (), counter,
                f"not Shannon-provable{' (reverse direction)' if prefix else ''}: {why}",
            )
        cert.extend((prefix + k, v) for k, v in items)
    n_terms = len(cert)
    return ShannonProof(
        statement, tuple(given), True, order, tuple(cert), None,
        f"proved: exact rational certificate with {n_terms} multipliers over "
        f"{len(space.elemental)} elemental inequalities in {len(order)} variables",
    )


class _EntropySpace:
    """Columns = non-empty subsets (bitmask - 1); rows = elemental inequalities."""

    def __init__(self, order: tuple[str, ...]) -> None:
        self.order = order
        self.n = len(order)
        self.index = {v: i for i, v in enumerate(order)}
        self.dim = (1 << self.n) - 1
        full = self.dim
        rows: list[dict[int, int]] = []
        labels: list[str] = []
        for i in range(self.n):
            rest = full & ~(1 << i)
            row = {full: 1}
            if rest:
                row[rest] = row.get(rest, 0) - 1
            rows.append(row)
            labels.append(f"H({order[i]}|rest)>=0")
        for i, j in itertools.combinations(range(self.n), 2):
            others = [b for b in range(self.n) if b not in (i, j)]
            for r in range(len(others) + 1):
                for ks in itertools.combinations(others, r):
                    k = sum(1 << b for b in ks)
                    irow: dict[int, int] = {}
                    for mask, coef in ((k | 1 << i, 1), (k | 1 << j, 1), (k | 1 << i | 1 << j, -1),
                                       (k, -1)):
                        if mask:
                            irow[mask] = irow.get(mask, 0) + coef
                    rows.append(irow)
                    given = ",".join(order[b] for b in ks)
                    labels.append(f"I({order[i]};{order[j]}{'|' + given if given else ''})>=0")
        self.elemental = rows
        self.labels = labels

    def vector(self, expr: LinearEntropyExpr) -> dict[int, Fraction]:
        out: dict[int, Fraction] = {}
        for s, c in expr.terms.items():
            mask = sum(1 << self.index[v] for v in s)
            out[mask] = out.get(mask, Fraction(0)) + c
        return {m: c for m, c in out.items() if c != 0}

    def mask_label(self, mask: int) -> str:
        return "h(" + ",".join(v for i, v in enumerate(self.order) if mask >> i & 1) + ")"


def _prove_direction(
    space: _EntropySpace, expr: LinearEntropyExpr, cons: tuple[_Relation, ...]
) -> tuple[bool, list[tuple[str, Fraction]], tuple[tuple[str, float], ...] | None, str]:
    from scipy.optimize import linprog

    b = space.vector(expr)
    b0 = expr.const
    eqs = [(i, space.vector(c.expr), c.expr.const) for i, c in enumerate(cons) if c.kind == "eq"]
    ges = [(i, space.vector(c.expr), c.expr.const) for i, c in enumerate(cons) if c.kind == "ge"]
    n_el, n_eq, n_ge = len(space.elemental), len(eqs), len(ges)
    # Unknowns: y (elemental, >=0), z+ and z- (equalities, >=0), w (inequalities, >=0).
    n_var = n_el + 2 * n_eq + n_ge
    a_eq = np.zeros((space.dim, n_var))
    for col, row in enumerate(space.elemental):
        for emask, ecoef in row.items():
            a_eq[emask - 1, col] += ecoef
    for t, (_, vec, _) in enumerate(eqs):
        for mask, coef in vec.items():
            a_eq[mask - 1, n_el + t] += float(coef)
            a_eq[mask - 1, n_el + n_eq + t] -= float(coef)
    for t, (_, vec, _) in enumerate(ges):
        for mask, coef in vec.items():
            a_eq[mask - 1, n_el + 2 * n_eq + t] += float(coef)
    b_eq = np.zeros(space.dim)
    for mask, coef in b.items():
        b_eq[mask - 1] = float(coef)
    # Constant part: a0.z + c0.w <= b0  (so the leftover constant is >= 0).
    const_row = np.zeros(n_var)
    for t, (_, _, a0) in enumerate(eqs):
        const_row[n_el + t] = float(a0)
        const_row[n_el + n_eq + t] = -float(a0)
    for t, (_, _, c0) in enumerate(ges):
        const_row[n_el + 2 * n_eq + t] = float(c0)
    res = linprog(
        c=np.ones(n_var),
        A_ub=const_row[None, :],
        b_ub=np.array([float(b0)]),
        A_eq=a_eq,
        b_eq=b_eq,
        bounds=(0, None),
        method="highs",
    )
    if res.status != 0:
        counter, why = _counterexample(space, b, b0, eqs, ges)
        return False, [], counter, why
    x = res.x
    for limit in (1, 2, 6, 12, 60, 360, 2520, 10**4, 10**6):
        fx = [_round(v, limit) for v in x]
        ok, items = _check_exact(space, b, b0, eqs, ges, fx)
        if ok:
            return True, items, None, ""
    return False, [], None, "the LP found a floating-point certificate that failed exact re-check"


def _round(v: float, limit: int) -> Fraction:
    if abs(v) < 1e-9:
        return Fraction(0)
    return Fraction(v).limit_denominator(limit)


def _check_exact(
    space: _EntropySpace,
    b: dict[int, Fraction],
    b0: Fraction,
    eqs: list[tuple[int, dict[int, Fraction], Fraction]],
    ges: list[tuple[int, dict[int, Fraction], Fraction]],
    fx: list[Fraction],
) -> tuple[bool, list[tuple[str, Fraction]]]:
    """Exact re-check: b == G'y + A'z + C'w, y,w >= 0, b0 - a0.z - c0.w >= 0."""
    n_el, n_eq = len(space.elemental), len(eqs)
    if any(v < 0 for v in fx):
        return False, []
    acc: dict[int, Fraction] = {}
    items: list[tuple[str, Fraction]] = []
    for col, row in enumerate(space.elemental):
        y = fx[col]
        if y:
            items.append((space.labels[col], y))
            for emask, ecoef in row.items():
                acc[emask] = acc.get(emask, Fraction(0)) + y * ecoef
    leftover = b0
    for t, (idx, vec, a0) in enumerate(eqs):
        z = fx[n_el + t] - fx[n_el + n_eq + t]
        if z:
            items.append((f"given[{idx}]", z))
            for mask, coef in vec.items():
                acc[mask] = acc.get(mask, Fraction(0)) + z * coef
            leftover -= z * a0
    for t, (idx, vec, c0) in enumerate(ges):
        w = fx[n_el + 2 * n_eq + t]
        if w:
            items.append((f"given[{idx}]", w))
            for mask, coef in vec.items():
                acc[mask] = acc.get(mask, Fraction(0)) + w * coef
            leftover -= w * c0
    if leftover < 0:
        return False, []
    keys = set(acc) | set(b)
    if any(acc.get(k, Fraction(0)) != b.get(k, Fraction(0)) for k in keys):
        return False, []
    if leftover:
        items.append(("constant slack", leftover))
    return True, items


def _counterexample(
    space: _EntropySpace,
    b: dict[int, Fraction],
    b0: Fraction,
    eqs: list[tuple[int, dict[int, Fraction], Fraction]],
    ges: list[tuple[int, dict[int, Fraction], Fraction]],
) -> tuple[tuple[tuple[str, float], ...] | None, str]:
    """A point of the constrained Shannon outer bound where the statement fails."""
    from scipy.optimize import linprog

    dim = space.dim
    rows_ub: list[np.ndarray] = []
    rhs_ub: list[float] = []
    for row in space.elemental:  # -g.h <= 0
        r = np.zeros(dim)
        for emask, ecoef in row.items():
            r[emask - 1] -= ecoef
        rows_ub.append(r)
        rhs_ub.append(0.0)
    for _, vec, c0 in ges:  # -(c.h) <= c0
        r = np.zeros(dim)
        for mask, coef in vec.items():
            r[mask - 1] -= float(coef)
        rows_ub.append(r)
        rhs_ub.append(float(c0))
    homogeneous = b0 == 0 and all(c == 0 for _, _, c in eqs) and all(c == 0 for _, _, c in ges)
    # A cone needs a normalisation to make the LP bounded; h(N) bounds every h(S).
    cap = 1.0 if homogeneous else 1e3 * (1 + max([abs(float(c)) for *_, c in eqs + ges] + [0.0]))
    top = np.zeros(dim)
    top[dim - 1] = 1.0
    rows_ub.append(top)
    rhs_ub.append(cap)
    a_eq = np.zeros((max(len(eqs), 1), dim))
    b_eq = np.zeros(max(len(eqs), 1))
    for t, (_, vec, a0) in enumerate(eqs):
        for mask, coef in vec.items():
            a_eq[t, mask - 1] += float(coef)
        b_eq[t] = -float(a0)
    obj = np.zeros(dim)
    for mask, coef in b.items():
        obj[mask - 1] = float(coef)
    res = linprog(
        c=obj,
        A_ub=np.array(rows_ub),
        b_ub=np.array(rhs_ub),
        A_eq=a_eq,
        b_eq=b_eq,
        bounds=(None, None),
        method="highs",
    )
    if res.status == 2:
        return None, "the constraints themselves are infeasible"
    if res.status != 0:
        return None, f"no certificate exists (LP status {res.status}: {res.message})"
    value = float(res.fun) + float(b0)
    point = tuple(
        (space.mask_label(m), float(round(res.x[m - 1], 9)))
        for m in range(1, dim + 1)
        if abs(res.x[m - 1]) > 1e-9
    )
    return point, (
        f"no certificate exists; a Shannon-cone point satisfying the constraints gives "
        f"slack {value:.6g} < 0"
    )
