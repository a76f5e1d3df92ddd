"""Conformance suite for the Tokenizer protocol, run over every registered
tokenizer (paper, Implementation Details and "Does the dashboard scale?": token
estimates computed with cl100k_base; Methodology, "Workspace invariants": the
dashboard, preflight and guard use the same numbers)."""

from __future__ import annotations

import math
import socket

import pytest
from hypothesis import given
from hypothesis import strategies as st
from vistalab.workspace import (
    TOKENIZERS,
    ApproxTokenizer,
    UnknownNameError,
    get_tokenizer,
)
from vistalab.workspace._dashboard import DashboardConfig, DashboardRenderer, LedgerRow

from vistalab.testing import check_tokenizer

_TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300
) | st.sampled_from(
    ["", " ", "\n\n", "<|endoftext|>", "日本語のテキスト", "a  b\n  c", "1,234,567"]
)


@pytest.mark.parametrize("name", sorted(TOKENIZERS))
def test_registered_tokenizers_conform(name):
    """Implementation Details: every registered tokenizer honours the protocol
    (non-negative, at most one token per UTF-8 byte, deterministic, additive if it says so),
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
        "does not implement the Tokenizer protocol (missing: name, additive, count)"]


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


@pytest.mark.parametrize("name", sorted(TOKENIZERS))
@pytest.mark.parametrize("compact", [False, True])
@given(rows=_ROWS, budget=st.integers(500, 10**6), other=st.integers(0, 10**6), fold=st.booleans())
def test_dashboard_count_from_cached_pieces_is_exact(name, compact, rows, budget, other, fold):
    """Methodology, "Workspace invariants": the dashboard's printed cost equals
    its real token count (computed from cached row pieces and solved as a fixed
    point, since the figure is printed inside the dashboard)."""
    tok = get_tokenizer(name)
    r = DashboardRenderer(tok, DashboardConfig(compact=compact))
    notes = ["(+12 older archived units folded: B2,B5-B9,G3; ~52,000 tok)"] if fold else []
    d = r.ledger(rows, notes, budget=budget, overhead=other // 3, conversation=other)
    true = 3 + tok.count("user") + tok.count(d.text)
    assert d.message_tokens == true
    assert f"dashboard ~{d.message_tokens:,}" in d.text
