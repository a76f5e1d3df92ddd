"""What the suite checks: a *manager* is a plain trimmer function or a factory of
stateful adapters (:class:`ManagerAdapter`), validated once at the door, then
run on one conversation at a time under a per-call timeout."""

from __future__ import annotations

import copy
import inspect
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from vistalab._core import DomainError, VistaLabError

__all__ = [
    "Counter",
    "Trimmer",
    "AdapterFactory",
    "ManagerAdapter",
    "ManagerSignatureError",
    "ManagerTimeoutError",
    "Run",
    "BudgetTooSmall",
    "as_manager",
]

#: The suite's token counter as handed to a trimmer: ``count(messages) -> int``
#: (a list of OpenAI messages, or an Anthropic ``{"system", "messages"}``
#: document / message list).
Counter = Callable[[Any], int]
#: A plain trimmer: ``manager(messages, budget, count) -> messages``.
Trimmer = Callable[[Any, int, Counter], Any]


@runtime_checkable
class ManagerAdapter(Protocol):
    """A stateful context manager, seen through a small adapter.

    The suite builds one adapter per conversation with ``factory(budget)``,
    registers the conversation's messages one by one in order (a system
    prompt first, as ``{"role": "system", "content": ...}``, in both formats),
    then asks for one rendering.

    Methods
    -------
    register(message) -> None
        Required. Take one input message (an OpenAI chat message, or an
        Anthropic message ``{"role", "content"}``).
    render(budget) -> output
        Required. The request the manager would send now: a list of OpenAI
        messages, or an Anthropic ``{"system", "messages"}`` document.
    begin(protocol) -> None
        Optional. Called once before the first message with the
        conversation's wire format (``"openai"`` or ``"anthropic"``).
    placeholder(unit) -> tuple of str, or None
        Optional. Declares a unit of the output (an OpenAI message; for Anthropic a
        ``{"role", "block"}`` pair, the system prompt's blocks having role
        ``"system"``) that is not passed-through input: None for ordinary
        content, else the ids of the payloads it stands for (empty for a
        dashboard, a summary or a protocol notice). The fidelity invariant
        exempts declared units; recoverability checks their ids.
    recover(id) -> bytes
        Optional. The exact bytes behind a payload id a placeholder declared.
    min_budget(conversation) -> int
        Optional. The least budget the manager supports for this conversation (e.g. its
        pinned content plus fixed overhead); the suite draws budgets at and
        above it. A trimmer function may carry this attribute, and
        ``placeholder`` and ``recover``, too.

    Below the pinned floor (the pinned messages plus the conversation's last
    user turn, :func:`~vistalab.conformance.pinned_floor`) no valid request
    keeps the pinned messages: there the manager refuses by raising
    :class:`BudgetTooSmall`, or an exception type it declares in a
    ``refuses`` attribute (an exception class or a tuple of them, on the
    trimmer function or the factory), from ``render`` or from the factory.
    """

    def register(self, message: Any) -> None:
        """Take one input message, in order (the system prompt first).

        Parameters
        ----------
        message : dict
            An OpenAI chat message, or an Anthropic message ``{"role", "content"}``
            (a system prompt as ``{"role": "system", "content": ...}``).
        """

    def render(self, budget: int) -> Any:
        """The request the manager would send now.

        Parameters
        ----------
        budget : int
            The token budget B the request must fit.

        Returns
        -------
        list or dict
            A list of OpenAI messages, or an Anthropic ``{"system", "messages"}``
            document.

        Raises
        ------
        BudgetTooSmall
            Below the pinned floor, where no valid request keeps the pinned
            messages (or an exception type the manager declares in ``refuses``).
        """


#: A factory of adapters: ``factory(budget) -> ManagerAdapter`` (a class works).
AdapterFactory = Callable[[int], ManagerAdapter]


class BudgetTooSmall(VistaLabError, ValueError):
    """A manager's refusal: no valid request that keeps the pinned messages fits
    the budget.

    Raise it (from a trimmer, an adapter's ``render`` or its factory) below the
    pinned floor, :func:`~vistalab.conformance.pinned_floor`; the suite counts
    a refusal there as correct, and one at or above the floor as the violation
    ``budget.refused``.

    Parameters
    ----------
    budget : int
        The budget that is too small.
    floor : int, optional
        The least budget that would do, when the manager knows it.

    Attributes
    ----------
    budget : int
    floor : int or None
    """

    def __init__(self, budget: int, floor: int | None = None) -> None:
        self.budget = budget
        self.floor = floor
        need = f"; it needs at least {floor:,}" if floor is not None else ""
        super().__init__(f"budget {budget:,} is too small for the pinned messages and the last "
                         f"user turn{need}")


class ManagerSignatureError(DomainError):
    """The manager is neither a trimmer ``(messages, budget, count)`` nor an
    adapter factory ``(budget)``."""


class ManagerTimeoutError(VistaLabError, TimeoutError):
    """The manager did not return within the per-call timeout (it hangs).

    Attributes
    ----------
    manager : str
    timeout : float
        Seconds allowed per call.
    """

    def __init__(self, manager: str, timeout: float) -> None:
        self.manager = manager
        self.timeout = timeout
        super().__init__(
            f"manager {manager} did not return within the per-call timeout of {timeout:g} s "
            "(it hangs, or needs a longer --timeout)"
        )


def _required_positional(fn: Any) -> int | None:
    """How many positional arguments ``fn`` takes when called with three or one;
    None when its signature cannot be read (C callables)."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None
    params = list(sig.parameters.values())
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return None
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = [p for p in positional if p.default is p.empty]
    kw_required = [
        p for p in params if p.kind is p.KEYWORD_ONLY and p.default is p.empty
    ]
    if kw_required:
        return -1
    if len(required) <= 3 <= len(positional):
        return 3
    if len(required) <= 1 <= len(positional):
        return 1
    return -1


def _name(fn: Any) -> str:
    mod = getattr(fn, "__module__", None) or ""
    qual = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    return f"{mod}:{qual}" if mod else str(qual)


@dataclass(frozen=True)
class Run:
    """What one run of the manager on one conversation produced."""

    output: Any
    placeholder: Callable[[Any], Sequence[str] | None] | None
    recover: Callable[[str], bytes] | None


class _Manager:
    """A validated manager: runs it on one conversation, under the timeout."""

    def __init__(self, fn: Any, kind: str, name: str,
                 refuses: tuple[type[BaseException], ...] = (BudgetTooSmall,)) -> None:
        self.fn = fn
        self.kind = kind  # "trimmer" or "adapter"
        self.name = name
        #: the exception types that mean "this budget is too small" (a refusal)
        self.refuses = refuses

    def min_budget(self, conversation: Any) -> int:
        hook = getattr(self.fn, "min_budget", None)
        if callable(hook):
            return int(hook(copy.deepcopy(conversation)))
        return 0

    def _once(self, conversation: Any, budget: int, count: Counter, protocol: str) -> Run:
        conv = copy.deepcopy(conversation)
        if self.kind == "trimmer":
            # a trimmer that summarises or archives declares it with attributes
            ph = getattr(self.fn, "placeholder", None)
            rec = getattr(self.fn, "recover", None)
            return Run(self.fn(conv, budget, count), ph if callable(ph) else None,
                       rec if callable(rec) else None)
        adapter = self.fn(budget)
        begin = getattr(adapter, "begin", None)
        if callable(begin):
            begin(protocol)
        if protocol == "anthropic":
            system = conv.get("system")
            if system is not None:
                adapter.register({"role": "system", "content": system})
            messages = conv.get("messages", [])
        else:
            messages = conv
        for m in messages:
            adapter.register(m)
        out = adapter.render(budget)
        ph = getattr(adapter, "placeholder", None)
        rec = getattr(adapter, "recover", None)
        return Run(out, ph if callable(ph) else None, rec if callable(rec) else None)

    def run(
        self, conversation: Any, budget: int, count: Counter, protocol: str, timeout: float
    ) -> Run:
        """One run; raises what the manager raised, or :class:`ManagerTimeoutError`."""
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                box["run"] = self._once(conversation, budget, count, protocol)
            except BaseException as exc:  # noqa: BLE001 - reported as a crash
                box["error"] = exc

        # A daemon thread: a manager that hangs cannot be interrupted, only left
        # behind (the check stops with ManagerTimeoutError).
        t = threading.Thread(target=target, name="vista-lab-conformance-call", daemon=True)
        t.start()
        t.join(timeout)
        if t.is_alive():
            raise ManagerTimeoutError(self.name, timeout)
        if "error" in box:
            raise box["error"]
        return box["run"]  # type: ignore[no-any-return]


def as_manager(manager: Any) -> _Manager:
    """Validate ``manager`` at the door.

    Raises
    ------
    ManagerSignatureError
        If it is not callable, or takes neither three positional arguments
        (a trimmer) nor one (an adapter factory).
    """
    if isinstance(manager, ManagerAdapter) and not isinstance(manager, type):
        raise ManagerSignatureError(
            "manager", _name(manager),
            "must be a trimmer function or an adapter factory, not an adapter instance "
            "(each conversation needs a fresh one)",
            "pass the adapter's class, or a function budget -> adapter",
        )
    if not callable(manager):
        raise ManagerSignatureError(
            "manager", _name(manager),
            "must be callable: manager(messages, budget, count) -> messages, or "
            "factory(budget) -> adapter",
            "pass a function or an adapter class",
        )
    arity = _required_positional(manager)
    if arity == 3 and not isinstance(manager, type):
        kind = "trimmer"
    elif arity == 1:
        kind = "adapter"
    elif arity is None:
        kind = "trimmer"  # C callables: assume the common trimmer form
    else:
        raise ManagerSignatureError(
            "manager", _name(manager),
            "must take (messages, budget, count) (a trimmer) or (budget) (an adapter "
            "factory) as positional arguments, with no required keyword-only argument",
            "wrap it: lambda messages, budget, count: my_trim(messages, max_tokens=budget)",
        )
    if kind == "adapter":
        _probe_factory(manager)
    return _Manager(manager, kind, _name(manager), _refusals(manager))


def _refusals(manager: Any) -> tuple[type[BaseException], ...]:
    """:class:`BudgetTooSmall` and the refusal types ``manager`` declares in
    its ``refuses`` attribute."""
    declared = getattr(manager, "refuses", None)
    if declared is None:
        return (BudgetTooSmall,)
    items = declared if isinstance(declared, tuple) else (declared,)
    if not items or not all(isinstance(t, type) and issubclass(t, Exception) for t in items):
        raise ManagerSignatureError(
            "manager.refuses", declared,
            "must be an exception class or a tuple of exception classes (the types the "
            "manager raises to refuse a budget below its pinned floor)",
            "set e.g. my_trim.refuses = (MyBudgetError,), or raise "
            "vistalab.conformance.BudgetTooSmall and drop the attribute",
        )
    return (BudgetTooSmall, *items)


#: The budget the door check builds one adapter with.
_PROBE_BUDGET = 100_000


def _probe_factory(factory: Any) -> None:
    """A one-argument callable is taken for an adapter factory: build one
    adapter at the door, so a trimmer with a wrong signature is refused
    there instead of being reported as crashing on every conversation."""
    why = ""
    try:
        adapter = factory(_PROBE_BUDGET)
    except Exception as exc:  # noqa: BLE001 - any failure means it is not a factory
        why = f"raised {type(exc).__name__}: {str(exc)[:120]}"
    else:
        if not isinstance(adapter, ManagerAdapter):
            why = (f"returned {type(adapter).__name__!r}, not an adapter with register() and "
                   "render()")
    if why:
        raise ManagerSignatureError(
            "manager", _name(factory),
            f"takes one argument, so it was called as an adapter factory factory(budget), and "
            f"it {why}",
            "a trimmer takes (messages, budget, count); a factory returns an object with "
            "register(message) and render(budget)",
        )


def deep_equal(a: Any, b: Any) -> bool:
    """Equality of plain data, treating tuples as lists (frozen renderings)."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(deep_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(deep_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(type(a) is type(b) and a == b) or (
        isinstance(a, (int, float)) and isinstance(b, (int, float))
        and not isinstance(a, bool) and not isinstance(b, bool) and a == b
    )
