"""The registry of the make-room interfaces: :data:`INTERFACES` by name and
:func:`make_interface`, which builds one and rejects the parameters it does not take."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from vistalab.theory import DomainError, UnknownNameError

from ._interfaces import Interface
from ._interfaces_continuous import GaussianInterface, GibbsInterface
from ._interfaces_discrete import BlindInterface, BucketsInterface, LedgerInterface

__all__ = ["INTERFACES", "make_interface"]


INTERFACES: dict[str, Callable[..., Interface]] = {
    LedgerInterface.name: LedgerInterface,
    GaussianInterface.name: GaussianInterface,
    BucketsInterface.name: BucketsInterface,
    BlindInterface.name: BlindInterface,
    GibbsInterface.name: GibbsInterface,
}


def make_interface(name: str, *, n: int, kappa: int, **params: Any) -> Interface:
    """Build the registered interface ``name`` on M_{n,L,l}.

    Parameters
    ----------
    name : str
        One of :data:`INTERFACES`: ``ledger``, ``gaussian`` (``sigma``),
        ``buckets`` (``buckets=M``), ``blind``, ``gibbs`` (``lam`` or ``rate``).
    n, kappa : int
        The instance, ``2 <= kappa < n``.
    **params
        The interface's parameters; parameters it does not take are rejected,
        ``None`` values are ignored.

    Returns
    -------
    Interface
    """
    if not isinstance(name, str) or name not in INTERFACES:
        raise UnknownNameError("interface", str(name), INTERFACES)
    given = {k: v for k, v in params.items() if v is not None}
    factory = INTERFACES[name]
    accepted = {p for p in inspect.signature(factory).parameters if p not in ("n", "kappa")}
    extra = sorted(set(given) - accepted)
    if extra:
        takes = ", ".join(sorted(accepted)) or "no parameters"
        raise DomainError(extra[0], given[extra[0]], f"is not a parameter of interface {name!r}",
                          f"interface {name!r} takes {takes}")
    return factory(n=n, kappa=kappa, **given)
