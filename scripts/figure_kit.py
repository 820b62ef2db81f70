"""What every figure of the DSE report shares (used by scripts/plot_figures.py and
scripts/plot_hardware.py): a figure FIG_W_PX wide, the record of what each drawn series shows
(the HDF5 dataset, rows and fields its numbers come from, and the numbers as matplotlib holds
them), labels placed where they overlap nothing, and the boxes of every text the renderer drew
(so a test can check that no two overlap). Each finished figure comes with a manifest entry,
written to DIR/figures.json by scripts/report.py."""
import os
from dataclasses import dataclass, field

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.collections import PathCollection  # noqa: E402
from matplotlib.container import BarContainer  # noqa: E402
from matplotlib.image import AxesImage  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.text import Text  # noqa: E402

FIG_W_PX, DPI = 1400, 100
TITLE_PX = 70          # the figure's title band
PANEL_H_PX = 430       # one row of panels
plt.rcParams.update({"font.size": 10, "axes.titlesize": 11, "axes.labelsize": 10, "legend.fontsize": 8.5,
                     "xtick.labelsize": 9, "ytick.labelsize": 9})


@dataclass
class Figure:
    """A finished figure: its file, title (the question it answers), caption and manifest."""
    file: str
    title: str
    caption: str
    width_px: int
    height_px: int
    series: list
    texts: list
    notes: list = field(default_factory=list)
    tables: list = field(default_factory=list)  # (heading, header, rows) shown under it in the HTML

    def manifest(self):
        return {"file": self.file, "title": self.title, "caption": self.caption, "width_px": self.width_px,
                "height_px": self.height_px, "series": self.series, "texts": self.texts}


def axis_value(fields, scale=1.0, reduce=None):
    """How a drawn coordinate follows from stored values: scale x prod(field ** power) over
    `fields` ([name, power] pairs) of the row(s) named; with several rows per drawn element,
    `reduce` (sum, max, risk: 1 - prod(1 - v)) combines them."""
    return {"fields": [[f, p] for f, p in fields], "scale": scale, "reduce": reduce}


class Builder:
    """A figure under construction: rows x cols panels, FIG_W_PX wide."""

    def __init__(self, file, title, nrows=1, ncols=1, row_px=PANEL_H_PX, extra_px=0, **kw):
        self.file, self.title = file, title
        self.height_px = int(TITLE_PX + nrows * row_px + extra_px)
        self.fig, self.axes = plt.subplots(nrows, ncols, figsize=(FIG_W_PX / DPI, self.height_px / DPI), dpi=DPI,
                                           squeeze=False, **kw)
        self.records = []
        self.notes = []
        self.tables = []

    def record(self, artist, name, source, rows, x=None, y=None, kind=None):
        """Remember that `artist` draws stored values: element i of it comes from rows[i] (a row
        number, or a list of them) of dataset `source`; x and y say how (axis_value), or None
        for a coordinate that is a category position. kind 'slope': y / x is the value."""
        self.records.append((artist, {"name": name, "source": source, "rows": [_plain(r) for r in rows],
                                      "x": x, "y": y, "kind": kind}))
        return artist

    def layout(self, top_px=None, legend=None):
        """Title, panel layout and a figure-wide legend (under the title); call before placing
        labels, which need the panels where they will stay. finish() calls it when not called."""
        fig = self.fig
        top = 1 - (top_px or TITLE_PX) / self.height_px
        fig.tight_layout(rect=(0, 0, 1, top))  # before the title, which tight_layout would make room for again
        fig.suptitle(self.title, fontsize=14, fontweight="bold", y=1 - 14 / self.height_px, va="top")
        if legend is not None:
            handles, labels = legend
            fig.legend(handles, labels, loc="upper center", ncol=min(len(labels), 6), frameon=False,
                       bbox_to_anchor=(0.5, 1 - 36 / self.height_px), fontsize=9)
        self.laid_out = True

    def finish(self, out_dir, caption, top_px=None, legend=None):
        fig = self.fig
        if not getattr(self, "laid_out", False):
            self.layout(top_px, legend)
        texts = drawn_texts(fig)
        series = [_extract(a, spec) for a, spec in self.records]
        fig.savefig(os.path.join(out_dir, self.file), dpi=DPI)  # fixed size: no bbox_inches="tight"
        # The pixels the canvas has (its inches x DPI truncated: 5.06 in may give 505 px).
        width_px, height_px = fig.canvas.get_width_height()
        plt.close(fig)
        return Figure(self.file, self.title, caption, width_px, height_px, series, texts, self.notes, self.tables)


def _plain(r):
    if isinstance(r, (list, tuple, np.ndarray)):
        return [int(v) for v in r]
    return int(r)


def _floats(a):
    return [float(v) for v in np.asarray(a, dtype=float).ravel()]


def _extract(artist, spec):
    """The numbers the artist holds, in data coordinates."""
    out = dict(spec)
    if isinstance(artist, Line2D):
        xy = np.asarray(artist.get_xydata(), dtype=float)
        out["drawn_x"], out["drawn_y"] = _floats(xy[:, 0]), _floats(xy[:, 1])
    elif isinstance(artist, PathCollection):
        xy = np.asarray(artist.get_offsets(), dtype=float)
        out["drawn_x"], out["drawn_y"] = _floats(xy[:, 0]), _floats(xy[:, 1])
    elif isinstance(artist, BarContainer):
        horizontal = getattr(artist, "orientation", "vertical") == "horizontal"
        vals = [r.get_width() if horizontal else r.get_height() for r in artist.patches]
        out["drawn_x"], out["drawn_y"] = None, _floats(vals)
    elif isinstance(artist, AxesImage):
        arr = np.ma.filled(np.ma.masked_invalid(np.asarray(artist.get_array(), dtype=float)), np.nan)
        out["drawn_x"], out["drawn_y"] = None, _floats(arr)
    else:
        raise TypeError(f"cannot read the numbers of {type(artist).__name__}")
    return out


def drawn_texts(fig):
    """Every non-empty text the renderer draws, with its box in pixels (x0, y0, x1, y1; origin
    at the bottom left), in drawing order."""
    seen = []
    original = Text.draw

    def draw(self, renderer):
        original(self, renderer)
        if self.get_visible() and self.get_text().strip():
            bb = Text.get_window_extent(self, renderer)  # the text's own box (an annotation's leader line not)
            seen.append({"text": self.get_text(), "box": [float(bb.x0), float(bb.y0), float(bb.x1), float(bb.y1)]})

    Text.draw = draw
    try:
        fig.canvas.draw()
    finally:
        Text.draw = original
    return seen


def overlaps(texts, width_px, height_px, slack_px=1.0):
    """Pairs of texts whose boxes overlap by more than slack_px each way, and texts that leave
    the canvas: [(a, b)] and [a]."""
    boxes = [t["box"] for t in texts]
    pairs = []
    for i in range(len(boxes)):
        a = boxes[i]
        for j in range(i + 1, len(boxes)):
            b = boxes[j]
            if min(a[2], b[2]) - max(a[0], b[0]) > slack_px and min(a[3], b[3]) - max(a[1], b[1]) > slack_px:
                pairs.append((texts[i]["text"], texts[j]["text"]))
    outside = [t["text"] for t in texts
               if t["box"][0] < -slack_px or t["box"][1] < -slack_px or t["box"][2] > width_px + slack_px
               or t["box"][3] > height_px + slack_px]
    return pairs, outside


# ---- labels placed where they overlap nothing ---------------------------------------------------

OFFSETS = [(6, 6), (6, -14), (-6, 6), (-6, -14), (10, -4), (-10, -4), (0, 12), (0, -18)]


def place_labels(fig, ax, points, labels, fontsize=8, avoid_points=None):
    """Annotates each (x, y) data point with its label at the first of a ring of offsets (growing
    rings, with a leader line past the first) where the label's box overlaps no other label, no
    text already in the figure and none of the points, and stays inside the axes. Returns the
    labels that found no place (none in practice; the caller says so in its caption)."""
    renderer = fig.canvas.get_renderer()
    fig.canvas.draw()
    # Boxes as rows of an array (x0, y0, x1, y1), tested all at once: a shortlist of hundreds of
    # points tries thousands of places.
    taken = [tuple(t.get_window_extent(renderer).extents) for t in fig.findobj(Text)
             if t.get_visible() and t.get_text().strip()]
    boxes = np.array(taken, dtype=float).reshape(-1, 4)
    pts = ax.transData.transform(np.asarray(avoid_points if avoid_points is not None else points, dtype=float))
    pts = pts.reshape(-1, 2)
    box_ax = ax.get_window_extent(renderer)
    failed = []
    for (x, y), label in zip(points, labels):
        placed = None
        for ring in (1, 2, 3, 4, 6):
            for dx, dy in OFFSETS:
                off = (dx * ring, dy * ring)
                # Tried without its leader line (the text's box alone; a leader's box is slow to get).
                ann = ax.annotate(label, (x, y), xytext=off, textcoords="offset points", fontsize=fontsize,
                                  ha="left" if dx >= 0 else "right", va="bottom", zorder=5)
                bb = ann.get_window_extent(renderer)
                inside = (bb.x0 >= box_ax.x0 + 1 and bb.x1 <= box_ax.x1 - 1 and bb.y0 >= box_ax.y0 + 1
                          and bb.y1 <= box_ax.y1 - 1)
                hit = inside and (
                    bool(np.any((boxes[:, 0] < bb.x1) & (boxes[:, 2] > bb.x0) & (boxes[:, 1] < bb.y1)
                                & (boxes[:, 3] > bb.y0)))
                    or bool(np.any((pts[:, 0] >= bb.x0 - 2) & (pts[:, 0] <= bb.x1 + 2) & (pts[:, 1] >= bb.y0 - 2)
                                   & (pts[:, 1] <= bb.y1 + 2))))
                if inside and not hit:
                    placed = (ann, ring, off, dx, tuple(bb.extents))
                    break
                ann.remove()
            if placed is not None:
                break
        if placed is None:
            failed.append(label)
            continue
        ann, ring, off, dx, box = placed
        if ring > 1:  # the leader line back to the point
            ann.remove()
            ann = ax.annotate(label, (x, y), xytext=off, textcoords="offset points", fontsize=fontsize,
                              ha="left" if dx >= 0 else "right", va="bottom",
                              arrowprops=dict(arrowstyle="-", lw=0.5, color="0.4"), zorder=5)
        boxes = np.vstack([boxes, box])
    return failed


def note_axes(ax, message):
    """An axes that carries only a message (data not in the file or not applicable)."""
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=12, wrap=True, transform=ax.transAxes,
            bbox=dict(boxstyle="round", facecolor="#fff3cd", edgecolor="#d39e00"))
    ax.set_xticks([])
    ax.set_yticks([])
    for s in ax.spines.values():
        s.set_visible(False)


def fmt(v, digits=4):
    if isinstance(v, (float, np.floating)):
        return f"{v:.{digits}g}"
    if isinstance(v, (np.integer,)):
        return str(int(v))
    return str(v)


def rate(v):
    """A throughput in full: 29,740 rather than 2.974e+04 (four significant digits below 1,000)."""
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.4g}"


def si(v, unit, digits=3):
    """A value with an SI prefix: 9.89e14 FLOP/s -> '989 TFLOP/s'."""
    for p, s in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= p:
            return f"{v / p:.{digits}g} {s}{unit}"
    return f"{v:.{digits}g} {unit}"
