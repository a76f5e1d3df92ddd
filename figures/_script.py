"""Run one figure script on its own: ``python -m vistalab.figures.fig3_content_channel``.

This path does not cache (the ``vista-lab reproduce`` pipeline does); it
computes, writes the tidy CSV next to the figure, plots, and prints the checks.
It keeps the command line's error contract: a bad option is one stderr line
and exit status 2, checked before anything is computed.

Every key of the figure's ``default_params()`` is an option (``n`` is ``--n``,
``curve_points`` is ``--curve-points``): a number as text, a list as
comma-separated values or JSON (``--sigmas 0.5,1,2``, ``--prop1-cases
'[[3,1],[4,8]]'``), a flag as true/false. The values given replace those
defaults (of ``--quick`` with it) and go through the figure's own checks
(``_params_iv``) before the run; an error names the option. From Python the same
is ``compute({"n": 128})`` (merged with the defaults by ``merge_params``).
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vistalab._core import DomainError, atomic_write, suggest
from vistalab._core._limits import json_loads
from vistalab._core._oneline import ONE_LINE_ERRORS, OneLineParser, UsageError, failure_line
from vistalab._core._paths import output_dir, output_file

from ._registry import load_figure

__all__ = ["run_as_script", "run_figure"]

_DEFAULT_SEED = 20260522


def run_as_script(name: str, argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m vistalab.figures.<name>``; returns 1 if a check
    fails, 2 (after one stderr line) on bad input or a refused write."""
    return run_figure(name, argv, prog=f"python -m vistalab.figures.{name}")


def run_figure(name: str, argv: Sequence[str] | None, *, prog: str) -> int:
    """One figure run under the program name ``prog`` (the script, or
    ``vista-lab figure NAME``); the status of :func:`run_as_script`."""
    try:
        return _run(name, prog, argv)
    except (*ONE_LINE_ERRORS, KeyboardInterrupt) as exc:
        text, status = failure_line(exc)
        print(f"{prog}: {text}", file=sys.stderr)
        return status


def _seed(text: str) -> int:
    try:
        seed = int(str(text).strip())
    except ValueError:
        seed = -1
    if seed < 0:
        raise DomainError("--seed", text, "must be a non-negative integer",
                          f"pass e.g. --seed {_DEFAULT_SEED}")
    return seed


def option_name(key: str) -> str:
    """The command-line option of parameter ``key`` (``curve_points`` -> ``--curve-points``)."""
    return "--" + key.replace("_", "-")


def _scalar(option: str, text: str, like: Any) -> Any:
    """``text`` read as a value of the type of ``like`` (bool, int, float or str)."""
    text = str(text).strip()
    if isinstance(like, bool):
        words = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}
        if text.lower() not in words:
            raise DomainError(option, text, "must be true or false",
                              f"pass e.g. {option} {str(like).lower()}")
        return words[text.lower()]
    if isinstance(like, int):
        try:
            return int(text)
        except ValueError:
            raise DomainError(option, text, "must be an integer",
                              f"pass a whole number, e.g. {option} {like}") from None
    if isinstance(like, float):
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value):
            raise DomainError(option, text, "must be a finite number",
                              f"pass e.g. {option} {like}")
        return value
    return text


def option_value(key: str, text: str, default: Any) -> Any:
    """The parameter value of option text ``text`` for a parameter whose default is
    ``default``: a list from JSON or comma-separated items (each read like the
    default's first item), a scalar like the default."""
    option = option_name(key)
    if isinstance(default, list):
        stripped = str(text).strip()
        if stripped.startswith("["):
            try:
                value = json_loads(stripped)
            except json.JSONDecodeError as exc:
                raise DomainError(option, text, f"must be a JSON list ({exc.msg})",
                                  f"pass e.g. {option} '{json.dumps(default[:2])}'") from None
            if not isinstance(value, list):
                raise DomainError(option, text, "must be a list", f"e.g. {option} '[1, 2]'")
            return value
        like = default[0] if default else 0.0
        if isinstance(like, list):
            raise DomainError(option, text, "must be a JSON list of lists",
                              f"pass e.g. {option} '{json.dumps(default[:2])}'")
        return [_scalar(option, item, like) for item in stripped.split(",") if item.strip()]
    return _scalar(option, text, default)


def _shown(value: Any) -> str:
    if isinstance(value, list) and not any(isinstance(v, list) for v in value):
        return ",".join(str(v) for v in value) or "(none)"
    return json.dumps(value) if isinstance(value, list) else str(value).lower() \
        if isinstance(value, bool) else str(value)


def _add_parameter_options(parser: Any, fig: Any) -> dict[str, str]:
    """One option per key of ``fig.default_params()``; returns {key: option}."""
    full, quick = fig.default_params(False), fig.default_params(True)
    group = parser.add_argument_group(
        "figure parameters",
        "Each replaces one entry of the figure's default parameters (default_params; the "
        "--quick values apply with --quick). Lists are comma-separated or JSON.")
    # a parameter that is also a column of the figure's table has its meaning there
    meanings = getattr(fig, "_UNITS", {})
    options = {}
    for key, value in full.items():
        options[key] = option_name(key)
        quick_note = "" if quick.get(key) == value else f"; with --quick {_shown(quick[key])}"
        meaning = meanings.get(key, key.replace("_", " "))
        group.add_argument(options[key], dest=f"param_{key}", default=None,
                           metavar=_metavar(value),
                           help=f"{meaning} (default {_shown(value)}{quick_note})")
    return options


def _metavar(value: Any) -> str:
    if isinstance(value, list):
        return "LIST"
    if isinstance(value, bool):
        return "BOOL"
    return "INT" if isinstance(value, int) else "X" if isinstance(value, float) else "TEXT"


def _given_params(fig: Any, args: Any, quick: bool) -> dict[str, Any]:
    defaults = fig.default_params(quick)
    full = fig.default_params(False)
    out = dict(defaults)
    for key in full:
        text = getattr(args, f"param_{key}")
        if text is not None:
            out[key] = option_value(key, text, full[key] if full[key] != [] else defaults[key])
    return out


def _checked(fig: Any, params: Mapping[str, Any], options: Mapping[str, str]) -> None:
    """The figure's own parameter checks, before any computation, in the command
    line's words (``n`` -> ``--n``)."""
    try:
        fig._params_iv(params)
    except DomainError as exc:
        option = options.get(exc.parameter)
        if option is None:
            raise
        raise DomainError(option, exc.value, exc.rule, exc.fix, context=exc.context) from None


def _description(fig: Any) -> str:
    """The figure's module docstring as one paragraph of full sentences."""
    text = " ".join((fig.__doc__ or fig.TITLE).split())
    return (f"{text} Runs the figure's computation, writes its tidy table (CSV) and the "
            "figure (PNG and PDF) to --out, and prints each check; exit status 1 if a "
            "check fails, 2 on bad input.")


def _run(name: str, prog: str, argv: Sequence[str] | None) -> int:
    fig = load_figure(name)
    parser = OneLineParser(prog=prog, description=_description(fig))
    parser.add_argument("--quick", action="store_true", help="fewer trials and grid points")
    parser.add_argument("--out", default="vista-lab-out/figures", metavar="DIR",
                        help="folder for the PNG, PDF and CSV (default: vista-lab-out/figures)")
    parser.add_argument("--seed", default=str(_DEFAULT_SEED), metavar="INT",
                        help=f"random seed, a non-negative integer (default {_DEFAULT_SEED})")
    options = _add_parameter_options(parser, fig)
    args, extras = parser.parse_known_args(argv)
    if extras:
        known = [o for a in parser._actions for o in a.option_strings]
        shown = []
        for tok in extras:
            hint = suggest(tok.split("=", 1)[0], known) if tok.startswith("-") else None
            shown.append(f"{tok!r}" + (f" (did you mean {hint!r}?)" if hint else ""))
        raise UsageError(f"unrecognized argument(s) {', '.join(shown)}; see '{prog} --help'")
    # Every door check before the computation: a bad path must not cost a run.
    seed = _seed(args.seed)
    params = _given_params(fig, args, args.quick)
    _checked(fig, params, options)
    out = output_dir("--out", args.out)
    targets = [output_file("--out", out / f"{name}.{ext}", parents=True)
               for ext in ("csv", "png", "pdf")]
    table = fig.compute(params, rng=np.random.default_rng(seed))
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(targets[0], table.to_csv().encode("utf-8"))
    png, pdf = fig.plot(table, out)
    failed = 0
    for check in fig.checks(table):
        failed += check.status == "fail"
        print(f"{check.status:>13}  {check.id}: {check.numbers}")
    print(f"wrote {png}, {pdf} and {Path(targets[0])}", file=sys.stderr)
    return 1 if failed else 0
