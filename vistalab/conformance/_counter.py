"""The suite's token counter: the workspace's own request accounting
(:func:`vistalab.workspace.count_request_tokens`) over the offline cl100k_base
tokenizer by default, any vista-lab :class:`~vistalab.workspace.Tokenizer`, or a
user's callable."""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from vistalab._core import DomainError
from vistalab.workspace import (
    REPLY_PRIMING,
    Tokenizer,
    anthropic_to_openai,
    count_request_tokens,
    get_tokenizer,
    message_tokens,
)
from vistalab.workspace._validate import _content_iv

__all__ = ["SuiteCounter", "as_counter", "to_counted_messages"]


def conversation_iv(conversation: Any, name: str = "conversation") -> Any:
    """``conversation`` if it has a conversation's shape: a list of messages or
    Responses items (mappings), an Anthropic ``{"system", "messages"}`` document
    whose ``messages`` is one, or a Gemini ``{"contents"}`` document whose
    ``contents`` is one; else a :class:`DomainError` naming ``name``."""
    msgs: Any = conversation
    if isinstance(conversation, Mapping):
        key = "contents" if "contents" in conversation else "messages"
        msgs = conversation.get(key) if key in conversation else conversation
        msgs = [] if msgs is None else msgs
    if isinstance(msgs, (str, bytes, Mapping)) or not isinstance(msgs, (list, tuple)) \
            or not all(isinstance(m, Mapping) for m in msgs):
        raise DomainError(name, conversation, "must be a list of messages (mappings), "
                          "an Anthropic {'system', 'messages'} document or a Gemini "
                          "{'contents'} document",
                          "pass e.g. [{'role': 'user', 'content': 'hi'}]")
    return conversation


def _openai_text(messages: Any) -> list[dict[str, Any]]:
    """OpenAI messages with content parts joined as the workspace joins them
    (text parts by newlines, other parts as their opaque stand-in line)."""
    out = []
    for m in messages:
        m = dict(m)
        m["content"] = _content_iv(m.get("content"), m.get("role"))
        out.append(m)
    return out


def to_counted_messages(request: Any, protocol: str) -> list[dict[str, Any]]:
    """The OpenAI text messages whose tokens are counted for ``request``.

    OpenAI: the messages themselves (content parts joined). Anthropic: the
    workspace's documented projection (:data:`vistalab.workspace.PROJECTION_RULES`)
    of the top-level ``system`` and the messages, so the same conversation costs
    the same in both formats. Responses: each model turn as one assistant
    message (:func:`~vistalab.conformance._responses.to_chat`): a reasoning
    item's summary text is counted, its ``encrypted_content`` is not (it is
    opaque: the reasoning tokens the provider decrypts and bills cannot be
    counted here), and an ``input_image`` counts as the workspace's opaque
    stand-in line, not as the provider prices images. Gemini: the workspace's
    projection (:data:`vistalab.workspace.GEMINI_PROJECTION_RULES`); a
    ``thoughtSignature`` is opaque and not counted, and an ``inlineData`` image
    counts as its stand-in line: Gemini prices an image by its pixel size (258
    tokens up to 384x384, 258 per 768x768 tile above; ai.google.dev/gemini-api/
    docs/tokens), which this counter does not read, so it cannot count images
    as Gemini does.
    """
    if protocol == "responses":
        from ._responses import to_chat

        return _openai_text(to_chat(list(request)))
    if protocol == "gemini":
        from ._gemini import to_chat as gemini_chat

        return _openai_text(gemini_chat(request))
    if protocol == "anthropic":
        if isinstance(request, Mapping):
            msgs = anthropic_to_openai(request.get("messages") or [], system=request.get("system"))
        else:
            msgs = anthropic_to_openai(list(request))
        return _openai_text(msgs)
    return _openai_text(request)


@dataclass(frozen=True)
class SuiteCounter:
    """``count(request) -> int`` for one protocol, with the name reports show.

    A counter built from a :class:`~vistalab.workspace.Tokenizer` is a sum over
    messages, so it also gives each message's cost (:meth:`costs`), which the
    budget strategy uses to price every tail of a conversation at once.

    Attributes
    ----------
    name : str
        What reports call it.
    protocol : str
        The wire format it counts (``"openai"`` or ``"anthropic"``).
    tokenizer : Tokenizer or None
        The tokenizer behind it (None for a user's callable).
    """

    name: str
    protocol: str
    _count: Callable[[Any], int]
    tokenizer: Tokenizer | None = None

    def __call__(self, request: Any) -> int:
        """The tokens of ``request``; a user's callable that fails on it or returns
        something other than a whole number is refused naming ``counter`` (an
        :class:`ArgumentTypeError`, also a ``TypeError``)."""
        from vistalab._core._door import ArgumentTypeError

        fix = "pass a callable request -> int, or a tokenizer name"
        try:
            got = self._count(request)
        except (TypeError, ValueError, AttributeError, KeyError) as exc:
            if self.tokenizer is not None or isinstance(exc, DomainError):
                raise
            raise ArgumentTypeError("counter", self._count, "must count a request (it raised "
                                    f"{type(exc).__name__})", fix) from exc
        if isinstance(got, bool) or not isinstance(got, numbers.Real) or not (
                isinstance(got, numbers.Integral)
                or (math.isfinite(got) and float(got).is_integer())):
            raise ArgumentTypeError("counter", self._count, "must return a token count (an "
                                    f"int), not {type(got).__name__}", fix)
        return int(got)

    def costs(self, conversation: Any) -> tuple[int, int, list[int]] | None:
        """``(constant, system, per_message)`` with ``count`` of any tail equal
        to ``constant + system (if kept) + sum(per_message[i:])``; None for a
        counter that is not a sum over messages. For OpenAI the system
        messages are in ``per_message`` and ``system`` is 0.

        Parameters
        ----------
        conversation : list or dict
            The conversation: a list of OpenAI messages, or an Anthropic
            ``{"system", "messages"}`` document.

        Returns
        -------
        tuple of (int, int, list of int) or None
            The reply priming, the system prompt's cost and each message's cost;
            None when the counter is not a tokenizer.
        """
        conversation_iv(conversation)
        tok = self.tokenizer
        if tok is None or self.protocol in ("responses", "gemini"):
            return None  # Responses: a model turn of several items is one counted message
        if self.protocol == "anthropic":
            system = conversation.get("system")
            sys_cost = (
                sum(message_tokens(m, tok) for m in _openai_text(
                    anthropic_to_openai([], system=system)))
                if system is not None else 0
            )
            per = [
                sum(message_tokens(m, tok) for m in _openai_text(anthropic_to_openai([msg])))
                for msg in conversation.get("messages") or []
            ]
            return REPLY_PRIMING, sys_cost, per
        return REPLY_PRIMING, 0, [message_tokens(m, tok) for m in _openai_text(conversation)]


class _Memo:
    """A tokenizer that remembers its counts (the suite counts the same texts
    again and again: every tail of a conversation, every run of a manager)."""

    _LIMIT = 20_000

    def __init__(self, tok: Tokenizer) -> None:
        self.name = tok.name
        self.additive = tok.additive
        self._count = tok.count
        self._seen: dict[str, int] = {}

    def count(self, text: str) -> int:
        n = self._seen.get(text)
        if n is None:
            if len(self._seen) >= self._LIMIT:
                self._seen.clear()
            n = self._seen[text] = self._count(text)
        return n


def as_counter(counter: Any, protocol: str) -> SuiteCounter:
    """Normalise ``counter`` (None, a tokenizer name, a Tokenizer or a callable).

    Parameters
    ----------
    counter : None, str, Tokenizer or callable
        None for cl100k_base; a registered tokenizer name; a vista-lab
        Tokenizer (counted with :func:`vistalab.workspace.count_request_tokens`);
        or a callable ``count(request) -> int`` used as it is.
    protocol : {"openai", "anthropic", "responses", "gemini"}
        The wire format of the requests it will count.

    Returns
    -------
    SuiteCounter

    Raises
    ------
    DomainError
        If ``counter`` is none of these.
    UnknownNameError
        For an unknown tokenizer name.
    """
    if counter is None or isinstance(counter, str):
        counter = get_tokenizer("cl100k_base" if counter is None else counter)
    if isinstance(counter, Tokenizer):
        tok: Tokenizer = _Memo(counter)

        def count(request: Any) -> int:
            return count_request_tokens(to_counted_messages(request, protocol), (), tok)

        return SuiteCounter(f"{counter.name} (vistalab.workspace.count_request_tokens)", protocol,
                            count, tok)
    if callable(counter):
        name = getattr(counter, "__qualname__", None) or type(counter).__qualname__
        return SuiteCounter(str(name), protocol, counter)
    raise DomainError(
        "counter", counter,
        "must be None (cl100k_base), a tokenizer name, a vistalab.workspace.Tokenizer, or a "
        "callable count(messages) -> int",
        "pass e.g. counter=get_tokenizer('o200k_base')",
    )
