"""The ``reproduce`` pipeline: proof steps, paper checks, simulations,
engine-backed checks, figures, then the report, each stage cached.

Layout of the output folder::

    <out>/report.md            check table + every figure with a two-line caption
    <out>/figures/<fig>.png    200 dpi, and <fig>.pdf (vector)
    <out>/results/<name>.csv   tidy table, with <name>.json provenance sidecar
    <out>/results/run.json     what this run computed and what it took from cache
    <out>/.cache/<stage>.json  cached stage results (key = stage, params, code)
"""

from __future__ import annotations

import os
import time
import traceback
import warnings
import zlib
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from vistalab._core import child_seq
from vistalab.figures import FIGURE_NAMES, MissingDependency, TidyTable, load_figure
from vistalab.paper_checks._transcription import (
    paper_digest,
    paper_source_iv,
    transcription_target_count,
)
from vistalab.theory import DomainError, UnknownNameError
from vistalab.theory._validate import as_int

from .. import __version__
from .._output import to_plain
from .._provenance import (
    atomic_write_json,
    atomic_write_text,
    code_fingerprint,
    git_commit,
    provenance,
)
from ._cache import CacheRecord, StageCache, cache_key
from ._formal import FormalSummary, formal_params, formal_stage, formal_summary
from ._progress import NullProgress, Progress
from ._report import FigureEntry, Skipped, Summary, build_report, report_html, summarize
from ._rows import FINDING_SOURCES, CheckRow, count_statuses, rows_from_payload, rows_to_table
from ._sources import stage_totals
from ._stages import (
    _beyond_stage,
    _engine_stage,
    _paper_stage,
    _proof_stage,
    _transcription_stage,
    _worker_pool,
    hypothesis_home,
)

__all__ = [
    "DEFAULT_SEED", "ReproduceResult", "StageOutcome", "run_reproduce", "default_out",
    "hypothesis_home",
]

#: Seed of a run unless the user picks another; each stage derives its own stream from it.
DEFAULT_SEED = 20260522


@dataclass(frozen=True)
class StageOutcome:
    """What one stage did in this run.

    Attributes
    ----------
    name : str
        Stage name (``verify``, ``paper_checks``, ``sim:<figure>``, ``engine``,
        ``plot:<figure>``).
    group : str
        The progress bar it belongs to.
    status : str
        ``computed`` (ran now), ``cached`` (reused: same key), ``skipped``
        (a dependency is missing) or ``error`` (raised; see results/errors.log).
    key : str or None
        Cache key: sha256 of (stage, params, code fingerprint).
    seconds : float
        Wall time of the computation (of the original one when cached).
    note : str
        Why it was skipped or how it failed, or the warnings it raised.
    cpu_seconds : float
        CPU time of this process during the computation (wall time overstates
        the cost when other work shares the machine).
    """

    name: str
    group: str
    status: str
    key: str | None
    seconds: float
    note: str = ""
    cpu_seconds: float = 0.0


@dataclass(frozen=True)
class ReproduceResult:
    """Everything one ``reproduce`` run produced.

    Attributes
    ----------
    out_dir : Path
        The output folder.
    quick : bool
        Whether the quick precision was used.
    seed : int
        Root seed of the run.
    stages : tuple of StageOutcome
        Per-stage cache status and timing, in run order.
    checks : tuple of CheckRow
        Every check of the report's table.
    report_path : Path
        ``<out>/report.md``.
    seconds : float
        Wall time of the whole run.
    counts : dict
        Number of checks per status (``pass``, ``fail``, ``not_checkable``).
    skipped : tuple of Skipped
        Checks this run did not do, why, and how to run them (also on the report's
        first screen).
    formal : FormalSummary or None
        What the Coq stage established (None when it could not run).
    """

    out_dir: Path
    quick: bool
    seed: int
    stages: tuple[StageOutcome, ...]
    checks: tuple[CheckRow, ...]
    report_path: Path
    seconds: float
    counts: dict[str, int] = field(default_factory=dict)
    skipped: tuple[Skipped, ...] = ()
    formal: FormalSummary | None = None

    @property
    def summary(self) -> Summary:
        """The counts the report's first lines state (the console prints the same)."""
        return summarize(self.checks, self.skipped, self.formal)

    @property
    def failed(self) -> int:
        """Failed checks of the toolkit's reproductions (findings about the paper excluded)."""
        return sum(1 for c in self.checks
                   if c.status == "fail" and c.source not in FINDING_SOURCES)

    @property
    def findings(self) -> int:
        """Failed claims about the paper's own reported numbers (its tables and text)."""
        return sum(1 for c in self.checks if c.status == "fail" and c.source in FINDING_SOURCES)

    def exit_status_for(self, *, strict: bool = False) -> int:
        """1 when a check failed (with ``strict``, a finding about the paper too), else 0:
        the policy of ``check-paper`` too (:mod:`vistalab._policy`)."""
        from .._policy import exit_status

        return exit_status(self.failed, self.findings, strict=strict)

    @property
    def exit_status(self) -> int:
        return self.exit_status_for(strict=False)


#: Stages whose result does not depend on ``--quick`` (no figure parameters in
#: their key): the proof steps (their certificates), the paper checks built on
#: them, the engine-backed checks and the beyond-the-paper rows. A quick run
#: reuses them from the full run's cache and a full run from the quick run's
#: (:func:`sibling_caches`), so ``--quick`` after a full run only simulates
#: and plots: a real smoke run.
SHARED_STAGES = frozenset({"verify", "paper_checks", "engine", "beyond", "formal"})


def sibling_caches(out: Path, quick: bool) -> list[Path]:
    """The stage caches of the other mode's run beside ``out``, in the layout of
    :func:`default_out`: a quick run in ``X/quick`` reads ``X/.cache``; a full run
    in ``X`` reads ``X/quick/.cache``."""
    if quick:
        return [out.parent / ".cache"] if out.name == "quick" else []
    return [out / "quick" / ".cache"]


def default_out(quick: bool) -> Path:
    """Default output folder: ``vista-lab-out``, or ``vista-lab-out/quick`` for
    ``--quick`` (a quick run never replaces the full run's report and figures)."""
    return Path("vista-lab-out") / "quick" if quick else Path("vista-lab-out")


def _stage_seed(seed: int, stage: str) -> np.random.SeedSequence:
    # A stage's stream depends only on (seed, stage name): adding, removing or
    # reordering other stages never changes its numbers.
    return child_seq(np.random.SeedSequence(seed), zlib.crc32(stage.encode()))


def _reproduce_iv(
    out_dir: Any, seed: Any, figures: Sequence[str] | None,
    params: Mapping[str, Mapping[str, Any]] | None,
) -> tuple[Path, int, tuple[str, ...], dict[str, dict[str, Any]]]:
    if not isinstance(out_dir, (str, Path)) or not str(out_dir):
        raise DomainError("out", out_dir, "must be a folder path", "pass --out DIR")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise DomainError("out", str(out), "must be a folder, not a file",
                          "choose another --out")
    seed_i = as_int("seed", seed, lo=0, fix="pass a non-negative integer seed")
    names = tuple(FIGURE_NAMES if figures is None else figures)
    for name in names:
        if name not in FIGURE_NAMES:
            raise UnknownNameError("figure", name, FIGURE_NAMES)
    overrides = {k: dict(v) for k, v in (params or {}).items()}
    for name in overrides:
        if name not in FIGURE_NAMES:
            raise UnknownNameError("figure", name, FIGURE_NAMES)
    return out, seed_i, names, overrides


@dataclass(frozen=True)
class _Done:
    """What running one stage function produced (plain data, so it crosses processes)."""

    payload: Any
    seconds: float
    cpu: float
    notes: list[str]
    error: str | None = None
    trace: str | None = None
    missing: str | None = None


def _execute(
    fn: Callable[[Mapping[str, Any], np.random.Generator | None], Any],
    params: Mapping[str, Any],
    rng: np.random.Generator | None,
) -> _Done:
    """Run a stage function, timing it and collecting its warnings; never raises, so a
    failure in a worker process comes back as data, not as an unpicklable exception."""
    t0 = time.perf_counter()
    c0 = time.process_time()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            payload = to_plain(fn(params, rng))
    except MissingDependency as exc:
        return _Done(None, 0.0, 0.0, [], missing=str(exc))
    except Exception as exc:  # noqa: BLE001 - one broken stage must not hide the others
        return _Done(None, 0.0, 0.0, [],
                     error=f"{type(exc).__name__}: {' '.join(str(exc).split())}",
                     trace=traceback.format_exc())
    # Library warnings (e.g. a quadrature's roundoff notice) belong in the record of
    # the stage that raised them, not scattered over the terminal.
    notes = sorted({f"{w.category.__name__}: {' '.join(str(w.message).split())}"
                    for w in caught})
    return _Done(payload, time.perf_counter() - t0, time.process_time() - c0, notes)


@dataclass
class _Pending:
    """A stage that was looked up in the cache and, on a miss, started."""

    name: str
    group: str
    key: str
    params: Mapping[str, Any]
    stochastic: bool
    spawn_key: tuple[int, ...] | None
    record: CacheRecord | None = None
    done: _Done | None = None
    future: Future[_Done] | None = None


class _Runner:
    """Runs stages through the cache and keeps the run record."""

    def __init__(self, out: Path, *, seed: int, force: bool,
                 shared: Sequence[Path] = ()) -> None:
        self.out = out
        self.results = out / "results"
        self.seed = seed
        self.force = force
        self.cache = StageCache(out / ".cache")
        # caches of sibling runs, read for the stages that do not depend on --quick
        self.shared = [StageCache(p) for p in shared if p != out / ".cache"]
        self.fingerprint = code_fingerprint()
        self.outcomes: list[StageOutcome] = []
        self.errors: list[str] = []

    def _lookup(self, name: str, key: str) -> CacheRecord | None:
        """The stage's cached record: from this run's cache, else (for a stage in
        :data:`SHARED_STAGES`) from a sibling run's, copied into this run's cache.
        Same key, same code fingerprint: the record is what this run would compute."""
        record = self.cache.load(name, key)
        if record is None and name in SHARED_STAGES:
            for other in self.shared:
                record = other.load(name, key)
                if record is not None:
                    self.cache.store(record)
                    break
        return record

    def start(
        self,
        name: str,
        group: str,
        params: Mapping[str, Any],
        fn: Callable[[Mapping[str, Any], np.random.Generator | None], Any],
        *,
        stochastic: bool,
        refresh: bool = False,
        pool: Executor | None = None,
    ) -> _Pending:
        """Look the stage up; on a miss run it now, or submit it to ``pool``."""
        keyed = dict(params)
        if stochastic:
            keyed["__seed__"] = self.seed
        key = cache_key(name, keyed, self.fingerprint)
        record = None if (self.force or refresh) else self._lookup(name, key)
        ss = _stage_seed(self.seed, name) if stochastic else None
        pending = _Pending(name, group, key, params, stochastic,
                           None if ss is None else tuple(ss.spawn_key), record=record)
        if record is None:
            rng = np.random.default_rng(ss) if ss is not None else None
            if pool is None:
                pending.done = _execute(fn, params, rng)
            else:
                pending.future = pool.submit(_execute, fn, params, rng)
        return pending

    def start_after(
        self,
        name: str,
        group: str,
        params: Mapping[str, Any],
        make_fn: Callable[[Any], Callable[[Mapping[str, Any], Any], Any]],
        dep: _Pending,
        *,
        pool: Executor | None = None,
    ) -> _Pending:
        """Like :meth:`start` for a stage that needs ``dep``'s payload.

        ``params`` must name ``dep``'s key so the cache key follows it. On a
        miss the stage is submitted once ``dep`` is done (or at once when its
        payload is already known); ``make_fn(payload)`` builds the stage
        function (``payload`` is None when ``dep`` could not run).
        """
        key = cache_key(name, dict(params), self.fingerprint)
        record = None if self.force else self._lookup(name, key)
        pending = _Pending(name, group, key, params, False, None, record=record)
        if record is not None:
            return pending
        if dep.record is not None or dep.done is not None or pool is None or dep.future is None:
            payload = dep.record.payload if dep.record is not None else (
                dep.done.payload if dep.done is not None else None)
            if pool is None:
                pending.done = _execute(make_fn(payload), params, None)
            else:
                pending.future = pool.submit(_execute, make_fn(payload), params, None)
            return pending
        chained: Future[_Done] = Future()

        def _relay(sub: Future[_Done]) -> None:
            try:
                chained.set_result(sub.result())
            except BaseException as exc:  # noqa: BLE001 - handed to finish()
                chained.set_exception(exc)

        def _after(done_dep: Future[_Done]) -> None:
            try:
                got = done_dep.result()
                payload = None if got.error or got.missing else got.payload
                sub = pool.submit(_execute, make_fn(payload), params, None)
                sub.add_done_callback(_relay)
            except BaseException as exc:  # noqa: BLE001 - e.g. the pool is shut down
                chained.set_exception(exc)

        dep.future.add_done_callback(_after)
        pending.future = chained
        return pending

    def finish(self, p: _Pending) -> CacheRecord | None:
        """The stage's record (stored on a fresh computation); None if it could not run."""
        if p.record is not None:
            note = "; ".join(p.record.sidecar.get("warnings", []))
            self.outcomes.append(StageOutcome(
                p.name, p.group, "cached", p.key, p.record.seconds, note,
                float(p.record.sidecar.get("compute_cpu_seconds", 0.0))))
            return p.record
        done = p.done
        if done is None:
            assert p.future is not None
            try:
                done = p.future.result()
            except Exception as exc:  # noqa: BLE001 - e.g. the worker process died
                done = _Done(None, 0.0, 0.0, [], error=f"{type(exc).__name__}: {exc}",
                             trace=traceback.format_exc())
        if done.missing is not None:
            self.outcomes.append(StageOutcome(p.name, p.group, "skipped", p.key, 0.0,
                                              done.missing))
            return None
        if done.error is not None:
            self.errors.append(f"== stage {p.name}\n{done.trace or done.error}")
            self.outcomes.append(StageOutcome(p.name, p.group, "error", p.key, 0.0, done.error))
            return None
        sidecar = provenance(dict(p.params), seed_entropy=self.seed if p.stochastic else None)
        sidecar.update({
            "stage": p.name,
            "cache_key": p.key,
            "spawn_key": None if p.spawn_key is None else list(p.spawn_key),
            "compute_seconds": round(done.seconds, 4),
            "compute_cpu_seconds": round(done.cpu, 4),
            "warnings": done.notes,
        })
        record = CacheRecord(p.name, p.key, done.payload, sidecar, done.seconds)
        self.cache.store(record)
        self.outcomes.append(StageOutcome(p.name, p.group, "computed", p.key, done.seconds,
                                          "; ".join(done.notes), done.cpu))
        return record

    def cached(
        self,
        name: str,
        group: str,
        params: Mapping[str, Any],
        fn: Callable[[Mapping[str, Any], np.random.Generator | None], Any],
        *,
        stochastic: bool,
        refresh: bool = False,
    ) -> CacheRecord | None:
        """Return the stage's record, computing it (in this process) only on a cache miss.

        Returns None when the stage could not run (the outcome says why).
        ``refresh`` recomputes even on a hit (e.g. an output file went missing).
        """
        return self.finish(self.start(name, group, params, fn, stochastic=stochastic,
                                      refresh=refresh))

    def write_table(self, stem: str, table: TidyTable, sidecar: Mapping[str, Any]) -> None:
        """results/<stem>.csv and its JSON sidecar (skipped when already identical)."""
        side = dict(sidecar)
        side["columns"] = {c: table.units.get(c, "") for c in table.columns}
        side["rows"] = len(table)
        _write_if_changed(self.results / f"{stem}.csv", table.to_csv())
        _write_json_if_changed(self.results / f"{stem}.json", side)

    def problem_rows(self) -> list[CheckRow]:
        rows = []
        for o in self.outcomes:
            if o.status == "skipped":
                rows.append(CheckRow("pipeline", o.name, f"stage {o.name} runs",
                                     "not_checkable", o.note, ""))
            elif o.status == "error":
                rows.append(CheckRow("pipeline", o.name, f"stage {o.name} runs", "fail",
                                     o.note + " (traceback in results/errors.log)", ""))
        return rows


class _Ticks:
    """Progress reports from the worker, by stage; kept until that stage's bar shows them."""

    def __init__(self, queue: Any) -> None:
        self.queue = queue
        self.seen: dict[str, list[str]] = {}

    def _drain(self, timeout: float) -> None:
        import queue as _queue

        try:
            stage, note = self.queue.get(timeout=timeout)
        except (_queue.Empty, OSError, ValueError, EOFError):
            return
        self.seen.setdefault(stage, []).append(note)

    def follow(self, stage: str, pending: _Pending, bar: Any) -> None:
        """Advance ``bar`` for each step of ``stage`` until its computation is done."""
        shown = 0
        while True:
            notes = self.seen.get(stage, [])
            for note in notes[shown:]:
                bar.advance(note)
            shown = len(notes)
            if self.queue is None or pending.future is None or pending.future.done():
                break
            self._drain(0.1)


def _write_if_changed(path: Path, text: str) -> None:
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except (FileNotFoundError, UnicodeDecodeError):
        pass
    atomic_write_text(path, text)


def _write_json_if_changed(path: Path, obj: Any) -> None:
    import json

    _write_if_changed(path, json.dumps(to_plain(obj), indent=2, allow_nan=False) + "\n")


def run_reproduce(
    out_dir: str | Path | None = None,
    *,
    quick: bool = False,
    force: bool = False,
    seed: int = DEFAULT_SEED,
    figures: Sequence[str] | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    progress: Progress | None = None,
    jobs: int | None = None,
    paper: str | Path | None = None,
) -> ReproduceResult:
    """Run every stage (reusing cached results) and write the report.

    Parameters
    ----------
    out_dir : path, optional
        Output folder (created if needed); default :func:`default_out` (quick runs
        get their own folder).
    quick : bool
        Use each figure's quick parameters (fewer trials and grid points).
    force : bool
        Ignore the cache and recompute every stage.
    seed : int
        Root seed; each stochastic stage uses ``SeedSequence(seed, spawn_key=(crc32(stage),))``.
    figures : sequence of str, optional
        Subset of :data:`figures.FIGURE_NAMES` (all by default).
    params : mapping, optional
        Per-figure parameter overrides, e.g. ``{"fig3_content_channel": {"trials": 500}}``.
    progress : Progress, optional
        Receives one stage per progress bar; silent by default.
    jobs : int, optional
        Processes to use: 1 runs everything here; 2 (the default when the machine
        has two or more cores) runs the check stages in one worker process.
        Results do not depend on it.
    paper : path, optional
        The paper's LaTeX source (not shipped). Adds the stage "paper transcription":
        every table cell and quoted number of ``paper_checks/data`` must occur in it.
    """
    if out_dir is None:
        out_dir = default_out(quick)
    out, seed, names, overrides = _reproduce_iv(out_dir, seed, figures, params)
    paper_path = None if paper is None else paper_source_iv(paper, "--paper")
    if jobs is None:
        jobs = 2 if (os.cpu_count() or 1) >= 2 else 1
    jobs = as_int("jobs", jobs, lo=1, fix="pass 1 to run every stage in this process")
    progress = progress or NullProgress()
    t_start = time.perf_counter()
    cpu_start = time.process_time()

    # Figure parameters are resolved first so a bad override fails before any work.
    scripts = {name: load_figure(name) for name in names}
    fig_params = {}
    for name, script in scripts.items():
        merged = dict(script.default_params(quick))
        for key, value in overrides.get(name, {}).items():
            if key not in merged:
                raise UnknownNameError(f"parameter of {name}", key, merged)
            merged[key] = value
        fig_params[name] = merged
    out.mkdir(parents=True, exist_ok=True)
    run = _Runner(out, seed=seed, force=force, shared=sibling_caches(out, quick))
    check_rows: list[CheckRow] = []
    hyp = os.fspath(out / ".cache" / "hypothesis")
    hypothesis_home(hyp)

    # The proof steps, the paper checks and the engine checks do not depend on the
    # simulations: on a cache miss they run in one worker process while this process
    # simulates and plots, so the two cores of a small machine are both used.
    pool, queue = _worker_pool(jobs)
    ticks = _Ticks(queue)
    formal: FormalSummary | None = None
    try:
        verify = run.start("verify", "proof steps", {},
                           partial(_proof_stage, hypothesis_dir=hyp), stochastic=False,
                           pool=pool)
        # The paper checks reuse the verify stage's certificates (the proof
        # steps run once per reproduce); their key follows verify's key.
        paper_pending = run.start_after(
            "paper_checks", "paper checks", {"certificates": verify.key},
            lambda rows: partial(_paper_stage, hypothesis_dir=hyp, proof_rows=rows),
            verify, pool=pool)
        background = [
            ("proof-step verification", "proof_steps", verify),
            ("paper checks", "paper_checks", paper_pending),
            ("engine-backed checks", "engine_checks",
             run.start("engine", "engine checks", {},
                       partial(_engine_stage, hypothesis_dir=hyp), stochastic=False,
                       pool=pool)),
        ]
        formal_pending = run.start("formal", "formal proofs", formal_params(), formal_stage,
                                   stochastic=False, pool=pool)
        if paper_path is not None:
            background.append((
                "paper transcription", "transcription",
                run.start("transcription", "paper transcription",
                          {"paper": str(paper_path.resolve()),
                           "sha256": paper_digest(paper_path)},
                          _transcription_stage, stochastic=False, pool=pool)))

        # Simulations: every figure's compute.
        tables: dict[str, tuple[TidyTable, str]] = {}
        sim_rows: list[CheckRow] = []
        with progress.stage("simulations", len(scripts)) as bar:
            for name, script in scripts.items():
                def _compute(p: Mapping[str, Any], r: Any, s: Any = script) -> Any:
                    return s.compute(p, rng=r).to_json()

                rec = run.cached(f"sim:{name}", "simulations", fig_params[name], _compute,
                                 stochastic=script.STOCHASTIC)
                if rec is not None:
                    table = TidyTable.from_json(rec.payload)
                    tables[name] = (table, rec.key)
                    run.write_table(name, table, rec.sidecar)
                    sim_rows += [CheckRow.from_check("simulation", c)
                                 for c in script.checks(table)]
                bar.advance(name)

        # Figures: plotting is cached on the table's key, redone if a file is missing.
        entries: list[FigureEntry] = []
        fig_dir = out / "figures"
        with progress.stage("figures", len(scripts)) as bar:
            for name, script in scripts.items():
                if name not in tables:
                    entries.append(FigureEntry(name, script.TITLE, None, None))
                    bar.advance(name)
                    continue
                table, table_key = tables[name]
                png, pdf = fig_dir / f"{name}.png", fig_dir / f"{name}.pdf"

                def _plot(p: Mapping[str, Any], r: Any, s: Any = script,
                          t: TidyTable = table) -> Any:
                    return [str(Path(x).name) for x in s.plot(t, fig_dir)]

                rec = run.cached(f"plot:{name}", "figures", {"table": table_key}, _plot,
                                 stochastic=False, refresh=not (png.exists() and pdf.exists()))
                ok = rec is not None
                entries.append(FigureEntry(
                    name, script.TITLE, script.caption(table) if ok else None,
                    f"figures/{name}.png" if ok else None,
                ))
                bar.advance(name)

        totals = stage_totals()
        for title, stem, pending in background:
            total = 1 if pending.record is not None else totals.get(pending.name, 1)
            with progress.stage(title, total) as bar:
                ticks.follow(pending.name, pending, bar)
                rec = run.finish(pending)
                if rec is not None:
                    rows = rows_from_payload(rec.payload)
                    check_rows += rows
                    run.write_table(stem, rows_to_table(rows), rec.sidecar)
                if pending.record is not None:
                    bar.advance("from cache")
        # The Coq development: its rows join the table; without Coq, the summary says
        # how many formal rows were skipped.
        with progress.stage("formal proofs (Coq)", 1) as bar:
            rec = run.finish(formal_pending)
            formal = None if rec is None else formal_summary(rec.payload)
            if rec is not None:
                rows = rows_from_payload(rec.payload["rows"])
                check_rows += rows
                run.write_table("formal", rows_to_table(rows), rec.sidecar)
            bar.advance("from cache" if formal_pending.record is not None else "")
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
        if queue is not None:
            queue.close()
    check_rows += sim_rows
    # results beyond the paper (numbers by code; status from the proof chains).
    beyond: list[dict[str, Any]] = []
    if figures is None:
        from ._beyond import beyond_check_rows

        with progress.stage("beyond the paper", 1) as bar:
            rec = run.cached("beyond", "beyond", {}, _beyond_stage, stochastic=False)
            if rec is not None:
                beyond = list(rec.payload)
                check_rows += beyond_check_rows(beyond)
            bar.advance()

    # The conformance study of the ecosystem's context managers (when the peers
    # extra is installed): files in results/conformance/, a section in the report.
    study: dict[str, Any] | None = None
    if figures is None:
        from ._study import study_params, study_stage

        folder = run.results / "conformance"
        study_args = study_params(folder, quick=quick, seed=seed)
        if study_args is not None:
            with progress.stage("conformance study of the peers", 1) as bar:
                rec = run.cached("conformance_study", "conformance", study_args, study_stage,
                                 stochastic=False,
                                 refresh=not (folder / "study.md").exists())
                if rec is not None:
                    study = dict(rec.payload)
                bar.advance()

    check_rows += run.problem_rows()
    counts = count_statuses(check_rows)
    all_table = rows_to_table(check_rows)
    _write_if_changed(run.results / "checks.csv", all_table.to_csv())
    checks_side = provenance({"quick": quick, "seed": seed, "figures": list(names)},
                             seed_entropy=seed)
    checks_side.update({"counts": counts, "rows": len(all_table),
                        "columns": {c: all_table.units.get(c, "") for c in all_table.columns}})
    atomic_write_json(run.results / "checks.json", checks_side)
    seconds = time.perf_counter() - t_start
    cpu_total = time.process_time() - cpu_start
    commit = git_commit()
    run_record = {
        "vista_lab": __version__,
        "finished_utc": datetime.now(UTC).isoformat(timespec="seconds"),
        "quick": quick,
        "force": force,
        "seed": seed,
        "code_fingerprint": run.fingerprint,
        "git_commit": commit,
        "seconds": round(seconds, 3),
        # CPU of this process, and of the check stages (in the worker when jobs >= 2).
        "cpu_seconds": round(cpu_total, 3),
        "cpu_seconds_checks": round(sum(
            o.cpu_seconds for o in run.outcomes
            if o.status == "computed" and o.name in {p.name for _, _, p in background}), 3),
        "checks": counts,
        "stages": [o.__dict__ for o in run.outcomes],
    }
    atomic_write_json(run.results / "run.json", run_record)
    errors_log = run.results / "errors.log"
    if run.errors:
        atomic_write_text(errors_log, "\n".join(run.errors))
    else:  # a log from an earlier run would describe errors this run does not have
        errors_log.unlink(missing_ok=True)
    skipped = [] if paper_path is not None else [Skipped(
        "paper transcription", transcription_target_count(),
        "the paper's LaTeX was not given", "pass --paper PATH to run them")]
    report = build_report(
        checks=check_rows, figures=entries, stages=run.outcomes, counts=counts,
        quick=quick, seed=seed, fingerprint=run.fingerprint, commit=commit,
        version=__version__, beyond=beyond, skipped=skipped,
        study=study if figures is None else False,
        formal=formal,
    )
    report_path = atomic_write_text(out / "report.md", report)
    atomic_write_text(out / "report.html", report_html(report))
    return ReproduceResult(out, quick, seed, tuple(run.outcomes), tuple(check_rows),
                           report_path, seconds, counts, tuple(skipped), formal)
