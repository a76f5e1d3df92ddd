"""The one atomic, durable file write of vista-lab (results, reports, figures,
sweep stores and workspace payloads all go through it)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

__all__ = ["atomic_write", "fsync_dir"]

#: Mode requested for new files; the kernel applies the process umask to it,
#: exactly as for ``open(path, "w")`` (``tempfile.mkstemp`` would force 0600).
_FILE_MODE = 0o666


def fsync_dir(directory: str | os.PathLike[str]) -> None:
    """Make a rename or unlink in ``directory`` durable (its entry is on disk)."""
    if os.name != "posix":  # pragma: no cover - Windows has no directory fds
        return
    dfd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def atomic_write(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically and durably.

    The bytes go to a new temporary file in the destination folder (created
    with ``O_EXCL``), which is fsynced, renamed over ``path``, and the folder
    is fsynced, so a crash leaves the old file or the complete new one, never
    a torn one. The file gets mode ``0o666 & ~umask`` like any file the user
    creates (so reports and figures are readable by others under the usual
    umask 022).

    Parameters
    ----------
    path : str or PathLike
        Destination; missing parent folders are created.
    data : bytes
        The complete new content.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.parent / f".{target.name}.{uuid.uuid4().hex}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    fd = os.open(tmp, flags, _FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    fsync_dir(target.parent)
    return target
