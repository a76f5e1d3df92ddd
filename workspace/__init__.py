"""workspace: the reference VISTA context workspace W_t = (V_t, A_t).

Messages become typed, addressable blocks; the agent sees a dashboard every
turn and can archive blocks to exact external payloads (recoverable by an
ordinary read) or delete them; a preflight keeps every rendering within the
budget B and switches to a management rendering on overflow. Independent of
``theory/`` and ``sims/``.

Usage in an agent loop (``llm`` and ``run_tool`` are yours)::

    from vistalab.workspace import Workspace, DiskStore

    ws = Workspace(128_000, store=DiskStore("archive"), task_tools=my_tool_schemas)
    ws.register_system("You are a careful research agent.")
    ws.register_user(task)                              # pinned: the task block
    while True:
        r = ws.render()                                 # r.tokens <= 128_000, always
        reply = llm(messages=r.messages, tools=r.tools)  # OpenAI chat format
        if not reply.tool_calls:
            break                                       # the answer
        ws.register_tool_call(reply.tool_calls, content=reply.content)
        for call in reply.tool_calls:
            name, args = call["function"]["name"], call["function"]["arguments"]
            out = ws.gate(name)                         # refusal notice in overflow mode
            if out is None:
                out = ws.dispatch(name, args) if name.startswith("context_workspace") \\
                    else run_tool(name, args)
            ws.register_tool_result(call["id"], out)    # budget guard applies here

Python calls raise (``ws.archive``, ``ws.delete``, ``ws.read_path``,
``ws.recover``); agent-facing tools (``ws.context_workspace_archive``,
``ws.context_workspace_delete``, ``ws.dispatch``) return strings and change
nothing on a bad call; each string is a :class:`ToolReply` whose ``.ok`` and
``.failure`` tell Python code a refusal from a success, and ``ws.call_tool``
returns the typed :class:`ToolOutcome` itself (the same text, and whether and
why the call failed). ``ws.ledger_rows`` is the dashboard as records (its
columns ID, ~Tok, Age, Type, Level, Parent, Status).
``ws.events`` is the append-only log (each event with
the canonical ``state_hash``); ``Workspace.replay(log)`` rebuilds the state.
``ws.save(path)`` / ``Workspace.load(path)`` persist it crash-consistently
(``Workspace.salvage(path)`` loads what is intact and lists what was lost); an
unusable ``path`` is refused at the door (:class:`WorkspaceArgumentError`) and a
write that fails anyway raises :class:`SnapshotWriteError` (an ``OSError``).
Every public call holds one re-entrant lock, so threads may share a workspace.
``ws.fork()`` copies a workspace without re-tokenising it (``substitute=`` gives
the counterfactual copy with some plain messages' texts changed).
"""

from vistalab._core._door import install_contract as _install_contract

from ._accounting import (
    MESSAGE_FRAMING,
    REPLY_PRIMING,
    TOOL_CALL_FRAMING,
    TOOLS_FRAMING,
    count_request_tokens,
    message_tokens,
    tools_tokens,
)
from ._cache import cacheable_prefix_tokens, common_prefix_messages
from ._char_bound import CharBound
from ._dashboard import BAR_CELLS, DashboardConfig, LedgerRow, format_ledger_row, parse_ledger_rows
from ._diff_ops import OperationSequence
from ._differential import DifferentialReport, Divergence, differential_test
from ._disk_store import DiskStore
from ._engine import (
    MAX_REPLACEMENT_CHARS,
    ArchiveResult,
    DeleteResult,
    Rendering,
    RestoreResult,
    Workspace,
)
from ._errors import (
    BlockSpecError,
    BlockStateError,
    BudgetConfigError,
    ModelCheckError,
    ModelCheckUnavailableError,
    ModelCoverageError,
    ModelDisagreementError,
    PathEscapeError,
    PayloadConflictError,
    PayloadIntegrityError,
    ProtocolOrderError,
    ReplayMismatchError,
    SnapshotError,
    SnapshotWriteError,
    StorageError,
    TraceError,
    UnknownBlockError,
    UnknownNameError,
    WorkspaceArgumentError,
    WorkspaceError,
)
from ._events import Event, TornLogWarning, read_event_log
from ._formats import (
    FORMATS,
    PROJECTION_RULES,
    AnthropicCodec,
    anthropic_problems,
    anthropic_to_openai,
    anthropic_tool_use_ids,
    detect_format,
    openai_to_anthropic,
    render_request,
    to_openai_messages,
)
from ._gemini import (
    GEMINI_PROJECTION_RULES,
    GeminiIds,
    gemini_to_openai,
    openai_to_gemini,
    register_gemini,
    render_gemini,
)
from ._handles import (
    HANDLE_SHA_CHARS,
    ParsedHandle,
    find_handles,
    handle_text,
    offload_text,
    parse_handle,
    placeholder_kind,
    rejection_text,
)
from ._hf_tokenizer import HFTokenizer
from ._invariants import INVARIANTS, Invariant, invariant
from ._langchain import LangChainWorkspace
from ._mcp import (
    MCP_AGENT_TOOLS,
    MCP_HARNESS_TOOLS,
    ROLES,
    WorkspaceService,
    build_mcp_server,
)
from ._mcp_transport import build_http_app
from ._model import (
    ENGINE_MODEL_INSTALL_HINT,
    EngineModelBuildError,
    EngineModelUnavailableError,
    build_engine_model,
    engine_model_sources,
    run_engine_model,
)
from ._persist import Loss, Salvage
from ._probe import (
    PROBE_CONDITIONS,
    PROBE_QUESTIONS,
    SNAPSHOT_TOKEN_CAP,
    PairQuestion,
    ProbeKit,
    ProbeReport,
    ProbeScore,
    SnapshotBlock,
    build_probe_kit,
    leak_scan,
)
from ._probe_score import load_probe_answers, score_probe_answers
from ._protocol import (
    ARCHIVE_TOOL,
    CONTEXT_TOOL_NAMES,
    DELETE_TOOL,
    ERROR_PREFIX,
    PROTOCOL_TEXT,
    READ_PATH_TOOL,
    budget_notice,
    context_tool_schemas,
    error_text,
    is_error_text,
    protocol_problems,
)
from ._recorder import TrajectoryRecorder, trajectory_from_trace
from ._records import Block, BlockType, Group, PayloadRef, Status, ToolCall
from ._responses_wire import (
    RESPONSES_PROJECTION_RULES,
    openai_to_responses,
    responses_to_openai,
)
from ._reward import (
    ADVANTAGE_EPS,
    LAMBDA_I,
    LAMBDA_P,
    LAMBDA_U,
    RHO,
    ContextAction,
    GroupAdvantage,
    ProcessReward,
    RewardTurn,
    Trajectory,
    context_grpo_advantage,
    process_reward,
)
from ._spec import ByteRange, LineRange, MemberSelector, parse_block_spec, parse_selector
from ._store import MemoryStore, PayloadInfo, PayloadStore, sha256_hex
from ._tokenizers import (
    O200K_SHA256,
    TOKENIZERS,
    ApproxTokenizer,
    Cl100kTokenizer,
    O200kTokenizer,
    QuicktokTokenizer,
    SplitBound,
    Tokenizer,
    VocabBound,
    count_lower_bound,
    get_tokenizer,
    max_token_bytes,
    split_points,
)
from ._tools import ToolFailure, ToolOutcome, ToolReply
from ._trace import TraceReplay, TurnReport, load_trace, replay_trace

__all__ = [
    # the paper's invariants, named once
    "INVARIANTS",
    "Invariant",
    "invariant",
    # the executable Coq model of the engine (theory/coq/engine)
    "ENGINE_MODEL_INSTALL_HINT",
    "EngineModelBuildError",
    "EngineModelUnavailableError",
    "build_engine_model",
    "engine_model_sources",
    "run_engine_model",
    # the engine tested against that model (differential random testing)
    "differential_test",
    "DifferentialReport",
    "Divergence",
    "OperationSequence",
    # engine
    "Workspace",
    "Rendering",
    "ArchiveResult",
    "DeleteResult",
    "RestoreResult",
    "MAX_REPLACEMENT_CHARS",
    "Loss",
    "Salvage",
    "DashboardConfig",
    "LedgerRow",
    "BAR_CELLS",
    "format_ledger_row",
    "parse_ledger_rows",
    # state records and events
    "Block",
    "BlockType",
    "Group",
    "PayloadRef",
    "Status",
    "ToolCall",
    "Event",
    "read_event_log",
    # tokenizers and accounting
    "Tokenizer",
    "Cl100kTokenizer",
    "ApproxTokenizer",
    "O200kTokenizer",
    "QuicktokTokenizer",
    "HFTokenizer",
    "O200K_SHA256",
    "TOKENIZERS",
    "get_tokenizer",
    "max_token_bytes",
    "count_lower_bound",
    "SplitBound",
    "CharBound",
    "VocabBound",
    "split_points",
    "MESSAGE_FRAMING",
    "TOOL_CALL_FRAMING",
    "TOOLS_FRAMING",
    "REPLY_PRIMING",
    "message_tokens",
    "tools_tokens",
    "count_request_tokens",
    # stores and handles
    "PayloadStore",
    "PayloadInfo",
    "DiskStore",
    "MemoryStore",
    "sha256_hex",
    "HANDLE_SHA_CHARS",
    "handle_text",
    "offload_text",
    "rejection_text",
    "ParsedHandle",
    "parse_handle",
    "find_handles",
    "placeholder_kind",
    # agent-facing contract
    "PROTOCOL_TEXT",
    "budget_notice",
    "ARCHIVE_TOOL",
    "DELETE_TOOL",
    "READ_PATH_TOOL",
    "CONTEXT_TOOL_NAMES",
    "context_tool_schemas",
    "protocol_problems",
    "ERROR_PREFIX",
    "error_text",
    "is_error_text",
    "ToolOutcome",
    "ToolFailure",
    "ToolReply",
    "parse_block_spec",
    "parse_selector",
    "ByteRange",
    "LineRange",
    "MemberSelector",
    # prompt-cache friendliness
    "cacheable_prefix_tokens",
    "common_prefix_messages",
    # wire formats (OpenAI chat, Anthropic Messages, OpenAI Responses)
    "FORMATS",
    "RESPONSES_PROJECTION_RULES",
    "responses_to_openai",
    "openai_to_responses",
    "PROJECTION_RULES",
    "AnthropicCodec",
    "detect_format",
    "anthropic_to_openai",
    "openai_to_anthropic",
    "GEMINI_PROJECTION_RULES",
    "GeminiIds",
    "gemini_to_openai",
    "openai_to_gemini",
    "register_gemini",
    "render_gemini",
    "anthropic_problems",
    "anthropic_tool_use_ids",
    "to_openai_messages",
    "render_request",
    # agent-framework adapter (needs langchain-core when used)
    "LangChainWorkspace",
    # MCP server (needs the optional `mcp` package at build time)
    "MCP_AGENT_TOOLS",
    "MCP_HARNESS_TOOLS",
    "ROLES",
    "WorkspaceService",
    "build_mcp_server",
    "build_http_app",
    # traces
    "load_trace",
    "replay_trace",
    "TraceReplay",
    "TurnReport",
    # analysis: process reward (eq. process-reward) and group advantage
    "RHO",
    "LAMBDA_P",
    "LAMBDA_I",
    "LAMBDA_U",
    "ADVANTAGE_EPS",
    "ContextAction",
    "RewardTurn",
    "Trajectory",
    "TrajectoryRecorder",
    "ProcessReward",
    "GroupAdvantage",
    "process_reward",
    "context_grpo_advantage",
    "trajectory_from_trace",
    # analysis: proprioception probe kit (appendix "Proprioceptive-Blindness Diagnostic")
    "PROBE_CONDITIONS",
    "PROBE_QUESTIONS",
    "SNAPSHOT_TOKEN_CAP",
    "SnapshotBlock",
    "PairQuestion",
    "ProbeKit",
    "ProbeScore",
    "ProbeReport",
    "build_probe_kit",
    "leak_scan",
    "load_probe_answers",
    "score_probe_answers",
    # errors
    "WorkspaceError",
    "WorkspaceArgumentError",
    "ModelCheckError",
    "ModelCheckUnavailableError",
    "ModelCoverageError",
    "ModelDisagreementError",
    "BlockSpecError",
    "BlockStateError",
    "BudgetConfigError",
    "PathEscapeError",
    "PayloadConflictError",
    "PayloadIntegrityError",
    "ProtocolOrderError",
    "ReplayMismatchError",
    "SnapshotError",
    "SnapshotWriteError",
    "StorageError",
    "TornLogWarning",
    "TraceError",
    "UnknownBlockError",
    "UnknownNameError",
]

# The error contract's net over every public name (vistalab._core._door).
_install_contract(globals())
