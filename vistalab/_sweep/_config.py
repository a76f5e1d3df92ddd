"""Reading and validating a sweep config (TOML) into canonical grid cells.

Every rule is checked here, for every cell, before any work starts: unknown
keys and names get a close-match suggestion, and each error names the file,
where in it the value is, the rule and the fix.
"""

from __future__ import annotations

import itertools
import json
import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vistalab._core import MAX_JSON_DEPTH, read_bounded
from vistalab._core._limits import json_text_depth, toml_loads
from vistalab.theory import DomainError
from vistalab.theory._validate import as_int

from ._errors import SweepConfigError, SweepConfigErrors, UnknownSweepNameError
from ._grid import Cell, canonical_cells, cells_digest
from ._schema import Experiment, ParamSpec

__all__ = [
    "SweepConfig", "load_config", "parse_config", "config_summary", "TOP_LEVEL_KEYS", "MAX_CELLS",
    "MAX_TOTAL_TRIALS",
]

#: Keys allowed at the top level of a config, with what they mean.
TOP_LEVEL_KEYS: dict[str, str] = {
    "experiment": "name of a registered experiment (required)",
    "seed": "non-negative integer seed (or a string of digits, for entropies above 2**63); "
            "omit for fresh entropy, recorded in the results",
    "description": "free text copied into the results sidecar",
    "params": "table of values shared by every cell; a list is an axis of the grid",
    "grid": "a table, or [[grid]] blocks: each block is a cartesian product of its "
            "lists, and the sweep is the union of the blocks",
}

#: Largest grid accepted (guards against a typo such as a 10^6-element list).
MAX_CELLS = 1_000_000

#: Most trials one sweep may ask for, over all its cells (a typo such as
#: ``trials = 9223372036854775807`` is refused before any work starts).
MAX_TOTAL_TRIALS = 10**12


@dataclass(frozen=True)
class SweepConfig:
    """A validated sweep: the experiment and its cells in canonical order.

    Attributes
    ----------
    file : str
        Where the config came from (used in messages and the sidecar).
    experiment : Experiment
        The registered experiment the cells run.
    seed : int or None
        The config's seed; None means fresh entropy, drawn at run time and
        recorded with the results (a resumed run reuses it).
    description : str
        Free text from the config.
    cells : tuple of Cell
        Every cell, sorted canonically; ``cells[i].index == i``.
    source : dict
        The config as read (plain data), for the sidecar.
    """

    file: str
    experiment: Experiment
    seed: int | None
    description: str
    cells: tuple[Cell, ...]
    source: dict[str, Any] = field(repr=False)

    @property
    def n_cells(self) -> int:
        """The number of cells the sweep runs, ``len(cells)``."""
        return len(self.cells)

    @property
    def digest(self) -> str:
        """Identity of the work: experiment plus every cell (not the seed, not the file)."""
        return cells_digest(self.experiment.name, self.cells)


def load_config(
    path: str | Path, *, registry: Mapping[str, Experiment] | None = None
) -> SweepConfig:
    """Read and validate a TOML sweep config.

    Parameters
    ----------
    path : str or PathLike
        The config file (TOML: ``experiment``, ``seed``, ``[params]``, ``[[grid]]``).
    registry : mapping, optional
        Experiments by name (default: the built-in :data:`EXPERIMENTS`).

    Returns
    -------
    SweepConfig
        The validated config with its grid expanded into cells.

    Raises
    ------
    SweepConfigError
        Missing file, invalid TOML, a missing parameter or an out-of-domain value.
    UnknownSweepNameError
        Unknown experiment, misspelt key, or unknown choice (with a suggestion).
    """
    import os

    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path):
        raise SweepConfigError("config", path, "must be the path of a TOML file",
                               "pass e.g. 'sweep.toml' (or a mapping to parse_config)",
                               file=str(type(path).__name__), where="its path")
    p = Path(path)
    try:
        # a FIFO, device or /proc file is refused, not read
        data = read_bounded("config", p, what="TOML file")
    except DomainError as exc:
        raise SweepConfigError("config", str(path), exc.rule, exc.fix, file=str(path),
                               where="its path") from None
    except OSError as exc:
        raise SweepConfigError("config", str(path), "must be a readable TOML file",
                               f"check the path ({exc.strerror})", file=str(path),
                               where="its path") from None
    if json_text_depth(data, MAX_JSON_DEPTH) > MAX_JSON_DEPTH:
        raise SweepConfigError("config", str(path), f"must nest arrays and tables at most "
                               f"{MAX_JSON_DEPTH} levels deep", "flatten the config",
                               file=str(path), where="syntax")
    try:
        doc = toml_loads(data.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise SweepConfigError("config", str(path), f"must be valid UTF-8 TOML ({exc})",
                               "fix the syntax at the position shown", file=str(path),
                               where="syntax") from None
    return parse_config(doc, file=str(path), registry=registry)


def parse_config(
    doc: Mapping[str, Any],
    *,
    file: str = "<config>",
    registry: Mapping[str, Experiment] | None = None,
) -> SweepConfig:
    """Validate a config given as a mapping (the parsed TOML) and expand its grid.

    Every problem is collected and reported together: one error when there is
    one, else :class:`SweepConfigErrors` listing each (the same problem in many
    cells is listed once).

    Parameters
    ----------
    doc : mapping
        The config's content, as :func:`load_config` would parse it from TOML.
    file : str
        The name errors give as the config's file (default ``"<config>"``).
    registry : mapping, optional
        Experiments by name (default: the built-in :data:`EXPERIMENTS`).

    Returns
    -------
    SweepConfig
        The validated config with its grid expanded into cells.

    Raises
    ------
    SweepConfigError
        The one problem of the config.
    SweepConfigErrors
        Every problem, when there are several.

    Examples
    --------
    >>> cfg = parse_config({"experiment": "makeroom", "seed": 1,
    ...                     "params": {"n": 64, "kappa": 4, "trials": 100},
    ...                     "grid": [{"interface": ["ledger", "blind"]}]})
    >>> len(cfg.cells)
    2
    """
    if registry is None:
        from ._experiments import EXPERIMENTS

        registry = EXPERIMENTS
    experiment = _experiment_iv(doc, file, registry)
    errors: list[Exception] = []
    for key in doc:
        if key not in TOP_LEVEL_KEYS:
            fix = ""
            if key in experiment.param_names:
                fix = (f"`{key}` is a parameter: put it under [params] or in a [[grid]] block.")
            errors.append(UnknownSweepNameError("key", key, TOP_LEVEL_KEYS, file=file,
                                                where="top level", fix=fix))
    seed = None
    if "seed" in doc:
        raw_seed = doc["seed"]
        # TOML integers stop at 2**63 - 1; a recorded 128-bit entropy can be
        # given back as a string of digits.
        if isinstance(raw_seed, str) and raw_seed.strip().isdigit():
            raw_seed = int(raw_seed.strip())
        try:
            seed = as_int("seed", raw_seed, lo=0,
                          fix='use a non-negative integer (or a string of digits: seed = "...")')
        except DomainError as exc:
            errors.append(_relocate(exc, file, "top level"))
    description = doc.get("description", "")
    if not isinstance(description, str):
        errors.append(SweepConfigError("description", description, "must be a string",
                                       'quote it: description = "..."', file=file,
                                       where="top level"))

    try:
        shared = _table(doc.get("params", {}), "params", file, "top level")
    except SweepConfigError as exc:
        errors.append(exc)
        shared = {}
    grid_raw = doc.get("grid", [{}])
    if isinstance(grid_raw, Mapping):
        blocks_raw: list[Any] = [grid_raw]
    elif isinstance(grid_raw, list) and grid_raw:
        blocks_raw = grid_raw
    else:
        errors.append(SweepConfigError(
            "grid", grid_raw, "must be a table or one or more [[grid]] blocks",
            "write [grid] or [[grid]] followed by key = value lines", file=file,
            where="top level"))
        blocks_raw = []
    blocks = []
    for i, b in enumerate(blocks_raw, start=1):
        try:
            blocks.append(_table(b, "grid", file,
                                 f"[[grid]] block {i}" if len(blocks_raw) > 1 else "[grid]"))
        except SweepConfigError as exc:
            errors.append(exc)
            blocks.append({})

    # Values are checked key by key, every block, before any cell is resolved:
    # a typo in one list must not hide a bound broken in another.
    axes_where = "[params]"
    shared_axes: dict[str, list[Any]] = {}
    for k, v in shared.items():
        try:
            shared_axes[k] = _values(experiment, k, v, file, axes_where)
        except (SweepConfigError, UnknownSweepNameError) as exc:
            errors.append(exc)
    block_axes: list[dict[str, tuple[list[Any], str]]] = []
    for i, block in enumerate(blocks, start=1):
        where = f"[[grid]] block {i}" if len(blocks) > 1 else "[grid]"
        if "grid" not in doc:
            where = "[params]"
        axes: dict[str, tuple[list[Any], str]] = {
            k: (v, axes_where) for k, v in shared_axes.items()
        }
        for key, value in block.items():
            if key in shared:
                errors.append(SweepConfigError(key, value,
                                               "is set both in [params] and in this block",
                                               "keep it in one place", file=file, where=where))
                continue
            try:
                axes[key] = (_values(experiment, key, value, file, where), where)
            except (SweepConfigError, UnknownSweepNameError) as exc:
                errors.append(exc)
        size = math.prod(len(v) for v, _ in axes.values())
        if size > MAX_CELLS:
            errors.append(SweepConfigError("grid", size,
                                           f"must expand to at most {MAX_CELLS} cells",
                                           "split the sweep or shorten the lists", file=file,
                                           where=where))
            axes = {}
        block_axes.append(axes)
    total = sum(math.prod(len(v) for v, _ in axes.values()) for axes in block_axes if axes)
    if total > MAX_CELLS:
        errors.append(SweepConfigError("grid", total,
                                       f"must expand to at most {MAX_CELLS} cells in all",
                                       "split the sweep or shorten the lists", file=file,
                                       where="all blocks"))
    if errors:
        _raise_all(errors, file)

    seen: dict[str, str] = {}
    resolved: list[dict[str, Any]] = []
    reported: set[str] = set()
    for i, axes in enumerate(block_axes, start=1):
        where = f"[[grid]] block {i}" if len(blocks) > 1 else "[grid]"
        if "grid" not in doc:
            where = "[params]"
        names = list(axes)
        for combo in itertools.product(*(axes[n][0] for n in names)):
            raw = dict(zip(names, combo, strict=True))
            origin = {n: axes[n][1] for n in names}
            multi = ", ".join(f"{n}={raw[n]!r}" for n in names if len(axes[n][0]) > 1)
            try:
                params = _resolve(experiment, raw, origin, file, where, multi)
            except (SweepConfigError, UnknownSweepNameError) as exc:
                # The same rule broken by many cells is reported once.
                sig = f"{getattr(exc, 'parameter', '')}|{getattr(exc, 'rule', exc)}|" \
                      f"{getattr(exc, 'where', '')}"
                if sig not in reported:
                    reported.add(sig)
                    errors.append(exc)
                continue
            ident = json.dumps(params, sort_keys=True)
            if ident in seen:
                errors.append(SweepConfigError(
                    "grid", _short(params), f"must list each cell once (also in {seen[ident]})",
                    "remove the overlap between blocks", file=file, where=where))
                continue
            seen[ident] = where
            resolved.append(params)
    work = sum(int(p.get("trials") or 0) for p in resolved)
    if work > MAX_TOTAL_TRIALS:
        errors.append(SweepConfigError(
            "trials", work, f"must add up to at most {MAX_TOTAL_TRIALS:.0e} trials over all "
            f"cells (the sweep has {len(resolved)} cells)",
            "use fewer trials per cell or fewer cells", file=file, where="all blocks"))
    if errors:
        _raise_all(errors, file)

    cells = canonical_cells(experiment, resolved)
    source = {k: doc[k] for k in doc}
    return SweepConfig(file=file, experiment=experiment, seed=seed, description=description,
                       cells=cells, source=source)


def _raise_all(errors: list[Exception], file: str) -> None:
    if len(errors) == 1:
        raise errors[0]
    raise SweepConfigErrors(errors, file=file)


def _experiment_iv(
    doc: Mapping[str, Any], file: str, registry: Mapping[str, Experiment]
) -> Experiment:
    if not isinstance(doc, Mapping):
        raise SweepConfigError("config", type(doc).__name__, "must be a TOML table",
                               file=file, where="top level")
    if "experiment" not in doc:
        raise SweepConfigError("experiment", None, "is required",
                               f'add experiment = "<name>" (one of: {", ".join(sorted(registry))})',
                               file=file, where="top level")
    name = doc["experiment"]
    if not isinstance(name, str):
        raise SweepConfigError("experiment", name, "must be a string",
                               'quote it: experiment = "makeroom"', file=file, where="top level")
    if name not in registry:
        raise UnknownSweepNameError("experiment", name, registry, file=file,
                                    where="key `experiment`")
    return registry[name]


def _table(value: Any, name: str, file: str, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise SweepConfigError(name, value, "must be a table of key = value lines",
                               f"write [{name}] on its own line, then the keys", file=file,
                               where=where)
    return dict(value)


def _values(
    experiment: Experiment, key: str, value: Any, file: str, where: str
) -> list[Any]:
    """The list of raw values of one key (a scalar is a one-value axis)."""
    if key not in experiment.param_names:
        raise UnknownSweepNameError("parameter", key, experiment.param_names, file=file,
                                    where=f"{where} (experiment {experiment.name!r})")
    items = value if isinstance(value, list) else [value]
    if not items:
        raise SweepConfigError(key, value, "must be a value or a non-empty list of values",
                               "remove the key or list at least one value", file=file,
                               where=where)
    for item in items:
        if isinstance(item, (list, Mapping)):
            raise SweepConfigError(key, value, "must be a value or a flat list of values",
                                   "use one [[grid]] block per combination instead of nesting",
                                   file=file, where=where)
    spec = experiment.param(key)
    converted = []
    for item in items:
        try:
            converted.append(spec.convert(item))
        except DomainError as exc:
            raise _relocate(exc, file, where) from None
    for item in converted:
        _check_choice(spec, item, file, where)
    if len(set(map(repr, converted))) != len(converted):
        raise SweepConfigError(key, value, "must not list a value twice",
                               "remove the repeated value", file=file, where=where)
    return converted


def _resolve(
    experiment: Experiment,
    raw: Mapping[str, Any],
    origin: Mapping[str, str],
    file: str,
    block_where: str,
    multi: str,
) -> dict[str, Any]:
    """Fill defaults, check applicability, choices and cross-parameter rules for one cell."""
    context = f"cell {multi}" if multi else ""
    out: dict[str, Any] = {}
    for spec in experiment.params:
        where = origin.get(spec.name, block_where)
        applies = spec.applies(out)
        if spec.name in raw:
            if not applies:
                cond = _condition(spec)
                raise SweepConfigError(spec.name, raw[spec.name], f"applies only when {cond}",
                                       f"remove it, or move it to a block where {cond}",
                                       file=file, where=where, context=_ctx(out, spec, context))
            value = raw[spec.name]
            _check_choice(spec, value, file, where)
            out[spec.name] = value
        elif applies and spec.required:
            cond = f" when {_condition(spec)}" if spec.when else ""
            raise SweepConfigError(spec.name, None,
                                   f"is required by experiment {experiment.name!r}{cond}",
                                   f"add `{spec.name} = ...` ({spec.doc}) under [params] or in "
                                   f"this block", file=file, where=block_where, context=context)
        else:
            out[spec.name] = spec.default if applies else None
    if experiment.check is not None:
        try:
            experiment.check(dict(out))
        except DomainError as exc:
            where = origin.get(exc.parameter, block_where)
            raise SweepConfigError(exc.parameter, exc.value, exc.rule, exc.fix, file=file,
                                   where=where,
                                   context="; ".join(c for c in (exc.context, context) if c)
                                   ) from None
    return out


def _check_choice(spec: ParamSpec, value: Any, file: str, where: str) -> None:
    known = spec.known_choices()
    if known is not None and value not in known:
        raise UnknownSweepNameError(spec.name, str(value), known, file=file,
                                    where=f"{where}, key `{spec.name}`")


def _condition(spec: ParamSpec) -> str:
    parts = []
    for key, values in spec.when.items():
        shown = " or ".join(repr(v) for v in values)
        parts.append(f"{key} is {shown}")
    return " and ".join(parts)


def _ctx(out: Mapping[str, Any], spec: ParamSpec, context: str) -> str:
    shown = ", ".join(f"{k}={out.get(k)!r}" for k in spec.when)
    return "; ".join(c for c in (shown, context) if c)


def _short(params: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in params.items() if v is not None)


def _relocate(exc: DomainError, file: str, where: str) -> SweepConfigError:
    return SweepConfigError(exc.parameter, exc.value, exc.rule, exc.fix, file=file, where=where,
                            context=exc.context)


def config_summary(config: SweepConfig) -> dict[str, Any]:
    """Plain-data view of a config for sidecars and JSON output."""
    return {
        "file": config.file,
        "experiment": config.experiment.name,
        "seed": config.seed,
        "description": config.description,
        "n_cells": config.n_cells,
        "digest": config.digest,
        "source": config.source,
    }
