"""The per-character lower bound on a byte-level BPE's count (:class:`CharBound`):
a weight ``1 / L(c)`` per code point read off the vocabulary, which the budget
guard (paper, "Implementation Details") applies before counting a long result."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from ._errors import WorkspaceArgumentError

__all__ = ["BOUND_WINDOW", "CharBound"]


#: Characters the lower bound reads at a time (one slice, one UTF-8 encode
#: and, for a normalising tokenizer, one NFC check per window).
BOUND_WINDOW = 1 << 16


# The UTF-8 continuation bytes (deleted to count a token's lead bytes).
_CONTINUATION = bytes(range(0x80, 0xC0))
# UTF-8 sequence lengths by lead byte (0 for continuation bytes and the bytes
# 0xF8-0xFF that start no sequence), and the code points of each length.
_SEQ_LEN = bytes([1] * 0x80 + [0] * 0x40 + [2] * 0x20 + [3] * 0x10 + [4] * 0x08 + [0] * 0x08)
_SEQ_RANGE = {2: (0x80, 0x7FF), 3: (0x800, 0xFFFF), 4: (0x10000, 0x10FFFF)}
#: Stored per-code-point values up to this are the value itself; this one
#: stands for :attr:`CharBound.most`.
_LEADS_CAP = 255


def _lead_count(token: bytes) -> int:
    """How many code points' lead bytes ``token`` holds wherever it tiles
    valid UTF-8: its bytes that are not continuation bytes."""
    return len(token.translate(None, _CONTINUATION))


def _prefix_range(prefix: bytes) -> tuple[int, int]:
    """The code points whose UTF-8 encoding starts with ``prefix`` (a lead
    byte of a sequence longer than ``prefix``, then continuation bytes), as
    ``(lo, hi)``; ``lo > hi`` when there are none (an overlong or too-large
    prefix such as ``C0`` or ``F4 90``). UTF-8 keeps code point order, so the
    code points sharing a prefix are the consecutive ones its bits fix."""
    k, j = _SEQ_LEN[prefix[0]], len(prefix)
    bits = prefix[0] & (0x7F >> k)
    for b in prefix[1:]:
        bits = bits << 6 | (b & 0x3F)
    free = 6 * (k - j)
    lo, hi = _SEQ_RANGE[k]
    return max(lo, bits << free), min(hi, ((bits + 1) << free) - 1)


def _trailing_prefix(token: bytes) -> bytes:
    """The proper prefix of a code point's encoding that ``token`` ends with
    (its last lead byte and the continuation bytes after it, fewer than that
    lead's sequence needs), or ``b""``."""
    i = len(token) - 1
    while i >= 0 and 0x80 <= token[i] < 0xC0 and len(token) - i < 4:
        i -= 1
    if i < 0 or 0x80 <= token[i] < 0xC0:
        return b""
    return token[i:] if _SEQ_LEN[token[i]] > len(token) - i else b""


@dataclass(frozen=True)
class CharBound:
    """A lower bound on a byte-level BPE's count from per-character weights
    read off its vocabulary (the general form of ``VocabBound.ideographs``).

    Such a tokenizer (after its normaliser, if any) encodes a text ``s`` to
    tokens whose byte strings, concatenated, are ``s.encode("utf-8")``, each
    byte in exactly one token. Call a byte that is not a continuation byte
    (0x80-0xBF) a lead byte: each code point of ``s`` has exactly one, so it
    lies in exactly one token. For a code point ``c`` let ``L(c)`` be the most
    lead bytes held by a vocabulary token that could hold ``c``'s lead byte
    in such a tiling. A token ``t`` that holds it starts at or before it, so
    either ``t`` holds ``c``'s whole encoding, or ``t`` ends inside it: ``t``
    ends with a proper non-empty prefix of ``c``'s encoding (its lead byte
    and some of its continuation bytes). Hence::

        L(c) = max lead bytes of a token that contains enc(c), or ends with
               a proper non-empty prefix of enc(c)

    Now take an encoding of ``s`` into ``count`` tokens. A token holding
    ``m`` lead bytes holds the lead bytes of ``m`` code points of ``s`` (its
    lead bytes are exactly theirs), and each of them has ``L(c) >= m``
    (this token could hold its lead byte), so their weights ``1 / L(c)`` sum
    to at most ``m * (1 / m) = 1`` (a token with no lead byte holds none).
    Summing over the tokens, each code point counted once::

        count >= sum over the code points c of s of 1 / L(c),

    and since ``count`` is an integer, ``count >= ceil(that sum)``. The sum
    is computed exactly: with ``D`` a common multiple of every ``L`` value,
    each code point adds the integer ``D // L(c)``, and the bound is the
    integer ceiling of the total over ``D`` (no floating point).

    The maxima are read once off the vocabulary (:meth:`from_tokens`): a
    token's lead bytes at which a complete valid encoding starts are the code
    points it contains (Python's strict UTF-8 decoder with ``errors=
    "ignore"`` yields exactly those), and a trailing proper prefix fixes the
    top bits of the code points it can start, a range of consecutive code
    points. A vocabulary superset only raises ``L``, which weakens the bound.
    A code point that no token can hold gets the most lead bytes of any
    token (it cannot occur in a tiling at all; that value bounds every
    token's ``m``, so the argument holds whatever the vocabulary).

    Per character this is the strongest bound of this kind: a rare CJK
    ideograph that every vocabulary token holding it splits (a token ending
    with its lead byte, the next with its continuation bytes) has ``L(c)``
    of 1 or 2, against ``ideographs`` = 10 for o200k_base and 16 for
    DeepSeek-V4, whose longest CJK tokens set that field for every ideograph.
    Texts of common characters, which sit in long tokens, gain less (their
    ``L`` is close to ``ideographs``, or above it when those tokens also hold
    a space), so :class:`VocabBound` takes the larger of both.

    Attributes
    ----------
    leads : bytes
        ``leads[i]`` is ``L(chr(i))`` for ``i < len(leads) - 1``; the last
        entry is ``L`` of every code point from ``len(leads) - 1`` on (the
        table is cut where it turns constant). A value of 255 stands for
        :attr:`most`. Every entry is >= 1.
    most : int
        The most lead bytes of any vocabulary token (>= 1; the value of the
        entries 255, so it is >= 255 when there are any).
    """

    leads: bytes = field(repr=False)
    most: int

    def __post_init__(self) -> None:
        if not isinstance(self.leads, bytes) or not self.leads or 0 in self.leads:
            raise WorkspaceArgumentError(
                "leads",
                self.leads if not isinstance(self.leads, bytes) else f"<{len(self.leads)} bytes>",
                "must be non-empty bytes with every entry >= 1",
                "read it off the vocabulary: CharBound.from_tokens",
            )
        low = _LEADS_CAP if _LEADS_CAP in self.leads else 1
        if isinstance(self.most, bool) or not isinstance(self.most, int) or self.most < low:
            raise WorkspaceArgumentError(
                "most",
                self.most,
                f"must be an int >= {low} (the most lead bytes of a token; entries "
                f"{_LEADS_CAP} stand for it)",
                "read it off the vocabulary: CharBound.from_tokens",
            )

    @classmethod
    def from_tokens(cls, tokens: Iterable[bytes]) -> CharBound:
        """The bound of a vocabulary given as its tokens' byte strings.

        Parameters
        ----------
        tokens : iterable of bytes
            Every token of the vocabulary (a superset only weakens the bound).

        Returns
        -------
        CharBound
            ``L`` of every code point (see the class docstring).
        """
        import numpy as np

        parts: list[str] = []
        sizes: list[int] = []
        counts: list[int] = []
        prefixes: dict[bytes, int] = {}
        most = 1
        for t in tokens:
            if not isinstance(t, bytes):
                raise WorkspaceArgumentError(
                    "tokens",
                    f"an item {t!r:.40}",
                    "must hold the tokens' byte strings (bytes)",
                    "pass e.g. encoding.token_byte_values()",
                )
            m = _lead_count(t)
            most = max(most, m)
            if t.isascii():
                parts.append(t.decode("ascii"))
            else:
                parts.append(t.decode("utf-8", "ignore"))
                p = _trailing_prefix(t)
                if p and m > prefixes.get(p, 0):
                    prefixes[p] = m
            sizes.append(len(parts[-1]))
            counts.append(m)
        table = np.zeros(0x110000, dtype=np.int64)
        held = np.frombuffer("".join(parts).encode("utf-32-le"), dtype="<u4")
        np.maximum.at(table, held, np.repeat(np.asarray(counts, dtype=np.int64), sizes))
        for p, m in prefixes.items():
            lo, hi = _prefix_range(p)
            if lo <= hi:
                np.maximum(table[lo : hi + 1], m, out=table[lo : hi + 1])
        table[table == 0] = most
        np.minimum(table, _LEADS_CAP, out=table)
        # Cut where the table turns constant: the last entry stands for the rest.
        changes = np.flatnonzero(table[1:] != table[:-1])
        end = int(changes[-1]) + 2 if len(changes) else 1
        return cls(table[:end].astype(np.uint8).tobytes(), most)

    def max_leads(self, char: str) -> int:
        """``L(char)``: the most lead bytes of a token that could hold the
        lead byte of ``char`` (a single character).

        Parameters
        ----------
        char : str
            One character.

        Returns
        -------
        int
            ``L(char)`` (>= 1).
        """
        if not isinstance(char, str) or len(char) != 1:
            raise WorkspaceArgumentError(
                "char", char, "must be a single character", "pass e.g. char='中'"
            )
        v = self.leads[min(ord(char), len(self.leads) - 1)]
        return self.most if v == _LEADS_CAP else v

    @cached_property
    def _scale(self) -> tuple[int, list[int]]:
        """``D``, a common multiple of every ``L`` value, and ``D // v`` for
        each stored value ``v`` (0 for 0, which no entry holds)."""
        d = math.lcm(*range(1, _LEADS_CAP), self.most)
        per = [0, *(d // v for v in range(1, _LEADS_CAP)), d // self.most]
        return d, per

    @cached_property
    def _table(self) -> Any:
        import numpy as np

        return np.frombuffer(self.leads, dtype=np.uint8)

    def weight(self, text: str) -> int:
        """``D`` times the sum of ``1 / L(c)`` over the code points of
        ``text``, exactly (``D`` is :attr:`scale`). Weights add up:
        ``weight(a + b) == weight(a) + weight(b)``, so a long text is weighed
        a window at a time.

        Parameters
        ----------
        text : str
            Any text without unpaired surrogates (read whole: pass one window
            of a long text at a time).

        Returns
        -------
        int
            The scaled sum; ``ceil(weight / scale)`` is the bound.
        """
        import numpy as np

        if not text:
            return 0
        cps = np.frombuffer(text.encode("utf-32-le"), dtype="<u4")
        idx = np.minimum(cps, np.uint32(len(self.leads) - 1))
        hist = np.bincount(self._table[idx], minlength=_LEADS_CAP + 1)
        per = self._scale[1]
        return sum(int(hist[v]) * per[v] for v in np.flatnonzero(hist))

    @property
    def scale(self) -> int:
        """``D``: :meth:`weight` divided by it is the sum of the weights."""
        return self._scale[0]

    def at_least(self, text: str, limit: int | None = None, *, window: int = BOUND_WINDOW) -> int:
        """``ceil(sum of 1 / L(c))`` over the code points of ``text`` (read a
        window at a time), a lower bound on the count of a tokenizer that
        does not normalise (for one that does, :class:`VocabBound` applies
        this to the normalised text).

        Parameters
        ----------
        text : str
            Any text without unpaired surrogates.
        limit : int, optional
            Stop reading as soon as the bound exceeds it (then the value
            returned exceeds ``limit``; it is still a lower bound).
        window : int
            Characters read at a time.

        Returns
        -------
        int
            The bound over the part read.
        """
        if isinstance(window, bool) or not isinstance(window, int) or window < 1:
            raise WorkspaceArgumentError(
                "window", window, "must be an int >= 1", "pass e.g. window=BOUND_WINDOW"
            )
        d, total = self.scale, 0
        for start in range(0, len(text), window):
            total += self.weight(text[start : start + window])
            if limit is not None and -(-total // d) > limit:
                break
        return -(-total // d)
