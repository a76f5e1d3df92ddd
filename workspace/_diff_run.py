"""The records of one differential run: each applied operation's step, the run with its
model and engine lines, and the view the agent saw after each operation."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._diff_ops import OperationSequence
from ._diff_view import Shadow, compare_view, expected_view

__all__ = ["Step", "Run", "View"]


@dataclass(frozen=True, slots=True)
class Step:
    """One applied operation and the abstraction of the state after it.

    Attributes
    ----------
    index : int
        Position of the operation in the sequence.
    op : dict
        The operation as applied (a ``fit`` result carries its resolved text size).
    ok : bool
        The engine accepted the operation (False: refused, state unchanged).
    value : str
        What it returned: a block ID, an archived unit, a deleted unit list, or
        for reads the sha256 of the bytes read ("" when refused).
    observation : dict
        The abstract state: ``mode``, ``blocks`` (ID, status, group, level,
        rejected), ``groups`` (ID, members, level, parent), ``units``
        (top-level units in position order), ``store`` (key -> sha256 of the
        bytes read back) and ``tokens`` (the independent recount).
    problems : tuple of (str, str)
        (invariant name, what the recount found) for every disagreement
        between the engine's claims and the independent recount.
    """

    index: int
    op: Mapping[str, Any]
    ok: bool
    value: str
    observation: Mapping[str, Any]
    problems: tuple[tuple[str, str], ...] = ()


@dataclass(slots=True)
class Run:
    """The steps of one sequence on one engine."""

    sequence: OperationSequence
    steps: list[Step] = field(default_factory=list)
    #: The model's operation lines, the engine's observation lines (one per
    #: model line) and the operation each line belongs to (-1: init; 10**6:
    #: the closing recover checks).
    model_lines: list[str] = field(default_factory=list)
    engine_lines: list[str] = field(default_factory=list)
    line_step: list[int] = field(default_factory=list)
    modelled: bool = False
    #: Compared only up to the first management rendering or guard offload
    #: (never set now: the model has both ``cache_prefix`` configurations;
    #: kept so a report can still say how much of a run was compared).
    prefix_only: bool = False
    #: Per model line, what the agent saw through the public API after it
    #: (None for the closing recover lines, which change nothing).
    views: list[Any] = field(default_factory=list)
    #: The run's configuration facts the expected texts need.
    context: dict[str, Any] = field(default_factory=dict)

    def view_problems(self, line: int, model_line: str) -> list[tuple[str, str]]:
        """What differs between what the engine showed the agent after model line
        ``line`` and the texts :mod:`._diff_texts` writes for the model's
        observation ``model_line`` (call in line order: group payloads and the
        levels of units that left the top level are remembered across lines)."""
        from ._diff_model import parse_observation

        obs = parse_observation(model_line)
        ctx = self.context
        out: list[tuple[str, str]] = []
        view = self.views[line] if line < len(self.views) else None
        if view is not None and obs.get("mode", "-") != "-" and obs.get("units") is not None:
            exp = expected_view(
                obs, view.shadow, {**self.sequence.config, "hard": ctx.get("hard")},
                counter=ctx["counter"],
                engine_dashboard=view.dashboard, payload_memo=ctx["memo"],
                levels=ctx["levels"], cid_back=ctx["cid_back"],
                dashboard_config=ctx.get("dashboard_config"),
            )
            out = compare_view(exp, view.messages, view.anthropic, view.tools, view.allowed,
                               view.mode, view.reads)
        for u in (obs.get("units") or "-").split(","):
            parts = u.split(":")
            if len(parts) == 4:
                ctx["levels"][parts[0]] = int(parts[2])
        return out

    @property
    def problems(self) -> list[tuple[int, str, str]]:
        return [(s.index, inv, msg) for s in self.steps for inv, msg in s.problems]


@dataclass(frozen=True, slots=True)
class View:
    """What the agent saw after one operation, through the public API only: the
    rendering's messages in both formats, the tools sent and allowed, the mode, the
    dashboard text, and the bytes ``read_path`` returned for every payload path
    (printed in a handle or placeholder, or a key of the store); plus the driver's
    own record of the run as of then."""

    messages: tuple[Any, ...]
    anthropic: dict[str, Any]
    tools: tuple[Any, ...]
    allowed: tuple[str, ...]
    mode: str
    dashboard: str
    reads: dict[str, bytes | None]
    shadow: Shadow
