"""Progress reporting for the reproduce pipeline: one bar per stage.

The pipeline only calls :class:`Progress`; the CLI passes :class:`RichProgress`
(to stderr, silent when stderr is not a terminal) and library callers get
:class:`NullProgress`.
"""

from __future__ import annotations

import contextlib
import sys
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


class RichProgress:
    """One rich progress bar per stage on ``stream`` (stderr by default)."""

    def __init__(self, stream: Any = None) -> None:
        self._stream = stream or sys.stderr

    @contextlib.contextmanager
    def stage(self, title: str, total: int) -> Iterator[StageBar]:
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
