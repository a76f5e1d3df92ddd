"""Long tool results: the count splits exactly at the declared split points,
the vocabulary's byte bound never exceeds a real count, and the budget guard
refuses an oversized result from that bound (or from a count that stops early)
without ever refusing one that fits (paper, Methodology, "Workspace
invariants": a result that cannot fit is replaced by a rejection notice; the
guard counts with the same tokenizer as the dashboard)."""

from __future__ import annotations

import math
import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st
from vistalab.workspace import TOKENIZERS, Workspace, WorkspaceArgumentError, get_tokenizer
from vistalab.workspace._accounting import CHUNK_CHARS, count_text, message_tokens
from vistalab.workspace._tokenizers import (
    CLASS_SPLITS,
    NFC_SHRINK,
    WORD_SPLITS,
    max_token_bytes,
    max_token_bytes_for,
    split_points,
    utf8_length,
)

from vistalab.testing import check_tokenizer

# Characters of every class the split rules name, and of those they must avoid
# (apostrophes, combining marks, Hangul jamo that NFC composes, slashes after
# newlines, control and format characters, astral-plane symbols).
_ALPHABET = (
    list("abcXYZ019+/=,.;:!?\"'{}[]()-_ \n\t\r")
    + list("中文字、。！（），：；？")
    + ["é", "e", "\u0301", "\u1100", "\u1161", "\u11a8", "😀", "ß", "İ", "٣", "Ⅳ", "\u200d", "\x01"]
)
_MIXED = st.text(alphabet=st.sampled_from(_ALPHABET), min_size=2, max_size=40)
_NAMES = sorted(TOKENIZERS)


def _tok(name):
    try:
        return get_tokenizer(name)
    except Exception as exc:  # an optional extra missing in this environment
        pytest.skip(f"tokenizer {name} unavailable: {exc}")


def split_violations(tok, pattern: re.Pattern[str], texts) -> list[tuple[str, int]]:
    """(text, position) pairs where ``pattern`` claims a split that the count
    does not honour."""
    bad = []
    for t in texts:
        whole = tok.count(t)
        for m in pattern.finditer(t):
            q = m.start()
            if 0 < q < len(t) and tok.count(t[:q]) + tok.count(t[q:]) != whole:
                bad.append((t, q))
    return bad


@pytest.mark.parametrize("name", _NAMES)
@given(texts=st.lists(_MIXED, min_size=10, max_size=10))
def test_count_splits_exactly_at_declared_split_points(name, texts):
    """Every position a shipped tokenizer declares a split point splits its count
    exactly (sampled: random texts over the characters the rules name and avoid)."""
    tok = _tok(name)
    pat = split_points(tok)
    if pat is None:
        pytest.skip(f"{name} declares no split points")
    assert split_violations(tok, pat, texts) == []


def test_split_check_bites_on_a_wrong_rule():
    """The check above fails for a rule that splits inside words and numbers."""
    tok = get_tokenizer("cl100k_base")
    wrong = re.compile(r"(?<=\w)(?=\w)")
    assert split_violations(tok, wrong, ["hello world", "12345 abcdef"]) != []


@pytest.mark.parametrize("name", _NAMES)
@given(text=st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200) | _MIXED)
def test_byte_bound_never_exceeds_the_count(name, text):
    """``count(text) >= ceil(utf8 bytes / max_token_bytes)`` (sampled), so a
    result the bound refuses could never have fitted."""
    tok = _tok(name)
    m = max_token_bytes(tok)
    assert m is not None, f"{name} declares no max_token_bytes"
    assert tok.count(text) >= math.ceil(len(text.encode("utf-8")) / m)
    ascii_text = text.encode("ascii", "ignore").decode()
    assert tok.count(ascii_text) >= math.ceil(
        len(ascii_text) / max_token_bytes_for(tok, ascii_text)
    )


@pytest.mark.slow
def test_nfc_shrink_factor_recomputed_from_the_unicode_database():
    """NFC_SHRINK = R1 * R2 with R1 = max bytes(NFD(c)) / bytes(c) and R2 = max
    bytes(c) / bytes(NFD(c)) over every code point of Python's Unicode database
    (checked on that finite domain)."""
    r1 = r2 = 1.0
    for i in range(0x110000):
        if 0xD800 <= i < 0xE000:
            continue
        c = chr(i)
        d = unicodedata.normalize("NFD", c)
        if d != c:
            bc, bd = len(c.encode()), len(d.encode())
            r1, r2 = max(r1, bd / bc), max(r2, bc / bd)
    assert r1 * r2 == NFC_SHRINK


def _long_texts(n: int) -> dict[str, str]:
    import base64
    import json
    import random

    rng = random.Random(7)
    words = "county year value change total rate population median income".split()
    unit = {
        "word": " ".join(rng.choice(words) for _ in range(3000)),
        "hex": "".join(rng.choice("0123456789abcdef") for _ in range(20000)),
        "base64": base64.b64encode(rng.randbytes(15000)).decode(),
        "cjk": "".join(
            "".join(chr(rng.randint(0x4E00, 0x9FA5)) for _ in range(rng.randint(8, 30)))
            + rng.choice("，。")
            for _ in range(800)
        ),
        "json": json.dumps(
            [{"id": i, "name": rng.choice(words), "v": rng.random()} for i in range(500)]
        ),
        "letters": "abcdefghij" * 2000,  # no split point at all
    }
    return {k: (v * (n // len(v) + 1))[:n] for k, v in unit.items()}


@pytest.mark.slow
@pytest.mark.parametrize("name", _NAMES)
def test_piecewise_count_equals_the_whole_count_on_long_texts(name):
    """count_text of a text longer than a piece equals the tokenizer's own count
    of the whole text, for every text shape (with and without split points)."""
    tok = _tok(name)
    for shape, text in _long_texts(CHUNK_CHARS * 2 + 1234).items():
        assert count_text(tok, text) == (tok.count(text), True), shape


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cl100k_base", "approx", "qwen3"])
def test_bounded_count_never_refuses_a_text_that_fits(name):
    """With a limit, count_text returns the exact count whenever it is within
    the limit, and otherwise a lower bound that exceeds the limit."""
    tok = _tok(name)
    for shape, text in _long_texts(CHUNK_CHARS * 2 + 100).items():
        exact = tok.count(text)
        for limit in (exact - 1, exact, exact // 3, 10):
            n, done = count_text(tok, text, limit=limit)
            if exact <= limit:
                assert (n, done) == (exact, True), (shape, limit)
            else:
                assert limit < n <= exact or (done and n == exact), (shape, limit, n)


def _big_result_workspace(tokenizer, budget=8_000):
    ws = Workspace(budget, tokenizer=tokenizer)
    ws.register_system("sys")
    ws.register_user("task")
    ws.register_tool_call(
        [{"id": "big", "type": "function", "function": {"name": "dump", "arguments": "{}"}}]
    )
    return ws


@pytest.mark.parametrize("name", ["cl100k_base", "approx"])
def test_oversized_result_refused_from_the_bound_with_a_true_lower_bound(name):
    """A result far over the cap is refused before it is counted (the reported
    size is a lower bound: at most the real count), and the call stays answered."""
    ws = _big_result_workspace(name)
    text = "0f1e2d3c" * 100_000  # 800,000 characters, no whitespace
    bid = ws.register_tool_result("big", text)
    eff = ws.events[-1].effects
    assert eff["rejected"] and eff["decided_by"] == "cap" and eff["attempted_at_least"]
    full = message_tokens({"role": "tool", "tool_call_id": "big", "content": text}, ws.tokenizer)
    assert eff["cap"] < eff["attempted_tokens"] <= full
    assert ws.block(bid).rejected and ws.pending_calls == ()


@pytest.mark.parametrize("name", ["cl100k_base", "approx"])
def test_long_result_that_fits_is_admitted_with_its_exact_cost(name):
    """A long result below the cap is admitted and costs its exact recount."""
    ws = _big_result_workspace(name, budget=200_000)
    text = ("abc123," * 12_000)[: CHUNK_CHARS + 999]
    bid = ws.register_tool_result("big", text)
    assert not ws.block(bid).rejected
    want = message_tokens({"role": "tool", "tool_call_id": "big", "content": text}, ws.tokenizer)
    assert ws._pos_cost[ws.block(bid).seq - 1] == want


def test_invalid_unicode_in_a_long_result_names_its_index():
    """The surrogate check reads a long text a piece at a time and still names
    the exact index of an unpaired surrogate."""
    ws = _big_result_workspace("approx")
    at = CHUNK_CHARS * 2 + 5
    text = "é" * at + "\ud800" + "x" * 10
    with pytest.raises(WorkspaceArgumentError, match=f"unpaired surrogate at index {at}"):
        ws.register_tool_result("big", text)


@given(text=st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=50))
def test_utf8_length_matches_encode(text):
    long = text * (CHUNK_CHARS // max(len(text), 1) + 2)
    assert utf8_length(text) == len(text.encode("utf-8"))
    assert utf8_length(long) == len(long.encode("utf-8"))


def test_word_and_class_rules_are_zero_width():
    """The rules name positions, never characters (a split loses nothing)."""
    for pat in (WORD_SPLITS, CLASS_SPLITS):
        assert all(m.end() == m.start() for m in pat.finditer("ab1 c.d\ne,f中。x9"))


def test_check_tokenizer_reports_a_wrong_byte_bound_and_split_points():
    """The public kit flags a max_token_bytes that some text's count violates,
    and split points the count does not honour."""

    class Liar:
        name = "liar"
        additive = False
        max_token_bytes = 1000  # claims tokens of up to 1000 bytes: fine
        split_points = re.compile(r"(?<=\w)(?=\w)")  # wrong for cl100k

        def __init__(self):
            self._t = get_tokenizer("cl100k_base")

        def count(self, text):
            return self._t.count(text)

    class TooLong(Liar):
        max_token_bytes = 1  # claims one token per byte at least: false
        split_points = None

    problems = check_tokenizer(Liar(), stateful_examples=0)
    assert any("split_points" in p for p in problems)
    problems = check_tokenizer(TooLong(), stateful_examples=0)
    assert any("max_token_bytes" in p for p in problems)
    assert check_tokenizer(get_tokenizer("cl100k_base"), stateful_examples=0) == []
