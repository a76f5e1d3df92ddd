"""The ``vista-lab reproduce`` pipeline (private): stages, cache, results
files and report. The CLI command lives in ``vistalab/_commands/reproduce.py``."""

from ._pipeline import (
    DEFAULT_SEED,
    ReproduceResult,
    StageOutcome,
    default_out,
    hypothesis_home,
    run_reproduce,
)
from ._progress import NullProgress, Progress, RichProgress
from ._rows import CheckRow

__all__ = [
    "CheckRow",
    "DEFAULT_SEED",
    "NullProgress",
    "Progress",
    "ReproduceResult",
    "RichProgress",
    "StageOutcome",
    "default_out",
    "hypothesis_home",
    "run_reproduce",
]
