"""Argument checks for building a proprioception probe kit (one place, at the door)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from vistalab._core import DomainError, plain_entropy, seed_sequence

from ._errors import WorkspaceArgumentError

__all__ = ["_int_in", "_kit_iv", "_rng_iv"]


# ----------------------------------------------------------------- validation


def _int_in(name: str, value: Any, lo: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < lo:
        raise WorkspaceArgumentError(name, value, f"must be an integer >= {lo}")
    return int(value)


def _kit_iv(
    anchor: Any,
    n_blocks: Any,
    n_pairs: Any,
    max_ratio: Any,
    max_tokens: Any,
    snapshot_id: Any,
) -> dict[str, Any]:
    if isinstance(anchor, bool) or not (
        anchor in ("first-archive", "end") or isinstance(anchor, (int, np.integer))
    ):
        raise WorkspaceArgumentError(
            "anchor", anchor, "must be 'first-archive', 'end' or a trace item index"
        )
    if (
        isinstance(max_ratio, bool)
        or not isinstance(max_ratio, (int, float))
        or not math.isfinite(max_ratio)
        or max_ratio <= 1
    ):
        raise WorkspaceArgumentError(
            "max_ratio", max_ratio, "must be a finite number > 1", "the paper uses 2"
        )
    if snapshot_id is not None and (not isinstance(snapshot_id, str) or not snapshot_id):
        raise WorkspaceArgumentError("snapshot_id", snapshot_id, "must be a non-empty string")
    return {
        "anchor": anchor if isinstance(anchor, str) else int(anchor),
        "n_blocks": _int_in("n_blocks", n_blocks, 1),
        "n_pairs": _int_in("n_pairs", n_pairs, 0),
        "max_ratio": float(max_ratio),
        "max_tokens": _int_in("max_tokens", max_tokens, 1),
    }


def _rng_iv(rng: Any) -> tuple[np.random.Generator, int | list[int] | None]:
    """A Generator and the entropy of the seed behind it (recorded in the kit).

    ``rng`` is normalised by :func:`vistalab._core.seed_sequence` (a Generator has one
    child spawned from it; the entropy recorded is the child's, shared with its parent)."""
    try:
        seq = seed_sequence(rng)
    except DomainError as exc:
        raise WorkspaceArgumentError("rng", rng, exc.rule, exc.fix) from None
    return np.random.default_rng(seq), plain_entropy(seq.entropy)
