"""Lower bounds on a tokenizer's count without tokenising: UTF-8 lengths, the
byte bound a vocabulary declares, :class:`VocabBound`, read off a byte-level
BPE's tokens (with the per-character weights of ``_char_bound``), and
:class:`SplitBound`, which the budget guard (paper, "Implementation Details")
applies before counting a long result."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._char_bound import BOUND_WINDOW, CharBound
from ._errors import WorkspaceArgumentError

__all__ = [
    "CLASS_SPLITS",
    "WORD_SPLITS",
    "NFC_BOUNDARIES",
    "NFC_SHRINK",
    "PAIR_SPLIT_PATTERNS",
    "SplitBound",
    "VocabBound",
    "count_lower_bound",
    "max_token_bytes",
    "max_token_bytes_for",
    "utf8_length",
]


#: Texts up to this many characters are encoded to UTF-8 in one go; longer
#: ones a piece at a time (bounded memory).
_UTF8_PIECE = 1 << 16


def utf8_length(text: str) -> int:
    """UTF-8 bytes of ``text``, encoded a piece at a time for a long non-ASCII
    text (no copy of more than one piece; a ``str`` slice never splits a code
    point). O(1) for an ASCII text.

    Parameters
    ----------
    text : str
        Any text without unpaired surrogates.

    Returns
    -------
    int
        ``len(text.encode("utf-8"))``.
    """
    if text.isascii():
        return len(text)
    if len(text) <= _UTF8_PIECE:
        return len(text.encode("utf-8"))
    return sum(
        len(text[i : i + _UTF8_PIECE].encode("utf-8")) for i in range(0, len(text), _UTF8_PIECE)
    )


def max_token_bytes(tokenizer: Any) -> int | None:
    """The tokenizer's ``max_token_bytes`` if it declares a valid one.

    Parameters
    ----------
    tokenizer : Tokenizer
        Any object; the optional member is read with ``getattr``.

    Returns
    -------
    int or None
        The declared int >= 1, else None (then only ``count >= 1`` bounds a
        text from below).
    """
    m = getattr(tokenizer, "max_token_bytes", None)
    if isinstance(m, bool) or not isinstance(m, int) or m < 1:
        return None
    return m


def max_token_bytes_for(tokenizer: Any, text: str) -> int | None:
    """The byte bound that applies to ``text``: ``max_token_bytes_ascii`` for
    an ASCII text when declared (an int >= 1), else :func:`max_token_bytes`."""
    if text.isascii():
        m = getattr(tokenizer, "max_token_bytes_ascii", None)
        if not isinstance(m, bool) and isinstance(m, int) and m >= 1:
            return m
    return max_token_bytes(tokenizer)


def count_lower_bound(tokenizer: Any, text: str, limit: int | None = None) -> int:
    """The tokenizer's ``count_lower_bound(text, limit)`` if it declares one,
    else ``min(1, len(text))`` (the contract's own lower bound).

    Parameters
    ----------
    tokenizer : Tokenizer
        Any object; the optional member is read with ``getattr``.
    text : str
        The text.
    limit : int, optional
        The bound may stop reading once it exceeds this.

    Returns
    -------
    int
        A lower bound on ``tokenizer.count(text)`` (if the tokenizer's member
        keeps the contract: ``vistalab.testing.check_tokenizer`` checks it on
        samples).
    """
    bound = getattr(tokenizer, "count_lower_bound", None)
    if callable(bound):
        got = bound(text, limit)
        if not isinstance(got, bool) and isinstance(got, int):
            return got
    return min(1, len(text))


# Per byte: how many continuation bytes a UTF-8 sequence that starts with it
# carries (0 for ASCII and continuation bytes, 1-3 for lead bytes; 3 for the
# bytes 0xF5-0xFF that valid UTF-8 never holds, which only weakens the bound).
_EXTRA = bytes([0] * 0xC0 + [1] * 0x20 + [2] * 0x10 + [3] * 0x10)


def _extra_bytes(token: bytes) -> int:
    """The continuation bytes of the UTF-8 sequences whose lead byte ``token``
    holds (whether those bytes are in ``token`` or in the next token)."""
    return sum(token.translate(_EXTRA))


# Every byte but the UTF-8 lead bytes of U+4000-U+9FFF.
_NOT_IDEOGRAPH_LEADS = bytes(b for b in range(256) if not 0xE4 <= b <= 0xE9)


def _ideograph_leads(data: bytes) -> int:
    """How many of ``data``'s bytes are lead bytes of U+4000-U+9FFF."""
    return len(data.translate(None, _NOT_IDEOGRAPH_LEADS))


#: Characters before which no canonical normalisation ever looks back: the
#: first character of each one's canonical decomposition is a starter
#: (combining class 0) that is never the second character of a canonical
#: pair decomposition and not a Hangul medial vowel or final consonant, so it
#: composes with nothing before it and blocks everything after it from
#: composing with anything before it (UAX #15, "Canonical Composition
#: Algorithm"); canonical reordering only swaps non-starters. Hence
#: ``NFC(a + b) == NFC(a) + NFC(b)`` whenever ``b`` starts with one of them.
#: ASCII, Latin-1, Greek and Cyrillic letters, the CJK ideographs, kana and
#: Hangul syllables. ``property_tests/test_workspace_long_results.py`` checks
#: every character of the class against Python's Unicode database and the
#: equality on random texts.
NFC_BOUNDARIES = re.compile(
    "[\x00-\x7f\u00c0-\u00ff\u0391-\u03a9\u03b1-\u03c9\u0410-\u044f"
    "\u3041-\u3096\u30a1-\u30fa\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3]"
)


@dataclass(frozen=True)
class VocabBound:
    """A lower bound on a byte-level BPE's count, read off its vocabulary.

    Such a tokenizer (after its normaliser, if any) encodes a text ``s`` to
    tokens whose byte strings, concatenated, are ``s.encode("utf-8")``: each
    token is a run of those bytes, each byte in exactly one token. So with
    ``B`` the text's UTF-8 bytes, ``E`` the continuation bytes of its code
    points (``B`` minus the code points) and ``I`` its code points in
    U+4000-U+9FFF (the CJK ideographs; UTF-8 lead bytes 0xE4-0xE9), every
    code point's lead byte lying in exactly one token::

        count >= ceil(B / longest),  count >= ceil(E / extra),  count >= ceil(I / ideographs)

    where ``longest``, ``extra`` and ``ideographs`` are the most bytes, the
    most continuation bytes of the sequences whose lead byte it holds, and
    the most lead bytes 0xE4-0xE9 that one token of the vocabulary holds
    (proved from the tiling; the maxima are computed from every token's
    bytes). For CJK text the third is the strong one: ``ideographs`` is 6
    for the Qwen, cl100k and Llama 3 vocabularies (a token such as
    " 生命周期函数"), 10 for o200k and 16 for DeepSeek-V4's, so a text of CJK
    ideographs counts at least ``chars / 6`` to ``chars / 16`` tokens where
    ``chars / 128`` was all the character count gave. A fourth bound weighs
    each code point by the longest token that could hold it
    (:class:`CharBound`, field ``chars``): ``count >= ceil(sum 1 / L(c))``,
    about ``chars / 2`` on uniformly drawn ideographs (``chars / 1.2`` under
    DeepSeek-V4; most of them are rare, held only by tokens that split them)
    and ``chars / 6`` to ``chars / 2`` on text of common characters drawn by
    Zipf's law (measured by ``benchmarks/_workspace_refusal.py``), whatever
    the longest CJK token. The value is the largest of the four.

    Attributes
    ----------
    longest : int
        The vocabulary's longest token in bytes (>= 1).
    extra : int
        The largest number of continuation bytes of the UTF-8 sequences whose
        lead byte one token holds (>= 1).
    ideographs : int
        The most lead bytes 0xE4-0xE9 one token holds (>= 1).
    nfc : bool
        The tokenizer normalises to NFC first: ``B``, ``E`` and ``I`` are
        those of ``NFC(s)``. The text is then read in windows that end before
        a character of :data:`NFC_BOUNDARIES`, where NFC splits exactly (so
        the windows' figures add up to the text's); an NFC-normalised window
        is its own NFC, another is normalised with Python's ``unicodedata``,
        whose Unicode version must be the tokenizer's (checked by the tests on
        random texts through the tokenizer's own tokens, not proved). A
        stretch of more than a window without such a character is charged
        ``B / NFC_SHRINK`` of its raw bytes and nothing towards ``E`` or ``I``.
        The per-character weights are summed over the same normalised windows
        (the code points of ``NFC(s)`` are those of the windows' NFC), and a
        loose stretch adds nothing to them either.
    chars : CharBound or None
        The vocabulary's per-character bound (read off it by
        :meth:`from_tokens`); None leaves it out.
    """

    longest: int
    extra: int
    ideographs: int = 1
    nfc: bool = False
    chars: CharBound | None = None

    def __post_init__(self) -> None:
        for name, value in (
            ("longest", self.longest),
            ("extra", self.extra),
            ("ideographs", self.ideographs),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise WorkspaceArgumentError(
                    name, value, "must be an int >= 1", "read it off the vocabulary: from_tokens"
                )
        if not isinstance(self.nfc, bool):
            raise WorkspaceArgumentError("nfc", self.nfc, "must be True or False")
        if self.chars is not None and not isinstance(self.chars, CharBound):
            raise WorkspaceArgumentError(
                "chars",
                self.chars,
                "must be a CharBound or None",
                "read it off the vocabulary: CharBound.from_tokens, or leave it out",
            )

    @classmethod
    def from_tokens(cls, tokens: Iterable[bytes], *, nfc: bool = False) -> VocabBound:
        """The bound of a vocabulary given as its tokens' byte strings.

        Parameters
        ----------
        tokens : iterable of bytes
            Every token of the vocabulary (a superset only weakens the bound).
        nfc : bool
            The tokenizer normalises to NFC before encoding.

        Returns
        -------
        VocabBound
            The maxima over the tokens (each at least 1) and their
            :class:`CharBound`.
        """
        tokens = list(tokens)
        chars = CharBound.from_tokens(tokens)  # checks that they are bytes
        longest = extra = ideographs = 1
        for t in tokens:
            longest = max(longest, len(t))
            extra = max(extra, _extra_bytes(t))
            ideographs = max(ideographs, _ideograph_leads(t))
        return cls(longest, extra, ideographs, nfc, chars)

    def at_least(self, text: str, limit: int | None = None, *, window: int = BOUND_WINDOW) -> int:
        """A lower bound on the tokenizer's count of ``text``.

        Parameters
        ----------
        text : str
            Any text without unpaired surrogates.
        limit : int, optional
            Stop reading as soon as the bound exceeds it (then the value
            returned exceeds ``limit``; it is still a lower bound).
        window : int
            Characters read at a time (tests use small ones).

        Returns
        -------
        int
            The largest of the bounds over the part read (a lower bound on the
            whole, since ``B``, ``E``, ``I`` and the weights' sum only grow as
            windows are added). O(1) for an ASCII text (the byte bound alone).
        """
        if isinstance(window, bool) or not isinstance(window, int) or window < 1:
            raise WorkspaceArgumentError(
                "window", window, "must be an int >= 1", "pass e.g. window=BOUND_WINDOW"
            )
        n = len(text)
        if text.isascii():
            return -(-n // self.longest)
        nbytes = extra = ideo = weight = loose = start = 0
        chars = self.chars
        while start < n:
            end = min(n, start + window)
            if self.nfc and end < n:
                m = NFC_BOUNDARIES.search(text, end, min(n, end + window))
                if m is not None:
                    end = m.start()
                elif end + window >= n:
                    end = n  # the text's end is a boundary too
                else:
                    # No boundary near: a loose stretch, charged its raw bytes
                    # / NFC_SHRINK (NFC of the text from its start, a boundary,
                    # has at least that many), until it ends at a boundary.
                    end = min(n, end + window)
                    loose += utf8_length(text[start:end])
                    start = end
                    if (
                        limit is not None
                        and self._value(nbytes + -(-loose // NFC_SHRINK), extra, ideo, weight)
                        > limit
                    ):
                        break
                    continue
            piece = text[start:end]
            start = end
            if loose:  # the loose stretch ends here, at a boundary (or the end)
                nbytes, loose = nbytes + -(-(loose + utf8_length(piece)) // NFC_SHRINK), 0
            else:
                if piece.isascii():
                    nbytes += len(piece)
                else:
                    if self.nfc and not unicodedata.is_normalized("NFC", piece):
                        piece = unicodedata.normalize("NFC", piece)
                    raw = piece.encode("utf-8")
                    nbytes, extra = nbytes + len(raw), extra + len(raw) - len(piece)
                    ideo += _ideograph_leads(raw)
                if chars is not None:
                    weight += chars.weight(piece)
            if limit is not None and self._value(nbytes, extra, ideo, weight) > limit:
                break
        return self._value(nbytes + -(-loose // NFC_SHRINK), extra, ideo, weight)

    def _value(self, nbytes: int, extra: int, ideo: int, weight: int = 0) -> int:
        got = max(-(-nbytes // self.longest), -(-extra // self.extra), -(-ideo // self.ideographs))
        return got if self.chars is None else max(got, -(-weight // self.chars.scale))


#: Where an additive tokenizer's count splits exactly (see ``Tokenizer.additive``):
#: before a space that follows a non-space, or after a newline before a
#: character that is neither whitespace nor ``/``.
WORD_SPLITS = re.compile(r"(?<=\S)(?= )|(?<=\n)(?=[^\s/])")

# Character classes of the class split points (see CLASS_SPLITS): letters and
# digits the tokenizers' pre-tokenisers classify the same way in every Unicode
# version (ASCII, and the CJK Unified Ideographs of Unicode 1.1), and
# punctuation that is never a combining mark, never the second character of a
# canonical composition (so NFC never joins it to what precedes it), and not the
# apostrophe the contraction rules start with.
_LETTERS = "A-Za-z\u4e00-\u9fa5"
_DIGITS = "0-9"
_PUNCT = (
    "!\"#$%&()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~"
    "\u3001\u3002\uff01\uff08\uff09\uff0c\uff1a\uff1b\uff1f"
)
#: Split points by character class, for the pre-tokenisers of the shipped
#: vocabularies: between a letter and a digit (either order), and between a
#: letter or digit and a following punctuation mark. No pre-token of
#: cl100k_base, o200k_base, Llama-3, Qwen2/3 or DeepSeek-V3/V4 holds a letter
#: followed by a digit (or a digit by a letter: digits form pre-tokens of their
#: own), nor a letter or digit followed by one of these marks (a pre-token that
#: starts with punctuation may continue with letters, never the reverse), and
#: none of those patterns looks behind, so the pre-tokens after such a position
#: depend only on the text after it, and those before it only on the text
#: before it. BPE merges stay inside pre-tokens, so the count splits exactly
#: there. Base64, hex dumps, identifiers, JSON and CJK text have such
#: positions every few characters, with or without whitespace.
#: ``property_tests/test_workspace_long_results.py`` checks the equality for
#: each shipped tokenizer on random texts.
CLASS_SPLITS = re.compile(
    f"(?<=[{_LETTERS}])(?=[{_DIGITS}{_PUNCT}])|(?<=[{_DIGITS}])(?=[{_LETTERS}{_PUNCT}])"
)
_WORD_AND_CLASS_SPLITS = re.compile(WORD_SPLITS.pattern + "|" + CLASS_SPLITS.pattern)
#: Split-point patterns (see ``Tokenizer.split_points``) whose every match is
#: decided by the two characters around it: each alternative of these is a
#: one-character look-behind and a one-character look-ahead. :class:`SplitBound`
#: counts their matches on bytes.
PAIR_SPLIT_PATTERNS = frozenset((WORD_SPLITS, CLASS_SPLITS, _WORD_AND_CLASS_SPLITS))


class SplitBound:
    """A lower bound on an additive tokenizer's count from its split points.

    When ``count(t) == count(t[:q]) + count(t[q:])`` at every match ``q`` of
    the tokenizer's split points (the contract of ``Tokenizer.split_points``;
    a match in ``t`` is still one in ``t[q:]`` and ``t[:q]``, since its look-
    around characters are kept), ``k`` matches cut a non-empty text into
    ``k + 1`` non-empty pieces that are counted apart, and every non-empty
    text counts at least one token, so ``count(t) >= k + 1``. Word text has a
    split point before nearly every space, base64, hex and JSON one every few
    characters (letter/digit and letter/punctuation changes), so the bound is
    a large share of the count where the vocabulary's byte bound
    (:class:`VocabBound`) gives ``chars / 128``.

    The matches are counted without the regex: a pattern of
    :data:`PAIR_SPLIT_PATTERNS` matches at a position exactly when the pair of
    characters around it is one of the pairs it accepts, so the ASCII
    characters fall into classes (same matches on either side; computed from
    the pattern on all 128 x 128 pairs), the text's UTF-8 bytes are mapped to
    their class codes (``bytes.translate``; a byte of a non-ASCII character
    gets a code no accepted pair holds) and the adjacent pairs of codes that
    the pattern accepts are counted (numpy, a window at a time). Positions
    next to a non-ASCII character are not counted, which only weakens the
    bound.

    Parameters
    ----------
    pattern : re.Pattern
        One of :data:`PAIR_SPLIT_PATTERNS` (the shipped ``WORD_SPLITS``,
        ``CLASS_SPLITS`` and their union).

    Raises
    ------
    WorkspaceArgumentError
        Any other pattern (its matches may look further than one character).
    """

    _built: dict[re.Pattern[str], SplitBound] = {}

    def __init__(self, pattern: re.Pattern[str]) -> None:
        if pattern not in PAIR_SPLIT_PATTERNS:
            raise WorkspaceArgumentError(
                "pattern",
                getattr(pattern, "pattern", pattern),
                "must be a split-point pattern decided by the two characters around each "
                "match (one of PAIR_SPLIT_PATTERNS)",
                "use VocabBound or count the text",
            )
        chars = [chr(i) for i in range(128)]
        hit = [[any(m.start() == 1 for m in pattern.finditer(a + b)) for b in chars] for a in chars]
        # A character's class: its row (as the left one) and column (as the right one).
        sig = [(tuple(hit[a]), tuple(hit[b][a] for b in range(128))) for a in range(128)]
        codes: dict[tuple[Any, ...], int] = {}
        table = bytearray(256)
        for a in range(128):
            table[a] = codes.setdefault(sig[a], len(codes))
        table[128:] = bytes([len(codes)]) * 128  # bytes of non-ASCII characters
        k = len(codes) + 1
        rep = {code: sig.index(key) for key, code in codes.items()}
        accept = bytearray(k * k)  # accept[ca * k + cb]: the pair of codes is a split point
        for ca, a in rep.items():
            for cb, b in rep.items():
                accept[ca * k + cb] = hit[a][b]
        self._table, self._k, self._accept = bytes(table), k, bytes(accept)

    @classmethod
    def of(cls, pattern: re.Pattern[str]) -> SplitBound:
        """The bound of ``pattern``, built once per process.

        Parameters
        ----------
        pattern : re.Pattern
            One of :data:`PAIR_SPLIT_PATTERNS`.

        Returns
        -------
        SplitBound
        """
        got = cls._built.get(pattern)
        if got is None:
            got = cls._built[pattern] = cls(pattern)
        return got

    def at_least(self, text: str, limit: int | None = None, *, window: int = BOUND_WINDOW) -> int:
        """``1 +`` the split points of ``text`` between two ASCII characters
        (0 for an empty text): at most ``count(text)``.

        Parameters
        ----------
        text : str
            Any text (an unpaired surrogate is read as a non-ASCII character).
        limit : int, optional
            Stop reading as soon as the bound exceeds it (the value returned
            then exceeds ``limit``; it is still a lower bound).
        window : int
            Characters read at a time.

        Returns
        -------
        int
            The bound over the part read.
        """
        if not text:
            return 0
        import numpy as np  # only for long texts: the engine's import stays light

        table, k = self._table, self._k
        accept = np.frombuffer(self._accept, dtype=np.bool_)
        found, start, n, last = 1, 0, len(text), b""
        while start < n:
            piece = text[start : start + window].encode("utf-8", "surrogatepass")
            start += window
            data = last + piece.translate(table)  # the pair across the windows too
            codes = np.frombuffer(data, dtype=np.uint8).astype(np.intp)
            found += int(np.count_nonzero(accept[codes[:-1] * k + codes[1:]]))
            last = data[-1:]
            if limit is not None and found > limit:
                break
        return found


def _longest(tokens: Any) -> int:
    """The longest of ``tokens`` (byte strings, or byte-alphabet strings of one
    character per byte), at least 1: what :meth:`VocabBound.from_tokens` reads
    as ``longest``."""
    return max(1, max(map(len, tokens), default=1))


class _VocabBounded:
    """``count_lower_bound`` for a tokenizer that exposes its ``vocab_bound``
    (a :class:`VocabBound`, or None when its vocabulary is not a plain
    byte-level BPE)."""

    if TYPE_CHECKING:  # each tokenizer class defines it

        @property
        def vocab_bound(self) -> VocabBound | None: ...

    def count_lower_bound(self, text: str, limit: int | None = None) -> int:
        """A lower bound on ``count(text)`` without tokenising: the larger of
        the one read off the vocabulary (after the tokenizer's normaliser, e.g.
        NFC for ``qwen3``; see :meth:`VocabBound.at_least`, which includes the
        per-character weights of :class:`CharBound`; ``min(1, len(text))``
        without one) and, when its split points are one of
        :data:`PAIR_SPLIT_PATTERNS`, the one they give
        (:meth:`SplitBound.at_least`).

        Parameters
        ----------
        text : str
            The text.
        limit : int, optional
            Stop reading once the bound exceeds it.

        Returns
        -------
        int
            At most ``count(text)``.
        """
        b = self.vocab_bound
        got = min(1, len(text)) if b is None else b.at_least(text, limit)
        splits = getattr(self, "split_points", None)
        if splits in PAIR_SPLIT_PATTERNS and (limit is None or got <= limit):
            got = max(got, SplitBound.of(splits).at_least(text, limit))
        return got


#: By how much NFC can shrink a text's UTF-8 bytes at most: NFD(s) is the
#: characters' own decompositions (then reordered), and NFC(s) is a sequence of
#: characters whose decompositions concatenate to NFD(s), so
#: ``bytes(s) <= R2 * bytes(NFD(s)) <= R2 * R1 * bytes(NFC(s))`` with
#: ``R1 = max bytes(NFD(c)) / bytes(c)`` (3: U+0390, and Hangul syllables) and
#: ``R2 = max bytes(c) / bytes(NFD(c))`` (3: U+1FEF -> U+0060) over all code
#: points. ``property_tests/test_workspace_long_results.py`` recomputes both
#: from Python's Unicode database (checked on every code point of that version).
NFC_SHRINK = 9
