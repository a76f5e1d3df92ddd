"""Semantic mutants of the engine model, each refuted by a concrete run.

A mutant is a copy of ``theory/coq/engine/Model.v`` with one exact text
substitution (a bug of the kind a real engine could have: the guard admitting
one token too many, a payload filed under the wrong key, a rendering that
drops a message). It is *refuted* when a theorem of ``engine/Statements.v`` is
false for it, shown by a concrete run computed in Coq: the harness writes

    Theorem refuted : ~ (forall <binders>, <statement>).

with the statement copied verbatim from ``Statements.v`` (so the refuted
proposition is exactly the shipped one), proved by the mutant's script
(instantiate the statement on a concrete configuration and operation sequence,
``vm_compute``, contradiction), and compiles it against the mutated
``Model.v`` and the specification's definitions-only files (never the proof
files: a mutant whose proofs merely stop compiling is not refuted). The same
``Refute.v`` must fail against the real ``Model.v``: the run distinguishes the
mutant from the model, whose theorem says the statement holds.

Everything is compiled under the proofs' cache root (``$VISTA_LAB_CACHE/coq``
or ``~/.cache/vista-lab/coq``), keyed by the hash of the sources and coqc's
version, never in the source tree; a re-run reads the recorded verdicts.
The table of mutants is :data:`._engine_mutant_table.MUTANTS`.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from . import _formal
from ._engine_mutant_table import MUTANTS, ModelMutant

__all__ = [
    "MUTANTS",
    "ModelMutant",
    "MutantVerdict",
    "check_mutant",
    "markdown_table",
    "definition_files",
    "mutate",
    "refute_source",
    "statement_proposition",
]

_FLAGS = ["-q", "-R", ".", "VistaLabEngine"]  # the engine build's flags (_formal._engine_rows)
_MODEL = "Model.v"
_PROOF_MARKERS = re.compile(r"\b(Proof|Qed|Defined|Admitted)\s*\.")


@dataclasses.dataclass(frozen=True)
class MutantVerdict:
    """What the harness found for one mutant.

    Attributes
    ----------
    name, theorem : str
        The mutant and the theorem of ``engine/Statements.v`` meant to refute it.
    status : str
        ``"refuted"`` (``Refute.v`` compiles against the mutant and fails against
        the real model), ``"survived"`` (it does not compile against the mutant),
        ``"not-distinguishing"`` (it also compiles against the real model: the run
        does not tell them apart; the model would be inconsistent with its theorem)
        or ``"error"`` (the substitution does not apply, the theorem is not in
        ``Statements.v``, or the definitions did not build).
    detail : str
        The compiler's last lines or the reason, when not refuted.
    """

    name: str
    theorem: str
    status: str
    detail: str = ""

    @property
    def refuted(self) -> bool:
        return self.status == "refuted"


def definition_files(src: Path) -> list[str]:
    """The specification's definitions-only files: the ``_CoqProject`` files other
    than ``Model.v`` and ``Statements.v`` that hold no proof (no ``Proof.`` /
    ``Qed.`` / ``Defined.``), in build order."""
    out = []
    for name in _formal._project_files(src):
        if name in (_MODEL, "Statements.v"):
            continue
        if not _PROOF_MARKERS.search(_strip_comments((src / name).read_text())):
            out.append(name)
    return out


def _strip_comments(text: str) -> str:
    out, depth, i = [], 0, 0
    while i < len(text):
        two = text[i:i + 2]
        if two == "(*":
            depth, i = depth + 1, i + 2
        elif two == "*)" and depth:
            depth, i = depth - 1, i + 2
        else:
            if not depth:
                out.append(text[i])
            i += 1
    return "".join(out)


def statement_proposition(statements: str, theorem: str) -> str:
    """The proposition ``theorem`` states in ``statements`` (the text of
    ``Statements.v``), its binders turned into a ``forall``: the text between
    the name and ``Proof.``, copied verbatim.

    Raises
    ------
    KeyError
        No ``Theorem <name>`` (or ``Lemma``) in the text.
    """
    m = re.search(rf"^(?:Theorem|Lemma)\s+{re.escape(theorem)}\b(.*?)\n\s*Proof\.",
                  statements, re.S | re.M)
    if m is None:
        raise KeyError(theorem)
    head = m.group(1).rstrip()
    if not head.endswith("."):
        raise KeyError(theorem)
    head = head[:-1]
    depth = 0
    for i, ch in enumerate(head):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == ":" and depth == 0 and head[i + 1:i + 2] != "=":
            binders, body = head[:i].strip(), head[i + 1:].strip()
            return f"forall {binders},\n  {body}" if binders else body
    raise KeyError(theorem)


def mutate(model: str, mutant: ModelMutant) -> str:
    """``model`` with the mutant's substitution applied.

    Raises
    ------
    ValueError
        The old text does not occur exactly once in ``model``.
    """
    n = model.count(mutant.old)
    if n != 1:
        raise ValueError(f"mutant {mutant.name!r}: its old text occurs {n} times in Model.v "
                         "(must be exactly once); update the substitution to the model's text")
    return model.replace(mutant.old, mutant.new, 1)


def refute_source(mutant: ModelMutant, statements: str, defs: list[str]) -> str:
    """The text of ``Refute.v`` for ``mutant``: ``~ (the shipped statement)``
    proved by the mutant's script."""
    modules = " ".join(["Model", *(d[:-2] for d in defs)])
    prop = statement_proposition(statements, mutant.theorem)
    # The standard library as Statements.v loads it (its scopes and notations).
    stdlib = "".join(line + "\n" for line in statements.splitlines()
                     if re.fullmatch(r"(From Coq Require Import|Import) [\w. ]+\.", line))
    return (
        "From Coq Require Import List Arith Bool Lia PeanoNat.\n"
        f"{stdlib}{'' if 'Import ListNotations.' in stdlib else 'Import ListNotations.' + chr(10)}"
        f"From VistaLabEngine Require Import {modules}.\n\n"
        f"(* {mutant.name}: {mutant.bug}\n   run: {mutant.run} *)\n"
        f"Theorem refuted : ~ ({prop}).\n"
        f"Proof.\n{mutant.proof.strip()}\nQed.\n"
    )


def _build_defs(src: Path, model: str, defs: list[str], dest: Path | None, root: Path,
                coqc: str, version: str, timeout: float) -> tuple[Path | None, str]:
    """Model.v (the given text) and the definitions-only files, compiled with
    the engine's flags into ``dest``, or (``dest`` None) into a cache folder
    under ``root`` keyed by their hash."""
    stage = Path(tempfile.mkdtemp(prefix="vista-lab-mutant-src-"))
    try:
        shutil.copy2(src / "_CoqProject", stage / "_CoqProject")
        (stage / _MODEL).write_text(model)
        for name in defs:
            shutil.copy2(src / name, stage / name)
        files = [_MODEL, *defs]
        build = dest or root / ("engine-spec-" + _formal._sources_hash(stage, files, version))
        if (build / ".built").exists():
            return build, ""
        err = _formal._compile(stage, files, build, coqc, timeout, flags=_FLAGS)
        return (None, err) if err is not None else (build, "")
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _compiles(build: Path, refute: str, coqc: str, timeout: float) -> tuple[bool, str]:
    work = Path(tempfile.mkdtemp(prefix="vista-lab-refute-"))
    try:
        (work / "Refute.v").write_text(refute)
        try:
            proc = _formal._run([coqc, "-q", "-R", str(build), "VistaLabEngine", "Refute.v"],
                                work, timeout)
        except subprocess.TimeoutExpired:
            return False, f"coqc timed out after {timeout:.0f} s"
        return proc.returncode == 0, (proc.stderr or proc.stdout).strip()[-1500:]
    finally:
        shutil.rmtree(work, ignore_errors=True)


@functools.lru_cache(maxsize=4)
def _coq_version(coqc: str) -> str:
    return subprocess.run([coqc, "--version"], capture_output=True, text=True, timeout=60,
                          check=False).stdout.strip()


def check_mutant(
    mutant: ModelMutant,
    *,
    source_dir: Path | None = None,
    cache_dir: Path | None = None,
    coqc: str | None = None,
    timeout: float = 600.0,
) -> MutantVerdict:
    """Apply ``mutant`` to the model and try its refutation (see the module text).

    Parameters
    ----------
    mutant : ModelMutant
        A row of :data:`MUTANTS`.
    source_dir : Path, optional
        The engine sources (default ``theory/coq/engine`` of the installed package).
    cache_dir : Path, optional
        The cache root (default the proofs' cache root).
    coqc : str, optional
        The compiler (default :func:`._formal.find_coqc`).
    timeout : float
        Seconds per compiler call.

    Returns
    -------
    MutantVerdict
        ``status == "refuted"`` when the run refutes the mutant and not the model.
    """
    src = Path(source_dir) if source_dir is not None else (
        _formal.coq_source_dir() / _formal.ENGINE_DIR)
    root = Path(cache_dir) if cache_dir is not None else _formal._default_cache_root()
    coqc = coqc or _formal.find_coqc()
    if coqc is None:
        return MutantVerdict(mutant.name, mutant.theorem, "error", "coqc is not installed")
    version = _coq_version(coqc)
    model = (src / _MODEL).read_text()
    statements = (src / "Statements.v").read_text()
    try:
        mutated = mutate(model, mutant)
        defs = definition_files(src)
        refute = refute_source(mutant, statements, defs)
    except ValueError as exc:
        return MutantVerdict(mutant.name, mutant.theorem, "error", str(exc))
    except KeyError:
        return MutantVerdict(mutant.name, mutant.theorem, "error",
                             f"no theorem {mutant.theorem} in Statements.v")
    h = hashlib.sha256()
    for part in (version, model, mutated, refute, *((src / d).read_text() for d in defs)):
        h.update(part.encode() + b"\0")
    record = root / "engine-mutants" / f"{mutant.name}-{h.hexdigest()[:20]}.json"
    if record.is_file():
        return MutantVerdict(**json.loads(record.read_text()))
    verdict = _verdict(mutant, src, model, mutated, refute, defs, root, coqc, version, timeout)
    if verdict.status != "error":
        record.parent.mkdir(parents=True, exist_ok=True)
        tmp = record.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(dataclasses.asdict(verdict)))
        tmp.replace(record)
    return verdict


def _verdict(mutant: ModelMutant, src: Path, model: str, mutated: str, refute: str,
             defs: list[str], root: Path, coqc: str, version: str,
             timeout: float) -> MutantVerdict:
    def verdict(status: str, detail: str = "") -> MutantVerdict:
        return MutantVerdict(mutant.name, mutant.theorem, status, detail)

    # The mutant is built privately (two checks of one mutant may run at once) and
    # removed after: its verdict is recorded, not its build.
    root.mkdir(parents=True, exist_ok=True)
    private = Path(tempfile.mkdtemp(prefix="engine-mutant-", dir=root))
    try:
        bad, err = _build_defs(src, mutated, defs, private / "build", root, coqc, version,
                               timeout)
        if bad is None:
            return verdict("error", f"the mutated Model.v does not build: {err}")
        ok, out = _compiles(bad, refute, coqc, timeout)
    finally:
        shutil.rmtree(private, ignore_errors=True)
    if not ok:
        return verdict("survived", out)
    good, err = _build_defs(src, model, defs, None, root, coqc, version, timeout)
    if good is None:
        return verdict("error", f"the real Model.v does not build: {err}")
    ok, out = _compiles(good, refute, coqc, timeout)
    if ok:
        return verdict("not-distinguishing", "Refute.v also compiles against the real model")
    return verdict("refuted")


def markdown_table(mutants: tuple[ModelMutant, ...] = MUTANTS) -> str:
    """The mutants as a Markdown table (mutant, bug, refuting theorem, run), the
    one ``docs/guide/engine-differential.md`` holds verbatim.

    Parameters
    ----------
    mutants : tuple of ModelMutant
        The rows (default :data:`MUTANTS`).

    Returns
    -------
    str
        The table, one line per mutant after the header.
    """
    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    lines = ["| mutant | bug | refuted by | concrete run |", "|---|---|---|---|"]
    for m in mutants:
        lines.append(f"| `{m.name}` | {cell(m.bug)} | `{m.theorem}` | {cell(m.run)} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """``python -m vistalab.theory._proofs._engine_mutants [--table]``: check every
    mutant and print one line each (name, theorem, verdict), exit status 1 when
    one is not refuted; ``--table`` prints :func:`markdown_table` only."""
    import sys

    args = sys.argv[1:] if argv is None else argv
    if args == ["--table"]:
        print(markdown_table(), end="")
        return 0
    bad = 0
    for m in MUTANTS:
        v = check_mutant(m)
        bad += not v.refuted
        print(f"{m.name:40s} {m.theorem:28s} {v.status}", flush=True)
    print(f"{len(MUTANTS) - bad}/{len(MUTANTS)} mutants refuted")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
