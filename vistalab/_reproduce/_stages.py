"""The check stages of ``reproduce`` (proof steps, paper checks, engine-backed checks,
transcription, beyond-the-paper rows) as functions a spawned worker process can run,
and the worker pool whose queue reports each finished step or claim to the main
process's progress bars.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from ._sources import engine_checks, paper_check_rows, proof_step_rows, transcription_rows

__all__ = ["hypothesis_home"]


def hypothesis_home(path: str | os.PathLike[str] | None) -> None:
    """Point Hypothesis's storage folder at ``path`` in this process.

    Hypothesis keeps caches in ``./.hypothesis`` of the current folder unless
    told otherwise; the pipeline keeps them under ``<out>/.cache/hypothesis``.
    Left alone when Hypothesis is already imported (e.g. under pytest, whose
    own settings own that folder).
    """
    if path is None or "hypothesis" in sys.modules:
        return
    os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = os.fspath(path)


class _Certificates:
    """The verify stage's rows as the report ``paper_checks.run_claims`` accepts
    (``.steps`` with ``claim``, ``step``, ``status``): the proof steps run once."""

    def __init__(self, rows: Sequence[Mapping[str, Any]]) -> None:
        steps = []
        for r in rows:
            claim, _, step = str(r["id"]).partition("/")
            steps.append(_Step(claim, step, str(r["status"])))
        self.steps = tuple(steps)


@dataclass(frozen=True)
class _Step:
    claim: str
    step: str
    status: str


#: In a worker process: where the check stages report each finished step or claim.
_TICKS: Any = None


def _init_worker(queue: Any) -> None:
    global _TICKS
    _TICKS = queue


def _ticker(stage: str) -> Callable[[str], None] | None:
    """A callback that reports ``(stage, note)`` to the main process, or None in-process."""
    queue = _TICKS
    if queue is None:
        return None
    return lambda note: queue.put((stage, note))


def _transcription_stage(params: Mapping[str, Any], rng: Any) -> Any:
    return transcription_rows(params["paper"])


def _beyond_stage(params: Mapping[str, Any], rng: Any) -> Any:
    from ._beyond import beyond_rows

    return beyond_rows()


def _proof_stage(params: Mapping[str, Any], rng: Any, *, hypothesis_dir: str | None = None
                 ) -> Any:
    hypothesis_home(hypothesis_dir)
    return proof_step_rows(progress=_ticker("verify"))


def _paper_stage(params: Mapping[str, Any], rng: Any, *, hypothesis_dir: str | None = None,
                 proof_rows: Sequence[Mapping[str, Any]] | None = None) -> Any:
    hypothesis_home(hypothesis_dir)
    # paper_checks' own default seed, so the rows match `vista-lab check-paper`;
    # the theory claims' certificates come from the verify stage's rows.
    certs: Any = True if proof_rows is None else _Certificates(proof_rows)
    return paper_check_rows(rng=None, certificates=certs, progress=_ticker("paper_checks"))


def _engine_stage(params: Mapping[str, Any], rng: Any, *, hypothesis_dir: str | None = None
                  ) -> Any:
    hypothesis_home(hypothesis_dir)
    return engine_checks(rng=None, progress=_ticker("engine"))


def _worker_pool(jobs: int) -> tuple[Executor | None, Any]:
    """One spawned worker process (fresh interpreter: no forked locks or threads),
    and the queue on which its check stages report each step or claim."""
    if jobs < 2:
        return None, None
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    return ProcessPoolExecutor(max_workers=1, mp_context=ctx, initializer=_init_worker,
                               initargs=(queue,)), queue
