"""The experiment registry: name -> (parameter schema, result columns, run function).

To add an experiment (e.g. the engine-backed ``makeroom-engine``), add one
:class:`Experiment` to ``_BUILTIN`` below, with its run function given as a
``"module:function"`` reference so this module stays cheap to import. Users can
also register their own at run time with :func:`register_experiment`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from theory import DomainError

from ._schema import Experiment, OutputSpec, ParamSpec

__all__ = [
    "EXPERIMENTS",
    "MAKEROOM",
    "RECOVERY",
    "get_experiment",
    "register_experiment",
    "run_makeroom",
    "run_recovery",
]


# ---------------------------------------------------------------------------
# makeroom: the make-room instance M_{n,L,l} (paper Def. "Make-room instance",
# Theorem 1) through the array simulator sims.simulate_makeroom.


def _interface_names() -> list[str]:
    import sims

    return list(sims.INTERFACES)


def _policy_names() -> list[str]:
    import sims

    return list(sims.POLICIES)


def _strategy_names() -> list[str]:
    import sims

    return list(sims.STRATEGIES)


class _RecoveringStrategies:
    """The registered strategies that read the archive (``when`` condition of
    ``handle_cost``), looked up in sims on use so new ones need no edit here."""

    def _names(self) -> tuple[str, ...]:
        import sims

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
    import sims

    sims.make_interface(p["interface"], n=p["n"], kappa=p["kappa"], **_interface_kwargs(p))
    sims.make_policy(p["policy"])


def run_makeroom(params: Mapping[str, Any], rng: np.random.SeedSequence) -> dict[str, Any]:
    """One make-room cell: ``sims.simulate_makeroom`` at the cell's parameters.

    Timing fields (trials per second) are left out of the row on purpose: the
    table must be identical whatever machine or worker computed it.
    """
    import sims

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
        ParamSpec("trials", "int", "Monte Carlo trials per cell", required=True, lo=1),
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
    run="vistalab._sweep._experiments:run_makeroom",
    check=_makeroom_check,
    warm_modules=("sims",),
)


# ---------------------------------------------------------------------------
# recovery: the recovery task T_{N,k} (paper Proposition 1) through
# sims.simulate_recovery.


def _recovery_check(p: dict[str, Any]) -> None:
    import sims
    import theory

    theory.recovery_success_bound(p["N"], p["k"], p["budget"])
    if p["N"] * p["k"] > 1 << 30:
        raise DomainError("k", p["k"], "must keep N*k <= 2**30 bits per trial",
                          "use fewer or shorter blocks", context=f"N={p['N']}")
    sims.make_strategy(p["strategy"])


def run_recovery(params: Mapping[str, Any], rng: np.random.SeedSequence) -> dict[str, Any]:
    """One recovery cell: ``sims.simulate_recovery`` at the cell's parameters.

    Timing fields are left out of the row (not reproducible across machines).
    """
    import sims

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
        ParamSpec("trials", "int", "Monte Carlo trials per cell", required=True, lo=1),
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
    run="vistalab._sweep._experiments:run_recovery",
    check=_recovery_check,
    warm_modules=("sims",),
)


# ---------------------------------------------------------------------------
# The registry. Add new experiments to _BUILTIN.

_BUILTIN: tuple[Experiment, ...] = (MAKEROOM, RECOVERY)

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
    from theory import UnknownNameError

    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownNameError("experiment", name, _REGISTRY) from None
