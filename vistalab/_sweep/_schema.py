"""Declarations of sweep experiments: parameter specs, output columns, and the
:class:`Experiment` record that the registry maps names to.

An experiment is data (its parameter schema and result columns) plus one
function ``run(params, rng) -> flat dict``; everything else (grid expansion,
seeding, storage, parallelism) is generic.
"""

from __future__ import annotations

import importlib
import math
import numbers
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from vistalab.theory import DomainError
from vistalab.theory._validate import as_int, as_real

__all__ = ["Kind", "ParamSpec", "OutputSpec", "Experiment", "coerce_row"]

#: Column types a parameter or an output may have (stored as int64, float64,
#: string or bool in the results table).
Kind = Literal["int", "real", "str", "bool"]

_KINDS = ("int", "real", "str", "bool")


@dataclass(frozen=True)
class ParamSpec:
    """One parameter of an experiment.

    Parameters
    ----------
    name : str
        Key used in the TOML config and column name in the results table.
    kind : {"int", "real", "str", "bool"}
        Value type; integral floats are accepted for ``int``, ints for ``real``.
    doc : str
        One line shown in error messages and in the results sidecar.
    default : Any, optional
        Value used when the parameter applies but is absent. ``None`` means no
        default: the parameter is then either required or left empty (null).
    required : bool
        Whether the parameter must be given (when it applies).
    lo, hi : float, optional
        Static bounds checked at the door (cross-parameter rules such as
        ``kappa < n`` belong to :attr:`Experiment.check`).
    lo_open, hi_open : bool
        Whether the bounds are strict.
    choices : tuple of str or callable, optional
        Allowed values of a ``str`` parameter, or a zero-argument callable
        returning them (so the names can come from another registry, e.g.
        ``sims.INTERFACES``, without importing it at module import time).
    when : mapping, optional
        ``{other_param: (values...)}``: the parameter only applies when every
        listed parameter takes one of the listed values; elsewhere it must be
        absent. Listed parameters must come earlier in the schema.
    fix : str
        Advice appended to a domain error for this parameter.
    """

    name: str
    kind: Kind
    doc: str
    default: Any = None
    required: bool = False
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False
    choices: tuple[str, ...] | Callable[[], Iterable[str]] | None = None
    when: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    fix: str = ""

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise DomainError("kind", self.kind, f"must be one of {_KINDS}",
                              context=f"parameter {self.name!r}")
        if self.required and self.default is not None:
            raise DomainError("default", self.default, "must be None for a required parameter",
                              context=f"parameter {self.name!r}")

    def known_choices(self) -> tuple[str, ...] | None:
        """The allowed values of a ``str`` parameter (None when unrestricted)."""
        if self.choices is None:
            return None
        names = self.choices() if callable(self.choices) else self.choices
        return tuple(sorted(str(c) for c in names))

    def applies(self, params: Mapping[str, Any]) -> bool:
        """Whether this parameter applies given the values of earlier parameters."""
        return all(params.get(key) in values for key, values in self.when.items())

    def convert(self, value: Any, *, context: str = "") -> Any:
        """Check one value against the kind and static bounds; return it normalised.

        Raises
        ------
        DomainError
            Wrong type or outside the static bounds. Unknown choices are left to
            the caller, which knows where the value came from (for the
            close-match message).
        """
        lo = None if self.lo is None else self.lo
        hi = None if self.hi is None else self.hi
        if self.kind == "int":
            return as_int(self.name, value,
                          lo=None if lo is None else math.ceil(lo + (1 if self.lo_open else 0)),
                          hi=None if hi is None else math.floor(hi - (1 if self.hi_open else 0)),
                          context=context, fix=self.fix)
        if self.kind == "real":
            return as_real(self.name, value, lo=lo, hi=hi, lo_open=self.lo_open,
                           hi_open=self.hi_open, context=context, fix=self.fix)
        if self.kind == "bool":
            if not isinstance(value, (bool, np.bool_)):
                raise DomainError(self.name, value, "must be true or false", "write true or false",
                                  context=context)
            return bool(value)
        if not isinstance(value, str):
            raise DomainError(self.name, value, "must be a string", 'quote it: "..."',
                              context=context)
        return value


@dataclass(frozen=True)
class OutputSpec:
    """One result column produced by an experiment.

    Parameters
    ----------
    name : str
        Column name in the results table.
    kind : {"int", "real", "str", "bool"}
        Column type.
    doc : str
        What the column holds (copied into the results sidecar).
    nullable : bool
        Whether the experiment may return None (stored as null).
    """

    name: str
    kind: Kind
    doc: str
    nullable: bool = False

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise DomainError("kind", self.kind, f"must be one of {_KINDS}",
                              context=f"output {self.name!r}")


@dataclass(frozen=True)
class Experiment:
    """A named sweep experiment: parameter schema, result columns and the run function.

    Parameters
    ----------
    name : str
        Registry key, used as ``experiment = "..."`` in configs.
    description : str
        One line for help texts and the sidecar.
    params : tuple of ParamSpec
        Parameters in canonical order (also the column order and the sort order
        of the grid).
    outputs : tuple of OutputSpec
        Result columns in table order.
    run : callable or str
        ``run(params: dict, rng: numpy.random.SeedSequence) -> dict`` returning
        one flat row with exactly the ``outputs`` keys; or a ``"module:function"``
        reference imported on first use (in the worker process), which keeps
        heavy imports out of the registry module.
    check : callable, optional
        ``check(params) -> None`` raising :class:`theory.DomainError` for rules
        that involve several parameters (``kappa < n``, ``buckets <= n``...). It
        runs at the door, for every cell, before any work starts.
    warm_modules : tuple of str
        Modules a worker should import before timing starts (benchmarks).
    """

    name: str
    description: str
    params: tuple[ParamSpec, ...]
    outputs: tuple[OutputSpec, ...]
    run: Callable[[dict[str, Any], np.random.SeedSequence], Mapping[str, Any]] | str
    check: Callable[[dict[str, Any]], None] | None = None
    warm_modules: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        names = [p.name for p in self.params]
        outs = [o.name for o in self.outputs]
        reserved = {"cell", "seed_entropy"}
        seen: set[str] = set()
        for n in [*names, *outs]:
            if n in seen or n in reserved:
                raise DomainError("params/outputs", n,
                                  "must be unique column names other than 'cell' and "
                                  "'seed_entropy'", context=f"experiment {self.name!r}")
            seen.add(n)
        for i, p in enumerate(self.params):
            for key in p.when:
                if key not in names[:i]:
                    raise DomainError(f"{p.name}.when", key,
                                      "must name a parameter declared earlier in the schema",
                                      context=f"experiment {self.name!r}")

    @property
    def param_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.params)

    def param(self, name: str) -> ParamSpec:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)

    def resolve_run(
        self,
    ) -> Callable[[dict[str, Any], np.random.SeedSequence], Mapping[str, Any]]:
        """The run function, importing a ``"module:function"`` reference if needed."""
        if callable(self.run):
            return self.run
        module, _, attr = self.run.partition(":")
        fn = getattr(importlib.import_module(module), attr)
        return fn  # type: ignore[no-any-return]


def coerce_row(experiment: Experiment, row: Mapping[str, Any]) -> dict[str, Any]:
    """Check a row returned by an experiment against its outputs; return plain values.

    numpy scalars become Python ``int``/``float``/``bool`` so rows serialise
    exactly (``repr`` of a float round-trips) and build the same table
    whichever process produced them.

    Raises
    ------
    DomainError
        Missing or extra keys, or a value of the wrong type: a bug in the
        experiment's run function, reported with the experiment's name.
    """
    if not isinstance(row, Mapping):
        raise DomainError("row", type(row).__name__, "must be a mapping of output columns",
                          context=f"experiment {experiment.name!r}")
    expected = [o.name for o in experiment.outputs]
    missing = [k for k in expected if k not in row]
    extra = sorted(k for k in row if k not in expected)
    if missing or extra:
        raise DomainError("row", sorted(row),
                          f"must have exactly the declared output keys (missing {missing}, "
                          f"unexpected {extra})",
                          "fix the experiment's run function or its outputs",
                          context=f"experiment {experiment.name!r}")
    out: dict[str, Any] = {}
    for spec in experiment.outputs:
        out[spec.name] = _coerce_value(experiment.name, spec, row[spec.name])
    return out


def _coerce_value(experiment: str, spec: OutputSpec, value: Any) -> Any:
    context = f"experiment {experiment!r}, output {spec.name!r}"
    if value is None:
        if not spec.nullable:
            raise DomainError(spec.name, value, "must not be None (column is not nullable)",
                              context=context)
        return None
    if spec.kind == "bool":
        if isinstance(value, (bool, np.bool_)):
            return bool(value)
    elif spec.kind == "int":
        if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
            return int(value)
    elif spec.kind == "real":
        if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)):
            return float(value)
    elif isinstance(value, str):
        return value
    raise DomainError(spec.name, value, f"must be of kind {spec.kind!r}", context=context)
