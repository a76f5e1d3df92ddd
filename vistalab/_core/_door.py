"""The error contract's net at every public door (DESIGN rule 6): when a public
callable fails with a builtin exception and one of its arguments breaks the
documented contract -- not of its annotated type, nested beyond
:data:`~vistalab._core._limits.MAX_JSON_DEPTH`, or a number outside the range a
double represents -- the failure is re-raised as a vista-lab error naming that
argument, its value (bounded repr), the rule and the fix. An exception with no such
argument to blame is a bug and propagates unchanged (the API fuzzer counts it).

The net costs nothing on the success path (one ``try``); each package applies it to
its ``__all__`` with :func:`install_contract`, so a new public name is covered.
Validation proper still happens at each door (the ``_xxx_iv`` helpers); the net
catches what a door forgot, with the same message shape.
"""

from __future__ import annotations

import collections.abc as cabc
import enum
import functools
import inspect
import math
import numbers
import os
import sys
import types
import typing
from collections.abc import Callable
from typing import Any

import numpy as np

from ._errors import DomainError, VistaLabError
from ._limits import MAX_JSON_DEPTH, value_depth

__all__ = ["ArgumentTypeError", "contract", "install_contract", "blame", "unnetted"]

#: What a forgotten door check typically raises.
_NETTED = (TypeError, AttributeError, ValueError, KeyError, IndexError, OverflowError,
           ZeroDivisionError, RecursionError, OSError, UnicodeError)
_FLOAT_RANGE = "the range of a double (magnitudes from about 2.2e-308 to 1.8e308)"


class ArgumentTypeError(DomainError, TypeError):
    """An argument is not of the type the public callable documents (its annotation)."""


class ArgumentRangeError(DomainError, ArithmeticError):
    """A number is outside what the computation can represent (overflow/underflow)."""


def _hints(fn: Callable[..., Any]) -> dict[str, Any]:
    target = inspect.unwrap(fn)
    raw = getattr(target, "__annotations__", None) or {}
    module = sys.modules.get(getattr(target, "__module__", ""), None)
    ns = dict(vars(module)) if module is not None else {}
    out: dict[str, Any] = {}
    for name, ann in raw.items():
        if isinstance(ann, str):
            try:
                ann = eval(ann, ns)  # noqa: S307 - the package's own annotations
            except Exception:  # noqa: BLE001 - a TYPE_CHECKING-only name: not checked
                continue
        out[name] = ann
    return out


def _matches(value: Any, ann: Any, depth: int = 0) -> bool:
    """Whether ``value`` fits the annotation ``ann`` (True when unsure)."""
    if depth > 3 or ann is Any or ann is inspect.Parameter.empty:
        return True
    if ann is None or ann is type(None):
        return value is None
    origin = typing.get_origin(ann)
    if origin in (typing.Union, types.UnionType):
        return any(_matches(value, a, depth + 1) for a in typing.get_args(ann))
    if origin is typing.Literal:
        return any(value == a and type(value) is type(a) for a in typing.get_args(ann))
    if origin is type:
        return isinstance(value, type)
    if ann is float:
        return isinstance(value, numbers.Real) and not isinstance(value, bool)
    if ann is int:
        return isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if ann is bool:
        return isinstance(value, (bool, np.bool_))
    if ann is str:
        return isinstance(value, str)
    check = origin if origin is not None else ann
    if isinstance(check, type) and check.__module__ != "typing":
        if check in (cabc.Sequence, cabc.Iterable, cabc.Collection) and isinstance(
                value, (str, bytes)):
            args = typing.get_args(ann)
            if args and args[0] is not str:
                return False  # text is not a sequence of records
        if getattr(check, "_is_protocol", False):
            return True
        try:
            if not isinstance(value, check):
                return False
        except TypeError:
            return True
        args = typing.get_args(ann)
        if check is tuple and args and args[-1] is not Ellipsis and isinstance(value, tuple):
            return len(value) == len(args)
        if args and isinstance(value, (list, tuple)) and check in (
                cabc.Sequence, list, tuple, cabc.Iterable, cabc.Collection):
            item = args[0]
            return all(_matches(v, item, depth + 1) for v in value[:50])
        if args and isinstance(value, dict) and check in (dict, cabc.Mapping) and len(args) == 2:
            return all(_matches(k, args[0], depth + 1) for k in list(value)[:50])
        return True
    return True


def _type_text(ann: Any) -> str:
    text = getattr(ann, "__name__", None) if not typing.get_args(ann) else None
    if text is None:
        text = str(ann).replace("typing.", "").replace("collections.abc.", "")
    return text.replace("NoneType", "None")


def _extreme(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return abs(value) > 2**1023
    if isinstance(value, float):
        return not math.isfinite(value) or value != 0 and not 1e-150 < abs(value) < 1e150
    return False


def blame(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
          exc: BaseException) -> DomainError | None:
    """The vista-lab error for ``exc`` raised by ``fn(*args, **kwargs)``, naming the
    argument that broke the contract, or None if no argument is to blame."""
    try:
        sig = inspect.signature(fn)
        bound = sig.bind(*args, **kwargs)
    except (TypeError, ValueError):
        return None
    hints = _hints(fn)
    items = [(n, v) for n, v in bound.arguments.items() if n not in ("self", "cls")]
    flat: list[tuple[str, Any, Any]] = []
    for name, value in items:
        kind = sig.parameters[name].kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            flat += [(k, v, inspect.Parameter.empty) for k, v in value.items()]
        elif kind is inspect.Parameter.VAR_POSITIONAL:
            flat += [(name, v, hints.get(name, Any)) for v in value]
        else:
            flat.append((name, value, hints.get(name, Any)))
    for name, value, _ann in flat:
        if value_depth(value, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
            return DomainError(name, value, f"must be nested at most {MAX_JSON_DEPTH} levels "
                               "deep", "flatten the structure")
    for name, value, ann in flat:
        try:
            ok = _matches(value, ann)
        except Exception:  # noqa: BLE001 - unsure is not a blame
            ok = True
        if not ok:
            return ArgumentTypeError(name, value, f"must be {_type_text(ann)}, not "
                                     f"{type(value).__name__}", f"pass {name} as "
                                     f"{_type_text(ann)}")
    if isinstance(exc, (OverflowError, ZeroDivisionError, ValueError, RecursionError)):
        for name, value, _ann in flat:
            if isinstance(value, float) and math.isnan(value):
                return DomainError(name, value, "must be a number, not NaN", "pass a number")
        for name, value, _ann in flat:
            if _extreme(value):
                return ArgumentRangeError(name, value, f"must keep the computation within "
                                          f"{_FLOAT_RANGE}", "pass a value of moderate size")
    if isinstance(exc, OSError):
        target = getattr(exc, "filename", None)
        for name, value, _ann in flat:
            if isinstance(value, (str, os.PathLike)) and os.fspath(value) and isinstance(
                    target, (str, os.PathLike)) and str(os.fspath(target)).startswith(
                    str(os.fspath(value))):
                return DomainError(name, os.fspath(value), f"must be a usable path "
                                   f"({exc.strerror or type(exc).__name__})",
                                   "check the path, its kind and its permissions")
    return None


def contract(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with the net (see the module doc); generators are netted while iterated."""
    if getattr(fn, "__vista_contract__", False):
        return fn

    if inspect.isgeneratorfunction(fn):
        @functools.wraps(fn)
        def gen_wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return (yield from fn(*args, **kwargs))
            except VistaLabError:
                raise
            except _NETTED as exc:
                err = blame(fn, args, kwargs, exc)
                if err is None:
                    raise
                raise err from exc

        gen_wrapper.__vista_contract__ = True  # type: ignore[attr-defined]
        _same_defaults(gen_wrapper, fn)
        return gen_wrapper

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except VistaLabError:
            raise
        except _NETTED as exc:
            err = blame(fn, args, kwargs, exc)
            if err is None:
                raise
            raise err from exc

    wrapper.__vista_contract__ = True  # type: ignore[attr-defined]
    _same_defaults(wrapper, fn)
    return wrapper


def unnetted(method: Any) -> Any:
    """``method`` (a bound method) without the net when the net wraps it: for
    calls a package makes to its own public methods with arguments it built
    itself, which the net could never blame (it re-raises such a failure
    unchanged), so a nested public call does not enter the net a second time.
    Anything else is returned as it is."""
    fn = getattr(method, "__func__", None)
    if fn is None or not getattr(fn, "__vista_contract__", False):
        return method
    raw = getattr(fn, "__wrapped__", None)
    if raw is None or inspect.isgeneratorfunction(raw):
        return method
    return types.MethodType(raw, method.__self__)


def _same_defaults(wrapper: Any, fn: Any) -> None:
    """The wrapper reports the wrapped function's defaults (introspection reads
    ``__defaults__`` / ``__kwdefaults__``; the wrapper itself takes ``*args, **kwargs``,
    so they change nothing in a call)."""
    try:
        wrapper.__kwdefaults__ = fn.__kwdefaults__
        wrapper.__defaults__ = fn.__defaults__
    except (AttributeError, TypeError):
        pass


def _skip_class(cls: type) -> bool:
    return (issubclass(cls, (BaseException, enum.Enum)) or getattr(cls, "_is_protocol", False)
            or any(k.__name__ == "RuleBasedStateMachine" for k in cls.__mro__)
            or any(hasattr(v, "hypothesis_stateful_rule") or hasattr(v, "_hypothesis_internal")
                   for v in vars(cls).values()))


def install_contract(namespace: dict[str, Any]) -> None:
    """Apply :func:`contract` to every public callable named in ``namespace['__all__']``:
    functions (in the package and in the module that defines them, so pickling by
    name still finds the same object) and the public methods of public classes
    (in place)."""
    for name in namespace.get("__all__", ()):
        obj: Any = namespace.get(name)
        if inspect.isfunction(obj):
            func: Any = obj
            wrapped = contract(func)
            namespace[name] = wrapped
            home = sys.modules.get(func.__module__)
            fname = str(func.__name__)
            if home is not None and getattr(home, fname, None) is func:
                setattr(home, fname, wrapped)
        elif inspect.isclass(obj) and issubclass(obj, BaseException) \
                and obj.__module__.startswith("vistalab."):
            # an error's constructor is a door too: wrong arguments name themselves
            for klass in obj.__mro__:
                raw = vars(klass).get("__init__")
                if klass.__module__.startswith("vistalab.") and inspect.isfunction(raw):
                    klass.__init__ = contract(raw)  # type: ignore[misc]
        elif inspect.isclass(obj) and obj.__module__.startswith("vistalab.") \
                and not _skip_class(obj):
            for klass in obj.__mro__:  # the layers a facade class inherits its methods from
                if klass.__module__.startswith("vistalab.") and not _skip_class(klass):
                    _wrap_methods(klass)


def _wrap_methods(klass: type) -> None:
    for mname, raw in list(vars(klass).items()):
        if mname.startswith("_") and mname != "__init__":
            continue
        if isinstance(raw, staticmethod):
            setattr(klass, mname, staticmethod(contract(raw.__func__)))
        elif isinstance(raw, classmethod):
            setattr(klass, mname, classmethod(contract(raw.__func__)))
        elif inspect.isfunction(raw):
            setattr(klass, mname, contract(raw))
