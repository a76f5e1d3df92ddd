"""The study's judgement of each violation it finds: a **bug** (the peer breaks
a provider rule or its own documentation), a **documented behaviour** (the peer
does what its documentation says, and that breaks an invariant of the paper's
workspace, Methodology, "Workspace invariants"), or a **counting difference**
(the peer counts tokens otherwise than the suite, so its request is over the
budget by the suite's count only).

Each entry was written after reading the counterexample of that peer and check
id (``docs/guide/conformance-study.md``, the write-ups); a violation without an
entry is shown as "not judged" in the study.
"""

from __future__ import annotations

__all__ = ["JUDGEMENTS", "judgement"]

BUG = "bug"
DOC = "documented behaviour"
COUNT = "counting difference"

# Reasons shared by several peers (each names what the counterexample shows).
_EMPTY = ("Below the pinned floor no valid request exists; the peer returns the messages "
          "that fit, here none, and has no way to refuse (the refusal rule is the suite's, "
          "docs/guide/conformance.md).")
_PENDING = ("The peer has no notion of a call still waiting for its result: it trims the "
            "trailing call like any message (its API documents no pending-call rule).")
_NO_SYSTEM = ("The setting does not keep the system prompt (include_system defaults to False; "
              "trim_messages' docstring tells the user to set include_system=True).")
_LC_ORPHAN = ("A tool result is kept without its call at this setting; trim_messages' "
              "docstring says a valid history needs start_on='human' (a ToolMessage only "
              "after the AIMessage that called it), which the setting leaves out.")
_LC_SYSTEM_OVER = ("The system prompt alone is over max_tokens and trim_messages returns it "
                   "anyway: the output exceeds the max_tokens its docstring promises "
                   "('Trim messages to be below a token count'), where nothing fits and "
                   "raising would be the honest answer.")
_COUNT_SIZED = ("The peer is sized by message count, not tokens; at its smallest setting the "
                "last message alone is over the budget (below the pinned floor).")
_PROTECTED = ("The latest user message is protected (SlidingWindowCompactor's docstring: "
              "'Leading system messages and the latest user message are protected'), so "
              "below the pinned floor it is returned over the budget.")
_SESSION_CUT = ("The session returns the last N items whatever they are; the SDK feeds "
                "session items to the model as they are (a session limit), and the Responses "
                "API rejects this request (a function_call_output whose function_call is not "
                "in the input, or a function_call without the reasoning item before it).")


def _all(peer: str, kind: str, why: str, *checks: str) -> dict[tuple[str, str],
                                                               tuple[str, str]]:
    return {(peer, c): (kind, why) for c in checks}


_LC_ALL = ("langchain-last", "langchain-last-start-human", "langchain-last-system-start-human",
           "langchain-last-partial", "langchain-first", "langchain-last-system",
           "langchain-last-documented", "langchain-last-approximate",
           "langchainjs-last", "langchainjs-last-system", "langchainjs-first")

#: ``(peer, check id) -> (kind, reason)``.
JUDGEMENTS: dict[tuple[str, str], tuple[str, str]] = {
    **{(p, "budget.empty"): (DOC, _EMPTY) for p in _LC_ALL},
    **{(p, "pending.evicted"): (DOC, _PENDING) for p in _LC_ALL},
    **{(p, "pinned.dropped"): (DOC, _NO_SYSTEM) for p in (
        "langchain-last", "langchain-last-start-human", "langchain-first", "langchainjs-last",
        "langchainjs-first")},
    **{(p, c): (DOC, _LC_ORPHAN) for p in ("langchain-last", "langchain-last-system",
                                           "langchain-last-partial", "langchainjs-last")
       for c in ("protocol.orphan-result", "closure.undefined-id")},
    **{(p, "budget.over"): (BUG, _LC_SYSTEM_OVER) for p in (
        "langchain-last-system", "langchain-last-system-start-human", "langchain-last-partial",
        "langchain-last-documented", "langchainjs-last-system")},
    ("langchain-last-approximate", "budget.over"): (COUNT, (
        "count_tokens_approximately counts 'ok' as fewer tokens than cl100k_base does, so "
        "the message it keeps is over the budget by the suite's count only.")),
    ("langchain-last-partial", "fidelity.altered"): (DOC, (
        "allow_partial=True is documented to keep part of a message's content blocks.")),
    **{(p, "protocol.shape"): (BUG, (
        "@langchain/core's trimMessages(includeSystem: true, startOn: 'human') returns "
        "[undefined] when only the system message fits (langchain-core for Python returns "
        "the system message there): an array with a hole, not a message."))
       for p in ("langchainjs-last-system",)},
    ("langchainjs-last-system", "crash.raised"): (BUG, (
        "@langchain/core's trimMessages(includeSystem: true, startOn: 'human') returns "
        "[undefined] when only the system message fits; converting that hole back fails.")),
    **{(p, c): (DOC, (
        "strategy 'first' keeps the first messages that fit and cuts between a call and its "
        "results; trimMessages' docs offer endOn for that, which the setting leaves out."))
       for p in ("langchainjs-first",)
       for c in ("protocol.dangling-call", "closure.undefined-id")},
    **_all("langchain-first", DOC, (
        "strategy='first' keeps the first messages that fit and cuts between a call and its "
        "results; trim_messages' docstring offers end_on for that, which the setting leaves "
        "out."), "protocol.dangling-call", "closure.undefined-id"),
    # litellm
    ("litellm", "budget.empty"): (DOC, _EMPTY),
    ("litellm", "budget.over"): (COUNT, (
        "litellm counts with its own token_counter; by the suite's cl100k_base count with "
        "per-message overhead its output is over the budget.")),
    **_all("litellm", BUG, (
        "litellm keeps a tool result and drops the assistant call it answers: OpenAI rejects "
        "the request (HTTP 400), and litellm offers no option that prevents it."),
        "protocol.orphan-result", "closure.undefined-id"),
    **_all("litellm", DOC, (
        "litellm's trim_messages shortens the content of the messages it keeps (it "
        "replaces their middle by '..'), without declaring it; that is its documented way "
        "to fit a budget."), "fidelity.altered", "pinned.dropped"),
    # tokentrim
    ("tokentrim", "budget.empty"): (DOC, _EMPTY),
    ("tokentrim", "budget.over"): (BUG, (
        "tokentrim counts tiktoken tokens of str() of every field value; tiktoken refuses "
        "the text '<|endoftext|>' (a special token), and tokentrim's bare except prints "
        "'Failed to parse' and counts that tool result as 0 tokens, so it returns the whole "
        "input, over the budget by any count.")),
    **_all("tokentrim", BUG, (
        "tokentrim keeps a tool result and drops the assistant call it answers (it keeps "
        "the newest messages that fit, one at a time): OpenAI rejects the request (HTTP "
        "400), and tokentrim has no option that prevents it."),
        "protocol.orphan-result", "closure.undefined-id"),
    ("tokentrim", "crash.raised"): (BUG, (
        "When tokentrim must shorten a message whose content is a list of text parts "
        "(valid OpenAI input), its shortening step encodes the list as text and raises "
        "TypeError.")),
    **_all("tokentrim", DOC, (
        "tokentrim shortens a message it cannot fit by removing characters from its middle "
        "(shorten_message_to_fit_limit, as its docstring says), the system prompt included, "
        "without declaring it."), "fidelity.altered", "pinned.dropped"),
    ("tokentrim", "pending.evicted"): (COUNT, (
        "tokentrim counts the waiting call's assistant message as 52 tokens by its own "
        "rule, against 29 for the whole input by the suite's count, so at a budget of 32 "
        "it drops every message, the pending call with them.")),
    # autogen-core
    ("autogen-buffered", "budget.empty"): (DOC, (
        "buffer_size=1 keeps the last message, a tool result, and the context then drops a "
        "leading FunctionExecutionResultMessage (its documented guard against orphans), "
        "leaving nothing; below the pinned floor nothing valid fits anyway.")),
    ("autogen-buffered", "budget.over"): (COUNT, _COUNT_SIZED),
    ("autogen-buffered", "pinned.dropped"): (DOC, (
        "BufferedChatCompletionContext keeps the last buffer_size messages and does not keep "
        "the system prompt (autogen passes the system message to the model client apart).")),
    ("autogen-head-and-tail", "budget.over"): (COUNT, _COUNT_SIZED),
    ("autogen-token-limited", "budget.empty"): (DOC, _EMPTY),
    ("autogen-token-limited", "pending.evicted"): (DOC, _PENDING),
    ("autogen-token-limited", "pinned.dropped"): (DOC, (
        "The context removes messages from the middle until the count fits and keeps no "
        "system prompt by rule (autogen passes the system message apart).")),
    **_all("autogen-token-limited", BUG, (
        "TokenLimitedChatCompletionContext removes single messages from the middle, which "
        "separates a tool call from its result (an orphaned result or an unanswered call "
        "OpenAI rejects with HTTP 400) although a valid request fits the budget."),
        "protocol.orphan-result", "protocol.dangling-call", "closure.undefined-id"),
    # llama-index-core
    ("llama-index-chat-memory", "budget.over"): (COUNT, (
        "ChatMemoryBuffer counts only the messages' joined contents (no roles, calls or "
        "per-message overhead), and when nothing fits it returns the last message alone "
        "(get() ends with return chat_history[-1:]).")),
    **_all("llama-index-chat-memory", BUG, (
        "When nothing fits, ChatMemoryBuffer.get() returns the last message alone even when "
        "it is a tool result (return chat_history[-1:]): OpenAI rejects it (HTTP 400)."),
        "protocol.orphan-result", "closure.undefined-id"),
    ("llama-index-chat-memory", "pinned.dropped"): (DOC, (
        "ChatMemoryBuffer keeps the last messages that fit and has no rule for the system "
        "prompt (llama-index passes it to the LLM apart, as a prefix message).")),
    # openai-agents (Python) and @openai/agents-core (JavaScript)
    **{(p, c): (BUG, _SESSION_CUT) for p in ("openai-agents-session", "openai-agentsjs-session")
       for c in ("protocol.orphan-result", "closure.undefined-id",
                 "coupling.reasoning-dropped")},
    **{(p, "budget.over"): (COUNT, _COUNT_SIZED)
       for p in ("openai-agents-session", "openai-agentsjs-session")},
    **{(p, "pinned.dropped"): (DOC, (
        "A session stores the conversation's items; the agent's instructions are sent "
        "apart, so a limit cuts a system message in the session like any item."))
       for p in ("openai-agents-session", "openai-agentsjs-session")},
    **{(p, "pending.evicted"): (DOC, _PENDING)
       for p in ("openai-agents-session", "openai-agentsjs-session")},
    # ai (Vercel AI SDK)
    ("ai-prune-tool-calls", "budget.over"): (COUNT, _COUNT_SIZED),
    **_all("ai-prune-tool-calls", DOC, (
        "pruneMessages is documented to remove tool-call and tool-result parts outside the "
        "last K messages (and, with 'all', every one), per call id: it rewrites the assistant "
        "message it prunes (text kept, calls gone; a message equal to a later one then reads "
        "as reordered), keeps the calls of a parallel batch whose results it keeps, and takes "
        "a trailing call like any other."),
        "fidelity.altered", "fidelity.reordered", "batch.split", "pending.evicted"),
    # @llamaindex/core (JavaScript)
    ("llamaindexjs-chat-memory", "budget.empty"): (DOC, (
        "ChatMemoryBuffer.getMessages() returns [] when not even the last message fits (its "
        "code: 'if (tokenCount > this.tokenLimit && messageCount <= 0) return []').")),
    ("llamaindexjs-chat-memory", "budget.over"): (COUNT, (
        "ChatMemoryBuffer counts only the messages' joined contents with its own tokenizer "
        "(no roles, calls or per-message overhead).")),
    **_all("llamaindexjs-chat-memory", BUG, (
        "getMessages() keeps the last N messages, stepping over an assistant message but "
        "never over a tool result, so the kept part can start with a tool result whose call "
        "was cut (OpenAI rejects it with HTTP 400)."),
        "protocol.orphan-result", "closure.undefined-id"),
    ("llamaindexjs-chat-memory", "pinned.dropped"): (DOC, (
        "ChatMemoryBuffer keeps the last messages that fit and has no rule for the system "
        "prompt.")),
    ("llamaindexjs-chat-memory", "pending.evicted"): (DOC, _PENDING),
    ("llamaindexjs-chat-memory", "crash.raised"): (BUG, (
        "getMessages() throws 'The text contains a special token that is not allowed: "
        "<|endoftext|>' on a message whose text is '<|endoftext|>': its tokenizer refuses "
        "special-token text, so a conversation quoting it cannot be trimmed at all.")),
    # semantic-kernel
    ("semantic-kernel-truncation", "budget.over"): (COUNT, _COUNT_SIZED),
    ("semantic-kernel-truncation", "pending.evicted"): (DOC, (
        "The reducer's safe cut (locate_safe_reduction_index) never starts the kept part at "
        "a function call without its result, so at a small target_count it drops the "
        "trailing call; it has no notion of a pending call.")),
    # haystack
    **{(p, "budget.over"): (DOC, _PROTECTED) for p in (
        "haystack-sliding-window", "haystack-sliding-window-no-note",
        "haystack-sliding-window-min0")},
    ("haystack-sliding-window-min0", "pending.evicted"): (DOC, (
        "min_keep_steps=0 is documented to allow every step of the current task to be "
        "removed when none fits, the trailing call among them.")),
}


def judgement(peer: str, check: str) -> tuple[str, str]:
    """The study's judgement of ``peer`` breaking ``check``.

    Parameters
    ----------
    peer : str
        A peer's name.
    check : str
        A check id (``<invariant>.<rule>``).

    Returns
    -------
    tuple of str
        ``(kind, reason)``: kind is ``"bug"``, ``"documented behaviour"``,
        ``"counting difference"`` or ``"not judged"`` (then the reason is empty).
    """
    return JUDGEMENTS.get((peer, check), ("not judged", ""))
