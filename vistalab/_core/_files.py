"""The one atomic, durable file write of vista-lab (results, reports, figures,
sweep stores and workspace payloads all go through it)."""

from __future__ import annotations

import errno
import os
import stat
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


def atomic_write(path: str | os.PathLike[str], data: bytes, *, dir_fd: int | None = None) -> Path:
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
        Destination; missing parent folders are created. With ``dir_fd``, a
        bare file name inside that folder.
    data : bytes
        The complete new content.
    dir_fd : int, optional
        An open descriptor of the destination folder: every step (create,
        rename, cleanup, folder fsync) is made relative to it, so a folder
        renamed and replaced by a symlink meanwhile cannot redirect the write.
        The temp file is then opened with ``O_NOFOLLOW``.

    Returns
    -------
    pathlib.Path
        ``path``.

    Raises
    ------
    OSError
        ``EINVAL`` if ``path`` exists and is not a regular file or a symlink: a
        device (``/dev/null``), a named pipe, a socket or a folder is never
        replaced (as root, a rename over ``/dev/null`` would turn the device into
        a plain file for every program on the machine).
    """
    target = Path(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    if dir_fd is None:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp: str | Path = target.parent / f".{target.name}.{uuid.uuid4().hex}.tmp"
        final: str | Path = target
    else:
        tmp, final = f".{target.name}.{uuid.uuid4().hex}.tmp", target.name
        flags |= getattr(os, "O_NOFOLLOW", 0)
    try:
        mode = os.stat(final, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
        raise OSError(errno.EINVAL, "not a regular file: a device, named pipe, socket or "
                      "folder is never replaced by a write", str(target))
    fd = os.open(tmp, flags, _FILE_MODE, dir_fd=dir_fd)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, final, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except FileNotFoundError:
            pass
        raise
    if dir_fd is None:
        fsync_dir(target.parent)
    else:
        os.fsync(dir_fd)
    return target
