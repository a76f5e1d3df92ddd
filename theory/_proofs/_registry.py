"""The registry of named proof steps and the records their checks produce.

Each step of the proofs in the paper's Appendices B-D is one :class:`Step`
(claim, snake_case name, method, domain, generality, premises, check);
:func:`certify_all` runs them, checks that the premises link every main
result's chain (:func:`check_chains`) and returns a :class:`VerificationReport`.
"""

from __future__ import annotations

import fnmatch
import time
from collections.abc import Callable
from dataclasses import dataclass

from vistalab._core import PlainRecord, import_optional

from .._errors import DomainError, UnknownNameError
from ._formal import COQ_COVERAGE

__all__ = [
    "CLAIMS",
    "MAIN_RESULTS",
    "METHODS",
    "GENERALITIES",
    "Outcome",
    "Step",
    "ChainResult",
    "check_chains",
    "StepCertificate",
    "VerificationReport",
    "register_step",
    "list_steps",
    "get_step",
    "run_step",
    "certify_all",
]

#: The paper's main results: each must be concluded by some step whose chain
#: is closed. Other claims are chain-checked when a step concludes them.
MAIN_RESULTS: tuple[str, ...] = (
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

#: Claim identifiers (paper_checks links to these exact strings): the main
#: results, then the claims beyond the paper (theory/BEYOND.md).
CLAIMS: tuple[str, ...] = MAIN_RESULTS + (
    "content-sandwich",
    "thm1-sharp",
    "first-order",
    "prop1-sharp",
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

#: How far a passed step's conclusion reaches, strongest first:
#: "all" = proved for every parameter of its stated domain (symbolic identity
#: or certificate, Shannon-cone LP certificate, induction step);
#: "finite" = checked exhaustively on a stated finite domain (enumeration,
#: explicit instances, interval branch and bound on a bounded box);
#: "sampled" = held on randomly drawn examples (Hypothesis). Only "all" is a proof.
GENERALITIES: tuple[str, ...] = ("all", "finite", "sampled")


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
    generality : str
        One of :data:`GENERALITIES`: whether a pass proves the statement on
        all of ``domain`` ("all"), checks it on a finite domain ("finite") or
        on random samples ("sampled").
    premises : tuple[str, ...]
        Keys (``"claim:name"``) of the steps whose conclusions this step uses.
    concludes : tuple[str, ...]
        The claims (main results) whose statement this step establishes; the
        chain of each is its premise closure (:func:`check_chains`).
    """

    claim: str
    name: str
    method: str
    domain: str
    statement: str
    ref: str
    check: Callable[[], Outcome]
    generality: str = "finite"
    premises: tuple[str, ...] = ()
    concludes: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """The step's registry key, ``<claim>:<name>``."""
        return f"{self.claim}:{self.name}"


@dataclass(frozen=True)
class StepCertificate(PlainRecord):
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
    generality, premises, concludes
        Copied from the step.
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
    generality: str = "finite"
    premises: tuple[str, ...] = ()
    concludes: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """The step's registry key, ``<claim>:<step>``."""
        return f"{self.claim}:{self.step}"

    @property
    def passed(self) -> bool:
        """True when the step's status is ``"pass"``."""
        return self.status == "pass"


@dataclass(frozen=True)
class ChainResult(PlainRecord):
    """Whether one main result's chain of steps is closed and established.

    Attributes
    ----------
    result : str
        The claim (main result), one of :data:`CLAIMS`.
    status : str
        ``"closed"`` (every step of the chain is registered and passed, no
        cycle) or ``"broken"``.
    conclusions : tuple[str, ...]
        Keys of the steps that conclude ``result``.
    steps : tuple[str, ...]
        Every step key in the chain (the conclusions and their premise closure).
    generality : str
        The weakest generality in the chain: the result is proved for all
        parameters only if this is "all".
    weakest : tuple[str, ...]
        The chain's steps of that weakest generality (when it is not "all").
    detail : str
        Why the chain is broken, or a summary.
    coq : tuple[str, ...]
        The Coq theorems (theory/coq/Statements.v) that prove ``result`` for
        every parameter (:data:`._formal.COQ_COVERAGE`); empty when the Coq
        development does not state it (e.g. Proposition 2, proved there only
        for a finite channel). Whether they are proved is ``vista-lab verify``'s
        formal check.
    """

    result: str
    status: str
    conclusions: tuple[str, ...]
    steps: tuple[str, ...]
    generality: str
    weakest: tuple[str, ...]
    detail: str
    coq: tuple[str, ...] = ()

    @property
    def closed(self) -> bool:
        """True when the chain is closed (every step registered and passed, no
        cycle).
        """
        return self.status == "closed"


@dataclass(frozen=True)
class VerificationReport(PlainRecord):
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
    chains : tuple[ChainResult, ...]
        One per main result (empty when ``only`` filtered the steps: a partial
        run cannot establish a chain).
    """

    steps: tuple[StepCertificate, ...]
    passed: int
    failed: int
    seconds: float
    only: str | None = None
    chains: tuple[ChainResult, ...] = ()

    @property
    def ok(self) -> bool:
        """True when at least one step ran, none failed and no chain is broken."""
        chains_ok = all(c.closed for c in self.chains)
        return self.failed == 0 and self.passed > 0 and chains_ok

    @property
    def broken_chains(self) -> tuple[ChainResult, ...]:
        """The chains that are not closed, in the order of ``chains``."""
        return tuple(c for c in self.chains if not c.closed)

    def generality_counts(self) -> dict[str, int]:
        """Number of steps of each generality (adds up to ``len(steps)``).

        Returns
        -------
        dict of str to int
            ``"all"`` (proved for all parameters), ``"finite"`` (checked on a
            finite domain), ``"sampled"`` -> how many steps.
        """
        out = {g: 0 for g in GENERALITIES}
        for c in self.steps:
            out[c.generality] = out.get(c.generality, 0) + 1
        return out

    def by_claim(self) -> dict[str, tuple[int, int]]:
        """(passed, failed) counts per claim.

        Returns
        -------
        dict of str to tuple of (int, int)
            Claim -> its steps passed and failed.
        """
        out: dict[str, tuple[int, int]] = {}
        for c in self.steps:
            p, f = out.get(c.claim, (0, 0))
            out[c.claim] = (p + c.passed, f + (not c.passed))
        return out


_REGISTRY: dict[tuple[str, str], Step] = {}
_loaded = False


#: Methods whose pass can never be a proof for every parameter.
_NEVER_ALL = {"enumeration": "finite", "hypothesis": "sampled"}


def register_step(
    claim: str,
    name: str,
    method: str,
    domain: str,
    statement: str,
    ref: str,
    *,
    generality: str | None = None,
    premises: tuple[str, ...] | list[str] = (),
    concludes: tuple[str, ...] | list[str] = (),
) -> Callable[[Callable[[], Outcome]], Callable[[], Outcome]]:
    """Decorator registering ``check`` as step ``claim:name``.

    Parameters
    ----------
    claim, name, method, domain, statement, ref : str
        As in :class:`Step`.
    generality : str, optional
        One of :data:`GENERALITIES`. Default: "sampled" for the hypothesis
        method, otherwise "finite" (never over-claims; a step proved for every
        parameter must say "all"). "all" is refused for enumeration and
        hypothesis.
    premises : sequence of str
        ``"claim:name"`` keys of the steps whose conclusions the check uses
        (resolved when the chains are checked, so order of registration does
        not matter).
    concludes : sequence of str
        Claims whose main statement this step establishes.
    """
    if claim not in CLAIMS:
        raise UnknownNameError("claim", claim, CLAIMS)
    if method not in METHODS:
        raise UnknownNameError("method", method, METHODS)
    if generality is None:
        generality = "sampled" if method == "hypothesis" else "finite"
    if generality not in GENERALITIES:
        raise UnknownNameError("generality", generality, GENERALITIES)
    if generality == "all" and method in _NEVER_ALL:
        raise DomainError(
            "generality", generality, f"a {method} check covers only what it visits",
            f"use generality={_NEVER_ALL[method]!r}", context=f"{claim}:{name}",
        )
    for p in premises:
        if not isinstance(p, str) or p.count(":") != 1:
            raise DomainError(
                "premises", p, "must be a 'claim:name' step key", "e.g. 'prop1:step3_divide'",
                context=f"{claim}:{name}",
            )
    for c in concludes:
        if c not in CLAIMS:
            raise UnknownNameError("concludes", c, CLAIMS)

    def deco(check: Callable[[], Outcome]) -> Callable[[], Outcome]:
        key = (claim, name)
        if key in _REGISTRY and _REGISTRY[key].check is not check:
            raise DomainError(
                "name", name, "must be unique within a claim", "rename the step", context=claim
            )
        _REGISTRY[key] = Step(
            claim, name, method, domain, statement, ref, check,
            generality=generality, premises=tuple(premises), concludes=tuple(concludes),
        )
        return check

    return deco


def _load() -> None:
    global _loaded
    if _loaded:
        return
    # The proof steps need the `verify` extra (python-flint, hypothesis): say so up front.
    import_optional("hypothesis", "theory's randomized proof steps (vista-lab verify)",
                    extra="verify")
    import_optional("flint", "theory's interval-arithmetic proof steps (vista-lab verify)")
    # Imported statically on first use (a renamed module breaks the build), not at
    # `import vistalab.theory`, so the bounds need none of the `verify` extra.
    from . import (  # noqa: F401,I001
        _steps_beyond, _steps_lemma1, _steps_prop1, _steps_prop2,
        _steps_thm1_b, _steps_thm1_c, _steps_thm1_d, _steps_thm1_e,
    )

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

    Returns
    -------
    tuple of Step
        The matching steps, in claim order.
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
        generality=step.generality,
        premises=step.premises,
        concludes=step.concludes,
    )


def _visit(
    key: str,
    via: str,
    path: tuple[str, ...],
    by_key: dict[str, StepCertificate],
    state: dict[str, int],
    seen: list[str],
    problems: list[str],
) -> None:
    """Depth-first walk of the premise graph from ``key``, recording every
    missing premise, failed step and cycle in ``problems``."""
    if key not in by_key:
        problems.append(f"{via} names premise {key}, which is not a registered step")
        return
    if state.get(key) == 1:
        cycle = " -> ".join((*path[path.index(key):], key))
        problems.append(f"premise cycle {cycle}")
        return
    if state.get(key) == 2:
        return
    state[key] = 1
    seen.append(key)
    cert = by_key[key]
    if not cert.passed:
        problems.append(f"{key} failed")
    for p in cert.premises:
        _visit(p, key, (*path, key), by_key, state, seen, problems)
    state[key] = 2


def check_chains(
    certs: tuple[StepCertificate, ...] | list[StepCertificate],
    results: tuple[str, ...] | None = None,
) -> tuple[ChainResult, ...]:
    """Check that each main result's chain of steps is closed.

    A result's chain is the set of steps that conclude it plus, recursively,
    their premises. It is closed when the result has at least one concluding
    step, every premise names a step of ``certs``, every step in the chain
    passed, and the premise graph has no cycle through the chain.

    Parameters
    ----------
    certs : sequence of StepCertificate
        The certificates of a full run.
    results : tuple of str, optional
        The results to check. Default: :data:`MAIN_RESULTS` and every other
        claim that some step concludes, in :data:`CLAIMS` order.

    Returns
    -------
    tuple of ChainResult
        One per result, in ``results`` order.
    """
    if isinstance(certs, (str, bytes)) or not isinstance(certs, (list, tuple)) or not all(
            isinstance(c, StepCertificate) for c in certs):
        raise DomainError("certs", certs, "must be a sequence of StepCertificate",
                          "pass certify_all().steps")
    if results is not None and (isinstance(results, (str, bytes))
                                or not isinstance(results, (list, tuple))
                                or not all(isinstance(r, str) and r in CLAIMS for r in results)):
        raise DomainError("results", results, "must be a tuple of claim ids",
                          f"choose from {', '.join(CLAIMS)}")
    by_key = {c.key: c for c in certs}
    if results is None:
        concluded = {r for c in certs for r in c.concludes}
        results = tuple(c for c in CLAIMS if c in MAIN_RESULTS or c in concluded)
    out = []
    for result in results:
        concl = tuple(c.key for c in certs if result in c.concludes)
        if not concl:
            out.append(ChainResult(result, "broken", (), (), "finite", (),
                                   f"no step concludes {result}: the result is unreachable"))
            continue
        problems: list[str] = []
        seen: list[str] = []
        state: dict[str, int] = {}  # 1 = on the DFS stack, 2 = done
        for k in concl:
            _visit(k, result, (), by_key, state, seen, problems)
        order = {g: i for i, g in enumerate(GENERALITIES)}
        gens = [by_key[k].generality for k in seen]
        weakest_gen = max(gens, key=lambda g: order.get(g, len(order)))
        weakest = tuple(k for k in seen if by_key[k].generality == weakest_gen)
        coq = COQ_COVERAGE.get(result, ())
        if problems:
            out.append(ChainResult(result, "broken", concl, tuple(seen), weakest_gen,
                                   weakest if weakest_gen != "all" else (),
                                   "; ".join(dict.fromkeys(problems)), coq))
        else:
            note = (f"{len(seen)} steps, all proved for every parameter"
                    if weakest_gen == "all"
                    else f"{len(seen)} steps; weakest link {weakest_gen}: {', '.join(weakest)}")
            if weakest_gen != "all" and coq:
                note += f"; general case stated in Coq as {', '.join(coq)}"
            out.append(ChainResult(result, "closed", concl, tuple(seen), weakest_gen,
                                   weakest if weakest_gen != "all" else (), note, coq))
    return tuple(out)


def _report_progress(progress: Callable[[StepCertificate], None],
                     cert: StepCertificate) -> None:
    """Call the user's ``progress`` callback; a callable that cannot take a
    certificate (``progress=int``) is refused naming the argument."""
    try:
        progress(cert)
    except (TypeError, ValueError, AttributeError) as exc:
        raise DomainError("progress", progress, "must be a callable taking one "
                          f"StepCertificate (calling it failed: {type(exc).__name__})",
                          "pass a function of one argument, or omit it") from exc


def certify_all(
    only: str | None = None, *, progress: Callable[[StepCertificate], None] | None = None
) -> VerificationReport:
    """Run every registered proof-step check (or those matching ``only``).

    Parameters
    ----------
    only : str, optional
        Filter as in :func:`list_steps`. A pattern that matches nothing
        raises :class:`DomainError`.
    progress : callable, keyword-only, optional
        Called with each step's certificate as soon as it is done (for a
        progress bar).

    Returns
    -------
    VerificationReport
        With the chain check of every main result when ``only`` is None.
    """
    if progress is not None and not callable(progress):
        raise DomainError("progress", progress, "must be a callable taking each StepCertificate",
                          "pass a function, or omit it")
    steps = list_steps(only)
    if only is not None and not steps:
        raise DomainError(
            "only",
            only,
            "must match at least one claim, step or method",
            f"choose from claims {', '.join(CLAIMS)} or methods {', '.join(METHODS)}",
        )
    t0 = time.perf_counter()
    done = []
    for s in steps:
        done.append(run_step(s))
        if progress is not None:
            _report_progress(progress, done[-1])
    certs = tuple(done)
    passed = sum(c.passed for c in certs)
    chains = check_chains(certs) if only is None else ()
    return VerificationReport(
        steps=certs,
        passed=passed,
        failed=len(certs) - passed,
        seconds=time.perf_counter() - t0,
        only=only,
        chains=chains,
    )
