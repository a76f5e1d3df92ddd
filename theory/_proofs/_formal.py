"""Formal (Coq) proofs of the paper's theory for every parameter.

The development lives in ``theory/coq`` (shipped as package data of
``vistalab.theory``). :func:`check_formal` compiles it with ``coqc`` into a
cache folder keyed by the hash of the sources (never into the source tree),
runs ``Print Assumptions`` for each main theorem of ``Statements.v`` and
returns one frozen :class:`FormalResult` per theorem. The workspace engine's
Coq model (``theory/coq/engine``: the invariants of the paper's Methodology
proved for every sequence of operations) is compiled and checked the same way,
its theorems listed in :data:`ENGINE_THEOREMS` (result ``"engine"``). Statuses:

* ``proved``      the file compiled and the theorem depends only on the
                  standard axioms of Coq's real numbers, classical logic and
                  extensionality (:data:`STANDARD_AXIOMS`);
* ``failed``      compilation failed, or the theorem depends on anything else
                  (an ``Admitted`` proof, a new axiom);
* ``unavailable`` ``coqc``, mathcomp-ssreflect or mathcomp-analysis is not
                  installed (see :data:`INSTALL_HINT`).

Each row also carries its ``scope`` (:data:`SCOPES`): ``"paper"`` when the Coq
statement is the paper's sentence, or a weaker form (Proposition 2 for a finite
observation alphabet, for any observation under a premise on the divergences
of its finite quantisations, or for an observation in a measurable space under
a premise on its likelihood ratios, kept beside ``proposition2_gaussian``, the
paper's continuous Gaussian channel), or a proof step that is not a result of
the paper.
:data:`COQ_COVERAGE` names, per main result of the Python proof steps, the Coq
theorems that prove its general case.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable, Iterator
from importlib import resources
from pathlib import Path

from ._formal_statements import (  # the statement table, re-exported
    COQ_COVERAGE,
    ENGINE_DIR,
    ENGINE_STATEMENTS_FILE,
    ENGINE_THEOREMS,
    MAIN_THEOREMS,
    SCOPES,
    STATEMENTS_FILE,
    MainTheorem,
)

__all__ = [
    "COQ_COVERAGE",
    "ENGINE_THEOREMS",
    "FORBIDDEN_TOKENS",
    "INSTALL_HINT",
    "MAIN_THEOREMS",
    "SCOPES",
    "STANDARD_AXIOMS",
    "FormalReport",
    "FormalResult",
    "MainTheorem",
    "check_formal",
    "coq_source_dir",
    "find_coqc",
    "forbidden_tokens",
]

INSTALL_HINT = (
    "apt-get install -y coq libcoq-mathcomp-ssreflect libcoq-mathcomp-analysis "
    "(Coq >= 8.16 with mathcomp-ssreflect 1.15 and mathcomp-analysis 0.6)"
)

# Axioms a theorem may depend on and still count as proved: the axioms behind
# Coq's classical real numbers (Coq >= 8.16 builds R from two decidability
# axioms; older versions list the Raxioms/Rdefinitions parameters), classical
# logic, functional/propositional extensionality, proof irrelevance and
# constructive indefinite description; and mathcomp-analysis's classical base
# (``boolp``: its own statements of functional and propositional extensionality
# and constructive indefinite description, and Coq's ``Epsilon`` axiom, Hilbert's
# choice operator), on which its measures and integrals rest.
STANDARD_AXIOMS = frozenset(
    {
        "boolp.functional_extensionality_dep",
        "boolp.propositional_extensionality",
        "boolp.constructive_indefinite_description",
        "Epsilon.epsilon_statement",
        "ClassicalDedekindReals.sig_not_dec",
        "ClassicalDedekindReals.sig_forall_dec",
        "FunctionalExtensionality.functional_extensionality_dep",
        "Classical_Prop.classic",
        "ProofIrrelevance.proof_irrelevance",
        "PropExtensionality.propositional_extensionality",
        "ClassicalEpsilon.constructive_indefinite_description",
        "IndefiniteDescription.constructive_indefinite_description",
    }
)
_STANDARD_PREFIXES = ("Rdefinitions.", "Raxioms.", "ConstructiveCauchyReals.")

# Tokens that must not occur anywhere in the .v sources.
FORBIDDEN_TOKENS = ("Admitted", "admit.", "Axiom", "Parameter", "Conjecture")


@dataclasses.dataclass(frozen=True)
class FormalResult:
    result: str
    theorem: str
    file: str
    statement: str
    assumptions: tuple[str, ...]
    status: str  # "proved" | "failed" | "unavailable"
    scope: str = "paper"  # one of SCOPES

    @property
    def proves_paper_statement(self) -> bool:
        """Proved, and what is proved is the paper's statement (not a weaker form;
        a definitional statement is the paper's own)."""
        return self.status == "proved" and self.scope in ("paper", "definitional")


@dataclasses.dataclass(frozen=True)
class FormalReport:
    results: tuple[FormalResult, ...]
    message: str
    coqc: str | None
    build_dir: str | None
    seconds: float

    @property
    def ok(self) -> bool:
        """No theorem failed (unavailable is not a failure)."""
        return all(r.status != "failed" for r in self.results)

    @property
    def available(self) -> bool:
        return all(r.status != "unavailable" for r in self.results)

    def covers(self, result: str) -> tuple[str, ...] | None:
        """The Coq theorems proving the Python main result ``result`` for every
        parameter, when each is in this report and proved with the paper's
        scope; otherwise None."""
        names = COQ_COVERAGE.get(result)
        if not names:
            return None
        by_name = {r.theorem: r for r in self.results}
        if all(n in by_name and by_name[n].proves_paper_statement for n in names):
            return names
        return None


def coq_source_dir() -> Path:
    """The shipped .v sources (``vistalab/theory/coq``)."""
    return Path(str(resources.files("vistalab.theory") / "coq"))


def find_coqc() -> str | None:
    return os.environ.get("COQC") or shutil.which("coqc")


def _project_files(src: Path) -> list[str]:
    files = []
    for line in (src / "_CoqProject").read_text().splitlines():
        line = line.strip()
        if line.endswith(".v") and not line.startswith("-"):
            files.append(line)
    return files


def forbidden_tokens(src: Path | None = None) -> list[tuple[str, int, str]]:
    """(file, line number, token) for every forbidden token in the .v sources."""
    src = coq_source_dir() if src is None else Path(src)
    hits = []
    for path in sorted([*src.glob("*.v"), *src.glob(f"{ENGINE_DIR}/*.v")]):
        name = path.relative_to(src).as_posix()
        for no, line in enumerate(path.read_text().splitlines(), 1):
            for tok in FORBIDDEN_TOKENS:
                if tok in line:
                    hits.append((name, no, tok))
    return hits


def _sources_hash(src: Path, files: Iterable[str], coq_version: str) -> str:
    h = hashlib.sha256()
    h.update(coq_version.encode())
    for name in ["_CoqProject", *sorted(files)]:
        h.update(name.encode() + b"\0")
        h.update((src / name).read_bytes())
        h.update(b"\0")
    return h.hexdigest()[:20]


def _default_cache_root() -> Path:
    base = os.environ.get("VISTA_LAB_CACHE")
    if base:
        return Path(base) / "coq"
    xdg = os.environ.get("XDG_CACHE_HOME")
    root = Path(xdg) if xdg else Path.home() / ".cache"
    return root / "vista-lab" / "coq"


def _run(cmd: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )


def _all_rows(status: str) -> tuple[FormalResult, ...]:
    return tuple(
        FormalResult(m.result, m.theorem, STATEMENTS_FILE, m.statement, (), status, m.scope)
        for m in MAIN_THEOREMS
    ) + tuple(
        FormalResult(m.result, m.theorem, ENGINE_STATEMENTS_FILE, m.statement, (), status)
        for m in ENGINE_THEOREMS
    )


def _unavailable(message: str, coqc: str | None, t0: float) -> FormalReport:
    rows = _all_rows("unavailable")
    return FormalReport(rows, message, coqc, None, time.perf_counter() - t0)


def _failed(message: str, coqc: str, build: str | None, t0: float) -> FormalReport:
    rows = _all_rows("failed")
    return FormalReport(rows, message, coqc, build, time.perf_counter() - t0)


_COQ_FLAGS = ["-q", "-R", ".", "VistaLab", "-w", "-notation-overridden"]


def _donors(roots: Iterable[Path], version: str) -> list[Path]:
    """Finished builds (by the same coqc) whose compiled files may be reused."""
    out = []
    for root in roots:
        if not root.is_dir():
            continue
        for d in sorted(root.iterdir()):
            built = d / ".built"
            try:
                if built.is_file() and built.read_text() == f"{version}\n":
                    out.append(d)
            except OSError:
                continue
    return out


def _same_prefix(donor: Path, src: Path, files: list[str], upto: int) -> bool:
    """The donor built byte-identical copies of files[0..upto] (in _CoqProject
    order, so each file depends only on earlier ones): its .vo of files[upto]
    is what coqc would produce here."""
    try:
        return all((donor / f).read_bytes() == (src / f).read_bytes()
                   for f in files[: upto + 1]) and (donor / (files[upto][:-2] + ".vo")).is_file()
    except OSError:
        return False


def _compile(
    src: Path,
    files: list[str],
    dest: Path,
    coqc: str,
    timeout: float,
    flags: list[str] | None = None,
    version: str = "",
    donor_roots: Iterable[Path] = (),
) -> str | None:
    """Compile into a fresh temp dir next to dest, then move it into place.
    A file whose sources up to it are byte-identical to those of a finished
    build by the same coqc (``donor_roots``) is copied from it, not recompiled
    (a copy with only Statements.v changed recompiles only that file).
    Concurrent calls for one ``dest`` take turns (a lock file beside it): the
    later ones find the build finished and compile nothing.
    Returns an error message, or None on success."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with _dest_lock(dest):
        if (dest / ".built").exists():
            return None
        return _compile_unlocked(src, files, dest, coqc, timeout, flags, version, donor_roots)


@contextlib.contextmanager
def _dest_lock(dest: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``dest``'s lock file for the block (none where
    the platform has no ``flock``: concurrent builds then both compile, and the
    rename below keeps the first)."""
    try:
        import fcntl
    except ImportError:  # Windows
        yield
        return
    with open(dest.parent / (dest.name + ".lock"), "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _compile_unlocked(
    src: Path,
    files: list[str],
    dest: Path,
    coqc: str,
    timeout: float,
    flags: list[str] | None,
    version: str,
    donor_roots: Iterable[Path],
) -> str | None:
    tmp = Path(tempfile.mkdtemp(prefix=dest.name + ".tmp-", dir=dest.parent))
    donors = _donors(donor_roots, version) if version else []
    try:
        shutil.copy2(src / "_CoqProject", tmp / "_CoqProject")
        for name in files:
            shutil.copy2(src / name, tmp / name)
        for i, name in enumerate(files):
            donor = next((d for d in donors if _same_prefix(d, src, files, i)), None)
            if donor is not None:
                for ext in (".vo", ".vok", ".vos", ".glob"):
                    part = donor / (name[:-2] + ext)
                    if part.is_file():
                        shutil.copy2(part, tmp / part.name)
                continue
            donors = []  # a later file depends on this one: nothing further is reusable
            proc = _run([coqc, *(_COQ_FLAGS if flags is None else flags), name], tmp, timeout)
            if proc.returncode != 0:
                err = (proc.stderr or proc.stdout).strip()
                return f"coqc failed on {name}: {err[-2000:]}"
        (tmp / ".built").write_text(f"{version}\n" if version else "ok\n")
        try:
            tmp.rename(dest)
        except OSError:
            # Another process finished first; its build is identical.
            if not (dest / ".built").exists():
                raise
        return None
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


_SECTIONS = {
    "Axioms:": "",
    "Section Variables:": "section variable ",
    "Opaque constants:": "opaque ",
    "Transparent constants:": "transparent ",
}


def _parse_assumptions(output: str) -> dict[str, tuple[str, ...]]:
    """Split the output of the marker/Print Assumptions script per theorem.
    Axioms are reported by name; anything else (section variables, opaque or
    transparent constants under -type-in-type style options) is prefixed."""
    found: dict[str, list[str]] = {}
    current: str | None = None
    prefix: str | None = None
    for line in output.splitlines():
        if line.startswith("@@theorem "):
            current = line.split(None, 1)[1].strip()
            found[current] = []
            prefix = None
            continue
        if current is None:
            continue
        stripped = line.strip()
        if stripped in _SECTIONS:
            prefix = _SECTIONS[stripped]
            continue
        if stripped.startswith("Closed under the global context"):
            prefix = None
            continue
        if prefix is not None and line and not line[0].isspace():
            name = stripped.split(" :", 1)[0].strip()
            if name:
                found[current].append(prefix + name)
    return {k: tuple(v) for k, v in found.items()}


def _is_standard(name: str) -> bool:
    return name in STANDARD_AXIOMS or name.startswith(_STANDARD_PREFIXES)


def check_formal(
    *,
    source_dir: str | os.PathLike[str] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    timeout: float = 1800.0,
) -> FormalReport:
    """Compile the Coq development (cached by source hash) and check every main
    theorem's assumptions. Never writes into ``source_dir``."""
    t0 = time.perf_counter()
    coqc = find_coqc()
    if coqc is None:
        return _unavailable(f"coqc not found; install Coq: {INSTALL_HINT}", None, t0)
    try:
        where = _run([coqc, "-where"], Path.cwd(), 60).stdout.strip()
        version = _run([coqc, "--version"], Path.cwd(), 60).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        return _unavailable(f"coqc does not run ({exc}); install: {INSTALL_HINT}", coqc, t0)
    for lib in ("ssreflect", "analysis"):
        if not (Path(where) / "user-contrib" / "mathcomp" / lib).is_dir():
            return _unavailable(
                f"mathcomp-{lib} not found under {where}/user-contrib; install: {INSTALL_HINT}",
                coqc,
                t0,
            )

    src = coq_source_dir() if source_dir is None else Path(source_dir)
    files = _project_files(src)
    if STATEMENTS_FILE not in files:
        return _failed(f"{STATEMENTS_FILE} is not listed in {src}/_CoqProject", coqc, None, t0)
    root = _default_cache_root() if cache_dir is None else Path(cache_dir)
    build = root / _sources_hash(src, files, version)

    if not (build / ".built").exists():
        try:
            err = _compile(src, files, build, coqc, timeout, version=version,
                           donor_roots=dict.fromkeys((root, _default_cache_root())))
        except subprocess.TimeoutExpired:
            err = f"coqc timed out after {timeout:.0f} s"
        if err is not None:
            return _failed(err, coqc, None, t0)

    try:
        rows, bad = _assumption_rows(
            build, "VistaLab", MAIN_THEOREMS, STATEMENTS_FILE, coqc, timeout
        )
    except _ProbeError as exc:
        return _failed(str(exc), coqc, str(build), t0)
    engine_rows, engine_bad = _engine_rows(src, root, coqc, version, timeout)
    rows += engine_rows
    bad += engine_bad
    hits = forbidden_tokens(src)
    if hits:
        bad.append(
            "forbidden tokens in sources: "
            + ", ".join(f"{f}:{n} {t}" for f, n, t in hits[:10])
        )
        rows = [dataclasses.replace(r, status="failed") for r in rows]
    n_ok = sum(r.status == "proved" for r in rows)
    message = f"{n_ok}/{len(rows)} formal theorems proved (coqc: {version.splitlines()[0]})"
    # A result with a proved row of the paper's scope is proved; its weaker forms and
    # proof steps are rows of the table, not caveats of the result.
    in_full = {r.result for r in rows if r.status == "proved" and r.scope == "paper"}
    for scope in SCOPES:
        weaker = sorted({r.result for r in rows if r.status == "proved" and r.scope == scope
                         and r.result not in in_full})
        if weaker and scope not in ("paper", "definitional", "proof-step"):
            message += f"; {', '.join(weaker)} proved only in a weaker form: {SCOPES[scope]}"
    if bad:
        message += "; " + "; ".join(bad)
    return FormalReport(tuple(rows), message, coqc, str(build), time.perf_counter() - t0)


class _ProbeError(Exception):
    """Print Assumptions could not run on a build."""


def _assumption_rows(
    build: Path,
    logical: str,
    theorems: tuple[MainTheorem, ...],
    file: str,
    coqc: str,
    timeout: float,
) -> tuple[list[FormalResult], list[str]]:
    """Print Assumptions (cached in the build) for ``theorems`` of the
    ``Statements`` module under ``logical``: one row each, and the problems."""
    cached = build / "assumptions.json"
    if cached.exists():
        per = {k: tuple(v) for k, v in json.loads(cached.read_text()).items()}
    else:
        script = [f"From {logical} Require Import Statements."]
        for m in theorems:
            script.append(f'Goal True. idtac "@@theorem {m.theorem}". Abort.')
            script.append(f"Print Assumptions {m.theorem}.")
        probe = Path(tempfile.mkdtemp(prefix="vista-lab-coq-probe-"))
        try:
            (probe / "PrintAssumptions.v").write_text("\n".join(script) + "\n")
            proc = _run(
                [coqc, "-q", "-R", str(build), logical, "PrintAssumptions.v"], probe, timeout
            )
        except subprocess.TimeoutExpired:
            raise _ProbeError("Print Assumptions timed out") from None
        finally:
            shutil.rmtree(probe, ignore_errors=True)
        if proc.returncode != 0:
            raise _ProbeError(
                f"Print Assumptions failed: {(proc.stderr or proc.stdout).strip()[-2000:]}"
            )
        per = _parse_assumptions(proc.stdout)
        tmp = cached.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps({k: list(v) for k, v in per.items()}, indent=1))
        tmp.replace(cached)

    rows = []
    bad = []
    for m in theorems:
        if m.theorem not in per:
            rows.append(FormalResult(m.result, m.theorem, file, m.statement, (), "failed",
                                     m.scope))
            bad.append(f"{m.theorem}: no Print Assumptions output")
            continue
        assumptions = per[m.theorem]
        extra = [a for a in assumptions if not _is_standard(a)]
        status = "proved" if not extra else "failed"
        if extra:
            bad.append(f"{m.theorem} depends on {', '.join(extra)}")
        rows.append(FormalResult(m.result, m.theorem, file, m.statement, assumptions, status,
                                 m.scope))
    return rows, bad


def _engine_rows(
    src: Path, root: Path, coqc: str, version: str, timeout: float
) -> tuple[list[FormalResult], list[str]]:
    """Compile the engine model (``src/engine``, plain Coq) into its own cache
    folder and check its theorems; a compile failure fails only these rows."""

    def failed(message: str) -> tuple[list[FormalResult], list[str]]:
        rows = [
            FormalResult(m.result, m.theorem, ENGINE_STATEMENTS_FILE, m.statement, (), "failed")
            for m in ENGINE_THEOREMS
        ]
        return rows, [f"engine model: {message}"]

    esrc = src / ENGINE_DIR
    if not (esrc / "_CoqProject").is_file():
        return failed(f"no _CoqProject in {esrc}")
    files = _project_files(esrc)
    if STATEMENTS_FILE not in files:
        return failed(f"{STATEMENTS_FILE} is not listed in {esrc}/_CoqProject")
    build = root / ("engine-proofs-" + _sources_hash(esrc, files, version))
    if not (build / ".built").exists():
        try:
            err = _compile(
                esrc, files, build, coqc, timeout, flags=["-q", "-R", ".", "VistaLabEngine"]
            )
        except subprocess.TimeoutExpired:
            err = f"coqc timed out after {timeout:.0f} s"
        if err is not None:
            return failed(err)
    try:
        return _assumption_rows(
            build, "VistaLabEngine", ENGINE_THEOREMS, ENGINE_STATEMENTS_FILE, coqc, timeout
        )
    except _ProbeError as exc:
        return failed(str(exc))
