"""Bulk rebuilds (replay, load, trace replay) pause Python's cyclic garbage
collector: they build one large long-lived structure in one go, and each full
collection would re-scan all of it for cycles that are not there."""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

__all__ = ["bulk_build"]

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextlib.contextmanager
def bulk_build() -> Iterator[None]:
    """Run the block with the cyclic collector paused, then restore its state.

    A rebuild allocates a few dozen container objects per event and keeps them
    all; CPython runs a full collection whenever the objects that survived since
    the last one reach a quarter of the long-lived heap, and each walks the
    whole heap, whose cache misses grow with its size: at 30k blocks a replay
    spent over a fifth of its time in them, freeing nothing. Reference counting
    still frees every ordinary temporary, so memory does not grow; cycles made
    meanwhile (an exception's traceback) wait for the next collection after the
    block. Nested and concurrent rebuilds share one pause; the collector is
    re-enabled when the last one ends, only if it was enabled before the first.
    """
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
