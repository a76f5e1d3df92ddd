"""The report's "Conformance study" section: when every peer of the study is
installed (``pip install 'vista-lab[peers]'``), ``reproduce`` runs the study of
the ecosystem's context managers into ``results/conformance/`` and the report
shows its peer x invariant table with package versions."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["study_params", "study_stage", "study_section", "STUDY_EXAMPLES"]

#: Conversations per peer: (quick, default).
STUDY_EXAMPLES = (30, 100)


def study_params(folder: Path, *, quick: bool, seed: int) -> dict[str, Any] | None:
    """The stage's parameters (the peers' versions among them, so a new release
    reruns it), or None when some peer is not installed (the section then says
    how to install them)."""
    try:
        from vistalab.conformance._peers import PEERS
    except ImportError:  # the suite needs the testing extra
        return None
    if not all(p.installed() for p in PEERS):
        return None
    versions = {d: v for p in PEERS for d, v in p.versions().items()}
    return {"examples": STUDY_EXAMPLES[0] if quick else STUDY_EXAMPLES[1], "seed": seed,
            "folder": str(folder), "versions": versions}


def study_stage(params: Mapping[str, Any], rng: Any) -> dict[str, Any]:
    """Run the study into ``params["folder"]``; the payload is its JSON record."""
    from vistalab.conformance._study import run_study

    from .._study_figure import draw_study_figure

    result = run_study(params["folder"], examples=int(params["examples"]),
                       seed=int(params["seed"]), figure=draw_study_figure)
    doc = result.to_dict()
    for row in doc["rows"]:  # the full reports live in the folder's study.json
        row.pop("report", None)
    return doc


def study_section(study: Mapping[str, Any] | None, cell: Any) -> list[str]:
    """Markdown lines of the section; ``cell`` escapes one table cell."""
    lines = ["## Conformance study of the ecosystem's context managers", ""]
    if study is None:
        lines += ["Not run: it needs every peer installed "
                  "(`pip install 'vista-lab[peers]'`).", ""]
        return lines
    invariants = list(study["invariants"])
    rows = study["rows"]
    checked = [r for r in rows if r["status"] == "checked"]
    broken = [r for r in checked if any(str(c).endswith(".json") for c in r["cells"].values())]
    bugs = sum(len(r["bugs"]) for r in rows)
    lines += [
        f"{len(checked)} peers checked on {study['examples']} generated conversations each "
        f"(seed {study['seed']}, tokens by {cell(study['counter'])}); {len(broken)} break at "
        f"least one of the paper's workspace invariants ({bugs} violations, each written up "
        "with its minimal counterexample in "
        "[results/conformance/study.md](results/conformance/study.md)). "
        "A pass is evidence on the sample, not a proof.",
        "",
        "| peer | versions | " + " | ".join(invariants) + " |",
        "| --- | --- | " + " | ".join("---" for _ in invariants) + " |",
    ]
    for r in rows:
        vers = ", ".join(f"{d} {v}" for d, v in r["versions"].items() if v) or "-"
        cells = ["**violated**" if str(r["cells"][i]).endswith(".json") else r["cells"][i]
                 for i in invariants]
        lines.append(f"| {cell(r['peer'])} | {cell(vers)} | "
                     + " | ".join(cell(c) for c in cells) + " |")
    lines.append("")
    return lines
