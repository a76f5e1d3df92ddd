"""Process reward (eq. process-reward) and group advantage (eq. context-grpo-advantage)
of the paper's RL adaptation (section "RL Adaptation"), on hand-built turns and on
trajectories recorded from the real workspace engine."""

from __future__ import annotations

import argparse
import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from vistalab.workspace import (
    ADVANTAGE_EPS,
    LAMBDA_I,
    LAMBDA_P,
    LAMBDA_U,
    RHO,
    ContextAction,
    ProcessReward,
    RewardTurn,
    Trajectory,
    TrajectoryRecorder,
    Workspace,
    WorkspaceArgumentError,
    context_grpo_advantage,
    process_reward,
    trajectory_from_trace,
)

from vistalab._commands._workspace_analysis import register_analysis

# ----------------------------------------------------------------- helpers


def turn(i, tokens=0, budget=1000, actions=(), growth=(), errors=()):
    return RewardTurn(
        index=i,
        tokens=tokens,
        budget=budget,
        actions=tuple(actions),
        growth=tuple(growth),
        tool_errors=tuple(errors),
    )


def act(op, before, after, seq, ok=True, target="B3", detail=""):
    return ContextAction(op, target, ok, before, after, seq, detail)


def call(cid, name, arguments="{}"):
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": arguments}}


def base_trace(result_words=300):
    return [
        {"role": "system", "content": "You are a careful agent."},
        {"role": "user", "content": "Find the figure. " * 20},
        {"role": "assistant", "content": "searching", "tool_calls": [call("c1", "search")]},
        {"role": "tool", "tool_call_id": "c1", "content": "row value " * result_words},
    ]


# ----------------------------------------------------------------- defaults


def test_defaults_are_the_papers():
    """Section RL Adaptation: rho = 0.8, lambda_p = lambda_i = 1, lambda_u = 0.2."""
    assert (RHO, LAMBDA_P, LAMBDA_I, LAMBDA_U) == (0.8, 1.0, 1.0, 0.2)
    q = process_reward([turn(0, 900)])
    assert (q.rho, q.lambda_p, q.lambda_i, q.lambda_u) == (0.8, 1.0, 1.0, 0.2)
    assert ADVANTAGE_EPS > 0


# ----------------------------------------------------------------- pressure


def test_pressure_hand_computed():
    """Eq. process-reward: Q_pressure = -lambda_p max(0, (p - rho)/(1 - rho)), p = |F(W)|/B.

    B = 1000, rho = 0.8: p = 0.5, 0.8, 0.9, 1.0, 1.2 gives 0, 0, -0.5, -1, -2.
    """
    q = process_reward([turn(i, t) for i, t in enumerate((500, 800, 900, 1000, 1200))])
    assert q.occupancy.tolist() == pytest.approx([0.5, 0.8, 0.9, 1.0, 1.2])
    assert q.pressure.tolist() == pytest.approx([0.0, 0.0, -0.5, -1.0, -2.0])
    assert q.invalid.tolist() == [0.0] * 5 and q.undo.tolist() == [0.0] * 5
    assert q.total.tolist() == pytest.approx(q.pressure.tolist())
    # lambda_p scales it; rho moves the threshold.
    q2 = process_reward([turn(0, 900)], lambda_p=2.0, rho=0.5)
    assert q2.pressure[0] == pytest.approx(-2.0 * (0.9 - 0.5) / 0.5)


@given(
    tokens=st.integers(0, 5000),
    budget=st.integers(1, 4000),
    rho=st.floats(0.0, 0.99),
    lam=st.floats(0.0, 10.0),
)
def test_pressure_zero_below_rho_and_monotone(tokens, budget, rho, lam):
    """Eq. process-reward: no pressure penalty while p <= rho ("archiving below a fixed
    occupancy threshold is not penalized"), and the penalty never shrinks as p grows."""
    turns = [turn(0, tokens, budget), turn(1, tokens + 1, budget)]
    q = process_reward(turns, rho=rho, lambda_p=lam)
    p = tokens / budget
    if p <= rho:
        assert q.pressure[0] == 0.0
    else:
        assert q.pressure[0] == pytest.approx(-lam * (p - rho) / (1 - rho))
    assert q.pressure[1] <= q.pressure[0]
    assert np.all(q.pressure <= 0.0)


# ----------------------------------------------------------------- invalid


def test_invalid_hand_computed():
    """Eq. process-reward: Q_invalid = -lambda_i iff the context-tool executor returns an
    error or the canonical hash is unchanged; one penalty per turn however many."""
    turns = [
        turn(0, actions=[act("archive", "h0", "h1", 1)]),  # valid
        turn(1, actions=[act("archive", "h1", "h1", 2, ok=False, detail="B9 does not exist")]),
        turn(2, actions=[act("delete", "h1", "h1", 3)]),  # ok but no change: repetition
        turn(3, actions=[act("read", "h1", "h1", 4, target="mem://archive/B3.txt")]),  # read: ok
        turn(4, errors=["Error: arguments of context_workspace_archive are not valid JSON"]),
        turn(5, actions=[act("archive", "h1", "h1", 6, ok=False), act("delete", "h1", "h1", 7)]),
    ]
    q = process_reward(turns)
    assert q.invalid.tolist() == [0.0, -1.0, -1.0, 0.0, -1.0, -1.0]
    assert "B9 does not exist" in q.invalid_reasons[1][0]
    assert "unchanged" in q.invalid_reasons[2][0]
    assert len(q.invalid_reasons[5]) == 2  # both reasons reported, penalised once
    assert process_reward(turns, lambda_i=0.5).invalid.tolist() == [0, -0.5, -0.5, 0, -0.5, -0.5]


def test_failed_read_is_invalid():
    """Eq. process-reward: a recovery the executor refuses (missing handle) is invalid."""
    q = process_reward([turn(0, actions=[act("read", "h", "h", 1, ok=False, detail="gone")])])
    assert q.invalid[0] == -1.0


# ----------------------------------------------------------------- undo


def test_undo_pair_hand_computed():
    """Eq. process-reward: Q_undo = -lambda_u on both action turns of an archive-recovery
    pair that restores the same hash before any new observation or context growth."""
    turns = [
        turn(0, growth=[1]),
        turn(1, actions=[act("archive", "h0", "h1", 2)]),
        turn(2, actions=[act("restore", "h1", "h0", 3)]),
        turn(3, growth=[4]),
    ]
    q = process_reward(turns)
    assert q.undo_pairs == ((1, 2),)
    assert q.undo.tolist() == [0.0, -0.2, -0.2, 0.0]
    assert q.invalid.tolist() == [0.0] * 4


def test_undo_broken_by_observation_or_other_hash():
    """Eq. process-reward: an intervening observation, a recovery to another hash, or an
    invalid half is not an undo."""
    observed = [
        turn(0, actions=[act("archive", "h0", "h1", 1)], growth=[2]),  # result registered
        turn(1, actions=[act("restore", "h1", "h0", 3)]),
    ]
    assert process_reward(observed).undo_pairs == ()
    elsewhere = [
        turn(0, actions=[act("archive", "h0", "h1", 1)]),
        turn(1, actions=[act("restore", "h1", "h7", 2)]),
    ]
    assert process_reward(elsewhere).undo_pairs == ()
    failed = [
        turn(0, actions=[act("archive", "h0", "h0", 1, ok=False)]),
        turn(1, actions=[act("restore", "h0", "h0", 2, ok=False)]),
    ]
    assert process_reward(failed).undo_pairs == ()
    # Growth that comes *before* the archive does not break the pair.
    before = [
        turn(0, actions=[act("archive", "h0", "h1", 2)], growth=[1]),
        turn(1, actions=[act("restore", "h1", "h0", 3)]),
    ]
    assert process_reward(before).undo_pairs == ((0, 1),)


def test_terms_add_when_they_cooccur():
    """Eq. process-reward: "the three terms add when they co-occur"; no clipping in Q."""
    turns = [
        turn(0, 900, actions=[act("archive", "h0", "h1", 1)]),
        turn(1, 1200, actions=[act("restore", "h1", "h0", 2), act("delete", "h0", "h0", 3)]),
    ]
    q = process_reward(turns)
    assert q.total.tolist() == pytest.approx([-0.5 - 0.2, -2.0 - 1.0 - 0.2])


@st.composite
def timelines(draw):
    """Random archive / true restore / foreign recovery / growth steps with a model of
    which recoveries undo which archives (a stack reset by any growth)."""
    kinds = st.sampled_from(["archive", "restore", "foreign", "growth"])
    steps = draw(st.lists(kinds, max_size=25))
    fresh = iter(range(1, 10_000))
    h = "h0"
    stack: list[tuple[int, str]] = []  # (turn, hash before the archive)
    turns, expected, seq = [], [], 0
    for i, s in enumerate(steps):
        seq += 1
        if s == "growth":
            new = f"h{next(fresh)}"
            turns.append(turn(i, growth=[seq]))
            stack.clear()
        elif s == "archive":
            new = f"h{next(fresh)}"
            turns.append(turn(i, actions=[act("archive", h, new, seq)]))
            stack.append((i, h))
        elif s == "restore" and stack:
            a_turn, new = stack.pop()
            turns.append(turn(i, actions=[act("restore", h, new, seq)]))
            expected.append((a_turn, i))
        else:  # a recovery that lands on a new state
            new = f"h{next(fresh)}"
            turns.append(turn(i, actions=[act("restore", h, new, seq)]))
            stack.clear()
        h = new
    return turns, expected


@given(timelines())
def test_undo_detection_matches_model(data):
    """Eq. process-reward: undo pairs are exactly the archive-recovery pairs that return
    to the pre-archive hash with no observation or context growth in between."""
    turns, expected = data
    q = process_reward(turns)
    assert sorted(q.undo_pairs) == sorted(expected)
    for a, r in q.undo_pairs:
        assert not any(t.growth for t in turns[a + 1 : r + 1]), "growth between the pair"
    flagged = {i for pair in expected for i in pair}
    assert [i for i in range(len(turns)) if q.undo[i] < 0] == sorted(flagged)


# ----------------------------------------------------------------- advantage


def test_advantage_hand_computed():
    """Eq. context-grpo-advantage: A = (clip(R_i + Q, 0, 1) - mu_R) / (sigma_R + eps) with
    population sigma_R from the outcomes only."""
    r = [1.0, 0.0, 0.5]
    q = [[0.0, -0.3, -1.5], [0.0, -1.0], [0.2]]
    g = context_grpo_advantage(r, q, eps=1e-6)
    mu, sigma = 0.5, math.sqrt(1 / 6)
    assert g.mu == pytest.approx(mu) and g.sigma == pytest.approx(sigma)
    s = sigma + 1e-6
    assert g.advantages[0].tolist() == pytest.approx([(1 - mu) / s, (0.7 - mu) / s, -mu / s])
    assert g.advantages[1].tolist() == pytest.approx([-mu / s, -mu / s])
    assert g.advantages[2].tolist() == pytest.approx([(0.7 - mu) / s])
    assert (g.lower, g.upper) == pytest.approx((-mu / s, (1 - mu) / s))
    assert not g.degenerate
    # ProcessReward objects are accepted directly.
    pr = process_reward([turn(0, 900)])
    g2 = context_grpo_advantage([1.0, 0.0], [pr, [0.0]])
    assert g2.advantages[0][0] == pytest.approx((0.5 - 0.5) / (0.5 + ADVANTAGE_EPS))


def test_advantage_degenerate_group_is_flagged():
    """Eq. context-grpo-advantage: all-equal groups have sigma_R = 0 (the paper screens
    them out); the result says so instead of hiding it."""
    g = context_grpo_advantage([1.0, 1.0], [[0.0], [-0.5]], eps=1e-3)
    assert g.degenerate and g.sigma == 0.0
    assert g.advantages[1][0] == pytest.approx(-0.5 / 1e-3)


@given(
    data=st.lists(
        st.tuples(
            st.floats(0.0, 1.0),
            st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=6),
        ),
        min_size=1,
        max_size=6,
    ),
    eps=st.floats(1e-9, 1.0),
)
def test_advantage_within_clip_bounds(data, eps):
    """Eq. context-grpo-advantage: clip(., 0, 1) bounds every advantage between
    -mu/(sigma+eps) and (1-mu)/(sigma+eps), whatever the process values."""
    r = [d[0] for d in data]
    g = context_grpo_advantage(r, [d[1] for d in data], eps=eps)
    tol = 1e-9 * max(1.0, abs(g.lower), abs(g.upper))
    for a in g.advantages:
        assert np.all(a >= g.lower - tol) and np.all(a <= g.upper + tol)
    # Q = 0 gives back the plain outcome-normalised GRPO advantage.
    g0 = context_grpo_advantage(r, [[0.0]] * len(r), eps=eps)
    expected = (np.array(r) - np.mean(r)) / (np.std(r) + eps)
    assert np.allclose([a[0] for a in g0.advantages], expected, rtol=1e-9, atol=1e-9)


def test_per_token_expansion():
    """Eq. process-reward: all LLM tokens of a turn share the turn's Q and advantage."""
    q = process_reward([turn(0, 900), turn(1, 100)])
    assert q.per_token([2, 3]).tolist() == pytest.approx([-0.5, -0.5, 0, 0, 0])
    g = context_grpo_advantage([1.0, 0.0], [q, [0.0]])
    assert g.per_token(0, [1, 2]).shape == (3,)
    with pytest.raises(WorkspaceArgumentError, match="token_counts"):
        q.per_token([1])
    with pytest.raises(WorkspaceArgumentError, match="`i` must be a trajectory index"):
        g.per_token(5, [1])


# ----------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"rho": 1.0}, r"`rho` must satisfy 0 <= rho < 1"),
        ({"rho": -0.1}, r"`rho` must satisfy"),
        ({"rho": "0.8"}, r"`rho` must be a real number"),
        ({"lambda_p": -1}, r"`lambda_p` must be finite and >= 0"),
        ({"lambda_u": float("nan")}, r"`lambda_u` must be finite"),
        ({"lambda_i": True}, r"`lambda_i` must be a real number"),
    ],
)
def test_process_reward_rejects_bad_config(kwargs, match):
    """Eq. process-reward: parameters are checked at the door (rho < 1 divides by 1 - rho)."""
    with pytest.raises(WorkspaceArgumentError, match=match):
        process_reward([turn(0, 10)], **kwargs)


def test_process_reward_rejects_bad_turns():
    """Eq. process-reward: p needs a positive budget and token count; turns numbered."""
    rule = "`budget` of turn 0 must be a positive integer"
    with pytest.raises(WorkspaceArgumentError, match=rule):
        process_reward([turn(0, 10, budget=0)])
    with pytest.raises(WorkspaceArgumentError, match="must have index 0"):
        process_reward([turn(1, 10)])
    with pytest.raises(WorkspaceArgumentError, match="must be a RewardTurn"):
        process_reward([{"tokens": 3}])  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("outcomes", "process", "eps", "match"),
    [
        ([1.2, 0.0], [[0.0], [0.0]], 1e-6, r"must lie in \[0, 1\] \(R_0 = 1.2\)"),
        ([], [], 1e-6, "non-empty"),
        ([1.0, 0.0], [[0.0]], 1e-6, r"one entry per outcome \(2\)"),
        ([1.0], [[float("inf")]], 1e-6, "finite numbers"),
        ([1.0], [[0.0]], 0.0, "`eps` must be finite and > 0"),
    ],
)
def test_advantage_rejects_bad_input(outcomes, process, eps, match):
    """Eq. context-grpo-advantage: R_i in [0, 1], one Q per trajectory, eps > 0."""
    with pytest.raises(WorkspaceArgumentError, match=match):
        context_grpo_advantage(outcomes, process, eps=eps)


# ----------------------------------------------------------------- engine


def test_engine_trajectory_undo_and_invalid():
    """Eq. process-reward on a real workspace: archive then restore of the same block with
    nothing registered in between is an undo (the engine's canonical hash comes back);
    an archive of a missing block and malformed tool arguments are invalid."""
    trace = base_trace() + [
        {"action": "archive", "block_id": "B4"},
        {"action": "restore", "block_id": "B4"},
        {"action": "archive", "block_id": "B99"},
        {"action": "archive", "block_id": "B2"},  # the pinned task
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [call("c2", "context_workspace_archive", "{bad json")],
        },
        {"role": "tool", "tool_call_id": "c2", "content": "ignored"},
        {"role": "assistant", "content": "done"},
    ]
    t = trajectory_from_trace(trace, budget=4000, tokenizer="approx")
    assert [x.message_index for x in t.turns] == [2, 4, 5, 6, 7, 8, 10]
    q = process_reward(t)
    assert q.undo_pairs == ((1, 2),)
    assert q.undo.tolist() == [0, -0.2, -0.2, 0, 0, 0, 0]
    assert q.invalid.tolist() == [0, 0, 0, -1, -1, -1, 0]
    assert "pinned" in q.invalid_reasons[4][0]
    assert "not valid JSON" in q.invalid_reasons[5][0]
    # The restore really gave the archive's starting hash back.
    arch, rest = t.turns[1].actions[0], t.turns[2].actions[0]
    assert rest.hash_after == arch.hash_before != arch.hash_after


def test_engine_undo_broken_by_new_message():
    """Eq. process-reward: a new observation between archive and recovery is not an undo
    (the registration changes the canonical hash as well)."""
    trace = base_trace() + [
        {"action": "archive", "block_id": "B4"},
        {"role": "user", "content": "a new instruction"},
        {"action": "restore", "block_id": "B4"},
    ]
    q = process_reward(trajectory_from_trace(trace, budget=4000, tokenizer="approx"))
    assert q.undo_pairs == () and not np.any(q.undo)
    assert not np.any(q.invalid)


def test_engine_pressure_uses_candidate_rendering():
    """Eq. process-reward: pressure comes from the pre-action rendering F(W) including
    visible blocks, handles and dashboard: the candidate, which exceeds B in overflow mode."""
    trace = base_trace(result_words=800) + [
        {"role": "assistant", "content": None, "tool_calls": [call("c9", "search")]},
        {"role": "tool", "tool_call_id": "c9", "content": "more rows " * 800},
        {"action": "archive", "block_id": "B4"},
    ]
    t = trajectory_from_trace(trace, budget=4000, tokenizer="approx", hard_limit=10_000)
    before = t.turns[2]
    assert before.mode == "overflow" and before.tokens > before.budget >= before.rendered_tokens
    q = process_reward(t)
    assert q.pressure[2] == pytest.approx(-(before.tokens / 4000 - 0.8) / 0.2)
    assert q.pressure[2] < -1.0


def test_recorder_in_an_agent_loop():
    """Section RL Adaptation: turns are cut at each model call; a context call the
    executor answers with an error is Q_invalid, a successful archive is not."""
    ws = Workspace(6000, tokenizer="approx")
    ws.register_system("sys")
    ws.register_user("task " * 40)
    rec = TrajectoryRecorder(ws)
    r = rec.begin_turn()
    assert r.tokens <= 6000
    ws.register_tool_call([call("c1", "search")])
    ws.register_tool_result("c1", "data " * 500)
    rec.begin_turn()
    ws.register_tool_call(
        [
            call("c2", "context_workspace_archive", '{"block_id": "B4"}'),
            call("c3", "context_workspace_delete", '{"block_id": "B77"}'),
        ]
    )
    ws.register_tool_result("c2", ws.dispatch("context_workspace_archive", '{"block_id": "B4"}'))
    ws.register_tool_result(
        "c3", ws.dispatch("context_workspace_delete", '{"block_id": "B77", "reason": "x"}')
    )
    rec.begin_turn()
    ws.register_assistant("answer")
    t = rec.finish()
    assert isinstance(t, Trajectory) and len(t.turns) == 3
    assert [a.op for a in t.turns[1].actions] == ["archive", "delete"]
    q = process_reward(t)
    assert q.invalid.tolist() == [0.0, -1.0, 0.0]
    assert len(q.invalid_reasons[1]) == 1  # the failed delete, not repeated for its answer
    assert t.turns[2].tokens < t.turns[1].tokens  # the archive freed room
    with pytest.raises(WorkspaceArgumentError, match="after finish"):
        rec.begin_turn()


def test_reward_result_is_frozen():
    """Eq. process-reward: results are immutable records."""
    q = process_reward([turn(0, 900)])
    assert isinstance(q, ProcessReward)
    with pytest.raises(ValueError):
        q.total[0] = 1.0
    json.dumps(q.to_plain())


# ----------------------------------------------------------------- CLI


def _cli(argv):
    parser = argparse.ArgumentParser(prog="vista-lab workspace")
    register_analysis(parser.add_subparsers(dest="sub", required=True))
    ns = parser.parse_args(argv)
    return ns.func(ns)


def test_cli_reward_json(tmp_path, capsys):
    """Eqs. process-reward and context-grpo-advantage through `vista-lab workspace reward`:
    per-turn terms and the group advantage of two traces."""
    good = tmp_path / "good.json"
    good.write_text(json.dumps(base_trace() + [{"role": "assistant", "content": "done"}]))
    bad = tmp_path / "bad.json"
    bad.write_text(
        json.dumps(
            base_trace()
            + [{"action": "archive", "block_id": "B4"}, {"action": "restore", "block_id": "B4"}]
        )
    )
    status = _cli(
        [
            "reward",
            str(good),
            str(bad),
            "--budget",
            "4000",
            "--tokenizer",
            "approx",
            "--outcome",
            "1",
            "0",
            "--json",
        ]
    )
    assert status == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["config"]["rho"] == 0.8
    t_bad = doc["trajectories"][1]
    assert t_bad["reward"]["undo_pairs"] == [[1, 2]]
    assert doc["group"]["mu"] == 0.5 and doc["group"]["sigma"] == 0.5
    assert t_bad["advantage"][1] == pytest.approx((0.0 - 0.5) / (0.5 + 1e-6))
    # table output runs too
    assert _cli(["reward", str(bad), "--budget", "4000", "--tokenizer", "approx"]) == 0
    assert "undo pair" in capsys.readouterr().out


def test_cli_reward_rejects_outcome_count(tmp_path):
    """Eq. context-grpo-advantage needs one R_i per trajectory."""
    f = tmp_path / "t.json"
    f.write_text(json.dumps(base_trace()))
    with pytest.raises(WorkspaceArgumentError, match=r"one R per trace \(1 traces, 2 values\)"):
        _cli(["reward", str(f), "--budget", "4000", "--outcome", "1", "0"])
