"""The experiment registry: name -> (parameter schema, result columns, run function).

To add an experiment (e.g. the engine-backed ``makeroom-engine``), add one
:class:`Experiment` to ``_BUILTIN`` below, with its run function given as a
``"module:function"`` reference so this module stays cheap to import. Users can
also register their own at run time with :func:`register_experiment`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from vistalab import sims, workspace
from vistalab.sims import _makeroom as _sims_makeroom
from vistalab.theory import DomainError

from ._schema import Experiment, OutputSpec, ParamSpec

__all__ = [
    "EXPERIMENTS",
    "MAKEROOM",
    "RECOVERY",
    "MAKEROOM_ENGINE",
    "RECOVERY_ENGINE",
    "get_experiment",
    "register_experiment",
    "run_makeroom",
    "run_recovery",
    "run_makeroom_engine",
    "run_recovery_engine",
]


#: Largest n of a literal-mode make-room cell (sims' own bound, checked at the door).
_LITERAL_MAX_N: int = _sims_makeroom.LITERAL_MAX_N

#: Most Monte Carlo trials one array-simulator cell may ask for.
MAX_TRIALS = 10**9

#: Most trials one engine-backed cell may ask for (each trial builds a workspace).
MAX_ENGINE_TRIALS = 10**6


# ---------------------------------------------------------------------------
# makeroom: the make-room instance M_{n,L,l} (paper Def. "Make-room instance",
# Theorem 1) through the array simulator sims.simulate_makeroom.


def _interface_names() -> list[str]:
    return list(sims.INTERFACES)


def _policy_names() -> list[str]:
    return list(sims.POLICIES)


def _strategy_names() -> list[str]:
    return list(sims.STRATEGIES)


class _RecoveringStrategies:
    """The registered strategies that read the archive (``when`` condition of
    ``handle_cost``), looked up in sims on use so new ones need no edit here."""

    def _names(self) -> tuple[str, ...]:
        from vistalab import sims

        return tuple(name for name, cls in sims.STRATEGIES.items()
                     if getattr(cls, "recovering", False))

    def __contains__(self, value: object) -> bool:
        return value in self._names()

    def __iter__(self) -> Any:
        return iter(self._names())


_recovering_strategies: Any = _RecoveringStrategies()


def _interface_kwargs(p: Mapping[str, Any]) -> dict[str, Any]:
    keys = {"gaussian": ("sigma",), "buckets": ("buckets",), "gibbs": ("lam", "rate")}
    return {k: p[k] for k in keys.get(p["interface"], ()) if p.get(k) is not None}


def _makeroom_check(p: dict[str, Any]) -> None:
    # sims' own door checks on the actual objects: one source for its rules
    # (2 <= kappa < n, 1 <= buckets <= n, exactly one of lam/rate, ...).
    sims.make_interface(p["interface"], n=p["n"], kappa=p["kappa"], **_interface_kwargs(p))
    sims.make_policy(p["policy"])
    if p["mode"] == "literal" and p["n"] > _LITERAL_MAX_N:
        # Literal mode holds every block of every trial in memory: refused at the
        # door, with the bound, instead of failing the cell mid-sweep.
        raise DomainError("n", p["n"], f"must be <= {_LITERAL_MAX_N} in literal mode "
                          "(it builds every observation in memory)",
                          'use mode = "fast" for larger n', context="mode='literal'")


def run_makeroom(params: Mapping[str, Any], rng: np.random.SeedSequence) -> dict[str, Any]:
    """One make-room cell: ``sims.simulate_makeroom`` at the cell's parameters.

    Timing fields (trials per second) are left out of the row on purpose: the
    table must be identical whatever machine or worker computed it.
    """
    iface = sims.make_interface(params["interface"], n=params["n"], kappa=params["kappa"],
                                **_interface_kwargs(params))
    res = sims.simulate_makeroom(params["n"], params["kappa"], iface, policy=params["policy"],
                                 trials=params["trials"], rng=rng, mode=params["mode"])
    d = res.to_dict()
    lo, hi = d["mean_z_ci"]
    return {
        "mean_z": d["mean_z"],
        "mean_z_se": d["mean_z_se"],
        "mean_z_ci_low": lo,
        "mean_z_ci_high": hi,
        "rate_bits": d["rate_bits"],
        "rate_bits_se": d["rate_bits_se"],
        "rate_exact": d["rate_exact"],
        "lower_bound": d["lower_bound"],
        "exact_mean_z": d["exact_mean_z"],
        "optimal_mean_z": d["optimal_mean_z"],
        "nu": d["nu"],
        "agrees_with_exact": d["agrees_with_exact"],
        "consistent_with_theory": d["consistent_with_theory"],
    }


MAKEROOM = Experiment(
    name="makeroom",
    description="make-room instance M_{n,L,l}: E[Z] and rate of an interface (Theorem 1)",
    params=(
        ParamSpec("n", "int", "number of blocks in the working set", required=True, lo=3),
        ParamSpec("kappa", "int", "size ratio L/l of the bulky block", required=True, lo=2),
        ParamSpec("interface", "str", "observation interface", required=True,
                  choices=_interface_names),
        ParamSpec("sigma", "real", "noise of the gaussian size channel", required=True,
                  lo=0.0, lo_open=True, when={"interface": ("gaussian",)},
                  fix="use a positive noise level"),
        ParamSpec("buckets", "int", "number of buckets M of the bucket ledger", required=True,
                  lo=1, when={"interface": ("buckets",)}),
        ParamSpec("lam", "real", "inverse temperature of the gibbs interface", lo=0.0,
                  when={"interface": ("gibbs",)}),
        ParamSpec("rate", "real", "target rate of the gibbs interface, bits", lo=0.0,
                  when={"interface": ("gibbs",)}),
        ParamSpec("policy", "str", "archive policy", default="bayes", choices=_policy_names),
        ParamSpec("mode", "str", "simulator mode", default="fast", choices=("fast", "literal")),
        ParamSpec("trials", "int", "Monte Carlo trials per cell", required=True, lo=1,
                  hi=MAX_TRIALS, fix=f"use at most {MAX_TRIALS:.0e} trials per cell"),
    ),
    outputs=(
        OutputSpec("mean_z", "real", "Monte Carlo mean of Z (load-bearing blocks archived)"),
        OutputSpec("mean_z_se", "real", "standard error of mean_z"),
        OutputSpec("mean_z_ci_low", "real", "lower end of the 95% confidence interval of E[Z]"),
        OutputSpec("mean_z_ci_high", "real", "upper end of the 95% confidence interval of E[Z]"),
        OutputSpec("rate_bits", "real", "rate I(J*;Y) of the interface, bits"),
        OutputSpec("rate_bits_se", "real", "standard error of rate_bits (0 when exact)"),
        OutputSpec("rate_exact", "bool", "whether rate_bits is exact (else a Monte Carlo "
                   "estimate)"),
        OutputSpec("lower_bound", "real", "Theorem 1 lower bound on E[Z] (null outside "
                   "2 <= kappa < n/2)", nullable=True),
        OutputSpec("exact_mean_z", "real", "exact E[Z] of this interface and policy, when known",
                   nullable=True),
        OutputSpec("optimal_mean_z", "real", "exact optimal frontier: smallest E[Z] at this rate",
                   nullable=True),
        OutputSpec("nu", "real", "nu = log2((n-kappa)/kappa) (null outside the theorem's "
                   "domain)", nullable=True),
        OutputSpec("agrees_with_exact", "bool", "the estimate agrees with exact_mean_z (sims' "
                   "check; null without an exact value)", nullable=True),
        OutputSpec("consistent_with_theory", "bool", "the estimate is not below the Theorem 1 "
                   "bound or the frontier beyond its interval (sims' check)", nullable=True),
    ),
    run=run_makeroom,
    check=_makeroom_check,
    warm_modules=(sims.__name__,),
)


# ---------------------------------------------------------------------------
# recovery: the recovery task T_{N,k} (paper Proposition 1) through
# sims.simulate_recovery.


def _recovery_check(p: dict[str, Any]) -> None:
    from vistalab import sims, theory

    theory.recovery_success_bound(p["N"], p["k"], p["budget"])
    if p["N"] * p["k"] > 1 << 30:
        raise DomainError("k", p["k"], "must keep N*k <= 2**30 bits per trial",
                          "use fewer or shorter blocks", context=f"N={p['N']}")
    sims.make_strategy(p["strategy"])


def run_recovery(params: Mapping[str, Any], rng: np.random.SeedSequence) -> dict[str, Any]:
    """One recovery cell: ``sims.simulate_recovery`` at the cell's parameters.

    Timing fields are left out of the row (not reproducible across machines).
    """
    res = sims.simulate_recovery(params["N"], params["k"], params["budget"], params["strategy"],
                                 trials=params["trials"], rng=rng,
                                 handle_cost=params["handle_cost"])
    d = res.to_dict()
    lo, hi = d["success_ci"]
    return {
        "success": d["success"],
        "success_ci_low": lo,
        "success_ci_high": hi,
        "successes": d["successes"],
        "bound": d["bound"],
        "exact_success": d["exact_success"],
        "consistent_with_bound": d["consistent_with_bound"],
        "entropy_bits": d["entropy_bits"],
        "feasible": d["feasible"],
    }


RECOVERY = Experiment(
    name="recovery",
    description="recovery task T_{N,k}: success of a strategy under budget B (Proposition 1)",
    params=(
        ParamSpec("N", "int", "number of evidence blocks", required=True, lo=1),
        ParamSpec("k", "int", "bits per block", required=True, lo=1),
        ParamSpec("budget", "real", "prompt budget B, bits", required=True, lo=0.0),
        ParamSpec("strategy", "str", "in-prompt strategy", required=True,
                  choices=_strategy_names),
        ParamSpec("handle_cost", "real", "handle cost factor c0, bits per log2 N", default=1.0,
                  lo=0.0, when={"strategy": _recovering_strategies}),
        ParamSpec("trials", "int", "Monte Carlo trials per cell", required=True, lo=1,
                  hi=MAX_TRIALS, fix=f"use at most {MAX_TRIALS:.0e} trials per cell"),
    ),
    outputs=(
        OutputSpec("success", "real", "Monte Carlo success rate"),
        OutputSpec("success_ci_low", "real", "lower end of the exact binomial 95% interval"),
        OutputSpec("success_ci_high", "real", "upper end of the exact binomial 95% interval"),
        OutputSpec("successes", "int", "number of successful trials"),
        OutputSpec("bound", "real", "Proposition 1 bound B/(Nk) + 1/k (not capped at 1)"),
        OutputSpec("exact_success", "real", "exact success probability, when a closed form "
                   "exists", nullable=True),
        OutputSpec("consistent_with_bound", "bool", "whether the estimate is consistent with "
                   "Proposition 1 (null for recovering strategies)", nullable=True),
        OutputSpec("entropy_bits", "real", "declared H(R) of the in-prompt state, bits"),
        OutputSpec("feasible", "bool", "recovering strategies: instruction + handles + one "
                   "block fit the budget"),
    ),
    run=run_recovery,
    check=_recovery_check,
    warm_modules=(sims.__name__,),
)


# ---------------------------------------------------------------------------
# makeroom-engine / recovery-engine: the same tasks through the reference
# workspace engine (sims.simulate_makeroom_engine / simulate_recovery_engine).


def _engine_interface_names() -> list[str]:
    return list(sims.ENGINE_INTERFACES)


def _engine_strategy_names() -> list[str]:
    return list(sims.ENGINE_STRATEGIES)


def _makeroom_engine_check(p: dict[str, Any]) -> None:
    sims.make_interface(p["interface"], n=p["n"], kappa=p["kappa"], **_interface_kwargs(p))
    sims.make_policy(p["policy"])
    if p["n"] > 10_000:
        raise DomainError("n", p["n"], "must be at most 10000 in engine mode",
                          "use the makeroom experiment for larger instances")


def run_makeroom_engine(params: Mapping[str, Any], rng: np.random.SeedSequence
                        ) -> dict[str, Any]:
    """One engine make-room cell: ``sims.simulate_makeroom_engine`` (in-memory store).

    Timing fields are left out of the row (not reproducible across machines).
    """
    extra = {} if params.get("l_tokens") is None else {"l_tokens": params["l_tokens"]}
    res = sims.simulate_makeroom_engine(
        params["n"], params["kappa"], params["interface"], policy=params["policy"],
        trials=params["trials"], rng=rng, tokenizer=params["tokenizer"],
        array_trials=params["array_trials"], reuse=bool(params.get("reuse", False)), **extra,
        **_interface_kwargs(params))
    d = res.to_dict()
    lo, hi = d["mean_z_ci"]
    return {
        "mean_z": d["mean_z"], "mean_z_se": d["mean_z_se"], "mean_z_ci_low": lo,
        "mean_z_ci_high": hi, "rate_bits": d["rate_bits"], "rate_bits_se": d["rate_bits_se"],
        "lower_bound": d["lower_bound"], "exact_mean_z": d["exact_mean_z"],
        "optimal_mean_z": d["optimal_mean_z"], "array_mean_z": d["array_mean_z"],
        "z_score": d["z_score"] if math.isfinite(d["z_score"]) else None,
        "agrees_with_array": d["agrees_with_array"],
        "consistent_with_theory": d["consistent_with_theory"],
        "archive_events": d["archive_events"], "read_events": d["read_events"],
        "recovery_obligations": d["recovery_obligations"],
        "byte_exact_recoveries": d["byte_exact_recoveries"],
        "all_recoveries_byte_exact": d["all_recoveries_byte_exact"],
        "l_tokens_used": d["l_tokens"], "budget_used_tokens": d["budget_tokens"],
        "size_mismatches": d["size_mismatches"], "budget_mismatches": d["budget_mismatches"],
        "stop_mismatches": d["stop_mismatches"],
    }


MAKEROOM_ENGINE = Experiment(
    name="makeroom-engine",
    description="make-room instance M_{n,L,l} through the workspace engine: E[Z], archive "
                "and read events, byte-exact recovery, array cross-check (Theorem 1)",
    params=(
        ParamSpec("n", "int", "number of blocks in the working set", required=True, lo=3,
                  hi=10_000),
        ParamSpec("kappa", "int", "size ratio L/l of the bulky block", required=True, lo=2),
        ParamSpec("interface", "str", "what the policy sees through the engine", required=True,
                  choices=_engine_interface_names),
        ParamSpec("sigma", "real", "noise of the content channel", required=True,
                  lo=0.0, lo_open=True, when={"interface": ("gaussian",)},
                  fix="use a positive noise level"),
        ParamSpec("buckets", "int", "number of buckets M of the coarsened dashboard",
                  required=True, lo=1, when={"interface": ("buckets",)}),
        ParamSpec("policy", "str", "archive policy", default="bayes", choices=_policy_names),
        ParamSpec("tokenizer", "str", "engine tokenizer", default="cl100k_base",
                  choices=("cl100k_base", "approx")),
        ParamSpec("l_tokens", "int", "net tokens of a load-bearing block (default "
                  "max(4, min(40, 900 // kappa)))", lo=1),
        ParamSpec("array_trials", "int", "trials of the array-simulator cross-check",
                  default=200_000, lo=2, hi=MAX_TRIALS),
        ParamSpec("reuse", "bool", "one workspace per 64 trials, restored after each trial",
                  default=False),
        ParamSpec("trials", "int", "engine trials per cell", required=True, lo=1,
                  hi=MAX_ENGINE_TRIALS,
                  fix=f"use at most {MAX_ENGINE_TRIALS:.0e} engine trials per cell"),
    ),
    outputs=(
        OutputSpec("mean_z", "real", "engine mean of Z (load-bearing blocks archived)"),
        OutputSpec("mean_z_se", "real", "standard error of mean_z"),
        OutputSpec("mean_z_ci_low", "real", "lower end of the 95% confidence interval of E[Z]"),
        OutputSpec("mean_z_ci_high", "real", "upper end of the 95% confidence interval of E[Z]"),
        OutputSpec("rate_bits", "real", "rate I(J*;Y) of the interface, bits"),
        OutputSpec("rate_bits_se", "real", "standard error of rate_bits (0 when exact)"),
        OutputSpec("lower_bound", "real", "Theorem 1 lower bound on E[Z]", nullable=True),
        OutputSpec("exact_mean_z", "real", "exact E[Z] of this interface and policy",
                   nullable=True),
        OutputSpec("optimal_mean_z", "real", "exact optimal frontier at this rate",
                   nullable=True),
        OutputSpec("array_mean_z", "real", "the array simulator's E[Z] (cross-check)"),
        OutputSpec("z_score", "real", "(engine - array) / combined standard error",
                   nullable=True),
        OutputSpec("agrees_with_array", "bool", "engine and array agree within 4 SE"),
        OutputSpec("consistent_with_theory", "bool", "not below Theorem 1's bound or the "
                   "frontier beyond 4 SE"),
        OutputSpec("archive_events", "int", "archive tool calls over the cell's trials"),
        OutputSpec("read_events", "int", "payload reads over the cell's trials"),
        OutputSpec("recovery_obligations", "int", "sum of Z over the cell's trials"),
        OutputSpec("byte_exact_recoveries", "int", "reads that returned the original bytes"),
        OutputSpec("all_recoveries_byte_exact", "bool", "every read and query was exact"),
        OutputSpec("l_tokens_used", "int", "net tokens of a load-bearing block (the default "
                   "when l_tokens is empty)"),
        OutputSpec("budget_used_tokens", "int", "engine budget B (rendering over by exactly L)"),
        OutputSpec("size_mismatches", "int", "archives freeing other than the calibrated size"),
        OutputSpec("budget_mismatches", "int", "trials not over budget by exactly L"),
        OutputSpec("stop_mismatches", "int", "trials where preflight cleared after a different "
                   "number of archives than exact sizes predict"),
    ),
    run=run_makeroom_engine,
    check=_makeroom_engine_check,
    warm_modules=(sims.__name__, workspace.__name__),
)


def _recovery_engine_check(p: dict[str, Any]) -> None:
    if p["N"] * p["k"] > 1 << 20:
        raise DomainError("k", p["k"], "must keep N*k <= 2**20 bits in engine mode",
                          "use fewer or shorter blocks", context=f"N={p['N']}")


def run_recovery_engine(params: Mapping[str, Any], rng: np.random.SeedSequence
                        ) -> dict[str, Any]:
    """One engine recovery cell: ``sims.simulate_recovery_engine`` (in-memory store).

    Timing fields are left out of the row (not reproducible across machines).
    """
    res = sims.simulate_recovery_engine(params["N"], params["k"], params["budget_tokens"],
                                        params["strategy"], trials=params["trials"], rng=rng,
                                        tokenizer=params["tokenizer"])
    d = res.to_dict()
    lo, hi = d["success_ci"]
    eng_feas = d["engine_feasible"]
    return {
        "success": d["success"], "success_ci_low": lo, "success_ci_high": hi,
        "successes": d["successes"], "bound": d["bound"], "exact_success": d["exact_success"],
        "consistent_with_bound": d["consistent_with_bound"], "entropy_bits": d["entropy_bits"],
        "feasible": d["feasible"],
        "engine_feasible": eng_feas if math.isfinite(eng_feas) else None,
        "handle_tokens": d["handle_tokens"], "instruction_tokens": d["instruction_tokens"],
        "read_tokens": d["read_tokens"], "raw_history_tokens": d["raw_history_tokens"],
        "kept": d["kept"], "archive_events": d["archive_events"],
        "delete_events": d["delete_events"], "read_events": d["read_events"],
        "byte_exact_recoveries": d["byte_exact_recoveries"],
    }


RECOVERY_ENGINE = Experiment(
    name="recovery-engine",
    description="recovery task T_{N,k} through the workspace engine: success of a strategy "
                "under a token budget, handle cost, feasibility (Proposition 1)",
    params=(
        ParamSpec("N", "int", "number of evidence blocks", required=True, lo=1, hi=10_000),
        ParamSpec("k", "int", "bits per block", required=True, lo=1),
        ParamSpec("budget_tokens", "int", "engine budget B, tokens", required=True, lo=1),
        ParamSpec("strategy", "str", "engine strategy", required=True,
                  choices=_engine_strategy_names),
        ParamSpec("tokenizer", "str", "engine tokenizer", default="cl100k_base",
                  choices=("cl100k_base", "approx")),
        ParamSpec("trials", "int", "engine trials per cell", required=True, lo=1,
                  hi=MAX_ENGINE_TRIALS,
                  fix=f"use at most {MAX_ENGINE_TRIALS:.0e} engine trials per cell"),
    ),
    outputs=(
        OutputSpec("success", "real", "success rate"),
        OutputSpec("success_ci_low", "real", "lower end of the exact binomial 95% interval"),
        OutputSpec("success_ci_high", "real", "upper end of the exact binomial 95% interval"),
        OutputSpec("successes", "int", "number of successful trials"),
        OutputSpec("bound", "real", "Proposition 1 bound at the block bits kept in the prompt"),
        OutputSpec("exact_success", "real", "exact success probability", nullable=True),
        OutputSpec("consistent_with_bound", "bool", "non-recovering strategies: consistent "
                   "with Proposition 1 (null for recover)", nullable=True),
        OutputSpec("entropy_bits", "real", "block bits kept in the prompt (recover: handle "
                   "tokens)"),
        OutputSpec("feasible", "bool", "theory's condition with the measured token costs"),
        OutputSpec("engine_feasible", "real", "recover: fraction of trials whose read-back fit",
                   nullable=True),
        OutputSpec("handle_tokens", "real", "mean tokens of one archive handle"),
        OutputSpec("instruction_tokens", "int", "fixed prompt tokens beside the handles"),
        OutputSpec("read_tokens", "int", "tokens one read-back adds to the prompt"),
        OutputSpec("raw_history_tokens", "int", "rendering with every block visible"),
        OutputSpec("kept", "int", "b (keep-bits) or s (keep-blocks)"),
        OutputSpec("archive_events", "int", "archive tool calls over the cell's trials"),
        OutputSpec("delete_events", "int", "delete tool calls over the cell's trials"),
        OutputSpec("read_events", "int", "payload reads over the cell's trials"),
        OutputSpec("byte_exact_recoveries", "int", "reads that returned the original bytes"),
    ),
    run=run_recovery_engine,
    check=_recovery_engine_check,
    warm_modules=(sims.__name__, workspace.__name__),
)


# ---------------------------------------------------------------------------
# The registry. Add new experiments to _BUILTIN.

_BUILTIN: tuple[Experiment, ...] = (MAKEROOM, RECOVERY, MAKEROOM_ENGINE, RECOVERY_ENGINE)

_REGISTRY: dict[str, Experiment] = {e.name: e for e in _BUILTIN}

#: Read-only view of every registered experiment, by name.
EXPERIMENTS: Mapping[str, Experiment] = MappingProxyType(_REGISTRY)


def register_experiment(experiment: Experiment, *, replace: bool = False) -> Experiment:
    """Add an experiment to the registry (for users' own experiments).

    Raises
    ------
    DomainError
        The name is taken and ``replace`` is False.
    """
    if not isinstance(experiment, Experiment):
        raise DomainError("experiment", type(experiment).__name__, "must be an Experiment",
                          "build one with vistalab._sweep.Experiment(...)")
    if experiment.name in _REGISTRY and not replace:
        raise DomainError("experiment.name", experiment.name, "must not be registered already",
                          "pick another name or pass replace=True")
    _REGISTRY[experiment.name] = experiment
    return experiment


def get_experiment(name: str) -> Experiment:
    """The registered experiment called ``name`` (UnknownNameError with a suggestion)."""
    from vistalab.theory import UnknownNameError

    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownNameError("experiment", name, _REGISTRY) from None
