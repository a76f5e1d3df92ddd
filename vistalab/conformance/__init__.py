"""The paper's workspace invariants as a conformance suite for any context manager.

A *context manager* (a trimmer, a memory, a workspace engine) decides what an
agent's next request holds. :func:`check` generates valid conversations with
Hypothesis (:func:`conversations`: OpenAI chat, Anthropic Messages, OpenAI
Responses input items, Gemini contents) and budgets near their
boundaries (:func:`budgets`), runs the manager on each and checks the
invariants of :data:`vistalab.workspace.INVARIANTS` that apply to any manager
(:data:`CHECKED`: ``budget``, ``protocol``, ``fidelity``, ``recoverability``
from the paper's Methodology, "Workspace invariants" and "Structure
preservation"; ``crash`` and ``determinism``, engineering requirements). Every
broken invariant comes back as a :class:`Violation` with a counterexample
shrunk to a minimal case, which :meth:`Violation.write` saves as a trace file
that ``vista-lab conformance --replay`` and ``vista-lab workspace replay`` read.

A manager is a plain trimmer ``manager(messages, budget, count) -> messages``
or a factory of :class:`ManagerAdapter` (``register(message)``,
``render(budget)``, optionally ``placeholder(unit)`` and ``recover(id)``);
:class:`WorkspaceAdapter` adapts vista-lab's own :class:`~vistalab.workspace.Workspace`::

    from vistalab.conformance import check, WorkspaceAdapter
    report = check(my_trimmer, protocol="openai", examples=200)
    assert report.ok, [v.message for v in report.violations]
    check(WorkspaceAdapter, protocol="anthropic").ok

Needs the ``testing`` extra (``pip install 'vista-lab[testing]'``: Hypothesis).
"""

from vistalab._core import import_optional
from vistalab._core._door import install_contract as _install_contract

import_optional("hypothesis", "vistalab.conformance", extra="testing")

from ._checks import (  # noqa: E402
    ANTHROPIC_ID,
    budget_problems,
    fidelity_problems,
    pinned_problems,
    recoverability_problems,
    request_problems,
    units,
)
from ._counter import SuiteCounter, as_counter  # noqa: E402
from ._ids import CHECKS, Check, check_info  # noqa: E402
from ._isolated import DEFAULT_IMPORT_TIMEOUT  # noqa: E402
from ._managers import (  # noqa: E402
    MAX_OUTPUT_CHARS,
    BudgetTooSmall,
    ManagerAdapter,
    ManagerOutputError,
    ManagerProcessError,
    ManagerSignatureError,
    ManagerTimeoutError,
)
from ._model import CHECKED, ConformanceReport, Violation, read_violation  # noqa: E402
from ._reference import tail_trimmer  # noqa: E402
from ._registry import NAMED_MANAGERS, resolve_manager  # noqa: E402
from ._runner import DEFAULT_TIMEOUT, check, replay  # noqa: E402
from ._shapes import (  # noqa: E402
    batch_problems,
    closure_problems,
    complete_pending,
    coupling_problems,
    pending_calls,
    pending_problems,
)
from ._strategies import (  # noqa: E402
    PINNED,
    budgets,
    conversations,
    cut_points,
    minimal_tail,
    pinned_floor,
)
from ._workspace import WorkspaceAdapter  # noqa: E402

__all__ = [
    "CHECKED",
    "CHECKS",
    "Check",
    "check_info",
    "BudgetTooSmall",
    "PINNED",
    "pinned_floor",
    "pinned_problems",
    "DEFAULT_TIMEOUT",
    "DEFAULT_IMPORT_TIMEOUT",
    "MAX_OUTPUT_CHARS",
    "ANTHROPIC_ID",
    "check",
    "ConformanceReport",
    "Violation",
    "read_violation",
    "replay",
    "ManagerAdapter",
    "ManagerSignatureError",
    "ManagerTimeoutError",
    "ManagerOutputError",
    "ManagerProcessError",
    "WorkspaceAdapter",
    "tail_trimmer",
    "SuiteCounter",
    "as_counter",
    "budget_problems",
    "request_problems",
    "fidelity_problems",
    "recoverability_problems",
    "units",
    "batch_problems",
    "coupling_problems",
    "closure_problems",
    "pending_calls",
    "pending_problems",
    "complete_pending",
    "conversations",
    "budgets",
    "cut_points",
    "minimal_tail",
    "NAMED_MANAGERS",
    "resolve_manager",
]

# The study of the ecosystem: real context managers (the peers) under the suite.
from ._peers import (  # noqa: E402
    PEERS,
    Peer,
    PeerNotInstalledError,
    get_peer,
    load_peer,
    peer_names,
)
from ._study import PeerResult, StudyResult, provider_rules, run_study  # noqa: E402

__all__ += [
    "PEERS",
    "Peer",
    "PeerNotInstalledError",
    "get_peer",
    "load_peer",
    "peer_names",
    "run_study",
    "StudyResult",
    "PeerResult",
    "provider_rules",
]

# The error contract's net over every public name (vistalab._core._door).
_install_contract(globals())
