"""The paper's theory formulas as functions, and the tolerances shared by the theory claims
(``_claims_prop1``, ``_claims_prop2``, ``_claims_lemma1``, ``_claims_thm1``).

Each check evaluates the paper's formula as written in ``data/theory_statements.toml`` and
confronts it with ground truth computed here independently (exact success of explicit
strategies, the Gaussian channel's information by quadrature and Monte Carlo, random
discrete interfaces, exhaustive enumeration), with theory/'s exact frontier, and with
theory/'s implementation of the same closed form.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vistalab.theory import DomainError

from ._context import CheckContext

FLOAT_TOL = 1e-9  # closed forms evaluated in double precision
MC_SE = 4.0  # Monte Carlo comparisons allow 4 standard errors
MC_FLOOR = 2e-3  # plus this many bits per log2 n (see _prop2_bound)


def _formula(ctx: CheckContext, statement_id: str, name: str = "formula") -> Callable[..., float]:
    """The paper's formula ``name`` of statement ``statement_id`` as a function of keyword
    arguments (one per declared symbol)."""

    def build() -> Callable[..., float]:
        import sympy

        st = ctx.statement(statement_id)
        syms = {s: sympy.Symbol(s) for s in st.symbols}
        text = st.formula(name)
        try:
            expr = sympy.parse_expr(text, local_dict=dict(syms))
        except (SyntaxError, TypeError, sympy.SympifyError) as exc:
            raise DomainError(f"{statement_id}.{name}", text, "must be a sympy formula") from exc
        unknown = {str(x) for x in expr.free_symbols} - set(st.symbols)
        if unknown:
            raise DomainError(f"{statement_id}.{name}", text,
                              f"must only use the declared symbols {list(st.symbols)}",
                              context=f"unknown {sorted(unknown)}")
        fn = sympy.lambdify([syms[s] for s in st.symbols], expr, modules=["math"])
        order = st.symbols

        def call(**kw: Any) -> float:
            return float(fn(*(kw[s] for s in order)))

        return call

    return ctx.cached(f"formula:{statement_id}:{name}", build)


def _close(a: float, b: float, tol: float = FLOAT_TOL) -> bool:
    return abs(a - b) <= tol * max(1.0, abs(a), abs(b))
