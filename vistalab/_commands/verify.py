"""``vista-lab verify``: run every machine-checked proof step of the paper's
Appendices B-D and print the tightness findings."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import Any

from vistalab import theory

from .._output import emit_json, emit_table, to_plain

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "verify",
        help="certify every proof step (sympy, Shannon LP, interval, enumeration, Hypothesis)",
        description=(
            "Run every named proof step of Proposition 1, Proposition 2 (and its tighter "
            "variant), Lemma 1 and Theorem 1 parts A-E. Each step is certified by a method "
            "that can fail: sympy identity or non-negativity certificate, an LP prover of "
            "Shannon-type inequalities with exact rational certificates, arb interval "
            "branch and bound, exhaustive enumeration, or Hypothesis. Each step states its "
            "generality: 'all' (proved for every parameter), 'finite' (checked on a stated "
            "finite domain) or 'sampled' (random examples); only 'all' is a proof. Without "
            "--only, the steps' premises must link every main result into a closed chain. "
            "Exit status 0 only if every step passes, every chain is closed and (without "
            "--only) every tightness row holds."
        ),
    )
    parser.add_argument(
        "target", nargs="?", default=None, metavar="TARGET",
        help="'engine': instead of the proof steps, test the workspace engine against its "
        "executable Coq model on random operation sequences (differential testing)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--sequences", metavar="N", default=None,
        help="verify engine: random operation sequences to run (default 200)",
    )
    parser.add_argument(
        "--seed", metavar="S", default=None,
        help="verify engine: Hypothesis seed of the sequences (default 0)",
    )
    parser.add_argument(
        "--max-ops", dest="max_ops", metavar="N", default=None,
        help="verify engine: longest sequence, in operations (default 30)",
    )
    parser.add_argument(
        "--only",
        metavar="PATTERN",
        default=None,
        help="run only steps whose claim, step name, claim:step or method matches PATTERN: "
        "a glob ('thm1.*', '*fano*'), else an exact name ('prop2', 'lp-shannon'), else a "
        "substring ('fano'); skips the tightness findings",
    )
    parser.add_argument(
        "--details", action="store_true", help="add the certificate detail column to the table"
    )
    parser.add_argument(
        "--list", action="store_true",
        help="list the steps (claim, step, method, generality, domain) only"
    )
    parser.add_argument(
        "--no-formal",
        action="store_true",
        help="skip the Coq development (formal proofs for every parameter)",
    )
    parser.set_defaults(func=run, _parser=parser)


_ENGINE_OPTIONS = (("sequences", "--sequences"), ("seed", "--seed"), ("max_ops", "--max-ops"))
_TARGETS = ("engine",)


def run(args: argparse.Namespace) -> int:
    target = getattr(args, "target", None)
    if target is not None:
        if target not in _TARGETS:
            from vistalab._core import UnknownNameError

            raise UnknownNameError("TARGET", str(target), _TARGETS)
        return _run_engine(args)
    for name, flag in _ENGINE_OPTIONS:
        if getattr(args, name, None) is not None:
            raise theory.DomainError(
                flag.lstrip("-"), getattr(args, name),
                "applies only to `vista-lab verify engine`",
                f"run `vista-lab verify engine {flag} ...`",
            )
    if args.list:
        steps = theory.list_steps(args.only)
        if args.only is not None and not steps:
            theory.certify_all(args.only)  # raises the DomainError naming the choices
        if args.json:
            emit_json({"steps": [_step_row(s) for s in steps], "count": len(steps)})
        else:
            emit_table(
                ["claim", "step", "method", "generality", "domain"],
                [
                    [_esc(v) for v in (s.claim, s.name, s.method, s.generality, s.domain)]
                    for s in steps
                ],
                title=f"{len(steps)} proof steps",
            )
        return 0

    if args.only is not None and not theory.list_steps(args.only):
        return _run_formal_only(args)
    report = _certify_with_progress(args.only)
    tightness = None
    if args.only is None and hasattr(theory, "tightness_report"):
        tightness = theory.tightness_report()
    tight_ok = tightness is None or bool(getattr(tightness, "holds", True))
    formal = _formal_report(args)
    formal_ok = formal is None or formal.ok
    verdicts = {ch.result: _chain_verdict(ch, report, formal) for ch in report.chains}

    if args.json:
        emit_json(
            {
                "steps": [_cert_row(c) for c in report.steps],
                "passed": report.passed,
                "failed": report.failed,
                "seconds": round(report.seconds, 3),
                "generality": report.generality_counts(),
                "chains": [_chain_row(c, verdicts[c.result]) for c in report.chains],
                "only": args.only,
                "tightness": None if tightness is None else to_plain(tightness),
                "formal": [] if formal is None else [_formal_row(r) for r in formal.results],
                "formal_message": None if formal is None else formal.message,
            }
        )
    else:
        _print_human(report, tightness, verdicts, details=args.details)
        if formal is not None:
            _print_formal(formal)
        sys.stdout.write(_summary(report, tightness, tight_ok, formal) + "\n")
    return 0 if report.ok and tight_ok and formal_ok else 1


def _summary(report: Any, tightness: Any, tight_ok: bool, formal: Any) -> str:
    """The run in one plain sentence, the last line of the human output."""
    closed = sum(ch.status == "closed" for ch in report.chains)
    parts = [f"{report.passed} of {report.passed + report.failed} proof steps passed"]
    if report.chains:
        parts.append(f"{closed} of {len(report.chains)} chains closed")
    if tightness is not None:
        parts.append("the tightness findings hold" if tight_ok
                     else "a tightness finding does not hold")
    if formal is None:
        parts.append("Coq not run (--no-formal)")
    else:
        proved = sum(r.status == "proved" for r in formal.results)
        parts.append(f"{proved} of {len(formal.results)} Coq theorems proved")
    ok = report.ok and tight_ok and (formal is None or formal.ok)
    return f"verify: {'; '.join(parts)}: {'all pass' if ok else 'NOT all pass (exit 1)'}."


def _run_engine(args: argparse.Namespace) -> int:
    """``vista-lab verify engine``: the differential test of the workspace engine
    against its Coq model, one line per divergence, exit 1 if any."""
    from importlib.resources import files
    from pathlib import Path

    from vistalab import workspace
    from vistalab.examples import traces

    from ._args import parse_int

    for name, flag in (("only", "--only"),):
        if getattr(args, name, None) is not None:
            raise theory.DomainError(
                name, getattr(args, name), "does not apply to `vista-lab verify engine`",
                f"drop {flag}",
            )
    sequences = 200 if args.sequences is None else parse_int("sequences", args.sequences, lo=0)
    seed = 0 if args.seed is None else parse_int("seed", args.seed, lo=0)
    max_ops = 30 if args.max_ops is None else parse_int("max-ops", args.max_ops, lo=1)
    folder = Path(str(files(traces)))
    shipped = sorted(
        str(p) for p in folder.iterdir() if p.suffix in (".json", ".jsonl")
    )
    # The conformance suite's request checker judges every rendering of the model
    # too: the model's proved protocol rules and the suite's agree.
    from vistalab.conformance import request_problems

    report = workspace.differential_test(
        sequences=sequences, seed=seed, max_ops=max_ops, traces=shipped,
        request_check=request_problems,
    )
    if args.json:
        emit_json(report.to_dict())
    else:
        out = sys.stdout
        for d in report.divergences:
            out.write(f"DIVERGENCE {d.line()}\n")
        model = report.model if report.model_available else report.model
        out.write(
            f"{len(report.divergences)} divergences: {report.sequences} sequences "
            f"({report.modelled} compared with the Coq model line by line, "
            f"{report.modelled_prefix} of them only up to a point the model does not "
            f"describe; all with the recount checks), {report.traces} "
            f"trace runs, {report.operations} operations in {report.seconds:.1f} s; "
            f"{report.requests_checked} requests built from the model's renderings "
            f"accepted by the conformance checkers; seed {report.seed}; model: {model}\n"
        )
        for name, c in report.configurations.items():
            out.write(
                f"  {name}: {c['sequences']} sequences, {c['compared_whole']} compared whole "
                f"with the model and the texts written from it, {c['compared_prefix']} up to "
                f"the first state the model does not describe, {c['recount_only']} with the "
                "recount checks only\n"
            )
    if not report.model_available:
        return 1  # without the model the differential test did not run
    return 0 if report.ok else 1


def _run_formal_only(args: argparse.Namespace) -> int:
    """``--only`` naming Coq results or theorems (``engine``, ``workspace_*``) and no
    proof step: the formal rows alone. A pattern that names neither is refused
    with the choices."""
    formal = _formal_report(args)
    if formal is None:
        from vistalab.theory._proofs import _formal

        formal_names = sorted(
            {m.result for m in (*_formal.MAIN_THEOREMS, *_formal.ENGINE_THEOREMS)}
        )
        try:
            theory.certify_all(args.only)
        except theory.DomainError as exc:
            raise theory.DomainError(
                "only", args.only,
                "must match a proof step, claim or method, or a Coq result or theorem",
                f"{exc.fix}; or Coq results {', '.join(formal_names)}",
            ) from None
    if args.json:
        emit_json({"steps": [], "passed": 0, "failed": 0, "only": args.only,
                   "formal": [_formal_row(r) for r in formal.results],
                   "formal_message": formal.message})
    else:
        _print_formal(formal)
    return 0 if formal.ok else 1


def _certify_with_progress(only: str | None) -> theory.VerificationReport:
    """``theory.certify_all(only)``, advancing a progress bar on stderr per step
    (shown only on a terminal)."""
    from .._reproduce import RichProgress

    steps = theory.list_steps(only)
    if not steps or not sys.stderr.isatty():
        # No bar to show (or no steps: certify_all raises the error naming the choices).
        return theory.certify_all(only)
    with RichProgress(sys.stderr).stage("proof steps", len(steps)) as bar:
        return theory.certify_all(only, progress=lambda c: bar.advance(f"{c.claim}:{c.step}"))


_FORMAL_KEYS = ("result", "theorem", "file", "statement", "assumptions", "status", "scope")


def _formal_report(args: argparse.Namespace) -> Any:
    """The Coq check (cached by source hash), or None when skipped: --no-formal,
    or --only with a pattern that names no formal result or theorem."""
    if getattr(args, "no_formal", False):
        return None
    from vistalab.theory._proofs import _formal

    if args.only is not None:
        import fnmatch

        theorems = (*_formal.MAIN_THEOREMS, *_formal.ENGINE_THEOREMS)
        names = {m.result for m in theorems} | {m.theorem for m in theorems}
        if not any(fnmatch.fnmatch(n, args.only) or n == args.only for n in names):
            return None
        report = _formal.check_formal()
        keep = tuple(
            r for r in report.results
            if fnmatch.fnmatch(r.result, args.only) or fnmatch.fnmatch(r.theorem, args.only)
        )
        return dataclasses.replace(report, results=keep)
    return _formal.check_formal()


def _formal_row(r: Any) -> dict[str, Any]:
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in
            ((k, getattr(r, k)) for k in _FORMAL_KEYS)}


def _formal_status(r: Any) -> str:
    """PROVED only for the paper's statement; a weaker proved form says which."""
    if r.status == "proved" and r.scope == "proof-step":
        return "PROVED (a proof step, not the result)"
    if r.status == "proved" and r.scope == "definitional":
        return "PROVED (definitional)"
    if r.status == "proved" and r.scope != "paper":
        return f"PROVED ({r.scope} form only)"
    return str(r.status).upper()


def _print_formal(formal: Any) -> None:
    rows = [
        [_esc(r.result), _esc(r.theorem), _esc(r.file), _esc(r.statement),
         _esc(", ".join(a.rsplit(".", 1)[-1] for a in r.assumptions) or "none"),
         _formal_status(r)]
        for r in formal.results
    ]
    emit_table(list(_FORMAL_KEYS[:-1]), rows, title="Formal proofs (Coq, every parameter)")
    sys.stdout.write(formal.message + "\n")


def _step_row(s: theory.Step) -> dict[str, Any]:
    return {
        "claim": s.claim,
        "step": s.name,
        "method": s.method,
        "domain": s.domain,
        "statement": s.statement,
        "ref": s.ref,
        "generality": s.generality,
        "premises": list(s.premises),
        "concludes": list(s.concludes),
    }


def _chain_row(c: theory.ChainResult, verdict: str) -> dict[str, Any]:
    return {
        "result": c.result,
        "status": c.status,
        "generality": c.generality,
        "conclusions": list(c.conclusions),
        "steps": len(c.steps),
        "weakest": list(c.weakest),
        "detail": c.detail,
        "coq": list(c.coq),
        "verdict": verdict,
    }


def _chain_verdict(ch: theory.ChainResult, report: theory.VerificationReport,
                   formal: Any) -> str:
    """What the chain and the Coq development together establish, in words: a
    finite or sampled Python chain is "proved in Coq; checked in Python on ..."
    only when the Coq theorems covering the result were proved here with the
    paper's scope."""
    if not ch.closed:
        return "broken"
    if ch.generality == "all":
        return "proved in Python for all parameters"
    doms = {c.key: " ".join(c.domain.split()) for c in report.steps}
    where = "; ".join(f"{k} on {doms.get(k, '?')}" for k in ch.weakest)
    covered = None if formal is None else formal.covers(ch.result)
    if covered:
        return f"proved in Coq ({', '.join(covered)}); checked in Python: {where}"
    how = "checked" if ch.generality == "finite" else "sampled"
    if ch.coq:
        why = ("Coq not run" if formal is None or not formal.available
               else "its Coq theorems are not all proved")
        return f"{how} in Python: {where} (not a proof: {why})"
    return f"{how} in Python: {where} (not a proof)"


def _cert_row(c: theory.StepCertificate) -> dict[str, Any]:
    return {
        "claim": c.claim,
        "step": c.step,
        "method": c.method,
        "domain": c.domain,
        "status": c.status,
        "detail": c.detail,
        "statement": c.statement,
        "ref": c.ref,
        "seconds": round(c.seconds, 4),
        "generality": c.generality,
        "premises": list(c.premises),
        "concludes": list(c.concludes),
    }


#: A passed step's status word says how far the pass reaches.
_PASS_WORDS = {"all": "PROVED", "finite": "CHECKED", "sampled": "SAMPLED"}


def _status_word(c: theory.StepCertificate) -> str:
    if not c.passed:
        return "FAIL"
    return _PASS_WORDS.get(c.generality, "CHECKED")


def _esc(v: Any) -> Any:
    """Escape rich markup: domains such as 'E = 1[g(R) != X]' contain brackets."""
    from rich.markup import escape

    return escape(v) if isinstance(v, str) else v


def _print_human(
    report: theory.VerificationReport, tightness: Any, verdicts: dict[str, str], *,
    details: bool
) -> None:
    cols = ["claim", "step", "method", "generality", "domain", "status"]
    if details:
        cols.append("detail")
    rows = []
    for c in report.steps:
        row = [c.claim, c.step, c.method, c.generality, c.domain, _status_word(c)]
        if details:
            row.append(c.detail)
        rows.append([_esc(v) for v in row])
    emit_table(cols, rows, title="Steps of the proofs: PROVED = for all parameters; CHECKED = "
               "on the stated finite domain, SAMPLED = on random examples (checks, not proofs)")
    if report.chains:
        emit_table(
            ["result", "chain", "generality", "steps", "weakest link / why broken", "verdict"],
            [
                [_esc(v) for v in (ch.result, ch.status.upper(), ch.generality,
                                   len(ch.steps), ch.detail, verdicts[ch.result])]
                for ch in report.chains
            ],
            title="Main results: is each chain of steps closed?",
        )

    out = sys.stdout
    failed = [c for c in report.steps if not c.passed]
    for c in failed:
        out.write(f"FAILED {c.claim}:{c.step} [{c.method}]: {c.detail}\n")
    for ch in report.broken_chains:
        out.write(f"FAILED chain of {ch.result}: {ch.detail}\n")
    per_claim = ", ".join(
        f"{claim} {p}/{p + f}" for claim, (p, f) in report.by_claim().items()
    )
    counts = report.generality_counts()
    out.write(
        f"{report.passed} passed, {report.failed} failed in {report.seconds:.1f} s "
        f"({per_claim})\n"
        f"generality: {counts.get('all', 0)} proved for all parameters, "
        f"{counts.get('finite', 0)} checked on a finite domain, "
        f"{counts.get('sampled', 0)} sampled\n"
    )
    if report.chains:
        closed = sum(ch.closed for ch in report.chains)
        out.write(f"chains: {closed}/{len(report.chains)} main results closed\n")
    if tightness is not None:
        _print_tightness(tightness)


def _print_tightness(report: Any) -> None:
    """Print every tuple-of-rows field of the tightness report as a table and its
    scalar fields as a summary line (robust to fields being added)."""
    out = sys.stdout
    out.write("\nTightness findings\n")
    scalars = []
    for f in dataclasses.fields(report):
        value = getattr(report, f.name)
        if isinstance(value, tuple) and value and dataclasses.is_dataclass(value[0]):
            names = [g.name for g in dataclasses.fields(value[0])]
            emit_table(
                names,
                [[getattr(r, g) for g in names] for r in value],
                title=f.name.replace("_", " "),
            )
        elif not isinstance(value, tuple):
            scalars.append(f"{f.name} = {_fmt(value)}")
    if scalars:
        out.write("; ".join(scalars) + "\n")


def _fmt(v: Any) -> str:
    return f"{v:.6g}" if isinstance(v, float) else str(v)
