"""The on-disk payload store (:class:`DiskStore`): the archive's exact bytes in
one folder, each write atomic and durable (temp file, fsync, rename, folder
fsync), each read checked against the recorded size and checksum, and the
conflict check that keeps a put from replacing bytes it did not write."""

from __future__ import annotations

import contextlib
import os
import re
import stat
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from vistalab._core import atomic_write

from ._errors import (
    PathEscapeError,
    PayloadConflictError,
    PayloadIntegrityError,
    StorageError,
    WorkspaceArgumentError,
)
from ._store import (
    _KEY,
    MemoryStore,
    PayloadInfo,
    PayloadStore,
    _check_key,
    _check_size,
    _size_iv,
    _SizeMismatch,
    sha256_hex,
    verify_payload,
)

__all__ = ["DiskStore"]

#: Subfolder of a DiskStore's folder holding payload files set aside at load.
ORPHANED_DIR = ".orphaned"
#: Temp files written by :func:`atomic_write` (``.<name>.<32 hex>.tmp``).
_TEMP = re.compile(r"\..+\.[0-9a-f]{32}\.tmp\Z", re.ASCII | re.DOTALL)
#: The temp files this store's own writes leave (``.B7.txt.<32 hex>.tmp``): the
#: only ones it removes when opened.
_PAYLOAD_TEMP = re.compile(r"\.[BG][1-9][0-9]{0,11}\.txt\.[0-9a-f]{32}\.tmp\Z", re.ASCII)
_PSEUDO_ROOTS = ("/proc", "/sys", "/dev")


class DiskStore:
    """Payload files in one folder; writes are atomic and durable.

    A write goes to a temporary file in the same folder, is fsynced, renamed
    over the final name and the folder is fsynced, so a crash leaves either
    the old state or the complete new payload, never a torn file. The folder
    is held open as a directory descriptor and every file operation is made
    relative to it (``openat``-style), so renaming the folder and putting a
    symlink in its place cannot redirect writes. Reads refuse symlinks
    (``O_NOFOLLOW``) and anything that is not a regular file (opened with
    ``O_NONBLOCK`` and checked with ``fstat``, so a FIFO cannot hang a read).
    Temporary files left by an interrupted write of this store (named
    ``.B<n>.txt.<32 hex>.tmp`` or ``.G<n>.txt.<...>.tmp``, nothing else) are
    removed when the store is opened. Folders under /proc, /sys and /dev
    (kernel pseudo file systems; /dev/shm excepted) are refused.

    Nothing is ever lost: a ``put`` to a key whose file already exists with
    other bytes, and that this store object did not write (or
    :meth:`claim`) earlier in its life, is refused with
    :class:`PayloadConflictError` naming the key, the folder and the fix (a
    user's own ``G1.txt``, or the payloads of an earlier run sharing the
    folder, stay as they are). The same bytes again are accepted.

    Parameters
    ----------
    directory : str or PathLike
        Archive folder, created if missing. Payload paths shown to the agent
        are absolute paths inside it.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        if isinstance(directory, bool) or not isinstance(directory, (str, os.PathLike)):
            raise WorkspaceArgumentError(
                "directory",
                directory,
                "must be a folder path (str or PathLike)",
                "pass e.g. DiskStore('archive')",
            )
        text = os.fspath(directory)
        if not isinstance(text, str) or not text or "\x00" in text:
            raise WorkspaceArgumentError(
                "directory",
                directory,
                "must be a non-empty text path without NUL bytes",
                "pass e.g. DiskStore('archive')",
            )
        path = Path(text)
        real = os.path.realpath(path)
        for pseudo in _PSEUDO_ROOTS:
            if (real == pseudo or real.startswith(pseudo + os.sep)) and not (
                real.startswith("/dev/shm" + os.sep)
            ):
                raise WorkspaceArgumentError(
                    "directory",
                    text,
                    f"must be a folder on a disk, not under {pseudo} (a kernel pseudo file "
                    "system, where files are not storage)",
                    "pick a folder on a disk, or /dev/shm for memory",
                )
        try:
            path.mkdir(parents=True, exist_ok=True)
            self._dir = Path(os.path.realpath(path))
            flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
            self._dfd: int | None = os.open(self._dir, flags)
        except OSError as exc:
            raise WorkspaceArgumentError(
                "directory",
                text,
                f"must be a folder the store can create and open ({exc.strerror})",
                "pick a writable folder",
            ) from None
        self.root = str(self._dir)
        self._mine: set[str] = set()  # keys this object wrote or claimed
        self.skipped_entries: tuple[str, ...] = ()
        self.removed_temp_files = self._clean_temp_files()

    @property
    def directory(self) -> Path:
        """The resolved archive folder."""
        return self._dir

    def _fd(self) -> int:
        if self._dfd is None:
            raise WorkspaceArgumentError(
                "store", self, "is closed", "open a new DiskStore on the folder"
            )
        return self._dfd

    def _clean_temp_files(self) -> tuple[str, ...]:
        """Remove temp files an interrupted write left behind (never payloads).

        A temp-named entry that is not a regular file (a folder, a FIFO) was not
        written by the store: it is left alone and listed in ``skipped_entries``."""
        removed = []
        skipped = []
        for name in os.listdir(self._fd()):
            if _PAYLOAD_TEMP.match(name):
                try:
                    st = os.stat(name, dir_fd=self._fd(), follow_symlinks=False)
                    if not stat.S_ISREG(st.st_mode):
                        skipped.append(name)
                        continue
                    os.unlink(name, dir_fd=self._fd())
                except FileNotFoundError:
                    continue
                except OSError:  # not ours to remove (permissions): leave it, say so
                    skipped.append(name)
                    continue
                removed.append(name)
        self.skipped_entries = tuple(sorted(skipped))
        if removed:
            os.fsync(self._fd())
        return tuple(sorted(removed))

    def _swap_problem(self) -> str | None:
        """Why the folder at ``root`` is no longer the one this store opened, or None."""
        try:
            now = os.lstat(self.root)
        except OSError:
            return (f"cannot be read: the archive folder {self.root} was removed or renamed "
                    "after the store opened it; restore it, or open a new store")
        opened = os.fstat(self._fd())
        if stat.S_ISLNK(now.st_mode):
            target = os.path.realpath(self.root)
            return (f"cannot be read: the archive folder {self.root} was replaced by a symlink "
                    f"(to {target}) after the store opened it; payloads are only read from the "
                    "folder the store opened: restore the folder, or open a new store")
        if (now.st_dev, now.st_ino) != (opened.st_dev, opened.st_ino):
            return (f"cannot be read: the archive folder {self.root} was replaced by another "
                    "folder after the store opened it; restore it, or open a new store")
        return None

    def close(self) -> None:
        """Release the folder's descriptor (the store cannot be used afterwards)."""
        if self._dfd is not None:
            os.close(self._dfd)
            self._dfd = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: S110 - interpreter shutdown
            pass

    def _final(self, key: str) -> Path:
        return self._dir / _check_key(key)

    def put(self, key: str, data: bytes) -> PayloadInfo:
        """Write ``data`` under ``key`` atomically (temporary file, fsync, rename,
        fsync of the folder): the bytes are durable when it returns.


        Parameters
        ----------
        key : str
            The payload key (``"B7.txt"``, ``"G2.txt"``).
        data : bytes
            The payload.

        Returns
        -------
        PayloadInfo
            The key, its display path, size and SHA-256.

        Raises
        ------
        PayloadConflictError
            If the folder holds a payload under ``key`` that this store did not
            write (nor :meth:`claim`) and ``data`` differs from it; identical bytes
            are accepted without writing.
        StorageError
            If the write fails (a full disk, a read-only folder, a file-size limit).
        WorkspaceArgumentError
            If ``key`` is not a payload key the engine generates.
        """
        _check_key(key)
        info = PayloadInfo(key, f"{self.root}/{key}", len(data), sha256_hex(data))
        if key not in self._mine and self.contains(key):
            problem = foreign_payload_problem(self, key, data)
            if problem:
                raise PayloadConflictError(key, self.root, problem)
            self._mine.add(key)  # the same bytes: already durable, nothing to write
            return info
        try:
            atomic_write(Path(key), data, dir_fd=self._fd())
        except OSError as exc:  # a full disk, a read-only folder, a file-size limit
            raise StorageError(f"DiskStore.put({key!r}) in {self.root}",
                               exc.strerror or str(exc), errno=exc.errno) from exc
        self._mine.add(key)
        return info

    def claim(self, keys: Iterable[str]) -> None:
        """Count ``keys`` as written by this store, so :meth:`put` may replace
        them (a loaded workspace re-opening the folder its snapshot points to).

        Parameters
        ----------
        keys : iterable of str
            Payload keys (``"B7.txt"``).

        Raises
        ------
        WorkspaceArgumentError
            If a key is not a payload key the engine generates.
        """
        self._mine.update(_check_key(k) for k in keys)

    def set_aside(self, key: str) -> str:
        """Move the payload file ``key`` into the folder's ``.orphaned``
        subfolder (renamed with a unique suffix; never deleted) and return its
        new path. ``Workspace.load`` does this with payload files its snapshot
        does not reference and that only an unsaved run after the save can have
        written, so they never collide with a later block or group of that ID.

        Parameters
        ----------
        key : str
            The payload key (``"B7.txt"``).

        Returns
        -------
        str
            Where the file now is.
        """
        _check_key(key)
        fd = self._fd()
        try:
            with contextlib.suppress(FileExistsError):
                os.mkdir(ORPHANED_DIR, 0o700, dir_fd=fd)
            flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
            sub = os.open(ORPHANED_DIR, flags, dir_fd=fd)
            try:
                name = f"{key}.{uuid.uuid4().hex[:12]}"
                os.rename(key, name, src_dir_fd=fd, dst_dir_fd=sub)
                os.fsync(sub)
            finally:
                os.close(sub)
            os.fsync(fd)
        except OSError as exc:
            raise StorageError(f"DiskStore.set_aside({key!r}) in {self.root}",
                               exc.strerror or str(exc), errno=exc.errno) from exc
        self._mine.discard(key)
        return f"{self.root}/{ORPHANED_DIR}/{name}"

    def _fsync_dir(self) -> None:
        os.fsync(self._fd())

    def get(self, key: str, *, sha256: str | None = None, size: int | None = None) -> bytes:
        """Read the payload file ``key`` (no symlink followed) and verify it.

        Parameters
        ----------
        key : str
            The payload key (``"B7.txt"``, ``"G2.txt"``).
        sha256 : str, optional
            The expected SHA-256 (hex); when given, bytes that do not match it are
            refused.
        size : int, optional
            The recorded size in bytes; when given, a payload of another size is
            refused before it is read whole.

        Returns
        -------
        bytes
            The exact bytes stored.

        Raises
        ------
        PayloadIntegrityError
            If the file is missing, is not a regular file, or does not match
            ``sha256``.
        PathEscapeError
            If the file cannot be opened safely (it was replaced by a symlink).
        """
        final = self._final(key)
        size = _size_iv(size)
        flags = (
            os.O_RDONLY
            | getattr(os, "O_NOFOLLOW", 0)
            | getattr(os, "O_NONBLOCK", 0)
            | getattr(os, "O_BINARY", 0)
        )
        try:
            fd = os.open(key, flags, dir_fd=self._fd())
        except FileNotFoundError:
            raise PayloadIntegrityError(key, f"file {final} is missing") from None
        except OSError as exc:  # ELOOP: the payload was replaced by a symlink
            raise PathEscapeError(str(final), f"cannot be opened safely ({exc.strerror})") from None
        try:
            mode = os.fstat(fd).st_mode
            if not stat.S_ISREG(mode):
                raise PayloadIntegrityError(
                    key, f"file {final} is not a regular file (it is {_file_kind(mode)})"
                )
            if size is not None:
                _check_size(key, f"file {final}", os.fstat(fd).st_size, size)
            chunks = []
            left = None if size is None else size + 1  # a file growing meanwhile is cut off
            while left is None or left > 0:
                chunk = os.read(fd, 1 << 20 if left is None else min(1 << 20, left))
                if not chunk:
                    break
                chunks.append(chunk)
                if left is not None:
                    left -= len(chunk)
        finally:
            os.close(fd)
        data = b"".join(chunks)
        if size is not None:
            _check_size(key, f"file {final}", len(data), size)
        return verify_payload(key, data, sha256)

    def delete(self, key: str) -> None:
        """Unlink the payload file ``key`` and fsync the folder (a missing file
        is not an error).

        Parameters
        ----------
        key : str
            The payload key (``"B7.txt"``, ``"G2.txt"``).

        Raises
        ------
        StorageError
            If the file cannot be removed (a read-only folder).
        """
        try:
            os.unlink(_check_key(key), dir_fd=self._fd())
        except FileNotFoundError:
            return
        except OSError as exc:  # a read-only folder
            raise StorageError(f"DiskStore.delete({key!r}) in {self.root}",
                               exc.strerror or str(exc), errno=exc.errno) from exc
        self._fsync_dir()

    def contains(self, key: str) -> bool:
        """Whether the folder holds an entry named ``key`` (a symlink counts,
        not followed).

        Parameters
        ----------
        key : str
            The payload key (``"B7.txt"``, ``"G2.txt"``).

        Returns
        -------
        bool
            True if a payload is stored under ``key``.
        """
        try:
            os.stat(_check_key(key), dir_fd=self._fd(), follow_symlinks=False)
        except FileNotFoundError:
            return False
        return True

    def keys(self) -> list[str]:
        """The names in the folder that are payload keys, sorted.

        Returns
        -------
        list of str
            The payload keys, sorted.
        """
        return sorted(n for n in os.listdir(self._fd()) if _KEY.match(n))

    def key_of(self, path: str) -> str:
        """Map a path an agent typed back to a payload key of this folder.

        Parameters
        ----------
        path : str
            A path as the dashboard shows it (``<root>/B7.txt``) or relative to the
            store.

        Returns
        -------
        str
            The payload key.

        Raises
        ------
        WorkspaceArgumentError
            If ``path`` is not a string path.
        PathEscapeError
            If the path is empty, leaves the folder (traversal, a symlinked parent),
            names no payload key, or is a symlink.
        """
        if not isinstance(path, (str, os.PathLike)):
            raise WorkspaceArgumentError("path", path, "must be a string path")
        text = os.fspath(path)
        if not isinstance(text, str) or "\x00" in text or not text.strip():
            raise PathEscapeError(str(text), "is not a usable path")
        candidate = Path(text) if os.path.isabs(text) else self._dir / text
        parent = Path(os.path.realpath(candidate.parent))
        if parent != self._dir:
            swapped = self._swap_problem()
            if swapped and Path(os.path.abspath(candidate.parent)) == Path(self.root):
                raise PathEscapeError(text, swapped)
            raise PathEscapeError(
                text,
                f"is outside the archive folder {self.root}; read payloads by the path "
                "their handle shows",
            )
        name = candidate.name
        if not _KEY.match(name):
            raise PathEscapeError(
                text, "does not name an archive payload (expected B<n>.txt or G<n>.txt)"
            )
        try:
            st = os.stat(name, dir_fd=self._fd(), follow_symlinks=False)
        except FileNotFoundError:
            return name
        if stat.S_ISLNK(st.st_mode):
            raise PathEscapeError(text, "is a symlink; payloads are regular files")
        return name

    def __repr__(self) -> str:
        return f"DiskStore({self.root!r})"


def sized_get(store: Any) -> bool:
    """Whether ``store.get`` is this package's, which takes ``size=`` (a subclass that
    overrides ``get`` may not)."""
    return type(store).get in (DiskStore.get, MemoryStore.get)


def foreign_payload_problem(store: PayloadStore, key: str, data: bytes) -> str:
    """Why writing ``data`` over the existing payload ``key`` would lose bytes
    ("" if the existing payload is exactly ``data``)."""
    try:  # this package's stores compare the length first: a huge file is not read
        existing = (store.get(key, size=len(data)) if sized_get(store)  # type: ignore[call-arg]
                    else store.get(key))
    except _SizeMismatch as exc:  # another length: other bytes, known without reading them
        return (f"already exists with other bytes ({exc.actual:,} bytes; the new payload "
                f"has {len(data):,} bytes)")
    except (PayloadIntegrityError, PathEscapeError) as exc:
        return f"exists and cannot be compared ({exc})"
    if existing == data:
        return ""
    return (
        f"already exists with other bytes ({len(existing)} bytes, sha256 "
        f"{sha256_hex(existing)[:12]}; the new payload has {len(data)} bytes, sha256 "
        f"{sha256_hex(data)[:12]})"
    )


def read_regular_file(path: str | os.PathLike[str]) -> tuple[bytes | None, str]:
    """(bytes, "") of a regular file, or (None, the problem): opened with
    ``O_NONBLOCK`` and checked with ``fstat`` before any read, so a FIFO,
    folder or device is refused at once instead of blocking."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        return None, f"cannot be opened ({exc.strerror})"
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            return None, f"is not a regular file ({_file_kind(mode)})"
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
    except OSError as exc:
        return None, f"cannot be read ({exc.strerror})"
    finally:
        os.close(fd)
    return b"".join(chunks), ""


def _file_kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symlink"),
    ):
        if test(mode):
            return name
    return "not a regular file"
