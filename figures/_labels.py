"""Direct labels placed where the plot is empty, and a finder for clashing text.

:func:`place_labels` puts each label next to its data point, at the nearest
candidate offset whose text box meets no line, marker, error bar, legend or
earlier text of the axes (a thin leader line joins a label pushed further out);
the labels of one family whose points coincide on the page are written once.
Every candidate is scored from the text's size measured once, in one array
computation, so placing a figure's labels costs about one layout of the figure.
:func:`find_text_clashes` lists texts of a figure that overlap each other, cross
a plotted line or marker, or reach past the figure's edge.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["PointLabel", "TextClash", "place_labels", "find_text_clashes"]

#: Directions tried around a point, in order of preference (degrees; 0 = right,
#: 90 = up): beside the point first, then above or below it.
_ANGLES = (35.0, -35.0, 145.0, -145.0, 0.0, 180.0, 65.0, -65.0, 115.0, -115.0, 90.0, -90.0)
#: Distances tried from the point, in points (1/72 inch), nearest first; the far ones
#: reach the free part of a crowded plot.
_RADII = (5.0, 9.0, 14.0, 20.0, 28.0, 38.0, 50.0, 65.0, 85.0, 110.0, 140.0)
#: From this distance on a leader line joins the label to its point.
_LEADER_FROM = 14.0
#: Clearance kept around a placed label, in points.
_PAD = 1.5
#: Labels with one prefix whose points are this close, in points, are written as one.
_JOIN = 4.0
#: What a text clashes with when it crosses the plotted data, or leaves the figure.
DATA = "a plotted line or marker"
EDGE = "the figure edge"

Box = tuple[float, float, float, float]  # x0, y0, x1, y1 in display pixels


@dataclass(frozen=True, slots=True)
class PointLabel:
    """A text to write next to the data point ``(x, y)``.

    Attributes
    ----------
    text : str
        The label (mathtext allowed).
    x, y : float
        The point, in data coordinates.
    style : Mapping
        Text keywords for :meth:`Axes.annotate` (``color``, ``fontsize``,
        ...); alignment and offset are chosen by :func:`place_labels`.
    prefix : str
        The start of ``text`` shared by a family of labels (``"$\\sigma$="``);
        labels of one family whose points coincide on the page are written
        as one text (``"$\\sigma$=0.35, 0.5"``). Empty: never joined.
    """

    text: str
    x: float
    y: float
    style: Mapping[str, Any] = field(default_factory=dict)
    prefix: str = ""


@dataclass(frozen=True, slots=True)
class TextClash:
    """One text of a figure drawn over something it should leave clear.

    Attributes
    ----------
    text : str
        The text.
    other : str
        What it meets: another text (its string, or ``legend (...)``),
        ``"a plotted line or marker"`` or ``"the figure edge"``.
    """

    text: str
    other: str


def place_labels(ax: Any, labels: Sequence[PointLabel]) -> list[Any]:
    """Annotate ``ax`` with ``labels``, each where it overlaps nothing if it can.

    Labels sharing a ``prefix`` whose points sit within :data:`_JOIN` points
    of each other on the page (points a reader cannot tell apart) are written
    once, as the prefix and their items joined by commas (``sigma=0.35,
    0.5``), at the mean of their points. Each label then takes the first
    candidate offset (:data:`_ANGLES` x :data:`_RADII`, nearest first) whose
    text box stays inside the axes and meets no segment or marker of the
    axes' lines, error bars and scatter points, no legend, no text already on
    the axes and no label placed before it; among those, one whose leader line
    (drawn from :data:`_LEADER_FROM` points out) crosses the fewest markers,
    texts and earlier leaders. Only when no candidate is clear does a label
    take the one meeting least. Each text's size is measured once and every
    candidate is scored in one array computation, so the cost grows with
    labels x candidates x marks, with no drawing per candidate. Call it once
    everything else is drawn on ``ax`` and its limits are final.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        The axes to annotate.
    labels : sequence of PointLabel
        Placed in order (earlier labels get the better places).

    Returns
    -------
    list of matplotlib.text.Annotation
        One per label, in order; labels joined into one text share its
        annotation.
    """
    from vistalab.theory import DomainError

    if not callable(getattr(ax, "annotate", None)) or getattr(ax, "figure", None) is None:
        raise DomainError("ax", ax, "must be a matplotlib Axes on a figure",
                          "pass one of new_figure()'s axes")
    if isinstance(labels, (str, bytes)) or not isinstance(labels, Sequence) or not all(
        isinstance(lab, PointLabel) for lab in labels
    ):
        raise DomainError("labels", labels, "must be a sequence of PointLabel",
                          "pass e.g. [PointLabel('sigma = 1', x, y)]")
    if not labels:
        return []
    fig = ax.figure
    fig.draw_without_rendering()  # settles the layout, so display coordinates hold
    renderer = fig.canvas.get_renderer()
    px = fig.dpi / 72.0
    rects, segments = _marks(ax, px)
    rects = np.vstack([rects, _text_rects(ax, renderer)])
    frame = ax.get_window_extent(renderer)
    anchors = np.asarray(ax.transData.transform([(lab.x, lab.y) for lab in labels]), dtype=float)
    groups = _joined(labels, anchors, _JOIN * px)
    offsets = np.array([_offset(r, a) for r in _RADII for a in _ANGLES]) * px
    # Where the box sits relative to the text's position, per candidate: the
    # fraction of its width left of it (ha) and of its height below it (va).
    fx = np.array([{"left": 0.0, "center": 0.5, "right": 1.0}[_ha(a)]
                   for _ in _RADII for a in _ANGLES])
    fy = np.array([{"bottom": 0.0, "center": 0.5, "top": 1.0}[_va(a)]
                   for _ in _RADII for a in _ANGLES])
    leader = np.array([r >= _LEADER_FROM for r in _RADII for _ in _ANGLES])
    leaders = np.empty((0, 4))
    pad = _PAD * px
    by_label: dict[int, Any] = {}
    for members in groups:
        first = labels[members[0]]
        text = _joined_text([labels[i] for i in members])
        anchor = anchors[members].mean(axis=0)
        at = anchors[members]
        w, h = _text_size(ax, text, first.style, renderer)
        pos = anchor + offsets
        boxes = np.column_stack([pos[:, 0] - fx * w - pad, pos[:, 1] - fy * h - pad,
                                 pos[:, 0] + (1 - fx) * w + pad, pos[:, 1] + (1 - fy) * h + pad])
        outside = ((boxes[:, 0] < frame.x0) | (boxes[:, 2] > frame.x1)
                   | (boxes[:, 1] < frame.y0) | (boxes[:, 3] > frame.y1))
        hits = _box_hits(boxes, rects, segments) + 1000 * outside
        centres = np.column_stack([0.5 * (boxes[:, 0] + boxes[:, 2]),
                                   0.5 * (boxes[:, 1] + boxes[:, 3])])
        lines = np.column_stack([np.broadcast_to(anchor, centres.shape), centres])
        # The markers under the label's own points are not crossings.
        own = ((rects[:, None, 0] <= at[None, :, 0]) & (rects[:, None, 2] >= at[None, :, 0])
               & (rects[:, None, 1] <= at[None, :, 1])
               & (rects[:, None, 3] >= at[None, :, 1])).any(axis=1)
        crossings = _segment_box_pairs(lines, rects[~own]).sum(axis=1)
        crossings += _segments_cross(lines, leaders).sum(axis=1)
        crossings = np.where(leader, crossings, 0)
        # Clear boxes first, then fewest leader crossings, then nearest (candidate order).
        best = int(np.lexsort((np.arange(len(boxes)), crossings, hits))[0])
        radius = _RADII[best // len(_ANGLES)]
        angle = _ANGLES[best % len(_ANGLES)]
        style = dict(first.style)
        arrow = (
            {"arrowprops": {"arrowstyle": "-", "color": style.get("color", "black"),
                            "lw": 0.5, "shrinkA": 0.0, "shrinkB": 3.0}}
            if leader[best] else {}
        )
        xy = tuple(ax.transData.inverted().transform(anchor))
        ann = ax.annotate(text, xy=xy, xytext=_offset(radius, angle), textcoords="offset points",
                          ha=_ha(angle), va=_va(angle), **arrow, **style)
        for i in members:
            by_label[i] = ann
        rects = np.vstack([rects, boxes[best][None, :]])
        if leader[best]:
            leaders = np.vstack([leaders, lines[best][None, :]])
    return [by_label[i] for i in range(len(labels))]


def _joined(labels: Sequence[PointLabel], anchors: np.ndarray, within: float) -> list[list[int]]:
    """Indices of the labels written as one text, in order of their first label:
    labels with the same non-empty ``prefix`` and style, chained by points at most
    ``within`` pixels apart."""
    parent = list(range(len(labels)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, a in enumerate(labels):
        if not a.prefix or not a.text.startswith(a.prefix):
            continue
        for j in range(i):
            b = labels[j]
            if (b.prefix == a.prefix and b.text.startswith(b.prefix)
                    and dict(b.style) == dict(a.style)
                    and math.dist(anchors[i], anchors[j]) <= within):
                parent[root(i)] = root(j)
    groups: dict[int, list[int]] = {}
    for i in range(len(labels)):
        groups.setdefault(root(i), []).append(i)
    return sorted(groups.values(), key=lambda g: g[0])


def _joined_text(members: Sequence[PointLabel]) -> str:
    """One label's text, or the prefix and the items of several (a repeated item
    once, with its count)."""
    if len(members) == 1:
        return members[0].text
    prefix = members[0].prefix
    items: dict[str, int] = {}
    for lab in members:
        item = lab.text[len(prefix):]
        items[item] = items.get(item, 0) + 1
    return prefix + ", ".join(k if c == 1 else f"{k} \N{MULTIPLICATION SIGN}{c}"
                              for k, c in items.items())


def _text_size(ax: Any, text: str, style: Mapping[str, Any], renderer: Any) -> tuple[float, float]:
    """Width and height in pixels of ``text`` drawn on ``ax`` with ``style``."""
    from matplotlib.text import Text

    probe = ax.annotate(text, xy=(0.0, 0.0), **dict(style))
    try:
        e = Text.get_window_extent(probe, renderer)
    finally:
        probe.remove()
    return float(e.width), float(e.height)


def find_text_clashes(fig: Any, *, dpi: float = 200.0) -> list[TextClash]:
    """Texts of ``fig`` that overlap each other, cross the data, or leave the figure.

    Checked: titles, axis labels, the tick labels inside each axis' view, texts
    and annotations (their text, not the leader line) and legends (a legend
    counts as one box). A rotated text is its rotated rectangle, so slanted
    tick labels that sit close but apart are not reported. A text, annotation
    or legend of an axes must also cross none of its lines, markers, error
    bars or scatter points (a pixel of contact is allowed, so a label set on
    a line is fine).

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The finished figure.
    dpi : float
        Resolution of the layout checked (text extents differ slightly
        between resolutions); default the PNG's 200 dpi.

    Returns
    -------
    list of TextClash
        Empty when every text stands clear.
    """
    from vistalab.theory import DomainError
    from vistalab.theory._validate import as_real

    if not callable(getattr(fig, "draw_without_rendering", None)):
        raise DomainError("fig", fig, "must be a matplotlib Figure", "pass new_figure()[0]")
    dpi = as_real("dpi", dpi, fix="pass a resolution such as 200")
    if not 10.0 <= dpi <= 2000.0:
        raise DomainError("dpi", dpi, "must be in [10, 2000]", "pass a resolution such as 200")
    old_dpi = fig.dpi
    fig.set_dpi(dpi)
    try:
        fig.draw_without_rendering()
        renderer = fig.canvas.get_renderer()
        return _clashes(fig, renderer)
    finally:
        fig.set_dpi(old_dpi)


def _clashes(fig: Any, renderer: Any) -> list[TextClash]:
    from matplotlib.text import Text

    items: list[tuple[str, np.ndarray]] = []
    legends = list(fig.legends)
    out: list[TextClash] = []
    px = fig.dpi / 72.0
    for ax in fig.axes:
        # Every text of the axes but tick labels (some belong to ticks outside the view,
        # which are never drawn) and legend entries (the legend is one box below).
        skip = {id(t) for axis in (ax.xaxis, ax.yaxis)
                for tick in (*axis.majorTicks, *axis.minorTicks)
                for t in (tick.label1, tick.label2)}
        leg = ax.get_legend()
        if leg is not None:
            legends.append(leg)
            skip |= {id(t) for t in leg.findobj(Text)}
        texts = [t for t in ax.findobj(Text) if id(t) not in skip]
        for axis in (ax.xaxis, ax.yaxis):
            texts += _ticklabels_in_view(axis)
        items += [(t.get_text(), _text_corners(t, renderer)) for t in texts if _drawn(t)]
        rects, segs = _marks(ax, px)
        over_data = [(t.get_text(), Text.get_window_extent(t, renderer))
                     for t in ax.texts if _drawn(t)]
        if leg is not None and leg.get_visible():
            over_data.append((_legend_name(leg), leg.get_window_extent(renderer)))
        for text, e in over_data:
            box = (e.x0 + 1.0, e.y0 + 1.0, e.x1 - 1.0, e.y1 - 1.0)  # a pixel of contact
            if _hits(box, rects, segs):
                out.append(TextClash(text, DATA))
    items += [(t.get_text(), _text_corners(t, renderer)) for t in fig.texts if _drawn(t)]
    for leg in legends:
        if leg.get_visible():
            e = leg.get_window_extent(renderer)
            items.append((_legend_name(leg), np.array(
                [[e.x0, e.y0], [e.x1, e.y0], [e.x1, e.y1], [e.x0, e.y1]])))
    w, h = fig.bbox.width, fig.bbox.height
    for text, corners in items:
        if (corners[:, 0].min() < -0.5 or corners[:, 1].min() < -0.5
                or corners[:, 0].max() > w + 0.5 or corners[:, 1].max() > h + 0.5):
            out.append(TextClash(text, EDGE))
    for i, (ta, a) in enumerate(items):
        out += [TextClash(ta, tb) for tb, b in items[i + 1:] if _convex_overlap(a, b)]
    return out


def _legend_name(leg: Any) -> str:
    first = leg.get_texts()[0].get_text() if leg.get_texts() else ""
    return f"legend ({first}, ...)"


def _drawn(t: Any) -> bool:
    return bool(t.get_visible() and t.get_text().strip())


def _ticklabels_in_view(axis: Any) -> list[Any]:
    """The major and minor tick labels whose ticks lie inside the axis' view."""
    # Compared on the axis' scale (log axes included), with a relative tolerance.
    scale = axis.get_transform()
    lo, hi = sorted(scale.transform(np.asarray(axis.get_view_interval(), dtype=float)))
    tol = 1e-9 * (hi - lo)
    out = []
    for locs, labels in ((axis.get_majorticklocs(), axis.get_majorticklabels()),
                         (axis.get_minorticklocs(), axis.get_minorticklabels())):
        with np.errstate(divide="ignore", invalid="ignore"):
            pos = scale.transform(np.asarray(locs, dtype=float))
        out += [t for p, t in zip(pos, labels, strict=False) if lo - tol <= p <= hi + tol]
    return out


# ----------------------------------------------------------------- geometry


def _offset(radius: float, angle: float) -> tuple[float, float]:
    a = math.radians(angle)
    return radius * math.cos(a), radius * math.sin(a)


def _ha(angle: float) -> str:
    c = math.cos(math.radians(angle))
    return "left" if c > 1e-9 else "right" if c < -1e-9 else "center"


def _va(angle: float) -> str:
    s = math.sin(math.radians(angle))
    return "bottom" if s > 1e-9 else "top" if s < -1e-9 else "center"


def _marks(ax: Any, px: float) -> tuple[np.ndarray, np.ndarray]:
    """The plotted marks of ``ax`` in display pixels: marker boxes (x0, y0, x1, y1)
    and line segments (x0, y0, x1, y1)."""
    from matplotlib.collections import LineCollection, PathCollection

    rects: list[Box] = []
    segs: list[np.ndarray] = []
    for line in ax.get_lines():
        if not line.get_visible():
            continue
        xy = np.asarray(line.get_transform().transform(line.get_xydata()), dtype=float)
        if line.get_linestyle() not in ("None", "", " ") and len(xy) > 1:
            segs.append(np.hstack([xy[:-1], xy[1:]]))
        if line.get_marker() not in (None, "None", "", " ", ","):
            h = 0.5 * line.get_markersize() * px
            rects += [(x - h, y - h, x + h, y + h) for x, y in xy if np.isfinite([x, y]).all()]
    for coll in ax.collections:
        if not coll.get_visible():
            continue
        if isinstance(coll, LineCollection):  # error bars
            tr = coll.get_transform()
            for s in coll.get_segments():
                s = np.asarray(tr.transform(s), dtype=float)
                if len(s) > 1:
                    segs.append(np.hstack([s[:-1], s[1:]]))
        elif isinstance(coll, PathCollection):  # scatter points
            pts = np.asarray(coll.get_offset_transform().transform(coll.get_offsets()), dtype=float)
            sizes = coll.get_sizes()
            h = 0.5 * math.sqrt(float(np.max(sizes)) if len(sizes) else 36.0) * px
            rects += [(x - h, y - h, x + h, y + h) for x, y in pts if np.isfinite([x, y]).all()]
    seg = np.vstack(segs) if segs else np.empty((0, 4))
    return np.asarray(rects, dtype=float).reshape(-1, 4), seg[np.isfinite(seg).all(axis=1)]


def _text_rects(ax: Any, renderer: Any) -> np.ndarray:
    """Boxes of the texts and the legend already on ``ax``."""
    from matplotlib.text import Text

    boxes = [Text.get_window_extent(t, renderer) for t in ax.texts if _drawn(t)]
    leg = ax.get_legend()
    if leg is not None and leg.get_visible():
        boxes.append(leg.get_window_extent(renderer))
    return np.array([(e.x0, e.y0, e.x1, e.y1) for e in boxes], dtype=float).reshape(-1, 4)


def _hits(box: Box, rects: np.ndarray, segs: np.ndarray) -> int:
    """How many boxes and segments meet ``box``."""
    return int(_box_hits(np.asarray(box, dtype=float)[None, :], rects, segs)[0])


def _box_hits(boxes: np.ndarray, rects: np.ndarray, segs: np.ndarray) -> np.ndarray:
    """For each of ``boxes`` (C x 4), how many of ``rects`` and ``segs`` it meets."""
    b = boxes[:, None, :]
    n = np.count_nonzero((rects[None, :, 0] < b[..., 2]) & (rects[None, :, 2] > b[..., 0])
                         & (rects[None, :, 1] < b[..., 3]) & (rects[None, :, 3] > b[..., 1]),
                         axis=1)
    if len(segs):
        n = n + np.count_nonzero(_segment_box_pairs(segs, boxes).T, axis=1)
    return n


def _segment_box_pairs(segs: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """Liang-Barsky clipping for every pair: ``[i, j]`` is whether segment ``i``
    (x0, y0, x1, y1) has a point inside box ``j`` (x0, y0, x1, y1)."""
    s, b = segs[:, None, :], boxes[None, :, :]
    px, py = s[..., 0], s[..., 1]
    dx, dy = s[..., 2] - px, s[..., 3] - py
    shape = np.broadcast_shapes(px.shape, b[..., 0].shape)
    lo, hi = np.zeros(shape), np.ones(shape)
    ok = np.ones(shape, dtype=bool)
    for p, q in ((-dx, px - b[..., 0]), (dx, b[..., 2] - px),
                 (-dy, py - b[..., 1]), (dy, b[..., 3] - py)):
        p = np.broadcast_to(p, shape)
        parallel = p == 0
        ok &= ~(parallel & (q < 0))
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(parallel, 0.0, q / np.where(parallel, 1.0, p))
        lo = np.where(~parallel & (p < 0), np.maximum(lo, t), lo)
        hi = np.where(~parallel & (p > 0), np.minimum(hi, t), hi)
    return ok & (lo <= hi)


def _segments_cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``[i, j]``: whether segments ``a[i]`` and ``b[j]`` properly cross."""
    if not len(b):
        return np.zeros((len(a), 0), dtype=bool)
    p, r = a[:, None, :2], a[:, None, 2:] - a[:, None, :2]
    q, s = b[None, :, :2], b[None, :, 2:] - b[None, :, :2]

    def cross(u: np.ndarray, v: np.ndarray) -> np.ndarray:
        return u[..., 0] * v[..., 1] - u[..., 1] * v[..., 0]

    den = cross(r, s)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = cross(q - p, s) / den
        u = cross(q - p, r) / den
    return (den != 0) & (t > 0) & (t < 1) & (u > 0) & (u < 1)


def _text_corners(t: Any, renderer: Any) -> np.ndarray:
    """The four corners of a text's (possibly rotated) box, in display pixels."""
    from matplotlib.text import Text

    box = Text.get_window_extent(t, renderer)  # the text alone, without a leader line
    angle = t.get_rotation()
    if angle % 90.0 == 0.0:
        return np.array([[box.x0, box.y0], [box.x1, box.y0], [box.x1, box.y1], [box.x0, box.y1]])
    t.set_rotation(0.0)
    try:
        flat = Text.get_window_extent(t, renderer)
    finally:
        t.set_rotation(angle)
    # A rotated rectangle's axis-aligned box has the same centre.
    c = np.array([0.5 * (box.x0 + box.x1), 0.5 * (box.y0 + box.y1)])
    w, h = 0.5 * flat.width, 0.5 * flat.height
    r = math.radians(angle)
    rot = np.array([[math.cos(r), -math.sin(r)], [math.sin(r), math.cos(r)]])
    return c + np.array([[-w, -h], [w, -h], [w, h], [-w, h]]) @ rot.T


def _convex_overlap(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two convex quadrilaterals overlap by more than 0.01 pixel (separating axes)."""
    for poly in (a, b):
        edges = np.roll(poly, -1, axis=0) - poly
        for nx, ny in np.column_stack([-edges[:, 1], edges[:, 0]]):
            norm = math.hypot(nx, ny)
            if norm == 0.0:
                continue
            pa, pb = a @ (nx / norm, ny / norm), b @ (nx / norm, ny / norm)
            if pa.max() <= pb.min() + 1e-2 or pb.max() <= pa.min() + 1e-2:
                return False
    return True
