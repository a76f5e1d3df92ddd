"""What the suite checks: a *manager* is a plain trimmer function or a factory of
stateful adapters (:class:`ManagerAdapter`), validated once at the door, then
run on one conversation at a time under a per-call timeout."""

from __future__ import annotations

import copy
import inspect
import queue
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
    "ManagerOutputError",
    "ManagerProcessError",
    "MAX_OUTPUT_CHARS",
    "as_manager",
    "safe_str",
]

#: The most characters (string and bytes lengths, plus one per container item) one
#: output of the manager may hold; a larger one stops the check
#: (:class:`ManagerOutputError`) before any check reads it. The suite's
#: conversations are far smaller, so a request that large is never a trimmed one.
MAX_OUTPUT_CHARS = 8_000_000
#: How deeply one output may nest (a request is a few levels deep).
MAX_OUTPUT_DEPTH = 64

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
        conversation's wire format (``"openai"``, ``"anthropic"``,
        ``"responses"`` or ``"gemini"``; a Gemini conversation is registered as
        its ``systemInstruction`` as ``{"role": "system", "parts": [...]}``, then
        each content).
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


class ManagerOutputError(VistaLabError, ValueError):
    """One output of the manager cannot be checked: it is not JSON data (an
    object of another type, a container that cannot be read, nesting deeper
    than :data:`MAX_OUTPUT_DEPTH`) or holds more than :data:`MAX_OUTPUT_CHARS`
    characters. The check stops there; no check ever calls the manager's own
    ``__eq__``, ``__str__`` or ``__iter__``.

    Attributes
    ----------
    manager : str
    why : str
        What is wrong with the output, in one sentence.
    """

    def __init__(self, manager: str, why: str) -> None:
        self.manager = manager
        self.why = why
        super().__init__(f"manager {manager} returned an output the suite cannot check: "
                         f"{why} (the conformance check stops there)")


class ManagerProcessError(VistaLabError, RuntimeError):
    """The isolated process that ran the manager ended without a verdict: the
    manager (or its import) exited, was killed, held the interpreter past the
    per-call timeout, or did not import within the import timeout.

    Attributes
    ----------
    manager : str
        The manager's spec.
    what : str
        What happened, in one sentence.
    """

    def __init__(self, manager: str, what: str) -> None:
        self.manager = manager
        self.what = what
        super().__init__(f"manager {manager}: {what}")


def safe_str(obj: Any, limit: int = 300) -> str:
    """``str(obj)`` on one line, at most ``limit`` characters, never raising (an
    object whose ``__str__`` raises or returns a non-string is named by type)."""
    try:
        text = str(obj)
        if type(text) is not str:
            raise TypeError
    except BaseException:  # noqa: BLE001 - a hostile __str__ is reported, not raised
        try:
            text = f"<{type(obj).__name__} object whose str() fails>"
        except BaseException:  # noqa: BLE001
            text = "<an object whose str() fails>"
    text = " ".join(text[: limit * 4].split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def raised(exc: BaseException) -> str:
    """``"Type: message"`` for an exception the manager raised (never raising)."""
    if isinstance(exc, _Escaped):
        return exc.what
    try:
        name = type(exc).__name__
        if type(name) is not str:
            raise TypeError
    except BaseException:  # noqa: BLE001
        name = "an exception"
    return f"{name}: {safe_str(exc)}"


class _Escaped(Exception):
    """A ``BaseException`` the manager raised (``SystemExit``, ``KeyboardInterrupt``,
    ``GeneratorExit``), carried as an ordinary exception so it is a crash."""

    def __init__(self, exc: BaseException) -> None:
        self.what = f"{type(exc).__name__}: {safe_str(exc)}"
        super().__init__(self.what)


_SCALARS = (str, int, float, bool, type(None))


def plain_output(out: Any, manager: str, limit: int = MAX_OUTPUT_CHARS) -> Any:
    """A copy of ``out`` made only of ``dict``, ``list``, ``str``, ``int``,
    ``float``, ``bool`` and ``None`` (tuples become lists; subclasses of the
    scalar types become the base type without calling their methods; mapping
    keys must be strings), so no check ever calls the manager's ``__eq__``,
    ``__str__`` or ``__iter__``.

    Raises
    ------
    ManagerOutputError
        ``out`` holds anything else (named with its path), or more than
        ``limit`` characters.
    """
    left = limit

    def over() -> ManagerOutputError:
        return ManagerOutputError(manager, f"it holds more than {limit:,} characters (no "
                                  "trimmed request is that large)")

    def bad(why: str) -> ManagerOutputError:
        return ManagerOutputError(manager, why)

    def where(path: Any) -> str:
        # a path is linked, (parent, key), so a step costs one pair, not a copy
        keys: list[Any] = []
        while path:
            path, k = path
            keys.append(k)
        keys.reverse()
        return "the output" + "".join(f"[{p!r}]" for p in keys[:8]) + (
            "..." if len(keys) > 8 else "")

    def walk(x: Any, path: Any, depth: int) -> Any:
        nonlocal left
        if depth > MAX_OUTPUT_DEPTH:
            raise bad(f"{where(path)} is nested more than {MAX_OUTPUT_DEPTH} levels deep (a "
                      "request is a few levels deep)")
        t = type(x)
        if t is str:
            left -= len(x)
            if left < 0:
                raise over()
            return x
        if t is bool or x is None or t is int or t is float:
            left -= 1
            if left < 0:
                raise over()
            return x
        if isinstance(x, str):
            left -= str.__len__(x)
            if left < 0:
                raise over()
            return str.__getitem__(x, slice(None))
        if isinstance(x, bool):
            left -= 1
            if left < 0:
                raise over()
            return bool(int.__index__(x))
        if isinstance(x, int):
            left -= 1
            if left < 0:
                raise over()
            return int.__index__(x) + 0
        if isinstance(x, float):
            left -= 1
            if left < 0:
                raise over()
            return float.__float__(x)
        try:
            if t is dict or isinstance(x, dict) or isinstance(x, Mapping):
                items = list(dict.items(x) if isinstance(x, dict) else x.items())
                left -= len(items)
                if left < 0:
                    raise over()
                copy_: dict[str, Any] = {}
                for k, v in items:
                    if type(k) is not str:
                        if not isinstance(k, str):
                            raise bad(f"{where(path)} has a key of type {type(k).__name__}, "
                                      "not a string")
                        k = str.__getitem__(k, slice(None))
                    left -= len(k)
                    if left < 0:
                        raise over()
                    copy_[k] = walk(v, (path, k), depth + 1)
                return copy_
            if t is list or isinstance(x, (list, tuple)):
                seq = list(list.__iter__(x) if isinstance(x, list) else tuple.__iter__(x))
                left -= len(seq)
                if left < 0:
                    raise over()
                return [walk(v, (path, i), depth + 1) for i, v in enumerate(seq)]
        except ManagerOutputError:
            raise
        except BaseException as exc:  # noqa: BLE001 - a hostile container
            raise bad(f"{where(path)} is a {t.__name__} that cannot be read "
                      f"({raised(exc)})") from None
        raise bad(f"{where(path)} is a {t.__name__} object, not JSON data (a request holds "
                  "only objects, lists, strings, numbers, booleans and null; return plain "
                  "dicts and lists)")

    return walk(out, (), 0)


def _required_positional(fn: Any) -> int | None:
    """How many positional arguments ``fn`` takes when called with three or one;
    None when its signature cannot be read (C callables)."""
    try:
        sig = inspect.signature(fn)
    except Exception:  # noqa: BLE001 - C callables, or a hostile __signature__
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
    def text(attr: str) -> str:
        try:
            value = getattr(fn, attr, None)
        except BaseException:  # noqa: BLE001 - a hostile __getattr__
            return ""
        return str.__getitem__(value, slice(None))[:200] if isinstance(value, str) else ""

    mod, qual = text("__module__"), text("__qualname__") or type(fn).__qualname__
    return f"{mod}:{qual}" if mod else qual


@dataclass(frozen=True)
class Run:
    """What one run of the manager on one conversation produced."""

    output: Any
    placeholder: Callable[[Any], Sequence[str] | None] | None
    recover: Callable[[str], bytes] | None


#: Called with ``"call"`` before and ``"ret"`` after every run of the manager's
#: own code (set by the isolated runner, whose parent process watches the time).
_WATCH: list[Callable[[str], None]] = []


def _watch(event: str) -> None:
    for hook in _WATCH:
        hook(event)


def _guarded_placeholder(fn: Callable[[Any], Any], manager: str) -> Callable[[Any], Any]:
    """``placeholder(unit)`` whose answer is None or a tuple of strings, and whose
    failure is a crash of the manager (:class:`ManagerHookError`)."""

    def placeholder(unit: Any) -> tuple[str, ...] | None:
        _watch("call")
        try:
            ids = fn(copy.deepcopy(unit))
            if ids is None:
                return None
            if isinstance(ids, (str, bytes)):
                raise TypeError(f"returned a {type(ids).__name__}, not a tuple of ids")
            items = plain_output(list(ids), manager)
        except ManagerOutputError as exc:
            raise ManagerHookError(f"placeholder(unit) returned ids that are not strings "
                                   f"({exc.why})") from None
        except BaseException as exc:  # noqa: BLE001 - reported as a crash
            raise ManagerHookError(f"placeholder(unit) failed ({raised(exc)})") from None
        finally:
            _watch("ret")
        if not all(type(i) is str for i in items):
            raise ManagerHookError("placeholder(unit) must return None or a tuple of payload "
                                   "ids (strings)")
        return tuple(items)

    return placeholder


def _guarded_recover(fn: Callable[[str], Any]) -> Callable[[str], Any]:
    """``recover(id)`` whose answer is exact ``bytes`` (anything else is named by
    its type, never compared), and whose failure is an ordinary exception."""

    def recover(pid: str) -> Any:
        _watch("call")
        try:
            data = fn(pid)
            if isinstance(data, (bytes, bytearray)):
                return bytes(memoryview(data))
            return f"<{type(data).__name__}>"
        except Exception as exc:  # noqa: BLE001
            raise ManagerHookError(raised(exc)) from None
        except BaseException as exc:  # noqa: BLE001 - SystemExit inside the manager
            raise ManagerHookError(raised(exc)) from None
        finally:
            _watch("ret")

    return recover


class ManagerHookError(Exception):
    """A manager's ``placeholder`` or ``recover`` hook failed (a crash)."""


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
        """The manager's ``min_budget(conversation)`` hook (0 without one),
        checked: a non-negative integer below 10**12."""
        hook = getattr(self.fn, "min_budget", None)
        if not callable(hook):
            return 0
        _watch("call")
        try:
            value = hook(copy.deepcopy(conversation))
        except BaseException as exc:  # noqa: BLE001 - the manager's hook, not the suite
            raise ManagerSignatureError(
                "manager.min_budget", self.name, f"raised {raised(exc)}",
                "min_budget(conversation) must return the least budget the manager "
                "supports, or drop the attribute") from None
        finally:
            _watch("ret")
        if isinstance(value, bool) or not isinstance(value, int) or not (
                0 <= int.__index__(value) < 10**12):
            raise ManagerSignatureError(
                "manager.min_budget", self.name,
                f"returned {safe_str(value, 60)} ({type(value).__name__}); it must return a "
                "non-negative integer below 10**12",
                "return the least budget the manager supports, e.g. the pinned messages' "
                "tokens")
        return int.__index__(value)

    def _once(self, conversation: Any, budget: int, count: Counter, protocol: str) -> Run:
        conv = _copy(conversation)
        if self.kind == "trimmer":
            # a trimmer that summarises or archives declares it with attributes
            ph = getattr(self.fn, "placeholder", None)
            rec = getattr(self.fn, "recover", None)
            return self._run(self.fn(conv, budget, count), ph, rec)
        adapter = self.fn(budget)
        begin = getattr(adapter, "begin", None)
        if callable(begin):
            begin(protocol)
        if protocol == "anthropic":
            system = conv.get("system")
            if system is not None:
                adapter.register({"role": "system", "content": system})
            messages = conv.get("messages", [])
        elif protocol == "gemini":
            si = conv.get("systemInstruction")
            if si is not None:
                adapter.register({"role": "system", "parts": si.get("parts", [])})
            messages = conv.get("contents", [])
        else:
            messages = conv
        for m in messages:
            adapter.register(m)
        out = adapter.render(budget)
        return self._run(out, getattr(adapter, "placeholder", None),
                         getattr(adapter, "recover", None))

    def _run(self, out: Any, ph: Any, rec: Any) -> Run:
        return Run(plain_output(out, self.name),
                   _guarded_placeholder(ph, self.name) if callable(ph) else None,
                   _guarded_recover(rec) if callable(rec) else None)

    def run(
        self, conversation: Any, budget: int, count: Counter, protocol: str, timeout: float
    ) -> Run:
        """One run; raises what the manager raised, or :class:`ManagerTimeoutError`.

        The output is plain JSON data (:func:`plain_output`); anything else
        raises :class:`ManagerOutputError`."""
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                box["run"] = self._once(conversation, budget, count, protocol)
            except BaseException as exc:  # noqa: BLE001 - reported as a crash
                box["error"] = exc

        # One daemon worker thread runs the calls, one at a time (starting a
        # thread per call costs more than a trivial manager's call): a manager
        # that hangs cannot be interrupted, only left behind with its worker (the
        # check stops with ManagerTimeoutError; the next call gets a new worker).
        _watch("call")
        if not _worker().call(target, timeout):
            _abandon_worker()
            raise ManagerTimeoutError(self.name, timeout)
        _watch("ret")
        if "error" in box:
            exc = box["error"]
            if not isinstance(exc, Exception):
                raise _Escaped(exc) from None
            raise exc
        return box["run"]  # type: ignore[no-any-return]


def _copy(obj: Any) -> Any:
    """A deep copy of the suite's own JSON data (the conversations it generates),
    faster than :func:`copy.deepcopy` on dicts, lists and scalars; anything else
    goes through ``deepcopy``."""
    t = type(obj)
    if t is dict:
        return {k: _copy(v) for k, v in obj.items()}
    if t is list:
        return [_copy(v) for v in obj]
    if t is str or t is int or t is float or t is bool or obj is None:
        return obj
    return copy.deepcopy(obj)


class _Worker:
    """A daemon thread that runs one job at a time for :meth:`_Manager.run`."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], None], threading.Event]] = (
            queue.SimpleQueue())
        self.thread = threading.Thread(target=self._loop, name="vista-lab-conformance-call",
                                       daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while True:
            job, done = self._jobs.get()
            try:
                job()
            finally:
                done.set()

    def call(self, job: Callable[[], None], timeout: float) -> bool:
        """Run ``job`` on the worker; False when it did not finish within ``timeout``."""
        done = threading.Event()
        self._jobs.put((job, done))
        return done.wait(timeout)


_WORKERS = threading.local()


def _worker() -> _Worker:
    """This thread's worker (each calling thread has its own, so two checks run
    in two threads never wait on each other)."""
    w = getattr(_WORKERS, "worker", None)
    if w is None or not w.thread.is_alive():
        w = _WORKERS.worker = _Worker()
    return w  # type: ignore[no-any-return]


def _abandon_worker() -> None:
    """Leave a hung worker behind; the next call starts a new one."""
    _WORKERS.worker = None


def as_manager(manager: Any) -> _Manager:
    """Validate ``manager`` at the door.

    Raises
    ------
    ManagerSignatureError
        If it is not callable, or takes neither three positional arguments
        (a trimmer) nor one (an adapter factory).
    """
    try:
        instance = isinstance(manager, ManagerAdapter) and not isinstance(manager, type)
    except Exception:  # noqa: BLE001 - a hostile __getattr__: not an adapter instance
        instance = False
    if instance:
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
    try:
        declared = getattr(manager, "refuses", None)
    except Exception:  # noqa: BLE001 - a hostile __getattr__ declares nothing
        declared = None
    if declared is None:
        return (BudgetTooSmall,)
    try:
        items = tuple(tuple.__iter__(declared)) if isinstance(declared, tuple) else (declared,)
        good = bool(items) and all(isinstance(t, type) and issubclass(t, Exception)
                                   for t in items)
    except Exception:  # noqa: BLE001 - a hostile class hierarchy
        items, good = (), False
    if not good:
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
    _watch("call")
    try:
        adapter = factory(_PROBE_BUDGET)
    except BaseException as exc:  # noqa: BLE001 - any failure means it is not a factory
        why = f"raised {raised(exc)}"
    else:
        try:
            ok = isinstance(adapter, ManagerAdapter)
        except Exception:  # noqa: BLE001 - a hostile __getattr__
            ok = False
        if not ok:
            why = (f"returned {type(adapter).__name__!r}, not an adapter with register() and "
                   "render()")
    finally:
        _watch("ret")
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
