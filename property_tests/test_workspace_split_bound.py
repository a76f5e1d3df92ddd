"""The split-point lower bound (``SplitBound``): a long result over the
per-result cap is refused once ``1 +`` its split points pass the cap, without
counting it (paper, Methodology, "Workspace invariants": a result that cannot
fit is replaced by a rejection notice). Its soundness rests on the split-point
contract, which ``test_workspace_long_results`` checks for every shipped
tokenizer; here: the byte counting equals its definition (the regex's matches
between two ASCII characters), the bound never exceeds a real count, and a
wrong bound is caught."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from vistalab.workspace import TOKENIZERS, SplitBound, WorkspaceArgumentError, get_tokenizer
from vistalab.workspace._accounting import count_text
from vistalab.workspace._tokenizers import _WORD_AND_CLASS_SPLITS, CLASS_SPLITS, WORD_SPLITS

from vistalab.testing import check_tokenizer

# Every class the rules name and those they must avoid: apostrophes, slashes
# after newlines, whitespace other than a space (tab, CR, form feed, the
# separators U+001C-U+001F that Python counts as whitespace), controls, and
# non-ASCII letters, marks, CJK and spaces next to ASCII ones.
_ALPHABET = list("abzXYZ0189+/=,.;:!?\"'{}[]()-_~@# \n\t\r\x0c\x1c\x1f\x01\x7f") + [
    "é",
    "\u0301",
    "中",
    "。",
    "\u3000",
    "\xa0",
    "😀",
    "ß",
    "٣",
]
# Fragments of the texts results hold, so that every pair of classes meets
# often in a few examples (single characters rarely line up as words do).
_FRAGMENTS = [
    "the",
    "Data",
    " ",
    "  ",
    "\n",
    "\n\n",
    "\t",
    "ab1",
    "x9y",
    "404",
    "3.14",
    "/usr/bin",
    '{"k":',
    '"v"}',
    "[1,2]",
    "it's",
    "don't",
    "+/=",
    "a-b_c",
    "\r\n",
    " (ok)",
    "é",
    "中文",
    "。",
    "\xa0",
    "\x1c",
    "😀",
]
_TEXT = st.text(alphabet=st.sampled_from(_ALPHABET), max_size=80) | st.lists(
    st.sampled_from(_FRAGMENTS), max_size=30
).map("".join)
_PATTERNS = [WORD_SPLITS, CLASS_SPLITS, _WORD_AND_CLASS_SPLITS]
_SPLITTING = [n for n in sorted(TOKENIZERS) if n != "approx"]


def _tok(name):
    try:
        return get_tokenizer(name)
    except Exception as exc:  # an optional extra missing in this environment
        pytest.skip(f"tokenizer {name} unavailable: {exc}")


def _definition(pattern, text: str) -> int:
    """``1 +`` the pattern's matches between two ASCII characters, by the regex."""
    if not text:
        return 0
    return 1 + sum(
        text[m.start() - 1].isascii() and text[m.start()].isascii() for m in pattern.finditer(text)
    )


@pytest.mark.parametrize("pattern", _PATTERNS, ids=["word", "class", "word+class"])
@given(text=_TEXT, window=st.integers(1, 9), reps=st.integers(1, 5))
def test_byte_count_equals_the_regex_definition(pattern, text, window, reps):
    """The classes, the translation and the pair count read the regex's own
    matches, in windows of every small size (pairs across two windows too)."""
    text = text * reps
    bound = SplitBound.of(pattern)
    assert bound.at_least(text, window=window) == _definition(pattern, text)


@pytest.mark.parametrize("name", _SPLITTING)
@settings(max_examples=100)  # small texts: cheap to count
@given(texts=st.lists(_TEXT, min_size=1, max_size=4), reps=st.integers(1, 30))
@example(texts=["the county's data", "a1b2 c3\n/usr x", '{"k":[1,2]}'], reps=3)
def test_split_bound_never_exceeds_the_count(name, texts, reps):
    """``count_lower_bound`` (the larger of the vocabulary and split-point
    bounds) is at most the real count, also on repeated texts and with a
    limit (where it may stop early, still a lower bound)."""
    tok = _tok(name)
    for t in texts + [t * reps for t in texts]:
        n = tok.count(t)
        assert tok.count_lower_bound(t) <= n, t
        assert tok.count_lower_bound(t, 3) <= n, t


def test_the_bound_is_close_on_the_shapes_results_have():
    """Word text, JSON, base64 and hex: at least a third of the count
    (cl100k_base; JSON's number runs and punctuation runs split least), so a
    result of a few times the cap is refused without counting it."""
    import base64
    import json
    import random

    rng = random.Random(7)
    words = "the county income growth median of rows and values in".split()
    shapes = {
        "word": " ".join(rng.choice(words) for _ in range(3_000)),
        "JSON": json.dumps(
            [{"id": i, "name": rng.choice(words), "v": rng.random()} for i in range(400)],
            separators=(",", ":"),
        ),
        "base64": base64.b64encode(rng.randbytes(12_000)).decode(),
        "hex": rng.randbytes(8_000).hex(),
    }
    tok = get_tokenizer("cl100k_base")
    for shape, text in shapes.items():
        bound, n = SplitBound.of(_WORD_AND_CLASS_SPLITS).at_least(text), tok.count(text)
        assert n / 3 <= bound <= n, (shape, bound, n)


def test_long_result_refused_from_the_split_bound():
    """Three times the cap of word text is refused before it is counted: the
    count stops at the bound (not the exact count), above the cap."""
    tok = get_tokenizer("cl100k_base")
    text = ("alpha beta gamma delta " * 60_000)[:1_200_000]
    got, exact = count_text(tok, text, limit=100_000)
    assert not exact and 100_000 < got <= tok.count(text)
    assert got == SplitBound.of(tok.split_points).at_least(text, 100_000)


class _Broken:
    """cl100k_base with a split-point bound that also counts letter pairs."""

    def __init__(self) -> None:
        self._tok = get_tokenizer("cl100k_base")
        self.name, self.additive = "broken", True
        self.split_points = self._tok.split_points
        bound = SplitBound.of(_WORD_AND_CLASS_SPLITS)
        self._wrong = object.__new__(SplitBound)
        accept = bytearray(bound._accept)
        a = bound._table[ord("a")]
        accept[a * bound._k + a] = 1  # "ab" is no split point
        self._wrong._table, self._wrong._k, self._wrong._accept = (
            bound._table,
            bound._k,
            bytes(accept),
        )

    def count(self, text: str) -> int:
        return self._tok.count(text)

    def count_lower_bound(self, text: str, limit: int | None = None) -> int:
        return self._wrong.at_least(text, limit)


def test_a_wrong_split_bound_is_caught():
    """The checker (and this file's property) fail on a bound that counts a
    position where the text does not split."""
    broken = _Broken()
    texts = ["letters", "abc def", "mississippi river banks"]
    assert any(broken.count_lower_bound(t) > broken.count(t) for t in texts)
    assert any("count_lower_bound" in p for p in check_tokenizer(broken))


def test_only_pair_patterns_get_a_split_bound():
    import re

    with pytest.raises(WorkspaceArgumentError, match="two characters around each match"):
        SplitBound(re.compile(r"(?<=\s\S)(?=\S)"))
