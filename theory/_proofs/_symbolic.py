"""Symbolic certifiers: identities that simplify to zero, and non-negativity
certificates (a sum of non-negative coefficients times non-negative facts).

Only exact symbolic reasoning counts here: sympy's numeric fallbacks
(``Expr.equals`` random sampling) are never used to conclude.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import sympy as sp

from ._registry import Outcome

__all__ = [
    "is_zero",
    "certify_identity",
    "certify_identities",
    "certify_nonneg_combination",
    "certify_sign",
]


def _normalize_logs(e: sp.Expr) -> sp.Expr:
    """Put every log argument over a common denominator and factor it, so
    ``log(1 + (a-b)^2/(4ab))`` and ``2 log(a+b) - log(4ab)`` meet after expand_log."""
    return e.replace(
        lambda x: isinstance(x, sp.log), lambda x: sp.log(sp.factor(sp.together(x.args[0])))
    )


def is_zero(expr: sp.Expr) -> bool:
    """True only when sympy reduces ``expr`` to exactly 0.

    Log rewriting uses ``force=True`` (log(ab) = log a + log b without
    checking signs), so every symbol appearing inside a log must be a
    positive quantity; the step modules declare such symbols ``positive``.
    """
    candidates = (
        lambda e: sp.expand(e),
        lambda e: sp.expand(sp.expand_log(e, force=True)),
        lambda e: sp.expand(sp.expand_log(_normalize_logs(e), force=True)),
        lambda e: sp.cancel(sp.together(sp.expand(sp.expand_log(e, force=True)))),
        lambda e: sp.simplify(e),
        lambda e: sp.simplify(sp.expand_log(sp.logcombine(e, force=True), force=True)),
    )
    for reduce_ in candidates:
        if reduce_(expr) == 0:
            return True
    return False


def certify_identity(lhs: sp.Expr, rhs: sp.Expr, *, label: str = "") -> Outcome:
    """Certify ``lhs == rhs`` by symbolic reduction of the difference to 0."""
    diff = sp.sympify(lhs) - sp.sympify(rhs)
    where = f"{label}: " if label else ""
    if is_zero(diff):
        return Outcome(True, f"{where}{_short(lhs)} - ({_short(rhs)}) simplifies to 0")
    return Outcome(False, f"{where}difference does not simplify to 0: {_short(sp.simplify(diff))}")


def certify_identities(pairs: Sequence[tuple[str, sp.Expr, sp.Expr]]) -> Outcome:
    """Certify several labelled identities; fails on the first that does not reduce."""
    for label, lhs, rhs in pairs:
        out = certify_identity(lhs, rhs, label=label)
        if not out.ok:
            return out
    span = f"{pairs[0][0]} ... {pairs[-1][0]}"
    return Outcome(True, f"{len(pairs)} identities simplify to 0 ({span})")


def certify_sign(expr: sp.Expr, *, strict: bool = False, label: str = "") -> Outcome:
    """Certify ``expr >= 0`` (``> 0`` if strict) from sympy's assumption system.

    The symbols' declared assumptions (positive, integer...) are the domain;
    sympy must *prove* the sign (None, i.e. unknown, counts as failure).
    """
    rel = "> 0" if strict else ">= 0"
    where = f"{label}: " if label else ""
    verdict = None
    # Try the expression as written first: rewriting (e.g. log(1 + 1/a) into
    # log(a + 1) - log(a)) can hide a sign sympy sees in the original form.
    e = sp.sympify(expr)
    for form in (e, sp.factor(sp.simplify(e))):
        verdict = form.is_positive if strict else form.is_nonnegative
        if verdict is True:
            return Outcome(True, f"{where}{_short(form)} {rel} proved from symbol assumptions")
    return Outcome(False, f"{where}cannot prove {_short(e)} {rel} (sympy says {verdict})")


def certify_nonneg_combination(
    target: sp.Expr,
    facts: Mapping[str, sp.Expr],
    multipliers: Mapping[str, sp.Expr],
    *,
    extra_nonneg: Sequence[sp.Expr] = (),
) -> Outcome:
    """Certify ``target >= 0`` from facts ``f_i >= 0``.

    The certificate is ``target == sum_i c_i * f_i + sum_j e_j`` where every
    multiplier ``c_i`` and every extra term ``e_j`` is proved non-negative by
    sympy's assumption system and the identity simplifies to 0.
    """
    combo = sum((multipliers[k] * facts[k] for k in multipliers), sp.Integer(0))
    combo = combo + sum(extra_nonneg, sp.Integer(0))
    if not is_zero(target - combo):
        return Outcome(
            False,
            f"target - certificate does not simplify to 0: {_short(sp.simplify(target - combo))}",
        )
    for k, c in multipliers.items():
        if sp.sympify(c).is_nonnegative is not True:
            return Outcome(False, f"multiplier of {k} ({_short(c)}) not provably >= 0")
    for e in extra_nonneg:
        if sp.factor(sp.sympify(e)).is_nonnegative is not True:
            return Outcome(False, f"remainder term {_short(e)} not provably >= 0")
    parts = [f"{_short(c)}*[{k}]" for k, c in multipliers.items()]
    parts += [f"[{_short(e, 60)} >= 0]" for e in extra_nonneg]
    return Outcome(True, "target = " + " + ".join(parts))


def _short(e: object, limit: int = 90) -> str:
    s = str(e)
    return s if len(s) <= limit else s[: limit - 3] + "..."
