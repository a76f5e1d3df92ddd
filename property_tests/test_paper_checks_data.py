"""The paper's numbers as data (paper_checks/data): the loader's contract, and a
transcription check of every table cell against the LaTeX source of the paper."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import vistalab.paper_checks as pc
from vistalab.theory import DomainError, UnknownNameError

#: The paper's LaTeX source is not shipped: VISTA_LAB_PAPER=/path/to/paper.tex points the
#: tests at it; from a checkout they also look beside the repository (../shared/paper).
PAPER_ENV = os.environ.get("VISTA_LAB_PAPER", "")
DEFAULT_PAPER = Path(__file__).resolve().parents[2] / "shared" / "paper" / "paper.tex"


def _paper() -> Path:
    path = Path(PAPER_ENV) if PAPER_ENV else DEFAULT_PAPER
    if not path.is_file():
        pytest.skip("needs the paper's LaTeX source: set VISTA_LAB_PAPER=/path/to/paper.tex "
                    f"(looked for {path}); the CLI takes --paper PATH on check-paper and "
                    "reproduce")
    return path

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


def test_transcription_against_the_latex_source():
    """Every numeric table cell occurs in the LaTeX of its table (label on the recorded
    line) and every quoted number near its line: paper_checks.check_transcription, the
    check behind `check-paper --paper PATH` and `reproduce --paper PATH`."""
    paper = _paper()
    checks = pc.check_transcription(paper)
    tables = {c.id for c in checks if c.id.startswith("transcription.table.")}
    assert tables == {f"transcription.table.{k}" for k in EXPECTED_KEYS - {"ablation"}}
    assert [c for c in checks if not c.ok] == []


def test_transcription_fails_on_a_wrong_source(tmp_path):
    """The transcription check can fail: against an empty file every table is reported;
    against the paper with one cell changed, that table is (when the paper is given)."""
    empty = tmp_path / "empty.tex"
    empty.write_text("\\section{Nothing}\n")
    checks = pc.check_transcription(empty)
    assert checks and all(not c.ok for c in checks if c.id.startswith("transcription.table"))
    with pytest.raises(DomainError, match="must be the paper's LaTeX source file"):
        pc.check_transcription(tmp_path / "missing.tex")
    paper = PAPER_ENV and Path(PAPER_ENV)
    if not (paper or DEFAULT_PAPER).is_file():
        return
    t = pc.load_table("main_results")
    lines = (paper or DEFAULT_PAPER).read_text(encoding="utf-8").splitlines()
    vista = t.row(method_id="vista")
    cell = f"{vista['loca_acc']:.{t.decimals('loca_acc')}f}"
    region = range(max(0, t.line - 90), t.line)
    for i in region:
        lines[i] = lines[i].replace(cell, "99.9" if cell != "99.9" else "0.1")
    broken = tmp_path / "paper.tex"
    broken.write_text("\n".join(lines))
    bad = {c.id: c for c in pc.check_transcription(broken)}["transcription.table.main_results"]
    assert not bad.ok and f"loca_acc={cell}" in bad.detail
