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

import time
import traceback
import warnings
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from figures import FIGURE_NAMES, MissingDependency, TidyTable, load_figure
from theory import DomainError, UnknownNameError
from theory._validate import as_int

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
from ._progress import NullProgress, Progress
from ._report import FigureEntry, build_report
from ._rows import CheckRow, count_statuses, rows_from_payload, rows_to_table
from ._sources import engine_checks, paper_check_rows, proof_step_rows

__all__ = ["DEFAULT_SEED", "ReproduceResult", "StageOutcome", "run_reproduce"]

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
        Why it was skipped or how it failed.
    """

    name: str
    group: str
    status: str
    key: str | None
    seconds: float
    note: str = ""


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
    """

    out_dir: Path
    quick: bool
    seed: int
    stages: tuple[StageOutcome, ...]
    checks: tuple[CheckRow, ...]
    report_path: Path
    seconds: float
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def failed(self) -> int:
        return sum(1 for c in self.checks if c.status == "fail")

    @property
    def exit_status(self) -> int:
        """0 when no check failed, else 1."""
        return 1 if self.failed else 0


def _stage_seed(seed: int, stage: str) -> np.random.SeedSequence:
    # A stage's stream depends only on (seed, stage name): adding, removing or
    # reordering other stages never changes its numbers.
    return np.random.SeedSequence(seed, spawn_key=(zlib.crc32(stage.encode()),))


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


class _Runner:
    """Runs stages through the cache and keeps the run record."""

    def __init__(self, out: Path, *, seed: int, force: bool) -> None:
        self.out = out
        self.results = out / "results"
        self.seed = seed
        self.force = force
        self.cache = StageCache(out / ".cache")
        self.fingerprint = code_fingerprint()
        self.outcomes: list[StageOutcome] = []
        self.errors: list[str] = []

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
        """Return the stage's record, computing it only on a cache miss.

        Returns None when the stage could not run (the outcome says why).
        ``refresh`` recomputes even on a hit (e.g. an output file went missing).
        """
        keyed = dict(params)
        if stochastic:
            keyed["__seed__"] = self.seed
        key = cache_key(name, keyed, self.fingerprint)
        record = None if (self.force or refresh) else self.cache.load(name, key)
        if record is not None:
            note = "; ".join(record.sidecar.get("warnings", []))
            self.outcomes.append(StageOutcome(name, group, "cached", key, record.seconds, note))
            return record
        ss = _stage_seed(self.seed, name) if stochastic else None
        rng = np.random.default_rng(ss) if ss is not None else None
        t0 = time.perf_counter()
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                payload = fn(params, rng)
        except MissingDependency as exc:
            self.outcomes.append(StageOutcome(name, group, "skipped", key, 0.0, str(exc)))
            return None
        except Exception as exc:  # noqa: BLE001 - one broken stage must not hide the others
            self.errors.append(f"== stage {name}\n{traceback.format_exc()}")
            note = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
            self.outcomes.append(StageOutcome(name, group, "error", key, 0.0, note))
            return None
        seconds = time.perf_counter() - t0
        # Library warnings (e.g. a quadrature's roundoff notice) belong in the record of
        # the stage that raised them, not scattered over the terminal.
        notes = sorted({f"{w.category.__name__}: {' '.join(str(w.message).split())}"
                        for w in caught})
        sidecar = provenance(dict(params), seed_entropy=self.seed if stochastic else None)
        sidecar.update({
            "stage": name,
            "cache_key": key,
            "spawn_key": None if ss is None else list(ss.spawn_key),
            "compute_seconds": round(seconds, 4),
            "warnings": notes,
        })
        record = CacheRecord(name, key, to_plain(payload), sidecar, seconds)
        self.cache.store(record)
        self.outcomes.append(StageOutcome(name, group, "computed", key, seconds,
                                          "; ".join(notes)))
        return record

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
    out_dir: str | Path = "vista-lab-out",
    *,
    quick: bool = False,
    force: bool = False,
    seed: int = DEFAULT_SEED,
    figures: Sequence[str] | None = None,
    params: Mapping[str, Mapping[str, Any]] | None = None,
    progress: Progress | None = None,
) -> ReproduceResult:
    """Run every stage (reusing cached results) and write the report.

    Parameters
    ----------
    out_dir : path
        Output folder (created if needed).
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
    """
    out, seed, names, overrides = _reproduce_iv(out_dir, seed, figures, params)
    progress = progress or NullProgress()
    t_start = time.perf_counter()

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
    run = _Runner(out, seed=seed, force=force)
    check_rows: list[CheckRow] = []

    # 1. Proof steps.
    with progress.stage("proof-step verification", 1) as bar:
        rec = run.cached("verify", "proof steps", {}, lambda p, r: proof_step_rows(),
                         stochastic=False)
        if rec is not None:
            rows = rows_from_payload(rec.payload)
            check_rows += rows
            run.write_table("proof_steps", rows_to_table(rows), rec.sidecar)
        bar.advance()

    # 2. Paper checks.
    with progress.stage("paper checks", 1) as bar:
        rec = run.cached("paper_checks", "paper checks", {},
                         lambda p, r: paper_check_rows(rng=r), stochastic=True)
        if rec is not None:
            rows = rows_from_payload(rec.payload)
            check_rows += rows
            run.write_table("paper_checks", rows_to_table(rows), rec.sidecar)
        bar.advance()

    # 3. Simulations: every figure's compute.
    tables: dict[str, tuple[TidyTable, str]] = {}
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
                check_rows += [CheckRow.from_check("simulation", c) for c in script.checks(table)]
            bar.advance(name)

    # 4. Engine-backed checks (issue 5), when that module is installed.
    with progress.stage("engine-backed checks", 1) as bar:
        rec = run.cached("engine", "engine checks", {},
                         lambda p, r: engine_checks(rng=r), stochastic=True)
        if rec is not None:
            rows = rows_from_payload(rec.payload)
            check_rows += rows
            run.write_table("engine_checks", rows_to_table(rows), rec.sidecar)
        bar.advance()

    # 5. Figures: plotting is cached on the table's key, and redone if a file is missing.
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

            def _plot(p: Mapping[str, Any], r: Any, s: Any = script, t: TidyTable = table) -> Any:
                paths = s.plot(t, fig_dir)
                return [str(Path(x).name) for x in paths]

            rec = run.cached(f"plot:{name}", "figures", {"table": table_key}, _plot,
                             stochastic=False, refresh=not (png.exists() and pdf.exists()))
            ok = rec is not None
            entries.append(FigureEntry(
                name, script.TITLE, script.caption(table) if ok else None,
                f"figures/{name}.png" if ok else None,
            ))
            bar.advance(name)

    check_rows += run.problem_rows()
    counts = count_statuses(check_rows)
    all_table = rows_to_table(check_rows)
    _write_if_changed(run.results / "checks.csv", all_table.to_csv())
    seconds = time.perf_counter() - t_start
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
        "checks": counts,
        "stages": [o.__dict__ for o in run.outcomes],
    }
    atomic_write_json(run.results / "run.json", run_record)
    if run.errors:
        atomic_write_text(run.results / "errors.log", "\n".join(run.errors))
    report = build_report(
        checks=check_rows, figures=entries, stages=run.outcomes, counts=counts,
        quick=quick, seed=seed, fingerprint=run.fingerprint, commit=commit,
        version=__version__,
    )
    report_path = atomic_write_text(out / "report.md", report)
    return ReproduceResult(out, quick, seed, tuple(run.outcomes), tuple(check_rows),
                           report_path, seconds, counts)
