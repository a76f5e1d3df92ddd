"""The differential test follows the agent's reads (paper, eq. archive-contract:
``read_path(h)`` gives the exact payload; Methodology: a deleted block's content
is removed permanently). A whole or ranged read (``bytes=``, ``lines=``) must
give the bytes the store holds under the key, cut by the driver's own reading of
the selector (the store is compared with the Coq model's after every operation),
and a deleted payload must not be readable. Engines that get a read wrong are
caught on a short sequence the real engine passes.
"""

from __future__ import annotations

from typing import Any

import pytest
from vistalab.workspace import OperationSequence, Workspace
from vistalab.workspace._diff_drive import _cut_range
from vistalab.workspace._differential import check_sequence
from vistalab.workspace._model import build_engine_model
from vistalab.workspace._spec import apply_range, parse_selector

LINES = "".join(f"row {i}: order {i} shipped\n" for i in range(1, 9))
CFG = {"budget": 4000, "hard_limit": 4000, "tokenizer": "approx", "store": "memory",
       "format": "openai", "protocol": False, "cache_prefix": False}


def _ops(*reads: dict[str, Any], delete: bool = False) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = [
        {"op": "user", "text": "Which orders shipped?", "pinned": None},
        {"op": "call", "calls": [["call_1", "read_log", '{"q": "orders"}']], "text": None},
        {"op": "result", "id": "call_1", "text": LINES},
        {"op": "archive", "spec": "B3", "replacement": "", "via": "api"},
        *reads,
    ]
    if delete:
        ops += [{"op": "delete", "spec": "B3", "reason": "stale output", "via": "api"},
                {"op": "read", "path": "B3.txt", "selector": None}]
    return ops


READS = [{"op": "read", "path": "B3.txt", "selector": s}
         for s in (None, "bytes=5:40", "lines=2-4", "lines=7-9")]


@pytest.fixture(scope="module")
def model() -> str:
    """The model's executable, built from the Coq sources (cached)."""
    return str(build_engine_model())


class RangeOffByOne(Workspace):
    """A ``lines=`` read that leaves out its last line."""

    def read_path(self, path: str, selector: Any = None) -> bytes:
        data = super().read_path(path, selector)
        if isinstance(selector, str) and selector.startswith("lines="):
            return data[: data.rfind(b"\n", 0, len(data) - 1) + 1]
        return data


class ByteShift(Workspace):
    """A ``bytes=`` read one byte late (the same length)."""

    def read_path(self, path: str, selector: Any = None) -> bytes:
        if isinstance(selector, str) and selector.startswith("bytes="):
            a, b = (int(x) for x in selector[len("bytes="):].split(":"))
            return super().read_path(path, f"bytes={a + 1}:{b + 1}")
        return super().read_path(path, selector)


class KeepsDeleted(Workspace):
    """Serves a deleted payload from a cache of earlier reads."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._seen: dict[str, bytes] = {}

    def read_path(self, path: str, selector: Any = None) -> bytes:
        try:
            data = super().read_path(path, selector)
        except Exception:
            if selector is None and path in self._seen:
                return self._seen[path]
            raise
        if selector is None:
            self._seen[path] = data
        return data


def test_the_real_engine_passes(model):
    seq = OperationSequence(CFG, _ops(*READS, delete=True))
    outcome: dict[str, Any] = {}
    assert check_sequence(seq, None, model, outcome=outcome)[0] is None
    assert outcome["compared"] == "compared_whole"


@pytest.mark.parametrize("bug", [RangeOffByOne, ByteShift, KeepsDeleted])
def test_a_wrong_read_is_caught(bug, model):
    seq = OperationSequence(CFG, _ops(*READS, delete=True))
    finding, _ = check_sequence(seq, bug, model)
    assert finding is not None and finding.invariant == "recoverability", finding
    assert "read B3.txt" in finding.detail


def test_the_drivers_cut_matches_the_documented_selectors():
    """Checked on a finite domain: every payload of up to 7 bytes over
    {a, newline} and every selector the engine accepts with bounds up to 9."""
    from itertools import product

    payloads = [bytes(p) for n in range(8) for p in product(b"a\n", repeat=n)]
    sels = [f"bytes={a}:{b}" for a in range(10) for b in range(a, 10)]
    sels += [f"lines={a}-{b}" for a in range(1, 10) for b in range(a, 10)]
    for data in payloads:
        for sel in sels:
            assert _cut_range(data, sel) == apply_range(data, parse_selector(sel)), (data, sel)
