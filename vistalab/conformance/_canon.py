"""Canonical JSON keys of units and turns, computed once per object while one
output is checked.

The fidelity, pinned and structure checks compare units by their canonical
JSON (sorted keys, wire metadata such as ``cache_control`` left out;
``docs/guide/conformance.md``). They read the same two requests, the manager's
input and its output, several times: :func:`memo` keeps each object's key (and
each request's units) for the duration of one check of one output, by object
identity, so every unit is serialised once.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import wraps
from typing import Any, TypeVar

__all__ = ["canonical_key", "memo", "memo_by_request"]

#: Wire metadata that does not change what a unit says.
METADATA_KEYS = frozenset({"cache_control"})


class _NotPlain(Exception):
    """An object JSON cannot write as it is (the slow path handles it)."""


def _refuse(obj: Any) -> Any:
    raise _NotPlain


#: Sorted keys, unicode kept; anything but plain JSON data raises.
_PLAIN = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=_refuse)


def _strip(obj: Any, drop: frozenset[str]) -> Any:
    if isinstance(obj, Mapping):
        return {k: _strip(v, drop) for k, v in obj.items() if k not in drop}
    if isinstance(obj, (list, tuple)):
        return [_strip(v, drop) for v in obj]
    return obj


def _slow_key(obj: Any, drop: frozenset[str]) -> str:
    return json.dumps(_strip(obj, drop), sort_keys=True, ensure_ascii=False, default=repr)


def _fresh_key(obj: Any, drop: frozenset[str]) -> str:
    # Plain data without a metadata key serialises the same with or without
    # _strip (which only drops those keys, copies mappings to dicts and tuples
    # to lists): one pass of the C encoder. Anything else (a metadata key, a
    # mapping that is not a dict, an object that is not JSON, a cycle) takes the
    # stripping path, which gives (or raises) exactly what it always did.
    try:
        text = _PLAIN.encode(obj)
    except Exception:  # noqa: BLE001 - the slow path decides
        return _slow_key(obj, drop)
    needles = _NEEDLES.get(drop)
    if needles is None:
        needles = _NEEDLES[drop] = tuple(json.dumps(k, ensure_ascii=False) for k in drop)
    for needle in needles:
        if needle in text:
            return _slow_key(obj, drop)
    return text


#: Each metadata key as the encoder writes it (a key present shows in the text).
_NEEDLES: dict[frozenset[str], tuple[str, ...]] = {}


_MEMO = threading.local()


@contextmanager
def memo() -> Iterator[None]:
    """Within the block, :func:`canonical_key` and the functions wrapped by
    :func:`memo_by_request` compute each object's answer once (by identity;
    the caller promises not to change the objects inside the block). Nested
    blocks share the outer memo."""
    if getattr(_MEMO, "cache", None) is not None:
        yield
        return
    _MEMO.cache = {}
    try:
        yield
    finally:
        _MEMO.cache = None


def canonical_key(obj: Any, drop: frozenset[str] = METADATA_KEYS) -> str:
    """The canonical JSON of ``obj`` with wire metadata left out: sorted keys,
    unicode kept, the keys in ``drop`` left out at every level, tuples as
    lists, anything JSON cannot hold as its ``repr``.

    Parameters
    ----------
    obj : object
        A unit, a turn, a call.
    drop : frozenset of str
        The metadata keys to leave out (default ``cache_control``).

    Returns
    -------
    str
        Equal for units that say the same thing.
    """
    cache = getattr(_MEMO, "cache", None)
    if cache is None:
        return _fresh_key(obj, drop)
    slot = (id(obj), drop)
    hit = cache.get(slot)
    if hit is not None and hit[0] is obj:
        return hit[1]  # type: ignore[no-any-return]
    text = _fresh_key(obj, drop)
    cache[slot] = (obj, text)  # the object kept: its id stays its own
    return text


F = TypeVar("F", bound=Callable[..., Any])


def memo_by_request(fn: F) -> F:
    """``fn(request, protocol)`` answered once per request object inside a
    :func:`memo` block (the answer is shared: callers must not change it)."""

    @wraps(fn)
    def cached(request: Any, protocol: str) -> Any:
        cache = getattr(_MEMO, "cache", None)
        if cache is None:
            return fn(request, protocol)
        slot = (fn, id(request), protocol)
        hit = cache.get(slot)
        if hit is not None and hit[0] is request:
            return hit[1]
        got = fn(request, protocol)
        cache[slot] = (request, got)
        return got

    return cached  # type: ignore[return-value]
