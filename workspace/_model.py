"""The executable Coq model of this engine: built on demand, run on operation lines.

The model (``theory/coq/engine/Model.v``, shipped as data of
``vistalab.theory.coq``) is compiled with ``coqc`` together with its theorems,
extracted to OCaml and linked with a small reader (``main.ml``) by ``ocamlopt``
into a cache folder keyed by the hash of the sources and the tool versions
(the same cache root as the theory's proofs). The input and output formats are
in ``theory/coq/engine/FORMAT.md``.

The sources are found as files, beside this package (``vistalab/workspace`` and
``vistalab/theory`` are siblings both in the source tree and in an installed
wheel), so this module imports nothing from the theory layer.
"""

from __future__ import annotations

import hashlib
import numbers
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from vistalab._core import VistaLabError

__all__ = [
    "ENGINE_MODEL_INSTALL_HINT",
    "EngineModelUnavailableError",
    "EngineModelBuildError",
    "engine_model_sources",
    "build_engine_model",
    "run_engine_model",
]

#: What to install when ``coqc`` or ``ocamlopt`` is missing (Debian/Ubuntu).
ENGINE_MODEL_INSTALL_HINT = "apt-get install -y coq ocaml-nox (Coq >= 8.16, OCaml 4.13)"

_EXE = "vista-engine-model"
_EXTRA = ("Extract.v", "main.ml")


class EngineModelUnavailableError(VistaLabError, RuntimeError):
    """A tool the model's executable needs (``coqc``, ``ocamlopt``) is not installed.

    Parameters
    ----------
    tool : str
        The missing command (kept as the attribute ``tool``).
    detail : str
        Why it is unusable (default: not on PATH).
    """

    def __init__(self, tool: str, detail: str = "") -> None:
        self.tool = tool
        super().__init__(
            f"the engine model needs {tool!r}, which {detail or 'is not on PATH'}; "
            f"install it: {ENGINE_MODEL_INSTALL_HINT}"
        )


class EngineModelBuildError(VistaLabError, RuntimeError):
    """The model's sources did not compile (a proof or the extraction failed).

    Parameters
    ----------
    step : str
        The file or command that failed (kept as the attribute ``step``).
    output : str
        The tool's output (kept as the attribute ``output``).
    """

    def __init__(self, step: str, output: str) -> None:
        self.step = step
        self.output = output
        super().__init__(f"building the engine model failed at {step}: {output[-2000:]}")


def engine_model_sources() -> Path:
    """The folder holding ``Model.v``, its theorems, ``Extract.v`` and ``main.ml``.

    Returns
    -------
    Path
        ``theory/coq/engine`` beside this package (in the source tree or the wheel).
    """
    return Path(__file__).resolve().parent.parent / "theory" / "coq" / "engine"


def _project_files(src: Path) -> list[str]:
    out = []
    for line in (src / "_CoqProject").read_text().splitlines():
        line = line.strip()
        if line.endswith(".v") and not line.startswith("-"):
            out.append(line)
    return out


def _tool(env: str, name: str) -> str:
    path = os.environ.get(env) or shutil.which(name)
    if path is None:
        raise EngineModelUnavailableError(name)
    return path


def _version(cmd: list[str]) -> str:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        raise EngineModelUnavailableError(cmd[0], f"does not run ({exc})") from None
    return (proc.stdout or proc.stderr).strip()


def _cache_root() -> Path:
    base = os.environ.get("VISTA_LAB_CACHE")
    if base:
        return Path(base) / "coq"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "vista-lab" / "coq"


def _digest(src: Path, files: Iterable[str], versions: Iterable[str]) -> str:
    h = hashlib.sha256()
    for v in versions:
        h.update(v.encode() + b"\0")
    for name in ["_CoqProject", *files]:
        h.update(name.encode() + b"\0" + (src / name).read_bytes() + b"\0")
    return h.hexdigest()[:20]


def _run(cmd: list[str], cwd: Path, timeout: float, step: str) -> None:
    try:
        proc = subprocess.run(
            cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        raise EngineModelBuildError(step, f"timed out after {timeout:.0f} s") from None
    if proc.returncode != 0:
        raise EngineModelBuildError(step, (proc.stderr or proc.stdout).strip())


def _timeout_iv(timeout: Any) -> float:
    """Seconds allowed for a tool call: a finite positive number (at most a day)."""
    from ._errors import WorkspaceArgumentError

    ok = isinstance(timeout, numbers.Real) and not isinstance(timeout, bool)
    if ok:
        try:
            ok = 0 < float(timeout) <= 86_400
        except (OverflowError, ValueError):
            ok = False
    if not ok:
        raise WorkspaceArgumentError("timeout", timeout, "must be a number of seconds with "
                                     "0 < timeout <= 86400", "pass e.g. timeout=600")
    return float(timeout)


def _path_iv(name: str, value: Any) -> Path | None:
    """An optional folder or file argument: None, or a str/PathLike without NUL."""
    from ._errors import WorkspaceArgumentError

    if value is None:
        return None
    if not isinstance(value, (str, os.PathLike)) or isinstance(os.fspath(value), bytes):
        raise WorkspaceArgumentError(name, value, "must be a path (str or os.PathLike)",
                                     f"pass {name} as a path, or omit it")
    text = os.fspath(value)
    if not text or "\0" in text or len(text) > 4096:
        raise WorkspaceArgumentError(name, value, "must be a non-empty path of at most 4096 "
                                     "characters without NUL", f"pass {name} as a real path")
    return Path(text)


def _lines_iv(lines: Any) -> str:
    """The model's stdin: every line a str without an inner newline."""
    from ._errors import WorkspaceArgumentError

    if isinstance(lines, (str, bytes)) or not isinstance(lines, Iterable):
        raise WorkspaceArgumentError("lines", lines, "must be an iterable of operation lines "
                                     "(str), not one text", "pass e.g. text.splitlines()")
    out = []
    for i, line in enumerate(lines):
        if not isinstance(line, str) or "\n" in line.rstrip("\n") or "\0" in line:
            raise WorkspaceArgumentError("lines", line, f"must hold one operation per str "
                                         f"(line {i} is not a str of one line)",
                                         "see theory/coq/engine/FORMAT.md")
        out.append(line.rstrip("\n") + "\n")
    return "".join(out)


def build_engine_model(
    *,
    source_dir: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    timeout: float = 600.0,
) -> Path:
    """Compile the Coq model and its theorems, extract it and link the executable.

    Cached: a second call with the same sources and tools returns at once.
    Never writes into ``source_dir``.

    Parameters
    ----------
    source_dir : path, optional
        The model's sources (default :func:`engine_model_sources`); a copy with
        a broken proof fails here.
    cache_dir : path, optional
        Where builds go (default ``$VISTA_LAB_CACHE/coq`` or
        ``~/.cache/vista-lab/coq``, the proofs' cache).
    timeout : float
        Seconds allowed per compiler call.

    Returns
    -------
    Path
        The executable: operation lines on stdin, one observation per line on stdout.

    Raises
    ------
    WorkspaceArgumentError
        ``source_dir`` or ``cache_dir`` is not a path, or ``timeout`` is not a
        positive number of seconds (at most a day).
    EngineModelUnavailableError
        ``coqc`` or ``ocamlopt`` is missing (the message names it and how to install).
    EngineModelBuildError
        A file did not compile (for instance a theorem whose proof is broken).
    """
    source = _path_iv("source_dir", source_dir)
    cache = _path_iv("cache_dir", cache_dir)
    timeout = _timeout_iv(timeout)
    coqc = _tool("COQC", "coqc")
    ocamlopt = _tool("OCAMLOPT", "ocamlopt")
    versions = [_version([coqc, "--version"]), _version([ocamlopt, "-version"])]
    src = engine_model_sources() if source is None else source
    if not (src / "_CoqProject").is_file():
        raise EngineModelBuildError("sources", f"no _CoqProject in {src}")
    files = _project_files(src)
    root = _cache_root() if cache is None else cache
    dest = root / f"engine-{_digest(src, [*files, *_EXTRA], versions)}"
    exe = dest / _EXE
    if exe.is_file():
        return exe
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=dest.name + ".tmp-", dir=root))
    try:
        for name in ["_CoqProject", *files, *_EXTRA]:
            shutil.copy2(src / name, tmp / name)
        flags = ["-q", "-R", ".", "VistaLabEngine"]
        for name in [*files, "Extract.v"]:
            _run([coqc, *flags, name], tmp, timeout, name)
        _run([ocamlopt, "model.mli", "model.ml", "main.ml", "-o", _EXE], tmp, timeout, "ocamlopt")
        try:
            tmp.rename(dest)
        except OSError:
            # Another process finished first; its build is the same.
            if not exe.is_file():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return exe


def run_engine_model(lines: Iterable[str], *, executable: str | os.PathLike[str] | None = None,
                     timeout: float = 600.0) -> list[str]:
    """Run the model on operation lines; one observation line per operation line.

    Parameters
    ----------
    lines : iterable of str
        Operations in the format of ``FORMAT.md`` (no newlines inside a line).
    executable : path, optional
        A built executable (default: :func:`build_engine_model`).
    timeout : float
        Seconds allowed for the run.

    Returns
    -------
    list of str
        The observations, in order (blank and ``#`` lines produce none; no
        line at all builds nothing and returns ``[]``).

    Raises
    ------
    WorkspaceArgumentError
        ``lines`` is one text rather than an iterable of lines, or holds a line
        with an inner newline; ``executable`` is not a file; ``timeout`` is not
        a positive number of seconds (at most a day).
    EngineModelBuildError
        The run failed or outlived ``timeout``.
    """
    text = _lines_iv(lines)
    given = _path_iv("executable", executable)
    timeout = _timeout_iv(timeout)
    if given is not None and not given.is_file():
        from ._errors import WorkspaceArgumentError

        raise WorkspaceArgumentError("executable", executable, "must be a built model "
                                     "executable (a regular file)",
                                     "pass the path build_engine_model() returned, or omit it")
    if not text:
        return []  # no operation, no observation (and nothing to build)
    exe = build_engine_model() if given is None else given
    try:
        proc = subprocess.run(
            [str(exe)], input=text, capture_output=True, text=True, timeout=timeout,
            check=False
        )
    except subprocess.TimeoutExpired:
        raise EngineModelBuildError(str(exe), f"timed out after {timeout:g} s") from None
    except OSError as exc:
        raise EngineModelBuildError(str(exe), f"does not run ({exc.strerror or exc})") from None
    if proc.returncode != 0:
        raise EngineModelBuildError(str(exe), proc.stderr or f"exit status {proc.returncode}")
    return proc.stdout.splitlines()
