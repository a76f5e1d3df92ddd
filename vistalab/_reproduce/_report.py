"""``report.md`` and ``report.html``: the counts and findings first, then one check
table per area, the figures with two-line captions, and the stages."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._rows import FINDING_SOURCES, STRENGTHS, CheckRow, strength_of

__all__ = ["FigureEntry", "Skipped", "Summary", "build_report", "md_cell", "report_html",
           "summarize"]

_STATUS_TEXT = {"pass": "pass", "fail": "**FAIL**", "not_checkable": "not checkable"}
# Long evidence is cut in the report; results/checks.csv keeps it whole.
_NUMBERS_LIMIT = 320


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


@dataclass(frozen=True)
class Skipped:
    """Checks a run did not do, announced on the report's first screen.

    Attributes
    ----------
    what : str
        Which checks ("paper transcription").
    count : int
        How many.
    why : str
        Why they were skipped.
    fix : str
        How to run them.
    """

    what: str
    count: int
    why: str
    fix: str


#: One section per area, in report order: (title, sources, what its rows are).
_AREAS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("Formal proofs (Coq)", ("formal",),
     "The theorems of theory/coq/Statements.v and of the engine model, compiled by coqc and "
     "checked to rest only on the standard axioms: proved for every parameter."),
    ("Proof steps and chains", ("proof",),
     "Named proof steps of Appendices A-D (theory.certify_all) and, per main result, "
     "whether its chain of steps is closed. Each row says how general its method is."),
    ("The paper's theory claims", ("paper",),
     "Quantitative claims of the paper's Theory section, checked against the bounds."),
    ("The paper's own numbers", ("paper-data",),
     "Arithmetic on the paper's tables and text; a failure is a finding about the paper."),
    ("Transcription of the paper", ("transcription",),
     "The data files' tables and quotes against the paper's LaTeX (--paper)."),
    ("Simulations", ("simulation",),
     "Each figure's Monte Carlo data against the exact values and the bounds."),
    ("Engine-backed checks", ("engine",),
     "The theorems measured on the real workspace engine (sims engine mode)."),
    ("Beyond the paper", ("beyond",),
     "Checks of the sharper bounds (theory/BEYOND.md)."),
    ("Pipeline", ("pipeline",), "Stages that could not run."),
)


def _check_table(rows: Sequence[CheckRow]) -> list[str]:
    lines = ["| check | claim | status | strength | numbers | paper |",
             "| --- | --- | --- | --- | --- | --- |"]
    for c in rows:
        lines.append(
            f"| `{md_cell(c.id)}` | {md_cell(c.claim)} | {_STATUS_TEXT.get(c.status, c.status)} "
            f"| {strength_of(c) or '-'} | {md_cell(c.numbers, _NUMBERS_LIMIT)} "
            f"| {md_cell(c.where)} |")
    return lines


@dataclass(frozen=True)
class Summary:
    """The counts the report's first lines and the console's summary both state.

    Attributes
    ----------
    proved, checked, sampled : int
        Passed checks by strength: for every parameter, on a stated finite domain
        (or by exact arithmetic on the paper's numbers), on random examples.
    failed : int
        Failed checks of the toolkit (findings about the paper excluded).
    findings : int
        Failed claims about the paper's own numbers (its tables and text disagree).
    not_checkable : int
        Claims the paper gives too little to decide.
    skipped : int
        Checks not run in this run (:class:`Skipped`).
    formal : str
        The Coq sentence (:meth:`._formal.FormalSummary.line`), ``""`` when the Coq
        stage did not run.
    """

    proved: int
    checked: int
    sampled: int
    failed: int
    findings: int
    not_checkable: int
    skipped: int
    formal: str = ""

    @property
    def verdict(self) -> str:
        """The first line's verdict: a failure is named only when a check failed."""
        if self.failed:
            return f"some checks of the toolkit FAILED ({self.failed}, listed below)"
        return "no check of the toolkit failed"

    def headline(self) -> str:
        """One line: the verdict, then the counts in the report's order.

        Returns
        -------
        str
            E.g. ``no check of the toolkit failed: 60 proved, 120 checked, 30 sampled;
            4 findings about the paper; 2 not checkable; 12 skipped``.
        """
        text = (f"{self.verdict}: {self.proved} proved, {self.checked} checked, "
                f"{self.sampled} sampled")
        if self.failed:
            text += f", {self.failed} failed"
        text += f"; {self.findings} finding(s) about the paper"
        text += f"; {self.not_checkable} not checkable; {self.skipped} skipped"
        return text


def summarize(checks: Sequence[CheckRow], skipped: Sequence[Skipped] = (),
              formal: Any = None) -> Summary:
    """The counts of a run's check rows (the report and the console state these);
    ``formal`` is the Coq stage's :class:`._formal.FormalSummary` (its rows skipped
    without Coq count as skipped).

    Returns
    -------
    Summary
        Passed checks by strength, failures, findings, not checkable, skipped.
    """
    passed = [c for c in checks if c.status == "pass"]
    by_strength = {s: sum(1 for c in passed if strength_of(c) == s) for s in STRENGTHS}
    return Summary(
        proved=by_strength["proved"], checked=by_strength["checked"],
        sampled=by_strength["sampled"],
        failed=sum(1 for c in checks if c.status == "fail" and c.source not in FINDING_SOURCES),
        findings=sum(1 for c in checks if c.status == "fail" and c.source in FINDING_SOURCES),
        not_checkable=sum(1 for c in checks if c.status == "not_checkable"),
        skipped=sum(s.count for s in skipped)
        + (formal.total if formal is not None and not formal.available else 0),
        formal="" if formal is None else formal.line())


def _summary(summary: Summary, skipped: Sequence[Skipped]) -> list[str]:
    s = summary
    lines = [
        "| result | count | meaning |",
        "| --- | ---: | --- |",
        f"| proved | {s.proved} | passed, for every parameter |",
        f"| checked | {s.checked} | passed on a stated finite domain, or by exact "
        "arithmetic on the paper's numbers |",
        f"| sampled | {s.sampled} | passed on random examples (Monte Carlo, "
        "Hypothesis); not a proof |",
        f"| failed | {s.failed} | a check of the toolkit failed |",
        f"| findings | {s.findings} | the paper's own numbers disagree with each other |",
        f"| not checkable | {s.not_checkable} | the claim cannot be decided from what the "
        "paper gives |",
        f"| skipped | {s.skipped} | not run in this run (below) |",
        "",
    ]
    if s.formal:
        lines += [f"{s.formal}.", ""]
    for sk in skipped:
        lines.append(f"- **{sk.count} {sk.what} checks skipped**: {sk.why}; {sk.fix}.")
    if skipped:
        lines.append("")
    return lines


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
    skipped: Sequence[Skipped] = (),
    study: Mapping[str, Any] | None | bool = False,
    formal: Any = None,
) -> str:
    """The Markdown text of the report (``study``: the conformance study's record
    from :func:`._study.study_stage`, None when the peers are not installed, False
    for no section; ``formal``: the Coq stage's :class:`._formal.FormalSummary`).

    The first screen states the counts (proved, checked, sampled, failed, findings,
    not checkable, skipped, with why anything was skipped and how to run it), then the
    findings about the paper and any failure; then one table per area, the "Beyond the
    paper" section (``beyond``: rows from :func:`._beyond.beyond_rows`), the figures and
    the stages. ``counts`` is kept for the caller's record; the summary recounts
    ``checks``.
    """
    del counts  # the summary recounts the rows, so the two can never disagree
    findings = [c for c in checks if c.status == "fail" and c.source in FINDING_SOURCES]
    failed = [c for c in checks if c.status == "fail" and c.source not in FINDING_SOURCES]
    summary = summarize(checks, skipped, formal)
    verdict = summary.verdict
    lines: list[str] = [
        "# vista-lab reproduce report",
        "",
        f"vista-lab {version}, git commit `{commit or 'unknown'}`, code fingerprint "
        f"`{fingerprint[:12]}`, precision `{'quick' if quick else 'default'}`, seed `{seed}`: "
        f"**{verdict}**. Every number below is computed by the run; the full numbers of "
        "every check are in [results/checks.csv](results/checks.csv).",
        "",
        "## Summary",
        "",
    ]
    lines += _summary(summary, skipped)
    lines += ["## Findings about the paper", ""]
    if findings:
        lines += ["The paper's tables and text disagree in these places. They are reported, "
                  "and fail the run only with `--strict`.", ""]
        for c in findings:
            lines += [f"- **{md_cell(c.claim)}** ({md_cell(c.where)}). "
                      f"{md_cell(c.numbers, 600)} (`{md_cell(c.id)}`)"]
        lines.append("")
    else:
        lines += ["None in this run.", ""]
    if failed:
        lines += ["## Failures", ""] + _check_table(failed) + [""]
    lines += ["## Checks by area", ""]
    for title, sources, blurb in _AREAS:
        rows = [c for c in checks if c.source in sources]
        if not rows:
            continue
        passed = sum(1 for c in rows if c.status == "pass")
        lines += [f"### {title} ({passed} of {len(rows)} pass)", "", blurb, ""]
        lines += _check_table(rows) + [""]
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


_HTML_STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; max-width: 78rem; margin: 2rem auto;
       padding: 0 1rem; color: #1b1b1b; }
table { border-collapse: collapse; font-size: 13px; margin: .5rem 0 1rem; }
th, td { border: 1px solid #d0d0d0; padding: 3px 6px; vertical-align: top; }
th { background: #f3f3f3; }
details { margin: .4rem 0; }
summary { cursor: pointer; font-weight: 600; }
summary h2, summary h3 { display: inline; }
img { max-width: 100%; }
code { font-size: 90%; }
"""


def report_html(markdown: str) -> str:
    """``report.md`` as one self-contained HTML page with collapsible sections.

    The Summary and Findings sections are open; each area's check table, the
    figures and the stages are collapsed under their headings. The Markdown is
    rendered by markdown-it-py (CommonMark with tables); nothing is fetched.
    """
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    title, *rest = markdown.split("\n", 1)
    body = rest[0] if rest else ""
    parts = [f"<h1>{md.renderInline(title.lstrip('# '))}</h1>"]
    sections = body.split("\n## ")
    parts.append(md.render(sections[0]))
    for section in sections[1:]:
        heading, _, text = section.partition("\n")
        open_ = " open" if heading.split(" (")[0] in {"Summary", "Findings about the paper",
                                                       "Failures"} else ""
        subsections = text.split("\n### ")
        inner = [md.render(subsections[0])]
        for sub in subsections[1:]:
            sub_heading, _, sub_text = sub.partition("\n")
            inner.append(f"<details><summary><h3>{md.renderInline(sub_heading)}</h3></summary>"
                         f"{md.render(sub_text)}</details>")
        parts.append(f"<details{open_}><summary><h2>{md.renderInline(heading)}</h2></summary>"
                     f"{''.join(inner)}</details>")
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{md.renderInline(title.lstrip('# '))}</title>"
            f"<style>{_HTML_STYLE}</style></head><body>\n" + "\n".join(parts)
            + "\n</body></html>\n")
