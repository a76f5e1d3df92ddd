"""The Coq model of the workspace engine (theory/coq/engine): its theorems are the
paper's workspace invariants (Methodology, "Workspace invariants" and "Structure
preservation") proved for every sequence of operations, with only standard
axioms; a broken copy of each theorem does not build; the extracted executable
reads the operation lines of FORMAT.md and prints one observation per line."""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from vistalab.theory._proofs import _formal
from vistalab.workspace import INVARIANTS, _model

from vistalab import workspace

_IN_CI = os.environ.get("CI", "").lower() in {"1", "true", "yes"}


def _toolchain() -> bool:
    return shutil.which("coqc") is not None and shutil.which("ocamlopt") is not None


def needs_toolchain(fn):
    """Skip (outside CI) or fail (CI=true) when coqc/ocamlopt are missing."""
    if _toolchain():
        return fn
    reason = f"coqc and ocamlopt not installed; run: {_model.ENGINE_MODEL_INSTALL_HINT}"
    if _IN_CI:

        @functools.wraps(fn)
        def _fail(*args, **kwargs):
            pytest.fail(f"CI must build the engine model, but {reason}")

        return _fail
    return pytest.mark.skip(reason=reason)(fn)


SRC = _model.engine_model_sources()
OBS_FIELDS = (
    "status", "mode", "tokens", "total", "overhead", "conversation", "dashboard", "guard",
    "offloaded", "recovered", "units", "render", "store", "request", "turns",
    "ledger", "shows", "cache_prefix", "mdash",
)


def _fields(line: str) -> dict[str, str]:
    pairs = [tok.split("=", 1) for tok in line.split(" ")]
    assert [k for k, _ in pairs] == list(OBS_FIELDS), line
    return dict(pairs)


# ---------------------------------------------------------------- sources


def test_sources_ship_beside_the_development():
    """The model lives in theory/coq/engine (package data of vistalab.theory.coq),
    found from the workspace layer without importing theory."""
    assert SRC == _formal.coq_source_dir() / "engine" or SRC.resolve() == (
        _formal.coq_source_dir() / "engine"
    ).resolve()
    listed = _model._project_files(SRC)
    assert listed == [
        "Model.v", "Spec.v", "Claims.v", "Protocol.v", "Theorems.v", "Anthropic.v",
        "SpecProofs.v", "GuardProofs.v", "DeletionProofs.v", "ArchiveProofs.v",
        "GroupProofs.v", "KeepPending.v", "Statements.v",
    ]
    for name in [*listed, "_CoqProject", "Extract.v", "main.ml", "FORMAT.md"]:
        assert (SRC / name).is_file(), name
    assert _formal.forbidden_tokens() == []


# The specification theorems beyond vistalab.workspace.INVARIANTS: each states a
# sentence of the paper about what the agent sees (quoted in Statements.v).
SPEC_THEOREMS = {
    "ledger": "Implementation Details, dashboard format (ID ~Tok Age Type Level Parent Status)",
    "ledger_levels": "Implementation Details, dashboard format (Level and ~Tok archiving records)",
    "guard": "Algorithm 1; Methodology, Context Stream and Mode switch (the hard-budget guard)",
    "deletion": "Methodology, Context Stream (deletion removes the selected content permanently)",
    "archive_contract": "eq. (archive-contract): read_path(h) == payload(S)",
}


def test_theorems_are_named_after_the_invariants():
    """Each engine theorem is `workspace_<invariant>` for a paper invariant of
    vistalab.workspace.INVARIANTS (or one of the specification theorems above)
    and is stated in engine/Statements.v."""
    paper = {inv.name for inv in INVARIANTS if inv.source != "engineering"} | set(SPEC_THEOREMS)
    text = (SRC / "Statements.v").read_text()
    names = [m.theorem for m in _formal.ENGINE_THEOREMS]
    assert len(set(names)) == len(names)
    for m in _formal.ENGINE_THEOREMS:
        assert m.result == "engine"
        inv = m.theorem.removeprefix("workspace_")
        assert inv in paper, m.theorem
        assert m.statement.startswith(inv + ":"), m.statement
        assert re.search(rf"^Theorem {m.theorem}\b", text, re.M), m.theorem


def test_missing_tool_is_named(monkeypatch, tmp_path):
    """Without ocamlopt (or coqc) the build raises, naming the tool and the fix."""
    monkeypatch.delenv("COQC", raising=False)
    monkeypatch.delenv("OCAMLOPT", raising=False)
    real = shutil.which
    monkeypatch.setattr(
        _model.shutil, "which", lambda name: None if name == "ocamlopt" else real(name)
    )
    if real("coqc") is None:
        expected = "coqc"
    else:
        expected = "ocamlopt"
    with pytest.raises(workspace.EngineModelUnavailableError, match=expected) as info:
        workspace.build_engine_model(cache_dir=tmp_path)
    assert info.value.tool == expected
    assert "apt-get install" in str(info.value)
    assert isinstance(info.value, RuntimeError)


def test_verify_lists_the_engine_theorems_beside_the_paper(monkeypatch, capsys):
    """`vista-lab verify` prints one formal row per engine theorem after the
    paper's results (coqc hidden here, so the rows say unavailable without a build)."""
    from vistalab._commands import verify

    monkeypatch.setattr(_formal, "find_coqc", lambda: None)
    monkeypatch.setenv("COLUMNS", "400")
    report = _formal.check_formal()
    engine = [r for r in report.results if r.result == "engine"]
    assert [r.theorem for r in engine] == [m.theorem for m in _formal.ENGINE_THEOREMS]
    assert {r.file for r in engine} == {"engine/Statements.v"}
    assert {r.status for r in engine} == {"unavailable"}
    # The paper's results come first, the engine's invariants after them.
    results = [r.result for r in report.results]
    assert results.index("engine") == len(_formal.MAIN_THEOREMS)
    verify._print_formal(report)
    out = capsys.readouterr().out
    for m in _formal.ENGINE_THEOREMS:
        assert m.theorem in out
    assert "lemma1_list_fano" in out
    assert [verify._formal_row(r)["theorem"] for r in engine] == [r.theorem for r in engine]


# ---------------------------------------------------------------- builds


@pytest.fixture(scope="module")
def exe() -> Path:
    return workspace.build_engine_model()


SEQUENCE = [
    "init budget=1000 hard=2000 fixed=100 mgmt=200 dfloor=50 dash=40",
    "system pin=1 data=sys1 c=30 dash=45",
    "user pin=1 data=task c=20 dash=50",
    "call ids=c1,c2 data=callj c=15 pend=8,8 dash=55",
    "result id=c1 data=r1 c=300/310 p=20/25 t=6 notice=n1 n=30/35 dash=60",
    "result id=c2 data=r2 c=900/910 p=20/25 t=6 notice=n2 n=30/35 dash=60",
    "assistant pin=0 data=a1 c=10 dash=65",
    "call ids=c1 data=callk c=15 pend=8 dash=70",
    "result id=c1 data=r3 c=700/710 p=20/25 t=6 notice=n3 n=30/35 dash=75",
    "archive units=B4,B5 h=12/14 stubs=B5:3 dash=70",
    "recover unit=B4",
    "delete units=G1 dash=60",
    "recover unit=B4",
    "result id=zz data=x c=1 p=1 t=1 notice=y n=1 dash=1",
    "bogus",
]


@needs_toolchain
def test_executable_follows_the_format(exe):
    """One observation per operation, fields in FORMAT.md's order; the guard,
    the modes, the store and recover behave as the engine does."""
    out = workspace.run_engine_model(SEQUENCE, executable=exe)
    assert len(out) == len(SEQUENCE)
    obs = [_fields(line) for line in out]
    assert [o["status"] for o in obs] == [
        "ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok", "ok",
        "refused:deleted", "refused:not_pending", "error:operation:bogus",
    ]
    # The second result cannot fit a normal rendering of B: the per-result cap.
    assert obs[5]["guard"] == "reject:cap"
    assert "B5/notice/tool" in obs[5]["render"]
    # total 1295 > B = 1000 (<= hard limit): admitted, management rendering.
    assert obs[8]["guard"] == "admit" and obs[8]["mode"] == "management"
    assert int(obs[8]["tokens"]) <= 1000 < int(obs[8]["total"])
    # A group of the two results: one handle, a stub keeps the call answered.
    assert "B4/handle.G1/tool,B5/stub.G1/tool" in obs[9]["render"]
    assert obs[9]["store"] == "G1.txt:[B4=r1;B5=n2]"
    assert obs[10]["recovered"] == "r1"
    assert obs[11]["store"] == "-" and "B4/tombstone/tool" in obs[11]["render"]
    # What the messages show: exact payload tokens, the handle's key, level and payload.
    assert obs[9]["shows"].split(",")[:5] == [
        "d:sys1", "d:task", "d:callj", "h:G1.txt:1:[B4=r1;B5=n2]", "s:G1.txt",
    ]
    assert "d:n2" in obs[5]["shows"].split(",")  # the rejected result shows its notice
    # Ledger rows: ID, ~Tok, age (root turns), type, level, parent, status; results
    # share their call's turn, a group is dated by its newest leaf.
    rows = obs[9]["ledger"].split(",")
    assert rows[:2] == ["B1:30:4:system:0:-:pinned", "B2:20:3:user:0:-:pinned"]
    assert "G1:330:2:group:1:-:archived" in rows and "B6:10:1:assistant:0:-:visible" in rows
    assert rows[-1] == "B8:700:0:tool_result:0:B7:visible"
    for o in obs[1:12]:
        assert len(o["shows"].split(",")) == len(o["render"].split(","))
    for o in obs[1:]:
        total = int(o["overhead"]) + int(o["conversation"]) + int(o["dashboard"])
        assert int(o["total"]) == total


@needs_toolchain
def test_build_is_cached_and_never_writes_into_the_sources(exe):
    assert workspace.build_engine_model() == exe
    products = [p.name for p in SRC.iterdir() if p.suffix in {".vo", ".vok", ".glob", ".mli"}]
    assert products == [] and not (SRC / "model.ml").exists()


@needs_toolchain
def test_engine_theorems_use_only_standard_axioms(tmp_path):
    """Every engine theorem is closed (Print Assumptions lists no axiom at all)."""
    coqc = _formal.find_coqc()
    version = subprocess.run([coqc, "--version"], capture_output=True, text=True).stdout
    rows, bad = _formal._engine_rows(_formal.coq_source_dir(), _formal._default_cache_root(),
                                     coqc, version.strip(), 600.0)
    assert bad == []
    assert [r.theorem for r in rows] == [m.theorem for m in _formal.ENGINE_THEOREMS]
    for r in rows:
        assert r.status == "proved" and r.file == "engine/Statements.v"
        assert set(r.assumptions) <= _formal.STANDARD_AXIOMS


# (theorem, true text in engine/Statements.v, false replacement)
BROKEN = {
    "workspace_budget": ("tokens s <= budget c /\\", "tokens s + 1 <= budget c /\\"),
    # the content-dropping renderer's cost: only the fixed overhead
    "workspace_budget:forms": ("  tokens s = sp_tokens s.", "  tokens s = fixed c."),
    # normal mode is the candidate, not the management rendering
    "workspace_fidelity": ("  render s = sp_render s /\\", "  render s = sp_management s /\\"),
    "workspace_fidelity:exact_bytes": (
        "m_show m = SData (b_data b)).",
        "m_show m = SData (b_data b) /\\ m_cost m = 0).",
    ),
    "workspace_dashboard": (
        "total s = overhead s + conversation s + dash s /\\",
        "total s = overhead s + conversation s + dash s + 1 /\\",
    ),
    "workspace_ledger": ("  ledger s = sp_ledger s /\\", "  ledger s = [] /\\"),
    # an age off by one root turn
    "workspace_ledger:age": (
        "  ledger s = sp_ledger s /\\",
        "  map r_age (ledger s) = map (fun r => S (r_age r)) (sp_ledger s) /\\",
    ),
    # a result admitted one token over the hard limit would satisfy this
    "workspace_guard": (
        "exists k, sp_content s' + sp_dash_at ds k <= hard c) /\\",
        "exists k, sp_content s' + sp_dash_at ds k + 1 <= hard c) /\\",
    ),
    # newest first is not the engine's order
    "workspace_guard:order": (
        "     match sp_cover (sp_guard_order s cid data cc p t)",
        "     match sp_cover (rev (sp_guard_order s cid data cc p t))",
    ),
    "workspace_guard:notice": (
        "     | _ => b_data b = notice /\\ b_rej b = true",
        "     | _ => b_data b = data /\\ b_rej b = true",
    ),
    "workspace_protocol": (
        "openai_valid (render (run s0 ops)) /\\",
        "openai_ok [0] (map m_role (render (run s0 ops))) = true /\\",
    ),
    "workspace_protocol:anthropic": (
        "anthropic_valid (render (run s0 ops)).",
        "anthropic_valid (render (run s0 ops)) /\\ alternates [mkTurn true [] [] 0;"
        " mkTurn true [] [] 0] = true.",
    ),
    # without the wire renaming a reused call id repeats a tool_use id
    "workspace_protocol:unrenamed_ids": (
        "anthropic_valid (render (run s0 ops)).",
        "anthropic_valid (render (run s0 ops)) /\\ NoDup (flat_map a_uses"
        " (anthropic_request (map m_role (render (run s0 ops))))).",
    ),
    "workspace_recoverability": (
        "forall b, In b (blocks s) -> b_status b <> Deleted ->"
        " recover s (b_id b) = Some (b_data b).",
        "forall b, In b (blocks s) -> recover s (b_id b) = Some (b_data b).",
    ),
    # a deleted block still live
    "workspace_deletion": (
        "    sp_deleted s' n = true /\\ recover s' n = None /\\",
        "    sp_deleted s' n = false /\\ recover s' n = None /\\",
    ),
    "workspace_archive_contract": (
        "  sp_read_path s (sp_key_of u) = Some (sp_unit_payload s u).",
        "  sp_read_path s (sp_key_of u) = None.",
    ),
    # false only for a group handle: its level one above the group's
    "workspace_archive_contract:group": (
        "  m_show m = SHandle (sp_key_of u) (sp_level s u) (sp_payload s (sp_key_of u)) /\\",
        "  m_show m = SHandle (sp_key_of u)\n"
        "    (match u with UG _ => S (sp_level s u) | UB _ => sp_level s u end)\n"
        "    (sp_payload s (sp_key_of u)) /\\",
    ),
    # a level not raised by archiving again
    "workspace_ledger_levels": (
        "    b_level b' = (if sp_shown_in_prompt (b_status b) then 1 else S (b_level b)) /\\",
        "    b_level b' = (if sp_shown_in_prompt (b_status b) then 1 else b_level b) /\\",
    ),
    "workspace_stable_ids": (
        "map b_id (blocks s) = seq 1 (nblocks s) /\\",
        "map b_id (blocks s) = seq 0 (nblocks s) /\\",
    ),
}


def test_every_engine_theorem_has_a_broken_copy():
    assert {k.split(":")[0] for k in BROKEN} == {
        m.theorem for m in _formal.ENGINE_THEOREMS
    }
    text = (SRC / "Statements.v").read_text()
    for good, _ in BROKEN.values():
        assert text.count(good) == 1, good


@needs_toolchain
@pytest.mark.parametrize("theorem", sorted(BROKEN))
def test_broken_copy_of_each_theorem_fails(tmp_path, theorem):
    """Replacing one theorem's statement by a false one makes coqc refuse the
    file: the model and its invariant lemmas (compiled once, cached) do not
    prove it."""
    coqc = _formal.find_coqc()
    version = subprocess.run([coqc, "--version"], capture_output=True, text=True).stdout
    rows, _ = _formal._engine_rows(_formal.coq_source_dir(), _formal._default_cache_root(),
                                   coqc, version.strip(), 600.0)
    assert all(r.status == "proved" for r in rows)
    files = _model._project_files(SRC)
    build = _formal._default_cache_root() / (
        "engine-proofs-" + _formal._sources_hash(SRC, files, version.strip())
    )
    work = tmp_path / "engine"
    work.mkdir()
    for name in [f.removesuffix(".v") for f in files if f != "Statements.v"]:
        for suffix in (".vo", ".glob"):
            shutil.copy2(build / (name + suffix), work / (name + suffix))
    good, bad = BROKEN[theorem]
    text = (SRC / "Statements.v").read_text()
    (work / "Statements.v").write_text(text.replace(good, bad, 1))
    assert text.replace(good, bad, 1) != text
    proc = subprocess.run([coqc, "-q", "-R", ".", "VistaLabEngine", "Statements.v"],
                          cwd=work, capture_output=True, text=True)
    assert proc.returncode != 0, theorem
    # The true statement compiles in the same setting (the failure is the change).
    (work / "Statements.v").write_text(text)
    proc = subprocess.run([coqc, "-q", "-R", ".", "VistaLabEngine", "Statements.v"],
                          cwd=work, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@needs_toolchain
def test_broken_copy_fails_the_build(tmp_path):
    """Through the public entry points: a copy whose model states a false lemma
    makes build_engine_model raise (naming the file) and the engine's formal
    rows say failed; the copy stays free of build products."""
    src = tmp_path / "coq"
    shutil.copytree(_formal.coq_source_dir(), src)
    model = src / "engine" / "Model.v"
    model.write_text(model.read_text() + "\nLemma false_lemma : 1 = 2.\nProof. reflexivity. Qed.\n")
    with pytest.raises(workspace.EngineModelBuildError, match="Model.v") as info:
        workspace.build_engine_model(source_dir=src / "engine", cache_dir=tmp_path / "cache")
    assert info.value.step == "Model.v"
    coqc = _formal.find_coqc()
    version = subprocess.run([coqc, "--version"], capture_output=True, text=True).stdout
    rows, bad_msgs = _formal._engine_rows(src, tmp_path / "cache", coqc, version.strip(), 600.0)
    assert {r.status for r in rows} == {"failed"}
    assert bad_msgs and "Model.v" in bad_msgs[0]
    assert not [p for p in (src / "engine").iterdir() if p.suffix in {".vo", ".glob"}]


@needs_toolchain
def test_cache_prefix_and_management_dashboard_inputs(exe):
    """FORMAT.md's optional inputs: cache_prefix=1 keeps the conversation's
    leading run that fits beside the floor (room B - fixed - pinned - mdash) in
    the management rendering, and charges the measured management dashboard;
    an mdash above the bound, twice, or on recover is an error that changes
    nothing."""
    init = "init budget=100 hard=200 fixed=10 mgmt=20 dfloor=5 dash=8"
    lines = [
        init + " cache_prefix=1 mdash=12",
        "user pin=0 data=u1 c=30 dash=8",
        "assistant pin=0 data=a1 c=30 dash=8",
        "user pin=0 data=u2 c=30 dash=8 mdash=15",
        "user pin=0 data=u3 c=5 dash=8 mdash=21",
        "user pin=0 data=u3 c=5 dash=8 mdash=1 mdash=2",
        "recover unit=B1 mdash=3",
    ]
    obs = [_fields(line) for line in workspace.run_engine_model(lines, executable=exe)]
    assert [o["status"] for o in obs] == [
        "ok", "ok", "ok", "ok", "error:mdash", "error:duplicate:mdash", "error:key:mdash"]
    assert obs[0]["cache_prefix"] == "1" and obs[0]["mdash"] == "12"
    # 10 + 3 * 30 + 8 > 100: management; room 100 - (10 + 15) = 75 holds two positions
    m = obs[3]
    assert m["mode"] == "management" and m["mdash"] == "15"
    assert m["render"] == "B1/content/user,B2/content/assistant,dash/dashboard/user"
    assert m["tokens"] == str(10 + 60 + 15)
    assert obs[4]["units"] == obs[3]["units"] and obs[4]["mdash"] == "15"  # nothing changed
    off = workspace.run_engine_model([init, *lines[1:4]], executable=exe)
    assert _fields(off[-1])["render"] == "dash/dashboard/user"  # cache_prefix=0: no prefix
    assert _fields(off[-1])["tokens"] == str(10 + 15)
