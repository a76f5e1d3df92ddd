"""The guard's, preflight's and dashboard's figures, kept incrementally, equal a
from-scratch recount of the rendering for every shipped tokenizer and for a
user's own (additive, byte-counted, or neither), in both ``cache_prefix``
configurations, with and without the protocol message, normal and overflow
(paper, Methodology, "Workspace invariants": the dashboard, preflight and guard
use the same numbers)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vistalab.workspace import Workspace, WorkspaceError, get_tokenizer
from vistalab.workspace._accounting import count_request_tokens


class WordCounter:
    """A user's additive tokenizer: one token per whitespace and per other run."""

    name = "words"
    additive = True

    def count(self, text: str) -> int:
        return len(re.findall(r"\s|\S+", text))


class ByteCounter:
    """A user's byte-counted tokenizer: ceil(bytes / 3), not additive."""

    name = "bytes3"
    additive = False

    def count(self, text: str) -> int:
        return self.count_utf8_bytes(len(text.encode("utf-8")))

    def count_utf8_bytes(self, nbytes: int) -> int:
        return (nbytes + 2) // 3


class Opaque:
    """A user's tokenizer offering nothing beyond count (recounted whole)."""

    name = "opaque"
    additive = False

    def count(self, text: str) -> int:
        return (len(text.encode("utf-8")) + 4) // 5


_TOKENIZERS = ["cl100k_base", "o200k_base", "approx", "qwen3", "llama3", "deepseek_v4",
               "words", "bytes3", "opaque"]
_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("pair"), st.integers(1, 400)),
        st.tuples(st.just("archive"), st.integers(0, 30)),
        st.tuples(st.just("user"), st.integers(1, 200)),
    ),
    min_size=3,
    max_size=25,
)


def _tok(name):
    own = {"words": WordCounter, "bytes3": ByteCounter, "opaque": Opaque}
    if name in own:
        return own[name]()
    try:
        return get_tokenizer(name)
    except Exception as exc:  # an optional extra missing here
        pytest.skip(f"{name} unavailable: {exc}")


def _check(ws: Workspace) -> None:
    r = ws.render()
    assert r.tokens == count_request_tokens(r.messages, r.tools, ws.tokenizer)
    assert r.tokens <= ws.budget
    if r.mode == "normal":
        assert r.candidate_tokens == r.tokens
    assert ws.mode == r.mode


@pytest.mark.slow
@pytest.mark.parametrize("name", _TOKENIZERS)
@settings(max_examples=8)
@given(ops=_OPS, budget=st.sampled_from([3_000, 8_000, 128_000]),
       cache_prefix=st.booleans(), protocol=st.booleans())
def test_incremental_figures_equal_a_recount(name, ops, budget, cache_prefix, protocol):
    tok = _tok(name)
    try:
        ws = Workspace(budget, tokenizer=tok, cache_prefix=cache_prefix, protocol=protocol)
        ws.register_system("You are careful.")
        ws.register_user("Find the county with the largest growth.")
    except WorkspaceError:
        return  # a budget too small for this configuration's floor
    i = 0
    for op, k in ops:
        if op == "pair":
            i += 1
            ws.register_tool_call(
                [{"id": f"c{i}", "type": "function",
                  "function": {"name": "q", "arguments": f'{{"p": {i}}}'}}]
            )
            ws.register_tool_result(f"c{i}", ("county 12 rate 3.5, " * k)[: 20 * k])
        elif op == "user":
            ws.register_user("next: " + "why " * k)
        else:
            n = len(ws.blocks)
            try:
                ws.archive(f"B3-B{max(3, n - k)}", "older")
            except WorkspaceError:
                pass
        _check(ws)


def test_the_recount_check_bites_on_a_lying_byte_counter():
    """A tokenizer whose count_utf8_bytes disagrees with its count makes the
    incremental figures wrong, and the check above catches it."""

    class Liar(ByteCounter):
        def count(self, text: str) -> int:
            return (len(text.encode("utf-8")) + 3) // 4  # count_utf8_bytes divides by 3

    ws = Workspace(128_000, tokenizer=Liar())
    ws.register_system("You are careful.")
    ws.register_user("Find it.")
    with pytest.raises(AssertionError):
        _check(ws)
