"""The paper's numbers as data (paper_checks/data): the loader's contract, and a
transcription check of every table cell against the LaTeX source of the paper."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import vistalab.paper_checks as pc
from vistalab.theory import DomainError, UnknownNameError

PAPER = Path(__file__).resolve().parents[2] / "shared" / "paper" / "paper.tex"
needs_paper = pytest.mark.skipif(not PAPER.exists(), reason="paper.tex not found beside the repo")

EXPECTED_KEYS = {
    "main_results", "cache_cost", "id_ood", "ama_full", "proprioception", "capability_matrix",
    "loca_dense", "outcome_transitions", "loca_pressure", "ama_domain", "case_studies",
    "ablation",
}


def test_every_table_loads_with_its_provenance():
    """Every table of the paper (Tables 1-11 and the ablation numbers of Section 3.7) is
    one data file with its label, place and rows."""
    assert set(pc.table_keys()) == EXPECTED_KEYS
    numbers = []
    for key in pc.table_keys():
        t = pc.load_table(key)
        assert t.key == key and t.label and t.where and t.line > 0 and len(t) > 0
        for row in t:
            assert set(row) <= set(t.columns)
        if t.number is not None:
            numbers.append(t.number)
    assert sorted(numbers) == list(range(1, 12))


def test_table_accessors_and_immutability():
    """Section 3.2 / Table 1: rows are addressed by stable ids and cannot be edited."""
    t = pc.load_table("main_results")
    vista = t.row(method_id="vista")
    assert vista["method"] == "VISTA (full)"
    assert len(t.column("loca_acc")) == len(t)
    assert t.decimals("loca_acc") == 1
    with pytest.raises(TypeError):
        vista["loca_acc"] = 99.0  # type: ignore[index]
    records = t.to_records()
    records[0]["loca_acc"] = -1.0  # a plain copy
    assert t.rows[0]["loca_acc"] != -1.0
    with pytest.raises(UnknownNameError, match="Did you mean 'loca_acc'"):
        t.column("loca_ac")
    with pytest.raises(UnknownNameError, match="Did you mean 'main_results'"):
        pc.load_table("main_result")
    with pytest.raises(DomainError, match="must select exactly one row"):
        t.row(group="Fixed external policy")


def test_missing_cells_are_absent_and_data_dir_is_validated(tmp_path):
    """Table 7 prints '--' for unknown timeouts; the loader reports them as None."""
    t = pc.load_table("loca_dense")
    assert t.row(method_id="slim").get("timeout") is None
    with pytest.raises(DomainError, match="must be an existing folder"):
        pc.load_table("loca_dense", data_dir=tmp_path / "nope")


def test_quotes_and_statements_load():
    """Text numbers (e.g. 208 x 12 = 2496, Appendix G) and the theory formulas load by id."""
    q = pc.load_quote("ama-qa-pairs")
    assert q["qa_pairs"] == 2496 and q.line > 0
    with pytest.raises(UnknownNameError, match="Did you mean"):
        q["qa_pair"]
    st = pc.load_statement("thm1-lower-bound")
    assert "nu" in st.symbols and st.formula()
    with pytest.raises(UnknownNameError, match="theory statement"):
        pc.load_statement("thm9")


def _fmt(value: float, decimals: int) -> str:
    return f"{value:.{decimals}f}"


@needs_paper
@pytest.mark.parametrize("key", sorted(EXPECTED_KEYS - {"ablation"}))
def test_table_cells_match_the_latex_source(key):
    """Every numeric cell, printed with its column's decimals, occurs in the LaTeX of its
    table (the lines up to its label), and the label is where the data says it is."""
    lines = PAPER.read_text(encoding="utf-8").splitlines()
    t = pc.load_table(key)
    assert f"\\label{{{t.label}}}" in lines[t.line - 1]
    region = "\n".join(lines[max(0, t.line - 90): t.line])
    region = region.replace(",", "")  # 1,968 -> 1968
    decimals = t.extra.get("decimals", {})
    for row in t:
        for col, places in decimals.items():
            value = row.get(col)
            if value is None:
                continue
            text = _fmt(value, places)
            assert re.search(rf"(?<![\d.]){re.escape(text)}(?![\d])", region), (
                f"{key}: {col}={text} ({row}) not in the LaTeX of {t.label}"
            )


# Values stated in words or derived in the sentence, not printed as digits.
_WORDED = {("ama-transfer", "about_points"), ("ama-transfer", "runtime_fraction"),
           ("archive-runs-total", "runs"), ("proprio-dash", "backbones"),
           ("proprio-dash", "total_dash"), ("proprio-dash", "block_dash_lo"),
           ("remark-proprio", "with_ledger"), ("cross-backbone", "backbones"),
           ("overhead-sample", "runs"), ("budget-notation", "loca_budget_k"),
           ("budget-notation", "bcp_window_k"), ("budget-notation", "bcp_budget_k"),
           ("ablation-wording-variants", "within_points_max"),
           ("abstract-scales", "loca_tokens"), ("abstract-scales", "bcp_tokens"),
           ("abstract-scales", "gaia_tokens"), ("ablation-variants", "variants"),
           ("ablation-variants", "capability_removals"),
           ("ablation-variants", "interface_variants")}


@needs_paper
def test_quote_numbers_occur_near_their_line():
    """Each number of a quoted sentence occurs in paper.tex within 20 lines of the quote's
    line (numbers written as words are listed explicitly)."""
    text = PAPER.read_text(encoding="utf-8")
    lines = text.splitlines()
    for q in pc.load_quotes().values():
        region = "\n".join(lines[max(0, q.line - 21): q.line + 20])
        for name, value in q.values.items():
            if (q.id, name) in _WORDED or isinstance(value, str) and not value:
                continue
            forms = {str(value)}
            if isinstance(value, int):
                forms |= {f"{value:,}", f"{value:,}".replace(",", "{,}")}
            if isinstance(value, float):
                forms |= {f"{value:.1f}", f"{value:.2f}", f"{value:.3f}"}
            where = text if q.id in {"benchmark-sizes", "budget-notation"} else region
            assert any(f in where for f in forms), f"{q.id}.{name}={value} not near line {q.line}"
