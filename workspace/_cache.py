"""Prompt-cache friendliness of successive renderings: how much of a request is
a byte-identical prefix of the request before it (providers bill that part as
a cache read, at a fraction of the price)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ._accounting import canonical_json, message_tokens, tools_tokens
from ._tokenizers import Tokenizer

__all__ = ["cacheable_prefix_tokens", "common_prefix_messages"]


def common_prefix_messages(
    previous: Sequence[Mapping[str, Any]], current: Sequence[Mapping[str, Any]]
) -> int:
    """Number of leading messages the two lists share byte for byte (compared
    as canonical JSON, so key order does not matter).

    Parameters
    ----------
    previous, current : sequence of mapping
        Two consecutive requests' messages.

    Returns
    -------
    int
        The shared leading messages: what a provider's prompt cache can reuse.
    """
    n = 0
    for a, b in zip(previous, current, strict=False):
        if a is not b and canonical_json(a) != canonical_json(b):
            break
        n += 1
    return n


def cacheable_prefix_tokens(previous: Any, current: Any, tokenizer: Tokenizer) -> int:
    """Tokens of ``current`` that repeat a byte-identical prefix of ``previous``.

    Both are OpenAI-format renderings (``messages``, ``tools``). The
    dashboard, the last message of every rendering, is left out of both
    sides: it changes every turn. The tool schemas lead the request, so they
    count as cached when both requests carry the same ones. Granularity is
    whole messages (a provider may also cache part of the first differing
    message; this is the lower bound). ``previous=None`` (the first request)
    gives 0.

    Parameters
    ----------
    previous, current : Rendering or None
    tokenizer : Tokenizer

    Returns
    -------
    int
        Cached-prefix tokens, ``0 <= n <= current.tokens``.
    """
    if previous is None:
        return 0
    if list(previous.tools) != list(current.tools):
        return 0
    prev = previous.messages[:-1]
    cur = current.messages[:-1]
    k = common_prefix_messages(prev, cur)
    return tools_tokens(current.tools, tokenizer) + sum(
        message_tokens(m, tokenizer) for m in cur[:k]
    )
