"""Stage cache: a result is reused only when its stage, parameters and code
fingerprint are all unchanged.

One JSON record per (stage, key) under ``<out>/.cache/``; the key is a sha256
of the canonical JSON of (stage, params, code fingerprint). Records of other
parameters are kept, so a quick run and a full run into the same folder never
evict each other.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from vistalab._core._limits import json_loads

from .._output import to_plain
from .._provenance import atomic_write_json

__all__ = ["CacheRecord", "StageCache", "cache_key"]


def cache_key(stage: str, params: Mapping[str, Any], fingerprint: str) -> str:
    """sha256 over the canonical JSON of the stage name, its parameters and the code version."""
    doc = {"stage": stage, "params": to_plain(dict(params)), "code": fingerprint}
    blob = json.dumps(doc, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(blob.encode()).hexdigest()


@dataclass(frozen=True)
class CacheRecord:
    """A cached stage result.

    Attributes
    ----------
    stage : str
        Stage name.
    key : str
        The cache key it was stored under.
    payload : Any
        The stage's plain-data result.
    sidecar : dict
        Provenance captured when the result was computed.
    seconds : float
        Wall time the computation took.
    """

    stage: str
    key: str
    payload: Any
    sidecar: dict[str, Any]
    seconds: float


class StageCache:
    """Records under ``root``, one file per (stage, key); a corrupt or mismatched
    record counts as a miss."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def _path(self, stage: str, key: str) -> Path:
        # "sim:fig1" -> "sim--fig1--<key>.json": no colon, which some file systems refuse.
        return self.root / f"{stage.replace(':', '--')}--{key[:24]}.json"

    def load(self, stage: str, key: str) -> CacheRecord | None:
        path = self._path(stage, key)
        try:
            doc = json_loads(path.read_text(encoding="utf-8"))
        except (FileNotFoundError, json.JSONDecodeError, UnicodeDecodeError):
            return None
        if not isinstance(doc, dict) or doc.get("key") != key or doc.get("stage") != stage:
            return None
        return CacheRecord(stage, key, doc.get("payload"), doc.get("sidecar", {}),
                           float(doc.get("seconds", 0.0)))

    def store(self, record: CacheRecord) -> None:
        atomic_write_json(self._path(record.stage, record.key), {
            "stage": record.stage,
            "key": record.key,
            "seconds": record.seconds,
            "sidecar": record.sidecar,
            "payload": record.payload,
        })
