"""The Python API fuzzer, a bounded seeded sample (DESIGN rule 6, the error contract):
every name of every public ``__all__`` -- found, not listed, so a new public name or
package is covered -- called with hostile values. The full run (every callable x
every hostile value x every parameter) is ``python benchmarks/fuzz_api.py``.

What the sample shows: on the drawn calls (seeded, so the same calls every run), no
foreign exception, no hang (per-call timeout) and no undocumented NaN/inf result. It
is a sample, not a proof; the script's full run is what the closing numbers quote.
"""

from __future__ import annotations

import math
import time

import pytest
from vistalab.tests import _api_fuzz as fuzz

#: Calls in the suite's sample (the full run makes >10,000).
SAMPLE = 700


def test_every_public_name_is_a_fuzz_target():
    """Coverage is by discovery: each public package's every callable name is a target
    (or is skipped with a stated reason; a typing.Protocol is an interface to
    implement, and instantiating one is refused by typing itself)."""
    mods = {m.__name__ for m in fuzz.public_modules()}
    assert {"vistalab.theory", "vistalab.sims", "vistalab.workspace", "vistalab.paper_checks",
            "vistalab.figures", "vistalab.testing", "vistalab.sweep",
            "vistalab.conformance"} <= mods
    names = {t.qualname for t in fuzz.targets()}
    for mod in fuzz.public_modules():
        for name in mod.__all__:
            qual = f"{mod.__name__}.{name}"
            obj = getattr(mod, name)
            if callable(obj) and not getattr(obj, "_is_protocol", False):
                assert qual in names or qual in fuzz.SKIP, qual
    assert "vistalab.workspace.Workspace.replay" in names  # factories' methods too
    assert {f"vistalab.workspace.{n}" for n in (
        "build_engine_model", "run_engine_model", "differential_test")} <= names


def test_every_factory_builds_its_class():
    """The factory table's constructor arguments are valid: each entry returns an
    instance of the class it is filed under (a stale entry would make every method
    of that class a ``no_instance`` in the full run), and every registered make-room
    interface has one."""
    import importlib

    from vistalab import sims

    table = fuzz._factories()
    for qual, make in table.items():
        module, name = qual.rsplit(".", 1)
        cls = getattr(importlib.import_module(module), name)
        assert isinstance(make(), cls), qual
    assert {f"vistalab.sims.{c.__name__}" for c in sims.INTERFACES.values()} <= set(table)


def test_slow_allowances_name_real_calls(tmp_path):
    """Each stated slow-but-valid call is a call the full run makes (a stale entry
    would silently widen nothing, or hide a renamed target)."""
    by_name = {t.qualname: t for t in fuzz.targets()}
    values = fuzz.hostile_values(tmp_path)
    for (qual, label), (seconds, why) in fuzz.SLOW.items():
        assert qual in by_name and seconds > 0 and why, qual
        labels = {lab for lab, _ in fuzz._calls(by_name[qual], values, fuzz._baselines())}
        assert label in labels, (qual, label)


def test_warm_ups_cover_the_one_time_loads():
    """A one-time load inside a timed call is counted as a hang under load: after
    the fuzzer's warm-ups (``WARM_IMPORTS``, ``WARM_CALLS``), the first calls of
    ``LangChainWorkspace.as_runnable`` (langchain_core looks ``RunnableLambda`` up
    lazily) and ``CheckContext.certificates`` (theory's proof-step registry) import
    no module. Run in a fresh interpreter: this process has imported both already."""
    import subprocess
    import sys

    pytest.importorskip("langchain_core")
    code = """
import contextlib, importlib, sys
from vistalab.tests import _api_fuzz as fuzz
table = fuzz._factories()
lc = table["vistalab.workspace.LangChainWorkspace"]()
ctx = table["vistalab.paper_checks.CheckContext"]()
for name, attrs in fuzz.WARM_IMPORTS.items():
    mod = importlib.import_module(name)
    for attr in attrs:
        getattr(mod, attr)
for warm in fuzz.WARM_CALLS:
    warm()
before = set(sys.modules)
lc.as_runnable()
ctx.certificates(("no-such-claim",))
print(sorted(set(sys.modules) - before))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, check=True)
    assert out.stdout.strip() == "[]", out.stdout[-2000:]


def test_the_study_baseline_checks_only_the_reference_trimmer(tmp_path):
    """run_study's valid baseline is bounded: one peer whose manager is the suite's
    reference trimmer (a real peer's check took from 7 to 150 s under load, so the
    valid calls ``seed=2**63`` and ``figure=callable`` ran past their timeout), and
    its one slow valid call, ``peers=None`` (every installed peer), has a stated
    allowance."""
    from vistalab.conformance import run_study, tail_trimmer

    kwargs = dict(fuzz._baselines()["vistalab.conformance.run_study"])
    (peer,) = kwargs["peers"]
    assert peer.load() is tail_trimmer and not peer.modules
    kwargs["out"] = tmp_path / "study"
    result = run_study(**kwargs)
    assert [r.status for r in result.rows] == ["checked"]
    assert set(result.rows[0].cells.values()) <= {"pass", "n/a"}
    assert ("vistalab.conformance.run_study", "peers=None") in fuzz.SLOW


def _broken(x):
    return {}[x]


def _slow(x):
    time.sleep(30)


def _nan(x):
    return math.nan


def _documented_nan(x):
    """Returns NaN when asked (documented)."""
    return math.nan


def _information(x):
    """Returns the mutual information (a word that merely contains the letters)."""
    return math.inf


@pytest.mark.parametrize("func,kind", [(_broken, "foreign"), (_slow, "hangs"),
                                       (_nan, "nan_inf"), (_documented_nan, "ok"),
                                       (_information, "nan_inf"), (lambda x: 1.0, "ok")])
def test_the_fuzzer_detects_what_it_counts(func, kind):
    """A checker must fail on a broken input: a foreign exception, a hang and an
    undocumented NaN are each detected."""
    import signal

    old = signal.signal(signal.SIGALRM, fuzz._on_alarm)
    try:
        got, _detail = fuzz._one(fuzz.Target("t", func), {"x": 1}, 0.5)
    finally:
        signal.signal(signal.SIGALRM, old)
    assert got == kind


@pytest.mark.slow
def test_a_seeded_sample_of_hostile_calls_keeps_the_contract():
    """Sampled: SAMPLE seeded calls over every public callable (each at least once):
    0 foreign exceptions, 0 hangs (10 s per call, a hang detector), 0 undocumented
    NaN/inf results."""
    rep = fuzz.run_in_child(sample=SAMPLE, seed=0, timeout=10.0)
    assert rep.calls >= min(SAMPLE, rep.callables) and rep.callables >= 300
    bad = [e for e in rep.examples]
    assert (rep.foreign, rep.hangs, rep.nan_inf) == (0, 0, 0), "\n".join(bad[:30])
    # every target is drawn at least once, so every class's methods met an instance
    assert rep.no_instance == 0, rep.no_instance_classes
