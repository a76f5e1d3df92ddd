"""A small trimmer that keeps every invariant: the example of a correct
manager, and the trivial manager the throughput benchmark times."""

from __future__ import annotations

from typing import Any

from ._managers import Counter
from ._strategies import cut_points, minimal_tail

__all__ = ["tail_trimmer"]


def tail_trimmer(messages: Any, budget: int, count: Counter) -> Any:
    """Keep the longest protocol-valid tail of the conversation that fits.

    Tails start only where a request may start (:func:`cut_points`: a user
    turn, or for OpenAI an assistant message), so a tool result never loses
    the call it answers. The system prompt is kept when it fits. When nothing
    fits, the smallest valid tail (:func:`minimal_tail`) is returned.

    Parameters
    ----------
    messages : list or dict
        OpenAI chat messages, or an Anthropic ``{"system", "messages"}`` document.
    budget : int
    count : callable
        The token counter the request must fit by.

    Returns
    -------
    list or dict
        The kept tail, in the input's format.
    """
    if isinstance(messages, dict):
        turns = list(messages.get("messages") or [])
        for keep in (True, False):
            system = messages.get("system") if keep else None
            for i in cut_points(messages, "anthropic"):
                request = {"system": system, "messages": turns[i:]}
                if count(request) <= budget:
                    return request
        return minimal_tail(messages, "anthropic")
    system = [m for m in messages if m.get("role") == "system"]
    for head in (system, []):
        for i in cut_points(messages, "openai"):
            tail = head + [m for m in messages[i:] if m.get("role") != "system"]
            if count(tail) <= budget:
                return tail
    return minimal_tail(messages, "openai")
