"""Hostile calls refused at the door, and refused fast (DESIGN rule 6, the error
contract): each case is one the API fuzzer found (a foreign exception, an undocumented
NaN, or a call slow enough to pass its per-call timeout on a loaded machine). The
speed cases are checked by what the code does (no difflib on an unmatchable name, no
``mcp`` import for a non-service, the default grids computed once), never by timing.
Each test fails on the code before the door was mended.
"""

from __future__ import annotations

import difflib
import math

import numpy as np
import pytest
from vistalab.theory import DomainError, VistaLabError, suggest

# ---------------------------------------------------------------- slow calls made fast


def test_suggest_skips_difflib_for_a_name_no_candidate_can_match(monkeypatch):
    """A 5 MB name cannot reach difflib's 0.6 cutoff against short names (its ratio is
    at most 2*min(len)/(len+len)), so difflib never indexes it; hints are unchanged."""
    calls = []
    real = difflib.get_close_matches

    def counting(*a, **k):
        calls.append(1)
        return real(*a, **k)

    monkeypatch.setattr(difflib, "get_close_matches", counting)
    assert suggest("x" * 5_000_000, ["gaussian", "bucket"]) is None
    assert calls == []
    assert suggest("gausian", ["gaussian", "bucket"]) == "gaussian" and calls == [1]
    assert suggest("--n", ["--N", "--k"]) == "--N"


@pytest.mark.parametrize("name", ["gausian", "bukcet", "xyz", "gaussian-extra-long", "b"])
def test_suggest_gives_difflib_s_own_answer(name):
    """Checked on the stated names: the length filter drops only names difflib would
    reject too."""
    known = ["gaussian", "bucket", "buckets", "blind", "gibbs", "ledger"]
    want = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    assert suggest(name, known) == (want[0] if want else None)


def test_sweep_config_errors_refuses_a_string_before_iterating_it():
    """A 5 MB string was taken as 5 million problems (a message built for minutes)."""
    from vistalab.sweep import SweepConfigError, SweepConfigErrors

    for bad in ("x" * 5_000_000, b"xy", None, [], [None], 3):
        with pytest.raises(DomainError) as info:
            SweepConfigErrors(bad, file="f.toml")
        assert info.value.parameter == "errors"
    one = SweepConfigError("N", -1, "must be >= 1", file="f.toml", where="[params]")
    assert "1 problems in f.toml" in str(SweepConfigErrors([one], file="f.toml"))


def test_the_mcp_builders_refuse_a_non_service_before_importing_mcp(monkeypatch):
    """``service=[None]`` was found out only after the (seconds-long) ``mcp`` import."""
    from vistalab.workspace import build_http_app, build_mcp_server

    import vistalab._core as core

    def no_import(*a, **k):
        raise AssertionError("mcp imported before the service was checked")

    monkeypatch.setattr(core, "import_optional", no_import)
    for build in (build_mcp_server, build_http_app):
        with pytest.raises(VistaLabError) as info:
            build([None])
        assert info.value.parameter == "service"


def test_the_default_tightness_grids_are_computed_once():
    """A grid left at its default is computed on first use and reused (frozen records
    of constants); a given grid is computed each time."""
    from vistalab.theory import _tightness as t

    seen = []

    def row(a, b, c):
        seen.append((a, b, c))
        return (a, b, c)

    default = ((1, 2, 3.0), (4, 5, 6.0))
    first = t._rows("g", None, default, row, "(a, b, c)")
    again = t._rows("g", None, default, row, "(a, b, c)")
    assert first == again == list(default) and len(seen) == 2
    t._rows("g", [(7, 8, 9.0)], default, row, "(a, b, c)")
    t._rows("g", [(7, 8, 9.0)], default, row, "(a, b, c)")
    assert len(seen) == 4


# ---------------------------------------------------------------- sims at the door


def _interfaces():
    from vistalab import sims

    return [sims.LedgerInterface(n=8, kappa=2), sims.GaussianInterface(n=8, kappa=2, sigma=1.0),
            sims.GibbsInterface(n=8, kappa=2, rate=0.5), sims.BucketsInterface(n=8, kappa=2,
                                                                                buckets=2)]


@pytest.mark.parametrize("bad", ["", "abc", b"xy", [], (), np.array([]), [1.0] * 7,
                                 [math.nan] * 8, 10**400, "x" * 100_000])
def test_log_posterior_refuses_what_observe_never_returns(bad):
    """A string, an empty or short vector, NaN: a ``DomainError`` naming ``y`` (was a
    numpy ``UFuncTypeError`` or a zero-size reduction error)."""
    for iface in _interfaces():
        with pytest.raises(DomainError) as info:
            iface.log_posterior(bad)
        assert info.value.parameter == "y", type(iface).__name__


def test_log_posterior_still_reads_its_own_observations():
    rng = np.random.default_rng(3)
    for iface in _interfaces():
        lp = iface.log_posterior(iface.observe(5, rng))
        assert lp.shape == (8,) and not np.isnan(lp).any()


@pytest.mark.parametrize("param", ["N", "k", "budget", "cost"])
@pytest.mark.parametrize("bad", [-1e300, "x", math.nan, -1])
def test_every_strategy_plan_refuses_a_bad_instance(param, bad):
    """``KeepBits().plan(N=-1e300, ...)`` returned a plan with NaN/inf; now every
    registered strategy's plan refuses it, naming the parameter."""
    from vistalab.theory import HandleCostModel

    from vistalab import sims

    for name in sims.STRATEGIES:
        args = {"N": 64, "k": 8, "budget": 100.0, "cost": HandleCostModel()}
        args[param] = bad
        with pytest.raises(DomainError) as info:
            sims.make_strategy(name).plan(**args)
        assert info.value.parameter == param, name


# ---------------------------------------------------------------- record readers


@pytest.mark.parametrize("bad", [{"x": math.nan}, np.float64("nan"), "ab", [1, 2], None,
                                 {"config": {}}, {"ops": []}, {"config": 1, "ops": []},
                                 {"config": {}, "ops": "xy"}, {"config": {}, "ops": [1]}])
def test_operation_sequence_from_dict_refuses_malformed_input(bad):
    """A missing key was a bare ``KeyError``; every malformed shape is refused."""
    from vistalab.workspace import OperationSequence

    with pytest.raises(VistaLabError):
        OperationSequence.from_dict(bad)
    seq = OperationSequence({"budget": 100}, ({"op": "x"},))
    assert OperationSequence.from_dict(seq.to_dict()) == seq


@pytest.mark.parametrize("kwargs", [{"records": {"x": math.nan}}, {"records": np.float64(1)},
                                    {"records": [1]}, {"records": "ab"},
                                    {"records": [{"a": 1}], "units": {"x": math.nan}.items()},
                                    {"records": [{"a": 1}], "columns": 3}])
def test_tidy_table_from_records_refuses_malformed_input(kwargs):
    from vistalab.figures import TidyTable

    with pytest.raises(DomainError):
        TidyTable.from_records(**kwargs)
    assert TidyTable.from_records([{"a": 1}], units={"a": "bits"}).records() == [{"a": 1}]


@pytest.mark.parametrize("param", ["dist", "member", "name"])
def test_hf_tokenizer_from_package_refuses_an_empty_name(param):
    from vistalab.workspace import HFTokenizer

    args = {"dist": "tiktoken", "member": "tokenizer.json", "name": "t"}
    args[param] = ""
    with pytest.raises(VistaLabError) as info:
        HFTokenizer.from_package(**args)
    assert info.value.parameter == param


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, np.array([math.nan]), 1.5,
                                 -1, True, "8"])
def test_approx_byte_count_refuses_what_is_not_a_byte_count(bad):
    """``count_utf8_bytes(nan)`` returned NaN and ``inf`` returned inf (the formula
    ``(n + 3) // 4`` on a float); a byte count is an int >= 0."""
    from vistalab.workspace import ApproxTokenizer

    with pytest.raises(VistaLabError) as info:
        ApproxTokenizer().count_utf8_bytes(bad)
    assert info.value.parameter == "nbytes"
    assert ApproxTokenizer().count_utf8_bytes(9) == 3 == ApproxTokenizer().count("é" * 4 + "x")
    assert ApproxTokenizer().count_utf8_bytes(np.int64(8)) == 2


@pytest.mark.parametrize("kwargs,param", [
    ({"tools": "x" * 100_000, "tokenizer": "x"}, "tools"),
    ({"tools": b"xy", "tokenizer": None}, "tools"),
    ({"tools": {"type": "function"}, "tokenizer": None}, "tools"),
    ({"tools": [{"type": "function"}], "tokenizer": "x" * 100_000}, "tokenizer"),
    ({"tools": [], "tokenizer": None}, "tokenizer"),
    ({"tools": [{"type": "function"}], "tokenizer": "abc"}, "tokenizer"),
])
def test_tools_tokens_refuses_a_text_or_a_tokenizer_without_count_before_serialising(
        kwargs, param, monkeypatch):
    """A 5 MB text as ``tools`` was split into 5 million one-character "schemas" and
    serialised (seconds under load) before the missing ``count`` failed; a text, a
    mapping and a counter-less tokenizer are now refused before any JSON is made."""
    from vistalab.workspace import _accounting, get_tokenizer, tools_tokens

    def no_json(*a, **k):
        raise AssertionError("serialised before the door check")

    monkeypatch.setattr(_accounting, "canonical_json", no_json)
    with pytest.raises(VistaLabError) as info:
        tools_tokens(**kwargs)
    assert info.value.parameter == param
    monkeypatch.undo()
    approx = get_tokenizer("approx")
    schema = {"type": "function", "function": {"name": "f", "parameters": {}}}
    assert tools_tokens([schema], approx) > tools_tokens([], approx) == 0


def test_message_tokens_refuses_a_text_as_tokenizer():
    """A text has a ``count`` method (``str.count`` counts a substring), so
    ``message_tokens(m, "abc")`` returned a number of substrings as a token count."""
    from vistalab.workspace import get_tokenizer, message_tokens

    with pytest.raises(VistaLabError) as info:
        message_tokens({"role": "user", "content": "hi"}, "abc")
    assert info.value.parameter == "tokenizer"
    assert message_tokens({"role": "user", "content": "hi"}, get_tokenizer("approx")) > 0


@pytest.mark.parametrize("kwargs,param", [
    ({"factor": math.nan}, "factor"), ({"factor": math.inf}, "factor"),
    ({"factor": -math.inf}, "factor"), ({"factor": -2.0}, "factor"),
    ({"factor": 2**63 + 1}, "factor"), ({"factor": 10**400}, "factor"),
    ({"factor": 2.0, "method": math.nan}, "method"),
])
def test_certified_scaled_refuses_a_factor_that_is_not_a_finite_positive_double(kwargs, param):
    """``CertifiedValue.scaled(nan)`` returned an enclosure with a NaN midpoint and
    radius, ``scaled(inf)`` an infinite one: a certificate of nothing."""
    from vistalab.theory import CertifiedValue

    c = CertifiedValue(1.5, 1e-12, "exact")
    with pytest.raises(DomainError) as info:
        c.scaled(**kwargs)
    assert info.value.parameter == param
    with pytest.raises(DomainError, match="overflows"):
        CertifiedValue(1e300, 1.0, "exact").scaled(1e300)
    twice = c.scaled(2.0)
    assert twice.lower <= 3.0 <= twice.upper and twice.method == "exact"


@pytest.mark.parametrize("bad", ["thm1.A", b"thm1", "x" * 100_000, ["*"], ["thm1.?"], [""],
                                 [3], None])
def test_check_context_certificates_refuses_a_text_or_a_pattern_before_running_theory(
        bad, monkeypatch):
    """``certificates("abc")`` ran theory's steps for each character (a 5 MB text:
    5 million ``certify_all`` calls) and ``certificates(["*"])`` every registered step
    before keeping none; both are refused before theory is asked."""
    from vistalab.paper_checks import DATA_DIR, CheckContext, _context

    def no_theory(claim_id):
        raise AssertionError(f"theory asked for {claim_id!r}")

    monkeypatch.setattr(_context, "_certify", no_theory)
    ctx = CheckContext(DATA_DIR, np.random.SeedSequence(0), {})
    with pytest.raises(DomainError) as info:
        ctx.certificates(bad)
    assert info.value.parameter == "claim_ids"
    assert ctx.certificates(()) == (None, "")
    monkeypatch.setattr(_context, "_certify", lambda cid: ())
    assert ctx.certificates(("thm1.A",)) == (False, "certificates: thm1.A: no proof steps "
                                                    "registered")


@pytest.mark.parametrize("bad", [None, "abc", 5, [None], [math.nan], {"messages": "x"},
                                 {"x": math.nan}])
def test_conformance_adapters_refuse_what_is_not_a_conversation(bad):
    """``WorkspaceAdapter.min_budget``, ``SuiteCounter.costs`` and
    ``WorkspaceAdapter.register`` raised bare ``TypeError``/``AttributeError``/
    ``ValueError`` on a value that is not a conversation (or a message)."""
    from vistalab.conformance import WorkspaceAdapter, as_counter

    adapter, counter = WorkspaceAdapter(budget=4000), as_counter("approx", "openai")
    for call, param in ((adapter.min_budget, "conversation"), (counter.costs, "conversation"),
                        (adapter.register, "message")):
        if isinstance(bad, dict) and param == "message":
            continue  # a mapping is a message's shape (its fields are checked later)
        with pytest.raises(DomainError) as info:
            call(bad)
        assert info.value.parameter == param
    conv = [{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}]
    assert adapter.min_budget(conv) > 0 and len(counter.costs(conv)[2]) == 2


@pytest.mark.parametrize("where", ["", "folder", "/proc/kmsg", "x" * 5000, "a\0b"])
def test_violation_write_refuses_a_path_it_cannot_write(where, tmp_path):
    """``Violation.write`` raised raw ``OSError``/``IsADirectoryError``/``ValueError``
    for a folder, a pseudo file, a too-long name, a NUL or an empty path."""
    from vistalab.conformance import Violation, read_violation

    conv = [{"role": "system", "content": "s"}, {"role": "user", "content": "hello"}]
    v = Violation(invariant="budget", message="over", budget=10, conversation=conv,
                  output=conv)
    with pytest.raises(DomainError) as info:
        v.write(str(tmp_path) if where == "folder" else where)
    assert info.value.parameter == "path"
    assert read_violation(v.write(tmp_path / "v.json")).invariant == "budget"


@pytest.mark.parametrize("kwargs,param", [
    ({"protocol": math.nan}, "protocol"), ({"protocol": "grpc"}, "protocol"),
    ({"pending": math.nan}, "pending"), ({"pending": "c1"}, "pending"),
    ({"pending": [math.nan]}, "pending"),
])
def test_complete_pending_refuses_a_bad_protocol_or_pending(kwargs, param):
    """``complete_pending(nan, nan, nan)`` returned its NaN ``output`` unchanged (a NaN
    ``pending`` is truthy, a NaN ``protocol`` matched no turns)."""
    from vistalab.conformance import complete_pending

    out = [{"role": "user", "content": "q"},
           {"role": "assistant", "content": None, "tool_calls": [
               {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}]
    args = {"output": out, "protocol": "openai", "pending": ["c1"], **kwargs}
    with pytest.raises(DomainError) as info:
        complete_pending(**args)
    assert info.value.parameter == param
    done = complete_pending(out, "openai", ["c1"])
    assert done[-1] == {"role": "tool", "tool_call_id": "c1", "content": "(result)"}
