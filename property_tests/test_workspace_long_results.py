"""Long tool results: the count splits exactly at the declared split points,
the vocabulary's byte bound never exceeds a real count, and the budget guard
refuses an oversized result from that bound (or from a count that stops early)
without ever refusing one that fits (paper, Methodology, "Workspace
invariants": a result that cannot fit is replaced by a rejection notice; the
guard counts with the same tokenizer as the dashboard)."""

from __future__ import annotations

import json
import math
import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st
from vistalab.workspace import TOKENIZERS, Workspace, WorkspaceArgumentError, get_tokenizer
from vistalab.workspace._accounting import CHUNK_CHARS, count_text, message_tokens
from vistalab.workspace._bounds import (
    NFC_SHRINK,
    max_token_bytes,
    max_token_bytes_for,
    utf8_length,
)
from vistalab.workspace._tokenizers import CLASS_SPLITS, WORD_SPLITS, split_points

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
@pytest.mark.parametrize("name", _NAMES)
def test_bounded_count_never_refuses_a_text_that_fits(name):
    """With a limit, count_text returns the exact count whenever it is within
    the limit, and otherwise a lower bound that exceeds the limit (the bounds,
    the vocabulary's included, decide nothing for a text that fits)."""
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


def test_invalid_unicode_in_an_admitted_long_result_names_its_index():
    """A long result the guard would admit is checked whole for unpaired
    surrogates, a piece at a time, and the error names the exact index;
    nothing is registered."""
    ws = _big_result_workspace("approx", budget=1_000_000)
    at = CHUNK_CHARS * 2 + 5
    text = "é" * at + "\ud800" + "x" * 10
    before = ws.state_hash()
    assert count_text(ws.tokenizer, text.replace("\ud800", "?"), limit=ws._result_cap("B3"))[1]
    with pytest.raises(WorkspaceArgumentError, match=f"unpaired surrogate at index {at}"):
        ws.register_tool_result("big", text)
    assert ws.state_hash() == before


@pytest.mark.parametrize("name", ["cl100k_base", "qwen3"])
def test_unpaired_surrogate_in_the_part_the_guard_reads_is_refused_cleanly(name):
    """A surrogate where the refusal reads (the vocabulary bound's first
    window) raises the door's error naming its index, not the tokenizer's own
    exception. (``approx`` refuses this text from its length alone, reading
    none of it: the next test.)"""
    ws = _big_result_workspace(name)
    text = "中文" * 5 + "\ud800" + "中文" * 400_000
    with pytest.raises(WorkspaceArgumentError, match="unpaired surrogate at index 10"):
        ws.register_tool_result("big", text)


@pytest.mark.parametrize("name", ["cl100k_base", "approx", "qwen3"])
def test_refused_result_with_a_surrogate_past_what_the_guard_read(tmp_path, name):
    """A result refused by the cap is not read past what the refusal needed:
    an unpaired surrogate further on does not stop the refusal, never reaches
    a record or a rendering, and the event log keeps the text exactly: its
    JSON line is valid UTF-8 (the surrogate escaped) and a replay of the log
    file rebuilds the same state."""
    log = tmp_path / "events.jsonl"
    ws = Workspace(8_000, tokenizer=name, log_path=log)
    ws.register_system("sys")
    ws.register_user("task")
    ws.register_tool_call(
        [{"id": "big", "type": "function", "function": {"name": "dump", "arguments": "{}"}}]
    )
    text = "中文字" * 400_000 + "\ud800" + "end"
    bid = ws.register_tool_result("big", text)
    b = ws.block(bid)
    assert b.rejected and "\ud800" not in b.content
    ev = ws.events[-1]
    assert ev.effects["attempted_at_least"] and ev.args["message"]["content"] is text
    line = ev.to_json()
    line.encode("utf-8")  # valid UTF-8: the surrogate is a JSON escape
    assert json.loads(line)["args"]["message"]["content"] == text
    ws.render()
    ws.close()
    raw = log.read_bytes()
    raw.decode("utf-8")
    again = Workspace.replay(log, tokenizer=get_tokenizer(name))
    assert again.state_hash() == ws.state_hash()
    assert again.events[-1].args["message"]["content"] == text


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

    class TooFewExtra(Liar):
        split_points = None
        max_token_bytes = 128

        def count_lower_bound(self, text, limit=None):
            from vistalab.workspace import VocabBound

            return VocabBound(128, 1).at_least(text, limit)  # 1 continuation byte a token: false

    problems = check_tokenizer(Liar(), stateful_examples=0)
    assert any("split_points" in p for p in problems)
    problems = check_tokenizer(TooLong(), stateful_examples=0)
    assert any("max_token_bytes" in p for p in problems)
    problems = check_tokenizer(TooFewExtra(), stateful_examples=0)
    assert any("count_lower_bound" in p for p in problems)
    assert check_tokenizer(get_tokenizer("cl100k_base"), stateful_examples=0) == []


# --- The vocabulary's lower bound (VocabBound) ---------------------------------

# Characters that stress the bound: combining marks (some compose, some only
# reorder), Hangul jamo that NFC composes and syllables it decomposes, CJK
# compatibility ideographs (NFC maps them to other ideographs, some astral to
# BMP: 4 bytes to 3), singletons that shrink (U+1FEF to a backtick, KELVIN SIGN
# to K), the tokens that make ``extra`` large (em dashes, ideographic spaces),
# astral-plane symbols and ideographs, and the boundary classes' own letters.
_BOUND_ALPHABET = (
    list("aeAK `-, \n中文字。，")
    + ["\u0301", "\u0300", "\u0323", "\u0302", "\u0315", "\u0345", "\u0308", "\u0344"]
    + ["\u1100", "\u1161", "\u11a8", "\uac00", "\ud7a3", "\u3099", "\u304b", "\u30ab"]
    + ["\uf900", "\ufa6a", "\U0002f800", "\U0002fa1d", "\u1fef", "\u212a", "\u212b", "\u2126"]
    + ["\u2014", "\u3000", "\u03b1", "\u03c9", "\u0419", "\u00e9", "\u00c5", "\u0390"]
    + ["\U0001f600", "\U00020000", "\U0001d518", "\u200d", "\u0d4c", "\u0bca", "\u0cd5"]
)
_BOUND_TEXT = st.text(alphabet=st.sampled_from(_BOUND_ALPHABET), max_size=60) | st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)), max_size=60
)
_BOUNDED = [n for n in _NAMES if n != "approx"]  # the byte-level BPE vocabularies


def _token_bytes(tok, text: str) -> list[bytes]:
    """The byte strings of the tokens ``tok`` encodes ``text`` to, read with
    each package's own decoder (shares no code with VocabBound)."""
    if hasattr(tok, "_enc"):  # quicktok
        return [tok._enc.decode_single_token_bytes(i) for i in tok._encode(text)]
    if hasattr(tok, "_tok"):  # tokenizers (byte-level: one character per byte)
        back = {c: b for b, c in _gpt2_bytes_to_unicode().items()}
        return [
            bytes(back[c] for c in t)
            for t in tok._tok.encode(text, add_special_tokens=False).tokens
        ]
    enc = tok._load()  # tiktoken
    return [enc.decode_single_token_bytes(i) for i in enc.encode_ordinary(text)]


def _gpt2_bytes_to_unicode() -> dict[int, str]:
    """GPT-2's published byte-to-character table of the byte-level BPE
    (``bytes_to_unicode`` in openai/gpt-2 ``encoder.py``), written out anew."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("\xa1"), ord("\xac") + 1))
    bs += list(range(ord("\xae"), ord("\xff") + 1))
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs), strict=True))


def vocab_violations(tok, bound, texts) -> list[tuple[str, str]]:
    """(text, what) wherever a premise of ``bound`` fails for ``tok``'s real
    encoding: its tokens' bytes do not concatenate to the UTF-8 of the text the
    bound assumes the vocabulary sees (NFC of it when ``bound.nfc``, with
    Python's unicodedata), or a token is longer than ``longest`` or leads
    more than ``extra`` continuation bytes or ``ideographs`` lead bytes of
    U+4000-U+9FFF."""
    from vistalab.workspace._bounds import _extra_bytes

    bad = []
    for t in texts:
        parts = _token_bytes(tok, t)
        seen = unicodedata.normalize("NFC", t) if bound.nfc else t
        if b"".join(parts) != seen.encode("utf-8"):
            bad.append((t, "tiling"))
        if any(
            len(p) > bound.longest
            or _extra_bytes(p) > bound.extra
            or sum(0xE4 <= x <= 0xE9 for x in p) > bound.ideographs
            for p in parts
        ):
            bad.append((t, "token"))
    return bad


@pytest.mark.parametrize("name", _BOUNDED)
@given(texts=st.lists(_BOUND_TEXT, min_size=1, max_size=5))
def test_tokens_tile_the_text_within_the_vocabulary_bound(name, texts):
    """The premises of VocabBound, seen through the packages' own decoders: the
    tokens' bytes concatenate to the UTF-8 of the text the vocabulary sees (NFC
    of it for qwen3, normalised by Python's unicodedata: so the two Unicode
    versions agree on these texts), and no token is longer than ``longest``
    or leads more than ``extra`` continuation bytes or ``ideographs`` CJK
    ideographs. (Tokenizer contract, the
    budget guard's lower bound; paper, Methodology, "Workspace invariants".)"""
    tok = _tok(name)
    assert vocab_violations(tok, tok.vocab_bound, texts) == []


def test_vocab_checks_bite_on_wrong_bounds():
    """The premise check fails for a qwen3 bound that forgets NFC, and for
    declared maxima below the vocabulary's; the bound check fails for a bound
    whose ``extra`` or ``longest`` is too small (it would refuse CJK or
    English results that fit)."""
    from vistalab.workspace import VocabBound

    q = _tok("qwen3")
    b = q.vocab_bound
    wrong = VocabBound(b.longest, b.extra, b.ideographs, nfc=False)
    assert vocab_violations(q, wrong, ["\u1fef", "e\u0301"])
    assert vocab_violations(q, VocabBound(b.longest, 1, b.ideographs, nfc=True), ["\u2014" * 16])
    assert vocab_violations(q, VocabBound(3, b.extra, b.ideographs, nfc=True), ["hello world"])
    assert vocab_violations(q, VocabBound(b.longest, b.extra, 2, nfc=True), [" 生命周期函数"])
    c = _tok("cl100k_base")
    assert bound_violations(c, VocabBound(128, 1), ["日本語のテキスト" * 30], 64)
    assert bound_violations(c, VocabBound(2, 32), ["county year value " * 30], 64)
    assert bound_violations(c, VocabBound(128, 32, 1), ["生命周期函数" * 30], 64)
    cjk = ["日本語のテキスト" * 30, "生命周期函数" * 30]
    assert bound_violations(c, c.vocab_bound, cjk, 64) == []


def bound_violations(tok, bound, texts, window: int) -> list[tuple[str, int, int]]:
    """(text, bound, count) wherever ``bound.at_least`` (read ``window``
    characters at a time, with and without a limit) exceeds the count."""
    bad = []
    for t in texts:
        n = tok.count(t)
        for limit in (None, 0, n // 2):
            got = bound.at_least(t, limit, window=window)
            if got > n:
                bad.append((t, got, n))
    return bad


@pytest.mark.parametrize("name", _BOUNDED)
@given(
    texts=st.lists(_BOUND_TEXT, min_size=1, max_size=4),
    window=st.integers(1, 9),
    reps=st.integers(1, 40),
)
def test_vocab_bound_never_exceeds_the_count(name, texts, window, reps):
    """``count_lower_bound`` (VocabBound.at_least) is a lower bound on the real
    count, read in windows of every small size (so windows end before and
    after combining marks, jamo and boundary characters) and on the text
    repeated (where the bound gets closest to the count). A result the bound
    refuses could never have fitted (paper, Methodology, "Workspace
    invariants": a result that cannot fit is replaced by a rejection notice)."""
    tok = _tok(name)
    texts = texts + [t * reps for t in texts]
    assert bound_violations(tok, tok.vocab_bound, texts, window) == []
    assert all(tok.count_lower_bound(t) <= tok.count(t) for t in texts)


def _exact_value(bound, text: str) -> int:
    """The bound computed in one go from the whole text the vocabulary sees."""
    seen = unicodedata.normalize("NFC", text) if bound.nfc else text
    raw = seen.encode("utf-8")
    ideo = sum(0xE4 <= x <= 0xE9 for x in raw)
    return bound._value(len(raw), len(raw) - len(seen), ideo)


# Units that start with a boundary character and hold non-boundary ones only
# after it (at most two), some of them not NFC-normalised.
_ANCHORED = st.lists(
    st.sampled_from(
        ["a", "K", " ", "中", "가", "é", "e\u0301", "\u304b\u3099", "A\u0323\u0302", "\u03b1\u0301"]
    ),
    min_size=1,
    max_size=30,
).map("".join)


@given(text=_BOUND_TEXT, anchored=_ANCHORED, window=st.integers(3, 9), reps=st.integers(1, 30))
def test_windowed_bound_adds_up_to_the_whole_texts_bound(text, anchored, window, reps):
    """Read window by window, the bound never exceeds the one computed from the
    whole (normalised) text, and equals it when every window can end before a
    boundary character: the windows' NFC concatenate to the text's NFC, so
    their bytes and code points add up (the NFC windows of qwen3's bound)."""
    from vistalab.workspace._bounds import VocabBound

    for b in (VocabBound(7, 3, 2, nfc=True), VocabBound(5, 2, 1, nfc=False)):
        assert b.at_least(text * reps, window=window) <= _exact_value(b, text * reps)
        assert b.at_least(anchored * reps, window=window) == _exact_value(b, anchored * reps)


def _second_characters() -> set[str]:
    """Every character that is the second of a two-character canonical
    decomposition (a superset of the second characters of primary
    composites), plus the Hangul medial vowels and final consonants."""
    second = {chr(c) for c in range(0x1161, 0x1176)} | {chr(c) for c in range(0x11A8, 0x11C3)}
    for i in range(0x110000):
        d = unicodedata.decomposition(chr(i)) if not 0xD800 <= i < 0xE000 else ""
        if d and not d.startswith("<") and len(d.split()) == 2:
            second.add(chr(int(d.split()[1], 16)))
    return second


def boundary_violations(pattern: re.Pattern[str], second: set[str]) -> list[str]:
    """The BMP characters ``pattern`` matches whose canonical decomposition does
    not start with a starter that composes with nothing before it."""
    bad = []
    for i in range(0x10000):
        c = chr(i)
        if 0xD800 <= i < 0xE000 or not pattern.fullmatch(c):
            continue
        d0 = unicodedata.normalize("NFD", c)[0]
        if unicodedata.combining(d0) != 0 or d0 in second:
            bad.append(c)
    return bad


@pytest.mark.slow
def test_nfc_boundaries_compose_with_nothing_before_them():
    """Every character of NFC_BOUNDARIES decomposes to a starter that is never
    the second character of a canonical pair (nor a Hangul vowel or final), so
    NFC splits exactly before it (UAX #15, canonical composition algorithm);
    and a composite of a starter is a starter, so the composition after it
    never looks back past it (checked on Python's Unicode database). The check
    bites: a class with a combining mark, a Hangul vowel or a Tamil vowel sign
    fails."""
    from vistalab.workspace._bounds import NFC_BOUNDARIES

    second = _second_characters()
    assert boundary_violations(NFC_BOUNDARIES, second) == []
    for i in range(0x110000):
        d = unicodedata.decomposition(chr(i)) if not 0xD800 <= i < 0xE000 else ""
        if d and not d.startswith("<") and len(d.split()) == 2:
            first = chr(int(d.split()[0], 16))
            if unicodedata.combining(first) == 0:
                assert unicodedata.combining(chr(i)) == 0, hex(i)
    for wrong in ("[a\u0301]", "[a\u1161]", "[a\u0bbe]"):
        assert boundary_violations(re.compile(wrong), second) != [], wrong


def nfc_split_violations(pattern: re.Pattern[str], texts) -> list[tuple[str, int]]:
    """(text, position) where ``pattern`` matches a character before which
    NFC does not split exactly."""
    nfc = lambda s: unicodedata.normalize("NFC", s)  # noqa: E731
    return [
        (t, m.start())
        for t in texts
        for m in pattern.finditer(t)
        if nfc(t) != nfc(t[: m.start()]) + nfc(t[m.start() :])
    ]


@given(texts=st.lists(_BOUND_TEXT, min_size=1, max_size=5))
def test_nfc_splits_exactly_before_every_boundary_character(texts):
    """``NFC(a + b) == NFC(a) + NFC(b)`` whenever ``b`` starts with a character
    of NFC_BOUNDARIES (random texts rich in combining marks, jamo and
    compatibility ideographs)."""
    from vistalab.workspace._bounds import NFC_BOUNDARIES

    assert nfc_split_violations(NFC_BOUNDARIES, texts) == []


def test_nfc_split_check_bites_on_a_wrong_class():
    """The check above fails for a class that holds a combining mark or a
    Hangul vowel."""
    assert nfc_split_violations(re.compile("\u0301"), ["e\u0301"]) != []
    assert nfc_split_violations(re.compile("\u1161"), ["\u1100\u1161"]) != []


class _CountSpy:
    """A tokenizer seen through a wrapper that records how many characters its
    ``count`` read (every other member is the tokenizer's own)."""

    def __init__(self, tok):
        self._t, self.counted = tok, 0

    def __getattr__(self, name):
        return getattr(self._t, name)

    def count(self, text):
        self.counted += len(text)
        return self._t.count(text)


def _cjk(nchars: int) -> str:
    import random

    rng = random.Random(3)
    unit = "".join(
        "".join(chr(rng.randint(0x4E00, 0x9FA5)) for _ in range(rng.randint(8, 30)))
        + rng.choice("，。")
        for _ in range(2000)
    )
    return (unit * (nchars // len(unit) + 1))[:nchars]


@pytest.mark.parametrize("name", ["qwen3", "cl100k_base", "deepseek_v4"])
def test_cjk_result_over_the_cap_is_refused_before_any_piece_is_counted(name):
    """A CJK text that the character bound lets through (``chars / 128``, or
    ``chars / 1152`` for qwen3, is below the limit) but the vocabulary bound
    does not is refused without one ``count`` call, with a true lower bound."""
    tok = _tok(name)
    text = _cjk(CHUNK_CHARS * 5)
    limit = len(text) // 30  # the vocabulary bound is chars / 6 to chars / 16
    assert len(text) / max_token_bytes_for(tok, text) < limit  # bound 1 lets it through
    spy = _CountSpy(tok)
    n, done = count_text(spy, text, limit=limit)
    assert (done, spy.counted) == (False, 0)
    assert limit < n <= tok.count(text)


@pytest.mark.slow
def test_qwen3_cjk_result_over_the_cap_is_refused_with_a_true_lower_bound():
    """Through the workspace: a long CJK result far over qwen3's per-result cap
    is refused by the cap, its reported size a lower bound (at most its real
    count), and the call stays answered (paper, Methodology, "Workspace
    invariants")."""
    ws = _big_result_workspace("qwen3")
    text = _cjk(CHUNK_CHARS * 3)
    bid = ws.register_tool_result("big", text)
    eff = ws.events[-1].effects
    assert eff["rejected"] and eff["decided_by"] == "cap" and eff["attempted_at_least"]
    full = message_tokens({"role": "tool", "tool_call_id": "big", "content": text}, ws.tokenizer)
    assert eff["cap"] < eff["attempted_tokens"] <= full
    assert ws.block(bid).rejected and ws.pending_calls == ()


def test_vocabulary_bounds_are_the_ones_the_guide_quotes():
    """docs/guide/agent-stacks.md quotes each shipped vocabulary's ``longest``
    (128), ``extra`` and ``ideographs``, from which it derives the rates on
    CJK text (``chars / 6`` to ``chars / 16``)."""
    want = {
        "cl100k_base": (32, 6),
        "o200k_base": (40, 10),
        "qwen3": (32, 6),
        "llama3": (64, 6),
        "deepseek_v4": (40, 16),
    }
    for name, (extra, ideographs) in want.items():
        b = _tok(name).vocab_bound
        assert (b.longest, b.extra, b.ideographs, b.nfc) == (
            128,
            extra,
            ideographs,
            name == "qwen3",
        ), name
