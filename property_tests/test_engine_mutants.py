"""Semantic mutants of the engine model (theory/coq/engine/Model.v), each refuted by a
concrete run computed in Coq: for every mutant, ``~ (<the theorem's statement, copied
from engine/Statements.v>)`` compiles against the mutated model (with the
specification's definitions-only files, never the proofs) and fails against the real
model. The table is vistalab.theory._proofs._engine_mutant_table.MUTANTS."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from vistalab.theory._proofs import _engine_mutants as em
from vistalab.theory._proofs import _formal

from .test_engine_model import SRC, needs_toolchain

MODEL = (SRC / "Model.v").read_text()
STATEMENTS = (SRC / "Statements.v").read_text()
BY_NAME = {m.name: m for m in em.MUTANTS}
GUIDE = Path(__file__).resolve().parent.parent / "docs" / "guide" / "engine-differential.md"


# ---------------------------------------------------------------- the table


def test_table_has_at_least_twelve_distinct_mutants():
    assert len(em.MUTANTS) >= 12
    assert len(BY_NAME) == len(em.MUTANTS)
    assert len({(m.old, m.new) for m in em.MUTANTS}) == len(em.MUTANTS)
    mutated = {em.mutate(MODEL, m) for m in em.MUTANTS}
    assert len(mutated) == len(em.MUTANTS) and MODEL not in mutated


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_each_row_is_well_formed(name):
    """The substitution applies exactly once and changes the model outside comments;
    the refuted theorem is a listed engine theorem stated in Statements.v."""
    m = BY_NAME[name]
    assert re.fullmatch(r"[a-z][a-z0-9_]*", m.name)
    assert MODEL.count(m.old) == 1, m.old
    assert em._strip_comments(em.mutate(MODEL, m)) != em._strip_comments(MODEL)
    assert m.theorem in {t.theorem for t in _formal.ENGINE_THEOREMS}
    assert em.statement_proposition(STATEMENTS, m.theorem)
    assert m.bug and m.run and "\n" not in m.run
    for word in ("Admitted", "admit", "Axiom", "Abort"):
        assert word not in m.proof


def test_statement_is_copied_verbatim():
    """The refuted proposition is the theorem's text between its name and Proof."""
    prop = em.statement_proposition(STATEMENTS, "workspace_recoverability")
    assert prop.startswith("forall (c : config) (d : nat) (s0 : state) (ops : list op),")
    assert "recover s (b_id b) = Some (b_data b)" in prop
    body = prop.split(",\n  ", 1)[1]
    assert body + "." in STATEMENTS
    with pytest.raises(KeyError):
        em.statement_proposition(STATEMENTS, "workspace_no_such_theorem")


def test_substitution_must_match_exactly_once():
    m = em.MUTANTS[0]
    for old in ("no such text in the model", "Definition"):
        with pytest.raises(ValueError, match="exactly once"):
            em.mutate(MODEL, dataclasses.replace(m, old=old))


def test_docs_list_every_mutant():
    """The guide's mutant table is markdown_table() verbatim (regenerate it with
    `python -m vistalab.theory._proofs._engine_mutants --table`)."""
    if not GUIDE.is_file():
        pytest.skip("needs the documentation sources (docs/guide/engine-differential.md): "
                    "run from a checkout")
    text = GUIDE.read_text(encoding="utf-8")
    block = text.split("<!-- mutants:begin -->\n", 1)[1].split("<!-- mutants:end -->", 1)[0]
    assert block == em.markdown_table()
    assert "| mutant |" in em.markdown_table() and len(block.splitlines()) == len(em.MUTANTS) + 2


def test_definition_files_hold_no_proof():
    """Refute.v is built on Model.v and the definitions-only files, never on a file
    with a proof (a mutant breaking a proof would otherwise look refuted)."""
    defs = em.definition_files(SRC)
    assert "Model.v" not in defs and "Statements.v" not in defs
    for name in defs:
        assert not em._PROOF_MARKERS.search(em._strip_comments((SRC / name).read_text()))
    for name in ("Theorems.v", "Anthropic.v"):
        assert name not in defs
    # Every statement's vocabulary is in Model.v or a definitions-only file.
    assert {"Spec.v", "Claims.v", "Protocol.v"} <= set(defs)


# ---------------------------------------------------------------- the runs


@needs_toolchain
@pytest.mark.slow  # a cold cache compiles the mutant (about 5 s of CPU each); cached after
@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_mutant_is_refuted_by_a_concrete_run(name):
    verdict = em.check_mutant(BY_NAME[name])
    assert verdict.status == "refuted", verdict.detail


@needs_toolchain
def test_a_script_refutes_only_its_own_mutant():
    """The checker fails on a broken row: another mutant's run does not refute a
    mutant it does not tell apart from the model (survived), and a no-op mutant
    (a comment changed) survives every script."""
    a, b = BY_NAME["archive_alone_unstored"], BY_NAME["offload_wrong_key"]
    crossed = dataclasses.replace(a, name="crossed", proof=b.proof)
    assert em.check_mutant(crossed).status == "survived"
    noop = dataclasses.replace(a, name="noop", old="(* Records *)", new="(* Records. *)")
    assert em.check_mutant(noop).status == "survived"
    assert not list(SRC.glob("*.vo"))


@needs_toolchain
def test_a_script_true_of_the_model_is_not_distinguishing(tmp_path):
    """A refutation that also compiles against the real model is reported as not
    distinguishing: here an 'identity' mutant (an equivalent rewrite) with a script
    refuting a statement that is false of both -- the budget statement of the real
    model is never false, so we feed a deliberately false statement."""
    m = dataclasses.replace(
        BY_NAME["preflight_strict"], name="equivalent",
        old="Definition sum (l : list nat) : nat := fold_right plus 0 l.",
        new="Definition sum (l : list nat) : nat := fold_right (fun a b => a + b) 0 l.",
        theorem="false_statement",
        proof="intro H. discriminate (H 0).",
    )
    statements = "Theorem false_statement (n : nat) : n = 1.\nProof.\n"
    refute = em.refute_source(m, statements, em.definition_files(SRC))
    assert "Theorem refuted : ~ (forall (n : nat),\n  n = 1)." in refute
    src = tmp_path / "engine"
    src.mkdir()
    for name in ("_CoqProject", *_formal._project_files(SRC)):
        (src / name).write_bytes((SRC / name).read_bytes())
    (src / "Statements.v").write_text(statements)
    verdict = em.check_mutant(m, source_dir=src)
    assert verdict.status == "not-distinguishing"
    assert not list(src.glob("*.vo"))


@needs_toolchain
def test_a_broken_row_is_an_error_not_a_refutation():
    """A substitution that breaks the model's syntax, or a row naming no theorem of
    Statements.v, is reported as an error (never as refuted, never cached)."""
    m = BY_NAME["preflight_strict"]
    syntax = dataclasses.replace(
        m, name="syntax", new="  if total s <=?? budget (cfg s) then Normal else Management.")
    v = em.check_mutant(syntax)
    assert v.status == "error" and "does not build" in v.detail and not v.refuted
    missing = dataclasses.replace(m, name="missing", theorem="workspace_no_such_theorem")
    v = em.check_mutant(missing)
    assert v.status == "error" and "workspace_no_such_theorem" in v.detail


def test_table_command_prints_the_table(capsys):
    assert em.main(["--table"]) == 0
    assert capsys.readouterr().out == em.markdown_table()
