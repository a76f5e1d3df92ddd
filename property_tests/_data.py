"""Where the suite's data files are, found through the package (``importlib.resources``)
so that the same tests run from a checkout and from an installed wheel
(``python -m pytest --pyargs vistalab.tests``): the sample traces live in
``property_tests/data/traces`` in a clone and ship as ``vistalab.examples.traces``."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

__all__ = ["TRACES"]

#: The folder of the sample traces (a real folder: the package is installed unzipped).
TRACES = Path(str(files("vistalab.examples.traces")))
