"""The size and depth limits of every door that reads structured input, stated once:
workspace registration and rendering, the trace, config and answer readers, and the
MCP server on both transports all refuse beyond them in one line naming the argument.

Depth is measured without recursion (a scan of the JSON text, or an explicit stack
over Python containers), so a value nested 100,000 deep is refused, never a
``RecursionError``. Files are opened non-blocking and checked with ``fstat`` before
a byte is read, so a FIFO, a device or a ``/proc`` file is refused, never waited on.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Mapping
from typing import Any

from ._errors import DomainError

__all__ = ["MAX_JSON_DEPTH", "MAX_REQUEST_BYTES", "MAX_FILE_BYTES", "json_text_depth",
           "value_depth", "check_depth", "check_text_size", "loads_bounded", "read_bounded",
           "MAX_INT_DIGITS", "IntegerTooLongError", "json_loads", "toml_loads"]

#: Deepest nesting of JSON (or of Python containers standing for JSON) accepted at
#: any door. Real tool arguments and traces nest a few levels; the standard JSON
#: reader and ``copy.deepcopy`` recurse once per level, so 100 keeps far away from
#: Python's recursion limit.
MAX_JSON_DEPTH = 100
#: Largest single request or message text accepted (bytes of UTF-8): the MCP
#: transports' message size (4 MiB, the MCP Python SDK's streamable-HTTP limit),
#: applied to every door, so whatever one transport takes the others take too.
MAX_REQUEST_BYTES = 4 * 1024 * 1024
#: Largest file a reader loads whole (traces, event logs, configs, probe answers).
MAX_FILE_BYTES = 256 * 1024 * 1024

#: Most decimal digits of an integer in any input (JSON or TOML file, tool
#: arguments, option text): CPython's own limit on ``int(str)``
#: (``sys.int_info.default_max_str_digits``, 4,300), checked by the readers before
#: conversion, so a longer one is refused in the reader's own error, never a
#: ``ValueError`` from the interpreter (and never quadratic-time conversion).
MAX_INT_DIGITS = 4300

_PSEUDO_ROOTS = ("/proc", "/sys", "/dev")


class IntegerTooLongError(json.JSONDecodeError):
    """A JSON integer literal longer than :data:`MAX_INT_DIGITS` digits. A
    :class:`json.JSONDecodeError` (so every reader that reports invalid JSON reports
    this too), whose ``msg`` says the rule and ``lineno`` where the integer is."""

    def __init__(self, digits: int, doc: str = "", pos: int = 0) -> None:
        self.digits = digits
        super().__init__(f"an integer of {digits:,} digits (at most {MAX_INT_DIGITS:,} "
                         "digits per integer)", doc, pos)

    def __reduce__(self) -> tuple[Any, ...]:
        return (IntegerTooLongError, (self.digits, self.doc, self.pos))


class _LongLiteral(Exception):
    """Raised by the ``parse_int`` hook; located in the text by :func:`json_loads`."""

    def __init__(self, literal: str) -> None:
        super().__init__(literal[:40])
        self.literal = literal


def _parse_int(literal: str) -> int:
    if len(literal) - literal.startswith("-") > MAX_INT_DIGITS:
        raise _LongLiteral(literal)
    return int(literal)


def json_loads(text: str | bytes) -> Any:
    """``json.loads(text)`` with integers bounded before conversion: a literal of more
    than :data:`MAX_INT_DIGITS` digits raises :class:`IntegerTooLongError` (a
    ``JSONDecodeError``) at its position. Other JSON errors propagate unchanged."""
    try:
        return json.loads(text, parse_int=_parse_int)
    except _LongLiteral as exc:
        doc = text.decode("utf-8", "replace") if isinstance(text, (bytes, bytearray)) \
            else text
        pos = max(0, doc.find(exc.literal))
        raise IntegerTooLongError(len(exc.literal) - exc.literal.startswith("-"), doc,
                                  pos) from None


#: A TOML integer literal (digits with optional underscores) longer than the limit.
_TOML_LONG_INT = re.compile(r"[0-9](?:_?[0-9]){" + str(MAX_INT_DIGITS) + ",}")


def toml_loads(text: str) -> dict[str, Any]:
    """``tomllib.loads(text)`` with integers bounded: ``tomllib`` hands an integer
    literal to ``int``, which refuses more than :data:`MAX_INT_DIGITS` digits with a
    bare ``ValueError``; that is raised here as a :class:`tomllib.TOMLDecodeError`
    naming the literal's line and the limit (other TOML errors propagate)."""
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        raise
    except ValueError:
        long = _TOML_LONG_INT.search(text)
        where = "" if long is None else f" at line {text.count(chr(10), 0, long.start()) + 1}"
        digits = "" if long is None else f" of {sum(c.isdigit() for c in long.group()):,} digits"
        raise tomllib.TOMLDecodeError(
            f"an integer{digits}{where} (at most {MAX_INT_DIGITS:,} digits per "
            "integer)") from None


def json_text_depth(text: str | bytes, limit: int | None = None) -> int:
    """Nesting depth of the JSON ``text`` (brackets outside strings), scanned
    without recursion; stops early once ``limit`` is exceeded (returns limit + 1)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    depth = best = 0
    in_str = esc = False
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > best:
                best = depth
                if limit is not None and best > limit:
                    return best
        elif ch in "]}":
            depth -= 1
    return best


def value_depth(value: Any, limit: int | None = None) -> int:
    """Nesting depth of dicts/lists/tuples in ``value`` (an explicit stack, no
    recursion); stops early once ``limit`` is exceeded (returns limit + 1). A
    container inside itself (a cycle) counts as too deep; a container shared by
    several parents (aliasing, as when one content list is reused by two
    messages) is measured as what it is, plain nested data."""
    best = 0
    # (item, depth, leaving): the entry marks a container being explored; its
    # leaving marker takes it off the path again. ``on_path`` holds the
    # ancestors of the current item (a cycle returns to one of them);
    # ``explored`` the greatest depth each container was already explored at
    # (a shared container met again no deeper cannot add depth).
    stack: list[tuple[Any, int, bool]] = [(value, 0, False)]
    on_path: set[int] = set()
    explored: dict[int, int] = {}
    keep: list[Any] = []  # the containers whose ids are held (ids stay unique)
    while stack:
        item, depth, leaving = stack.pop()
        if leaving:
            on_path.discard(id(item))
            continue
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        depth += 1
        key = id(item)
        if key in on_path:
            return (limit or depth) + 1
        if explored.get(key, 0) >= depth:
            continue
        explored[key] = depth
        keep.append(item)
        if depth > best:
            best = depth
            if limit is not None and best > limit:
                return best
        on_path.add(key)
        stack.append((item, depth, True))
        stack.extend((c, depth, False) for c in children)
    return best


def check_depth(parameter: str, value: Any, limit: int = MAX_JSON_DEPTH, *,
                error: type[DomainError] = DomainError) -> None:
    """Refuse ``value`` (Python containers, or JSON text) nested deeper than ``limit``,
    raising ``error`` (a :class:`DomainError` subclass of the calling layer)."""
    depth = (json_text_depth(value, limit) if isinstance(value, (str, bytes))
             else value_depth(value, limit))
    if depth > limit:
        raise error(parameter, _summary(value),
                          f"must be nested at most {limit} levels deep (it is deeper)",
                          "flatten the structure (e.g. pass deep data as a string)")


def check_text_size(parameter: str, text: str | bytes, limit: int = MAX_REQUEST_BYTES, *,
                    error: type[DomainError] = DomainError) -> None:
    """Refuse a text longer than ``limit`` bytes (UTF-8)."""
    size = len(text) if isinstance(text, bytes) else len(text)
    if size > limit or (not isinstance(text, bytes) and len(text.encode("utf-8", "replace"))
                        > limit):
        raise error(parameter, _summary(text),
                          f"must be at most {limit} bytes (the request size limit)",
                          "split it or archive it to a file and pass the path")


def loads_bounded(parameter: str, text: str | bytes, *, limit: int = MAX_JSON_DEPTH,
                  max_bytes: int = MAX_REQUEST_BYTES) -> Any:
    """``json.loads(text)`` after the size and depth checks, integers bounded (JSON
    errors, :class:`IntegerTooLongError` among them, propagate)."""
    check_text_size(parameter, text, max_bytes)
    check_depth(parameter, text, limit)
    return json_loads(text)


def read_bounded(parameter: str, path: str | os.PathLike[str], *,
                 max_bytes: int = MAX_FILE_BYTES, what: str = "file") -> bytes:
    """The bytes of the regular file ``path``: opened non-blocking (a FIFO is not
    waited on), refused unless ``fstat`` says regular file, refused under /proc,
    /sys or /dev, and at most ``max_bytes`` (a file growing meanwhile is cut off
    and refused, never read to exhaustion)."""
    if not isinstance(path, (str, os.PathLike)) or "\0" in os.fspath(path) \
            or not os.fspath(path):
        raise DomainError(parameter, path, "must be a non-empty file path without NUL "
                          "characters", "pass the path of a file")
    real = os.path.realpath(path)
    for root in _PSEUDO_ROOTS:
        if real == root or real.startswith(root + os.sep):
            if not real.startswith("/dev/shm" + os.sep):
                raise DomainError(parameter, os.fspath(path),
                                  f"must be a regular file, not a file under {root} "
                                  "(a kernel pseudo file system)", "pass a file on a disk")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        raise DomainError(parameter, os.fspath(path), f"must be a readable {what}",
                          "check the path (it does not exist)") from None
    except IsADirectoryError:
        raise DomainError(parameter, os.fspath(path), "must be a regular file, not a folder",
                          "pass the path of a file") from None
    except OSError as exc:
        raise DomainError(parameter, os.fspath(path), f"must be a readable {what} "
                          f"({exc.strerror})", "check the path and its permissions") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            kind = ("a folder" if stat.S_ISDIR(st.st_mode) else
                    "a named pipe (FIFO)" if stat.S_ISFIFO(st.st_mode) else
                    "a socket" if stat.S_ISSOCK(st.st_mode) else "a device")
            raise DomainError(parameter, os.fspath(path), f"must be a regular file, not {kind}",
                              "pass the path of a file")
        if st.st_size > max_bytes:
            raise DomainError(parameter, os.fspath(path),
                              f"must be at most {max_bytes} bytes (it has {st.st_size})",
                              "split the file")
        chunks = []
        total = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > max_bytes:
                raise DomainError(parameter, os.fspath(path),
                                  f"must be at most {max_bytes} bytes (it grew while read)",
                                  "split the file")
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _summary(value: Any) -> Any:
    """What the error quotes: a long text is cut (the error bounds it again)."""
    if isinstance(value, (str, bytes)) and len(value) > 60:
        return value[:57]
    return value
