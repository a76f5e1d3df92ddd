"""Progress reporting for the reproduce pipeline: one bar per stage.

The pipeline only calls :class:`Progress`; the CLI passes :class:`RichProgress`
(to stderr, silent when stderr is not a terminal) and library callers get
:class:`NullProgress`.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from typing import Any, Protocol

__all__ = ["Progress", "StageBar", "NullProgress", "RichProgress"]


class StageBar(Protocol):
    def advance(self, note: str = "") -> None: ...


class Progress(Protocol):
    def stage(self, title: str, total: int) -> contextlib.AbstractContextManager[StageBar]: ...


class _NullBar:
    def advance(self, note: str = "") -> None:
        return None


class NullProgress:
    """Reports nothing."""

    @contextlib.contextmanager
    def stage(self, title: str, total: int) -> Iterator[StageBar]:
        yield _NullBar()


class _RichBar:
    def __init__(self, progress: Any, task: Any, title: str) -> None:
        self._progress = progress
        self._task = task
        self._title = title

    def advance(self, note: str = "") -> None:
        desc = f"{self._title}: {note}" if note else self._title
        self._progress.update(self._task, advance=1, description=desc)


class _CountingBar:
    """Counts the steps of a stage for its plain line, and passes them on."""

    def __init__(self, inner: StageBar) -> None:
        self._inner = inner
        self.done = 0
        self.last = ""

    def advance(self, note: str = "") -> None:
        self.done += 1
        self.last = note
        self._inner.advance(note)


class RichProgress:
    """One rich progress bar per stage on ``stream`` (stderr by default), and with
    ``lines`` one plain line per finished stage on that stream (its title, steps
    and wall time), for a log or CI where no bar is drawn."""

    def __init__(self, stream: Any = None, *, lines: Any = None) -> None:
        self._stream = stream or sys.stderr
        self._lines = lines

    @contextlib.contextmanager
    def stage(self, title: str, total: int) -> Iterator[StageBar]:
        if self._lines is None:
            with self._bar(title, total) as bar:
                yield bar
            return
        t0 = time.perf_counter()
        with self._bar(title, total) as inner:
            bar = _CountingBar(inner)
            yield bar
        steps = max(total, 1)
        what = "from cache" if bar.last == "from cache" else f"{min(bar.done, steps)}/{steps}"
        self._lines.write(f"reproduce: {title}: {what} in {time.perf_counter() - t0:.1f} s\n")
        self._lines.flush()

    @contextlib.contextmanager
    def _bar(self, title: str, total: int) -> Iterator[StageBar]:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        console = Console(file=self._stream)
        with Progress(
            TextColumn("{task.description:<42.42}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=False,
            disable=not console.is_terminal,
        ) as progress:
            task = progress.add_task(title, total=max(total, 1))
            bar = _RichBar(progress, task, title)
            yield bar
            progress.update(task, completed=max(total, 1), description=title)
