"""Recording the turns of an agent loop (or a replayed trace) as a trajectory
for the process reward: what the model saw and which context actions followed."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from ._errors import TraceError, WorkspaceArgumentError
from ._events import Event
from ._protocol import CONTEXT_TOOL_NAMES, READ_PATH_TOOL, is_error_text
from ._reward import (
    ACTION_OPS,
    ContextAction,
    RewardTurn,
    Trajectory,
)
from ._store import PayloadStore
from ._tokenizers import Tokenizer
from ._tools import drive_trace

__all__ = ["TrajectoryRecorder", "trajectory_from_trace"]


# ----------------------------------------------------------------- recording


class TrajectoryRecorder:
    """Cuts a workspace's event log into LLM turns while an agent loop runs.

    Call :meth:`begin_turn` each time the model is about to be called (it
    renders the workspace and returns the rendering to send), run the loop
    as usual (``ws.dispatch`` for context calls, ``ws.register_*`` for
    everything else), then :meth:`finish`::

        rec = TrajectoryRecorder(ws)
        while True:
            r = rec.begin_turn()
            reply = llm(messages=r.messages, tools=r.tools)
            ...
        trajectory = rec.finish()
        q = process_reward(trajectory)

    Parameters
    ----------
    workspace : Workspace
        The agent's workspace.
    source : str
        Where the trajectory comes from, recorded in it (a file name, a run id).
    """

    def __init__(self, workspace: Any, *, source: str = "") -> None:
        from ._engine import Workspace

        if not isinstance(workspace, Workspace):
            raise WorkspaceArgumentError(
                "workspace", workspace, "must be a Workspace", "pass the agent's workspace"
            )
        self._ws = workspace
        self._source = source
        self._turns: list[RewardTurn] = []
        self._open: dict[str, Any] | None = None
        self._ctx_calls: set[str] = set()
        self._finished = False

    @property
    def workspace(self) -> Any:
        """The workspace whose event log is cut into turns."""
        return self._ws

    def begin_turn(self, *, message_index: int | None = None) -> Any:
        """Close the previous turn, render the workspace and open a new turn.

        Parameters
        ----------
        message_index : int, optional
            Where the turn's model message will sit in the caller's own transcript,
            recorded in the turn.

        Returns
        -------
        Rendering
            What the model sees this turn (``Workspace.render``).

        Raises
        ------
        WorkspaceArgumentError
            If :meth:`finish` was already called.
        """
        if self._finished:
            raise WorkspaceArgumentError(
                "recorder", "finished", "cannot begin a turn after finish()", "make a new recorder"
            )
        self._close()
        r = self._ws.render()
        self._open = {
            "start": self._ws.event_count,
            "rendering": r,
            "message_index": message_index,
        }
        return r

    def finish(self) -> Trajectory:
        """Close the last turn and return the trajectory (call once; a second call
        returns the same turns).

        Returns
        -------
        Trajectory
            The turns, with the workspace's budget, tokenizer, final state hash and
            the recorder's source: the input of :func:`process_reward`.
        """
        if not self._finished:
            self._close()
            self._finished = True
        return Trajectory(
            turns=tuple(self._turns),
            budget=self._ws.budget,
            tokenizer=self._ws.tokenizer.name,
            final_state_hash=self._ws.state_hash(),
            source=self._source,
        )

    def _close(self) -> None:
        if self._open is None:
            return
        # this turn's events and the one before (not a copy of the whole log)
        start = self._open["start"]
        events = self._ws.events_since(start - 1)
        r = self._open["rendering"]
        actions: list[ContextAction] = []
        growth: list[int] = []
        errors: list[str] = []
        for k in range(1, len(events)):
            ev = events[k]
            if ev.op in ACTION_OPS:
                actions.append(_action_from_event(ev, events[k - 1].state_hash))
            elif ev.op == "register":
                growth.append(ev.seq)
                err = self._context_error(ev)
                if err:
                    errors.append(err)
        self._turns.append(
            RewardTurn(
                index=len(self._turns),
                tokens=r.candidate_tokens,
                budget=r.budget,
                rendered_tokens=r.tokens,
                mode=r.mode,
                state_hash=r.state_hash,
                actions=tuple(actions),
                growth=tuple(growth),
                tool_errors=tuple(errors),
                message_index=self._open["message_index"],
            )
        )
        self._open = None

    def _context_error(self, ev: Event) -> str:
        msg = ev.args.get("message")
        if not isinstance(msg, Mapping):
            return ""
        for call in msg.get("tool_calls") or ():
            fn = call.get("function") or {}
            if fn.get("name") in (*CONTEXT_TOOL_NAMES, READ_PATH_TOOL):
                self._ctx_calls.add(str(call.get("id")))
        if msg.get("role") == "tool" and msg.get("tool_call_id") in self._ctx_calls:
            content = msg.get("content")
            if isinstance(content, str) and is_error_text(content):
                return content
        return ""


def _action_from_event(ev: Event, hash_before: str) -> ContextAction:
    target = ev.args.get("block_id", ev.args.get("path", ""))
    return ContextAction(
        op=ev.op,
        target=str(target),
        ok=ev.ok,
        hash_before=hash_before,
        hash_after=ev.state_hash,
        seq=ev.seq,
        detail=ev.result,
    )


def trajectory_from_trace(
    trace: str | os.PathLike[str] | Sequence[Any],
    *,
    budget: int,
    tokenizer: str | Tokenizer = "cl100k_base",
    store: PayloadStore | None = None,
    hard_limit: int | None = None,
    **workspace_kwargs: Any,
) -> Trajectory:
    """Replay a trace through a fresh workspace, recording its LLM turns.

    The model is called before every assistant message and before every
    trace ``action`` item (an agent's context decision applied at harness
    level, without a message of its own). Calls to the context tools are
    executed and answered by the engine, as in ``vista-lab workspace replay``;
    the trace's own answers to them are skipped.

    Parameters
    ----------
    trace : str, PathLike or sequence
        A trace file (JSON list, ``{"messages": [...]}`` or JSONL, OpenAI chat or
        Anthropic Messages) or the items themselves.
    budget : int
        B of the replaying workspace.
    tokenizer : str or Tokenizer
        The engine's tokenizer.
    store : PayloadStore, optional
        Where archived payloads go (default in memory).
    hard_limit : int, optional
        The guard's hard limit (default ``2 * budget``).
    **workspace_kwargs
        Passed to :class:`Workspace`.

    Returns
    -------
    Trajectory
        The recorded LLM turns, ready for :func:`process_reward`.

    Raises
    ------
    TraceError
        Malformed trace or a message the protocol forbids, naming its index.
    """
    from ._engine import Workspace
    from ._trace import load_trace

    items = load_trace(trace)
    ws = Workspace(
        budget, tokenizer=tokenizer, store=store, hard_limit=hard_limit, **workspace_kwargs
    )
    source = str(trace) if isinstance(trace, (str, os.PathLike)) else ""
    rec = TrajectoryRecorder(ws, source=source)
    drive_trace(
        ws,
        items,
        lambda i, _is_action: rec.begin_turn(message_index=i),
        lambda i, exc: TraceError(i, str(exc)),
    )
    return rec.finish()
