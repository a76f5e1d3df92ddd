"""The registry of named proof steps and the records their checks produce.

Each step of the proofs in the paper's Appendices B-D is one :class:`Step`
(claim, snake_case name, method, domain, check); :func:`certify_all` runs
them and returns a :class:`VerificationReport`.
"""

from __future__ import annotations

import fnmatch
import importlib
import time
from collections.abc import Callable
from dataclasses import dataclass

from .._errors import DomainError, UnknownNameError

__all__ = [
    "CLAIMS",
    "METHODS",
    "Outcome",
    "Step",
    "StepCertificate",
    "VerificationReport",
    "register_step",
    "list_steps",
    "get_step",
    "run_step",
    "certify_all",
]

#: Claim identifiers (paper_checks links to these exact strings).
CLAIMS: tuple[str, ...] = (
    "prop1",
    "prop2",
    "prop2-tight",
    "lemma1",
    "thm1.A",
    "thm1.B",
    "thm1.C",
    "thm1.D",
    "thm1.E",
)

#: How a step is certified.
METHODS: tuple[str, ...] = (
    "sympy-identity",
    "sympy-nonneg",
    "lp-shannon",
    "interval",
    "enumeration",
    "hypothesis",
)

# Step modules register themselves on import; imported lazily so that
# ``import theory`` stays cheap.
_STEP_MODULES = (
    "_steps_prop1",
    "_steps_prop2",
    "_steps_lemma1",
    "_steps_thm1",
)


@dataclass(frozen=True)
class Outcome:
    """What a check function returns.

    Attributes
    ----------
    ok : bool
        Whether the step was certified.
    detail : str
        The certificate in brief, or why it failed.
    """

    ok: bool
    detail: str


@dataclass(frozen=True)
class Step:
    """One named step of a proof.

    Attributes
    ----------
    claim : str
        One of :data:`CLAIMS`.
    name : str
        Short snake_case step name, unique within the claim.
    method : str
        One of :data:`METHODS`.
    domain : str
        Where the check holds (e.g. "all n >= 2 (symbolic)", "n <= 12").
    statement : str
        The mathematical statement checked, in words or formula.
    ref : str
        Where in the paper the step is.
    check : Callable[[], Outcome]
        The certifier; must be able to fail.
    """

    claim: str
    name: str
    method: str
    domain: str
    statement: str
    ref: str
    check: Callable[[], Outcome]

    @property
    def key(self) -> str:
        return f"{self.claim}:{self.name}"


@dataclass(frozen=True)
class StepCertificate:
    """The result of running one :class:`Step`.

    Attributes
    ----------
    claim, step, method, domain, statement, ref : str
        Copied from the step.
    status : str
        ``"pass"`` or ``"fail"``.
    detail : str
        The certificate summary or the reason for failure (an exception
        raised by the check is reported here as a failure).
    seconds : float
        Wall time of the check.
    """

    claim: str
    step: str
    method: str
    domain: str
    statement: str
    ref: str
    status: str
    detail: str
    seconds: float

    @property
    def passed(self) -> bool:
        return self.status == "pass"


@dataclass(frozen=True)
class VerificationReport:
    """All step certificates of one :func:`certify_all` run.

    Attributes
    ----------
    steps : tuple[StepCertificate, ...]
        In registry order (claims in :data:`CLAIMS` order).
    passed : int
        Number of steps with status "pass".
    failed : int
        Number of steps with status "fail".
    seconds : float
        Total wall time.
    only : str | None
        The filter pattern used, if any.
    """

    steps: tuple[StepCertificate, ...]
    passed: int
    failed: int
    seconds: float
    only: str | None = None

    @property
    def ok(self) -> bool:
        """True when at least one step ran and none failed."""
        return self.failed == 0 and self.passed > 0

    def by_claim(self) -> dict[str, tuple[int, int]]:
        """(passed, failed) counts per claim."""
        out: dict[str, tuple[int, int]] = {}
        for c in self.steps:
            p, f = out.get(c.claim, (0, 0))
            out[c.claim] = (p + c.passed, f + (not c.passed))
        return out


_REGISTRY: dict[tuple[str, str], Step] = {}
_loaded = False


def register_step(
    claim: str, name: str, method: str, domain: str, statement: str, ref: str
) -> Callable[[Callable[[], Outcome]], Callable[[], Outcome]]:
    """Decorator registering ``check`` as step ``claim:name``."""
    if claim not in CLAIMS:
        raise UnknownNameError("claim", claim, CLAIMS)
    if method not in METHODS:
        raise UnknownNameError("method", method, METHODS)

    def deco(check: Callable[[], Outcome]) -> Callable[[], Outcome]:
        key = (claim, name)
        if key in _REGISTRY and _REGISTRY[key].check is not check:
            raise DomainError(
                "name", name, "must be unique within a claim", "rename the step", context=claim
            )
        _REGISTRY[key] = Step(claim, name, method, domain, statement, ref, check)
        return check

    return deco


def _load() -> None:
    global _loaded
    if _loaded:
        return
    for mod in _STEP_MODULES:
        importlib.import_module(f"{__package__}.{mod}")
    _loaded = True


def list_steps(only: str | None = None) -> tuple[Step, ...]:
    """All registered steps, claims in :data:`CLAIMS` order.

    Parameters
    ----------
    only : str, optional
        A glob pattern (``"thm1.*"``, ``"*fano*"``) matched against each step's
        claim, name, ``claim:name`` and method. A pattern without glob
        characters selects exact matches (``"prop2"`` is that claim only, not
        ``"prop2-tight"``) and, when nothing matches exactly, substrings
        (``"fano"``).
    """
    _load()
    steps = sorted(_REGISTRY.values(), key=lambda s: CLAIMS.index(s.claim))
    if only is None:
        return tuple(steps)
    if not isinstance(only, str):
        raise DomainError("only", only, "must be a glob pattern (str) or None",
                          "e.g. only='thm1.*'")
    pat = only
    if not pat.strip():
        raise DomainError("only", only, "must be a non-empty pattern", "e.g. --only 'thm1.*'")
    if any(ch in pat for ch in "*?["):
        return tuple(s for s in steps if any(fnmatch.fnmatchcase(f, pat) for f in _fields(s)))
    exact = tuple(s for s in steps if pat in _fields(s))
    return exact or tuple(s for s in steps if any(pat in f for f in _fields(s)))


def _fields(s: Step) -> tuple[str, str, str, str]:
    return (s.claim, s.name, s.key, s.method)


def get_step(claim: str, name: str) -> Step:
    """The registered step ``claim:name``."""
    _load()
    if claim not in CLAIMS:
        raise UnknownNameError("claim", claim, CLAIMS)
    try:
        return _REGISTRY[(claim, name)]
    except KeyError:
        known = [n for (c, n) in _REGISTRY if c == claim]
        raise UnknownNameError(f"step of {claim}", name, known) from None


def run_step(step: Step) -> StepCertificate:
    """Run one step's check; an exception inside the check is a failure."""
    t0 = time.perf_counter()
    try:
        out = step.check()
        if not isinstance(out, Outcome):
            out = Outcome(False, f"check returned {type(out).__name__}, not Outcome")
    except Exception as exc:  # a crashing certifier certifies nothing
        out = Outcome(False, f"check raised {type(exc).__name__}: {exc}")
    dt = time.perf_counter() - t0
    return StepCertificate(
        claim=step.claim,
        step=step.name,
        method=step.method,
        domain=step.domain,
        statement=step.statement,
        ref=step.ref,
        status="pass" if out.ok else "fail",
        detail=out.detail,
        seconds=dt,
    )


def certify_all(only: str | None = None) -> VerificationReport:
    """Run every registered proof-step check (or those matching ``only``).

    Parameters
    ----------
    only : str, optional
        Filter as in :func:`list_steps`. A pattern that matches nothing
        raises :class:`DomainError`.

    Returns
    -------
    VerificationReport
    """
    steps = list_steps(only)
    if only is not None and not steps:
        raise DomainError(
            "only",
            only,
            "must match at least one claim, step or method",
            f"choose from claims {', '.join(CLAIMS)} or methods {', '.join(METHODS)}",
        )
    t0 = time.perf_counter()
    certs = tuple(run_step(s) for s in steps)
    passed = sum(c.passed for c in certs)
    return VerificationReport(
        steps=certs,
        passed=passed,
        failed=len(certs) - passed,
        seconds=time.perf_counter() - t0,
        only=only,
    )
