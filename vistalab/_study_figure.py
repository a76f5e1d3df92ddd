"""The conformance study's figure: a peer x invariant grid in the house style
(the conformance layer does no plotting; the command line and ``reproduce``
hand this function to :func:`vistalab.conformance.run_study`)."""

from __future__ import annotations

from pathlib import Path

from vistalab.conformance._model import CHECKED
from vistalab.conformance._study import NOT_INSTALLED, StudyResult

__all__ = ["draw_study_figure"]


def draw_study_figure(result: StudyResult, out: Path) -> str | None:
    """Peer x invariant grid (pass, violated, not applicable, not installed) as
    ``study.png`` and ``study.pdf`` in ``out``; None when matplotlib is missing."""
    try:
        from vistalab.figures import PALETTE, figure_style, new_figure, save_figure
    except ImportError:
        return None
    import numpy as np
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    kinds = [("pass", PALETTE["green"]), ("violated", PALETTE["vermillion"]),
             ("n/a", "#DDDDDD"), ("not installed", "#FFFFFF")]
    code = {"pass": 0, "n/a": 2, NOT_INSTALLED: 3, "hangs": 1}
    grid = np.array([[code.get(r.cells[i], 1) for i in CHECKED] for r in result.rows])
    labels = []
    for r in result.rows:
        v = next((v for v in r.versions.values() if v), None)
        labels.append(f"{r.peer} ({v})" if v else f"{r.peer} (not installed)")
    with figure_style():
        fig, axes = new_figure(width=7.2, height=1.2 + 0.28 * len(result.rows))
        ax = axes[0, 0]
        ax.imshow(grid, cmap=ListedColormap([c for _, c in kinds]), vmin=-0.5, vmax=3.5,
                  aspect="auto")
        ax.set_xticks(range(len(CHECKED)), list(CHECKED), rotation=20, ha="right")
        ax.set_yticks(range(len(labels)), labels)
        ax.set_xticks(np.arange(-0.5, len(CHECKED)), minor=True)
        ax.set_yticks(np.arange(-0.5, len(labels)), minor=True)
        ax.grid(False)
        ax.grid(which="minor", color="white", linewidth=1.5)
        ax.tick_params(which="minor", length=0)
        marks = {0: "pass", 1: "violated", 2: "n/a", 3: ""}
        for (i, j), k in np.ndenumerate(grid):
            ax.text(j, i, marks[int(k)], ha="center", va="center", fontsize=6.5,
                    color="white" if k in (0, 1) else "0.3")
        ax.set_title(f"Workspace invariants: {len(result.checked)} peers, "
                     f"{result.examples} conversations each")
        fig.legend(handles=[Patch(facecolor=c, edgecolor="0.6", label=k) for k, c in kinds],
                   loc="outside lower center", ncols=4)
        png, _ = save_figure(fig, out, "study")
    return str(png)
