"""``vista-lab conformance``: check a context manager against the paper's
workspace invariants (:mod:`vistalab.conformance`), or re-check a saved
counterexample (``--replay FILE``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

__all__ = ["register", "run"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "conformance",
        help="check a context manager (a trimmer or an adapter) against the workspace invariants",
        description=(
            "Generate valid conversations (Hypothesis), run MANAGER on each at budgets near "
            "every boundary, and check the paper's workspace invariants (Methodology, "
            "'Workspace invariants' and 'Structure preservation'): budget, protocol, "
            "pinned, fidelity, recoverability, plus crash and determinism, each through "
            "checks with stable ids (invariant.rule). MANAGER is a registered "
            "name (vista-lab-workspace) or module:function, a trimmer "
            "f(messages, budget, count) -> messages or an adapter factory f(budget). "
            "Each broken check is shrunk to a minimal counterexample. Exit status 1 when "
            "a check is broken."
        ),
    )
    parser.add_argument("manager", metavar="MANAGER", nargs="?", default=None,
                        help="a registered name or module:function (optional with --replay)")
    parser.add_argument("--protocol", default="openai",
                        choices=("openai", "anthropic", "responses", "gemini"),
                        help="wire format of the conversations: openai (chat completions), "
                        "anthropic (Messages), responses (OpenAI Responses input items) or "
                        "gemini (Gemini generateContent contents); default openai")
    parser.add_argument("--examples", default=None, metavar="N",
                        help="conversations to generate (default 200)")
    parser.add_argument("--seed", default=None, metavar="S",
                        help="Hypothesis seed, a non-negative integer (default 0)")
    parser.add_argument("--budget", default=None, metavar="TOKENS",
                        help="fixed budget(s), comma-separated (default: drawn near each "
                        "conversation's boundaries)")
    parser.add_argument("--timeout", default=None, metavar="SECONDS",
                        help="seconds one run on one conversation may take before the manager "
                        "counts as hung (default 10)")
    parser.add_argument("--import-timeout", default=None, metavar="SECONDS",
                        help="seconds MANAGER's module may take to import in the isolated "
                        "process that runs it (default 60)")
    parser.add_argument("--strict", action="store_true",
                        help="also check the stricter adjacency rules some providers enforce")
    parser.add_argument("--pinned", default="system", choices=("system", "none"),
                        help="what the manager must keep: the system prompt (system, default; "
                        "below the pinned floor it must refuse by raising BudgetTooSmall) or "
                        "nothing (none, for managers that may drop it)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--out", default=None, metavar="DIR",
                        help="write report.json and one counterexample file per broken "
                        "check, named after its id (readable by --replay and `vista-lab "
                        "workspace replay`)")
    parser.add_argument("--replay", default=None, metavar="FILE",
                        help="re-check a counterexample file: its recorded output, or what "
                        "MANAGER returns for it now")
    from ._conformance_study import add_study_arguments

    add_study_arguments(parser)
    parser.set_defaults(func=run, _parser=parser)


def _budgets(text: str | None) -> list[int] | None:
    from ._args import parse_int

    if text is None:
        return None
    parts = [p for p in str(text).split(",")]
    # a budget is a number of tokens; the example is one a small conversation fits
    return [parse_int("budget", p, lo=1, example=4000) for p in parts]


def _format_report(report: Any, files: dict[str, str]) -> str:
    from vistalab.workspace import INVARIANTS

    by_name = {inv.name: inv for inv in INVARIANTS}
    head = (
        f"conformance of {report.manager} ({report.protocol}"
        f"{', strict' if report.strict else ''}): {report.conversations} conversations, "
        f"seed {report.seed}, per-call timeout {report.timeout:g} s, counter {report.counter}"
    )
    if report.conversations != report.examples:
        # Hypothesis's max_examples counts the valid examples of its generation phase;
        # its other runs (draws it discards, replays, shrinking) call the manager too.
        head += (f" ({report.conversations} runs of the manager for --examples "
                 f"{report.examples}: Hypothesis also runs the manager on draws it "
                 "discards, on replays and while shrinking)")
    lines = [head]
    for name in report.checked:
        broken = report.violations_of(name)
        if not broken:
            lines.append(f"  {name:<15} pass    {by_name[name].source}")
            continue
        for v in broken:
            where = f"; counterexample {files[v.check]}" if v.check in files else ""
            lines.append(f"  {name:<15} FAIL    [{v.check}] {v.message} (budget {v.budget:,}, "
                         f"{_size(v)}{where})")
    n_inv = len({v.invariant for v in report.violations})
    verdict = "all invariants held on the sampled conversations (a sample, not a proof)" \
        if report.ok else (f"{len(report.violations)} check(s) broken, of {n_inv} "
                           "invariant(s)")
    lines.append(verdict)
    return "\n".join(lines)


def _size(v: Any) -> str:
    conv = v.conversation
    if isinstance(conv, dict) and "contents" in conv:  # Gemini
        return f"{len(conv.get('contents') or [])}-content conversation"
    n = len(conv.get("messages") or []) if isinstance(conv, dict) else len(conv)
    return f"{n}-message conversation"


def _run_replay(args: argparse.Namespace) -> int:
    from vistalab.conformance import read_violation

    from .._paths import input_file
    from ._args import cli_wording

    path = input_file("--replay", args.replay)
    with cli_wording({"FILE": "--replay"}):
        violation = read_violation(path)
    for option in ("examples", "seed", "budget", "out"):
        if getattr(args, option) is not None:
            from vistalab._core import DomainError

            raise DomainError(f"--{option}", getattr(args, option),
                              "is not used with --replay", f"drop --{option}")
    if args.protocol != "openai" and args.protocol != violation.protocol:
        from vistalab._core import DomainError

        raise DomainError("--protocol", args.protocol,
                          f"must match the file's protocol ({violation.protocol})",
                          "drop --protocol")
    job = {"kind": "replay", "file": str(path), "manager": args.manager,
           "timeout": _timeout(args.timeout), "strict": args.strict, "json": args.json}
    return _execute(job, args)


def _replay_text(job: dict[str, Any], imported: Any) -> tuple[int, str]:
    from vistalab.conformance import read_violation, replay, resolve_manager

    path = job["file"]
    violation = read_violation(path)
    manager = resolve_manager(job["manager"]) if job["manager"] is not None else None
    imported()
    broken = replay(violation, manager, timeout=job["timeout"], strict=job["strict"])
    still = violation.check in broken
    if job["json"]:
        text = _json_text({"file": str(path), "invariant": violation.invariant,
                           "check": violation.check,
                           "budget": violation.budget, "protocol": violation.protocol,
                           "manager": job["manager"], "still_broken": still, "broken": broken})
    else:
        what = f"MANAGER {job['manager']}" if manager is not None else "the recorded output"
        lines = [f"{path}: {violation.check} counterexample (budget {violation.budget:,}, "
                 f"{violation.protocol}), re-checked on {what}"]
        lines += [f"  {name:<28} FAIL    {message}" for name, message in broken.items()]
        lines.append(f"{violation.check} is {'still broken' if still else 'no longer broken'}")
        text = "\n".join(lines)
    return (1 if still else 0), text


def _json_text(doc: Any) -> str:
    import io

    from .._output import emit_json

    buf = io.StringIO()
    emit_json(doc, stream=buf)
    return buf.getvalue().removesuffix("\n")


def execute_job(job: dict[str, Any], imported: Any = lambda: None) -> tuple[int, str]:
    """Run one validated conformance job (``kind`` "check" or "replay") in this
    process: ``(exit status, text to print)``. ``imported()`` is called once the
    manager has imported (the isolated runner's parent starts the per-call watch
    there)."""
    if job["kind"] == "replay":
        return _replay_text(job, imported)
    return _check_text(job, imported)


#: What the isolated child runs: this module's executor, handed to the child loop of
#: :mod:`vistalab.conformance._isolated` (which cannot import this layer).
_CHILD = ("from vistalab._commands.conformance import _isolated_child; _isolated_child()")


def _isolated_child() -> None:  # pragma: no cover - runs in the child
    from vistalab.conformance._isolated import _child_main

    _child_main(execute_job)


def _execute(job: dict[str, Any], args: argparse.Namespace) -> int:
    """Run ``job``: in this process when it runs no manager code (a replay of the
    recorded output), else in an isolated child process that this one watches
    (:mod:`vistalab.conformance._isolated`)."""
    if job["manager"] is None:
        status, text = execute_job(job)
    else:
        from vistalab.conformance._isolated import run_isolated

        status, text = run_isolated(job, manager=job["manager"], timeout=job["timeout"],
                                    child=_CHILD,
                                    import_timeout=_timeout(args.import_timeout, "import"))
    print(text)
    return status


def _timeout(text: str | None, which: str = "call") -> float:
    from vistalab._core import DomainError
    from vistalab.conformance import DEFAULT_TIMEOUT
    from vistalab.conformance._isolated import DEFAULT_IMPORT_TIMEOUT

    from ._args import parse_real

    name, default = (("timeout", DEFAULT_TIMEOUT) if which == "call"
                     else ("import-timeout", DEFAULT_IMPORT_TIMEOUT))
    if text is None:
        return default
    value = parse_real(name, text)
    if not value > 0 or value > 86_400:
        raise DomainError(name, text, "must be a positive number of seconds, at most 86400",
                          f"pass e.g. --{name} {default:g}")
    return value


def run(args: argparse.Namespace) -> int:
    if args.study:
        from ._conformance_study import run_study_command

        return run_study_command(args)
    if getattr(args, "peers", None) is not None:
        from .._errors import CliUsageError

        raise CliUsageError(f"--peers chooses the peers of --study (got --peers="
                            f"{str(args.peers)!r:.60}); add --study --out DIR, or drop --peers")
    if args.replay is not None:
        return _run_replay(args)
    from vistalab._core import DomainError

    from ._args import parse_int

    if args.manager is None:
        raise DomainError("MANAGER", None, "is required (a registered name or module:function)",
                          "pass e.g. `vista-lab conformance mypkg.trim:trim_to_budget`, or "
                          "--replay FILE")
    examples = parse_int("examples", args.examples if args.examples is not None else "200", lo=1)
    seed = parse_int("seed", args.seed if args.seed is not None else "0", lo=0)
    budgets = _budgets(args.budget)
    timeout = _timeout(args.timeout)
    _timeout(args.import_timeout, "import")
    out_dir: str | None = None
    if args.out is not None:
        from .._paths import output_dir

        out_dir = str(output_dir("--out", args.out))
    _manager_spec_iv(args.manager)
    job = {"kind": "check", "manager": args.manager, "protocol": args.protocol,
           "budgets": budgets, "examples": examples, "seed": seed, "timeout": timeout,
           "strict": args.strict, "pinned": args.pinned, "out": out_dir, "json": args.json}
    return _execute(job, args)


def _manager_spec_iv(spec: str) -> None:
    """Refuse a MANAGER that is neither a registered name nor module:function
    here, before any process starts. A registered name (vista-lab's own engine, the
    study's peers: known packages) is loaded here too, so a peer that is not
    installed is named with its pip command; a module:function, the user's code, is
    imported only in the child."""
    from vistalab.conformance import resolve_manager

    mod, _, attr = spec.partition(":")
    if not (mod and attr):
        resolve_manager(spec)


def _check_text(job: dict[str, Any], imported: Any) -> tuple[int, str]:
    from vistalab.conformance import check, resolve_manager

    manager = resolve_manager(job["manager"])
    imported()
    report = check(manager, protocol=job["protocol"], budgets=job["budgets"],
                   examples=job["examples"], seed=job["seed"], timeout=job["timeout"],
                   strict=job["strict"], pinned=job["pinned"])
    files: dict[str, str] = {}
    if job["out"] is not None:
        import json

        from vistalab._core import atomic_write

        out_dir = Path(job["out"])
        for v in report.violations:
            files[v.check] = v.write(out_dir / f"{v.check}.json")
        doc = report.to_dict()
        doc["files"] = files
        atomic_write(out_dir / "report.json", (json.dumps(doc, indent=2) + "\n").encode())
    if job["json"]:
        doc = report.to_dict()
        if files:
            doc["files"] = files
        return (0 if report.ok else 1), _json_text(doc)
    return (0 if report.ok else 1), _format_report(report, files)
