"""Seeded draws that depend on the seed alone: Hypothesis's constants from the
loaded local modules are kept out of the suite's conversations."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["seed_only"]

_LOCK = threading.RLock()


@contextlib.contextmanager
def seed_only() -> Iterator[None]:
    """Run the block with Hypothesis's local constants switched off.

    Hypothesis (6.131 and later) mixes constants read from every loaded module
    outside site-packages into its draws, so one seed drew different
    conversations in processes that had imported different modules (a pytest
    worker, the CLI, a notebook), and a report or corpus "for seed 3" was not
    one thing. The suite promises that the seed and the manager decide the
    report. Inside the block the provider sees no local constants (Hypothesis's
    built-in constants stay), and its constant cache is cleared on entry and on
    exit so nothing leaks into the caller's own Hypothesis tests. Without the
    feature (an older Hypothesis) the block runs as is.
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - a Hypothesis without that module
        yield
        return
    get = getattr(providers, "_get_local_constants", None)
    cache: Any = getattr(providers, "CONSTANTS_CACHE", None)
    constants = getattr(providers, "Constants", None)
    if get is None or constants is None or not hasattr(cache, "cache"):
        yield
        return
    empty = constants()
    with _LOCK:
        providers._get_local_constants = lambda: empty  # type: ignore[attr-defined]
        cache.cache.clear()
        try:
            yield
        finally:
            providers._get_local_constants = get  # type: ignore[attr-defined]
            cache.cache.clear()
