"""The one conversion of results into JSON-ready plain data, and the mixin
that gives a frozen result record its ``to_dict()`` derived from its fields."""

from __future__ import annotations

import dataclasses
import math
import sys
from fractions import Fraction
from typing import Any

__all__ = ["to_plain", "PlainRecord"]


def to_plain(obj: Any) -> Any:
    """Convert dataclasses, numpy scalars/arrays, tuples, fractions and
    non-finite floats into JSON-ready plain data (NaN/inf become None; a
    :class:`~fractions.Fraction` becomes its exact text, ``"3/4"``)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): to_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_plain(v) for v in obj]
    # numpy is looked up, not imported: without it loaded no value can be a numpy one,
    # and the CLI's start-up (vistalab._core) stays free of numpy.
    np = sys.modules.get("numpy")
    if np is not None and isinstance(obj, np.ndarray):
        return [to_plain(v) for v in obj.tolist()]
    if np is not None and isinstance(obj, np.generic):
        return to_plain(obj.item())
    if isinstance(obj, Fraction):
        return str(obj)
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    return obj


class PlainRecord:
    """Mixin for a (frozen) dataclass result: ``to_dict()`` from its fields."""

    __slots__ = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict of the fields (:func:`to_plain`: tuples become
        lists, numpy values Python ones, fractions exact text, NaN and inf None).

        Returns
        -------
        dict
            One key per dataclass field, values made plain.
        """
        out: dict[str, Any] = to_plain(self)
        return out
