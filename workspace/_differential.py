"""Differential random testing of the workspace engine against its executable
Coq model (verification-guided development: the model is the specification,
its theorems are proved for every operation sequence, and the engine is
checked against it on generated sequences and on the shipped traces).

Hypothesis generates the operation sequences and shrinks a divergence to the
shortest sequence that still reproduces it. Each sequence is applied to the
engine under test; after every operation the driver abstracts the engine's
state (recounting every token figure itself) and the model's executable is fed
the same operations with the measured costs; the two observations must agree,
and the recount must agree with the engine's own figures.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from vistalab._core._limits import json_loads

from ._diff_drive import EngineFactory, run_sequence
from ._diff_model import compare_observations, model_requests, parse_observation, run_model
from ._diff_observe import checked_request
from ._diff_ops import OperationSequence, minimal_budget, sequence_strategy
from ._errors import PayloadIntegrityError, WorkspaceArgumentError

#: A request checker: ``check(request, protocol) -> problems`` (``[]`` if valid),
#: the signature of :func:`vistalab.conformance.request_problems`.
RequestCheck = Callable[[Any, str], Sequence[str]]

__all__ = [
    "RequestCheck",
    "Divergence",
    "DifferentialReport",
    "differential_test",
    "check_sequence",
    "trace_sequences",
    "CONFIGURATIONS",
]

#: The keys of ``DifferentialReport.configurations``: each ``cache_prefix`` value
#: (over both ``keep_pending`` values), then each (``cache_prefix``, ``keep_pending``) pair.
CONFIGURATIONS = (
    "cache_prefix=False",
    "cache_prefix=True",
    *(f"cache_prefix={cp},keep_pending={kp}" for cp in (False, True) for kp in (False, True)),
)

#: Which invariant (``vistalab.workspace.INVARIANTS``) each observation field speaks for.
FIELD_INVARIANT = {
    "status": "stable_ids",
    "mode": "budget",
    "tokens": "budget",
    "guard": "budget",
    "offloaded": "budget",
    "total": "dashboard",
    "overhead": "dashboard",
    "conversation": "dashboard",
    "dashboard": "dashboard",
    "units": "dashboard",
    "render": "protocol",
    "store": "recoverability",
    "recovered": "recoverability",
}


@dataclass(frozen=True, slots=True)
class Divergence:
    """One disagreement, with the shortest operation sequence found that shows it.

    Attributes
    ----------
    invariant : str
        The invariant it breaks (a name in ``INVARIANTS``).
    source : str
        ``"model"`` (the engine's observation differs from the model's),
        ``"texts"`` (what the engine's public API showed the agent differs from
        the texts written from the model's observation, :mod:`._diff_texts`),
        ``"recount"`` (the engine's own figure differs from the independent
        recount, or the engine raised) or ``"model-request"`` (the request
        checker refused a request built from the model's own rendering). The
        invariant ``"determinism"`` means the sequence failed once and passed
        when checked again (a reported sequence otherwise always fails again).
    step : int
        Index of the first operation after which it shows (-1: at construction;
        ``len(sequence)``: in the closing recovery of every block).
    detail : str
        What differs, e.g. ``"guard: engine admit vs model reject:hard_limit"``.
    sequence : OperationSequence
        The shrunk operation sequence (configuration included) that reproduces it.
    """

    invariant: str
    source: str
    step: int
    detail: str
    sequence: OperationSequence

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data of the divergence.

        Returns
        -------
        dict
            ``invariant``, ``source``, ``step``, ``detail``, the number of
            ``operations`` and the reproducing ``sequence`` (its :meth:`to_dict`).
        """
        return {
            "invariant": self.invariant,
            "source": self.source,
            "step": self.step,
            "detail": self.detail,
            "operations": len(self.sequence),
            "sequence": self.sequence.to_dict(),
        }

    def line(self) -> str:
        """One line: the invariant, where, what, and the reproducing sequence.

        Returns
        -------
        str
            ``"<invariant> (<source>) after operation <step> of <n>: <detail> |
            <sequence as JSON>"``.
        """
        return (
            f"{self.invariant} ({self.source}) after operation {self.step} of "
            f"{len(self.sequence)}: {self.detail} | {self.sequence.describe()}"
        )


@dataclass(frozen=True, slots=True)
class DifferentialReport:
    """Outcome of :func:`differential_test`.

    Attributes
    ----------
    sequences : int
        Generated operation sequences run (shrinking runs not counted).
    operations : int
        Operations those sequences applied.
    modelled : int
        Sequences compared with the model's executable line by line (the rest:
        the recount checks only): every line, under both ``cache_prefix`` and both
        ``keep_pending`` values (the model has all four configurations).
    traces : int
        Shipped traces replayed (each under several configurations).
    divergences : tuple of Divergence
        Each with its shrunk reproducing sequence; empty when engine and model agree.
    seed : int
        The seed the sequences were drawn from.
    model : str
        The model executable used, or why none was (then only the recount
        checks ran, and the report says so).
    seconds : float
        Wall time of the run.
    engine : str
        The engine under test (the factory's name; ``Workspace`` by default).
    modelled_prefix : int
        Of ``modelled``, the sequences compared only up to a point where the
        model does not describe the engine's options (``compared_prefix`` in
        ``configurations``); 0 when every sequence was compared whole.
    requests_checked : int
        Requests built from the model's renderings (an OpenAI and an Anthropic
        one per observation) that the request checker accepted; 0 without one.
    configurations : dict
        Per configuration: ``"cache_prefix=False"`` and ``"cache_prefix=True"``
        (over both ``keep_pending`` values), and each pair
        ``"cache_prefix=<bool>,keep_pending=<bool>"`` (:data:`CONFIGURATIONS`):
        ``sequences`` generated, ``compared_whole`` (every observation line
        compared with the model, and every rendering with the texts written from
        it), ``compared_prefix`` (compared up to a point where the model does
        not describe the option, then the recount checks only), ``recount_only``
        (the model was not run: unavailable, or the engine diverged before it).
    """

    sequences: int
    operations: int
    modelled: int
    traces: int
    divergences: tuple[Divergence, ...]
    seed: int
    model: str
    seconds: float = 0.0
    engine: str = "Workspace"
    requests_checked: int = 0
    modelled_prefix: int = 0
    configurations: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when engine and model agreed on every sequence (no divergence)."""
        return not self.divergences

    @property
    def model_available(self) -> bool:
        """True when the model executable ran (``model`` does not start with
        ``'unavailable'``); otherwise only the recount checks ran.
        """
        return not self.model.startswith("unavailable")

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data of the report.

        Returns
        -------
        dict
            One key per field (the divergences as their :meth:`Divergence.to_dict`,
            ``seconds`` rounded to milliseconds), plus ``ok``.
        """
        return {
            "sequences": self.sequences,
            "operations": self.operations,
            "modelled": self.modelled,
            "traces": self.traces,
            "divergences": [d.to_dict() for d in self.divergences],
            "seed": self.seed,
            "model": self.model,
            "engine": self.engine,
            "requests_checked": self.requests_checked,
            "modelled_prefix": self.modelled_prefix,
            "configurations": {k: dict(v) for k, v in self.configurations.items()},
            "seconds": round(self.seconds, 3),
            "ok": self.ok,
        }


@dataclass(slots=True)
class _Finding:
    invariant: str
    source: str
    step: int
    detail: str


@dataclass(slots=True)
class _Counts:
    sequences: int = 0
    operations: int = 0
    modelled: int = 0
    prefix: int = 0
    requests: list[int] = field(default_factory=lambda: [0])
    found: list[tuple[OperationSequence, _Finding]] = field(default_factory=list)
    configs: dict[str, dict[str, int]] = field(default_factory=dict)

    def tally(self, seq: OperationSequence, outcome: Mapping[str, Any]) -> None:
        cp = f"cache_prefix={bool(seq.config.get('cache_prefix'))}"
        for key in (cp, f"{cp},keep_pending={bool(seq.config.get('keep_pending'))}"):
            row = self.configs.setdefault(key, {"sequences": 0, "compared_whole": 0,
                                                "compared_prefix": 0, "recount_only": 0})
            row["sequences"] += 1
            row[outcome.get("compared", "recount_only")] += 1


def check_sequence(
    seq: OperationSequence, engine_factory: EngineFactory | None = None,
    model: str | None = None, request_check: RequestCheck | None = None,
    checked: list[int] | None = None, *, outcome: dict[str, Any] | None = None,
) -> tuple[_Finding | None, bool]:
    """Run one sequence; its first divergence (or None) and whether the model saw it.

    Each observation line of the engine is compared with the model's, and what the
    engine's public API showed the agent after it (both renderings, the tools,
    ``read_path`` of every payload path) with the texts :mod:`._diff_texts` writes
    from the model's observation (source ``"texts"``).

    With ``request_check``, the engine's request after every operation is checked
    with it, and every rendering the model produced is built into concrete OpenAI
    and Anthropic requests (:func:`model_requests`) and checked too;
    ``checked[0]`` counts the model's requests accepted. ``outcome``, if given, is
    filled with ``compared``: ``"compared_whole"``, ``"compared_prefix"`` or
    ``"recount_only"`` (how much of the run the model's comparison covered)."""
    out = outcome if outcome is not None else {}
    out["compared"] = "recount_only"
    try:
        run = run_sequence(seq, engine_factory, request_check=request_check)
    except WorkspaceArgumentError as exc:
        if exc.parameter == "request_check":
            raise  # the caller's checker failed on a request, not the engine
        return _Finding("crash", "recount", getattr(exc, "_diff_step", -1),
                        f"{type(exc).__name__}: {exc}"[:300]), False
    except Exception as exc:  # noqa: BLE001 - an engine that raises is a divergence
        step = getattr(exc, "_diff_step", -1)
        # A payload the engine cannot read back is a recoverability failure; any
        # other exception escaping the engine is a crash.
        inv = "recoverability" if isinstance(exc, PayloadIntegrityError) else "crash"
        return _Finding(inv, "recount", step, f"{type(exc).__name__}: {exc}"[:300]), False
    for s in run.steps:
        for inv, msg in s.problems:
            return _Finding(inv, "recount", s.index, msg), False
    if model is None or not run.modelled:
        return None, False
    got = run_model(model, run.model_lines)
    n = len(seq)
    out["compared"] = "compared_whole"
    for i, (mline, eline, step) in enumerate(
        zip(run.model_lines, run.engine_lines, run.line_step, strict=True)
    ):
        if i >= len(got):
            return _Finding("crash", "model", step, f"the model stopped before line {i}"), True
        if run.prefix_only and (_cache_prefix_matters(eline) or _cache_prefix_matters(got[i])):
            out["compared"] = "compared_prefix"
            break  # from here on cache_prefix=True and the model's False differ by design
        diffs = compare_observations(eline, got[i])
        if diffs:
            where = n if step >= 10**6 else step
            field_ = diffs[0].split(":", 1)[0]
            detail = "; ".join(diffs[:3]) + f" (model input: {mline[:200]})"
            return _Finding(FIELD_INVARIANT.get(field_, "stable_ids"), "model", where,
                            detail), True
        # What the agent saw, byte for byte, against the texts written from the
        # model's observation (._diff_texts).
        seen = run.view_problems(i, got[i])
        if seen:
            where = n if step >= 10**6 else step
            inv, what = seen[0]
            return _Finding(inv, "texts", where, f"{what} (model input: {mline[:200]})"), True
    if request_check is not None:
        for mline, step, obs in zip(run.model_lines, run.line_step, got, strict=False):
            for request, protocol in model_requests(obs):
                problems = checked_request(request_check, request, protocol)
                if problems:
                    where = n if step >= 10**6 else step
                    detail = (f"{protocol} request built from the model's rendering refused: "
                              f"{problems[0]} (model input: {mline[:200]})")
                    return _Finding("protocol", "model-request", where, detail), True
                if checked is not None:
                    checked[0] += 1
    return None, True


def _cache_prefix_matters(line: str) -> bool:
    """An observation where ``cache_prefix`` changes the engine's behaviour: a
    management rendering, or a guard that offloaded results."""
    obs = parse_observation(line)
    return obs.get("mode") == "management" or obs.get("offloaded", "-") != "-"


def _iv(sequences: Any, seed: Any, engine_factory: Any, max_ops: Any,
        request_check: Any = None) -> None:
    for name, v, lo in (("sequences", sequences, 0), ("seed", seed, 0), ("max_ops", max_ops, 1)):
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            raise WorkspaceArgumentError(
                name, v, f"must be an integer >= {lo}", f"pass e.g. {name}={max(lo, 100)}"
            )
    if engine_factory is not None and not callable(engine_factory):
        raise WorkspaceArgumentError(
            "engine_factory", engine_factory,
            "must be callable as engine_factory(budget, **config) and return an engine",
            "pass a Workspace subclass or a function building your engine",
        )
    if request_check is not None and not callable(request_check):
        raise WorkspaceArgumentError(
            "request_check", request_check,
            "must be callable as request_check(request, protocol) -> list of problems",
            "pass vistalab.conformance.request_problems, or leave it out",
        )


#: Largest ``sequences`` and ``max_ops`` a run accepts (a day of CPU is far below).
_MAX_SEQUENCES = 10_000_000
_MAX_OPS = 100_000


def _iv_rest(sequences: Any, max_ops: Any, traces: Any, model: Any, shrink_seconds: Any,
             progress: Any) -> None:
    """The door checks of differential_test's other arguments (before any work)."""
    for name, v, hi in (("sequences", sequences, _MAX_SEQUENCES), ("max_ops", max_ops, _MAX_OPS)):
        if v > hi:
            raise WorkspaceArgumentError(name, v, f"must be at most {hi:,}",
                                         "split the run (a seed per part)")
    if isinstance(traces, (str, bytes, os.PathLike, Mapping)) or not isinstance(traces, Iterable):
        raise WorkspaceArgumentError("traces", traces, "must be an iterable of traces (paths "
                                     "or parsed traces), not one", "pass e.g. [path]")
    if model is not None and (not isinstance(model, (str, os.PathLike))
                              or not os.path.isfile(model)):
        raise WorkspaceArgumentError("model", model, "must be the path of the model's built "
                                     "executable", "omit it to build it on demand")
    if isinstance(shrink_seconds, bool) or not isinstance(shrink_seconds, (int, float)) or not (
            0 <= shrink_seconds <= 86_400):
        raise WorkspaceArgumentError("shrink_seconds", shrink_seconds, "must be a number of "
                                     "seconds with 0 <= shrink_seconds <= 86400",
                                     "pass e.g. shrink_seconds=60")
    if progress is not None and not callable(progress):
        raise WorkspaceArgumentError("progress", progress, "must be a callable or None",
                                     "pass a function of the sequences run so far")


def _model_executable(model: str | None) -> str:
    """The model's executable: ``model`` if given, else the one built on demand
    from the Coq sources (``unavailable: <why>`` when it cannot be built)."""
    if model is not None:
        return model
    try:
        from ._model import build_engine_model
    except ImportError:
        return "unavailable: this installation has no engine model builder"
    try:
        return str(build_engine_model())
    except Exception as exc:  # noqa: BLE001 - reported, never hidden
        return f"unavailable: {exc}"[:300]


def differential_test(
    sequences: int = 200,
    seed: int = 0,
    engine_factory: EngineFactory | None = None,
    *,
    max_ops: int = 30,
    traces: Iterable[Any] = (),
    model: str | None = None,
    shrink_seconds: float = 60.0,
    progress: Callable[[int], None] | None = None,
    request_check: RequestCheck | None = None,
) -> DifferentialReport:
    """Run the engine against the Coq model on random operation sequences.

    Parameters
    ----------
    sequences : int
        How many sequences Hypothesis generates (each up to ``max_ops`` operations).
    seed : int
        Hypothesis's seed: the same seed gives the same sequences.
    engine_factory : callable, optional
        ``engine_factory(budget, **config)`` builds the engine under test
        (``config``: ``tokenizer``, ``store``, ``protocol``, ``cache_prefix``, and
        when the sequence sets them ``hard_limit`` and ``dashboard``, a
        ``DashboardConfig``);
        default :class:`Workspace`. It must offer the workspace's public API.
    max_ops : int
        Longest generated sequence.
    traces : iterable
        Traces to replay through both as well (paths or parsed traces; see
        :func:`trace_sequences`). The CLI passes the shipped ones.
    model : str, optional
        Path of the model's executable; default: built on demand from the Coq
        sources. When it cannot be built the report says so in ``model`` and
        only the recount checks run.
    shrink_seconds : float
        Time allowed for shrinking a divergence: half for Hypothesis's shrinker,
        half for dropping single operations (then the shortest sequence found
        so far is reported).
    progress : callable, optional
        Called with the number of sequences run so far.
    request_check : callable, optional
        ``request_check(request, protocol) -> problems``: the engine's request
        after every operation is checked with it (a refusal is a ``protocol``
        divergence from source ``"recount"``), and every rendering the model
        produces is built into a concrete OpenAI and Anthropic request and
        checked too (source ``"model-request"``). ``vista-lab verify engine`` passes the conformance
        suite's :func:`vistalab.conformance.request_problems`.

    Returns
    -------
    DifferentialReport
        ``divergences`` holds at most one generated divergence (Hypothesis stops
        at the first and shrinks it) plus one per diverging trace run.
    """
    _iv(sequences, seed, engine_factory, max_ops, request_check)
    _iv_rest(sequences, max_ops, traces, model, shrink_seconds, progress)
    if request_check is not None:  # tried once on a valid request of each format first
        probe = [{"role": "user", "content": "q"}]
        checked_request(request_check, probe, "openai")
        checked_request(request_check, {"messages": probe}, "anthropic")
    from hypothesis import HealthCheck, Phase, Verbosity, given, settings
    from hypothesis import seed as hseed

    t0 = time.perf_counter()
    exe = _model_executable(model)
    model_path = None if exe.startswith("unavailable") else exe
    counts = _Counts()
    shrinking = [False]

    class _Diverged(Exception):
        pass

    class _TimeUp(BaseException):
        # Not an Exception: Hypothesis does not take it for a failure to shrink,
        # so raising it ends the search at once (its draws cost time too, so a
        # test that merely returned would let shrinking run on past its budget).
        pass

    deadline = [0.0]

    @settings(
        max_examples=max(sequences, 1),
        database=None,
        deadline=None,
        derandomize=False,
        phases=(Phase.generate, Phase.shrink),
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
        verbosity=Verbosity.quiet,
    )
    @hseed(seed)
    @given(sequence_strategy(max_ops=max_ops))
    def prop(seq: OperationSequence) -> None:
        if shrinking[0] and time.perf_counter() > deadline[0]:
            raise _TimeUp  # shrinking time is up: keep the shortest sequence found so far
        outcome: dict[str, Any] = {}
        finding, seen = check_sequence(
            seq, engine_factory, model_path, request_check,
            None if shrinking[0] else counts.requests, outcome=outcome,
        )
        if not shrinking[0]:
            counts.tally(seq, outcome)
            counts.sequences += 1
            counts.operations += len(seq)
            counts.modelled += int(seen)
            counts.prefix += int(outcome.get("compared") == "compared_prefix")
            if progress is not None:
                progress(counts.sequences)
        if finding is not None:
            if not shrinking[0]:
                shrinking[0] = True
                deadline[0] = time.perf_counter() + shrink_seconds / 2
            counts.found.append((seq, finding))
            raise _Diverged

    divergences: list[Divergence] = []
    if sequences:
        try:
            prop()
        except _TimeUp:
            pass
        except Exception:  # noqa: BLE001 - _Diverged, or Hypothesis's own report of it
            if not counts.found:
                raise
        if counts.found:
            # The shortest failing sequence seen (Hypothesis's shrunk example,
            # or the best one when the shrinking time ran out), then shortened
            # further by dropping operations one at a time while it still fails.
            seq, f = min(counts.found, key=lambda sf: (len(sf[0]), len(sf[0].describe())))
            small = _minimize(
                seq, f, engine_factory, model_path, time.perf_counter() + shrink_seconds / 2,
                request_check,
            )
            divergences.append(_reproduced(
                [small, *sorted(counts.found, key=lambda sf: len(sf[0]))],
                engine_factory, model_path, request_check,
            ))
    n_traces = 0
    for seq in trace_sequences(traces):
        n_traces += 1
        finding, seen = check_sequence(
            seq, engine_factory, model_path, request_check, counts.requests
        )
        counts.operations += len(seq)
        if finding is not None:
            divergences.append(
                _reproduced([(seq, finding)], engine_factory, model_path, request_check)
            )
    name = getattr(engine_factory, "__qualname__", None) or type(engine_factory).__name__
    return DifferentialReport(
        sequences=counts.sequences,
        operations=counts.operations,
        modelled=counts.modelled,
        traces=n_traces,
        divergences=tuple(divergences),
        seed=seed,
        model=exe,
        seconds=time.perf_counter() - t0,
        engine="Workspace" if engine_factory is None else str(name),
        requests_checked=counts.requests[0],
        modelled_prefix=counts.prefix,
        configurations={k: counts.configs.get(k, {"sequences": 0, "compared_whole": 0,
                                                  "compared_prefix": 0, "recount_only": 0})
                        for k in CONFIGURATIONS},
    )


def _reproduced(
    candidates: Sequence[tuple[OperationSequence, _Finding]], factory: EngineFactory | None,
    model: str | None, request_check: RequestCheck | None,
) -> Divergence:
    """The divergence to report: the first candidate (shortest first, as the
    caller orders them) that fails again when checked once more from scratch, so
    a reported sequence always reproduces, whatever the machine's load and the
    shrinking time did. If none fails again, the engine (or the run) is not
    deterministic, and that is what is reported, with the first sequence seen
    failing and what it showed then."""
    for seq, _ in candidates:
        again, _ = check_sequence(seq, factory, model, request_check)
        if again is not None:
            return Divergence(again.invariant, again.source, again.step, again.detail, seq)
    seq, f = candidates[0]
    return Divergence("determinism", f.source, f.step,
                      f"failed once ({f.invariant}: {f.detail[:200]}), then passed when "
                      "checked again", seq)


def _minimize(
    seq: OperationSequence, finding: _Finding, factory: EngineFactory | None,
    model: str | None, deadline: float, request_check: RequestCheck | None = None,
) -> tuple[OperationSequence, _Finding]:
    """Drop operations one at a time (newest first) while the same invariant
    still fails, until a pass removes nothing or the shrinking time is up."""
    ops = list(seq.ops)
    changed = True
    while changed and time.perf_counter() < deadline:
        changed = False
        i = len(ops) - 1
        while i >= 0 and time.perf_counter() < deadline:
            trial = OperationSequence(seq.config, tuple(ops[:i] + ops[i + 1:]))
            got, _ = check_sequence(trial, factory, model, request_check)
            if got is not None and got.invariant == finding.invariant:
                ops, finding, changed = list(trial.ops), got, True
            i -= 1
    return OperationSequence(seq.config, tuple(ops)), finding


# ---------------------------------------------------------------- traces


def trace_sequences(traces: Iterable[Any]) -> list[OperationSequence]:
    """Each trace as operation sequences: its messages and actions in order,
    under a tight and a roomy budget, on both stores, in its own wire format
    (context tool calls in it are run by the engine, as ``replay_trace`` does)."""
    from ._formats import detect_format
    from ._trace import load_trace

    out: list[OperationSequence] = []
    for trace in traces:
        try:
            items = load_trace(trace)
        except Exception:  # noqa: BLE001 - a malformed trace is the engine's to refuse
            continue
        raw_format = "openai"
        if isinstance(trace, (str, os.PathLike)):
            try:
                with open(trace, encoding="utf-8") as fh:
                    text = fh.read()
                raw_format = detect_format(json_loads(text)) if not str(trace).endswith(
                    ".jsonl") else "openai"
            except (OSError, ValueError, WorkspaceArgumentError):
                raw_format = "openai"
        ops = _trace_ops(items)
        floor = minimal_budget("cl100k_base", True)
        for extra, store in ((300, "memory"), (3000, "disk")):
            cfg = {
                "budget": floor + extra,
                "tokenizer": "cl100k_base",
                "store": store,
                "format": raw_format,
                "protocol": True,
                "cache_prefix": False,
                "keep_pending": False,
            }
            out.append(OperationSequence(cfg, tuple(ops)))
    return out


def _trace_ops(items: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = []
    context_calls: dict[str, int] = {}
    for item in items:
        if "action" in item:
            act = item["action"]
            if act == "read":
                ops.append({"op": "read", "path": "@root/" + str(item.get("path", "")).rsplit(
                    "/", 1)[-1], "selector": item.get("selector") or None})
            else:
                op: dict[str, Any] = {"op": act, "spec": item.get("block_id", "")}
                if act == "archive":
                    op["replacement"] = item.get("replacement", "")
                    op["via"] = "api"
                elif act == "delete":
                    op["reason"] = item.get("reason", "")
                    op["via"] = "api"
                ops.append(op)
            continue
        role = item.get("role")
        content = item.get("content")
        text = content if isinstance(content, str) else _join(content)
        if role in ("system", "user") or (role == "assistant" and not item.get("tool_calls")):
            ops.append({"op": role, "text": text, **({} if role == "assistant" else
                                                       {"pinned": None})})
        elif role == "assistant":
            calls = []
            for c in item["tool_calls"]:
                fn = c.get("function", {})
                args = fn.get("arguments", "{}")
                if not isinstance(args, str):
                    args = json.dumps(args)
                calls.append([c.get("id", ""), fn.get("name", ""), args])
                if fn.get("name", "").startswith("context_workspace"):
                    context_calls[c.get("id", "")] = context_calls.get(c.get("id", ""), 0) + 1
            ops.append({"op": "call", "calls": calls, "text": text or None})
            for c in calls:  # the engine answers context calls itself, as replay does
                if c[1].startswith("context_workspace"):
                    ops.append({"op": "result", "id": c[0], "text": ""})
        elif role in ("tool", "function"):
            cid = item.get("tool_call_id", "")
            if context_calls.get(cid):
                context_calls[cid] -= 1  # answered when the call was run
                continue
            ops.append({"op": "result", "id": cid, "text": text})
    return ops


def _join(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text", "")) for p in content if isinstance(p, Mapping)
        )
    return "" if content is None else str(content)
