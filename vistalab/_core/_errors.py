"""The one exception root of vista-lab and its did-you-mean helper.

Every layer raises subclasses of :class:`VistaLabError`; each subclass also
inherits the matching builtin (``ValueError``, ``KeyError``) so callers can
catch those as usual.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any, ClassVar

from ._repr import MAX_REPR, short_repr

__all__ = ["VistaLabError", "DomainError", "UnknownNameError", "MissingExtraError", "suggest"]


class VistaLabError(Exception):
    """Root of every error raised on purpose by vista-lab (all layers)."""


class DomainError(VistaLabError, ValueError):
    """An argument is outside the domain of the function that received it.

    Attributes
    ----------
    parameter : str
        Name of the offending parameter.
    value : Any
        The value received.
    rule : str
        The rule it breaks, phrased as "must be ...".
    fix : str
        What to do instead.
    context : str
        Other values the rule depends on (e.g. ``"n=10"``), shown after the value.
    """

    #: Longest ``repr(value)`` shown in the message (bounded in depth too: never
    #: recursive, see :func:`vistalab._core._repr.short_repr`).
    max_repr: ClassVar[int | None] = MAX_REPR

    def __init__(
        self,
        parameter: str,
        value: Any,
        rule: str,
        fix: str = "",
        *,
        context: str = "",
    ) -> None:
        self.parameter = parameter
        self.value = value
        self.rule = rule
        self.fix = fix
        self.context = context
        shown = short_repr(value, self.max_repr or MAX_REPR)
        got = f"{parameter}={shown}"
        if context:
            got += f", {context}"
        msg = f"`{parameter}` {rule} (got {got})"
        if fix:
            msg += f"; {fix}"
        super().__init__(msg)


class UnknownNameError(VistaLabError, KeyError):
    """A name (interface, strategy, tokenizer, subcommand, key...) is not registered.

    Attributes
    ----------
    kind : str
        What was looked up ("interface", "tokenizer", ...).
    name : str
        The name received.
    known : list of str
        The registered names, sorted.
    """

    def __init__(self, kind: str, name: str, known: Iterable[str]) -> None:
        if isinstance(known, (str, bytes)) or not isinstance(known, Iterable):
            raise DomainError("known", known, "must be an iterable of names",
                              "pass e.g. a list or the keys of a registry")
        self.kind = kind
        self.name = name
        self.known = sorted(str(k) for k in known)
        # difflib is quadratic in the name's length: no hint for an absurdly long one
        hint = (suggest(name, self.known) if isinstance(name, str) and len(name) <= 200
                and len(self.known) <= 10_000 else None)
        shown = ", ".join(short_repr(k, 60).strip("'") for k in self.known[:50])
        if len(self.known) > 50:
            shown += f", ... ({len(self.known)} in all)"
        msg = f"Unknown {short_repr(kind, 60).strip(chr(39))} {short_repr(name)}."
        if hint:
            msg += f" Did you mean {hint!r}?"
        msg += f" Choose one of: {shown}."
        self.message = msg
        super().__init__(msg)

    def __str__(self) -> str:  # KeyError would repr() the message
        return self.message


def suggest(name: str, known: Iterable[str]) -> str | None:
    """Closest registered name to ``name``, or None if nothing is close.

    Parameters
    ----------
    name : str
        The name as given.
    known : iterable of str
        The registered names.

    Returns
    -------
    str or None
        The closest name (case folded first), or None.

    Examples
    --------

    >>> suggest("gausian", ["gaussian", "bucket"])
    'gaussian'
    """
    if isinstance(known, (str, bytes)) or not isinstance(known, Iterable):
        raise DomainError("known", known, "must be an iterable of names",
                          "pass e.g. a list or the keys of a registry")
    names = [str(k) for k in known]
    if not isinstance(name, str):  # str() of a nested argument could recurse
        return None
    text = name
    # a name that differs only in case ('--n' for '--N') is the best hint
    low = text.lower()
    folded = [k for k in names if k.lower() == low]
    if folded:
        return folded[0]
    # difflib's ratio is at most 2*min(len)/(len+len) (its real_quick_ratio): names
    # that cannot reach the cutoff are dropped before difflib indexes ``text``, so a
    # megabyte-long name costs O(len) instead of seconds of matching
    cutoff = 0.6
    n = len(text)
    names = [k for k in names if 2 * min(n, len(k)) >= cutoff * (n + len(k))]
    if not names:
        return None
    matches = difflib.get_close_matches(text, names, n=1, cutoff=cutoff)
    return matches[0] if matches else None


class MissingExtraError(VistaLabError, ImportError):
    """An optional third-party package is not installed; names the extra that provides it.

    Attributes
    ----------
    package : str
        The missing import name (e.g. ``"pyarrow"``).
    extra : str
        The vista-lab extra that installs it (e.g. ``"sweep"``).
    """

    def __init__(self, package: str, extra: str, purpose: str = "") -> None:
        self.package = package
        self.extra = extra
        what = purpose or "this feature"
        super().__init__(
            f"{what} needs the optional package {package!r}, which is not installed; "
            f"install it with: pip install 'vista-lab[{extra}]' (or 'vista-lab[all]')"
        )
