"""Provenance and durable file writes shared by every results file.

A results file is only useful if it says how it was made: parameters, seed
entropy, package versions, the git commit and a fingerprint of the code. Writes
are atomic (temp file in the destination folder, fsync, rename) so a crash never
leaves a half-written table behind.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from vistalab._core import UnknownNameError, atomic_write

from ._output import to_plain

__all__ = [
    "PACKAGES",
    "atomic_write_bytes",
    "atomic_write_text",
    "atomic_write_json",
    "code_fingerprint",
    "git_commit",
    "package_versions",
    "provenance",
]

#: Distributions whose versions are recorded in every sidecar.
PACKAGES: tuple[str, ...] = (
    "vista-lab", "numpy", "scipy", "sympy", "mpmath", "matplotlib", "tiktoken",
    "pyarrow", "joblib", "dask", "distributed", "rich",
)

#: Packages whose source defines "the code version" for caching.
_CODE_PACKAGES: tuple[str, ...] = (
    "theory", "sims", "workspace", "paper_checks", "figures", "vistalab",
)

_CODE_SUFFIXES = frozenset({".py", ".toml", ".json", ".mplstyle"})
_REPO_ROOT = Path(__file__).resolve().parent.parent


def _package_dirs(pkg: str) -> list[Path]:
    """Source folders of ``vistalab.<pkg>`` (or of ``vistalab`` itself), found through
    static imports (a renamed package breaks this, it is never silently left out)."""
    import vistalab
    from vistalab import figures, paper_checks, sims, theory, workspace

    modules = {"vistalab": vistalab, "theory": theory, "sims": sims, "workspace": workspace,
               "paper_checks": paper_checks, "figures": figures}
    if pkg not in modules:
        raise UnknownNameError("code package", pkg, modules)
    return [Path(p) for p in modules[pkg].__path__ if Path(p).is_dir()]


def package_versions(names: Iterable[str] = PACKAGES) -> dict[str, str | None]:
    """Installed version of each distribution (None when absent)."""
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def git_commit(root: Path | None = None) -> str | None:
    """HEAD commit of the source tree (with ``+dirty`` when it has local changes), or None."""
    cwd = root or _REPO_ROOT
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=10
        )
        if head.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=cwd, capture_output=True, text=True, timeout=10,
        )
        return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def code_fingerprint(packages: Iterable[str] = _CODE_PACKAGES) -> str:
    """sha256 over the Python sources (and data files) of the toolkit's packages.

    Used as the code version in cache keys: any edit to the code that produced a
    result invalidates it, with or without a commit. ``packages`` are names of
    ``vistalab`` subpackages (``"vistalab"`` itself means the application layer's
    own modules); each is found where it is installed, so this works alike from a
    source checkout and from a wheel.
    """
    h = hashlib.sha256()
    for pkg in sorted(packages):
        for base in _package_dirs(pkg):
            for path in sorted(base.rglob("*")):
                if path.suffix not in _CODE_SUFFIXES or "__pycache__" in path.parts:
                    continue
                h.update(f"{pkg}/{path.relative_to(base)}".encode())
                h.update(b"\0")
                h.update(path.read_bytes())
                h.update(b"\0")
    return h.hexdigest()


def provenance(params: dict[str, Any], seed_entropy: int | None = None) -> dict[str, Any]:
    """The JSON sidecar content for a results file."""
    return {
        "params": to_plain(params),
        "seed_entropy": None if seed_entropy is None else str(seed_entropy),
        "created_utc": datetime.now(UTC).isoformat(timespec="seconds"),
        "git_commit": git_commit(),
        "code_fingerprint": code_fingerprint(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": package_versions(),
    }


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically and durably (:func:`vistalab._core.atomic_write`)."""
    return atomic_write(path, data)


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically and durably."""
    return atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_json(path: str | os.PathLike[str], obj: Any) -> Path:
    """Write ``obj`` as indented strict JSON to ``path`` atomically and durably."""
    return atomic_write_text(path, json.dumps(to_plain(obj), indent=2, allow_nan=False) + "\n")
