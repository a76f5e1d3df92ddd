"""The example files shipped in the wheel (sweep configs, sample traces), found
through static imports of their packages so that they work from a checkout
(editable install) and from an installed wheel alike."""

from __future__ import annotations

from pathlib import Path

from vistalab import examples
from vistalab.examples import traces

__all__ = ["SUFFIXES", "example_files"]

#: File types that are examples (the packages' ``__init__.py`` are not).
SUFFIXES = frozenset({".toml", ".json", ".jsonl"})


def example_files() -> dict[str, Path]:
    """``{relative name: source path}`` of every shipped example, e.g.
    ``"sweeps/small.toml"`` and ``"traces/ops_agent.json"``."""
    roots = {"sweeps": Path(examples.__file__).parent / "sweeps",
             "traces": Path(traces.__file__).parent}
    out: dict[str, Path] = {}
    for prefix, root in roots.items():
        for path in sorted(root.iterdir()):
            if path.is_file() and path.suffix in SUFFIXES:
                out[f"{prefix}/{path.name}"] = path
    return out
