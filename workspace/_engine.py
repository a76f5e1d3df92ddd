"""The reference context workspace W_t = (V_t, A_t): a thin facade over one
layer per concern (state, layout, preflight, guard, actions, tools, persistence)."""

from __future__ import annotations

import inspect
from typing import Any

from ._persist import PersistLayer
from ._results import ArchiveResult, DeleteResult, Rendering, RestoreResult
from ._state import StateCore
from ._validate import MAX_REPLACEMENT_CHARS, _id_summary

__all__ = [
    "Workspace",
    "Rendering",
    "ArchiveResult",
    "DeleteResult",
    "RestoreResult",
    "MAX_REPLACEMENT_CHARS",
    "_id_summary",
]


class Workspace(PersistLayer):
    """A context workspace with a hard token budget.

    Parameters
    ----------
    budget : int
        B, the hard bound on every rendering's tokens.
    tokenizer : str or Tokenizer
        ``"cl100k_base"`` (default, offline) or ``"approx"``, or an instance.
    store : PayloadStore, optional
        Where archived payloads go; default an in-memory store.
    hard_limit : int, optional
        Ceiling the budget guard keeps the candidate rendering under when it
        admits tool results (default ``2 * budget``). Between ``budget`` and
        ``hard_limit`` the agent is in overflow mode and makes room itself;
        past it the guard offloads old raw tool results or rejects the new one.
    task_tools : sequence of dict
        The agent's ordinary (environment) tool schemas, OpenAI format; they
        are counted in the overhead and refused in overflow mode.
    protocol : bool
        Prepend the paper's context-management protocol and budget notice as
        a system message (default True).
    dashboard : DashboardConfig, optional
        Ledger layout.
    include_read_path_tool : bool
        Also expose a ``read_path`` tool schema (default False: recovery is
        an ordinary file read).
    log_path : str or PathLike, optional
        Append every event to this JSONL file as it happens.
    cache_prefix : bool
        In overflow, the management rendering keeps the longest leading run
        of the conversation that fits beside its dashboard (default True), so
        the request keeps the prefix a provider's prompt cache holds from the
        turn before; False shows only protocol, pinned blocks and dashboard.
    keep_pending : bool
        The management rendering keeps the tool-call block whose calls are
        still waiting for results, with the results that arrived and a
        placeholder per pending call, after everything else (default True:
        an unanswered call is never evicted or summarised away, and the
        request stays protocol-valid). The floor reserves its room: a call
        message the budget could not keep is refused, a result that would
        push the batch past the budget is rejected by the guard, and the
        batch's results are neither offloaded nor archived until its last one
        arrives. False stops the management rendering before that block (the
        Coq engine model's rendering, which ``check_model`` requires).
    check_model : bool or str
        Translation validation (default False): replay every operation of this
        session (registrations, the agent's archive / restore / delete, reads,
        recoveries, renderings) into the engine's extracted Coq model, one
        model process per workspace, and raise
        :class:`~vistalab.workspace.ModelDisagreementError` at the first
        operation where the engine's state or rendering differs from the
        model's. True builds the model on demand
        (:func:`~vistalab.workspace.build_engine_model`, cached); a path names a
        built executable. The workspace is then an instance of
        ``ModelChecked[Workspace]`` (a subclass: ``close()`` or ``with`` ends
        the model process). Off, nothing changes and nothing is paid. See
        ``docs/guide/engine-differential.md`` ("Translation validation") for
        what is checked, what is not, and the overhead.

    Attributes
    ----------
    budget : int
        B, as constructed.
    hard_limit : int
        The budget guard's ceiling.
    tokenizer : Tokenizer
        The tokenizer every count uses.
    store : PayloadStore
        Where archived payloads are.
    protocol : bool
        Whether the protocol message is prepended.
    dashboard_config : DashboardConfig
        The ledger layout.
    cache_prefix : bool
        Whether the management rendering keeps the cacheable prefix.
    keep_pending : bool
        Whether the management rendering keeps the pending tool-call batch.

    Notes
    -----
    Thread safety: every public mutation, read and rendering holds one
    re-entrant lock, so concurrent callers see whole transitions (the
    invariants hold between any two calls). The class is assembled from one
    layer per concern, each in its own module: state and hashing
    (``_state``), layout and costs (``_layout``), preflight and rendering
    (``_preflight``), the budget guard (``_guard``), registration
    (``_register``), archive / delete / restore (``_actions``), reads
    (``_reads``), the agent tools (``_tools``), fork (``_fork``) and
    persistence (``_persist``).

    Raises
    ------
    BudgetConfigError
        If ``budget`` cannot hold the management rendering.
    ModelCheckUnavailableError
        ``check_model=True`` and the model cannot be built (Coq or OCaml missing).
    ModelCoverageError
        ``check_model=True`` with an option the model does not cover.
    """

    def __new__(cls, *args: Any, check_model: Any = False, **kwargs: Any) -> Any:
        if check_model is not False and check_model is not None:
            from ._check import checked_class

            cls = checked_class(cls)
        return super().__new__(cls)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:  # its own constructor: inspect reads that one
            cls.__signature__ = None  # type: ignore[attr-defined]


    __slots__ = ()


# help() and inspect show the constructor's parameters, not __new__'s pass-through.
_init = inspect.signature(StateCore.__init__)
Workspace.__signature__ = _init.replace(  # type: ignore[attr-defined]
    parameters=list(_init.parameters.values())[1:]
)
