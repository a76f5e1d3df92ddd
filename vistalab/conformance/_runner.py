"""``check``: run a manager on conversations Hypothesis generates, check every
invariant on every output, and shrink each broken invariant to a minimal
counterexample."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import Flaky

from vistalab._core import DomainError

from ._canon import memo as canon_memo
from ._checks import (
    budget_problems,
    fidelity_problems,
    pinned_problems,
    recoverability_problems,
    request_problems,
)
from ._counter import SuiteCounter, as_counter
from ._ids import CHECKS, check_info, classify
from ._managers import (
    ManagerHookError,
    ManagerOutputError,
    ManagerSignatureError,
    ManagerTimeoutError,
    _Manager,
    as_manager,
    deep_equal,
    raised,
    safe_str,
)
from ._minimize import minimize
from ._model import ConformanceReport, Violation
from ._seeded import seed_only
from ._shapes import (
    batch_problems,
    closure_problems,
    complete_pending,
    coupling_problems,
    memo_turns,
    pending_calls,
    pending_problems,
)
from ._strategies import _pinned_iv, conversations, pinned_floor
from ._strategies import budgets as budget_strategy

__all__ = ["check", "replay", "evaluate", "DEFAULT_TIMEOUT"]

#: Seconds one run of the manager on one conversation may take by default.
DEFAULT_TIMEOUT = 10.0
#: Manager runs Hypothesis's shrinker may spend per pass before it settles for
#: the smallest failure found so far.
SHRINK_RUNS = 80


def _case_key(conversation: Any, budget: int) -> str:
    return json.dumps([conversation, budget], sort_keys=True, default=repr)


def _short(text: Any, limit: int = 300) -> str:
    return safe_str(text, limit)


def _plain(obj: Any) -> Any:
    from ._model import _plain as plain

    return plain(obj)


def _output_checks(
    conversation: Any, out: Any, budget: int, count: SuiteCounter, protocol: str, *,
    strict: bool, pinned: str, placeholder: Any = None,
) -> tuple[tuple[str, list[str]], ...]:
    """The checks that need only the input and the output: ``(invariant,
    problems)`` each. The protocol rules judge the request as the provider
    receives it once the pending calls' results arrive
    (:func:`~vistalab.conformance._shapes.complete_pending`)."""
    # the checks read the same two requests: their turns, units and unit keys once
    with memo_turns(), canon_memo():
        return _output_checks_once(conversation, out, budget, count, protocol, strict=strict,
                                   pinned=pinned, placeholder=placeholder)


def _output_checks_once(
    conversation: Any, out: Any, budget: int, count: SuiteCounter, protocol: str, *,
    strict: bool, pinned: str, placeholder: Any = None,
) -> tuple[tuple[str, list[str]], ...]:
    pending = pending_calls(conversation, protocol)
    return (
        ("budget", budget_problems(out, budget, count)),
        ("protocol", request_problems(complete_pending(out, protocol, pending), protocol,
                                      strict=strict)),
        ("pinned", pinned_problems(conversation, out, protocol, pinned=pinned)),
        ("fidelity", fidelity_problems(conversation, out, protocol, placeholder=placeholder)),
        ("batch", batch_problems(conversation, out, protocol)),
        ("coupling", coupling_problems(conversation, out, protocol)),
        ("closure", closure_problems(out, protocol)),
        ("pending", pending_problems(conversation, out, protocol, placeholder=placeholder)),
    )


def evaluate(
    mgr: _Manager,
    conversation: Any,
    budget: int,
    count: SuiteCounter,
    protocol: str,
    *,
    strict: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
    pinned: str = "system",
) -> dict[str, tuple[str, Any]]:
    """Every check ``mgr`` breaks on one conversation: ``{check id: (message,
    output)}`` (ids of :data:`~vistalab.conformance.CHECKS`). Raises
    :class:`ManagerTimeoutError` when a run hangs."""
    found: dict[str, tuple[str, Any]] = {}
    floor = count(pinned_floor(conversation, protocol, pinned=pinned))
    try:
        run = mgr.run(conversation, budget, count, protocol, timeout)
    except _STOPS:
        raise
    except mgr.refuses as exc:
        if budget >= floor:
            found["budget.refused"] = (
                f"the manager refused at a budget of {budget:,} ({type(exc).__name__}: "
                f"{_short(exc, 120)}), at or above the pinned floor of {floor:,} tokens "
                "(the pinned messages and the last user turn), where a valid request exists",
                None)
        return found
    except Exception as exc:  # noqa: BLE001 - the crash invariant
        found["crash.raised"] = (f"the manager raised {raised(exc)}", None)
        return found
    out = run.output
    try:
        checks = _checks(conversation, out, budget, count, protocol, strict, pinned, run)
    except ManagerHookError as exc:
        found["crash.raised"] = (f"the manager's {exc}", out)
        return found
    per_id: dict[str, list[str]] = {}
    for name, problems in checks:
        for problem in problems:
            per_id.setdefault(classify(name, problem), []).append(problem)
    for cid, problems in per_id.items():
        extra = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        if cid == "budget.empty" and budget < floor:
            extra += (f"; below the pinned floor of {floor:,} tokens the manager must refuse "
                      "(raise BudgetTooSmall), not send an empty request")
        found[cid] = (problems[0] + extra, out)
    try:
        again = mgr.run(conversation, budget, count, protocol, timeout)
    except _STOPS:
        raise
    except Exception as exc:  # noqa: BLE001
        found.setdefault("crash.raised", (
            f"the manager raised {raised(exc)} on a second run of the same input "
            "(the first returned)", out))
        return found
    if not deep_equal(out, again.output):
        found["determinism.differs"] = (
            "two runs on the same conversation and budget returned different outputs",
            {"first": out, "second": again.output})
    return found


#: What stops a check at once instead of counting as a broken invariant.
_STOPS = (ManagerTimeoutError, ManagerOutputError, ManagerSignatureError)


def _checks(conversation: Any, out: Any, budget: int, count: SuiteCounter, protocol: str,
            strict: bool, pinned: str, run: Any) -> tuple[tuple[str, list[str]], ...]:
    """Every check of one output: those of the input and output alone, then
    recoverability (which calls the manager's ``recover`` hook)."""
    return (
        *_output_checks(conversation, out, budget, count, protocol, strict=strict,
                        pinned=pinned, placeholder=run.placeholder),
        ("recoverability", recoverability_problems(
            conversation, out, protocol, placeholder=run.placeholder, recover=run.recover)),
    )


#: Most examples one check draws (Hypothesis' own runs use hundreds).
MAX_EXAMPLES = 1_000_000


def _options_iv(examples: Any, seed: Any, timeout: Any) -> tuple[int, int, float]:
    """``examples``, ``seed`` and ``timeout`` of a check (shared with the study)."""
    if isinstance(examples, bool) or not isinstance(examples, int) or not (
            1 <= examples <= MAX_EXAMPLES):
        raise DomainError("examples", examples, f"must be an integer with 1 <= examples <= "
                          f"{MAX_EXAMPLES:,}", "pass e.g. examples=200")
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**64:
        raise DomainError("seed", seed, "must be an integer with 0 <= seed < 2**64",
                          "pass e.g. seed=0")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not (
        math.isfinite(timeout) and timeout > 0
    ):
        raise DomainError("timeout", timeout, "must be a positive finite number of seconds",
                          f"pass e.g. timeout={DEFAULT_TIMEOUT:g}")
    return examples, seed, float(timeout)


def _check_iv(
    manager: Any, protocol: Any, budgets: Any, examples: Any, seed: Any, counter: Any,
    timeout: Any, strict: Any, pinned: Any = "system",
) -> tuple[_Manager, str, tuple[int, ...] | None, int, int, SuiteCounter, float, bool, str]:
    from ._strategies import _protocol_iv

    _protocol_iv(protocol)
    pinned = _pinned_iv(pinned)
    mgr = as_manager(manager)
    examples, seed, timeout = _options_iv(examples, seed, timeout)
    if not isinstance(strict, bool):
        raise DomainError("strict", strict, "must be True or False")
    bud: tuple[int, ...] | None = None
    if budgets is not None:
        items = [budgets] if isinstance(budgets, int) else budgets
        if (
            isinstance(items, (str, bytes)) or not isinstance(items, Sequence) or not items
            or any(isinstance(b, bool) or not isinstance(b, int) or b < 1 for b in items)
        ):
            raise DomainError("budgets", budgets,
                              "must be None or a non-empty list of positive integer budgets",
                              "pass e.g. budgets=[100, 400], or None to draw them")
        bud = tuple(int(b) for b in items)
    return (mgr, str(protocol), bud, examples, seed, as_counter(counter, str(protocol)),
            float(timeout), strict, pinned)


class _Found(Exception):
    """Raised inside the Hypothesis test for one check id (one subclass per
    check, so Hypothesis shrinks each failure separately)."""

    def __init__(self, name: str, message: str, conversation: Any, budget: int,
                 output: Any) -> None:
        super().__init__(f"{name}: {message}")
        self.name = name
        self.message = message
        self.conversation = conversation
        self.budget = budget
        self.output = output


_FOUND = {c.id: type("_Broken_" + c.id.replace(".", "_").replace("-", "_"), (_Found,), {})
          for c in CHECKS}
_ORDER = tuple(c.id for c in CHECKS)


class _Hang(Exception):
    pass


class _ShrinkSpent(BaseException):
    """Ends Hypothesis's run once the shrink budget is spent: from then on every
    example passes unless it repeats a failure already found, so nothing later
    can yield a new or smaller counterexample (a BaseException, so Hypothesis
    does not take it for a failure of its own)."""


def _collect(exc: BaseException) -> list[_Found]:
    if isinstance(exc, _Found):
        return [exc]
    if isinstance(exc, BaseExceptionGroup):
        return [f for e in exc.exceptions for f in _collect(e)]
    return []


def _minimal(
    mgr: _Manager, f: _Found, count: SuiteCounter, protocol: str, strict: bool, timeout: float,
    *, fixed_budgets: bool, pinned: str,
) -> _Found:
    """``f`` after the deletion pass of :func:`minimize`. Each smaller
    conversation is tried at the same budget and, unless the budgets were
    given, at the budget lowered by the tokens the deletion saved (a trimmer's
    choice depends on the room left); never below 1 or the manager's
    ``min_budget``."""
    best: list[_Found] = [f]

    def still_fails(conv: Any) -> bool:
        cur = best[0]
        try:
            floor = max(1, mgr.min_budget(conv))
            saved = count(cur.conversation) - count(conv)
        except Exception:  # noqa: BLE001 - a conversation the manager cannot even size
            return False
        tries = [cur.budget] if fixed_budgets else list(dict.fromkeys(
            [cur.budget, cur.budget - saved]))
        for budget in tries:
            if budget < floor:
                continue
            found = evaluate(mgr, conv, budget, count, protocol, strict=strict, timeout=timeout,
                             pinned=pinned)
            if f.name in found:
                msg, out = found[f.name]
                best[0] = _FOUND[f.name](f.name, msg, conv, budget, out)
                return True
        return False

    minimize(f.conversation, protocol, still_fails)
    return best[0]


def check(
    manager: Any,
    *,
    protocol: str = "openai",
    budgets: Sequence[int] | int | None = None,
    examples: int = 200,
    seed: int = 0,
    counter: Any = None,
    timeout: float = DEFAULT_TIMEOUT,
    strict: bool = False,
    pinned: str = "system",
) -> ConformanceReport:
    """Check a context manager against the paper's workspace invariants.

    Hypothesis generates ``examples`` valid conversations
    (:func:`~vistalab.conformance.conversations`) and budgets near their
    boundaries, above and below the pinned floor
    (:func:`~vistalab.conformance.budgets`); the manager runs on each (twice,
    for determinism) and every output is checked for the invariants
    ``budget``, ``protocol``, ``pinned``, ``fidelity``, ``recoverability``,
    ``crash`` and ``determinism`` (statements and sources in
    :data:`vistalab.workspace.INVARIANTS`), each through the checks of
    :data:`~vistalab.conformance.CHECKS`. Each broken check is shrunk to a
    minimal counterexample and run once more to confirm it, so two different
    bugs of one invariant are both reported. A pass is evidence on the
    sampled conversations, not a proof.

    The pinned-prefix rule: the system prompt is pinned (``pinned="system"``,
    as the paper pins protocol-required blocks). At every budget at or above
    the pinned floor (:func:`~vistalab.conformance.pinned_floor`: the pinned
    messages plus the last user turn) the manager must send a valid,
    non-empty request that keeps the pinned messages; below it the manager
    refuses by raising :class:`~vistalab.conformance.BudgetTooSmall` (or a
    type it declares in ``refuses``), and anything it sends there instead is
    checked like any request (an empty one is ``budget.empty``).

    Parameters
    ----------
    manager : callable
        A trimmer ``manager(messages, budget, count) -> messages`` or an
        adapter factory ``factory(budget) -> ManagerAdapter`` (a class works).
    protocol : {"openai", "anthropic", "responses", "gemini"}
        The wire format of inputs and outputs.
    budgets : int or sequence of int, optional
        Budgets to use; default: drawn near each conversation's boundaries,
        never below its smallest valid tail or the manager's ``min_budget``.
    examples : int
        Conversations to generate.
    seed : int
        Hypothesis seed (the same seed gives the same conversations).
    counter : None, str, Tokenizer or callable
        The token counter (default cl100k_base through
        :func:`vistalab.workspace.count_request_tokens`).
    timeout : float
        Seconds one run on one conversation may take before the manager is
        declared hung.
    strict : bool
        Also check the stricter adjacency rules (see
        :func:`~vistalab.conformance.request_problems`; every conversation
        the suite generates has a strict-valid request at every budget at or
        above its pinned floor).
    pinned : {"system", "none"}
        ``"system"`` (default): the system prompt is pinned; ``"none"``: for
        managers that may drop it (the floor is then the last user turn alone).

    Returns
    -------
    ConformanceReport

    Raises
    ------
    ManagerSignatureError
        ``manager`` has neither accepted signature, or its ``min_budget``
        hook fails or returns no valid budget.
    ManagerTimeoutError
        A run took longer than ``timeout`` (the manager hangs).
    ManagerOutputError
        An output is not JSON data or holds more than
        :data:`~vistalab.conformance.MAX_OUTPUT_CHARS` characters.
    DomainError
        Any other bad argument.

    Notes
    -----
    This runs the manager in the calling process, under a thread timeout: a
    manager that calls ``os._exit``, or holds the interpreter lock, takes the
    caller with it. ``vista-lab conformance`` runs it in a child process it
    watches instead (``docs/guide/conformance.md``, "Isolation").
    """
    mgr, protocol, bud, examples, seed, count, timeout, strict, pinned = _check_iv(
        manager, protocol, budgets, examples, seed, counter, timeout, strict, pinned
    )
    known: dict[str, _Found] = {}
    tried = 0
    stop: list[BaseException] = []
    last: dict[str, _Found] = {}

    convs = conversations(protocol)
    # built once, not per example (the same strategy draws the same budgets)
    fixed = st.sampled_from(bud) if bud is not None else None

    # Hypothesis's shrinker may run the manager thousands of times on a large
    # counterexample; after SHRINK_RUNS runs the run ends (_ShrinkSpent) with the
    # smallest failure of each check found so far, and the deletion pass of
    # _minimal finishes the job.
    shrink_runs = 0
    failing: dict[str, tuple[tuple[int, str], _Found]] = {}

    def one(data: Any) -> None:
        nonlocal tried, shrink_runs
        if stop:
            raise _Hang()
        conv = data.draw(convs, label="conversation")
        if fixed is not None:
            budget = data.draw(fixed, label="budget")
        else:
            try:
                floor = mgr.min_budget(conv)
            except _STOPS as exc:
                stop.append(exc)
                raise _Hang() from None
            budget = data.draw(budget_strategy(conv, count, protocol, at_least=floor,
                                               pinned=pinned), label="budget")
        if failing and shrink_runs >= SHRINK_RUNS:
            raise _ShrinkSpent()
        tried += 1
        if failing:
            shrink_runs += 1
        try:
            found = evaluate(mgr, conv, budget, count, protocol, strict=strict, timeout=timeout,
                             pinned=pinned)
        except _STOPS as exc:
            stop.append(exc)
            raise _Hang() from None
        for name in _ORDER:
            if name in found and name not in known:
                msg, out = found[name]
                err = _FOUND[name](name, msg, conv, budget, out)
                last[name] = err
                key = _case_key(conv, budget)
                size = (len(key), key)
                if name not in failing or size < failing[name][0]:
                    failing[name] = (size, err)
                raise err

    test = given(st.data())(one)
    test = hypothesis_seed(seed)(test)
    test = settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=False,
        phases=(Phase.generate, Phase.shrink),
        report_multiple_bugs=True,
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        print_blob=False,
    )(test)
    with seed_only():
        while len(known) < len(_ORDER):
            new: list[_Found] = []
            before = set(last)
            shrink_runs = 0
            failing.clear()
            try:
                try:
                    test()
                except BaseExceptionGroup as exc:
                    # Hypothesis groups an exception that ends a run among several
                    # failures' replays: the budget's end is still the run's end.
                    if exc.subgroup(_ShrinkSpent) is None:
                        raise
                    raise _ShrinkSpent() from None
            except _ShrinkSpent:
                new = [f for _, f in failing.values()]
            except _Hang:
                raise stop[0] from None
            except Flaky as exc:
                new = _collect(exc) or [last[n] for n in set(last) - before]
            except BaseExceptionGroup as exc:
                if stop:
                    raise stop[0] from None
                new = _collect(exc)
            except _Found as exc:
                new = [exc]
            if stop:
                raise stop[0]
            new = [f for f in new if f.name not in known]
            if not new:
                break
            for f in new:
                known[f.name] = f
    violations = []
    for name in _ORDER:
        if name not in known:
            continue
        f = _minimal(mgr, known[name], count, protocol, strict, timeout,
                     fixed_budgets=bud is not None, pinned=pinned)
        try:
            again = evaluate(mgr, f.conversation, f.budget, count, protocol, strict=strict,
                             timeout=timeout, pinned=pinned)
        except _STOPS:
            again = {}
        violations.append(Violation(
            invariant=check_info(name).invariant, message=f.message, budget=f.budget,
            conversation=f.conversation, output=f.output, protocol=protocol,
            confirmed=name in again, check=name, pinned=pinned,
            declarations=_declarations(mgr, f, count, protocol, timeout),
            counter=_counter_name(counter),
        ))
    return ConformanceReport(
        ok=not violations,
        violations=tuple(violations),
        conversations=tried,
        seed=seed,
        protocol=protocol,
        strict=strict,
        budgets=bud,
        examples=examples,
        timeout=timeout,
        counter=count.name,
        manager=mgr.name,
        pinned=pinned,
    )


def _counter_name(counter: Any) -> str | None:
    """The tokenizer name a case file records (None: the default, or a callable
    that no file can name)."""
    from vistalab.workspace import Tokenizer

    if isinstance(counter, str):
        return counter
    if isinstance(counter, Tokenizer):
        return str(counter.name)
    return None


def _declarations(mgr: _Manager, f: _Found, count: SuiteCounter, protocol: str,
                  timeout: float) -> tuple[dict[str, Any], ...]:
    """What the manager's ``placeholder`` hook declares about the units of its
    output on the counterexample (empty without the hook, or when the manager
    raises there): saved in the case file so a replay without the manager
    judges fidelity as the run did."""
    from ._checks import _units

    if f.output is None:
        return ()
    try:
        run = mgr.run(f.conversation, f.budget, count, protocol, timeout)
        if run.placeholder is None:
            return ()
        found = []
        for unit in _units(run.output, protocol):
            ids = run.placeholder(unit)
            if ids is not None:
                found.append({"unit": _plain(unit), "payloads": list(ids)})
    except Exception:  # noqa: BLE001 - the manager fails here: nothing declared
        return ()
    return tuple(found)


def replay(
    violation: Violation,
    manager: Any = None,
    *,
    counter: Any = None,
    timeout: float = DEFAULT_TIMEOUT,
    strict: bool = False,
) -> dict[str, str]:
    """Check a counterexample again: ``{check id: message}`` for every check
    broken (ids of :data:`~vistalab.conformance.CHECKS`).

    Without ``manager``, the recorded output is checked against the checks
    that need no manager (``budget``, ``protocol``, ``pinned``, ``fidelity``,
    ``batch``, ``coupling``, ``closure``, ``pending``);
    with one, the manager runs on the recorded conversation and budget and
    every check is made on what it returns now. The pinned rule is the one the
    counterexample was found under (:attr:`Violation.pinned`).

    Parameters
    ----------
    violation : Violation
        The counterexample (e.g. from :func:`read_violation`).
    manager : callable, optional
        A trimmer or adapter factory to run on it again.
    counter : None, str, Tokenizer or callable
        The token counter, as for :func:`check`.
    timeout : float
        Seconds one run may take.
    strict : bool
        Also check the stricter adjacency rules.

    Returns
    -------
    dict
        ``{check id: message}`` for every check broken (empty: none).

    Raises
    ------
    DomainError
        A ``crash``, ``determinism`` or ``budget.refused`` counterexample without
        ``manager``.
    ManagerTimeoutError
        The manager hangs.
    """
    if not isinstance(violation, Violation):
        raise DomainError("violation", violation, "must be a Violation",
                          "read a counterexample file with read_violation(path)")
    protocol = violation.protocol
    count = as_counter(counter if counter is not None else violation.counter, protocol)
    if manager is not None:
        mgr = as_manager(manager)
        found = evaluate(mgr, violation.conversation, violation.budget, count, protocol,
                         strict=strict, timeout=timeout, pinned=violation.pinned)
        return {name: found[name][0] for name in _ORDER if name in found}
    out = violation.output
    if violation.invariant in ("crash", "determinism") or violation.check == "budget.refused":
        raise DomainError(
            "manager", None,
            f"is needed to check a {violation.check} counterexample again (there is no "
            "single recorded output to check)",
            "pass the manager that produced it",
        )
    checks = _output_checks(violation.conversation, out, violation.budget, count, protocol,
                            strict=strict, pinned=violation.pinned,
                            placeholder=violation.placeholder if violation.declarations else None)
    broken: dict[str, str] = {}
    for name, problems in checks:
        for problem in problems:
            broken.setdefault(classify(name, problem), problem)
    return {cid: broken[cid] for cid in _ORDER if cid in broken}
