"""A small trimmer that keeps every invariant: the example of a correct
manager, and the trivial manager the throughput benchmark times."""

from __future__ import annotations

from typing import Any

from ._managers import BudgetTooSmall, Counter
from ._strategies import cut_points, pinned_floor

__all__ = ["tail_trimmer"]


def tail_trimmer(messages: Any, budget: int, count: Counter) -> Any:
    """Keep the system prompt and the longest tail of whole exchanges that fits.

    The system prompt is pinned (always kept, as the suite's default
    ``pinned="system"`` requires). Tails start only at a user turn
    (:func:`cut_points`, user turns only), so a tool result never loses the
    call it answers and the request is valid under the strict rules too. When
    not even the pinned floor (:func:`pinned_floor`: the system prompt and the
    last user turn) fits, it refuses.

    Parameters
    ----------
    messages : list or dict
        OpenAI chat messages, an Anthropic ``{"system", "messages"}`` document,
        Responses input items or a Gemini ``{"systemInstruction", "contents"}``
        document.
    budget : int
    count : callable
        The token counter the request must fit by.

    Returns
    -------
    list or dict
        The kept tail, in the input's format.

    Raises
    ------
    BudgetTooSmall
        When the pinned floor does not fit ``budget``.
    """
    if isinstance(messages, dict) and "contents" in messages:  # Gemini
        from ._gemini import gemini_tail

        for i in cut_points(messages, "gemini"):
            request = gemini_tail(messages, i, keep_system=True)
            if count(request) <= budget:
                return request
        floor = pinned_floor(messages, "gemini")
    elif isinstance(messages, dict):
        turns = list(messages.get("messages") or [])
        for i in cut_points(messages, "anthropic"):
            request = {"system": messages.get("system"), "messages": turns[i:]}
            if count(request) <= budget:
                return request
        floor = pinned_floor(messages, "anthropic")
    else:
        system = [m for m in messages if m.get("role") == "system"]
        for i in cut_points(messages, "openai"):
            if messages[i].get("role") != "user":
                continue
            tail = system + [m for m in messages[i:] if m.get("role") != "system"]
            if count(tail) <= budget:
                return tail
        floor = pinned_floor(messages, "openai")
    raise BudgetTooSmall(budget, count(floor))
