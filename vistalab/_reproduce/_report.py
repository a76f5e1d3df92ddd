"""``report.md``: the check table and every figure with a two-line caption."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._rows import FINDING_SOURCES, SOURCES, CheckRow

__all__ = ["FigureEntry", "build_report", "md_cell"]

_STATUS_TEXT = {"pass": "pass", "fail": "**FAIL**", "not_checkable": "not checkable"}
# Long evidence is cut in the report; results/checks.csv keeps it whole.
_NUMBERS_LIMIT = 320
_SOURCE_TEXT = {
    "proof": "proof step or check (theory.certify_all; its generality says which)",
    "paper": "paper claim (paper_checks)",
    "paper-data": "paper's own numbers (paper_checks)",
    "simulation": "simulation data (figures)",
    "engine": "engine-backed (sims engine mode)",
    "beyond": "beyond the paper (issue 17)",
    "pipeline": "pipeline stage",
}


@dataclass(frozen=True)
class FigureEntry:
    """A figure as the report shows it.

    Attributes
    ----------
    name : str
        Figure script name.
    title : str
        One-line title.
    caption : tuple of two str, or None
        What the figure shows (line 1) and how to read it / the key numbers (line 2).
    png : str or None
        Path relative to the report, None when the figure could not be made.
    """

    name: str
    title: str
    caption: tuple[str, str] | None
    png: str | None


def md_cell(text: Any, limit: int | None = None) -> str:
    """Make ``text`` safe inside one Markdown table cell (one line, ``|`` escaped),
    shortened to ``limit`` characters with an ellipsis."""
    s = " ".join(str(text).split())
    if limit is not None and len(s) > limit:
        s = s[: limit - 1].rstrip() + "…"
    return s.replace("\\", "\\\\").replace("|", "\\|") or " "


def _figure_number(name: str, fallback: int) -> str:
    head = name.split("_", 1)[0]
    return head[3:] if head.startswith("fig") and head[3:].isdigit() else str(fallback)


def build_report(
    *,
    checks: Sequence[CheckRow],
    figures: Sequence[FigureEntry],
    stages: Sequence[Any],
    counts: dict[str, int],
    quick: bool,
    seed: int,
    fingerprint: str,
    commit: str | None,
    version: str,
    beyond: Sequence[Mapping[str, Any]] | None = None,
    study: Mapping[str, Any] | None | bool = False,
) -> str:
    """The Markdown text of the report (``beyond``: rows of the "Beyond the paper"
    section, from :func:`._beyond.beyond_rows`; ``study``: the conformance study's
    record from :func:`._study.study_stage`, None when the peers are not
    installed, False for no section)."""
    lines: list[str] = []
    findings = sum(1 for c in checks if c.status == "fail" and c.source in FINDING_SOURCES)
    failed = counts.get("fail", 0) - findings
    verdict = "some checks FAILED" if failed else "no check of the toolkit failed"
    if findings:
        verdict += (f"; {findings} of the failures are findings about the paper's own "
                    "reported numbers (its tables and text disagree), listed below with "
                    "the discrepancy; they fail `reproduce` only with `--strict`")
    lines += [
        "# vista-lab reproduce report",
        "",
        f"vista-lab {version}, git commit `{commit or 'unknown'}`, code fingerprint "
        f"`{fingerprint[:12]}`, precision `{'quick' if quick else 'default'}`, seed `{seed}`.",
        "",
        f"**{counts.get('pass', 0)} pass, {counts.get('fail', 0)} fail, "
        f"{counts.get('not_checkable', 0)} not checkable** ({verdict}).",
        "",
        "## Checks",
        "",
        "Full numbers of every check: [results/checks.csv](results/checks.csv).",
        "",
        "| # | source | check | claim | status | numbers | paper |",
        "| ---: | --- | --- | --- | --- | --- | --- |",
    ]
    order = {s: i for i, s in enumerate(SOURCES)}
    ordered = sorted(enumerate(checks), key=lambda ic: (order.get(ic[1].source, 99), ic[0]))
    for i, (_, c) in enumerate(ordered, start=1):
        lines.append(
            f"| {i} | {md_cell(_SOURCE_TEXT.get(c.source, c.source))} | `{md_cell(c.id)}` | "
            f"{md_cell(c.claim)} | {_STATUS_TEXT.get(c.status, c.status)} | "
            f"{md_cell(c.numbers, _NUMBERS_LIMIT)} | {md_cell(c.where)} |"
        )
    lines.append("")
    if beyond:
        from ._beyond import beyond_section

        lines += beyond_section(beyond, checks, md_cell)
    if study is not False:
        from ._study import study_section

        lines += study_section(study if isinstance(study, Mapping) else None, md_cell)
    lines += ["## Figures", ""]
    for k, f in enumerate(figures, start=1):
        lines += [f"### Figure {_figure_number(f.name, k)}. {f.title}", ""]
        if f.png is None or f.caption is None:
            lines += [f"*Not produced in this run (see the `{f.name}` stage below).*", ""]
            continue
        pdf = f.png[: -len(".png")] + ".pdf"
        lines += [
            f"![{f.title}]({f.png})",
            "",
            f"{f.caption[0]}  ",
            f"{f.caption[1]}",
            "",
            f"[PDF]({pdf}) · data: [results/{f.name}.csv](results/{f.name}.csv)",
            "",
        ]
    lines += [
        "## Stages",
        "",
        "| stage | status | wall s | CPU s | note |",
        "| --- | --- | ---: | ---: | --- |",
    ]
    for s in stages:
        lines.append(
            f"| `{md_cell(s.name)}` | {s.status} | {s.seconds:.2f} | "
            f"{getattr(s, 'cpu_seconds', 0.0):.2f} | {md_cell(s.note, 200)} |"
        )
    lines += [
        "",
        "Cached stages are reused when their parameters and the code fingerprint are "
        "unchanged; `vista-lab reproduce --force` recomputes everything.",
        "",
    ]
    return "\n".join(lines)
