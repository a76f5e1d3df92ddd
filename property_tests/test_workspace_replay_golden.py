"""The 216 replay outputs (sample traces x budgets x configurations) are
byte-identical to the ones pinned in ``replay_golden.json`` (paper,
Implementation Details: Algorithm 1 run turn by turn over a recorded
conversation; Methodology, "Workspace invariants": the event log replays to the
same canonical hash). What the agent sees must not move when the engine's
internals change (its records, indexes or memory layout); see
``property_tests/_replay_golden.py`` for what each digest covers."""

from __future__ import annotations

import json

import pytest

from . import _replay_golden as golden


def test_the_pin_covers_216_replays():
    """Six traces x six budgets x six configurations, each with its own digest
    entry, and the refused replays are a minority."""
    want = json.loads(golden.GOLDEN.read_text(encoding="utf-8"))
    keys = [golden.key(*c) for c in golden.cases()]
    assert len(keys) == len(set(keys)) == 216
    assert sorted(want) == sorted(keys)
    assert len(set(want.values())) > 150  # distinct outputs, not one error repeated


@pytest.mark.slow
def test_every_replay_output_is_byte_identical():
    want = json.loads(golden.GOLDEN.read_text(encoding="utf-8"))
    got = golden.compute()
    differs = [k for k in got if got[k] != want[k]]
    assert not differs, f"{len(differs)} of {len(got)} replay outputs changed: {differs[:5]}"


def test_the_comparison_sees_one_changed_character(monkeypatch):
    """A broken engine (one space fewer in a ledger row's Status cell) changes
    the digest of a replay that shows a dashboard, so the pin can fail."""
    from vistalab.workspace import _dashboard

    case = ("ops_agent.json", 3500, "cl100k_base", True)
    want = json.loads(golden.GOLDEN.read_text(encoding="utf-8"))[golden.key(*case)]
    assert golden.digest(*case) == want
    real = _dashboard.row_suffix

    def broken(type_, level, parent, status, *, compact):
        return real(type_, level, parent, status, compact=compact).replace("  ", " ", 1)

    monkeypatch.setattr(_dashboard, "row_suffix", broken)
    assert golden.digest(*case) != want
