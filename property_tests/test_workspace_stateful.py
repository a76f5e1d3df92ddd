"""Model-based test of the workspace engine (paper, Methodology: "Workspace
invariants", eq. workspace-render, eq. overflow, eq. archive-contract,
"Structure preservation", "Hierarchical recovery"; Algorithm 1).

The machine itself is public, :class:`vistalab.testing.WorkspaceMachine` (two
engines, on a ``DiskStore`` and on a ``MemoryStore`` with the same display
root, against a byte-level model; see its docstring). The project subclasses it
like any user: here it adds an invariant on the engine's internal incremental
preflight sums, and runs it with both registered tokenizers.
"""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings
from hypothesis.stateful import invariant

from vistalab.testing import WorkspaceMachine

_DEV = os.environ.get("HYPOTHESIS_PROFILE") == "dev"


class EngineMachine(WorkspaceMachine):
    """The public machine plus an invariant on engine internals (project-only)."""

    @invariant()
    def incremental_preflight_is_exact(self) -> None:
        """Preflight (eq. overflow) on the maintained sums gives the full candidate's count."""
        if not hasattr(self, "ws"):
            return
        fast = self.ws._fast_total()
        assert fast is None or fast == self.ws._candidate().total
        r = self.ws.render()
        assert self.ws.mode == r.mode
        for u, t in r.prompt_tokens.items():  # cached per group, kept up to date
            assert t == sum(self.ws._pos_cost[s - 1] for s in self.ws._leaves(u))


# ci: ~40 s of the area's 150 s budget on 2 cores; dev explores ~10x more.
_STEPS = 60 if _DEV else 40
_EXAMPLES = 1000 if _DEV else 120

TestWorkspaceApprox = EngineMachine.TestCase
TestWorkspaceApprox.settings = settings(
    max_examples=_EXAMPLES,
    stateful_step_count=_STEPS,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


class Cl100kMachine(EngineMachine):
    """The same machine with the paper's tokenizer (cl100k_base, offline)."""

    tokenizer = "cl100k_base"


TestWorkspaceCl100k = Cl100kMachine.TestCase
TestWorkspaceCl100k.settings = settings(
    max_examples=_EXAMPLES // 3,
    stateful_step_count=_STEPS,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestWorkspaceCl100k = pytest.mark.slow(TestWorkspaceCl100k)
