"""The append-only event log: one record per registration and action, each
with the canonical workspace hash it produced."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._errors import TraceError

__all__ = ["Event", "read_event_log"]


@dataclass(frozen=True, slots=True)
class Event:
    """One entry of the event log.

    Attributes
    ----------
    seq : int
        Position in the log, from 0 (the ``init`` event).
    op : str
        ``init``, ``register``, ``archive``, ``delete``, ``restore`` or ``read``.
    args : dict
        Plain-data arguments, enough to re-execute the operation.
    ok : bool
        False if the operation was refused (the state is then unchanged).
    result : str
        Block ID, payload path, or the error message.
    effects : dict
        What else happened (units created, blocks offloaded by the guard,
        a rejected result, tokens freed...).
    state_hash : str
        Canonical hash of the workspace after the operation.
    """

    seq: int
    op: str
    args: dict[str, Any]
    ok: bool
    result: str
    effects: dict[str, Any] = field(default_factory=dict)
    state_hash: str = ""

    def to_plain(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "op": self.op,
            "args": self.args,
            "ok": self.ok,
            "result": self.result,
            "effects": self.effects,
            "state_hash": self.state_hash,
        }

    def to_json(self) -> str:
        return json.dumps(self.to_plain(), sort_keys=True, ensure_ascii=False)

    @classmethod
    def from_plain(cls, d: dict[str, Any]) -> Event:
        return cls(
            seq=int(d["seq"]),
            op=str(d["op"]),
            args=dict(d.get("args") or {}),
            ok=bool(d["ok"]),
            result=str(d.get("result", "")),
            effects=dict(d.get("effects") or {}),
            state_hash=str(d.get("state_hash", "")),
        )


def read_event_log(
    source: str | os.PathLike[str] | Iterable[Event | dict[str, Any]],
) -> Iterator[Event]:
    """Events from a JSONL log file or an iterable of events / plain dicts.

    A torn last line (a crash mid-write) is an error naming its line, as is
    any other malformed line.

    Parameters
    ----------
    source : str, PathLike or iterable
        A JSONL event log, or events (or their plain-dict forms).

    Yields
    ------
    Event
        In log order.
    """
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        with path.open("r", encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                if not line.strip():
                    continue
                try:
                    yield Event.from_plain(json.loads(line))
                except (ValueError, KeyError, TypeError) as exc:
                    raise TraceError(
                        None, f"line {lineno} is not an event record ({exc})", source=str(path)
                    ) from None
        return
    for item in source:
        yield item if isinstance(item, Event) else Event.from_plain(item)
