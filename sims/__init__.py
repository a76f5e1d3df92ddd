"""Monte Carlo of the VISTA paper's two tasks, cross-checked against exact values:
the recovery task T_{N,k} (Proposition 1) and the make-room instance M_{n,L,l}
(Theorem 1) with pluggable interfaces, policies and strategies, and both tasks
run through the reference workspace engine (``*_engine``).
"""

from vistalab._core._door import install_contract as _install_contract

from ._engine_makeroom import (
    ENGINE_INTERFACES,
    EventCounters,
    makeroom_event_counters,
    simulate_makeroom_engine,
)
from ._engine_makeroom_layout import MakeRoomLayout, calibrate_makeroom
from ._engine_makeroom_observe import LedgerEntry, coarsen_ledger, parse_ledger
from ._engine_makeroom_result import EngineMakeRoomResult
from ._engine_recovery import ENGINE_STRATEGIES, EngineRecoveryResult, simulate_recovery_engine
from ._engine_recovery_feasibility import (
    FeasibilityMap,
    HandleCostFit,
    measure_handle_cost,
    recovery_feasibility_map,
)
from ._gaussian import (
    RateEstimate,
    estimate_gaussian_rate,
    gaussian_exact_mean_z,
    gaussian_exact_z_tail,
)
from ._interfaces import Interface
from ._interfaces_continuous import GaussianInterface, GibbsInterface
from ._interfaces_discrete import BlindInterface, BucketsInterface, LedgerInterface
from ._interfaces_registry import INTERFACES, make_interface
from ._makeroom import (
    CHECK_SIGMAS,
    FAST_BLOCK,
    LITERAL_BLOCK,
    MakeRoomResult,
    archive_until_room,
    exact_mean_z,
    exact_z_pmf,
    simulate_makeroom,
)
from ._policies import POLICIES, BayesPolicy, Policy, RandomPolicy, make_policy
from ._recovery import RecoveryResult, simulate_recovery
from ._recovery_protocol import Archive, Strategy, StrategyPlan
from ._recovery_strategies import (
    STRATEGIES,
    KeepBits,
    KeepBlocks,
    RandomSubset,
    Recover,
    make_strategy,
)

__all__ = [
    # recovery task T_{N,k}
    "simulate_recovery",
    "RecoveryResult",
    "Strategy",
    "StrategyPlan",
    "Archive",
    "STRATEGIES",
    "make_strategy",
    "KeepBlocks",
    "KeepBits",
    "RandomSubset",
    "Recover",
    # make-room instance M_{n,L,l}
    "simulate_makeroom",
    "MakeRoomResult",
    "Interface",
    "INTERFACES",
    "make_interface",
    "LedgerInterface",
    "GaussianInterface",
    "BucketsInterface",
    "BlindInterface",
    "GibbsInterface",
    "Policy",
    "POLICIES",
    "make_policy",
    "BayesPolicy",
    "RandomPolicy",
    "exact_mean_z",
    "exact_z_pmf",
    "archive_until_room",
    "FAST_BLOCK",
    "LITERAL_BLOCK",
    "CHECK_SIGMAS",
    # engine-backed experiments (workspace/ driven by sims/)
    "simulate_makeroom_engine",
    "EngineMakeRoomResult",
    "makeroom_event_counters",
    "EventCounters",
    "MakeRoomLayout",
    "calibrate_makeroom",
    "ENGINE_INTERFACES",
    "parse_ledger",
    "LedgerEntry",
    "coarsen_ledger",
    "simulate_recovery_engine",
    "EngineRecoveryResult",
    "ENGINE_STRATEGIES",
    "measure_handle_cost",
    "HandleCostFit",
    "recovery_feasibility_map",
    "FeasibilityMap",
    # Gaussian channel (Proposition 2)
    "RateEstimate",
    "estimate_gaussian_rate",
    "gaussian_exact_mean_z",
    "gaussian_exact_z_tail",
]

# The error contract's net over every public name (vistalab._core._door).
_install_contract(globals())
