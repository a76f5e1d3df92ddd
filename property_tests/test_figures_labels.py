"""Figure text stays readable (issue item "figure label overlaps": in fig4 the
"engine: gaussian" label overlapped the sigma=1 label, in fig8 panel (a) the
"1-delta" annotation sat on the curves): the label placer puts labels in free
space, and the clash finder, shown to fail on broken figures, passes on every
figure in quick mode."""

from __future__ import annotations

import numpy as np
import pytest
from vistalab.figures import (
    FIGURE_NAMES,
    PointLabel,
    TextClash,
    figure_style,
    find_text_clashes,
    load_figure,
    new_figure,
    place_labels,
)
from vistalab.figures._labels import DATA, EDGE

SEED = 20260522


def _axes(width=4.0, height=3.0):
    fig, axes = new_figure(1, 1, width=width, height=height)
    ax = axes[0, 0]
    ax.set_xlim(0, 10)
    ax.set_ylim(0, 10)
    return fig, ax


def test_clash_finder_reports_overlapping_texts():
    """Two texts written at the same place clash; moved apart, they do not."""
    with figure_style():
        fig, ax = _axes()
        ax.text(2, 2, "first label")
        ax.text(2.3, 2.1, "second label")
        assert TextClash("first label", "second label") in find_text_clashes(fig)
        ax.texts[1].set_position((2, 7))
        assert find_text_clashes(fig) == []


def test_clash_finder_reports_text_on_data_and_past_the_edge():
    """A text written across a curve clashes with the data, a legend over the data
    clashes, and a text placed past the figure's edge is reported as cut."""
    with figure_style():
        fig, ax = _axes()
        ax.plot([0, 10], [5, 5], color="k")
        ax.text(4, 5, "on the line", va="center")
        fig.text(0.9, 0.5, "past the right edge of the figure")
        clashes = find_text_clashes(fig)
        assert TextClash("on the line", DATA) in clashes
        assert TextClash("past the right edge of the figure", EDGE) in clashes
        fig, ax = _axes()
        ax.plot(np.linspace(0, 10, 50), np.full(50, 9.5), "o", label="points")
        ax.legend(loc="upper left")
        assert TextClash("legend (points, ...)", DATA) in find_text_clashes(fig)


def test_slanted_tick_labels_close_but_apart_do_not_clash():
    """Rotated tick labels are compared as rotated boxes: 45-degree labels one tick
    apart do not clash, though their upright bounding boxes overlap."""
    with figure_style():
        fig, ax = _axes(width=3.0)
        ax.set_xticks(range(0, 11), [f"label {i}" for i in range(11)], rotation=45, ha="right")
        assert find_text_clashes(fig) == []
        ax.set_xticks(range(0, 11), [f"label {i}" for i in range(11)], rotation=0)
        assert any(c.text.startswith("label") and c.other.startswith("label")
                   for c in find_text_clashes(fig))


def test_placed_labels_avoid_lines_markers_and_each_other():
    """Labels of points that sit on a line, beside other points, and of one
    point twice, land where they clash with nothing; the same labels written at
    one fixed offset do clash (so the scene is a real test)."""
    xs = np.array([2.0, 2.3, 5.0, 8.0, 9.8])
    ys = np.array([5.0, 5.4, 5.0, 5.0, 5.0])
    labels = [PointLabel(f"point {i}", float(x), float(y), {"fontsize": 7})
              for i, (x, y) in enumerate(zip(xs, ys, strict=True))]
    labels.append(PointLabel("point 2 again", 5.0, 5.0, {"fontsize": 7}))
    with figure_style():
        fig, ax = _axes()
        ax.plot([0, 10], [0, 10], color="k")
        ax.plot([0, 10], [5.0, 5.0], color="grey")
        ax.plot(xs, ys, "o", ms=6)
        for lab in labels:
            ax.annotate(lab.text, (lab.x, lab.y), xytext=(3, 3), textcoords="offset points",
                        fontsize=7)
        assert find_text_clashes(fig)
        fig, ax = _axes()
        ax.plot([0, 10], [0, 10], color="k")
        ax.plot([0, 10], [5.0, 5.0], color="grey")
        ax.plot(xs, ys, "o", ms=6)
        anns = place_labels(ax, labels)
        assert [a.get_text() for a in anns] == [lab.text for lab in labels]
        assert find_text_clashes(fig) == []


def test_labels_of_coinciding_points_are_written_once():
    """Labels of one family (same prefix and style) at points that coincide on the
    page become one text with their items, a repeated item once with its count;
    a point apart, a label of another family and a label without a prefix stay
    separate, and every label maps to the annotation that shows it."""
    sig = {"fontsize": 7, "color": "blue"}
    labels = [PointLabel("s=1", 5.0, 5.0, sig, prefix="s="),
              PointLabel("s=2", 5.0, 5.0, sig, prefix="s="),
              PointLabel("e: a", 5.0, 5.0, {"fontsize": 7}, prefix="e: "),
              PointLabel("e: a", 5.001, 5.0, {"fontsize": 7}, prefix="e: "),
              PointLabel("s=3", 8.0, 2.0, sig, prefix="s="),
              PointLabel("s=4", 5.0, 5.0, sig)]
    with figure_style():
        fig, ax = _axes()
        ax.plot([5.0, 8.0], [5.0, 2.0], "o", ms=5)
        anns = place_labels(ax, labels)
        assert [a.get_text() for a in anns] == [
            "s=1, 2", "s=1, 2", "e: a \N{MULTIPLICATION SIGN}2", "e: a \N{MULTIPLICATION SIGN}2",
            "s=3", "s=4"]
        assert anns[0] is anns[1] and anns[2] is anns[3]
        assert len(ax.texts) == 4 and find_text_clashes(fig) == []


def test_crowded_points_get_clear_labels_with_leaders():
    """Twelve labels of points one marker apart (no prefix: none is joined) find
    clear places further out, with leader lines; written at one fixed offset the
    same labels clash (and the placer before candidates reached past 50 pt left
    12 clashes here)."""
    xs = 1.0 + 0.12 * np.arange(12)
    labels = [PointLabel(f"label {i}", float(x), 1.0, {"fontsize": 7}) for i, x in enumerate(xs)]
    with figure_style():
        fig, ax = _axes(width=5.0, height=4.0)
        ax.plot(xs, np.ones(12), "o", ms=5)
        for lab in labels:
            ax.annotate(lab.text, (lab.x, lab.y), xytext=(3, 3), textcoords="offset points",
                        fontsize=7)
        assert find_text_clashes(fig)
        fig, ax = _axes(width=5.0, height=4.0)
        ax.plot(xs, np.ones(12), "o", ms=5)
        anns = place_labels(ax, labels)
        assert find_text_clashes(fig) == []
        assert any(a.arrow_patch is not None for a in anns)


def _plotted(name, monkeypatch, tmp_path):
    """Plot figure ``name`` from its quick table; return the matplotlib Figure."""
    fig_mod = load_figure(name)
    table = fig_mod.compute(fig_mod.default_params(quick=True), rng=np.random.default_rng(SEED))
    module = fig_mod  # the figure script module itself (static catalog, no string import)
    figs = []
    real = module.save_figure

    def keep(fig, out_dir, stem):
        figs.append(fig)
        return real(fig, out_dir, stem)

    monkeypatch.setattr(module, "save_figure", keep)
    fig_mod.plot(table, tmp_path)
    return figs[0]


@pytest.mark.parametrize("name", FIGURE_NAMES)
def test_no_text_clashes_in_quick_figures(name, monkeypatch, tmp_path):
    """Every figure in quick mode (the default parameters of `reproduce --quick`):
    no two texts overlap, none crosses a plotted line or marker, none is cut by
    the figure's edge."""
    assert find_text_clashes(_plotted(name, monkeypatch, tmp_path)) == []
