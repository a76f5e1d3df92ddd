"""Symbolic certifiers: identities proved under the symbols' stated
assumptions, and non-negativity certificates that an independent structural
check re-verifies.

Soundness rules:

* No rewrite is ever forced: ``expand_log`` and ``logcombine`` run without
  their ``force`` option, so log(x*y) splits only when sympy knows x, y > 0 from the
  declared assumptions. sympy's numeric fallbacks (``Expr.equals`` random
  sampling) are never used to conclude.
* Both sides of an identity must be defined on the whole stated domain: every
  denominator provably non-zero and every log argument provably non-zero under
  the assumptions (so x/x = 1 for a real x that may be 0 is refused; write it
  with ``evaluate=False`` or as a string, since sympy cancels x/x on creation).
* When no symbolic reduction reaches 0, the difference is decided as a
  polynomial identity by exact rational evaluation: non-polynomial
  sub-expressions (logs, exps, radicals...) become fresh independent
  variables, the difference is put over one denominator, and its numerator p,
  of degree at most d_i in variable i, is evaluated at every point of the
  grid {0..d_1} x ... x {0..d_k}. A polynomial with deg_{x_i} p <= d_i that
  vanishes on a product grid S_1 x ... x S_k with |S_i| = d_i + 1 is the zero
  polynomial (induction on k: each coefficient polynomial in x_1..x_{k-1}
  vanishes on the smaller grid; Alon's Combinatorial Nullstellensatz, Lemma
  2.1). Zero as a polynomial in independent variables implies the identity;
  a non-zero grid value refuses it.
* A non-negativity claim passes only with a certificate: an expression that
  equals the target (re-checked as an identity, above) and is *manifestly*
  non-negative by structure alone: non-negative rationals, symbols declared
  positive/non-negative, pi and e, even powers of real expressions, positive
  bases to real powers, exp of real expressions, log(a) with a - 1 manifestly
  non-negative, min of such terms, max with one such term, finite sums over a
  non-empty-or-empty index range, and sums and products of such terms
  (:func:`manifest_sign`).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sympy as sp

from .._errors import DomainError
from ._registry import Outcome

__all__ = [
    "ZeroProof",
    "prove_zero",
    "is_zero",
    "parse",
    "defined_on_domain",
    "polynomial_zero_by_evaluation",
    "manifest_sign",
    "nonneg_certificate",
    "certify_identity",
    "certify_identities",
    "certify_nonneg",
    "certify_nonneg_combination",
    "certify_nonneg_from_facts",
    "certify_sign",
    "certify_limit_inverse",
    "check_limit_on_points",
]

#: Largest evaluation grid the polynomial fallback will visit.
MAX_GRID_POINTS = 4096


@dataclass(frozen=True)
class ZeroProof:
    """How (or whether) an expression was shown to be identically 0.

    Attributes
    ----------
    ok : bool
        Whether the expression is identically zero on the stated domain.
    method : str
        The reduction that reached 0, the evaluation bound used, or why not.
    """

    ok: bool
    method: str


def parse(text: str, symbols: Sequence[sp.Symbol] = ()) -> sp.Expr:
    """Parse ``text`` without automatic simplification (x/x stays x/x).

    Names in ``symbols`` keep their declared assumptions; other names become
    plain (complex) symbols.
    """
    local = {s.name: s for s in symbols}
    return sp.parse_expr(text, local_dict=local, evaluate=False)


def _log_normalized(e: sp.Expr) -> sp.Expr:
    """Put every log argument over a common denominator and factor it, so
    ``log(1 + (a-b)^2/(4ab))`` and ``2 log(a+b) - log(4ab)`` can meet after
    ``expand_log`` (an equality-preserving rewrite of the argument only)."""
    return e.replace(
        lambda x: isinstance(x, sp.log), lambda x: sp.log(sp.factor(sp.together(x.args[0])))
    )


# Each reduction is an equality under the symbols' assumptions (nothing forced).
_REDUCTIONS: tuple[tuple[str, Any], ...] = (
    ("expand", lambda e: sp.expand(e)),
    ("expand_log", lambda e: sp.expand(sp.expand_log(e))),
    (
        "expand_log of factored log arguments",
        lambda e: sp.expand(sp.expand_log(_log_normalized(e))),
    ),
    ("cancel", lambda e: sp.cancel(sp.together(sp.expand(sp.expand_log(e))))),
    ("simplify", lambda e: sp.simplify(e)),
    ("logcombine + simplify", lambda e: sp.simplify(sp.expand_log(sp.logcombine(e)))),
)


def defined_on_domain(expr: sp.Expr) -> str | None:
    """None when every denominator and log argument of ``expr`` is provably
    non-zero under the symbols' assumptions, else the offending sub-expression."""
    for node in sp.preorder_traversal(expr):
        if isinstance(node, sp.Pow) and node.exp.is_negative and node.base.is_zero is not False:
            return f"denominator {node.base} may be 0"
        if isinstance(node, sp.log) and node.args[0].is_zero is not False:
            return f"log argument {node.args[0]} may be 0"
    return None


def _atomize(expr: sp.Expr) -> tuple[sp.Expr, dict[sp.Expr, sp.Symbol]]:
    """Replace every maximal non-rational-function sub-expression by a fresh
    symbol (the same sub-expression always by the same symbol)."""
    table: dict[sp.Expr, sp.Symbol] = {}

    def walk(e: sp.Expr) -> sp.Expr:
        if e.is_Number or e.is_Symbol:
            return e
        if isinstance(e, (sp.Add, sp.Mul)):
            return e.func(*(walk(a) for a in e.args))
        if isinstance(e, sp.Pow) and e.exp.is_Integer:
            return sp.Pow(walk(e.base), e.exp)
        if e not in table:
            table[e] = sp.Symbol(f"_atom{len(table)}")
        return table[e]

    return walk(expr), table


def _degree_bound(e: sp.Expr, v: sp.Symbol) -> int:
    """An upper bound on deg_v of a polynomial expression, read off its tree
    without expanding it (raises ValueError when ``e`` is not a polynomial)."""
    if e.is_Number:
        return 0
    if e.is_Symbol:
        return int(e == v)
    if isinstance(e, sp.Add):
        return max(_degree_bound(a, v) for a in e.args)
    if isinstance(e, sp.Mul):
        return sum(_degree_bound(a, v) for a in e.args)
    if isinstance(e, sp.Pow) and e.exp.is_Integer and e.exp >= 0:
        return int(e.exp) * _degree_bound(e.base, v)
    raise ValueError(f"not a polynomial: {e}")


def polynomial_zero_by_evaluation(expr: sp.Expr) -> ZeroProof:
    """Decide ``expr == 0`` as a polynomial identity by exact evaluation.

    Non-polynomial sub-expressions become independent variables, ``expr`` is
    put over one denominator, and the numerator is evaluated exactly on the
    grid prod_i {0..d_i} with d_i a bound on its degree in variable i
    (see the module docstring for why that grid decides it).
    """
    atomized, table = _atomize(sp.sympify(expr))
    num, _ = sp.fraction(sp.together(atomized))
    variables = sorted(num.free_symbols, key=lambda s: s.name)
    try:
        degrees = [_degree_bound(num, v) for v in variables]
    except ValueError as exc:
        return ZeroProof(False, f"evaluation fallback not applicable ({exc})")
    size = 1
    for d in degrees:
        size *= d + 1
    if size > MAX_GRID_POINTS:
        return ZeroProof(False, f"evaluation grid of {size} points exceeds {MAX_GRID_POINTS}")
    for point in itertools.product(*(range(d + 1) for d in degrees)):
        value = num.xreplace({v: sp.Integer(x) for v, x in zip(variables, point, strict=True)})
        if value != 0:
            at = ", ".join(f"{v}={x}" for v, x in zip(variables, point, strict=True))
            return ZeroProof(False, f"numerator is {value} at ({at})" + (
                f" with atoms {', '.join(f'{s}={a}' for a, s in table.items())}" if table else ""))
    bound = " x ".join(f"{{0..{d}}}" for d in degrees) or "a constant"
    return ZeroProof(
        True,
        f"numerator polynomial in {len(variables)} variable(s) "
        f"({len(table)} non-polynomial atoms as independent variables), degree <= "
        f"{degrees} per variable, vanishes on the grid {bound} ({size} exact evaluations): "
        f"a polynomial of degree <= d_i in x_i vanishing on a grid of (d_i + 1) points per "
        f"variable is zero",
    )


def prove_zero(expr: sp.Expr) -> ZeroProof:
    """Show ``expr`` is identically 0 on its symbols' stated domain, or say why not.

    Tries the symbolic reductions (none forced), then the polynomial
    evaluation fallback. ``expr`` must be defined on the whole domain.
    """
    e = sp.sympify(expr)
    undefined = defined_on_domain(e)
    if undefined is not None:
        return ZeroProof(False, f"not defined on the whole domain: {undefined}")
    for name, reduce_ in _REDUCTIONS:
        try:
            if reduce_(e) == 0:
                return ZeroProof(True, f"reduces to 0 by {name}")
        except (TypeError, ValueError, NotImplementedError, RecursionError):
            continue
    return polynomial_zero_by_evaluation(e)


def is_zero(expr: sp.Expr) -> bool:
    """True only when :func:`prove_zero` shows ``expr`` is identically 0."""
    return prove_zero(expr).ok


def certify_identity(
    lhs: sp.Expr | str,
    rhs: sp.Expr | str,
    *,
    label: str = "",
    symbols: Sequence[sp.Symbol] = (),
) -> Outcome:
    """Certify ``lhs == rhs`` for every value of the symbols allowed by their
    assumptions. Strings are parsed unevaluated with ``symbols`` (:func:`parse`)."""
    left = parse(lhs, symbols) if isinstance(lhs, str) else sp.sympify(lhs)
    right = parse(rhs, symbols) if isinstance(rhs, str) else sp.sympify(rhs)
    where = f"{label}: " if label else ""
    for side, e in (("left side", left), ("right side", right)):
        undefined = defined_on_domain(e)
        if undefined is not None:
            return Outcome(False, f"{where}{side} {_short(e)} is not defined on the whole "
                           f"domain: {undefined}")
    proof = prove_zero(left - right)
    if proof.ok:
        return Outcome(True, f"{where}{_short(left)} - ({_short(right)}) = 0: {proof.method}")
    return Outcome(False, f"{where}not proved: {proof.method}")


def certify_identities(pairs: Sequence[tuple[str, sp.Expr, sp.Expr]]) -> Outcome:
    """Certify several labelled identities; fails on the first that is not proved."""
    methods: dict[str, int] = {}
    for label, lhs, rhs in pairs:
        out = certify_identity(lhs, rhs, label=label)
        if not out.ok:
            return out
        how = out.detail.rsplit(": ", 1)[-1]
        how = "evaluation on a grid" if how.startswith("numerator") else how
        methods[how] = methods.get(how, 0) + 1
    span = f"{pairs[0][0]} ... {pairs[-1][0]}"
    used = ", ".join(f"{k} x{v}" for k, v in methods.items())
    return Outcome(True, f"{len(pairs)} identities proved ({span}; {used})")


# --- non-negativity certificates -------------------------------------------------


def _real(e: sp.Expr) -> bool:
    """Every symbol declared real and no imaginary unit: the expression is real
    wherever it is defined (by the structure of the operations we admit)."""
    return all(s.is_real is True for s in e.free_symbols) and not e.has(sp.I)


def manifest_sign(e: sp.Expr) -> str | None:
    """"pos", "nonneg" or None: the sign readable from ``e``'s structure alone.

    Uses only the symbols' declared assumptions and the rules listed in the
    module docstring; never sympy's assumption inference on compound terms.
    """
    e = sp.sympify(e)
    if e.is_Number:
        if e.is_zero:
            return "nonneg"
        return "pos" if e.is_extended_real and e > 0 else None
    if e in (sp.pi, sp.E):
        return "pos"
    if e.is_Symbol or isinstance(e, sp.Indexed):
        # A symbol's (or an indexed family's) declared assumptions are the domain.
        if e.is_positive is True:
            return "pos"
        return "nonneg" if e.is_nonnegative is True else None
    if isinstance(e, sp.Sum):
        # A sum over a (possibly empty) index range of non-negative terms; sympy
        # reads Sum(f, (i, a, b)) with b < a - 1 as a negated sum, so require
        # b - a + 1 >= 0 manifestly.
        for _, lo, hi in e.limits:
            if manifest_sign(sp.Add(hi, -lo, 1)) is None:
                return None
        return "nonneg" if manifest_sign(e.function) is not None else None
    if isinstance(e, (sp.Add, sp.Mul)):
        signs = [manifest_sign(a) for a in e.args]
        if any(s is None for s in signs):
            return None
        if isinstance(e, sp.Add):
            return "pos" if "pos" in signs else "nonneg"
        return "pos" if all(s == "pos" for s in signs) else "nonneg"
    if isinstance(e, sp.Pow):
        base, ex = e.base, e.exp
        bsign = manifest_sign(base)
        if bsign == "pos" and _real(ex):
            return "pos"
        if ex.is_Integer and ex.is_even and _real(base):
            return "pos" if bsign == "pos" else "nonneg"
        if bsign == "nonneg" and manifest_sign(ex) == "pos":
            return "nonneg"
        return None
    if isinstance(e, sp.Min):
        signs = [manifest_sign(a) for a in e.args]
        if any(s is None for s in signs):
            return None
        return "pos" if all(s == "pos" for s in signs) else "nonneg"
    if isinstance(e, sp.Max):
        signs = [manifest_sign(a) for a in e.args]
        if "pos" in signs:
            return "pos"
        return "nonneg" if "nonneg" in signs else None
    if isinstance(e, sp.exp):
        return "pos" if _real(e.args[0]) else None
    if isinstance(e, sp.log):
        # log a >= 0 iff a - 1 >= 0; expand and together are equalities, so
        # reading the sign of a - 1 off any of these forms is sound.
        excess = sp.Add(e.args[0], -1)
        for form in (excess, sp.expand(excess), sp.factor(sp.together(excess))):
            sign = manifest_sign(form)
            if sign is not None:
                return sign
        return None
    return None


def _candidate_forms(e: sp.Expr) -> list[sp.Expr]:
    forms = [e]
    for f in (
        lambda x: sp.factor(sp.together(x)),
        lambda x: sp.factor(sp.simplify(x)),
        lambda x: sp.simplify(x),
        lambda x: sp.together(sp.expand(x)),
        lambda x: sp.expand(x),
    ):
        try:
            forms.append(f(e))
        except (TypeError, ValueError, NotImplementedError, RecursionError):
            continue
    return forms


def nonneg_certificate(expr: sp.Expr, *, strict: bool = False) -> tuple[sp.Expr, str] | None:
    """A form of ``expr`` that is manifestly ``>= 0`` (``> 0`` if strict) and
    provably equal to it, with how equality was proved; None if none found."""
    e = sp.sympify(expr)
    for form in _candidate_forms(e):
        sign = manifest_sign(form)
        if sign == "pos" or (sign == "nonneg" and not strict):
            if form == e:
                return form, "as written"
            proof = prove_zero(e - form)
            if proof.ok:
                return form, proof.method
    return None


def certify_nonneg(
    expr: sp.Expr, certificate: sp.Expr, *, strict: bool = False, label: str = ""
) -> Outcome:
    """Check a supplied certificate: ``certificate`` is manifestly >= 0 (> 0)
    and equal to ``expr`` on the symbols' domain."""
    where = f"{label}: " if label else ""
    sign = manifest_sign(certificate)
    if sign is None or (strict and sign != "pos"):
        rel = "> 0" if strict else ">= 0"
        return Outcome(False, f"{where}certificate {_short(certificate)} is not manifestly {rel}")
    proof = prove_zero(sp.sympify(expr) - certificate)
    if not proof.ok:
        return Outcome(False, f"{where}certificate differs from the target: {proof.method}")
    return Outcome(True, f"{where}{_short(expr)} = {_short(certificate)}, manifestly "
                   f"{'> 0' if sign == 'pos' else '>= 0'} ({proof.method})")


def certify_nonneg_from_facts(
    target: sp.Expr,
    template: sp.Expr,
    facts: Mapping[sp.Expr, tuple[Any, str]],
    *,
    vanishing: Sequence[tuple[sp.Expr, sp.Expr, str]] = (),
    label: str = "",
) -> Outcome:
    """Certify ``target >= 0`` from facts established by other steps.

    Parameters
    ----------
    target : Expr
        The claimed non-negative quantity.
    template : Expr
        The certificate, written with one declared-non-negative symbol (or
        ``IndexedBase``) per fact; it must be manifestly >= 0 as written.
    facts : mapping
        fact symbol -> (what it stands for, the premise that proves it >= 0).
        "What it stands for" is an expression, or for an ``IndexedBase`` a
        function of the index giving the i-th expression.
    vanishing : sequence of (factor, cofactor, reason)
        Terms ``factor * cofactor`` that are 0 under the setting's constraints
        (e.g. ``(1 - sum_i p_i) * (ln m - 1)`` by normalisation); ``reason``
        names the constraint ``factor = 0``.

    The check: the template is manifestly >= 0, and
    ``target - template[facts substituted] - sum factor*cofactor`` is
    identically 0 (:func:`prove_zero`).
    """
    where = f"{label}: " if label else ""
    sign = manifest_sign(template)
    if sign is None:
        return Outcome(False, f"{where}certificate {_short(template)} is not manifestly >= 0")
    for sym in facts:
        if not (getattr(sym, "is_nonnegative", None) or sympy_base_nonneg(sym)):
            return Outcome(False, f"{where}fact symbol {sym} is not declared non-negative")

    def expand_facts(e: sp.Expr) -> sp.Expr:
        for sym, (meaning, _) in facts.items():
            if isinstance(sym, sp.IndexedBase):
                fn = meaning
                e = e.replace(
                    lambda x, b=sym: isinstance(x, sp.Indexed) and x.base == b,
                    lambda x, f=fn: f(*x.indices),
                )
            else:
                e = e.xreplace({sym: meaning})
        return e

    rest = sum((f * c for f, c, _ in vanishing), sp.Integer(0))
    proof = prove_zero(sp.sympify(target) - expand_facts(template) - rest)
    if not proof.ok:
        return Outcome(False, f"{where}target - certificate is not identically 0: {proof.method}")
    used = "; ".join(f"{sym} >= 0 by {why}" for sym, (_, why) in facts.items())
    zero = "; ".join(f"{_short(f)} = 0 by {why}" for f, _, why in vanishing)
    return Outcome(True, f"{where}target = {_short(template)} (manifestly >= 0; {used}"
                   + (f"; {zero}" if zero else "") + f"; identity: {proof.method})")


def sympy_base_nonneg(sym: Any) -> bool:
    """Whether an ``IndexedBase`` was declared non-negative (or positive)."""
    if isinstance(sym, sp.IndexedBase):
        probe = sym[sp.Dummy("i", integer=True)]
        return bool(probe.is_nonnegative)
    return False


def certify_sign(expr: sp.Expr, *, strict: bool = False, label: str = "") -> Outcome:
    """Certify ``expr >= 0`` (``> 0`` if strict) by finding a manifestly
    non-negative (positive) form of it, re-checked as an identity.

    The symbols' declared assumptions (positive, nonnegative, real) are the
    domain; sympy's rule-based ``is_nonnegative`` is never the verdict.
    """
    rel = "> 0" if strict else ">= 0"
    where = f"{label}: " if label else ""
    e = sp.sympify(expr)
    undefined = defined_on_domain(e)
    if undefined is not None:
        return Outcome(False, f"{where}{_short(e)} is not defined on the whole domain: {undefined}")
    cert = nonneg_certificate(e, strict=strict)
    if cert is None:
        return Outcome(False, f"{where}no manifestly {rel} form of {_short(e)} found")
    form, how = cert
    return Outcome(True, f"{where}{_short(e)} = {_short(form)} {rel} (manifest; equality {how})")


def certify_nonneg_combination(
    target: sp.Expr,
    facts: Mapping[str, sp.Expr],
    multipliers: Mapping[str, sp.Expr],
    *,
    extra_nonneg: Sequence[sp.Expr] = (),
) -> Outcome:
    """Certify ``target >= 0`` from facts ``f_i >= 0`` (established by other steps).

    The certificate is ``target == sum_i c_i * f_i + sum_j e_j`` where every
    multiplier ``c_i`` and every extra term ``e_j`` has a manifestly
    non-negative form (:func:`nonneg_certificate`) and the identity is proved
    (:func:`prove_zero`).
    """
    unknown = set(multipliers) - set(facts)
    if unknown:
        raise DomainError(
            "multipliers", sorted(unknown), "must name facts", f"choose from {sorted(facts)}"
        )
    combo = sum((multipliers[k] * facts[k] for k in multipliers), sp.Integer(0))
    combo = combo + sum(extra_nonneg, sp.Integer(0))
    proof = prove_zero(sp.sympify(target) - combo)
    if not proof.ok:
        return Outcome(False, f"target - certificate is not identically 0: {proof.method}")
    for k, c in multipliers.items():
        if nonneg_certificate(sp.sympify(c)) is None:
            return Outcome(False, f"multiplier of {k} ({_short(c)}) not manifestly >= 0")
    for e in extra_nonneg:
        if nonneg_certificate(sp.sympify(e)) is None:
            return Outcome(False, f"remainder term {_short(e)} not manifestly >= 0")
    parts = [f"{_short(c)}*[{k}]" for k, c in multipliers.items()]
    parts += [f"[{_short(e, 60)} >= 0]" for e in extra_nonneg]
    return Outcome(True, "target = " + " + ".join(parts) + f" (identity: {proof.method})")


def _short(e: object, limit: int = 90) -> str:
    s = str(e)
    return s if len(s) <= limit else s[: limit - 3] + "..."


def check_limit_on_points(
    expr: sp.Expr,
    var: sp.Symbol,
    target: sp.Expr,
    points: Sequence[Any],
    params: Sequence[Mapping[sp.Symbol, Any]] = ({},),
    *,
    label: str = "",
) -> Outcome:
    """A finite check of ``expr -> target`` as ``var`` grows (not a proof).

    For every parameter assignment in ``params`` (a stated finite domain),
    ``|expr - target|`` is evaluated to 50 significant digits at each of
    ``points`` (increasing); the check passes when every gap is finite and
    the gaps strictly decrease along the points. It says nothing beyond the
    points: a step using it is labelled "finite", and a limit for every
    parameter is proved elsewhere (an explicit epsilon-N certificate or the
    Coq development).
    """
    pts = [sp.nsimplify(p) for p in points]
    if len(pts) < 2 or any(b <= a for a, b in zip(pts, pts[1:], strict=False)):
        return Outcome(False, f"{label}: points must be at least two and increasing")
    parts = []
    for assign in params:
        e = sp.sympify(expr).subs(assign)
        t = sp.sympify(target).subs(assign)
        gaps = []
        for p in pts:
            g = sp.Abs(e.subs(var, p) - t).evalf(50)
            if not g.is_number or not g.is_finite:
                return Outcome(False, f"{label}: |expr - target| at {var}={p} is {g}")
            gaps.append(g)
        if any(not b < a for a, b in zip(gaps, gaps[1:], strict=False)):
            shown = ", ".join(f"{float(g):.3g}" for g in gaps)
            return Outcome(False, f"{label} {dict(assign)}: gaps {shown} do not decrease")
        where = ", ".join(f"{k}={v}" for k, v in assign.items())
        parts.append(f"[{where}] gap {float(gaps[0]):.3g} -> {float(gaps[-1]):.3g}")
    return Outcome(True, f"{label}: |expr - limit| decreases along {var} = "
                   f"{pts[0]}..{pts[-1]} ({len(pts)} points) at " + "; ".join(parts))


def certify_limit_inverse(
    expr: sp.Expr, var: sp.Symbol, target: sp.Expr, *, label: str = ""
) -> Outcome:
    """Certify ``expr -> target`` as ``var -> oo`` (``var`` a positive symbol) with
    an explicit epsilon-N bound: ``expr - target = r / var`` identically, with
    ``r`` free of ``var`` (checked by :func:`certify_identity`), so
    ``|expr - target| <= eps`` for every ``var >= |r| / eps``."""
    if not (isinstance(var, sp.Symbol) and var.is_positive):
        return Outcome(False, f"{label}: {var} must be a positive symbol")
    r = sp.simplify(sp.cancel((sp.sympify(expr) - target) * var))
    if var in r.free_symbols:
        return Outcome(False, f"{label}: (expr - target) * {var} = {_short(r)} depends on {var}")
    ident = certify_identity(sp.sympify(expr) - target, r / var, label=label)
    if not ident.ok:
        return ident
    return Outcome(True, f"{label}: expr - target = ({_short(r)})/{var}, so "
                   f"|expr - target| <= eps for {var} >= |{_short(r)}|/eps ({ident.detail})")
