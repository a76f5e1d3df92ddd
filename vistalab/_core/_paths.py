"""Door checks for the paths a command reads or writes: one place that turns
"this path cannot be used" into a :class:`DomainError` naming the option, the
path, the rule and the fix, before any work starts.

Inputs are checked with ``os.stat`` (never opened), so a FIFO, a directory or
a device given where a file is expected is refused at once instead of hanging
on ``open``.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ._errors import DomainError

__all__ = ["input_file", "input_path", "input_dir", "output_dir", "output_file"]

# Kernel pseudo file systems: nothing a command writes belongs there.
_PSEUDO = ("/proc", "/sys", "/dev")


def _as_path(option: str, value: Any, what: str, *, output: bool = False) -> Path:
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if not isinstance(value, str) or not value.strip():
        fix = (f"pass a {what}, e.g. {option} ./out" if output and option.startswith("-")
               else f"pass the path of an existing {what}" if not output else f"pass a {what}")
        raise DomainError(option, value, f"must be a non-empty {what} path", fix)
    if "\0" in value:
        raise DomainError(option, value, "must not contain NUL characters", "remove them")
    return Path(value)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a regular file"


def _stat(option: str, path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:  # ELOOP, EACCES on a parent, ENAMETOOLONG...
        raise DomainError(option, str(path), f"must be accessible ({exc.strerror})",
                          "check the path") from None


def _pseudo(path: Path) -> str | None:
    real = os.path.realpath(path)
    for root in _PSEUDO:
        if real == root or real.startswith(root + os.sep):
            if root == "/dev" and real.startswith("/dev/shm" + os.sep):
                return None  # tmpfs, an ordinary writable folder
            return root
    return None


def _refuse_pseudo(option: str, path: Path) -> None:
    root = _pseudo(path)
    if root is not None:
        raise DomainError(option, str(path), f"must not be under {root} (a kernel pseudo file "
                          "system)", "choose a folder on a real disk, e.g. ./out")


def _nearest_existing(path: Path) -> Path:
    probe = Path(os.path.abspath(path))
    while not os.path.lexists(probe) and probe != probe.parent:
        probe = probe.parent
    return probe


def _writable_folder(option: str, path: Path, folder: Path) -> None:
    if not os.access(folder, os.W_OK | os.X_OK):
        raise DomainError(option, str(path), f"must be writable ({folder} is read-only or not "
                          "yours)", "choose a folder you can write to")


def input_file(option: str, value: Any) -> Path:
    """An existing regular, readable file (a FIFO, folder or device is refused)."""
    return _existing(option, value, "file", stat.S_ISREG, "a regular file", os.R_OK)


def input_dir(option: str, value: Any) -> Path:
    """An existing, readable folder."""
    return _existing(option, value, "folder", stat.S_ISDIR, "a folder", os.R_OK | os.X_OK)


def _existing(option: str, value: Any, noun: str, is_kind: Callable[[int], bool], kind: str,
              mode: int) -> Path:
    """``value`` as the path of an existing ``noun`` of the right kind, with access ``mode``."""
    path = _as_path(option, value, noun)
    st = _stat(option, path)
    if st is None:
        raise DomainError(option, str(path), f"must be an existing {noun}",
                          "check the path (it does not exist)")
    if not is_kind(st.st_mode):
        raise DomainError(option, str(path), f"must be {kind}, not {_kind(st.st_mode)}",
                          f"pass the path of a {noun}")
    if not os.access(path, mode):
        raise DomainError(option, str(path), "must be readable", "check its permissions")
    return path


def input_path(option: str, value: Any) -> Path:
    """An existing regular file or folder (FIFOs and devices refused)."""
    path = _as_path(option, value, "file or folder")
    st = _stat(option, path)
    if st is not None and stat.S_ISDIR(st.st_mode):
        return input_dir(option, value)
    return _existing(option, value, "file or folder", stat.S_ISREG,
                     "a regular file or a folder", os.R_OK)


def output_dir(option: str, value: Any) -> Path:
    """A folder to write into: an existing writable folder, or one that can be
    created (its nearest existing ancestor is a writable folder). Nothing is
    created here."""
    path = _as_path(option, value, "folder", output=True)
    _refuse_pseudo(option, path)
    st = _stat(option, path)
    if st is not None:
        if not stat.S_ISDIR(st.st_mode):
            raise DomainError(option, str(path), f"must be a folder, not {_kind(st.st_mode)}",
                              "choose a new or existing folder path")
        _writable_folder(option, path, path)
        return path
    base = _nearest_existing(path)
    bst = _stat(option, base)
    if bst is None or not stat.S_ISDIR(bst.st_mode):
        kind = "missing" if bst is None else _kind(bst.st_mode)
        raise DomainError(option, str(path), f"must be creatable ({base} is {kind}, not a "
                          "folder)", "choose a path whose parents are folders")
    _writable_folder(option, path, base)
    return path


def output_file(option: str, value: Any, *, parents: bool = False) -> Path:
    """A file to (over)write: not a folder, FIFO or device, inside an existing
    writable folder (or, with ``parents``, a folder the writer will create)."""
    path = _as_path(option, value, "file", output=True)
    _refuse_pseudo(option, path)
    st = _stat(option, path)
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise DomainError(option, str(path), f"must be a file path, not {_kind(st.st_mode)}",
                          "name a file to write, e.g. out/events.jsonl")
    parent = path.parent if str(path.parent) else Path(".")
    pst = _stat(option, parent)
    if pst is None and parents:
        output_dir(option, parent)
        return path
    if pst is None:
        raise DomainError(option, str(path), f"must be in an existing folder ({parent} does not "
                          "exist)", f"create it first: mkdir -p {parent}")
    if not stat.S_ISDIR(pst.st_mode):
        raise DomainError(option, str(path), f"must be in a folder ({parent} is "
                          f"{_kind(pst.st_mode)})", "choose a path inside a folder")
    if st is not None and not os.access(path, os.W_OK):
        raise DomainError(option, str(path), "must be writable", "check its permissions")
    _writable_folder(option, path, parent)
    return path
