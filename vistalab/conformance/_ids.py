"""Every check of the suite under a stable id.

A check id is ``<invariant>.<rule>``: the invariant is a name of
:data:`vistalab.workspace.INVARIANTS` (so reports, JSON files and the Coq
theorems share one vocabulary) and the rule says which way it broke. The
report gives one shrunk, confirmed counterexample per check id, so two
different bugs of one invariant (an orphaned result and a dangling call, say)
are both reported. Each :class:`Check` states its rule and where it comes
from: the paper, the provider's documented rule (with the error text the
provider returns, where it has one), or the suite's own pinned-prefix rule.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Check", "CHECKS", "check_info", "classify"]


@dataclass(frozen=True)
class Check:
    """One check of the suite.

    Attributes
    ----------
    id : str
        The stable id, ``<invariant>.<rule>``.
    invariant : str
        The invariant it belongs to (a name of :data:`vistalab.workspace.INVARIANTS`).
    statement : str
        What must hold.
    source : str
        Where the rule comes from (the paper's section, the provider's documented
        rule and error text, or ``"suite"`` for the suite's own rule).
    strict : bool
        True for the stricter rules checked only with ``strict=True``.
    """

    id: str
    invariant: str
    statement: str
    source: str
    strict: bool = False


_PAPER_BUDGET = "Methodology, 'Workspace invariants' (|C_t| <= B)"
_GEMINI_CONTENT = ("Gemini API reference, Content (ai.google.dev/api/caching#Content: role "
                   "'user' or 'model', ordered parts)")
_GEMINI_CALLS = ("Gemini API, Function calling (ai.google.dev/gemini-api/docs/function-calling; "
                 "400 'Please ensure that the number of function response parts is equal to "
                 "the number of function call parts of the function call turn.')")
_GEMINI_SIGS = ("Gemini API, Thought signatures (ai.google.dev/gemini-api/docs/thought-"
                "signatures: 'pass it back exactly as received', 'in the exact part where it "
                "was received'; Gemini 3 answers 4xx when a signature of the current turn is "
                "missing)")
_OPENAI_TOOLS = ("OpenAI Chat Completions, function calling: every tool message answers a "
                 "tool_calls id of the assistant message before it")

CHECKS: tuple[Check, ...] = (
    Check("budget.over", "budget",
          "The request costs at most the budget B, by the suite's token counter.", _PAPER_BUDGET),
    Check("budget.empty", "budget",
          "The request is never empty: at a budget at or above the pinned floor the manager "
          "sends a valid non-empty request, below it the manager refuses (raises "
          "BudgetTooSmall or its declared refusal) instead of sending nothing.",
          _PAPER_BUDGET + "; the suite's pinned-prefix rule"),
    Check("budget.refused", "budget",
          "The manager refuses only below the pinned floor (the pinned messages plus the "
          "conversation's last user turn): at or above it a valid request exists and must be "
          "sent.", "suite (pinned-prefix rule)"),
    Check("pinned.dropped", "pinned",
          "Every pinned message (the system prompt unless pinned='none', and every message the "
          "manager declares pinned) is in the request, exactly.",
          "Methodology, Context Stream, regime (i) ('pinned blocks are a protocol-required "
          "subset of this state')"),
    Check("protocol.shape", "protocol",
          "The request has the wire format's shape: OpenAI, a list of message objects with "
          "known roles and well-formed contents and calls; Anthropic, a {'system', "
          "'messages'} object whose system is a string or text blocks and whose blocks are "
          "objects with a type; Gemini, a {'systemInstruction', 'contents'} object whose "
          "contents have role user or model and non-empty parts of one data field each, "
          "functionCall parts (an object args) only in model contents and functionResponse "
          "parts (an object response) only in user contents.",
          "the provider's request schema; " + _GEMINI_CONTENT),
    Check("protocol.orphan-result", "protocol",
          "Every tool result answers a call of the assistant message right before its run of "
          "results, and is the only answer to it.",
          "Methodology, 'Structure preservation'; " + _OPENAI_TOOLS + "; Anthropic Messages, "
          "tool use: each tool_result answers a tool_use of the previous assistant turn; "
          "Gemini: each functionResponse part answers a functionCall of the model content "
          "right before it (by id when the call has one, else by name), " + _GEMINI_CALLS),
    Check("protocol.dangling-call", "protocol",
          "Every tool call is answered before the next non-tool message and before the "
          "request ends.",
          "Methodology, 'Structure preservation'; OpenAI ('An assistant message with "
          "'tool_calls' must be followed by tool messages responding to each "
          "'tool_call_id''); Anthropic ('tool_use ids were found without tool_result blocks "
          "immediately after'); Gemini: the content after a model content with functionCall "
          "parts is a user content with one functionResponse part per call, " + _GEMINI_CALLS),
    Check("protocol.duplicate-id", "protocol",
          "Call ids are unique within an assistant message (OpenAI) and within the whole "
          "request (Anthropic tool_use ids; Responses item ids; Gemini functionCall ids).",
          "OpenAI function calling; Anthropic Messages ('tool_use ids must be unique'); "
          "OpenAI Responses (400 'Duplicate item found with id'); Gemini API reference, "
          "FunctionCall.id ('The unique id of the function call', ai.google.dev/api/"
          "caching#FunctionCall)"),
    Check("protocol.id-pattern", "protocol",
          "Anthropic tool_use ids match ^[a-zA-Z0-9_-]+$ and a tool_use input is an object.",
          "Anthropic Messages API, tool_use block schema"),
    Check("protocol.alternation", "protocol",
          "Anthropic turns alternate, starting with a user turn; tool results sit only in "
          "user turns.", "Anthropic Messages API, 'messages' (roles alternate user/assistant)"),
    Check("protocol.empty-text", "protocol",
          "No Anthropic text block is empty or only whitespace.",
          "Anthropic Messages API (400 'messages: text content blocks must be non-empty' and "
          "'messages: text content blocks must contain non-whitespace text')"),
    Check("protocol.server-tool-split", "protocol",
          "Anthropic: a server tool's use block (server_tool_use, mcp_tool_use) and its "
          "result block (web_search_tool_result, web_fetch_tool_result, "
          "code_execution_tool_result, bash_code_execution_tool_result, mcp_tool_result, ...) "
          "stay together, in order, in the assistant turn that holds them: every use is "
          "answered by exactly one result later in its turn, every result follows its use "
          "there, and no server tool block sits in a user turn (a user tool_result does not "
          "answer a server tool).",
          "Anthropic server tools (docs.anthropic.com/en/docs/agents-and-tools/tool-use/"
          "web-search-tool, .../code-execution-tool, .../web-fetch-tool; MCP connector, "
          "docs.anthropic.com/en/docs/agents-and-tools/mcp-connector): the response's "
          "content holds the server_tool_use block and its result block, which are passed "
          "back as the assistant turn they came in; block shapes of the anthropic SDK's "
          "ServerToolUseBlockParam, WebSearchToolResultBlockParam and siblings"),
    Check("protocol.reasoning-split", "protocol",
          "Responses: a reasoning item is immediately followed by the function_call or "
          "assistant message it produced.",
          "OpenAI reasoning guide, 'Keeping reasoning items in context' "
          "(platform.openai.com/docs/guides/reasoning); the Responses API answers 400 \"Item "
          "'rs_...' of type 'reasoning' was provided without its required following item\""),
    Check("protocol.strict-system-late", "protocol",
          "strict: system messages only at the start of the request.",
          "chat templates that raise 'Conversation roles must alternate "
          "user/assistant/user/assistant/...' (Hugging Face Llama-2 and Mistral templates) "
          "and the Bedrock Converse API, which take the system prompt apart from the turns",
          strict=True),
    Check("protocol.strict-first-user", "protocol",
          "strict: the first non-system message is a user message.",
          "the same chat templates; Bedrock Converse ('A conversation must alternate between "
          "user and assistant roles')", strict=True),
    Check("protocol.strict-last-role", "protocol",
          "strict: the request ends with a user or tool message (no assistant prefill).",
          "Bedrock Converse (the last message must be a user message); providers without "
          "assistant prefill", strict=True),
    Check("protocol.strict-result-order", "protocol",
          "strict: tool results follow their calls in the calls' order.",
          "chat templates that pair results with calls by position (e.g. Mistral's)",
          strict=True),
    Check("batch.split", "batch",
          "A parallel batch (the calls one assistant turn issued together) is kept whole or "
          "not at all: no turn of the request holds some of its calls without the others.",
          "Methodology, 'Structure preservation'; OpenAI function calling, 'Parallel function "
          "calling' (platform.openai.com/docs/guides/function-calling); Anthropic tool use, "
          "'Parallel tool use' (docs.anthropic.com/en/docs/agents-and-tools/tool-use/"
          "implement-tool-use); Gemini, parallel functionCall parts of one model content "
          "answered together (" + _GEMINI_CALLS + ")"),
    Check("coupling.reasoning-dropped", "coupling",
          "A kept call keeps the reasoning items or thinking blocks that preceded it in its "
          "turn (the whole tool loop goes, or its reasoning stays with it).",
          "OpenAI reasoning guide, 'Keeping reasoning items in context' "
          "(platform.openai.com/docs/guides/reasoning; 400 \"Item 'fc_...' of type "
          "'function_call' was provided without its required 'reasoning' item\"); Anthropic "
          "extended thinking, 'Preserving thinking blocks' (docs.anthropic.com/en/docs/"
          "build-with-claude/extended-thinking; the API requires them for the last assistant "
          "turn of a tool loop and degrades without them elsewhere); Gemini: the parts of a "
          "model content that carry a thoughtSignature (the first functionCall part of a "
          "step) stay with its calls, " + _GEMINI_SIGS),
    Check("coupling.signed-rewritten", "coupling",
          "A signed block (a thinking block with its signature, a redacted_thinking block, a "
          "reasoning item with encrypted_content, a Gemini part with a thoughtSignature) is "
          "kept only inside its turn exactly as the input had it.",
          "Anthropic, 'Thinking in tool and multi-turn workflows' (platform.claude.com/docs/"
          "build-with-claude/thinking-tool-workflows: pass thinking blocks back complete and "
          "unmodified; a rebuilt assistant message is a 400); OpenAI reasoning guide "
          "(encrypted reasoning items are returned as they were produced); " + _GEMINI_SIGS),
    Check("closure.undefined-id", "closure",
          "Every id the request references is defined in it: each tool result's call id names "
          "a call of the request; each server tool result's tool_use_id and each tool_use "
          "caller's tool_id name a server_tool_use of the request; each Gemini "
          "functionResponse's id (or, without ids, its name) names a functionCall of it.",
          "Methodology, 'Structure preservation'; OpenAI Responses (400 'No tool call found for "
          "function call output with call_id ...'); Anthropic Messages (400 'unexpected "
          "tool_use_id found in tool_result blocks'); Gemini API reference, FunctionResponse.id "
          "('The id of the function call this response is for', ai.google.dev/api/"
          "caching#FunctionResponse)"),
    Check("pending.evicted", "pending",
          "The conversation's pending calls (its last turn's calls, not answered yet) are in "
          "the request, in that turn exactly, and are not declared a placeholder or summary "
          "(a declared stand-in for their result, such as a 'no result yet' stub, is allowed).",
          "Methodology, 'Structure preservation' (a result arriving for a call no longer in "
          "context is an orphan)"),
    Check("fidelity.altered", "fidelity",
          "Every unit of the request is an input unit, unaltered, unless the manager declares "
          "it a placeholder, summary or notice.",
          "Methodology, Context Stream, regime (i) ('visible blocks appear in the active "
          "prompt with exact content')"),
    Check("fidelity.reordered", "fidelity",
          "Input units keep their original order and appear at most once.",
          "Methodology, Context Stream, regime (i)"),
    Check("recoverability.lost", "recoverability",
          "recover(id) of every payload a declared placeholder names returns the exact bytes "
          "of the input it replaced.",
          "Methodology, 'Workspace invariants'; eq. (archive-contract)"),
    Check("recoverability.no-recover", "recoverability",
          "A manager whose placeholders name payloads offers recover(id).",
          "eq. (archive-contract)"),
    Check("recoverability.raised", "recoverability",
          "recover(id) returns for every payload id a placeholder names (it does not raise).",
          "eq. (archive-contract)"),
    Check("crash.raised", "crash",
          "The manager never raises on a valid conversation (a refusal below the pinned floor "
          "is not a crash).", "engineering"),
    Check("determinism.differs", "determinism",
          "Two runs on the same conversation and budget return the same output.", "engineering"),
)

_BY_ID = {c.id: c for c in CHECKS}


def check_info(check_id: str) -> Check:
    """The :class:`Check` called ``check_id``.

    Parameters
    ----------
    check_id : str
        An id of :data:`CHECKS`.

    Returns
    -------
    Check

    Raises
    ------
    DomainError
        If no check has that id (the message lists them).
    """
    from vistalab._core import DomainError

    try:
        return _BY_ID[check_id]
    except (KeyError, TypeError):
        raise DomainError("check_id", check_id, "must be a check id of the suite",
                          "pick one of: " + ", ".join(_BY_ID)) from None


# The checkers' problem texts, mapped to check ids: (invariant of the checker,
# pattern, id); the first match among the rules of the reporting checker wins.
# The texts come from vistalab.workspace.protocol_problems / anthropic_problems
# and from this package's checkers, and the patterns match their fixed wording
# (anchored where a text embeds values of the request, which may say anything).
# A test runs a broken manager per check id and asserts its own id is reported.
_RULES: tuple[tuple[str, str, str], ...] = (
    ("budget", r"over the budget of", "budget.over"),
    # an empty request is reported by the protocol checker; its check is budget's
    ("protocol", r"^(the )?request has no messages", "budget.empty"),
    ("pinned", r"^the pinned ", "pinned.dropped"),
    ("protocol", r"^strict: system message", "protocol.strict-system-late"),
    ("protocol", r"^strict: the first non-system", "protocol.strict-first-user"),
    ("protocol", r"^strict: the request ends", "protocol.strict-last-role"),
    ("protocol", r"^strict: (the results after|message \d+'s tool results)",
     "protocol.strict-result-order"),
    ("protocol", r"^message \d+ block \d+: (empty text block|text block of only whitespace)"
     r"|^system: text block of only whitespace", "protocol.empty-text"),
    ("protocol", r"^message \d+ block \d+: tool_use (id .* does not match|input must be)"
     r"|^message \d+: tool_use .* (does not match \^|input must be an object)",
     "protocol.id-pattern"),
    ("protocol", r"^message \d+ block \d+: server tool (result|use) "
     r"|^message \d+: server tool block in a user turn", "protocol.server-tool-split"),
    ("protocol", r"^item \d+: reasoning item .* is not followed by the function_call",
     "protocol.reasoning-split"),
    ("protocol", r"^message \d+: duplicate tool(_use| call) id|^item \d+: duplicate item id"
     r"|^content \d+: duplicate call id",
     "protocol.duplicate-id"),
    ("protocol", r"^item \d+: function_call_output answers .*, which no earlier function_call"
     r"|^item \d+: call .* answered more than once", "protocol.orphan-result"),
    ("protocol", r"^item \d+: \w+ message before the calls .* were answered",
     "protocol.dangling-call"),
    # Gemini (vistalab.conformance._gemini.gemini_problems)
    ("protocol", r"^content \d+: functionResponse .* answers no functionCall",
     "protocol.orphan-result"),
    ("protocol", r"^content \d+: the calls .* have no functionResponse"
     r"|^content \d+: \w+ content before the calls .* were answered", "protocol.dangling-call"),
    ("protocol", r"^message \d+: tool message .* does not follow a tool call"
     r"|^message \d+: call .* answered more than once"
     r"|^message \d+: tool message answers .*, which the preceding assistant message did not "
     r"call|^message \d+: tool_result in an assistant turn", "protocol.orphan-result"),
    ("protocol", r"^message \d+: \w+ message before the calls .* were answered"
     r"|^end of request: calls .* were never answered"
     r"|^(message \d+|last turn): tool_use .* never answered", "protocol.dangling-call"),
    ("protocol", r"^message 0: the first message must be a user turn"
     r"|^message \d+: two \w+ turns in a row|^the last turn must be a user turn",
     "protocol.alternation"),
    ("batch", r"^turn \d+ keeps \d+ of the \d+ calls of a parallel batch", "batch.split"),
    ("coupling", r"^turn \d+ keeps the calls .* without the reasoning",
     "coupling.reasoning-dropped"),
    ("coupling", r"^turn \d+ keeps a signed reasoning or thinking block",
     "coupling.signed-rewritten"),
    ("closure", r"^turn \d+: reference closure broken", "closure.undefined-id"),
    ("pending", r"^the pending call\(s\) ", "pending.evicted"),
    ("fidelity", r"^output \w+ \d+ is an input \w+ out of its original order",
     "fidelity.reordered"),
    ("fidelity", r"^output \w+ \d+ is not an input", "fidelity.altered"),
    ("recoverability", r"^output unit \d+ stands for payload .* but the manager has no "
     r"recover", "recoverability.no-recover"),
    ("recoverability", r"^recover\(.*\) raised ", "recoverability.raised"),
    ("recoverability", r"^recover\(", "recoverability.lost"),
)
_COMPILED = tuple((inv, re.compile(p), cid) for inv, p, cid in _RULES)
#: The id a problem of each invariant gets when no rule above matches it.
FALLBACK = {
    "budget": "budget.over", "pinned": "pinned.dropped", "protocol": "protocol.shape",
    "fidelity": "fidelity.altered", "recoverability": "recoverability.lost",
    "batch": "batch.split", "coupling": "coupling.signed-rewritten",
    "closure": "closure.undefined-id", "pending": "pending.evicted",
    "crash": "crash.raised", "determinism": "determinism.differs",
}


def classify(invariant: str, message: str) -> str:
    """The check id of one problem ``message`` that broke ``invariant``.

    Parameters
    ----------
    invariant : str
        The invariant whose checker reported the problem.
    message : str
        The problem's text.

    Returns
    -------
    str
        A check id of :data:`CHECKS` belonging to ``invariant`` (its catch-all
        :data:`FALLBACK` entry when no rule matches).
    """
    for inv, pattern, cid in _COMPILED:
        if inv == invariant and pattern.search(message):
            return cid
    unanswered = _anthropic_unanswered(message) if invariant == "protocol" else None
    return unanswered or FALLBACK[invariant]


_RESULTS = re.compile(r"^message \d+: tool results (\[.*?\]) do not answer the preceding "
                      r"tool_use ids (\[.*?\]) exactly once")


def _anthropic_unanswered(message: str) -> str | None:
    """Anthropic's results-vs-uses mismatch: an orphaned result when a result
    answers no call of the previous turn (or answers one twice), else a
    dangling call."""
    import ast

    m = _RESULTS.match(message)
    if m is None:
        return None
    try:
        results, uses = ast.literal_eval(m.group(1)), ast.literal_eval(m.group(2))
    except (ValueError, SyntaxError):
        return "protocol.orphan-result"
    extra = [r for r in results if r not in uses] or len(set(results)) < len(results)
    return "protocol.orphan-result" if extra else "protocol.dangling-call"
