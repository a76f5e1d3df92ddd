"""The paper's workspace invariants, named once.

One vocabulary for everything that checks them: the engine's stateful tests,
the conformance suite for other context managers (:mod:`vistalab.conformance`),
the Coq model of the engine (``theory/coq/engine``) and the differential test
that runs the Python engine against that model. A report, a JSON file or a Coq
theorem that speaks of an invariant uses the ``name`` given here.

The first seven come from the paper (Methodology, "Workspace invariants" and
"Structure preservation"; Context Stream, regime (i)); the next four (``batch``,
``coupling``, ``closure``, ``pending``) are the paper's structure preservation
stated for the shapes agents send today (parallel batches, reasoning items and
thinking blocks, server tools, long-running calls), each with the provider
documentation that enforces it. The last two are
engineering requirements of any context manager that sits in an agent loop;
they are not claims of the paper and say so.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["INVARIANTS", "Invariant", "invariant"]


@dataclass(frozen=True)
class Invariant:
    """One named invariant.

    Attributes
    ----------
    name : str
        The stable identifier used in reports, JSON, tests and Coq theorem names.
    statement : str
        What must hold, in one or two sentences.
    source : str
        Where it comes from: the paper's section and paragraph, or
        ``"engineering"`` for requirements that are not the paper's.
    """

    name: str
    statement: str
    source: str


INVARIANTS: tuple[Invariant, ...] = (
    Invariant(
        "budget",
        "Every request the manager emits fits the budget: |C_t| <= B, counted by the "
        "same tokenizer the checks use, after preflight and final assembly.",
        "Methodology, 'Workspace invariants' (|C_t| <= B); Eq. (workspace-render)",
    ),
    Invariant(
        "protocol",
        "Every request is one the provider accepts: tool results stay linked to the "
        "assistant tool calls that opened them, every call is answered, no answer is "
        "orphaned or duplicated, and archived results render in protocol-valid form "
        "(a placeholder whose parent call is also archived becomes ordinary context).",
        "Methodology, 'Structure preservation'",
    ),
    Invariant(
        "fidelity",
        "Every visible unit appears with its exact content, in its original order; "
        "anything else in the request is a placeholder, handle, stub or dashboard the "
        "manager declares as such.",
        "Methodology, Context Stream, regime (i) ('visible blocks appear in the active "
        "prompt with exact content')",
    ),
    Invariant(
        "recoverability",
        "The exact bytes behind every archived or offloaded unit can be recovered, "
        "unless the agent explicitly deleted that unit.",
        "Methodology, 'Workspace invariants' (archived payload bytes remain recoverable "
        "unless the agent explicitly deletes them)",
    ),
    Invariant(
        "stable_ids",
        "Every actionable unit has a block ID or handle that never changes meaning and "
        "is never reused for another unit, including after deletion.",
        "Methodology, 'Workspace invariants' (every actionable unit must have a stable "
        "block ID or handle)",
    ),
    Invariant(
        "dashboard",
        "The dashboard reports the same token estimates the budget checks use.",
        "Methodology, 'Workspace invariants' (the dashboard reports the same token "
        "estimates used by these checks)",
    ),
    Invariant(
        "pinned",
        "The pinned messages (the system prompt, and any message the manager declares "
        "pinned) are in every request, exactly; when the budget cannot hold them with the "
        "last user turn, the manager refuses rather than dropping them.",
        "Methodology, Context Stream, regime (i) ('pinned blocks are a protocol-required "
        "subset of this state')",
    ),
    Invariant(
        "batch",
        "A parallel batch (the calls one assistant step issued together) and its results "
        "are kept, archived or dropped together: a request never holds some of a batch's "
        "calls without the others.",
        "Methodology, 'Structure preservation' (tool results remain linked to their "
        "assistant tool calls); OpenAI function calling, 'Parallel function calling' "
        "(platform.openai.com/docs/guides/function-calling); Anthropic tool use, 'Parallel "
        "tool use' (docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use: "
        "all tool_result blocks answer the tool_use blocks of the previous message)",
    ),
    Invariant(
        "coupling",
        "A reasoning item or thinking block stays with the tool loop it belongs to (the "
        "calls it precedes), or the whole loop goes; a signed block (a thinking block's "
        "signature, a redacted_thinking block, a reasoning item's encrypted_content, a "
        "Gemini part's thoughtSignature) is never kept once the turn that signed it is "
        "rewritten.",
        "Methodology, 'Structure preservation'; OpenAI reasoning guide, 'Keeping reasoning "
        "items in context' (platform.openai.com/docs/guides/reasoning: a function_call sent "
        "without its reasoning item, or a reasoning item without its following item, is "
        "refused with a 400); Anthropic extended thinking, 'Preserving thinking blocks' "
        "(docs.anthropic.com/en/docs/build-with-claude/extended-thinking: pass thinking "
        "blocks back complete and unmodified with the tool_use turn they belong to); Gemini "
        "API, 'Thought signatures' (ai.google.dev/gemini-api/docs/thought-signatures: pass "
        "a signature back exactly as received, in the exact part where it was received)",
    ),
    Invariant(
        "closure",
        "Reference closure: every id the request references (a result's call id, a server "
        "tool result's use id) is defined in the request itself.",
        "Methodology, 'Structure preservation' (no orphaned tool response); OpenAI Responses "
        "('No tool call found for function call output with call_id ...'); Anthropic "
        "Messages ('unexpected tool_use_id found in tool_result blocks')",
    ),
    Invariant(
        "pending",
        "A pending call (a call whose result has not arrived when the manager runs) is never "
        "evicted, archived or summarised away: the request keeps it in its turn, exactly, "
        "until its result arrives.",
        "Methodology, 'Structure preservation' (tool results remain linked to their calls: "
        "a result arriving for a call no longer in context is an orphan); OpenAI function "
        "calling and Anthropic tool use (every call is answered in the next request)",
    ),
    Invariant(
        "crash",
        "The manager never raises on a valid conversation.",
        "engineering",
    ),
    Invariant(
        "determinism",
        "The same input gives the same output.",
        "engineering",
    ),
)

_BY_NAME = {inv.name: inv for inv in INVARIANTS}


def invariant(name: str) -> Invariant:
    """The invariant called ``name``.

    Parameters
    ----------
    name : str
        One of the names in :data:`INVARIANTS`.

    Returns
    -------
    Invariant

    Raises
    ------
    UnknownNameError
        If no invariant has that name (the message lists the names).
    """
    from ._errors import UnknownNameError

    try:
        return _BY_NAME[name]
    except (KeyError, TypeError):
        raise UnknownNameError("invariant", name, list(_BY_NAME)) from None
