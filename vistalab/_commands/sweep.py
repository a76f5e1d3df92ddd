"""``vista-lab sweep``: run a grid of experiment cells from a TOML config,
resumably, on local processes or a Dask cluster."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from vistalab._core import MissingExtraError

from .._output import emit_json, emit_table
from ._args import cli_wording

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    try:
        from .._sweep import EXPERIMENTS
    except MissingExtraError as exc:
        # The rest of the CLI works without the `sweep` extra; running this command
        # then fails with the same one-line message.
        lines = [f"  (unavailable: {exc})"]
    else:
        lines = [f"  {e.name}: {', '.join(e.param_names)}" for e in EXPERIMENTS.values()]
    parser = subparsers.add_parser(
        "sweep",
        help="run a parameter sweep from a TOML config (resumable; local or Dask)",
        description=(
            "Expand the grid of CONFIG.toml into cells, each seeded from the config's seed\n"
            "and its own parameters, and run the cells not already stored in --out.\n"
            "Writes DIR/results.parquet, results.csv and results.json. Rerun the same\n"
            "command to resume an interrupted sweep; add values to the config and rerun\n"
            "into the same --out to compute only the new cells."
        ),
        epilog="experiments and their parameters:\n" + "\n".join(lines),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("config", metavar="CONFIG.toml", help="sweep config (see examples/sweeps)")
    parser.add_argument("--out", metavar="DIR", default=None,
                        help="results folder (default: vista-lab-out/sweeps/<config name>)")
    parser.add_argument("--workers", metavar="N", type=int, default=None,
                        help="local worker processes (default: all available CPUs; capped at the "
                             "cells to compute and the CPUs, with a note when capped)")
    parser.add_argument("--scheduler", metavar="ADDRESS", default=None,
                        help="run on an existing Dask scheduler, e.g. tcp://host:8786")
    parser.add_argument("--fresh", action="store_true",
                        help="discard cells already stored in --out instead of resuming")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.set_defaults(func=run, _parser=parser)


def run(args: argparse.Namespace) -> int:
    with cli_wording(CLI_OPTIONS, CLI_PHRASES):
        return _run(args)


#: Python parameter -> option, and Python spellings in fixes -> the command line's.
CLI_OPTIONS = {"out": "--out", "workers": "--workers", "fresh": "--fresh",
               "config": "CONFIG.toml"}
CLI_PHRASES = {"another `out` folder": "another --out folder", "fresh=True": "--fresh",
               "workers=": "--workers "}


def _say(note: str) -> str:
    """A runner note in the command line's words (``workers=8`` -> ``--workers 8``)."""
    for python, cli in CLI_PHRASES.items():
        note = note.replace(python, cli)
    return note


def _run(args: argparse.Namespace) -> int:
    from .._paths import input_file, output_dir
    from .._sweep import default_out, load_config, make_backend, run_sweep

    # Everything is validated before any folder is created or worker started.
    input_file("CONFIG.toml", args.config)
    if args.out is not None:
        output_dir("--out", args.out)
    config = load_config(args.config)
    backend = make_backend(workers=args.workers, scheduler=args.scheduler)
    if args.out is not None and not args.out.strip():
        from .._sweep import SweepStoreError

        raise SweepStoreError("--out", args.out, "must be a folder path, not empty",
                              "pass --out DIR, or omit --out for the default folder")
    out = args.out if args.out is not None else default_out(args.config)

    from rich.console import Console

    console = Console(stderr=True)
    show = console.is_terminal and not args.no_progress
    try:
        with _ProgressBar(console, config.n_cells, enabled=show) as bar:
            result = run_sweep(config, out=out, backend=backend, fresh=args.fresh,
                               progress=bar.update)
    except KeyboardInterrupt:
        print(f"vista-lab: sweep interrupted; completed cells are kept in {out}: run the same "
              "command again to resume", file=sys.stderr)
        raise
    s = result.summary
    notes = [_say(n) for n in s.notes]
    doc = {
        "experiment": s.experiment,
        "config": config.file,
        "out": str(out),
        "cells": s.n_cells,
        "computed": s.computed,
        "resumed": s.skipped,
        "failed": len(s.failed),
        "complete": s.complete,
        "backend": s.backend,
        "workers": s.workers,
        "startup_s": s.startup_s,
        "wall_s": s.wall_s,
        "cells_per_second": s.cells_per_second,
        "cell_seconds": s.cell_seconds,
        "seed_entropy": str(s.seed_entropy),
        "files": s.files,
        "discarded": list(s.discarded),
        "notes": notes,
        "failures": [{"cell": f.index, "params": f.params, "error": f.error} for f in s.failed],
    }
    if args.json:
        emit_json(doc)
    else:
        rows: list[tuple[str, Any]] = [
            ("experiment", f"{s.experiment} ({config.file})"),
            ("cells", f"{s.n_cells} total: {s.computed} computed now, {s.skipped} resumed, "
                      f"{len(s.failed)} failed"),
            ("backend", f"{s.backend}, {s.workers} worker(s), startup {s.startup_s:.2f} s"),
            ("time", f"{s.wall_s:.2f} s wall, {s.cell_seconds:.2f} s of cell work, "
                     f"{s.cells_per_second:.3g} cells/s" if s.computed else "nothing to compute"),
            ("seed entropy", str(s.seed_entropy)),
        ]
        rows += [(kind, path) for kind, path in s.files.items()]
        if s.discarded:
            rows.append(("discarded", "; ".join(s.discarded)))
        status = "complete" if s.complete else "INCOMPLETE: fix the failures, then rerun to resume"
        emit_table(["sweep", status], rows, title=f"sweep {s.experiment}")
    for note in notes:
        print(f"vista-lab: {note}", file=sys.stderr)
    for f in s.failed[:10]:
        print(f"vista-lab: cell {f.index} {f.params} failed: {f.error}", file=sys.stderr)
    if len(s.failed) > 10:
        print(f"vista-lab: ... and {len(s.failed) - 10} more failed cells", file=sys.stderr)
    return 0 if s.complete and not s.failed else 1


class _ProgressBar:
    """A rich progress bar fed by the runner's progress callback (stderr only)."""

    def __init__(self, console: Any, total: int, *, enabled: bool) -> None:
        self.enabled = enabled
        self.total = total
        self._task: Any = None
        self._progress: Any = None
        if enabled:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._progress = Progress(
                TextColumn("sweep"), BarColumn(), MofNCompleteColumn(),
                TextColumn("cells"), TextColumn("{task.fields[rate]}"),
                TextColumn("{task.fields[failed]}"), TimeElapsedColumn(),
                TextColumn("left"), TimeRemainingColumn(), console=console, transient=False,
            )

    def __enter__(self) -> _ProgressBar:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()

    def update(self, p: Any) -> None:
        if self._progress is None:
            return
        computed = p.done - p.skipped
        rate = f"{computed / p.elapsed_s:.3g} cells/s" if p.elapsed_s > 0 and computed else ""
        failed = f"{p.failed} failed" if p.failed else ""
        if self._task is None:
            # Created at the first report so resumed cells start the bar without
            # counting as speed (rich estimates time left from advances).
            self._task = self._progress.add_task("sweep", total=self.total, completed=p.done,
                                                 rate=rate, failed=failed)
        else:
            self._progress.update(self._task, completed=p.done, rate=rate, failed=failed)
