"""Transcription check: the paper's numbers written as data (``data/*.toml``)
against the LaTeX source of the paper, when the user has it.

The paper's source is not shipped; pass its path (``vista-lab check-paper
--paper PATH``, ``vista-lab reproduce --paper PATH``, or ``VISTA_LAB_PAPER`` for
the tests).
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from vistalab._core import DomainError, read_bounded

from ._data import load_quotes, load_table, table_keys

__all__ = ["TranscriptionCheck", "check_transcription", "paper_path_iv", "paper_source_iv"]

#: Tables whose numbers are not printed in a LaTeX table (Section 3.7's ablation prose).
_NOT_TABULAR = frozenset({"ablation"})

# Values stated in words or derived in the sentence, not printed as digits.
_WORDED = frozenset({
    ("ama-transfer", "about_points"), ("ama-transfer", "runtime_fraction"),
    ("archive-runs-total", "runs"), ("proprio-dash", "backbones"),
    ("proprio-dash", "total_dash"), ("proprio-dash", "block_dash_lo"),
    ("remark-proprio", "with_ledger"), ("cross-backbone", "backbones"),
    ("overhead-sample", "runs"), ("budget-notation", "loca_budget_k"),
    ("budget-notation", "bcp_window_k"), ("budget-notation", "bcp_budget_k"),
    ("ablation-wording-variants", "within_points_max"),
    ("abstract-scales", "loca_tokens"), ("abstract-scales", "bcp_tokens"),
    ("abstract-scales", "gaia_tokens"), ("ablation-variants", "variants"),
    ("ablation-variants", "capability_removals"),
    ("ablation-variants", "interface_variants"),
})
#: Quotes whose numbers are spread over the whole paper, not near one line.
_WHOLE_PAPER = frozenset({"benchmark-sizes", "budget-notation"})


@dataclass(frozen=True)
class TranscriptionCheck:
    """One data file (table) or quote compared with the LaTeX source.

    Attributes
    ----------
    id : str
        ``transcription.table.<key>`` or ``transcription.quote.<id>``.
    where : str
        The place in the paper the data says it comes from.
    ok : bool
        Every number was found where the data says it is.
    detail : str
        What was compared, or the first numbers not found.
    """

    id: str
    where: str
    ok: bool
    detail: str


#: Largest file read as the paper (the real source is ~200 kB).
_PAPER_MAX_BYTES = 64 * 2**20
_PAPER_FIX = "pass the path of the VISTA paper's paper.tex (it is not shipped with vista-lab)"


def paper_path_iv(paper: str | Path, parameter: str = "--paper") -> Path:
    """The paper's LaTeX file, or a DomainError naming ``parameter`` and the fix.

    Checks the path only (a regular file); :func:`paper_source_iv` also checks
    that the file is the paper's LaTeX.
    """
    if not isinstance(paper, (str, Path)) or not str(paper).strip():
        raise DomainError(parameter, paper, "must be the path of the paper's LaTeX source file",
                          _PAPER_FIX)
    path = Path(paper)
    if not path.is_file():  # also refuses a FIFO or device without opening it
        raise DomainError(parameter, str(path), "must be the paper's LaTeX source file",
                          _PAPER_FIX)
    real = os.path.realpath(path)
    if any(real.startswith(root + os.sep) for root in ("/proc", "/sys", "/dev")):
        # /proc/kmsg is a "regular file" of size 0 that blocks on read
        raise DomainError(parameter, str(path), "must be the paper's LaTeX source file, not a "
                          "kernel pseudo file (/proc, /sys, /dev)", _PAPER_FIX)
    return path


def paper_source_iv(paper: str | Path, parameter: str = "--paper") -> Path:
    """:func:`paper_path_iv`, and the file must be the paper's LaTeX: UTF-8 text
    with ``\\begin{document}`` and at least one ``\\label`` of the paper's tables
    recorded in the shipped data.

    The door of ``check-paper --paper`` and ``reproduce --paper``: any other
    file would only make every transcription check fail (exit 1, a toolkit
    failure), when it is bad input (exit 2).
    """
    path = paper_path_iv(paper, parameter)
    if path.stat().st_size > _PAPER_MAX_BYTES:
        raise DomainError(parameter, str(path), "must be the paper's LaTeX source (this file "
                          f"is larger than {_PAPER_MAX_BYTES // 2**20} MiB)", _PAPER_FIX)
    try:
        text = read_bounded(parameter, path, max_bytes=_PAPER_MAX_BYTES).decode("utf-8")
    except UnicodeDecodeError:
        raise DomainError(parameter, str(path), "must be the paper's LaTeX source (this file "
                          "is not UTF-8 text)", _PAPER_FIX) from None
    if "\\begin{document}" not in text:
        raise DomainError(parameter, str(path), "must be the paper's LaTeX source (no "
                          "\\begin{document} in it)", _PAPER_FIX)
    labels = [f"\\label{{{load_table(key).label}}}" for key in table_keys()
              if key not in _NOT_TABULAR]
    if not any(label in text for label in labels):
        raise DomainError(parameter, str(path), "must be the VISTA paper's LaTeX source (none "
                          f"of its {len(labels)} table labels, e.g. {labels[0]}, is in it)",
                          _PAPER_FIX)
    return path


def _table_check(key: str, lines: list[str], data_dir: Path | None) -> TranscriptionCheck:
    t = load_table(key, data_dir=data_dir)
    where = f"{t.where} (\\label{{{t.label}}}, line {t.line})"
    if t.line > len(lines) or f"\\label{{{t.label}}}" not in lines[t.line - 1]:
        return TranscriptionCheck(f"transcription.table.{key}", where, False,
                                  f"\\label{{{t.label}}} is not on line {t.line}")
    region = "\n".join(lines[max(0, t.line - 90): t.line]).replace(",", "")
    missing, cells = [], 0
    for row in t:
        for col, places in t.extra.get("decimals", {}).items():
            value = row.get(col)
            if value is None:
                continue
            cells += 1
            text = f"{value:.{places}f}"
            if not re.search(rf"(?<![\d.]){re.escape(text)}(?![\d])", region):
                missing.append(f"{col}={text}")
    if missing:
        return TranscriptionCheck(f"transcription.table.{key}", where, False,
                                  f"{len(missing)} of {cells} cells not in the LaTeX table: "
                                  + ", ".join(missing[:5]))
    return TranscriptionCheck(f"transcription.table.{key}", where, True,
                              f"all {cells} numeric cells found in the LaTeX table")


def _quote_forms(value: object) -> set[str]:
    forms = {str(value)}
    if isinstance(value, int) and not isinstance(value, bool):
        forms |= {f"{value:,}", f"{value:,}".replace(",", "{,}")}
    if isinstance(value, float):
        forms |= {f"{value:.1f}", f"{value:.2f}", f"{value:.3f}"}
    return forms


def transcription_target_count(*, data_dir: str | Path | None = None) -> int:
    """How many transcription checks :func:`check_transcription` runs (one per table
    and per quote of the data files): what a run without the paper's LaTeX skips."""
    from ._run import data_dir_iv

    ddir = None if data_dir is None else data_dir_iv(data_dir)
    tables = [key for key in table_keys(data_dir=ddir) if key not in _NOT_TABULAR]
    return len(tables) + len(load_quotes(data_dir=ddir))


def check_transcription(paper: str | Path, *, data_dir: str | Path | None = None
                        ) -> tuple[TranscriptionCheck, ...]:
    """Compare every table and quote of the paper's data with the LaTeX source.

    A table passes when its ``\\label`` is on the recorded line and every numeric cell,
    printed with its column's decimals, occurs in the LaTeX above the label (90 lines).
    A quote passes when each of its numbers occurs within 20 lines of the recorded line
    (numbers written as words in the paper are skipped, listed in this module).

    Parameters
    ----------
    paper : path
        The paper's LaTeX source (``paper.tex``).
    data_dir : path, optional
        Another copy of the data files (default: the shipped ones).

    Returns
    -------
    tuple of TranscriptionCheck
        One per table and per quote, in data-file order.

    Raises
    ------
    DomainError
        If ``paper`` is not a file.
    """
    from ._run import data_dir_iv

    text = read_bounded("paper", paper_path_iv(paper, "paper"),
                        max_bytes=_PAPER_MAX_BYTES).decode("utf-8", "replace")
    lines = text.splitlines()
    ddir = None if data_dir is None else data_dir_iv(data_dir)
    out = [_table_check(key, lines, ddir) for key in table_keys(data_dir=ddir)
           if key not in _NOT_TABULAR]
    for q in load_quotes(data_dir=ddir).values():
        region = "\n".join(lines[max(0, q.line - 21): q.line + 20])
        where = text if q.id in _WHOLE_PAPER else region
        missing = [f"{name}={value}" for name, value in q.values.items()
                   if (q.id, name) not in _WORDED and not (isinstance(value, str) and not value)
                   and not any(f in where for f in _quote_forms(value))]
        out.append(TranscriptionCheck(
            f"transcription.quote.{q.id}", f"line {q.line}", not missing,
            f"not near line {q.line}: {', '.join(missing[:5])}" if missing
            else f"{len(q.values)} numbers found near line {q.line}"))
    return tuple(out)


def paper_digest(paper: str | Path) -> str:
    """sha256 of the paper file (the cache key of the reproduce stage)."""
    return hashlib.sha256(Path(paper).read_bytes()).hexdigest()
