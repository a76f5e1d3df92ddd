"""The proprioceptive-blindness probe kit (paper appendix "Proprioceptive-Blindness
Diagnostic", Table tab:proprioception): snapshot, prompts, ground truth, scoring.

From a replayed trace it takes the transcript just before the agent's first
archive call, strips the injected artifacts that would leak context state
(protocol header, guard rejection notices, archive placeholders), builds the
three probe questions (total size, sampled block sizes, pairwise comparison on
pairs within 2x) in a "-dash" and a "+dash" (factual ledger) condition, and
scores a JSON file of model answers as median relative error and accuracy.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ._accounting import message_tokens
from ._dashboard import DashboardConfig, DashboardRenderer, LedgerRow
from ._errors import WorkspaceArgumentError
from ._handles import placeholder_kind
from ._probe_iv import _kit_iv, _rng_iv
from ._protocol import ARCHIVE_TOOL, CONTEXT_TOOL_NAMES, PROTOCOL_TEXT, READ_PATH_TOOL
from ._records import Block, BlockType, Status
from ._store import PayloadStore
from ._tokenizers import Tokenizer

__all__ = [
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
]

#: The two conditions: cleaned transcript only, and with the factual ledger prepended.
PROBE_CONDITIONS = ("-dash", "+dash")
#: The three independent questions.
PROBE_QUESTIONS = ("total", "blocks", "pairwise")
#: Snapshots are capped at this many tokens by dropping trailing blocks (paper: 100K).
SNAPSHOT_TOKEN_CAP = 100_000

# Injected artifacts, as this engine writes them; also matched in traces
# recorded by a harness that printed them into the transcript.
_BUDGET_NOTICE = re.compile(
    r"(You need to complete the task within the following context window size:\s*)?"
    r"<budget:token_budget>\s*\d+\s*</budget:token_budget>"
)
_DASHBOARD = re.compile(r"<context_workspace_status>")

#: What :func:`leak_scan` looks for: strings that give away token counts,
#: budgets or the engine's own bookkeeping. Ordinary words such as "token"
#: are not flagged: a task about auth tokens is not a leak.
_LEAKS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("dashboard tag", re.compile(r"</?context_workspace_status>")),
    ("budget tag", re.compile(r"<budget:token_budget>")),
    ("protocol header", re.compile(re.escape(PROTOCOL_TEXT.splitlines()[0]))),
    ("guard notice", re.compile(r"\[budget guard\]")),
    ("archive handle", re.compile(r"\[(?:archived|offloaded) [BG][1-9][0-9]* ")),
    ("ledger header", re.compile(r"ID\s+~Tok\s+Age\s+Type")),
    ("token tally", re.compile(r"~\s?[0-9][0-9,]*\s+(?:tok|tokens)\b")),
    ("budget bar", re.compile(r"\[[#-]{20}\]\s+[0-9]+%")),
)


def leak_scan(text: str) -> tuple[str, ...]:
    """Names of the state-leaking patterns found in ``text`` (empty if clean).

    The paper's check that "no residual token, budget, or usage strings
    remain" in a cleaned snapshot.

    Parameters
    ----------
    text : str
        A cleaned snapshot's text.

    Returns
    -------
    tuple of str
    """
    if not isinstance(text, str):
        raise WorkspaceArgumentError("text", text, "must be a string")
    return tuple(name for name, pat in _LEAKS if pat.search(text))


# ----------------------------------------------------------------- records


@dataclass(frozen=True, slots=True)
class SnapshotBlock:
    """One message of the cleaned snapshot (one block).

    Attributes
    ----------
    id : str
        The workspace block ID (``B7``), used in questions and answers.
    type : str
        Block type (system, user_message, tool_call, ...).
    message : dict
        The block's OpenAI message as it is counted.
    text : str
        How the block reads in the probe transcript (without its label).
    tokens : int
        Ground truth: the block's message tokens under the harness tokenizer,
        counted exactly as the engine's ledger counts them.
    age : int
        Root-turn distance from the snapshot moment (0 newest).
    parent : str
        The call a tool result answers, or ``"-"``.
    status : str
        ``visible`` or ``pinned``.
    label : str
        Header shown above the block in the transcript (type, and the
        function a tool result answers).
    """

    id: str
    type: str
    message: dict[str, Any]
    text: str
    tokens: int
    age: int
    parent: str
    status: str
    label: str = ""


@dataclass(frozen=True, slots=True)
class PairQuestion:
    """One pairwise question: which of ``first`` / ``second`` has more tokens.

    Attributes
    ----------
    id : str
        The question's ID (``P1``, ``P2``, ...).
    first, second : str
        The two blocks asked about, in the order the question names them.
    larger : str
        The one with more tokens (the correct answer).
    ratio : float
        Larger over smaller token count (at least 1; how easy the question is).
    """

    id: str
    first: str
    second: str
    larger: str
    ratio: float


@dataclass(frozen=True, slots=True)
class ProbeKit:
    """Everything needed to run the diagnostic on one snapshot.

    Attributes
    ----------
    snapshot_id : str
        Name used to match answers to this kit.
    anchor : str
        ``first-archive``, ``end`` or ``item <i>``.
    anchor_index : int
        Trace items before this index form the snapshot.
    tokenizer : str
    budget : int
        The workspace budget B (printed in the +dash ledger).
    blocks : tuple of SnapshotBlock
        The cleaned, capped snapshot in order.
    removed : dict
        What cleaning removed: ``protocol_header``, ``rejection_notices``,
        ``placeholders``, ``context_tool_answers``, ``dashboards`` (counts)
        and ``cap`` (trailing blocks dropped to fit ``max_tokens``).
    total_tokens : int
        Ground truth for the total-size question: sum of block tokens.
    sampled_blocks : tuple of str
        Block IDs asked in the block-size question.
    pairs : tuple of PairQuestion
        The hard pairwise subset (distinct sizes within ``max_ratio``).
    eligible_pairs : int
        How many block pairs qualified before sampling.
    transcript : str
        The cleaned snapshot as the models read it.
    ledger : str
        The factual ledger prepended in the +dash condition.
    leaks : tuple of str
        :func:`leak_scan` of the transcript; empty for a valid kit.
    seed_entropy : int or list of int or None
        Entropy of the seed that sampled blocks and pairs.
    """

    snapshot_id: str
    anchor: str
    anchor_index: int
    tokenizer: str
    budget: int
    blocks: tuple[SnapshotBlock, ...]
    removed: dict[str, int]
    total_tokens: int
    sampled_blocks: tuple[str, ...]
    pairs: tuple[PairQuestion, ...]
    eligible_pairs: int
    transcript: str
    ledger: str
    leaks: tuple[str, ...]
    seed_entropy: int | list[int] | None

    def block_tokens(self) -> dict[str, int]:
        """Ground-truth tokens of every snapshot block by ID.

        Returns
        -------
        dict of str to int
            Block ID -> its token count under the kit's tokenizer.
        """
        return {b.id: b.tokens for b in self.blocks}

    def prompt(self, question: str, condition: str) -> str:
        """The request text for one question in one condition.

        Each question is its own request so the measurements stay independent
        (Appendix "Proprioceptive-Blindness Diagnostic").

        Parameters
        ----------
        question : str
            One of :data:`PROBE_QUESTIONS`: ``"total"``, ``"blocks"`` (the sampled
            blocks) or ``"pairwise"`` (which block of each pair is larger).
        condition : str
            One of :data:`PROBE_CONDITIONS`: ``"-dash"`` (the transcript alone) or
            ``"+dash"`` (the ledger first).

        Returns
        -------
        str
            The prompt: the ledger if ``+dash``, the transcript, then the
            question asking for a JSON answer.

        Raises
        ------
        WorkspaceArgumentError
            If ``question`` or ``condition`` is not one of the above.
        """
        if question not in PROBE_QUESTIONS:
            raise WorkspaceArgumentError(
                "question", question, f"must be one of {', '.join(PROBE_QUESTIONS)}"
            )
        if condition not in PROBE_CONDITIONS:
            raise WorkspaceArgumentError(
                "condition", condition, f"must be one of {', '.join(PROBE_CONDITIONS)}"
            )
        parts = []
        if condition == "+dash":
            parts.append(self.ledger)
        parts.append("<transcript>\n" + self.transcript + "\n</transcript>")
        tok = f"{self.tokenizer} tokens"
        if question == "total":
            parts.append(
                f"Estimate the total size of the transcript above in {tok}: all of its "
                'blocks together, nothing else. Answer with JSON only: {"total": <integer>}'
            )
        elif question == "blocks":
            ids = ", ".join(self.sampled_blocks)
            example = ", ".join(f'"{b}": <integer>' for b in self.sampled_blocks)
            parts.append(
                f"Estimate the size in {tok} of each of these blocks of the transcript "
                f'above: {ids}. Answer with JSON only: {{"blocks": {{{example}}}}}'
            )
        else:
            lines = [f"{p.id}: {p.first} or {p.second}" for p in self.pairs]
            example = ", ".join(f'"{p.id}": "<block id>"' for p in self.pairs)
            parts.append(
                f"For each pair of blocks of the transcript above, which block has more "
                f"{tok}?\n" + "\n".join(lines) + f"\nAnswer with JSON only: "
                f'{{"pairs": {{{example}}}}}'
            )
        return "\n\n".join(parts)

    def prompts(self) -> dict[str, dict[str, str]]:
        """Every prompt: ``{condition: {question: text}}``.

        Returns
        -------
        dict
            :meth:`prompt` for every condition and question.
        """
        return {c: {q: self.prompt(q, c) for q in PROBE_QUESTIONS} for c in PROBE_CONDITIONS}

    def to_plain(self, *, with_prompts: bool = False) -> dict[str, Any]:
        """Plain data of the kit: the snapshot's identity, budget, ground truth
        (every block's tokens, the sampled blocks', the pairs) and the leak scan.

        Parameters
        ----------
        with_prompts : bool
            Also include :meth:`prompts` under ``prompts``.

        Returns
        -------
        dict
            The kit as JSON data (the block count, not the blocks' text).
        """
        out: dict[str, Any] = {
            "snapshot_id": self.snapshot_id,
            "anchor": self.anchor,
            "anchor_index": self.anchor_index,
            "tokenizer": self.tokenizer,
            "budget": self.budget,
            "blocks": len(self.blocks),
            "removed": dict(self.removed),
            "total_tokens": self.total_tokens,
            "block_tokens": self.block_tokens(),
            "sampled_blocks": {b: self.block_tokens()[b] for b in self.sampled_blocks},
            "pairs": [
                {
                    "id": p.id,
                    "first": p.first,
                    "second": p.second,
                    "larger": p.larger,
                    "ratio": p.ratio,
                }
                for p in self.pairs
            ],
            "eligible_pairs": self.eligible_pairs,
            "leaks": list(self.leaks),
            "seed_entropy": self.seed_entropy,
        }
        if with_prompts:
            out["prompts"] = self.prompts()
        return out


@dataclass(frozen=True, slots=True)
class ProbeScore:
    """Scores of one (model, condition), over every snapshot answered.

    Attributes
    ----------
    model, condition : str
    total_error : float
        Median relative error ``|est - true|`` / true of the total-size answers
        (NaN if none was valid).
    block_error : float
        Median relative error over every valid block-size answer.
    pairwise_accuracy : float
        Fraction of valid pairwise answers naming the larger block.
    total_n, block_n, pairwise_n : int
        Valid answers behind each figure.
    invalid : int
        Answers given but unusable (not a number, unknown block or pair...).
    missing : int
        Questions asked but not answered.
    """

    model: str
    condition: str
    total_error: float
    block_error: float
    pairwise_accuracy: float
    total_n: int
    block_n: int
    pairwise_n: int
    invalid: int
    missing: int

    def to_plain(self) -> dict[str, Any]:
        """Plain data of the scores, one key per field; a non-finite error or
        accuracy (no answer scored) becomes None.

        Returns
        -------
        dict
            The scores as JSON data.
        """
        def num(x: float) -> float | None:
            return x if math.isfinite(x) else None

        return {
            "model": self.model,
            "condition": self.condition,
            "total_error": num(self.total_error),
            "block_error": num(self.block_error),
            "pairwise_accuracy": num(self.pairwise_accuracy),
            "total_n": self.total_n,
            "block_n": self.block_n,
            "pairwise_n": self.pairwise_n,
            "invalid": self.invalid,
            "missing": self.missing,
        }


@dataclass(frozen=True, slots=True)
class ProbeReport:
    """Scores per (model, condition), in the order first seen in the answers,
    plus the problems found in individual answers.

    Attributes
    ----------
    scores : tuple of ProbeScore
        One score per (model, condition).
    problems : tuple of str
        Problems found in individual answers (unparsable, unknown snapshot, ...).
    """

    scores: tuple[ProbeScore, ...]
    problems: tuple[str, ...] = field(default=())

    def score(self, model: str, condition: str) -> ProbeScore:
        """The score of one model under one condition.

        Parameters
        ----------
        model : str
            The model's name, as in the answers.
        condition : str
            One of :data:`PROBE_CONDITIONS`.

        Returns
        -------
        ProbeScore
            Its score.

        Raises
        ------
        WorkspaceArgumentError
            No answers of that model under that condition.
        """
        for s in self.scores:
            if s.model == model and s.condition == condition:
                return s
        known = [f"{s.model}/{s.condition}" for s in self.scores]
        raise WorkspaceArgumentError(
            "model/condition", f"{model}/{condition}", f"must be one of {', '.join(known)}"
        )

    def to_plain(self) -> dict[str, Any]:
        """Plain data of the report: every score's :meth:`ProbeScore.to_plain`
        and the problems found while scoring.

        Returns
        -------
        dict
            ``{"scores": [...], "problems": [...]}``.
        """
        return {
            "scores": [s.to_plain() for s in self.scores],
            "problems": list(self.problems),
        }


# ----------------------------------------------------------------- building


def build_probe_kit(
    trace: str | os.PathLike[str] | Sequence[Any],
    *,
    budget: int,
    tokenizer: str | Tokenizer = "cl100k_base",
    anchor: str | int = "first-archive",
    n_blocks: int = 4,
    n_pairs: int = 8,
    max_ratio: float = 2.0,
    max_tokens: int = SNAPSHOT_TOKEN_CAP,
    snapshot_id: str | None = None,
    rng: Any = None,
    store: PayloadStore | None = None,
    **workspace_kwargs: Any,
) -> ProbeKit:
    """Build the probe kit for one trace.

    Parameters
    ----------
    trace : path or list
        A trace as ``vista-lab workspace replay`` reads it.
    budget : int
        Budget of the replaying workspace (placeholders and rejections depend on it).
    tokenizer : str or Tokenizer
        The harness tokenizer; ground truth is counted with it.
    anchor : ``"first-archive"``, ``"end"`` or int
        Snapshot moment: just before the first archive call (a call to
        ``context_workspace_archive`` or an ``archive`` action item), after
        the whole trace, or before trace item ``anchor``.
    n_blocks : int
        Blocks sampled for the block-size question (paper: 4).
    n_pairs : int
        Pairs sampled from the hard subset.
    max_ratio : float
        Hard subset: distinct sizes with larger/smaller <= ``max_ratio`` (paper: 2).
    max_tokens : int
        Cap on the snapshot, met by dropping trailing blocks (paper: 100K).
    snapshot_id : str, optional
        Default: the trace file's stem, or ``"snapshot"``.
    rng : None, int, SeedSequence or Generator
        Samples blocks and pairs (and the order each pair is shown in).
    store : PayloadStore, optional
        Where the replay's archived payloads go (default in memory).
    **workspace_kwargs
        Passed to the replaying :class:`Workspace`.

    Returns
    -------
    ProbeKit
        The snapshot in both conditions, the questions and their ground truth.

    Raises
    ------
    WorkspaceArgumentError
        Bad parameters, no archive call for ``anchor="first-archive"``, or an
        empty snapshot.
    TraceError
        Malformed trace.
    """
    from ._trace import load_trace, replay_trace

    cfg = _kit_iv(anchor, n_blocks, n_pairs, max_ratio, max_tokens, snapshot_id)
    items = load_trace(trace)
    cut, anchor_name = _anchor_index(items, cfg["anchor"])
    if snapshot_id is None:
        snapshot_id = Path(trace).stem if isinstance(trace, (str, os.PathLike)) else "snapshot"
    rep = replay_trace(
        items[:cut], budget=budget, tokenizer=tokenizer, store=store, **workspace_kwargs
    )
    ws = rep.workspace
    removed = {
        "protocol_header": 1 if ws.protocol else 0,
        "rejection_notices": 0,
        "placeholders": 0,
        "context_tool_answers": 0,
        "dashboards": 0,
        "cap": 0,
    }
    blocks = _clean_blocks(ws, removed)
    kept: list[SnapshotBlock] = []
    used = 0
    for b in blocks:
        if used + b.tokens > cfg["max_tokens"]:
            removed["cap"] = len(blocks) - len(kept)
            break
        kept.append(b)
        used += b.tokens
    if not kept:
        raise WorkspaceArgumentError(
            "anchor",
            anchor_name,
            "leaves an empty snapshot after cleaning and capping",
            "pick a later anchor or raise max_tokens",
        )

    gen, entropy = _rng_iv(rng)
    k = min(cfg["n_blocks"], len(kept))
    picked = np.sort(gen.choice(len(kept), size=k, replace=False))
    sampled = tuple(kept[int(i)].id for i in picked)
    eligible = [
        (i, j)
        for i in range(len(kept))
        for j in range(i + 1, len(kept))
        if _hard_pair(kept[i].tokens, kept[j].tokens, cfg["max_ratio"])
    ]
    m = min(cfg["n_pairs"], len(eligible))
    chosen = sorted(int(x) for x in gen.choice(len(eligible), size=m, replace=False)) if m else []
    flips = gen.random(m) < 0.5
    pairs = []
    for n, (c, flip) in enumerate(zip(chosen, flips, strict=True), start=1):
        a, b = kept[eligible[c][0]], kept[eligible[c][1]]
        first, second = (b, a) if flip else (a, b)
        larger = a if a.tokens > b.tokens else b
        pairs.append(
            PairQuestion(
                f"P{n}",
                first.id,
                second.id,
                larger.id,
                max(a.tokens, b.tokens) / min(a.tokens, b.tokens),
            )
        )

    transcript = "\n\n".join(f"[{b.id} | {b.label}]\n{b.text}" for b in kept)
    tok = ws.tokenizer
    overhead = sum(b.tokens for b in kept if b.type == BlockType.SYSTEM.value)
    conversation = used - overhead
    renderer = DashboardRenderer(tok, DashboardConfig())
    ledger = renderer.ledger(
        [LedgerRow(b.id, b.tokens, b.age, b.type, 0, b.parent, b.status) for b in kept],
        [f"(transcript: {len(kept)} blocks, ~{used:,} tok)"],
        budget=ws.budget,
        overhead=overhead,
        conversation=conversation,
    ).text
    return ProbeKit(
        snapshot_id=str(snapshot_id),
        anchor=anchor_name,
        anchor_index=cut,
        tokenizer=tok.name,
        budget=ws.budget,
        blocks=tuple(kept),
        removed=removed,
        total_tokens=used,
        sampled_blocks=sampled,
        pairs=tuple(pairs),
        eligible_pairs=len(eligible),
        transcript=transcript,
        ledger=ledger,
        leaks=leak_scan(transcript),
        seed_entropy=entropy,
    )


def _hard_pair(a: int, b: int, max_ratio: float) -> bool:
    # Equal sizes have no correct answer; a zero-size block has no ratio.
    if a == b or min(a, b) <= 0:
        return False
    return max(a, b) / min(a, b) <= max_ratio


def _anchor_index(items: list[dict[str, Any]], anchor: str | int) -> tuple[int, str]:
    if anchor == "end":
        return len(items), "end"
    if isinstance(anchor, int):
        if not 0 <= anchor <= len(items):
            raise WorkspaceArgumentError(
                "anchor", anchor, f"must be a trace item index with 0 <= anchor <= {len(items)}"
            )
        return anchor, f"item {anchor}"
    for i, item in enumerate(items):
        if item.get("action") == "archive":
            return i, "first-archive"
        if item.get("role") == "assistant":
            for call in item.get("tool_calls") or ():
                fn = call.get("function") if isinstance(call, Mapping) else None
                if isinstance(fn, Mapping) and fn.get("name") == ARCHIVE_TOOL:
                    return i, "first-archive"
    raise WorkspaceArgumentError(
        "anchor",
        "first-archive",
        "needs a trace with an archive call (an 'archive' action or a "
        f"{ARCHIVE_TOOL} tool call); this trace has none",
        "pass anchor='end' (CLI: --anchor end) or an item index",
    )


def _clean_blocks(ws: Any, removed: dict[str, int]) -> list[SnapshotBlock]:
    """The blocks the model saw, minus every injected artifact."""
    tok: Tokenizer = ws.tokenizer
    context_calls: set[str] = set()
    out: list[SnapshotBlock] = []
    for b in ws.blocks:
        if b.type is BlockType.TOOL_CALL:
            context_calls.update(
                cid
                for cid, name in zip(b.call_ids, b.call_names, strict=True)
                if name in (*CONTEXT_TOOL_NAMES, READ_PATH_TOOL)
            )
        if b.status in (Status.ARCHIVED, Status.OFFLOADED, Status.DELETED):
            removed["placeholders"] += 1  # its handle / placeholder / tombstone
            continue
        if b.rejected or placeholder_kind(b.content or "") == "rejection":
            removed["rejection_notices"] += 1
            continue
        if b.type is BlockType.TOOL_RESULT and (
            b.tool_call_id in context_calls or b.name in CONTEXT_TOOL_NAMES
        ):
            # The executor's answers print paths and freed-token counts.
            removed["context_tool_answers"] += 1
            continue
        content = b.content or ""
        # The header mentions the dashboard tag itself: strip it before the other checks.
        header = PROTOCOL_TEXT in content or _BUDGET_NOTICE.search(content)
        if b.type is BlockType.SYSTEM and header:
            content = _BUDGET_NOTICE.sub("", content.replace(PROTOCOL_TEXT, "")).strip()
            removed["protocol_header"] += 1
            if not content:
                continue
        if placeholder_kind(content) is not None:
            removed["placeholders"] += 1
            continue
        if _DASHBOARD.search(content):
            removed["dashboards"] += 1
            continue
        out.append(_snapshot_block(b, content, ws.turn, tok))
    return out


def _snapshot_block(b: Block, content: str, turn: int, tok: Tokenizer) -> SnapshotBlock:
    if b.type is BlockType.TOOL_CALL:
        calls = [c.to_openai() for c in b.tool_calls or ()]
        msg: dict[str, Any] = {"role": "assistant", "content": b.content, "tool_calls": calls}
        lines = [b.content] if b.content else []
        lines += [f"call {c.name}({c.arguments})" for c in b.tool_calls or ()]
        text = "\n".join(lines)
    elif b.type is BlockType.TOOL_RESULT:
        msg = {"role": "tool", "tool_call_id": b.tool_call_id, "content": content}
        text = content
    else:
        msg = {"role": b.role, "content": content}
        text = content
    label = b.type.value
    if b.type is BlockType.TOOL_RESULT and b.name:
        label += f" of {b.name}"
    return SnapshotBlock(
        id=b.id,
        type=b.type.value,
        message=msg,
        text=text,
        tokens=message_tokens(msg, tok),
        age=turn - b.turn,
        parent=b.parent or "-",
        status=b.status.value,
        label=label,
    )
