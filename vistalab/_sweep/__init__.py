"""Parameter sweeps: TOML configs expanded into canonically ordered cells, each
seeded by its content, run on local processes or a Dask cluster, stored resumably.

Private subpackage behind ``vista-lab sweep``, ``vista-lab plot-sweep`` and the
public :mod:`vistalab.sweep` module.
"""

from vistalab._core import import_optional

# pyarrow (the results tables) is the `sweep` extra: say so before the submodules need it.
# ruff: noqa: E402
import_optional("pyarrow", "sweeps (vista-lab sweep, plot-sweep)")

from ._backends import (
    Backend,
    DaskBackend,
    LocalBackend,
    available_cpus,
    make_backend,
    scheduler_address_iv,
)
from ._config import (
    MAX_CELLS,
    MAX_TOTAL_TRIALS,
    TOP_LEVEL_KEYS,
    SweepConfig,
    load_config,
    parse_config,
)
from ._errors import (
    SweepCellError,
    SweepConfigError,
    SweepConfigErrors,
    SweepStoreError,
    UnknownSweepNameError,
)
from ._experiments import EXPERIMENTS, get_experiment, register_experiment
from ._grid import Cell, cell_seed, key_words
from ._plot import Panel, PlotSummary, Series, plot_sweep
from ._runner import (
    CellFailure,
    SweepProgress,
    SweepResult,
    SweepSummary,
    csv_dtypes,
    default_out,
    run_sweep,
)
from ._schema import Experiment, OutputSpec, ParamSpec
from ._store import (
    CellRecord,
    CellStore,
    DirectoryStore,
    MemoryStore,
    build_table,
    column_metadata,
    read_results,
)

__all__ = [
    "MAX_CELLS",
    "MAX_TOTAL_TRIALS",
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
    "SweepCellError",
    "SweepConfigError",
    "SweepConfigErrors",
    "SweepProgress",
    "SweepResult",
    "SweepStoreError",
    "SweepSummary",
    "UnknownSweepNameError",
    "available_cpus",
    "build_table",
    "cell_seed",
    "column_metadata",
    "csv_dtypes",
    "default_out",
    "get_experiment",
    "key_words",
    "load_config",
    "make_backend",
    "parse_config",
    "plot_sweep",
    "read_results",
    "register_experiment",
    "run_sweep",
    "scheduler_address_iv",
]
