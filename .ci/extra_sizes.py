#!/usr/bin/env python3
"""The installed size of the core and of each extra of vista-lab, from the
environment it runs in (the install guide's table quotes its output).

For each extra it walks the requirement closure through the installed
distributions' metadata (markers evaluated, extras followed) and sums the sizes in
their RECORD files; nothing is downloaded or installed. Run it in a venv that has
every extra (``make docs`` makes one: ``.venv/bin/python .ci/extra_sizes.py``).
A distribution that is required but not installed is named, and the size is then a
lower bound. Usage: ``python .ci/extra_sizes.py [--markdown]``, or
``python .ci/extra_sizes.py --check EXTRA`` (exit 1 if a requirement of
``vista-lab[EXTRA]`` is not installed; ``.ci/wheel_e2e.py`` uses it).
"""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path
from typing import Any

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

PROJECT = "vista-lab"


def _dist(name: str) -> metadata.Distribution | None:
    try:
        return metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return None


def _size(dist: metadata.Distribution) -> int:
    total = 0
    for f in dist.files or ():
        if f.size is not None:
            total += int(f.size)
        else:
            try:
                total += Path(f.locate()).stat().st_size
            except OSError:
                pass
    return total


def _megabytes(names: set[str]) -> float:
    """Installed size of the named (installed) distributions, in MB."""
    total = 0
    for name in names:
        dist = _dist(name)
        if dist is not None:
            total += _size(dist)
    return total / 1e6


def closure(name: str, extras: frozenset[str]) -> tuple[set[str], set[str]]:
    """(installed distributions, missing ones) that ``name[extras]`` requires,
    ``name`` itself excluded."""
    seen: set[tuple[str, frozenset[str]]] = set()
    found: set[str] = set()
    missing: set[str] = set()
    todo = [(canonicalize_name(name), extras)]
    while todo:
        key = todo.pop()
        if key in seen:
            continue
        seen.add(key)
        dist_name, wanted = key
        dist = _dist(dist_name)
        if dist is None:
            missing.add(dist_name)
            continue
        found.add(dist_name)
        env: dict[str, Any] = dict(default_environment())
        for text in dist.requires or ():
            req = Requirement(text)
            marker = req.marker
            if marker is None or any(marker.evaluate({**env, "extra": e})
                                     for e in (wanted or {""})):
                todo.append((canonicalize_name(req.name), frozenset(req.extras)))
    found.discard(canonicalize_name(name))
    return found, missing


def main(argv: list[str]) -> int:
    dist = _dist(PROJECT)
    if dist is None:
        print(f"{PROJECT} is not installed here", file=sys.stderr)
        return 2
    if argv[:1] == ["--check"] and len(argv) == 2:
        # Exit 1 when a distribution the extra requires is not installed here.
        _, missing = closure(PROJECT, frozenset({argv[1]}))
        if missing:
            print(f"{PROJECT}[{argv[1]}] needs, not installed: {', '.join(sorted(missing))}")
            return 1
        print(f"{PROJECT}[{argv[1]}]: every requirement is installed")
        return 0
    extras = sorted(dist.metadata.get_all("Provides-Extra") or [])
    core, core_missing = closure(PROJECT, frozenset())
    rows: list[tuple[str, float, float, list[str]]] = [
        ("core", _megabytes(core), 0.0, sorted(core_missing))]
    for extra in extras:
        deps, missing = closure(PROJECT, frozenset({extra}))
        rows.append((extra, _megabytes(deps), _megabytes(deps - core), sorted(missing)))
    md = "--markdown" in argv
    if md:
        print("| extra | installed, MB | over the core, MB |")
        print("| --- | ---: | ---: |")
    for name, total, over, absent in rows:
        note = f" (not installed here: {', '.join(absent)})" if absent else ""
        if md:
            print(f"| `{name}` | {total:,.0f} | {over:,.0f} |{note}")
        else:
            print(f"{name:10s} {total:8,.0f} MB  ({over:,.0f} MB over the core){note}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
