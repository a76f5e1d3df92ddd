"""The Python API fuzzer (DESIGN rule 6, the error contract): every name of every
public ``__all__`` called with hostile values, counting what breaks the contract.

The public packages are found, not listed: every ``vistalab.<name>`` subpackage or
module without a leading underscore that has an ``__all__`` (so a new public package
or name is fuzzed automatically). Each callable -- functions, classes (their
constructors), and every public method, static method and class method that a public
class defines in vista-lab (not those inherited from ``str``, ``tuple`` or
``Exception``) -- is called with one hostile value at a time in each parameter (the
others from a valid baseline call when one is known, else hostile too). A method is
called on a fresh instance: from :func:`_factories` where one is written, else a copy
of one found in the result of a valid baseline call (:func:`_harvest`: the
constructors and functions of the error-contract table make most records); a class
with neither is reported (``no_instance``), never silently left out. The outcome is
one of

- ``ok``: a result; a float NaN/inf anywhere in it (scanned to a bounded depth) is
  counted as ``nan_inf`` unless the callable's docstring mentions NaN/inf (the
  constructor of a plain record -- a dataclass -- holds what it was given, so its
  result is not scanned, nor that of a class method that returns the record);
- ``contract``: a :class:`~vistalab._core.VistaLabError` (the contract kept);
- ``foreign``: any other exception (a ``RecursionError`` inside the message too);
- ``hang``: no answer within the per-call timeout (``SIGALRM``: an exception is
  raised in the call, which also interrupts a blocking ``open`` of a FIFO). A
  callable whose valid baseline call itself takes long gets that time (x3) added
  to its timeout, so slow is not mistaken for hung; the few hostile-looking calls
  that are valid and slow (:data:`SLOW`, each with its reason) get a stated
  allowance in the full run and are left out of the sample. A method's fresh
  instance is built before the call's timer starts (under its own allowance,
  :data:`INSTANCE_TIMEOUT`), and the optional dependencies methods import on their
  first call (:data:`WARM_IMPORTS`) and vista-lab's own lazy loads
  (:data:`WARM_CALLS`) are loaded before the first call, so neither a slow valid
  set-up nor a one-time import counts as a hang.

The run happens in a forked child with an address-space limit (a reader of
``/dev/zero`` fails with ``MemoryError`` there, not on the machine) and ``stdin``
closed. The suite runs a seeded sample (``property_tests/test_api_fuzz.py``); the
full run is ``python benchmarks/fuzz_api.py``.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import enum
import importlib
import inspect
import json
import math
import os
import pkgutil
import random
import re
import resource
import signal
import sys
import tempfile
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

import vistalab
from vistalab._core import VistaLabError

__all__ = ["public_modules", "targets", "hostile_values", "run", "run_in_child",
           "FuzzReport"]

#: Modules fuzzed besides the discovered subpackages (lazy-imported by design).
_EXTRA_MODULES = ("vistalab.sweep",)
#: Discovered but not an API: the shipped test suite, the examples' data and the CLI.
_NOT_API = {"vistalab.tests", "vistalab.examples", "vistalab.cli"}

#: Names that are not callables to call with hostile values, and why.
SKIP: dict[str, str] = {
    "vistalab.workspace.build_http_app": "builds a Starlette app; its doors are the MCP "
                                         "tools (property_tests/test_workspace_mcp.py)",
}


#: Calls that are valid and slow, not hung: (qualname, case label) -> (seconds allowed,
#: why). The full run gives each that much time; the suite's sample leaves them out.
SLOW: dict[tuple[str, str], tuple[float, str]] = {
    ("vistalab.theory.certify_all", "only=None"): (
        600.0, "only=None is the default: every registered proof-step check runs "
               "(about 20 s of CPU)"),
    **{("vistalab.workspace.build_engine_model", f"cache_dir={label}"): (
        900.0, "a valid new cache folder: the Coq model and its theorems are compiled "
               "there (about a minute)") for label in ("str", "folder")},
    **{(f"vistalab.workspace.{cls}.count", "text=huge-str"): (
        300.0, "a valid text of one 5-million-letter word: one BPE piece, whose merges "
               "take superlinear time in its length (about 5 s alone, 30 s on a loaded "
               "machine); the count is exact, so it is not refused")
       for cls in ("Cl100kTokenizer", "O200kTokenizer", "HFTokenizer")},
    ("vistalab.conformance.run_study", "peers=None"): (
        900.0, "peers=None is the default: every installed peer of PEERS is checked, "
               "each with its own manager and shrinking (about 25 s of CPU; tokentrim "
               "alone took 150 s on a loaded machine)"),
}

#: Optional dependencies that public methods import on their first call (seconds on a
#: loaded machine, once per process): each module's names the methods use are looked
#: up before the timed calls (langchain_core's packages import a name's submodule on
#: its first lookup: ``RunnableLambda`` took 1.2 s, over 5 s under load, inside
#: ``as_runnable``), so a one-time import is not counted as a hang. A missing one is
#: left missing (the methods then refuse with the install hint, which the run counts
#: as the contract).
WARM_IMPORTS: dict[str, tuple[str, ...]] = {
    "langchain_core.messages": ("BaseMessage", "convert_to_messages",
                                "convert_to_openai_messages", "trim_messages"),
    "langchain_core.runnables": ("RunnableLambda",),
    "langchain_core.tools": ("BaseTool", "StructuredTool"),
}


def _warm_proof_steps() -> None:
    """theory's proof-step registry, loaded on first use (sympy and eight step
    modules: a second alone, over 5 s under load; ``CheckContext.certificates``'s
    first call was counted as a hang, and its interrupted import as a second)."""
    from vistalab.theory import list_steps
    list_steps()


#: One-time set-ups of vista-lab's own lazy loads, run before the timed calls (like
#: :data:`WARM_IMPORTS`; named by a static import, so a rename breaks the fuzzer).
WARM_CALLS: tuple[Callable[[], None], ...] = (_warm_proof_steps,)

#: Seconds allowed to build the fresh instance a method is called on (its own
#: allowance, outside the call's timeout: the factory table's builds are valid calls).
INSTANCE_TIMEOUT = 120.0


def public_modules() -> list[Any]:
    """Every public vista-lab package or module that declares ``__all__``."""
    names = {f"vistalab.{m.name}" for m in pkgutil.iter_modules(vistalab.__path__)
             if not m.name.startswith("_")}
    # an editable install maps the layer folders (theory/, sims/...) into the package
    # through its finder's MAPPING; an installed wheel has them under vistalab/
    for finder in sys.meta_path:
        cls = finder if isinstance(finder, type) else type(finder)
        mapping = getattr(sys.modules.get(cls.__module__), "MAPPING", None)
        if isinstance(mapping, dict):
            names |= {k for k in mapping if k.count(".") == 1 and k.startswith("vistalab.")
                      and not k.split(".")[1].startswith("_")}
    names |= set(_EXTRA_MODULES)
    out = []
    for name in sorted(names - _NOT_API):
        mod = importlib.import_module(name)
        if hasattr(mod, "__all__"):
            out.append(mod)
    return out


@dataclasses.dataclass
class Target:
    """One callable to fuzz: ``qualname`` (``module.Name`` or ``module.Class.method``),
    the callable, and a ``make`` that returns a fresh bound callable (methods)."""

    qualname: str
    func: Callable[..., Any]
    make: Callable[[], Callable[..., Any]] | None = None
    #: The class whose instance ``make`` needs ("" for a function or a class).
    owner: str = ""

    @property
    def module(self) -> str:
        """The public module (``vistalab.workspace``) the callable belongs to."""
        return ".".join(self.qualname.split(".")[:2])


def _tokenizer() -> Any:
    from vistalab.workspace import ApproxTokenizer
    return ApproxTokenizer()


def _workspace() -> Any:
    from vistalab.workspace import Workspace
    ws = Workspace(4000, tokenizer="approx")
    ws.register_system("s")
    ws.register_user("hello")
    return ws


def _service() -> Any:
    from vistalab.workspace import WorkspaceService
    return WorkspaceService(_workspace())


def _factories() -> dict[str, Callable[[], Any]]:
    """Instances whose public methods are fuzzed too (a fresh one per call).

    The table of valid constructor arguments: each entry builds a small valid
    instance, through the public producer where there is one (a workspace's
    recorder for a trajectory, ``build_probe_kit`` for a probe kit), else the
    constructor with documented valid values. The make-room interfaces are built
    from their own ``EXAMPLE_PARAMS`` (the values the conformance kit uses) on a
    small instance (n=8, kappa=2), so a new registered interface is covered too. A
    class whose baseline calls do not return an instance (their defaults are long
    runs, or the record only appears on failure, like a :class:`Divergence`) needs
    an entry here (a class left without either is counted as ``no_instance`` by the
    run, and the suite's sample calls every class's methods at least once).
    """
    from vistalab.workspace import (
        AnthropicCodec,
        CharBound,
        DiskStore,
        LangChainWorkspace,
        MemoryStore,
        SplitBound,
        TrajectoryRecorder,
        VocabBound,
    )
    from vistalab.workspace._tokenizers import WORD_SPLITS

    from vistalab import sims
    table: dict[str, Callable[[], Any]] = {
        "vistalab.workspace.Workspace": _workspace,
        "vistalab.workspace.WorkspaceService": _service,
        "vistalab.workspace.MemoryStore": MemoryStore,
        "vistalab.workspace.DiskStore": lambda: DiskStore(tempfile.mkdtemp()),
        "vistalab.workspace.AnthropicCodec": AnthropicCodec,
        "vistalab.workspace.ApproxTokenizer": _tokenizer,
        "vistalab.workspace.LangChainWorkspace": lambda: LangChainWorkspace(_workspace()),
        "vistalab.workspace.TrajectoryRecorder": lambda: TrajectoryRecorder(_workspace()),
        "vistalab.workspace.HFTokenizer": _hf_tokenizer,
        "vistalab.workspace.VocabBound": lambda: VocabBound(128, 32, nfc=True),
        "vistalab.workspace.SplitBound": lambda: SplitBound.of(WORD_SPLITS),
        "vistalab.workspace.CharBound": lambda: CharBound.from_tokens(
            [b"ab", b"\xe4\xb8", b"\x80", "\u4e00\u4e01".encode()]),
        "vistalab.workspace.Trajectory": _trajectory,
        "vistalab.workspace.RewardTurn": lambda: _trajectory().turns[-1],
        "vistalab.workspace.ContextAction": lambda: next(
            a for t in _trajectory().turns for a in t.actions),
        "vistalab.workspace.ProcessReward": lambda: _process_reward(),
        "vistalab.workspace.GroupAdvantage": _group_advantage,
        "vistalab.workspace.TraceReplay": _trace_replay,
        "vistalab.workspace.ProbeKit": _probe_kit,
        "vistalab.workspace.ProbeReport": _probe_report,
        "vistalab.workspace.ProbeScore": lambda: _probe_report().scores[0],
        "vistalab.workspace.OperationSequence": _operation_sequence,
        "vistalab.workspace.Divergence": _divergence,
        "vistalab.conformance.Peer": lambda: _conformance().get_peer("tokentrim"),
        "vistalab.conformance.SuiteCounter": lambda: _conformance().as_counter(
            "approx", "openai"),
        "vistalab.conformance.Violation": _violation,
        "vistalab.conformance.StudyResult": _study,
        "vistalab.conformance.PeerResult": lambda: _study().rows[0],
        "vistalab.conformance.WorkspaceAdapter": lambda: _conformance().WorkspaceAdapter(
            budget=4000),
        "vistalab.figures.TidyTable": _tidy_table,
        "vistalab.paper_checks.CheckContext": _check_context,
        "vistalab.paper_checks.ClaimResult": _claim_result,
        "vistalab.paper_checks.PaperCheckReport": _paper_check_report,
        "vistalab.paper_checks.Statement": _statement,
        "vistalab.theory.RecoveryOptimum": _recovery_optimum,
        "vistalab.theory.StepCertificate": _step_certificate,
        "vistalab.theory.VerificationReport": _verification_report,
        # the record of recovery_feasibility_map, whose valid calls are long engine runs
        "vistalab.sims.FeasibilityMap": lambda: sims.FeasibilityMap(
            N=(8, 16), k=2, engine_threshold=(120, 150), theory_threshold=(110.0, 140.0),
            theory_threshold_measured=(115.0, 145.0), engine_floor=(60, 70), c0=5.0,
            relative_error=(0.08, 0.07), relative_error_measured=(0.04, 0.03)),
    }
    for cls in sims.INTERFACES.values():
        table[f"vistalab.sims.{cls.__name__}"] = (
            lambda c=cls: c(n=8, kappa=2, **getattr(c, "EXAMPLE_PARAMS", {})))
    return table


def _conformance() -> Any:
    import vistalab.conformance as conformance
    return conformance


_HF: list[Any] = []


def _hf_tokenizer() -> Any:
    """The registry's Hugging Face tokenizer (``deepseek_v4``, a packaged
    ``tokenizer.json``), built once (its load takes seconds) and shared: counting
    does not change it."""
    if not _HF:
        from vistalab.workspace import get_tokenizer
        _HF.append(get_tokenizer("deepseek_v4"))
    return _HF[0]


def _tool_trace() -> list[dict[str, Any]]:
    """A small OpenAI-format transcript: two tool results, then an archive call."""
    def call(cid: str, name: str, arguments: str = "{}") -> dict[str, Any]:
        return {"id": cid, "type": "function",
                "function": {"name": name, "arguments": arguments}}
    trace: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a research agent."},
        {"role": "user", "content": "Which county changed most?"},
    ]
    for i in range(4):
        trace.append({"role": "assistant", "content": f"Step {i}.",
                      "tool_calls": [call(f"c{i}", "query")]})
        trace.append({"role": "tool", "tool_call_id": f"c{i}",
                      "content": " ".join(f"w{i}_{k}" for k in range(80))})
    trace.append({"role": "assistant", "content": None,
                  "tool_calls": [call("a1", "context_workspace_archive",
                                      '{"block_id": "B4"}')]})
    trace.append({"role": "tool", "tool_call_id": "a1", "content": "ok"})
    trace.append({"role": "assistant", "content": "Kings County."})
    return trace


def _trajectory() -> Any:
    from vistalab.workspace import trajectory_from_trace
    return trajectory_from_trace(_tool_trace(), budget=4000, tokenizer="approx")


def _process_reward() -> Any:
    from vistalab.workspace import process_reward
    return process_reward(_trajectory())


def _group_advantage() -> Any:
    from vistalab.workspace import context_grpo_advantage
    return context_grpo_advantage([1.0, 0.0], [_process_reward(), _process_reward()])


def _trace_replay() -> Any:
    from vistalab.workspace import replay_trace
    return replay_trace(_tool_trace(), budget=4000, tokenizer="approx")


def _probe_kit() -> Any:
    from vistalab.workspace import build_probe_kit
    return build_probe_kit(_tool_trace(), budget=4000, tokenizer="approx", rng=0,
                           n_blocks=2, n_pairs=1)


def _probe_report() -> Any:
    from vistalab.workspace import score_probe_answers
    kit = _probe_kit()
    return score_probe_answers(kit, [{"model": "m", "condition": "+dash",
                                      "total": kit.total_tokens}])


def _operation_sequence() -> Any:
    from vistalab.workspace import OperationSequence
    return OperationSequence(config={"budget": 4000}, ops=({"op": "user", "text": "hi"},))


def _divergence() -> Any:
    from vistalab.workspace import Divergence
    return Divergence(invariant="state", source="python", step=0, detail="differs",
                      sequence=_operation_sequence())


def _violation() -> Any:
    conv = [{"role": "system", "content": "s"}, {"role": "user", "content": "hello"}]
    return _conformance().Violation(invariant="budget", message="over budget", budget=10,
                                    conversation=conv, output=conv)


def _tidy_table() -> Any:
    from vistalab.figures import TidyTable
    return TidyTable(columns=("n", "rate"), rows=((8, 0.5), (16, 1.0)),
                     units={"rate": "bits"})


def _check_context() -> Any:
    from vistalab.paper_checks import DATA_DIR, CheckContext
    return CheckContext(Path(DATA_DIR), np.random.SeedSequence(0), {})


def _claim_result() -> Any:
    from vistalab.paper_checks import ClaimResult
    return ClaimResult(id="prop1-bound", section="3", where="Proposition 1",
                       statement="the bound", tolerance="exact", kind="exact", data=(),
                       certificates=(), status="pass", detail="", numbers={"x": 1.0},
                       seconds=0.0)


def _paper_check_report() -> Any:
    from vistalab.paper_checks import DATA_DIR, PaperCheckReport
    return PaperCheckReport(results=(_claim_result(),), data_dir=str(DATA_DIR),
                            seed_entropy=0)


def _statement() -> Any:
    from vistalab.paper_checks import load_statements
    return next(iter(load_statements().values()))


def _step_certificate() -> Any:
    """One passed proof-step certificate, as ``certify_all`` records it (built
    directly: ``certify_all`` itself takes seconds even for one step, and under load
    the harvest's 30 s baseline call of it does not always finish)."""
    from vistalab.theory import StepCertificate
    return StepCertificate(claim="prop1", step="fano_chain_skeleton", method="lp-shannon",
                           domain="Shannon cone, 3 variables",
                           statement="H(X|R) <= H(E) + H(X|E,R)", ref="App. B, Step 1",
                           status="pass", detail="", seconds=0.0, generality="all")


def _verification_report() -> Any:
    from vistalab.theory import VerificationReport
    return VerificationReport(steps=(_step_certificate(),), passed=1, failed=0, seconds=0.0,
                              only="fano_chain_skeleton")


def _recovery_optimum() -> Any:
    from vistalab.theory import recovery_exact_optimum
    return recovery_exact_optimum(N=3, k=1, M=4)


#: Methods not called: they serve a transport forever or close what others use.
_SKIP_METHODS = {"serve", "run", "run_stdio", "close"}

#: Classes whose public methods are not called with hostile values, and why.
SKIP_METHODS_OF: dict[str, str] = {
    "vistalab.testing.WorkspaceMachine": "Hypothesis state-machine rules: their arguments "
                                          "are drawn from the machine's bundles, not passed "
                                          "by callers (property_tests/test_testing_kit.py)",
}


def own_methods(cls: type) -> list[tuple[str, bool]]:
    """``(name, needs an instance)`` for each public method, static method and class
    method that ``cls`` or a vista-lab base class defines (inherited ``str``,
    ``tuple``, ``Enum`` or ``Exception`` methods are not vista-lab's API)."""
    out = []
    for mname in sorted(dir(cls)):
        if mname.startswith("_") or mname in _SKIP_METHODS:
            continue
        owner = next((k for k in cls.__mro__ if mname in vars(k)), None)
        if owner is None or not str(getattr(owner, "__module__", "")).startswith("vistalab"):
            continue
        raw = vars(owner)[mname]
        if isinstance(raw, (staticmethod, classmethod)):
            out.append((mname, False))
        elif inspect.isfunction(raw):
            out.append((mname, True))
    return out


class _NoInstance(Exception):
    """No factory and no harvested instance for a method's class."""


def _instance_maker(qual: str, factory: Callable[[], Any] | None) -> Callable[[], Any]:
    def make() -> Any:
        if factory is not None:
            return factory()
        found = _harvest().get(qual)
        if found is None:
            raise _NoInstance(qual)
        try:
            return copy.deepcopy(found)
        except Exception:  # noqa: BLE001 - an uncopyable record is shared (read-only use)
            return found
    return make


def targets() -> list[Target]:
    """Every public callable: functions, classes, and each public class's own
    methods (static and class methods on the class, the others on an instance)."""
    out: list[Target] = []
    factories = _factories()
    for mod in public_modules():
        for name in mod.__all__:
            obj = getattr(mod, name)
            qual = f"{mod.__name__}.{name}"
            if not callable(obj) or qual in SKIP or getattr(obj, "_is_protocol", False):
                continue  # a typing.Protocol is an interface to implement, not to call
            out.append(Target(qual, obj))
            if not inspect.isclass(obj) or qual in SKIP_METHODS_OF:
                continue
            make = _instance_maker(qual, factories.get(qual))
            for mname, needs_instance in own_methods(obj):
                member = getattr(obj, mname)
                if not needs_instance:
                    out.append(Target(f"{qual}.{mname}", member))
                    continue
                out.append(Target(f"{qual}.{mname}", member, owner=qual,
                                  make=lambda mk=make, m=mname: getattr(mk(), m)))
    return out


#: Instances found in the results of valid baseline calls, by class qualname.
_HARVEST: dict[str, Any] | None = None


def _harvest(needed: set[str] | None = None,
             tick: Callable[[], None] | None = None) -> dict[str, Any]:
    """One instance per public class, found in the result (searched a few levels
    deep: items, values, fields) of each valid baseline call (the table's, and the
    no-argument call of each class), in the plan's order. Computed once per process
    (each forked child of :func:`run_in_child` repeats it, deterministically); with
    ``needed`` (the classes the calls to come need an instance of) it stops as soon
    as each is found, and makes no call when the set is empty. ``tick`` is called
    after each baseline call (the child's heartbeat to its watchdog)."""
    global _HARVEST
    if _HARVEST is not None:
        return _HARVEST
    if needed is not None and not needed:
        _HARVEST = {}
        return _HARVEST
    found: dict[str, Any] = {}
    classes: dict[type, str] = {}
    funcs: list[Target] = []
    for mod in public_modules():
        for name in mod.__all__:
            obj = getattr(mod, name)
            qual = f"{mod.__name__}.{name}"
            if inspect.isclass(obj) and not getattr(obj, "_is_protocol", False):
                classes.setdefault(obj, qual)
            if callable(obj) and qual not in SKIP:
                funcs.append(Target(qual, obj))
    base = _baselines()
    for t in funcs:
        good = _good(t, base)
        if good is None:
            params = _params(t.func)
            if not inspect.isclass(t.func) or params is None or any(
                    p.default is p.empty for p in params):
                continue
            good = {}
        if needed is not None and needed <= found.keys():
            break
        kind, result = _call_quietly(t.func, dict(good), 30.0)
        if tick is not None:
            tick()
        if kind == "ok":
            _collect(result, classes, found, 0)
    with contextlib.suppress(Exception):  # records a workspace hands out
        _collect(_workspace_records(), classes, found, 0)
    for qual in classes.values():  # a factory's instance counts as found
        if qual in _factories() and qual not in found:
            found[qual] = None
    _HARVEST = {k: v for k, v in found.items() if v is not None}
    return _HARVEST


def _workspace_records() -> list[Any]:
    """Records a workspace's reads return (a rendering, blocks, a group, a tool call,
    events), searched by :func:`_harvest` like a baseline call's result."""
    from vistalab.workspace import Workspace

    ws = Workspace(4000, tokenizer="approx")
    ws.register_system("s")
    ws.register_user("hello")
    ws.register_tool_call([{"id": "c1", "type": "function",
                            "function": {"name": "f", "arguments": "{}"}}])
    ws.register_tool_result("c1", "r " * 60)
    ws.register_user("next")
    rendering, calls = ws.render(), ws.block("B3").tool_calls
    ws.archive("B3-B4")
    return [rendering, list(ws.blocks), list(ws.groups.values()), calls, list(ws.events)]


def _collect(value: Any, classes: dict[type, str], found: dict[str, Any], depth: int) -> None:
    # the nearest public class in the MRO: the engine hands out private subclasses
    # of some (its event log's compact records are Events)
    qual = next((classes[c] for c in type(value).__mro__ if c in classes), None)
    if qual is not None and qual not in found:
        found[qual] = value
    if depth >= 3:
        return
    if isinstance(value, (list, tuple)):
        items: list[Any] = list(value[:20])
    elif isinstance(value, dict):
        items = list(value.values())[:20]
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        items = [getattr(value, f.name, None) for f in dataclasses.fields(value)[:30]]
    else:
        return
    for item in items:
        _collect(item, classes, found, depth + 1)


def _call_quietly(func: Callable[..., Any], kwargs: dict[str, Any],
                  timeout: float) -> tuple[str, Any]:
    """``("ok", result)`` or ``("error", None)``: a baseline call, output silenced,
    under the alarm (installed by :func:`run`)."""
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink), \
                contextlib.redirect_stderr(sink):
            return "ok", func(**kwargs)
    except (Exception, _Hang):  # noqa: BLE001 - a failing baseline finds nothing
        return "error", None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def _deep_list(depth: int) -> Any:
    value: Any = []
    for _ in range(depth):
        value = [value]
    return value


def _deep_dict(depth: int) -> Any:
    value: Any = {}
    for _ in range(depth):
        value = {"a": value}
    return value


def hostile_values(folder: Path) -> list[tuple[str, Any]]:
    """``(label, value)`` pairs: wrong types, None, NaN, inf, huge and tiny floats,
    huge ints, empty and deeply nested containers, special files (a FIFO, a device,
    a /proc file, a folder), created inside ``folder``."""
    fifo = folder / "fifo"
    if not fifo.exists():
        os.mkfifo(fifo)
    deep_json = folder / "deep.json"
    deep_json.write_text("[" * 100_000 + "]" * 100_000)
    return [
        ("None", None), ("True", True), ("empty-str", ""), ("str", "abc"),
        ("bytes", b"\xff\x00"), ("-1", -1), ("0", 0), ("2**63", 2**63), ("10**400", 10**400),
        ("1e300", 1e300), ("1e-300", 1e-300), ("-1e300", -1e300), ("nan", math.nan),
        ("inf", math.inf), ("-inf", -math.inf), ("1.5", 1.5),
        ("list", []), ("dict", {}), ("tuple", ()), ("set", set()),
        ("deep-list", _deep_list(10_000)), ("deep-dict", _deep_dict(10_000)),
        ("deep-json-str", "[" * 10_000 + "]" * 10_000),
        ("list-of-None", [None]), ("list-of-nan", [math.nan]), ("dict-nan", {"x": math.nan}),
        ("object", object()), ("np-empty", np.array([])), ("np-nan", np.array([math.nan])),
        ("callable", lambda *a, **k: None), ("type", int),
        ("fifo", str(fifo)), ("fifo-path", fifo), ("dev-zero", "/dev/zero"),
        ("dev-null", Path("/dev/null")), ("proc-kmsg", "/proc/kmsg"),
        ("folder", str(folder)), ("deep-json-file", str(deep_json)),
        ("nul-str", "x\0y"), ("huge-str", "x" * 5_000_000),
    ]


def _baselines() -> dict[str, dict[str, Any]]:
    """Valid keyword calls: by short name from the error-contract table where it has
    one, and by qualified name for the runners whose defaults are long runs (the
    conformance check and study, the differential test) or whose every parameter
    would otherwise only meet a hostile ``manager`` or ``out`` first."""
    from vistalab.tests import test_error_contract_api as table

    from vistalab.conformance import tail_trimmer
    out = {name: kw for name, kw in table.GOOD.items()
           if not any(isinstance(v, str) and v.startswith("{") for v in kw.values())}
    out["vistalab.conformance.check"] = dict(manager=tail_trimmer, examples=2)
    # run_study's baseline checks one peer whose manager is the reference trimmer: a
    # real peer's check takes seconds to minutes under load (tokentrim's from 7 to
    # 150 s), so each valid hostile-looking call (seed=2**63, figure=callable) ran
    # past its timeout; peers=None, every installed peer, is a stated slow call
    out["vistalab.conformance.run_study"] = dict(out="study-out", peers=[_reference_peer()],
                                                 examples=2)
    out["vistalab.workspace.differential_test"] = dict(sequences=3, max_ops=5,
                                                       shrink_seconds=1.0)
    return out


def _reference_peer() -> Any:
    """A :class:`~vistalab.conformance.Peer` whose manager is the suite's own
    reference trimmer (installed wherever vista-lab is; checked in well under a
    second)."""
    from vistalab.conformance import Peer, tail_trimmer
    return Peer("reference-tail", (), (), "tail_trimmer(messages, B, count)",
                lambda: tail_trimmer)


def _study() -> Any:
    """A study of the reference peer, written into a new temporary folder."""
    return _conformance().run_study(tempfile.mkdtemp(), peers=[_reference_peer()],
                                    examples=2)


def _good(t: Target, base: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The target's valid baseline call, if it has one (the table is of functions)."""
    if t.make is not None:
        return None
    return base.get(t.qualname) or base.get(t.qualname.rsplit(".", 1)[-1])


class _Hang(BaseException):
    """Raised by the alarm in a call that outlived the timeout."""


def _on_alarm(signum: int, frame: Any) -> None:
    raise _Hang


#: A docstring that says a result may be NaN or infinite (whole words: "information"
#: or "finance" do not count).
_NONFINITE_DOC = re.compile(r"\bnan\b|\binf\b|infinit|non-?finite", re.IGNORECASE)


def _documents_nonfinite(func: Callable[..., Any]) -> bool:
    return bool(_NONFINITE_DOC.search(inspect.getdoc(func) or ""))


def _nonfinite(value: Any, depth: int = 0) -> bool:
    if depth > 4:
        return False
    if isinstance(value, (float, np.floating)):
        return not math.isfinite(value)
    if isinstance(value, np.ndarray) and value.dtype.kind in "fc":
        return value.size > 0 and not bool(np.isfinite(value).all())
    if isinstance(value, (list, tuple)):
        return any(_nonfinite(v, depth + 1) for v in value[:50])
    if isinstance(value, dict):
        return any(_nonfinite(v, depth + 1) for v in list(value.values())[:50])
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return any(_nonfinite(getattr(value, f.name, None), depth + 1)
                   for f in dataclasses.fields(value)[:50])
    return False


def _params(func: Callable[..., Any]) -> list[inspect.Parameter] | None:
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return None
    return [p for p in sig.parameters.values()
            if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL) and p.name != "self"]


def _calls(target: Target, values: list[tuple[str, Any]],
           base: dict[str, dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(case label, kwargs)`` for one target: each hostile value in each parameter
    (the rest from the baseline, or hostile too), plus the no-argument call."""
    params = _params(target.func)
    if params is None:
        return
    if inspect.isclass(target.func) and issubclass(target.func, enum.Enum):
        # an enum is looked up by value; its other parameters build a new enum type
        params = [p for p in params if p.name == "value"]
    good = _good(target, base)
    required = [p.name for p in params if p.default is p.empty]
    if not params:
        yield "()", {}
        return
    for label, value in values:
        for p in params:
            if good is not None:
                kwargs = dict(good)
            else:
                kwargs = {name: value for name in required}
            kwargs[p.name] = value
            yield f"{p.name}={label}", kwargs


@dataclasses.dataclass
class FuzzReport:
    """The counts of one fuzz run (plain data; ``examples`` keeps a few of each kind)."""

    calls: int = 0
    callables: int = 0
    contract: int = 0
    ok: int = 0
    foreign: int = 0
    hangs: int = 0
    nan_inf: int = 0
    no_instance: int = 0
    foreign_callables: list[str] = dataclasses.field(default_factory=list)
    examples: list[str] = dataclasses.field(default_factory=list)
    by_type: dict[str, int] = dataclasses.field(default_factory=dict)
    #: Per public module: ``{"calls", "callables", "foreign", "hangs", "nan_inf",
    #: "no_instance"}``.
    by_module: dict[str, dict[str, int]] = dataclasses.field(default_factory=dict)
    #: Classes whose methods had no instance to be called on (none should).
    no_instance_classes: list[str] = dataclasses.field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _plan(values: list[tuple[str, Any]], base: dict[str, dict[str, Any]], *,
          sample: int | None, seed: int, only: str | None,
          ) -> list[tuple[Target, str, dict[str, Any]]]:
    """The calls, in a fixed order (the same in every process for the same args)."""
    per_target = [[(t, label, kw) for label, kw in _calls(t, values, base)
                   if sample is None or (t.qualname, label) not in SLOW]
                  for t in targets() if only is None or only in t.qualname]
    if sample is None:
        return [c for cases in per_target for c in cases]
    rnd = random.Random(seed)
    firsts = [rnd.choice(cases) for cases in per_target if cases]
    chosen = {id(c) for c in firsts}
    rest = [c for cases in per_target for c in cases if id(c) not in chosen]
    extra = max(0, sample - len(firsts))
    return firsts[:sample] + rnd.sample(rest, min(extra, len(rest)))


def run(*, sample: int | None = None, seed: int = 0, timeout: float = 5.0,
        only: str | None = None, start: int = 0,
        emit: Callable[[dict[str, Any]], None] | None = None) -> int:
    """Fuzz in this process from call ``start`` of the plan, passing one record per
    call (``i``, ``kind``, ``detail``, ``qualname``, ``label``) to ``emit``; returns
    the number of calls in the plan. Use :func:`run_in_child`."""
    base = _baselines()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        values = hostile_values(folder)
        work = folder / "cwd"
        work.mkdir()
        old_cwd = os.getcwd()
        os.chdir(work)
        old = signal.signal(signal.SIGALRM, _on_alarm)
        try:
            plan = _plan(values, base, sample=sample, seed=seed, only=only)
            for name, attrs in WARM_IMPORTS.items():
                with contextlib.suppress(ImportError, AttributeError):
                    mod = importlib.import_module(name)
                    for attr in attrs:
                        getattr(mod, attr)
            for warm in WARM_CALLS:
                warm()
            factories = _factories()
            needed = {t.owner for t, _l, _k in plan[start:]
                      if t.owner and t.owner not in factories}

            def tick() -> None:
                if emit is not None:
                    emit({"tick": True})
            # before the calls (its baseline calls use the alarm too); each baseline
            # call ticks, so a slow harvest is not mistaken for a stuck child
            _harvest(needed, tick)
            slack: dict[str, float] = {}
            for i in range(start, len(plan)):
                t, label, kwargs = plan[i]
                if t.qualname not in slack:
                    tick()
                    slack[t.qualname] = _baseline_time(t, base, timeout)
                allowed = max(timeout + slack[t.qualname],
                              SLOW.get((t.qualname, label), (0.0, ""))[0])
                if emit is not None:
                    emit({"begin": i, "qualname": t.qualname, "label": label,
                          "allowed": allowed + (INSTANCE_TIMEOUT if t.make else 0.0)})
                kind, detail = _one(t, kwargs, allowed)
                if emit is not None:
                    emit({"i": i, "kind": kind, "detail": detail, "qualname": t.qualname,
                          "label": label, "n": len(plan)})
            return len(plan)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
            os.chdir(old_cwd)


def _baseline_time(t: Target, base: dict[str, dict[str, Any]], timeout: float) -> float:
    """3x the wall time of the target's valid baseline call (0 without one; at most
    60 s), so a slow-but-valid computation is not counted as a hang."""
    import time

    good = _good(t, base)
    if good is None:
        return 0.0
    start = time.perf_counter()
    _one(t, dict(good), 60.0)
    return min(60.0, 3 * (time.perf_counter() - start))


def _one(t: Target, kwargs: dict[str, Any], timeout: float) -> tuple[str, str]:
    func = t.func
    if t.make is not None:  # the instance is built under its own allowance
        signal.setitimer(signal.ITIMER_REAL, INSTANCE_TIMEOUT)
        try:
            func = t.make()
        except (Exception, _Hang):  # noqa: BLE001 - the fuzzer's own set-up failed
            return "no_instance", t.owner
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink), \
                contextlib.redirect_stderr(sink):
            result = func(**kwargs)
        signal.setitimer(signal.ITIMER_REAL, 0)
    except _Hang:
        return "hangs", f"no answer within {timeout:g} s"
    except VistaLabError:
        signal.setitimer(signal.ITIMER_REAL, 0)
        return "contract", ""
    except Exception as exc:  # noqa: BLE001 - counting is the point
        signal.setitimer(signal.ITIMER_REAL, 0)
        try:
            where = traceback.extract_tb(exc.__traceback__)[-1]
            at = f" at {Path(where.filename).name}:{where.lineno}"
        except Exception:  # noqa: BLE001
            at = ""
        try:
            text = str(exc)[:100]
        except Exception:  # noqa: BLE001
            text = "<unprintable>"
        return "foreign", f"{type(exc).__name__}: {text}{at}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    if inspect.isclass(t.func) and (dataclasses.is_dataclass(t.func) or (
            issubclass(t.func, tuple) and hasattr(t.func, "_fields"))):
        return "ok", ""
    maker = getattr(t.func, "__self__", None)  # an alternate constructor of a record
    if inspect.isclass(maker) and dataclasses.is_dataclass(maker) and isinstance(result, maker):
        return "ok", ""
    try:
        bad = _nonfinite(result) and not _documents_nonfinite(t.func)
    except Exception:  # noqa: BLE001 - a result that cannot be inspected is not NaN
        bad = False
    if bad:
        return "nan_inf", f"{type(result).__name__} with NaN/inf, undocumented"
    return "ok", ""


#: Whether run_in_child prints a progress line to stderr every 1,000 calls.
_PROGRESS = [False]


def run_in_child(*, memory_bytes: int = 4 << 30, max_examples: int = 200,
                 progress: bool = False, **kwargs: Any) -> FuzzReport:
    """:func:`run` in forked children (address space limited to ``memory_bytes``,
    stdin closed). A child that dies (a native extension aborting on memory, a
    segfault) costs one call, counted as foreign (``crash``); the next child resumes
    after it."""
    _PROGRESS[0] = progress
    report = FuzzReport()
    foreign_by: Counter[str] = Counter()
    types: Counter[str] = Counter()
    seen: set[str] = set()
    start, total = 0, None
    while total is None or start < total:
        where = [""]
        last, total_seen = _child(start, memory_bytes, kwargs, report, foreign_by, types,
                                  seen, max_examples, where)
        if total_seen is not None:
            total = total_seen
        if total is not None and last + 1 >= total:
            break
        # the child died during call last + 1: a crash, then resume after it
        crashed = last + 1
        report.calls += 1
        report.foreign += 1
        types["crash"] += 1
        name = where[0] or f"<call {crashed}>"
        foreign_by[name.split("(", 1)[0]] += 1
        if where[0]:
            mod = report.by_module.setdefault(
                ".".join(name.split("(", 1)[0].split(".")[:2]),
                {"calls": 0, "callables": 0, "foreign": 0, "hangs": 0, "nan_inf": 0,
                 "no_instance": 0})
            mod["calls"] += 1
            mod["foreign"] += 1
        if len(report.examples) < max_examples:
            report.examples.append(f"foreign: {name} -> the process died (call {crashed})")
        if progress:
            print(f"  foreign: {name} -> the process died (call {crashed})",
                  file=sys.stderr, flush=True)
        start = crashed + 1
        if total is None:
            total = _plan_size(kwargs)
    report.callables = len(seen)
    report.foreign_callables = sorted(foreign_by)
    report.by_module = dict(sorted(report.by_module.items()))
    report.no_instance_classes.sort()
    report.by_type = dict(types.most_common())
    return report


def _plan_size(kwargs: dict[str, Any]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        return len(_plan(hostile_values(Path(tmp)), _baselines(),
                         sample=kwargs.get("sample"), seed=kwargs.get("seed", 0),
                         only=kwargs.get("only")))


def _child(start: int, memory_bytes: int, kwargs: dict[str, Any], report: FuzzReport,
           foreign_by: Counter[str], types: Counter[str], seen: set[str],
           max_examples: int, crashed: list[str]) -> tuple[int, int | None]:
    """Run one child from ``start``; fold its records into the report. Returns the
    index of the last call it reported and the plan size (None if it never said)."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        status = 0
        try:
            os.close(read_fd)
            devnull = os.open(os.devnull, os.O_RDONLY)
            os.dup2(devnull, 0)
            resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
            out = os.fdopen(write_fd, "w", buffering=1)

            def emit(rec: dict[str, Any]) -> None:
                out.write(json.dumps(rec) + "\n")
                out.flush()

            n = run(start=start, emit=emit, **kwargs)
            out.write(json.dumps({"done": n}) + "\n")
            out.flush()
        except BaseException:  # noqa: BLE001
            traceback.print_exc()
            status = 1
        finally:
            os._exit(status)
    os.close(write_fd)
    last, total = start - 1, None
    current = [""]
    import select

    # A watchdog: a child silent for this long is stuck in native code (an abort that
    # never finishes, an uninterruptible wait); it is killed and the call counted. The
    # current call's own allowance (a stated slow call's) extends it; the child ticks
    # between the baseline calls that come before its first call.
    floor = max(120.0, 20 * float(kwargs.get("timeout", 5.0)))
    silence = [floor]

    def lines() -> Iterator[str]:
        pending = b""
        while True:
            ready, _, _ = select.select([read_fd], [], [], silence[0])
            if not ready:
                os.kill(pid, signal.SIGKILL)
                if _PROGRESS[0]:
                    print(f"  killed: a child silent for {silence[0]:g} s during "
                          f"{current[0] or 'its set-up'}", file=sys.stderr, flush=True)
                return
            chunk = os.read(read_fd, 1 << 16)
            if not chunk:
                return
            pending += chunk
            *complete, pending = pending.split(b"\n")
            for raw in complete:
                yield raw.decode("utf-8", "replace")

    try:
        for line in lines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            if "done" in rec:
                total = rec["done"]
                continue
            if "tick" in rec:
                continue
            if "begin" in rec:
                current[0] = f"{rec['qualname']}({rec['label']})"
                silence[0] = max(floor, float(rec.get("allowed", 0.0)) + 60.0)
                continue
            total = rec["n"]
            last = rec["i"]
            kind = rec["kind"]
            mod = report.by_module.setdefault(
                ".".join(rec["qualname"].split(".")[:2]),
                {"calls": 0, "callables": 0, "foreign": 0, "hangs": 0, "nan_inf": 0,
                 "no_instance": 0})
            if rec["qualname"] not in seen:
                mod["callables"] += 1
            seen.add(rec["qualname"])
            report.calls += 1
            mod["calls"] += 1
            setattr(report, kind, getattr(report, kind) + 1)
            if kind in mod:
                mod[kind] += 1
            if kind == "no_instance" and rec["detail"] not in report.no_instance_classes:
                report.no_instance_classes.append(rec["detail"])
            if _PROGRESS[0] and report.calls % 1000 == 0:
                print(f"{report.calls}/{total} calls: foreign={report.foreign} "
                      f"hangs={report.hangs} nan_inf={report.nan_inf}", file=sys.stderr,
                      flush=True)
            if kind in ("foreign", "hangs", "nan_inf") and _PROGRESS[0]:
                print(f"  {kind}: {rec['qualname']}({rec['label']}) -> {rec['detail']}",
                      file=sys.stderr, flush=True)
            if kind in ("foreign", "hangs", "nan_inf"):
                if kind == "foreign":
                    foreign_by[rec["qualname"]] += 1
                    types[rec["detail"].split(":", 1)[0]] += 1
                if len(report.examples) < max_examples:
                    report.examples.append(
                        f"{kind}: {rec['qualname']}({rec['label']}) -> {rec['detail']}")
    finally:
        os.close(read_fd)
    os.waitpid(pid, 0)
    if total is None or last + 1 < total:
        crashed[0] = current[0]
    return last, total
