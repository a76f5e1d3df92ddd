"""The proprioceptive-blindness probe kit (paper appendix "Proprioceptive-Blindness
Diagnostic", Table tab:proprioception): snapshot cleaning, ground truth, the +dash
ledger, and the scorer."""

from __future__ import annotations

import argparse
import json
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from vistalab.workspace import (
    PROTOCOL_TEXT,
    SNAPSHOT_TOKEN_CAP,
    ProbeKit,
    WorkspaceArgumentError,
    budget_notice,
    build_probe_kit,
    get_tokenizer,
    leak_scan,
    message_tokens,
    replay_trace,
    score_probe_answers,
)

from vistalab._commands._workspace_analysis import register_analysis

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa".split()


def words(n, seed):
    rng = np.random.default_rng(seed)
    return " ".join(WORDS[i] for i in rng.integers(0, len(WORDS), n))


def call(cid, name, arguments="{}"):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": arguments}}


def make_trace(sizes=(40, 300, 120, 90, 260, 200), *, archive=True, extra=()):
    """A search-agent transcript; tool result i has ``sizes[i]`` words."""
    trace = [
        {
            "role": "system",
            "content": PROTOCOL_TEXT
            + "\n\n"
            + budget_notice(4000)
            + "\n\nYou are a research agent.",
        },
        {"role": "user", "content": "Which county had the largest change? " + words(20, 0)},
    ]
    for i, n in enumerate(sizes):
        trace.append(
            {
                "role": "assistant",
                "content": f"Step {i}: query the table.",
                "tool_calls": [call(f"c{i}", "query", json.dumps({"page": i}))],
            }
        )
        trace.append({"role": "tool", "tool_call_id": f"c{i}", "content": words(n, i + 1)})
    trace.extend(extra)
    if archive:
        archive_call = call("a1", "context_workspace_archive", '{"block_id": "B4"}')
        trace.append({"role": "assistant", "content": None, "tool_calls": [archive_call]})
        trace.append({"role": "tool", "tool_call_id": "a1", "content": "ok"})
        trace.append({"role": "assistant", "content": "The answer is Kings County."})
    return trace


# ----------------------------------------------------------------- cleaning


def test_snapshot_anchors_before_first_archive_and_strips_artifacts():
    """Appendix Proprioceptive-Blindness Diagnostic: the snapshot is the transcript just
    before the first archive call, one block per message, with the protocol header,
    guard rejection notices and archived-block placeholders stripped, and no residual
    token, budget or usage strings."""
    extra = [
        # A result too large for any normal rendering: the guard registers a rejection notice.
        {"role": "assistant", "content": "Fetch the dump.", "tool_calls": [call("big", "dump")]},
        {"role": "tool", "tool_call_id": "big", "content": words(9000, 99)},
        # A delete the agent made earlier (its answer prints freed tokens).
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                call(
                    "d1", "context_workspace_delete", '{"block_id": "B14", "reason": "superseded"}'
                )
            ],
        },
        {"role": "tool", "tool_call_id": "d1", "content": "recorded answer, skipped"},
        # A placeholder and a rejection notice printed into the transcript by some harness.
        {"role": "user", "content": "[archived G3 (B5-B9) level=1 size=1,234B sha256=ab path=x]"},
        {"role": "user", "content": "[budget guard] Tool result rejected: context ~9,000 tokens"},
    ]
    trace = make_trace(extra=extra)
    kit = build_probe_kit(trace, budget=4000, rng=0)
    anchor = next(
        i
        for i, m in enumerate(trace)
        if m.get("tool_calls")
        and m["tool_calls"][0]["function"]["name"] == "context_workspace_archive"
    )
    assert kit.anchor == "first-archive" and kit.anchor_index == anchor
    ids = [b.id for b in kit.blocks]
    rep = replay_trace(trace[:anchor], budget=4000)
    rejected = [b.id for b in rep.workspace.blocks if b.rejected]
    assert len(rejected) == 1 and rejected[0] not in ids
    assert "B14" not in ids  # deleted (tombstone)
    assert kit.removed["rejection_notices"] == 2  # the guard's and the recorded one
    assert kit.removed["placeholders"] == 2  # the tombstone and the recorded handle
    assert kit.removed["context_tool_answers"] == 1
    assert kit.removed["protocol_header"] == 2  # the engine's own and the one in the trace
    system = kit.blocks[0]
    assert system.type == "system" and system.text == "You are a research agent."
    assert kit.leaks == () and leak_scan(kit.transcript) == ()
    assert PROTOCOL_TEXT.splitlines()[0] not in kit.transcript
    assert "budget" not in kit.transcript.lower()
    # Nothing after the anchor is in the snapshot.
    assert "Kings County" not in kit.transcript


def test_ground_truth_equals_the_engines_ledger():
    """Appendix Proprioceptive-Blindness Diagnostic: ground truth is computed "with the
    same tokenizer used by the harness": each block's tokens equal the engine's ledger
    ~Tok for that block, and the total is their sum."""
    trace = make_trace()
    kit = build_probe_kit(trace, budget=4000, rng=1)
    rep = replay_trace(trace[: kit.anchor_index], budget=4000)
    ledger = rep.workspace.render().block_tokens
    tok = get_tokenizer("cl100k_base")
    for b in kit.blocks[1:]:
        assert b.tokens == ledger[b.id] == message_tokens(b.message, tok)
    # The system block lost its protocol header, so it is counted as the model reads it.
    system = kit.blocks[0]
    assert system.tokens == message_tokens({"role": "system", "content": system.text}, tok)
    assert system.tokens < ledger[system.id]
    assert kit.total_tokens == sum(b.tokens for b in kit.blocks)
    # The approximate tokenizer is a different harness: different truth.
    approx = build_probe_kit(trace, budget=4000, tokenizer="approx", rng=1)
    assert approx.tokenizer == "approx" and approx.total_tokens != kit.total_tokens


def test_snapshot_cap_drops_trailing_blocks():
    """Appendix Proprioceptive-Blindness Diagnostic: each snapshot is capped (100K tokens
    in the paper) by dropping trailing blocks."""
    assert SNAPSHOT_TOKEN_CAP == 100_000
    full = build_probe_kit(make_trace(), budget=4000, rng=2)
    cap = full.total_tokens - full.blocks[-1].tokens - 1
    capped = build_probe_kit(make_trace(), budget=4000, rng=2, max_tokens=cap)
    assert capped.total_tokens <= cap
    assert [b.id for b in capped.blocks] == [b.id for b in full.blocks[: len(capped.blocks)]]
    assert capped.removed["cap"] == len(full.blocks) - len(capped.blocks) >= 2


@settings(max_examples=12)
@given(
    sizes=st.lists(st.integers(1, 400), min_size=2, max_size=8),
    max_ratio=st.floats(1.05, 4.0),
    seed=st.integers(0, 2**32 - 1),
)
def test_pairs_are_the_hard_subset(sizes, max_ratio, seed):
    """Appendix Proprioceptive-Blindness Diagnostic: pairwise questions come from the
    hard subset "within 2x in true size"; the recorded answer is the larger block.
    Sampled blocks are distinct snapshot blocks; the same seed gives the same kit."""
    kit = build_probe_kit(
        make_trace(sizes), budget=6000, tokenizer="approx", rng=seed, max_ratio=max_ratio, n_pairs=6
    )
    truth = kit.block_tokens()
    n_eligible = sum(
        1
        for i, a in enumerate(kit.blocks)
        for b in kit.blocks[i + 1 :]
        if a.tokens != b.tokens and max(a.tokens, b.tokens) / min(a.tokens, b.tokens) <= max_ratio
    )
    assert kit.eligible_pairs == n_eligible
    assert len(kit.pairs) == min(6, n_eligible)
    assert len({frozenset((p.first, p.second)) for p in kit.pairs}) == len(kit.pairs)
    for p in kit.pairs:
        a, b = truth[p.first], truth[p.second]
        assert a != b and max(a, b) / min(a, b) <= max_ratio + 1e-12
        assert truth[p.larger] == max(a, b)
    assert len(set(kit.sampled_blocks)) == len(kit.sampled_blocks) == min(4, len(kit.blocks))
    assert set(kit.sampled_blocks) <= set(truth)
    again = build_probe_kit(
        make_trace(sizes), budget=6000, tokenizer="approx", rng=seed, max_ratio=max_ratio, n_pairs=6
    )
    assert again.to_plain() == kit.to_plain()


# ----------------------------------------------------------------- leak scan


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("<context_workspace_status>\n## Context Budget", "dashboard tag"),
        ("<budget:token_budget>128000</budget:token_budget>", "budget tag"),
        ("[budget guard] Tool result rejected", "guard notice"),
        ("see [archived B12 level=1 size=3B", "archive handle"),
        ("ID     ~Tok   Age  Type", "ledger header"),
        ("Deleted B3 (1 blocks, freed ~1,204 tokens).", "token tally"),
        ("[##########----------] 50%", "budget bar"),
    ],
)
def test_leak_scan_flags_state_strings(text, name):
    """Appendix Proprioceptive-Blindness Diagnostic: "a scan over all anchored snapshots
    confirms no residual token, budget, or usage strings remain" (the scan must flag them)."""
    assert name in leak_scan("ordinary prose about API tokens. " + text)
    assert leak_scan("ordinary prose about API tokens and budgets.") == ()


def test_kit_reports_a_leak_left_in_content():
    """Appendix Proprioceptive-Blindness Diagnostic: a snapshot whose content still prints
    token counts is reported as leaking (and the CLI fails on it)."""
    extra = [{"role": "user", "content": "Earlier you used ~12,000 tokens on this."}]
    kit = build_probe_kit(make_trace(extra=extra), budget=4000, rng=0)
    assert kit.leaks == ("token tally",)


# ----------------------------------------------------------------- prompts


def _ledger_oracle(kit: ProbeKit) -> dict[str, int]:
    """What a model reading only the +dash ledger can know: the ~Tok column."""
    rows = {}
    for line in kit.ledger.splitlines():
        m = re.match(r"(B\d+)\s+([\d,]+)\s", line)
        if m:
            rows[m.group(1)] = int(m.group(2).replace(",", ""))
    return rows


def test_plus_dash_ledger_is_factual():
    """Appendix Proprioceptive-Blindness Diagnostic: the +dash condition prepends the
    factual ledger (the dashboard's columns); reading it answers every question exactly,
    which is why the table's +dash size errors are 0.00."""
    kit = build_probe_kit(make_trace(), budget=4000, rng=3)
    rows = _ledger_oracle(kit)
    assert rows == kit.block_tokens()
    assert f"~{kit.total_tokens:,} tok" in kit.ledger
    for q in ("total", "blocks", "pairwise"):
        plus, minus = kit.prompt(q, "+dash"), kit.prompt(q, "-dash")
        assert plus.startswith(kit.ledger) and kit.ledger not in minus
        assert kit.transcript in minus and leak_scan(minus) == ()
    for b in kit.sampled_blocks:
        assert b in kit.prompt("blocks", "-dash")
    for p in kit.pairs:
        assert f"{p.id}: {p.first} or {p.second}" in kit.prompt("pairwise", "-dash")
    with pytest.raises(WorkspaceArgumentError, match="`condition` must be one of -dash, \\+dash"):
        kit.prompt("total", "dash")
    with pytest.raises(WorkspaceArgumentError, match="`question` must be one of"):
        kit.prompt("size", "-dash")


# ----------------------------------------------------------------- scoring


def test_scorer_with_known_answers():
    """Table tab:proprioception: size answers score as median relative error, pairwise as
    accuracy against the larger block. A ledger-reading model scores 0 / 0 / 1; known
    wrong answers give the hand-computed figures; unusable answers are counted, not scored."""
    kit = build_probe_kit(make_trace(), budget=4000, rng=4, n_pairs=4)
    truth = kit.block_tokens()
    rows = _ledger_oracle(kit)
    b = kit.sampled_blocks
    factors = [2.0, 1.0, 0.5, 1.25]  # relative errors 1, 0, 0.5, 0.25 -> median 0.375
    first_correct = [p.first == p.larger for p in kit.pairs]
    answers = [
        {"model": "oracle", "condition": "+dash", "total": sum(rows.values())},
        {"model": "oracle", "condition": "+dash", "blocks": {x: rows[x] for x in b}},
        {
            "model": "oracle",
            "condition": "+dash",
            "pairs": {p.id: max((p.first, p.second), key=rows.get) for p in kit.pairs},
        },
        {
            "model": "guess",
            "condition": "-dash",
            "total": 1.5 * kit.total_tokens,
            "blocks": {x: f * truth[x] for x, f in zip(b, factors, strict=True)},
            "pairs": {p.id: p.first for p in kit.pairs},
        },
        {
            "model": "sloppy",
            "condition": "-dash",
            "total": "lots",
            "blocks": {b[0]: truth[b[0]], "B999": 5},
            "pairs": {kit.pairs[0].id: "B999"},
        },
    ]
    report = score_probe_answers(kit, answers)
    oracle = report.score("oracle", "+dash")
    assert (oracle.total_error, oracle.block_error, oracle.pairwise_accuracy) == (0.0, 0.0, 1.0)
    assert (oracle.total_n, oracle.block_n, oracle.pairwise_n) == (1, 4, 4)
    assert oracle.invalid == oracle.missing == 0
    guess = report.score("guess", "-dash")
    assert guess.total_error == pytest.approx(0.5)
    assert guess.block_error == pytest.approx(0.375)
    assert guess.pairwise_accuracy == pytest.approx(np.mean(first_correct))
    sloppy = report.score("sloppy", "-dash")
    assert sloppy.total_n == 0 and np.isnan(sloppy.total_error)
    assert sloppy.block_n == 1 and sloppy.block_error == 0.0
    assert sloppy.invalid == 3  # "lots", B999 not asked, pair answered with B999
    assert sloppy.missing == 3 + 3  # three blocks and three pairs unanswered
    assert any("neither block" in p for p in report.problems)
    with pytest.raises(WorkspaceArgumentError, match="model/condition"):
        report.score("oracle", "-dash")


def test_scorer_pools_snapshots_and_reads_files(tmp_path):
    """Table tab:proprioception: figures pool every snapshot (median over snapshots for
    total size); answers come as a JSON file naming the snapshot."""
    k1 = build_probe_kit(make_trace(), budget=4000, rng=5, snapshot_id="run1")
    k2 = build_probe_kit(make_trace((30, 500, 60)), budget=4000, rng=5, snapshot_id="run2")
    k3 = build_probe_kit(make_trace((80, 90)), budget=4000, rng=5, snapshot_id="run3")
    errs = {"run1": 0.1, "run2": 0.4, "run3": 0.9}
    kits = {"run1": k1, "run2": k2, "run3": k3}
    recs = [
        {"model": "m", "condition": "-dash", "snapshot": s, "total": kits[s].total_tokens * (1 + e)}
        for s, e in errs.items()
    ]
    f = tmp_path / "answers.json"
    f.write_text(json.dumps({"answers": recs + [{"condition": "-dash", "snapshot": "nope"}]}))
    report = score_probe_answers([k1, k2, k3], f)
    s = report.score("m", "-dash")
    assert s.total_error == pytest.approx(0.4) and s.total_n == 3
    assert any("unknown snapshot 'nope'" in p for p in report.problems)


def test_answers_file_errors(tmp_path):
    """Appendix Proprioceptive-Blindness Diagnostic: each answer must say which condition
    it was asked in; unreadable files are clear errors."""
    kit = build_probe_kit(make_trace(), budget=4000, rng=0)
    rule = "`condition` of answer record 0 must be one of -dash"
    with pytest.raises(WorkspaceArgumentError, match=rule):
        score_probe_answers(kit, [{"condition": "nodash", "total": 3}])
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(WorkspaceArgumentError, match="must be valid JSON"):
        score_probe_answers(kit, bad)
    with pytest.raises(WorkspaceArgumentError, match="must be a readable JSON file"):
        score_probe_answers(kit, tmp_path / "missing.json")


# ----------------------------------------------------------------- anchors and input


def test_anchor_choices():
    """Appendix Proprioceptive-Blindness Diagnostic: "we anchor on the first archive event";
    a trace without one is a clear error unless another anchor is chosen."""
    no_archive = make_trace(archive=False)
    with pytest.raises(WorkspaceArgumentError, match="needs a trace with an archive call"):
        build_probe_kit(no_archive, budget=4000)
    end = build_probe_kit(no_archive, budget=4000, anchor="end", rng=0)
    assert end.anchor == "end" and end.anchor_index == len(no_archive)
    early = build_probe_kit(no_archive, budget=4000, anchor=4, rng=0)
    assert [b.id for b in early.blocks] == ["B1", "B2", "B3", "B4"]
    action_anchor = no_archive + [{"action": "archive", "block_id": "B4"}]
    assert build_probe_kit(action_anchor, budget=4000, rng=0).anchor_index == len(no_archive)
    with pytest.raises(WorkspaceArgumentError, match="`anchor` must be a trace item index"):
        build_probe_kit(no_archive, budget=4000, anchor=999)
    with pytest.raises(WorkspaceArgumentError, match="leaves an empty snapshot"):
        build_probe_kit(no_archive, budget=4000, anchor=0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"n_blocks": 0}, "`n_blocks` must be an integer >= 1"),
        ({"n_pairs": -1}, "`n_pairs` must be an integer >= 0"),
        ({"max_ratio": 1.0}, "`max_ratio` must be a finite number > 1"),
        ({"max_tokens": 0}, "`max_tokens` must be an integer >= 1"),
        ({"anchor": "last"}, "`anchor` must be 'first-archive', 'end'"),
        ({"rng": "seed"}, "`rng` must be None, an int seed"),
    ],
)
def test_kit_rejects_bad_parameters(kwargs, match):
    """Appendix Proprioceptive-Blindness Diagnostic: parameters are checked at the door."""
    with pytest.raises(WorkspaceArgumentError, match=match):
        build_probe_kit(make_trace(), budget=4000, **kwargs)


# ----------------------------------------------------------------- CLI


def _cli(argv):
    parser = argparse.ArgumentParser(prog="vista-lab workspace")
    register_analysis(parser.add_subparsers(dest="sub", required=True))
    ns = parser.parse_args(argv)
    return ns.func(ns)


def test_cli_probe(tmp_path, capsys, monkeypatch):
    """Appendix Proprioceptive-Blindness Diagnostic through `vista-lab workspace probe`:
    kits with prompts written to disk, answers scored into the table's columns, and
    exit status 1 when a snapshot leaks."""
    monkeypatch.setenv("COLUMNS", "200")  # tables follow the terminal width
    trace = tmp_path / "run.json"
    trace.write_text(json.dumps(make_trace()))
    out = tmp_path / "prompts"
    assert (
        _cli(
            [
                "probe",
                str(trace),
                "--budget",
                "4000",
                "--seed",
                "7",
                "--json",
                "--prompts",
                str(out),
            ]
        )
        == 0
    )
    doc = json.loads(capsys.readouterr().out)
    kit = doc["kits"][0]
    assert doc["seed"] == 7 and kit["snapshot_id"] == "run" and kit["leaks"] == []
    assert sorted(p.name for p in (out / "run").iterdir()) == sorted(
        [f"{c}_{q}.txt" for c in ("without-dash", "with-dash")
         for q in ("total", "blocks", "pairwise")]
        + ["truth.json"]
    )
    truth = json.loads((out / "run" / "truth.json").read_text())
    assert truth["total_tokens"] == kit["total_tokens"]
    answers = tmp_path / "answers.json"
    answers.write_text(
        json.dumps(
            [
                {
                    "model": "m",
                    "condition": "+dash",
                    "total": kit["total_tokens"],
                    "blocks": kit["sampled_blocks"],
                    "pairs": {p["id"]: p["larger"] for p in kit["pairs"]},
                },
                {"model": "m", "condition": "-dash", "total": 2 * kit["total_tokens"]},
            ]
        )
    )
    assert (
        _cli(["probe", str(trace), "--budget", "4000", "--seed", "7", "--answers", str(answers)])
        == 0
    )
    table = capsys.readouterr().out
    assert "pairwise +dash" in table and "Probe scores" in table
    leaky = tmp_path / "leaky.json"
    leaky.write_text(
        json.dumps(make_trace(extra=[{"role": "user", "content": "you are at ~9,000 tokens"}]))
    )
    assert _cli(["probe", str(leaky), "--budget", "4000", "--seed", "1"]) == 1
    with pytest.raises(WorkspaceArgumentError, match="`--blocks` must be >= 1"):
        _cli(["probe", str(trace), "--budget", "4000", "--blocks", "0"])


def test_cli_entry_point_one_line_errors(tmp_path, capsys):
    """Appendix Proprioceptive-Blindness Diagnostic via `vista-lab workspace probe`: a bad
    option is one line on stderr and exit status 2; a good run exits 0."""
    from vistalab.cli import main

    trace = tmp_path / "run.json"
    trace.write_text(json.dumps(make_trace()))
    assert main(["workspace", "probe", str(trace), "--budget", "4000", "--seed", "1"]) == 0
    capsys.readouterr()
    assert main(["workspace", "probe", str(trace), "--budget", "4000", "--anchor", "foo"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--anchor` must be first-archive, end or a trace item index" in err[0]
    assert main(["workspace", "reward", str(trace), "--budget", "4000", "--rho", "1"]) == 2
    assert "`rho` must satisfy 0 <= rho < 1" in capsys.readouterr().err
