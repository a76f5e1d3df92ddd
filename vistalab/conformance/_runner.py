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

from ._checks import budget_problems, fidelity_problems, recoverability_problems, request_problems
from ._counter import SuiteCounter, as_counter
from ._managers import ManagerTimeoutError, _Manager, as_manager, deep_equal
from ._minimize import minimize
from ._model import CHECKED, ConformanceReport, Violation
from ._strategies import budgets as budget_strategy
from ._strategies import conversations, minimal_tail

__all__ = ["check", "replay", "evaluate", "DEFAULT_TIMEOUT"]

#: Seconds one run of the manager on one conversation may take by default.
DEFAULT_TIMEOUT = 10.0
#: Manager runs Hypothesis's shrinker may spend per pass before it settles for
#: the smallest failure found so far.
SHRINK_RUNS = 80


def _case_key(conversation: Any, budget: int) -> str:
    return json.dumps([conversation, budget], sort_keys=True, default=repr)


def _short(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _plain(obj: Any) -> Any:
    from ._model import _plain as plain

    return plain(obj)


def evaluate(
    mgr: _Manager,
    conversation: Any,
    budget: int,
    count: SuiteCounter,
    protocol: str,
    *,
    strict: bool = False,
    timeout: float = DEFAULT_TIMEOUT,
) -> dict[str, tuple[str, Any]]:
    """Every invariant ``mgr`` breaks on one conversation: ``{name: (message,
    output)}``. Raises :class:`ManagerTimeoutError` when a run hangs."""
    found: dict[str, tuple[str, Any]] = {}
    try:
        run = mgr.run(conversation, budget, count, protocol, timeout)
    except ManagerTimeoutError:
        raise
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the crash invariant
        found["crash"] = (f"the manager raised {type(exc).__name__}: {_short(str(exc))}", None)
        return found
    out = run.output
    checks = (
        ("budget", budget_problems(out, budget, count)),
        ("protocol", request_problems(out, protocol, strict=strict)),
        ("fidelity", fidelity_problems(conversation, out, protocol, placeholder=run.placeholder)),
        ("recoverability", recoverability_problems(
            conversation, out, protocol, placeholder=run.placeholder, recover=run.recover)),
    )
    for name, problems in checks:
        if problems:
            extra = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            found[name] = (problems[0] + extra, out)
    try:
        again = mgr.run(conversation, budget, count, protocol, timeout)
    except ManagerTimeoutError:
        raise
    except (Exception, SystemExit) as exc:  # noqa: BLE001
        found.setdefault("crash", (
            f"the manager raised {type(exc).__name__} on a second run of the same input "
            f"(the first returned): {_short(str(exc))}", out))
        return found
    if not deep_equal(_plain(out), _plain(again.output)):
        found["determinism"] = ("two runs on the same conversation and budget returned "
                                "different outputs", {"first": out, "second": again.output})
    return found


#: Most examples one check draws (Hypothesis' own runs use hundreds).
MAX_EXAMPLES = 1_000_000


def _options_iv(examples: Any, seed: Any, timeout: Any) -> tuple[int, int, float]:
    """``examples``, ``seed`` and ``timeout`` of a check (shared with the study)."""
    if isinstance(examples, bool) or not isinstance(examples, int) or not (
            1 <= examples <= MAX_EXAMPLES):
        raise DomainError("examples", examples, f"must be an integer with 1 <= examples <= "
                          f"{MAX_EXAMPLES:,}", "pass e.g. examples=200")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise DomainError("seed", seed, "must be a non-negative integer", "pass e.g. seed=0")
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not (
        math.isfinite(timeout) and timeout > 0
    ):
        raise DomainError("timeout", timeout, "must be a positive finite number of seconds",
                          f"pass e.g. timeout={DEFAULT_TIMEOUT:g}")
    return examples, seed, float(timeout)


def _check_iv(
    manager: Any, protocol: Any, budgets: Any, examples: Any, seed: Any, counter: Any,
    timeout: Any, strict: Any,
) -> tuple[_Manager, str, tuple[int, ...] | None, int, int, SuiteCounter, float, bool]:
    if protocol not in ("openai", "anthropic"):
        raise DomainError("protocol", protocol, "must be 'openai' or 'anthropic'",
                          "pass protocol='openai' (chat completions) or 'anthropic' (Messages)")
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
            float(timeout), strict)


class _Found(Exception):
    """Raised inside the Hypothesis test for one invariant (one subclass per
    invariant, so Hypothesis shrinks each failure separately)."""

    def __init__(self, name: str, message: str, conversation: Any, budget: int,
                 output: Any) -> None:
        super().__init__(f"{name}: {message}")
        self.name = name
        self.message = message
        self.conversation = conversation
        self.budget = budget
        self.output = output


_FOUND = {name: type(f"_{name.title()}Broken", (_Found,), {}) for name in CHECKED}


class _Hang(Exception):
    pass


def _collect(exc: BaseException) -> list[_Found]:
    if isinstance(exc, _Found):
        return [exc]
    if isinstance(exc, BaseExceptionGroup):
        return [f for e in exc.exceptions for f in _collect(e)]
    return []


def _minimal(
    mgr: _Manager, f: _Found, count: SuiteCounter, protocol: str, strict: bool, timeout: float,
    *, fixed_budgets: bool,
) -> _Found:
    """``f`` after the deletion pass of :func:`minimize`. Each smaller
    conversation is tried at the same budget and, unless the budgets were
    given, at the budget lowered by the tokens the deletion saved (a trimmer's
    choice depends on the room left); never below the conversation's smallest
    valid tail or the manager's ``min_budget``."""
    best: list[_Found] = [f]

    def still_fails(conv: Any) -> bool:
        cur = best[0]
        try:
            floor = max(count(minimal_tail(conv, protocol)), mgr.min_budget(conv))
            saved = count(cur.conversation) - count(conv)
        except Exception:  # noqa: BLE001 - a conversation the manager cannot even size
            return False
        tries = [cur.budget] if fixed_budgets else list(dict.fromkeys(
            [cur.budget, cur.budget - saved]))
        for budget in tries:
            if budget < floor:
                continue
            found = evaluate(mgr, conv, budget, count, protocol, strict=strict, timeout=timeout)
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
) -> ConformanceReport:
    """Check a context manager against the paper's workspace invariants.

    Hypothesis generates ``examples`` valid conversations
    (:func:`~vistalab.conformance.conversations`) and budgets near their
    boundaries (:func:`~vistalab.conformance.budgets`); the manager runs on
    each (twice, for determinism) and every output is checked for the
    invariants ``budget``, ``protocol``, ``fidelity``, ``recoverability``,
    ``crash`` and ``determinism`` (statements and sources in
    :data:`vistalab.workspace.INVARIANTS`). Each broken invariant is shrunk
    to a minimal counterexample and run once more to confirm it. A pass is
    evidence on the sampled conversations, not a proof.

    Parameters
    ----------
    manager : callable
        A trimmer ``manager(messages, budget, count) -> messages`` or an
        adapter factory ``factory(budget) -> ManagerAdapter`` (a class works).
    protocol : {"openai", "anthropic"}
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
        :func:`~vistalab.conformance.request_problems`).

    Returns
    -------
    ConformanceReport

    Raises
    ------
    ManagerSignatureError
        ``manager`` has neither accepted signature.
    ManagerTimeoutError
        A run took longer than ``timeout`` (the manager hangs).
    DomainError
        Any other bad argument.
    """
    mgr, protocol, bud, examples, seed, count, timeout, strict = _check_iv(
        manager, protocol, budgets, examples, seed, counter, timeout, strict
    )
    known: dict[str, _Found] = {}
    tried = 0
    hung = False
    last: dict[str, _Found] = {}

    convs = conversations(protocol)

    # Hypothesis's shrinker may run the manager thousands of times on a large
    # counterexample; after SHRINK_RUNS runs it only re-raises the smallest
    # failure found so far (so the shrink ends, consistently), and the deletion
    # pass of _minimal finishes the job.
    shrink_runs = 0
    failing: dict[str, tuple[str, _Found]] = {}

    def one(data: Any) -> None:
        nonlocal tried, hung, shrink_runs
        if hung:
            raise _Hang()
        conv = data.draw(convs, label="conversation")
        if bud is not None:
            budget = data.draw(st.sampled_from(bud), label="budget")
        else:
            floor = mgr.min_budget(conv)
            budget = data.draw(budget_strategy(conv, count, protocol, at_least=floor),
                               label="budget")
        key = _case_key(conv, budget)
        if failing and shrink_runs >= SHRINK_RUNS:
            for k, f in failing.values():
                if k == key:
                    raise _FOUND[f.name](f.name, f.message, conv, budget, f.output)
            return
        tried += 1
        if failing:
            shrink_runs += 1
        try:
            found = evaluate(mgr, conv, budget, count, protocol, strict=strict, timeout=timeout)
        except ManagerTimeoutError:
            hung = True
            raise _Hang() from None
        for name in CHECKED:
            if name in found and name not in known:
                msg, out = found[name]
                err = _FOUND[name](name, msg, conv, budget, out)
                last[name] = err
                failing[name] = (key, err)
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
    while len(known) < len(CHECKED):
        new: list[_Found] = []
        before = set(last)
        shrink_runs = 0
        failing.clear()
        try:
            test()
        except _Hang:
            raise ManagerTimeoutError(mgr.name, timeout) from None
        except Flaky as exc:
            new = _collect(exc) or [last[n] for n in set(last) - before]
        except BaseExceptionGroup as exc:
            if any(isinstance(e, _Hang) for e in exc.exceptions):
                raise ManagerTimeoutError(mgr.name, timeout) from None
            new = _collect(exc)
        except _Found as exc:
            new = [exc]
        if hung:
            raise ManagerTimeoutError(mgr.name, timeout)
        new = [f for f in new if f.name not in known]
        if not new:
            break
        for f in new:
            known[f.name] = f
    violations = []
    for name in CHECKED:
        if name not in known:
            continue
        f = _minimal(mgr, known[name], count, protocol, strict, timeout,
                     fixed_budgets=bud is not None)
        try:
            again = evaluate(mgr, f.conversation, f.budget, count, protocol, strict=strict,
                             timeout=timeout)
        except ManagerTimeoutError:
            again = {}
        violations.append(Violation(
            invariant=name, message=f.message, budget=f.budget, conversation=f.conversation,
            output=f.output, protocol=protocol, confirmed=name in again,
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
    )


def replay(
    violation: Violation,
    manager: Any = None,
    *,
    counter: Any = None,
    timeout: float = DEFAULT_TIMEOUT,
    strict: bool = False,
) -> dict[str, str]:
    """Check a counterexample again: ``{invariant: message}`` for every
    invariant broken.

    Without ``manager``, the recorded output is checked against the
    invariants that need no manager (``budget``, ``protocol``, ``fidelity``);
    with one, the manager runs on the recorded conversation and budget and
    every invariant is checked on what it returns now.

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
        ``{invariant: message}`` for every invariant broken (empty: none).

    Raises
    ------
    DomainError
        A ``crash`` or ``determinism`` counterexample without ``manager``.
    ManagerTimeoutError
        The manager hangs.
    """
    if not isinstance(violation, Violation):
        raise DomainError("violation", violation, "must be a Violation",
                          "read a counterexample file with read_violation(path)")
    protocol = violation.protocol
    count = as_counter(counter, protocol)
    if manager is not None:
        mgr = as_manager(manager)
        found = evaluate(mgr, violation.conversation, violation.budget, count, protocol,
                         strict=strict, timeout=timeout)
        return {name: found[name][0] for name in CHECKED if name in found}
    out = violation.output
    if violation.invariant in ("crash", "determinism"):
        raise DomainError(
            "manager", None,
            f"is needed to check a {violation.invariant} counterexample again (there is no "
            "single recorded output to check)",
            "pass the manager that produced it",
        )
    checks = (
        ("budget", budget_problems(out, violation.budget, count)),
        ("protocol", request_problems(out, protocol, strict=strict)),
        ("fidelity", fidelity_problems(violation.conversation, out, protocol)),
    )
    return {name: problems[0] for name, problems in checks if problems}
