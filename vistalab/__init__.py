"""vista-lab application layer: the ``vista-lab`` CLI, the ``reproduce``
pipeline, sweeps, results files and the report.

Parameter sweeps from Python: :mod:`vistalab.sweep` (``run_sweep``,
``load_results``), imported on use so ``import vistalab`` stays light."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("vista-lab")
except PackageNotFoundError:  # running from a source tree without install
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
