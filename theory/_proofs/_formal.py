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
a premise on its likelihood ratios; the paper's continuous Gaussian channel
itself is not formalised), or a proof step that is not a result of the paper.
:data:`COQ_COVERAGE` names, per main result of the Python proof steps, the Coq
theorems that prove its general case.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable
from importlib import resources
from pathlib import Path

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


#: What a proved row establishes: the paper's statement itself, or only the
#: finite-channel form of Proposition 2 (its Gaussian divergence a "<=" premise).
SCOPES = {
    "paper": "the paper's statement",
    "finite-channel": "finite observation alphabet only, with the Gaussian divergence as a "
    "'<=' premise (the paper's continuous Gaussian channel is not formalised)",
    "kl-premise": "any observation, but with the Gaussian divergence of every finite "
    "quantisation as a '<=' premise (unproved for the Gaussian channel)",
    "likelihood-ratio": "any observation in a measurable space (I = sup over finite "
    "measurable quantisations), the divergence of every quantisation proved (data "
    "processing), but each likelihood ratio dP_k/dP_j = exp(-L_jk) with "
    "E_{P_j}[L_jk] <= (ln kappa)^2/sigma^2 is a premise (not proved for the "
    "n-dimensional Gaussian channel)",
    "proof-step": "a step of the proof, not the paper's result",
}


@dataclasses.dataclass(frozen=True)
class MainTheorem:
    result: str
    theorem: str
    statement: str
    scope: str = "paper"


# One row per main theorem of Statements.v. `result` names the paper result.
MAIN_THEOREMS: tuple[MainTheorem, ...] = (
    MainTheorem(
        "lemma1",
        "lemma1_list_fano",
        "J* uniform on [n], U indep. of (J*,Y), any (Y,U)-measurable list of size "
        "1 <= m <= n-1: log2 n - I <= 1 + Pc log2 m + (1-Pc) log2(n-m)",
    ),
    MainTheorem(
        "lemma1",
        "lemma1_any_observation",
        "any observation W (values in any space; I(J*;W) = sup of I(J*;q(W)) over finite "
        "measurable quantisations q), any (W,U)-measurable list of size m: "
        "log2 n - I <= 1 + Pc log2 m + (1-Pc) log2(n-m)",
    ),
    MainTheorem(
        "thm1",
        "theorem1_any_observation",
        "any observation W (values in any space; I(J*;W) = sup over finite measurable "
        "quantisations), any (W,U)-measurable archive order: E[Z] >= kappa [1 - (I+1)/nu]_+",
    ),
    MainTheorem(
        "thm1",
        "theorem1_tradeoff",
        "2 <= kappa < n/2, any finite interface Y, any (Y,U)-measurable archive order: "
        "E[Z] >= kappa [1 - (I+1)/nu]_+, nu = log2((n-kappa)/kappa)",
    ),
    MainTheorem(
        "thm1",
        "theorem1_tail_sum",
        "(B) E[Z] = sum_{m=1}^{kappa} (1 - Pc(m)), Z = min(tau-1, kappa)",
    ),
    MainTheorem(
        "thm1",
        "theorem1_adaptive_prefix",
        "(E) a flag-reading adaptive policy archives exactly a prefix of the fixed "
        "all-'over' order and Z = min(tau-1, kappa)",
    ),
    MainTheorem(
        "thm1",
        "theorem1_adaptive",
        "(E) every adaptive policy obeys E[Z] >= kappa [1 - (I+1)/nu]_+",
    ),
    MainTheorem(
        "thm1",
        "theorem1_batch",
        "(E) a batch policy archiving a (Y,U)-measurable set that clears the overflow almost "
        "surely has E[|S minus J*|] >= kappa [1 - (I+1)/nu]_+",
    ),
    MainTheorem(
        "thm1",
        "theorem1_batch_full_ledger",
        "(E) the full-ledger batch S = {Y} is an instance: it clears the overflow almost "
        "surely (not surely), costs E[|S minus J*|] = 0, and the bound applies",
    ),
    MainTheorem(
        "thm1",
        "theorem1_low_rate",
        "(C)(i) 1 - (I+1)/nu <= E[Z]/kappa <= 1: E[Z]/kappa -> 1 when (I+1)/nu -> 0",
    ),
    MainTheorem(
        "thm1",
        "theorem1_threshold",
        "(C)(ii) E[Z] <= delta kappa implies I >= (1-delta) nu - 1",
    ),
    MainTheorem(
        "thm1",
        "theorem1_price",
        "(C)(iii) E[Z] <= kappa - Delta implies I >= Delta nu / kappa - 1",
    ),
    MainTheorem(
        "thm1",
        "theorem1_unavailable",
        "(C) at most r restorations leave >= [E[Z] - r]_+ blocks unavailable in expectation",
    ),
    MainTheorem(
        "thm1",
        "theorem1_full_ledger",
        "(C)(i) full ledger Y = J* with an archive order putting J* first: I = log2 n "
        "and E[Z] = 0",
    ),
    MainTheorem(
        "thm1",
        "theorem1_full_ledger_order_exists",
        "(C)(i) an injective archive order putting the reported block first exists "
        "(cyclic shift)",
    ),
    MainTheorem(
        "thm1",
        "theorem1_buckets",
        "(D) M balanced buckets of size <= ceil(n/M): E[Z] < n/(2M), I = H(Y) <= log2 M",
    ),
    MainTheorem(
        "thm1",
        "theorem1_buckets_exist",
        "(D) for every 1 <= M <= n a balanced M-bucket interface exists with "
        "E[Z] < n/(2M) and I <= log2 M",
    ),
    MainTheorem(
        "thm1",
        "theorem1_sufficient_rate",
        "(D) any M <= n with M >= n/(2 delta kappa) gives rate I <= log2 M and "
        "E[Z] < delta kappa",
    ),
    MainTheorem(
        "prop1",
        "proposition1",
        "N independent uniform k-bit blocks, any state with H(R) <= B: "
        "Pr[correct] <= B/(Nk) + 1/k",
    ),
    MainTheorem(
        "prop1",
        "proposition1_recovering",
        "payloads in a lossless store read back by h-bit handles, instruction + N handles "
        "+ one block fit in B: the prompt stays within B and the method is correct with "
        "probability 1",
    ),
    MainTheorem(
        "prop1",
        "proposition1_recovering_store",
        "h-bit handles name N blocks apart iff N <= 2^h, and then a lossless store "
        "(archive indexed by the decoded handle) exists",
    ),
    MainTheorem(
        "prop1",
        "proposition1_k_ceil_sqrt",
        "asymptotic separation: k = ceil(sqrt N), i.e. k - 1 < sqrt N <= k",
    ),
    MainTheorem(
        "prop1",
        "proposition1_separation_feasible",
        "asymptotic separation (i): 0 <= c0 < c, k = ceil(sqrt N), B = c N log2 N: "
        "c0 N log2 N + s0 + k <= B for all large N (VISTA stays feasible)",
    ),
    MainTheorem(
        "prop1",
        "proposition1_separation_lossy",
        "asymptotic separation (ii): k = ceil(sqrt N), B = c N log2 N: "
        "B/(Nk) + 1/k -> 0 as N -> oo",
    ),
    MainTheorem(
        "prop1",
        "proposition1_separation_rate",
        "asymptotic separation: c > 0, N >= 2: (c/2) log2 N / sqrt N <= B/(Nk) + 1/k "
        "<= (c+1) log2 N / sqrt N, i.e. Theta(log N / sqrt N)",
    ),
    MainTheorem(
        "prop1",
        "proposition1_separation",
        "asymptotic separation: for all large N the recovering method fits floor(B) and "
        "Pr[correct] = 1, every lossy method has Pr[correct] <= eps, and "
        "1 - (B/(Nk) + 1/k) -> 1 (the gap tends to 1)",
    ),
    MainTheorem(
        "prop2",
        "proposition2_mixture",
        "finite W: I(J*;W) = 1/(n ln 2) sum_j KL(P_j || Pbar)",
        "finite-channel",
    ),
    MainTheorem(
        "prop2",
        "proposition2_content",
        "finite W only, premise KL(P_j||P_k) <= (ln kappa)^2/sigma^2 for j != k: "
        "I(J*;W) <= (log2 kappa)^2 ln 2 / sigma^2 (not the continuous Gaussian channel)",
        "finite-channel",
    ),
    MainTheorem(
        "prop2",
        "proposition2_any_observation",
        "any observation W (I = sup over finite quantisations), premise: every finite "
        "quantisation has KL(P_j||P_k) <= (ln kappa)^2/sigma^2: "
        "I(J*;W) <= (log2 kappa)^2 ln 2 / sigma^2",
        "kl-premise",
    ),
    MainTheorem(
        "prop2",
        "kl_data_processing",
        "Q = exp(-L) P with L P-integrable: every finite measurable quantisation q has "
        "KL(q#P || q#Q) <= E_P[L] (data processing of the divergence, any measurable space)",
        "proof-step",
    ),
    MainTheorem(
        "prop2",
        "proposition2_measurable",
        "W in any measurable space (I = sup over finite measurable quantisations), premise "
        "dP_k/dP_j = exp(-L_jk) with E_{P_j}[L_jk] <= (ln kappa)^2/sigma^2 for j != k: "
        "I(J*;W) <= (log2 kappa)^2 ln 2 / sigma^2 (the Gaussian channel's likelihood "
        "ratio and its mean are not formalised)",
        "likelihood-ratio",
    ),
    MainTheorem(
        "prop2-tight",
        "proposition2_measurable_tight",
        "W in any measurable space, same premise: "
        "I(J*;W) <= (1-1/n) (log2 kappa)^2 ln 2 / sigma^2 (Step 3's n(n-1)/n^2 kept)",
        "likelihood-ratio",
    ),
    MainTheorem(
        "prop2-tight",
        "proposition2_tight",
        "finite W, every Q covering Pbar: I(J*;W) <= 1/(n ln 2) sum_j KL(P_j || Q)",
        "finite-channel",
    ),
    MainTheorem(
        "prop2-tight",
        "proposition2_tight_gaussian",
        "finite W only, premise KL(P_j||Q) <= (1-1/n)(ln kappa)^2/(2 sigma^2): "
        "I <= (1-1/n) ln 2 (log2 kappa)^2 / (2 sigma^2) (not the continuous Gaussian channel)",
        "finite-channel",
    ),
    MainTheorem(
        "frontier",
        "frontier_rank",
        "any (Y,U)-measurable order: I(J*;Y) >= log2 n - H(rank)",
    ),
    MainTheorem(
        "frontier",
        "frontier_gibbs_maxent",
        "the Gibbs law p_r ~ exp(-lambda c_r), lambda >= 0, maximises entropy among laws "
        "with mean cost at most its own",
    ),
    MainTheorem(
        "frontier",
        "frontier_converse_gibbs",
        "c_r = min(r-1, kappa): E[Z] <= D_lambda implies I(J*;Y) >= log2 n - H(g_lambda)",
    ),
    MainTheorem(
        "frontier",
        "frontier_achievable",
        "every rank law p is attained (cyclic-shift interface): I = log2 n - H(p), "
        "E[Z] = sum_r p_r min(r-1, kappa)",
    ),
)

STATEMENTS_FILE = "Statements.v"

#: Per main result of the Python proof steps (theory/_proofs/_registry.MAIN_RESULTS),
#: the Coq theorems of Statements.v that prove it for every parameter. A Python
#: chain whose weakest link is finite is "proved in Coq; checked in Python" when
#: these are proved with the paper's scope. Proposition 2 is absent on purpose:
#: Coq proves only its finite-channel form (scope "finite-channel").
COQ_COVERAGE: dict[str, tuple[str, ...]] = {
    "prop1": ("proposition1", "proposition1_recovering", "proposition1_recovering_store",
              "proposition1_separation"),
    "lemma1": ("lemma1_list_fano", "lemma1_any_observation"),
    "thm1.A": ("lemma1_list_fano", "theorem1_tradeoff"),
    "thm1.B": ("theorem1_tradeoff", "theorem1_tail_sum", "theorem1_any_observation"),
    "thm1.C": ("theorem1_low_rate", "theorem1_threshold", "theorem1_price",
               "theorem1_unavailable", "theorem1_full_ledger"),
    "thm1.D": ("theorem1_buckets", "theorem1_buckets_exist", "theorem1_sufficient_rate"),
    "thm1.E": ("theorem1_adaptive_prefix", "theorem1_adaptive", "theorem1_batch",
               "theorem1_batch_full_ledger"),
}

# The engine model's theorems (theory/coq/engine/Statements.v), one per
# workspace invariant of the paper, named after vistalab.workspace.INVARIANTS.
ENGINE_DIR = "engine"
ENGINE_STATEMENTS_FILE = "engine/Statements.v"
ENGINE_THEOREMS: tuple[MainTheorem, ...] = (
    MainTheorem(
        "engine",
        "workspace_budget",
        "budget: |C_t| <= B after preflight and final assembly -- for every sequence of "
        "operations, the management floor (fixed overhead + pinned + worst-case management "
        "dashboard) stays <= B and every rendering, ordinary or management, fits B",
    ),
    MainTheorem(
        "engine",
        "workspace_protocol",
        "protocol: tool results stay linked to their calls and archived results render in "
        "protocol-valid form -- every rendering satisfies the OpenAI pairing rule and, as an "
        "Anthropic request, alternates user/assistant with each tool_use answered by the "
        "tool_results leading the next user turn and every tool_use id unique in the request "
        "(a reused call id renamed per assistant turn)",
    ),
    MainTheorem(
        "engine",
        "workspace_recoverability",
        "recoverability: archived payload bytes remain recoverable unless the agent "
        "explicitly deletes them -- recover returns the registered bytes of every live block "
        "(in the prompt, archived, offloaded or inside nested groups)",
    ),
    MainTheorem(
        "engine",
        "workspace_stable_ids",
        "stable_ids: every actionable unit has a stable block ID or handle -- IDs are B1..Bn "
        "in registration order, never change meaning, and no block or group ID is reused",
    ),
    MainTheorem(
        "engine",
        "workspace_dashboard",
        "dashboard: the dashboard reports the same token estimates used by these checks -- "
        "overhead + conversation + dashboard = the total preflight compares with B = the "
        "ordinary rendering's cost",
    ),
)


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
        """Proved, and what is proved is the paper's statement (not a weaker form)."""
        return self.status == "proved" and self.scope == "paper"


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
    Returns an error message, or None on success."""
    dest.parent.mkdir(parents=True, exist_ok=True)
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
    for scope in SCOPES:
        weaker = sorted({r.result for r in rows if r.status == "proved" and r.scope == scope})
        if weaker and scope != "paper":
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
