"""The per-character lower bound (``CharBound``): each code point ``c`` weighs
``1 / L(c)``, ``L(c)`` the most lead bytes of a vocabulary token that could
hold ``c``'s lead byte, and a byte-level BPE's count is at least the ceiling of
the weights' sum. The budget guard applies it (inside ``VocabBound``) before
counting a long result, so a CJK result far over the per-result cap is refused
without tokenising it (paper, "Implementation Details": the budget guard; the
Methodology's "Workspace invariants": a result that cannot fit is replaced by a
rejection notice). Here, for every shipped byte-level BPE: the premise of the
proof holds token by token in real encodings, the bound never exceeds the
count and is computed exactly, the table agrees with a brute-force reading of
the vocabulary, and the 1 MB CJK text of the refusal benchmark is refused by
it where the older bounds were not."""

from __future__ import annotations

import dataclasses
import math
import random
import unicodedata
from fractions import Fraction

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from vistalab.workspace import TOKENIZERS, WorkspaceArgumentError, get_tokenizer
from vistalab.workspace._accounting import count_text
from vistalab.workspace._char_bound import CharBound

# each package's own decoder (shares no code with the bounds under test)
from .test_workspace_long_results import _gpt2_bytes_to_unicode, _token_bytes

_BPE = [n for n in sorted(TOKENIZERS) if n != "approx"]  # the byte-level BPE vocabularies


def _tok(name):
    try:
        return get_tokenizer(name)
    except Exception as exc:  # an optional extra missing in this environment
        pytest.skip(f"tokenizer {name} unavailable: {exc}")


_VOCABS: dict[str, list[bytes]] = {}


def _vocab(tok) -> list[bytes]:
    """Every token's byte string, read with each package's own API."""
    got = _VOCABS.get(tok.name)
    if got is None:
        if hasattr(tok, "_enc"):
            got = list(tok._enc.token_byte_values())
        elif hasattr(tok, "_tok"):
            back = {c: b for b, c in _gpt2_bytes_to_unicode().items()}
            got = [
                bytes(back[c] for c in v)
                for v in tok._tok.get_vocab(with_added_tokens=False)
                if all(c in back for c in v)
            ]
        else:
            got = list(tok._load().token_byte_values())
        _VOCABS[tok.name] = got
    return got


def _leads(token: bytes) -> int:
    """Bytes of ``token`` that are not UTF-8 continuation bytes."""
    return sum(1 for b in token if not 0x80 <= b < 0xC0)


def _seen(tok, text: str) -> str:
    """The text the vocabulary tiles: its NFC for a normalising tokenizer."""
    return unicodedata.normalize("NFC", text) if tok.vocab_bound.nfc else text


# Scripts and shapes: ASCII, common and rare CJK ideographs (rare ones sit only
# in tokens that split them), CJK punctuation, astral ideographs, kana, Hangul
# syllables and jamo, Cyrillic, Greek, Arabic, Devanagari, Thai, combining marks
# (some compose under NFC), emoji with skin tones and ZWJ joins, and the
# characters the vocabularies hold in long runs (spaces, dashes, ideographic
# spaces), and the characters and texts listed below.
_ASCII = st.text(alphabet=st.sampled_from(list("abcXYZ019 .,;:!?'\"()-_/\n\t{}[]=+")), max_size=12)
_COMMON_CJK = st.text(
    alphabet=st.sampled_from(list("的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年")),
    max_size=12,
)
_RARE_CJK = st.text(alphabet=st.characters(min_codepoint=0x4E00, max_codepoint=0x9FA5), max_size=12)
_OTHER = st.lists(
    st.sampled_from(
        list("。，、！？「」（）\u3000—…")
        + ["\U00020000", "\U0002a6d6", "\U0002f800", "\uf900"]
        + list("ひらがなカタカナー한국어글\u1100\u1161\u11a8")
        + list("привет Ωλφα مرحبا नमस्ते สวัสดี")
        + ["\u0301", "\u0300", "\u0323", "\u0302", "\u0308", "\u0345", "\u0344", "e\u0301"]
        + ["\U0001f600", "\U0001f44d\U0001f3fd", "\U0001f468\u200d\U0001f469\u200d\U0001f467"]
        + ["\u2014" * 4, "    ", "\u3000" * 3, "\U0001d518", "\U000e0041", "\U0010fffd"]
        # NFC maps these to characters that vocabularies hold in long runs.
        + ["\u037e", "\u1fef", "\u212a", "\U0002f996", "\u0958"]
        # Texts some token of which ends with a partial character (its lead
        # byte and maybe some continuation bytes) that it holds more lead
        # bytes than any token holding that whole character.
        + ["обраЂ", " दुर्ऽ", "superscriptsubscript\U0001d440"]
    ),
    max_size=12,
).map("".join)
_ANY = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=20)
_TEXT = st.lists(_ASCII | _COMMON_CJK | _RARE_CJK | _OTHER | _ANY, min_size=1, max_size=6).map(
    "".join
)


def _premise_violations(tok, text: str) -> list[tuple[bytes, str, int, int]]:
    """``(token, character, L, lead bytes)`` wherever a token of ``tok``'s real
    encoding of ``text`` holds the lead byte of a code point ``c`` while
    holding more lead bytes than ``L(c)`` (the proof's premise: every such
    token has at most ``L(c)`` of them)."""
    chars = tok.vocab_bound.chars
    seen = _seen(tok, text)
    parts = _token_bytes(tok, text)
    assert b"".join(parts) == seen.encode("utf-8"), "the tokens do not tile the text"
    starts = []  # the byte offset of each code point's lead byte
    pos = 0
    for c in seen:
        starts.append(pos)
        pos += len(c.encode("utf-8"))
    bad, k, end = [], 0, 0
    for t in parts:
        begin, end = end, end + len(t)
        while k < len(seen) and starts[k] < end:
            assert starts[k] >= begin
            if chars.max_leads(seen[k]) < _leads(t):
                bad.append((t, seen[k], chars.max_leads(seen[k]), _leads(t)))
            k += 1
    return bad


@pytest.mark.parametrize("name", _BPE)
@given(text=_TEXT, window=st.integers(1, 9), reps=st.integers(1, 30))
@example(text="龥丂" + "攡" * 3 + "。", window=2, reps=20)
@example(text="e\u0301\u0323 " + "\u2014" * 8, window=3, reps=12)
@example(text="生命周期函数 的 \U0001f468\u200d\U0001f469", window=5, reps=9)
@example(text="обраЂ дуб  दुर्ऽ superscriptsubscript\U0001d440", window=4, reps=2)
@example(text="\u037e", window=3, reps=30)
@example(text="\U0002f996", window=2, reps=30)
def test_char_bound_never_exceeds_the_count(name, text, window, reps):
    """On mixed-script texts and their repetitions (where the bound gets
    closest to the count): every token of the real encoding holds at most
    ``L(c)`` lead bytes for each code point ``c`` whose lead byte it holds; the
    bound, read in windows of every small size, is exactly the ceiling of the
    sum of ``1 / L(c)`` (no rounding across windows) and never exceeds the
    count; nor does the tokenizer's ``count_lower_bound``, with or without a
    limit."""
    tok = _tok(name)
    chars = tok.vocab_bound.chars
    for t in (text, text * reps):
        assert _premise_violations(tok, t) == []
        n = tok.count(t)
        seen = _seen(tok, t)
        exact = math.ceil(sum((Fraction(1, chars.max_leads(c)) for c in seen), Fraction(0)))
        assert chars.at_least(seen, window=window) == exact
        assert exact <= n
        for limit in (None, 0, n // 2):
            assert tok.vocab_bound.at_least(t, limit, window=window) <= n
            assert tok.count_lower_bound(t, limit) <= n


def _benchmark_cjk(nchars: int, seed: int = 0) -> str:
    """The refusal benchmark's CJK text (``text_shape("CJK", nchars, seed)`` of
    ``benchmarks/bench_workspace_scaling.py``): sentences of 8-30 ideographs
    drawn uniformly from U+4E00-U+9FA5, each ended by a full-width comma or
    full stop, a ~0.24 M-character unit repeated."""
    rng = random.Random(seed)
    unit = "".join(
        "".join(chr(rng.randint(0x4E00, 0x9FA5)) for _ in range(rng.randint(8, 30)))
        + rng.choice("，。")
        for _ in range(12_000)
    )
    return (unit * (nchars // len(unit) + 1))[:nchars]


#: The refusal benchmark's budget, which bounds its per-result cap from above.
_CAP = 128_000


@pytest.fixture(scope="module")
def cjk_mb() -> str:
    return _benchmark_cjk(10**6)


@pytest.mark.parametrize("name", _BPE)
def test_char_bound_refuses_the_benchmark_cjk_megabyte(name, cjk_mb):
    """1 MB of the benchmark's CJK text passes a cap of 128,000 tokens on the
    lower bound alone, before any of it is counted (so the guard refuses it
    in a few milliseconds), while the byte, continuation-byte and ideograph
    bounds without the per-character one stay under the cap for o200k_base
    and deepseek_v4 (whose vocabularies hold tokens of 10 and 16 ideographs)."""
    tok = _tok(name)
    b = tok.vocab_bound
    got = tok.count_lower_bound(cjk_mb, _CAP)
    assert got > _CAP
    assert count_text(tok, cjk_mb, limit=_CAP) == (got, False)
    assert b.chars.at_least(_seen(tok, cjk_mb), _CAP) > _CAP
    if name in ("o200k_base", "deepseek_v4"):
        assert dataclasses.replace(b, chars=None).at_least(cjk_mb, _CAP) <= _CAP


def _brute_max_leads(vocab: list[bytes], c: str) -> int:
    """``L(c)`` from its definition, token by token: the most lead bytes of a
    token that contains ``c``'s encoding or ends with a proper non-empty
    prefix of it (0 when there is none)."""
    enc = c.encode("utf-8")
    best = 0
    for t in vocab:
        if enc[:1] in t and (enc in t or any(t.endswith(enc[:j]) for j in range(1, len(enc)))):
            best = max(best, _leads(t))
    return best


@pytest.mark.parametrize("name", _BPE)
def test_char_table_agrees_with_brute_force(name):
    """``L(c)`` read off the table equals its definition recomputed over the
    whole vocabulary, for the code points held by a sample of tokens, code
    points that a sampled token's trailing partial character could start,
    and fixed ones (ASCII, common and rare ideographs, marks, emoji, astral
    and last-plane code points, which sit past the table's cut)."""
    tok = _tok(name)
    vocab = _vocab(tok)
    chars = tok.vocab_bound.chars
    rng = random.Random(f"{name}-table")
    sample = rng.sample([t for t in vocab if not t.isascii()], 10) + rng.sample(vocab, 4)
    cps = set("a ,\n中的龥丂\u0301é\U0001f600\U00020000\U000e0041\U0010fffd\u3000—")
    for t in sample:
        cps.update(rng.sample(sorted(set(t.decode("utf-8", "ignore"))) or [" "], 1))
        # A code point the trailing partial character could start.
        i = max((k for k in range(len(t)) if not 0x80 <= t[k] < 0xC0), default=None)
        if i is not None and t[i] >= 0xC2:
            need = 2 if t[i] < 0xE0 else 3 if t[i] < 0xF0 else 4
            if len(t) - i < need:
                tail = t[i:] + bytes(rng.randrange(0x80, 0xC0) for _ in range(need - len(t) + i))
                cps.update(tail.decode("utf-8", "ignore")[:1])
    most = max(map(_leads, vocab))
    assert chars.most == most
    for c in sorted(cps):
        assert chars.max_leads(c) == (_brute_max_leads(vocab, c) or most), (name, hex(ord(c)))


def _tiny() -> CharBound:
    """The bound of a toy vocabulary: every byte, "ab", " \\xe4" (a space and
    a lead byte), "中文" and "\\xe4\\xb8" (a two-byte prefix of U+4E00-U+4E3F)."""
    tokens = [bytes([b]) for b in range(256)] + [b"ab", b" \xe4", "中文".encode(), b"\xe4\xb8"]
    return CharBound.from_tokens(tokens)


def test_char_bound_reads_prefix_tokens_and_whole_ones():
    """A toy vocabulary where each rule decides some value: ``a`` and ``b``
    sit in "ab" (2), ``中`` and ``文`` in "中文" (2), every code point whose
    lead byte is 0xE4 (U+4000-U+4FFF) in " \\xe4" (2), the rest only alone
    (1); the bound of "中文" * 3 is 3, of "xyz" 3."""
    b = _tiny()
    assert [b.max_leads(c) for c in "ab中文\u4000\u4fff\u4e00x\u5000\U0001f600"] == [
        2,
        2,
        2,
        2,
        2,
        2,
        2,
        1,
        1,
        1,
    ]
    assert b.most == 2
    assert b.at_least("中文" * 3) == 3
    assert b.at_least("xyz") == 3
    assert b.at_least("") == 0
    assert b.at_least("ab" * 50, limit=10, window=4) > 10


def test_char_bound_validates_its_arguments():
    """Bad tables, maxima, characters and windows are refused at the door,
    naming the parameter."""
    with pytest.raises(WorkspaceArgumentError, match="leads"):
        CharBound(b"\x01\x00\x02", 2)
    with pytest.raises(WorkspaceArgumentError, match="leads"):
        CharBound(b"", 2)
    with pytest.raises(WorkspaceArgumentError, match="most"):
        CharBound(b"\x01\xff", 128)  # 255 stands for most, which must be >= 255
    with pytest.raises(WorkspaceArgumentError, match="most"):
        CharBound(b"\x01", True)
    with pytest.raises(WorkspaceArgumentError, match="tokens"):
        CharBound.from_tokens(["ab"])
    with pytest.raises(WorkspaceArgumentError, match="char"):
        _tiny().max_leads("ab")
    with pytest.raises(WorkspaceArgumentError, match="window"):
        _tiny().at_least("ab", window=0)
    assert CharBound(b"\x01\xff", 300).max_leads("\x01") == 300


@pytest.mark.parametrize("name", _BPE)
def test_max_token_bytes_is_the_bounds_longest_without_building_it(name, monkeypatch):
    """``max_token_bytes`` (read on every guarded result) is the ``longest``
    of the vocabulary bound (times ``NFC_SHRINK`` for a normalising
    tokenizer) but is read without building that bound and its per-character
    table: with the caches empty it leaves the bound unbuilt."""
    from vistalab.workspace._bounds import NFC_SHRINK, VocabBound

    tok = _tok(name)
    cls = type(tok)
    for attr in ("_shared_longest", "_shared_bound"):  # tiktoken's class caches
        if hasattr(cls, attr):
            monkeypatch.setattr(cls, attr, None)
    for attr in ("_longest", "_bounds"):
        if isinstance(getattr(cls, attr, None), dict):
            monkeypatch.setattr(cls, attr, {})
    built = []
    real = VocabBound.from_tokens.__func__
    monkeypatch.setattr(
        VocabBound,
        "from_tokens",
        classmethod(lambda c, *a, **k: built.append(1) or real(c, *a, **k)),
    )
    m = tok.max_token_bytes
    assert built == []
    b = tok.vocab_bound
    assert built == [1]
    assert m == (b.longest * NFC_SHRINK if b.nfc else b.longest)
    assert getattr(tok, "max_token_bytes_ascii", b.longest) == b.longest
    assert b.longest == max(map(len, _vocab(tok)))
