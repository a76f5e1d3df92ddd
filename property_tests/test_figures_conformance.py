"""One conformance suite over every figure script (DESIGN.md rules 3-4 and 11:
'one script per figure, whose docstring names the figure and what it shows';
compute cached separately from plotting)."""

from __future__ import annotations

import inspect
import json

import pytest
from vistalab.figures import FIGURE_NAMES, load_figure
from vistalab.theory import UnknownNameError


@pytest.mark.parametrize("name", FIGURE_NAMES)
def test_script_implements_the_figure_protocol(name):
    """each figure script exposes compute(params, *, rng) -> tidy table and
    plot(table, out_dir), a caption, checks, and quick/default parameters."""
    fig = load_figure(name)
    number = name.split("_")[0][3:]
    assert fig.NAME == name
    assert (fig.__doc__ or "").startswith(f"Figure {number} -- ")
    assert isinstance(fig.TITLE, str) and fig.TITLE
    assert isinstance(fig.STOCHASTIC, bool)
    sig = inspect.signature(fig.compute)
    assert list(sig.parameters)[:1] == ["params"]
    assert sig.parameters["rng"].kind is inspect.Parameter.KEYWORD_ONLY
    assert sig.parameters["rng"].default is None
    assert list(inspect.signature(fig.plot).parameters) == ["table", "out_dir"]
    quick, full = fig.default_params(quick=True), fig.default_params(quick=False)
    assert quick.keys() == full.keys()
    json.dumps(quick), json.dumps(full)  # parameters are cache keys: plain JSON data


@pytest.mark.parametrize("name", FIGURE_NAMES)
def test_unknown_parameter_is_rejected_with_a_suggestion(name):
    """DESIGN.md rule 5: validate once at the door, before any computation."""
    fig = load_figure(name)
    key = next(iter(fig.default_params()))
    with pytest.raises(UnknownNameError, match=rf"Did you mean '{key}'"):
        fig.compute({key + "x": 1})
