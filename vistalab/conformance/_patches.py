"""Temporary patches on a peer's own module while an adapter's call runs
(``vistalab.conformance.PEERS``): counted across overlapping calls, so a call
the suite's per-call timeout left running never leaves a patch in place."""

from __future__ import annotations

import contextlib
import threading
from typing import Any

__all__: list[str] = []

#: Patches the adapters put on a peer's module while it runs: (id of the object,
#: attribute) -> [active calls, the value saved by the first, whether it existed].
_PATCHES: dict[tuple[int, str], list[Any]] = {}
_PATCH_LOCK = threading.Lock()


@contextlib.contextmanager
def _patched(obj: Any, attr: str, value: Any) -> Any:
    """``obj.attr = value`` while at least one call is inside, restored after the
    last one leaves. Counted, not saved per call: a call the suite's timeout left
    behind still runs in its worker thread while the next call starts, and a
    per-call save and restore would then restore the patch itself for good. Only
    the peer's own module state is patched, never the process's (``sys.stdout``,
    which a call left running would hold redirected)."""
    key = (id(obj), attr)
    with _PATCH_LOCK:
        entry = _PATCHES.get(key)
        if entry is None:
            had = attr in vars(obj) if hasattr(obj, "__dict__") else hasattr(obj, attr)
            entry = _PATCHES[key] = [0, getattr(obj, attr, None), had]
            setattr(obj, attr, value)
        entry[0] += 1
    try:
        yield
    finally:
        with _PATCH_LOCK:
            entry[0] -= 1
            if entry[0] == 0:
                del _PATCHES[key]
                if entry[2]:
                    setattr(obj, attr, entry[1])
                else:
                    delattr(obj, attr)


def _silent(*args: Any, **kwargs: Any) -> None:
    """A ``print`` that prints nothing (put in a chatty peer's module)."""
