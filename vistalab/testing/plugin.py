"""The pytest plugin of vista-lab, by its documented name: the fixtures live in
``vistalab._pytest_plugin`` (the ``pytest11`` entry point), which imports nothing
heavy; importing this module runs the kit's ``vistalab.testing`` first."""

from vistalab._pytest_plugin import (
    Conformance,
    ConformanceSuite,
    conformance,
    vista_conformance,
    vista_workspace,
)

__all__ = ["Conformance", "ConformanceSuite", "conformance", "vista_conformance",
           "vista_workspace"]
