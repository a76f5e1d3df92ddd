"""One vocabulary of result columns: every column of every
sweep table and every figure table is in figures._vocabulary.COLUMNS with one
unit and one meaning, the sweep tables carry those units in their Parquet
metadata, and the README's table is the one the module generates."""

from __future__ import annotations

from pathlib import Path

import pytest
from vistalab.figures import FIGURE_NAMES, load_figure
from vistalab.figures._vocabulary import COLUMNS, markdown_table

from vistalab.sweep import EXPERIMENTS

SWEEPS_PAGE = Path(__file__).resolve().parent.parent / "docs" / "guide" / "sweeps.md"


def test_every_sweep_column_is_in_the_vocabulary():
    """Parameters and outputs of every registered experiment (makeroom,
    recovery and their engine forms) use vocabulary names."""
    for exp in EXPERIMENTS.values():
        names = [p.name for p in exp.params] + [o.name for o in exp.outputs]
        missing = [n for n in names if n not in COLUMNS]
        assert not missing, f"{exp.name}: {missing}"


@pytest.mark.parametrize("name", FIGURE_NAMES)
def test_every_figure_column_is_in_the_vocabulary(name):
    """The figure tables (reproduce's results/<figure>.csv) use the same names:
    no `param` holding sigma, M or a target rate by row, no `rate` meaning
    rate_bits, no `x` meaning different axes in different figures."""
    script = load_figure(name)
    columns = script._COLUMNS  # type: ignore[attr-defined]
    missing = [c for c in columns if c not in COLUMNS]
    assert not missing, f"{name}: {missing}"
    assert "param" not in columns and "x" not in columns


def test_vocabulary_has_one_entry_per_name_with_a_description():
    """Names are unique and each has a description; a name with two units
    (budget in bits vs tokens) is two names (budget, budget_tokens)."""
    assert all(c.description for c in COLUMNS.values())
    assert COLUMNS["budget"].unit == "bits" and COLUMNS["budget_tokens"].unit == "tokens"
    assert COLUMNS["rate"].unit == "bits" and "target" in COLUMNS["rate"].description
    assert "I(J*;Y)" in COLUMNS["rate_bits"].description


def test_docs_document_the_vocabulary():
    """The user guide's 'Result columns' table (docs/guide/sweeps.md) is
    markdown_table() verbatim (documented once)."""
    if not SWEEPS_PAGE.is_file():
        pytest.skip("needs the documentation sources (docs/guide/sweeps.md): run from a checkout")
    assert markdown_table() in SWEEPS_PAGE.read_text(encoding="utf-8")
