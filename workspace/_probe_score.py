"""Scoring a proprioception probe: read the model's answers and compare them with
the kit's ground truth (appendix "Proprioceptive-Blindness Diagnostic")."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from vistalab._core import DomainError, check_depth, read_bounded
from vistalab._core._limits import json_loads

from ._errors import WorkspaceArgumentError
from ._probe import PROBE_CONDITIONS, ProbeKit, ProbeReport, ProbeScore

__all__ = ["load_probe_answers", "score_probe_answers"]


# ----------------------------------------------------------------- scoring


def load_probe_answers(source: str | os.PathLike[str] | Any) -> list[dict[str, Any]]:
    """Answer records from a JSON file (or already-parsed data).

    Accepted shapes: one record, a list of records, or ``{"answers": [...]}``.
    A record has ``condition`` (``-dash``/``+dash``), optionally ``model``
    and ``snapshot``, and any of ``total`` (number), ``blocks``
    (``{block_id: number}``) and ``pairs`` (``{pair_id: block_id}``); the
    three questions may come in separate records.

    Parameters
    ----------
    source : str, PathLike or data
        A JSON file, or the parsed data.

    Returns
    -------
    list of dict
        The answer records.
    """
    src = ""
    data = source
    if isinstance(source, (str, os.PathLike)):
        src = str(source)
        try:  # non-blocking and size-bounded: a FIFO or /dev/zero is refused, not read
            raw = read_bounded("answers", Path(source), what="JSON file")
            check_depth("answers", raw)  # a DomainError: re-raised below naming the file
            data = json_loads(raw.decode("utf-8"))
        except DomainError as exc:
            if isinstance(exc, WorkspaceArgumentError):
                raise
            raise WorkspaceArgumentError("answers", src, exc.rule, exc.fix) from None
        except OSError as exc:
            raise WorkspaceArgumentError(
                "answers", src, "must be a readable JSON file", f"({exc.strerror})"
            ) from None
        except ValueError as exc:
            raise WorkspaceArgumentError("answers", src, "must be valid JSON", f"({exc})") from None
    if isinstance(data, Mapping) and "answers" in data:
        data = data["answers"]
    if isinstance(data, Mapping):
        data = [data]
    if not isinstance(data, list):
        raise WorkspaceArgumentError(
            "answers", src or data, "must be a record, a list of records or {'answers': [...]}"
        )
    for i, rec in enumerate(data):
        if not isinstance(rec, Mapping):
            raise WorkspaceArgumentError("answers", rec, f"record {i} must be a JSON object")
        if rec.get("condition") not in PROBE_CONDITIONS:
            raise WorkspaceArgumentError(
                "condition",
                rec.get("condition"),
                f"of answer record {i} must be one of {', '.join(PROBE_CONDITIONS)}",
                "label each record with the condition it was asked in",
            )
    return [dict(r) for r in data]


def score_probe_answers(
    kits: ProbeKit | Sequence[ProbeKit],
    answers: str | os.PathLike[str] | Iterable[Mapping[str, Any]],
) -> ProbeReport:
    """Score model answers against the kits' ground truth.

    Size answers score as relative error ``|estimate - truth| / truth``,
    summarised by the median (total size: one value per snapshot; block
    size: one per sampled block). Pairwise answers score as accuracy against
    the larger block. Unusable answers are counted as ``invalid`` and left out
    of the figures, unanswered questions as ``missing``.

    Parameters
    ----------
    kits : ProbeKit or sequence of ProbeKit
        The kits the answers refer to (by snapshot id).
    answers : str, PathLike or iterable of mapping
        The answers (see :func:`load_probe_answers`).

    Returns
    -------
    ProbeReport
        Scores per model and condition.
    """
    kit_list = [kits] if isinstance(kits, ProbeKit) else list(kits)
    if not kit_list or not all(isinstance(k, ProbeKit) for k in kit_list):
        raise WorkspaceArgumentError("kits", kits, "must be one ProbeKit or a list of them")
    by_id = {k.snapshot_id: k for k in kit_list}
    if len(by_id) != len(kit_list):
        raise WorkspaceArgumentError(
            "kits", sorted(k.snapshot_id for k in kit_list), "must have distinct snapshot_id"
        )
    records = (
        load_probe_answers(answers)
        if isinstance(answers, (str, os.PathLike))
        else load_probe_answers(list(answers))
    )
    problems: list[str] = []
    # (model, condition, snapshot) -> merged answers
    merged: dict[tuple[str, str, str], dict[str, Any]] = {}
    for i, rec in enumerate(records):
        model = str(rec.get("model", "model"))
        snap = rec.get("snapshot")
        if snap is None:
            if len(kit_list) != 1:
                problems.append(f"record {i}: no 'snapshot' and several kits; skipped")
                continue
            snap = kit_list[0].snapshot_id
        if snap not in by_id:
            problems.append(f"record {i}: unknown snapshot {snap!r}; skipped")
            continue
        slot = merged.setdefault((model, str(rec["condition"]), str(snap)), {})
        for q in ("total", "blocks", "pairs"):
            if q in rec:
                if q in slot:
                    problems.append(f"record {i}: repeats {q!r} for {model}/{snap}; first kept")
                    continue
                slot[q] = rec[q]

    order: list[tuple[str, str]] = []
    acc: dict[tuple[str, str], dict[str, Any]] = {}
    for (model, cond, snap), ans in merged.items():
        key = (model, cond)
        if key not in acc:
            order.append(key)
            acc[key] = {"total": [], "block": [], "pair": [], "invalid": 0, "missing": 0}
        a = acc[key]
        kit = by_id[snap]
        where = f"{model}/{cond}/{snap}"
        truth = kit.block_tokens()
        # total size
        if "total" not in ans:
            a["missing"] += 1
        else:
            est = _number(ans["total"])
            if est is None:
                a["invalid"] += 1
                problems.append(f"{where}: total {ans['total']!r} is not a non-negative number")
            else:
                a["total"].append(abs(est - kit.total_tokens) / kit.total_tokens)
        # block sizes
        got = ans.get("blocks", {})
        if not isinstance(got, Mapping):
            a["invalid"] += len(kit.sampled_blocks)
            problems.append(f"{where}: blocks must be an object {{block_id: tokens}}")
            got = {}
        for bid in kit.sampled_blocks:
            if bid not in got:
                a["missing"] += 1
                continue
            est = _number(got[bid])
            if est is None:
                a["invalid"] += 1
                problems.append(f"{where}: block {bid} answer {got[bid]!r} is not a number")
            else:
                a["block"].append(abs(est - truth[bid]) / truth[bid])
        extra = [b for b in got if b not in kit.sampled_blocks]
        if extra:
            a["invalid"] += len(extra)
            problems.append(f"{where}: blocks not asked: {', '.join(map(str, extra))}")
        # pairwise
        picks = ans.get("pairs", {})
        if not isinstance(picks, Mapping):
            a["invalid"] += len(kit.pairs)
            problems.append(f"{where}: pairs must be an object {{pair_id: block_id}}")
            picks = {}
        for p in kit.pairs:
            if p.id not in picks:
                a["missing"] += 1
                continue
            choice = str(picks[p.id]).strip()
            if choice not in (p.first, p.second):
                a["invalid"] += 1
                problems.append(f"{where}: {p.id} answer {picks[p.id]!r} is neither block")
                continue
            a["pair"].append(choice == p.larger)
        extra = [k for k in picks if k not in {p.id for p in kit.pairs}]
        if extra:
            a["invalid"] += len(extra)
            problems.append(f"{where}: pairs not asked: {', '.join(map(str, extra))}")

    scores = []
    for model, cond in order:
        a = acc[(model, cond)]
        scores.append(
            ProbeScore(
                model=model,
                condition=cond,
                total_error=float(np.median(a["total"])) if a["total"] else math.nan,
                block_error=float(np.median(a["block"])) if a["block"] else math.nan,
                pairwise_accuracy=float(np.mean(a["pair"])) if a["pair"] else math.nan,
                total_n=len(a["total"]),
                block_n=len(a["block"]),
                pairwise_n=len(a["pair"]),
                invalid=a["invalid"],
                missing=a["missing"],
            )
        )
    return ProbeReport(tuple(scores), tuple(problems))


def _number(x: Any) -> float | None:
    if isinstance(x, bool):
        return None
    if isinstance(x, str):
        try:
            x = float(x.replace(",", "").strip())
        except ValueError:
            return None
    if not isinstance(x, (int, float)):
        return None
    v = float(x)
    return v if math.isfinite(v) and v >= 0 else None
