"""Parameter sweeps: TOML configs expanded into canonically ordered, individually
seeded cells, run on local processes or a Dask cluster, stored resumably.

Private subpackage behind ``vista-lab sweep`` and ``vista-lab plot-sweep``; the
names below are its Python API.
"""

from vistalab._core import import_optional

# pyarrow (the results tables) is the `sweep` extra: say so before the submodules need it.
# ruff: noqa: E402
import_optional("pyarrow", "sweeps (vista-lab sweep, plot-sweep)")

from ._backends import Backend, DaskBackend, LocalBackend, available_cpus, make_backend
from ._config import MAX_CELLS, TOP_LEVEL_KEYS, SweepConfig, load_config, parse_config
from ._errors import SweepConfigError, SweepStoreError, UnknownSweepNameError
from ._experiments import EXPERIMENTS, get_experiment, register_experiment
from ._grid import Cell, cell_seed
from ._plot import Panel, PlotSummary, Series, plot_sweep
from ._runner import (
    CellFailure,
    SweepProgress,
    SweepResult,
    SweepSummary,
    default_out,
    run_sweep,
)
from ._schema import Experiment, OutputSpec, ParamSpec
from ._store import CellRecord, CellStore, DirectoryStore, MemoryStore, build_table, read_results

__all__ = [
    "MAX_CELLS",
    "TOP_LEVEL_KEYS",
    "Backend",
    "Cell",
    "CellFailure",
    "CellRecord",
    "CellStore",
    "DaskBackend",
    "DirectoryStore",
    "EXPERIMENTS",
    "Experiment",
    "LocalBackend",
    "MemoryStore",
    "OutputSpec",
    "Panel",
    "PlotSummary",
    "Series",
    "ParamSpec",
    "SweepConfig",
    "SweepConfigError",
    "SweepProgress",
    "SweepResult",
    "SweepStoreError",
    "SweepSummary",
    "UnknownSweepNameError",
    "available_cpus",
    "build_table",
    "cell_seed",
    "default_out",
    "get_experiment",
    "load_config",
    "make_backend",
    "parse_config",
    "plot_sweep",
    "read_results",
    "register_experiment",
    "run_sweep",
]
