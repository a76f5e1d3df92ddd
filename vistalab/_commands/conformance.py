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
    parser.add_argument("--counter", default=None, metavar="TOKENIZER",
                        help="the tokenizer budgets are counted with (a registered name, e.g. "
                        "cl100k_base, o200k_base, approx; default cl100k_base)")
    parser.add_argument("--command", default=None, metavar="CMD",
                        help="check a manager written in any language: CMD is started once "
                        "and speaks the JSON-lines protocol on stdin/stdout (a case in, count "
                        "requests served, a request or a refusal out; docs/guide/"
                        "conformance.md), e.g. --command \"node trim.mjs\"")
    parser.add_argument("--baseline", default=None, metavar="FILE",
                        help="expected failures: exit 0 when every broken check is listed in "
                        "FILE, 1 for a broken check it does not list (a regression) or a "
                        "listed check that now holds (stale)")
    parser.add_argument("--write-baseline", default=None, metavar="FILE",
                        help="write the broken checks of this run as a baseline FILE (exit 0 "
                        "once written, unless --baseline judges the run)")
    parser.add_argument("--export", default=None, metavar="DIR",
                        help="write a language-agnostic corpus of cases (JSON, with its JSON "
                        "Schema and the reference managers' verdicts) into DIR, for "
                        "implementations in any language (examples/conformance/"
                        "run_corpus.mjs runs it)")
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
    for option in ("baseline", "write_baseline", "export"):
        if getattr(args, option) is not None:
            from vistalab._core import DomainError

            flag = "--" + option.replace("_", "-")
            raise DomainError(flag, getattr(args, option), "is not used with --replay",
                              f"drop {flag}")
    command = _command_iv(args)
    job = {"kind": "replay", "file": str(path), "manager": args.manager, "command": command,
           "counter": _counter_iv(args.counter),
           "timeout": _timeout(args.timeout), "strict": args.strict, "json": args.json}
    return _execute(job, args)


def _command_iv(args: argparse.Namespace) -> str | None:
    """``--command``, checked here: a command line that names a program, not
    given together with MANAGER."""
    if args.command is None:
        return None
    from vistalab._core import DomainError

    if args.manager is not None:
        raise DomainError("--command", args.command, "is given together with MANAGER "
                          f"{args.manager!r}; a run checks one manager",
                          "drop MANAGER or drop --command")
    from vistalab.conformance._process import CommandManager

    CommandManager(args.command, args.protocol)  # the command line's own checks
    return str(args.command)


def _counter_iv(text: str | None) -> str | None:
    if text is None:
        return None
    from vistalab._core import DomainError, UnknownNameError
    from vistalab.workspace import get_tokenizer

    try:
        get_tokenizer(text)
    except (UnknownNameError, DomainError, TypeError):
        from vistalab.workspace import TOKENIZERS

        raise DomainError("--counter", text, "must be a registered tokenizer ("
                          f"{', '.join(sorted(TOKENIZERS))})",
                          "pass e.g. --counter cl100k_base") from None
    return str(text)


def _resolve(job: dict[str, Any]) -> Any:
    """The job's manager: the process of ``--command``, or MANAGER resolved."""
    from vistalab.conformance import resolve_manager

    if job.get("command") is not None:
        from vistalab.conformance._process import CommandManager

        return CommandManager(job["command"], job.get("protocol", "openai"),
                              job.get("pinned", "system"))
    return resolve_manager(job["manager"]) if job["manager"] is not None else None


def _spec_of(job: dict[str, Any]) -> str:
    return f"--command {job['command']!r}" if job.get("command") else str(job["manager"])


def _replay_text(job: dict[str, Any], imported: Any) -> tuple[int, str]:
    from vistalab.conformance import read_violation, replay

    path = job["file"]
    violation = read_violation(path)
    if job.get("command") is not None:
        job = {**job, "protocol": violation.protocol, "pinned": violation.pinned}
    manager = _resolve(job)
    imported()
    broken = replay(violation, manager, timeout=job["timeout"], strict=job["strict"],
                    counter=job.get("counter"))
    still = violation.check in broken
    if job["json"]:
        text = _json_text({"file": str(path), "invariant": violation.invariant,
                           "check": violation.check,
                           "budget": violation.budget, "protocol": violation.protocol,
                           "manager": _spec_of(job) if manager is not None else None,
                           "still_broken": still, "broken": broken})
    else:
        what = f"MANAGER {_spec_of(job)}" if manager is not None else "the recorded output"
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
    if job.get("manager") is None and job.get("command") is None:
        status, text = execute_job(job)
    else:
        from vistalab.conformance._isolated import run_isolated

        status, text = run_isolated(job, manager=_spec_of(job), timeout=job["timeout"],
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
    _importable_cwd()
    if args.replay is not None:
        return _run_replay(args)
    from vistalab._core import DomainError

    from ._args import parse_int

    if args.export is not None:
        return _run_export(args)
    command = _command_iv(args)
    if args.manager is None and command is None:
        raise DomainError("MANAGER", None, "is required (a registered name or module:function)",
                          "pass e.g. `vista-lab conformance mypkg.trim:trim_to_budget`, "
                          "--command CMD, or --replay FILE")
    examples = parse_int("examples", args.examples if args.examples is not None else "200", lo=1)
    seed = parse_int("seed", args.seed if args.seed is not None else "0", lo=0)
    budgets = _budgets(args.budget)
    timeout = _timeout(args.timeout)
    _timeout(args.import_timeout, "import")
    out_dir: str | None = None
    if args.out is not None:
        from .._paths import output_dir

        out_dir = str(output_dir("--out", args.out))
    counter = _counter_iv(args.counter)
    baseline: str | None = None
    if args.baseline is not None:
        from vistalab.conformance._baseline import read_baseline

        from .._paths import input_file

        baseline = str(input_file("--baseline", args.baseline))
        read_baseline(baseline)
    write_to: str | None = None
    if args.write_baseline is not None:
        from .._paths import output_file

        write_to = str(output_file("--write-baseline", args.write_baseline))
    if command is None:
        _manager_spec_iv(args.manager)
    job = {"kind": "check", "manager": args.manager, "command": command,
           "protocol": args.protocol, "budgets": budgets, "examples": examples, "seed": seed,
           "timeout": timeout, "strict": args.strict, "pinned": args.pinned, "out": out_dir,
           "json": args.json, "counter": counter, "baseline": baseline,
           "write_baseline": write_to}
    return _execute(job, args)


def _importable_cwd() -> None:
    """Modules in the current folder import, as with ``python -m`` (the
    ``vista-lab`` script's own folder is first on ``sys.path`` instead)."""
    import os
    import sys

    cwd = os.getcwd()
    if "" not in sys.path and cwd not in sys.path:
        sys.path.insert(0, cwd)


def _run_export(args: argparse.Namespace) -> int:
    from vistalab._core import DomainError

    from .._paths import output_dir
    from ._args import parse_int

    for option, flag in (("manager", "MANAGER"), ("command", "--command"),
                         ("baseline", "--baseline"), ("write_baseline", "--write-baseline"),
                         ("out", "--out"), ("budget", "--budget")):
        if getattr(args, option) is not None:
            raise DomainError(flag, getattr(args, option), "is not used with --export "
                              "(the corpus is judged by the reference managers)",
                              f"drop {flag}")
    folder = output_dir("--export", args.export)
    examples = parse_int("examples", args.examples if args.examples is not None else "50",
                         lo=1)
    seed = parse_int("seed", args.seed if args.seed is not None else "0", lo=0)
    from vistalab.conformance._export import export_corpus

    written = export_corpus(folder, protocol=args.protocol, examples=examples, seed=seed,
                            pinned=args.pinned, counter=_counter_iv(args.counter),
                            strict=args.strict)
    print(f"wrote {written['cases']} cases ({args.protocol}, seed {seed}) to {written['corpus']}"
          f", schema {written['schema']}")
    return 0


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
    from vistalab.conformance import check

    manager = _resolve(job)
    imported()
    try:
        report = check(manager, protocol=job["protocol"], budgets=job["budgets"],
                       examples=job["examples"], seed=job["seed"], timeout=job["timeout"],
                       strict=job["strict"], pinned=job["pinned"], counter=job.get("counter"))
    finally:
        close = getattr(manager, "close", None)
        if job.get("command") is not None and callable(close):
            close()
    files: dict[str, str] = {}
    scripts: dict[str, str] = {}
    if job["out"] is not None:
        import json

        from vistalab._core import atomic_write
        from vistalab.conformance._repro import write_reproducer

        out_dir = Path(job["out"])
        for v in report.violations:
            if job.get("command") is not None:
                files[v.check] = v.write(out_dir / f"{v.check}.json")
                continue
            written = write_reproducer(v, out_dir, job["manager"])
            files[v.check], scripts[v.check] = written["case"], written["script"]
        doc = report.to_dict()
        doc["files"] = files
        doc["scripts"] = scripts
        atomic_write(out_dir / "report.json", (json.dumps(doc, indent=2) + "\n").encode())
    status = 0 if report.ok else 1
    verdict = None
    extra: list[str] = []
    if job.get("baseline") is not None:
        from vistalab.conformance._baseline import read_baseline

        verdict = read_baseline(job["baseline"]).judge(v.check for v in report.violations)
        status = 0 if verdict.ok else 1
        extra += verdict.lines(job["baseline"])
    if job.get("write_baseline") is not None:
        from vistalab.conformance._baseline import write_baseline

        path = write_baseline(job["write_baseline"], report)
        extra.append(f"wrote baseline {path} ({len(report.violations)} expected failure(s))")
        if verdict is None:
            status = 0
    if job["json"]:
        doc = report.to_dict()
        if files:
            doc["files"] = files
            doc["scripts"] = scripts
        if verdict is not None:
            doc["baseline"] = {"file": job["baseline"], "ok": verdict.ok,
                               "expected": list(verdict.expected),
                               "regressions": list(verdict.regressions),
                               "stale": list(verdict.stale)}
        return status, _json_text(doc)
    text = _format_report(report, files)
    for check_id, script in scripts.items():
        text += (f"\n  reproduce {check_id}: python {script}   (or: vista-lab conformance "
                 f"--replay {files[check_id]} {job['manager']})")
    return status, "\n".join([text, *extra])
