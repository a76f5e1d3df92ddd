"""The tidy table every figure computes: exact round trips through the cache
format and CSV, and clear errors for malformed tables (DESIGN.md rules 5-7;
"tidy CSV with a JSON sidecar")."""

import csv
import io
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from vistalab.figures import TidyTable
from vistalab.theory import DomainError, UnknownNameError

cells = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**62), max_value=2**62),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)


@given(st.lists(st.tuples(cells, cells, cells), max_size=20))
def test_json_round_trip_is_exact(rows):
    """The cache stores tables as typed JSON; reloading must give the same cells,
    so a cached figure is plotted from exactly the computed numbers."""
    t = TidyTable(("a", "b", "c"), tuple(rows), {"a": "unit a"})
    back = TidyTable.from_json(t.to_json())
    assert back == t
    assert back.units == {"a": "unit a"}


@given(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=20))
def test_csv_keeps_full_float_precision(values):
    """CSV floats are written with repr, so they parse back to the same double."""
    t = TidyTable.from_records([{"x": v} for v in values])
    parsed = list(csv.reader(io.StringIO(t.to_csv())))
    assert parsed[0] == ["x"]
    assert [float(r[0]) for r in parsed[1:]] == values


def test_non_finite_cells_become_missing():
    t = TidyTable(("x",), ((math.nan,), (math.inf,), (np.float64(2.5),), (np.int64(3),)))
    assert t.values("x") == [None, None, 2.5, 3]
    assert np.isnan(t.column("x")[0]) and t.column("x")[2] == 2.5


def test_where_unique_records():
    t = TidyTable.from_records([
        {"s": "a", "v": 1.0}, {"s": "b", "v": 2.0}, {"s": "a", "v": 3.0},
    ])
    assert t.unique("s") == ["a", "b"]
    assert t.where(s="a").column("v").tolist() == [1.0, 3.0]
    assert t.records()[1] == {"s": "b", "v": 2.0}
    assert len(t.where(s="zzz")) == 0


def test_bad_tables_are_rejected_with_clear_errors():
    with pytest.raises(DomainError, match=r"`rows` must have 2 cells"):
        TidyTable(("a", "b"), ((1,),))
    with pytest.raises(DomainError, match=r"`columns` must be unique"):
        TidyTable(("a", "a"), ())
    with pytest.raises(DomainError, match=r"must be a scalar .*column='a'"):
        TidyTable(("a",), (([1, 2],),))
    with pytest.raises(DomainError, match=r"`units` must name existing columns"):
        TidyTable(("a",), (), {"b": "x"})
    with pytest.raises(DomainError, match=r"only use the declared columns"):
        TidyTable.from_records([{"a": 1, "b": 2}], columns=("a",))
    with pytest.raises(UnknownNameError, match=r"Unknown column 'vale'. Did you mean 'value'"):
        TidyTable(("value",), ()).column("vale")
