"""The figures of the DSE report about the hardware and the trade-offs (used by
scripts/report.py): the roofline of each shortlisted platform, MFU and memory stalls by layer
type, and the Pareto projections of the four objectives. Conventions as in plot_figures.py."""
import itertools

import numpy as np
from matplotlib.lines import Line2D

import figure_kit as fk
from plot_figures import colour_of, grid, hide_unused, one_unit

TYPE_COLOURS = ["tab:red", "tab:blue", "tab:green", "tab:orange", "tab:purple", "tab:brown", "tab:pink",
                "tab:olive", "tab:cyan", "tab:gray"]
WORKLOAD_MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<"]


def shortlisted_points(d):
    """(entry, [archive positions]) per shortlisted platform: its shortlisted point of most
    throughput for each workload."""
    out = []
    for e in d.shortlisted_entries():
        ps = [d.best_shortlisted(e, w) for w in d.workload_ids()]
        out.append((e, [p for p in ps if p is not None]))
    return out


# ---- 5. roofline per platform -------------------------------------------------------------------

def roof_groups(d, hid):
    """The compute roofs of variant hid, equal values merged: [(flops_per_s, label, rows)], and its
    memory roof (bytes_per_s, row) or None."""
    rf = d.roofs.cols
    compute, memory = {}, None
    for r in d.roofs.of(hid):
        if rf["roof"][r] == "memory":
            memory = (float(rf["bytes_per_s"][r]), r)
        else:
            v = float(rf["flops_per_s"][r])
            if v <= 0:
                continue
            name = f"{rf['roof'][r]} {rf['precision'][r]}".strip() if rf["roof"][r] != "compute" else "compute"
            label, rows = compute.get(v, ("", []))
            compute[v] = (f"{label}/{name}" if label else name, rows + [r])
    return sorted(((v, lab, rows) for v, (lab, rows) in compute.items()), reverse=True), memory


def roofline_panel(b, d, ax, e, ps, types):
    """One platform: its roofs and the layers of its shortlisted points. Returns the count of
    layers left out and the roof labels (value, text) to place once the figure is laid out."""
    sh = d.sheets.cols
    a = d.archive
    xs_all, ys_all, skipped = [], [], 0
    for k, p in enumerate(ps):
        rows = d.sheets.of(a["index"][p])
        good = [r for r in rows if sh["flops"][r] > 0 and sh["dram_bytes"][r] > 0 and sh["latency_s"][r] > 0]
        skipped += len(rows) - len(good)
        marker = WORKLOAD_MARKERS[k % len(WORKLOAD_MARKERS)]
        for t in sorted({str(sh["type"][r]) for r in good}):
            sel = [r for r in good if sh["type"][r] == t]
            x = sh["flops"][sel] / sh["dram_bytes"][sel]
            y = sh["flops"][sel] / sh["latency_s"][sel]
            s = ax.scatter(x, y, s=36, marker=marker, color=TYPE_COLOURS[types.index(t) % len(TYPE_COLOURS)],
                           edgecolor="black", linewidth=0.4, zorder=4)
            b.record(s, f"layers {t} {d.label[p]}", "mapping_sheets", sel,
                     x=fk.axis_value([("flops", 1), ("dram_bytes", -1)]),
                     y=fk.axis_value([("flops", 1), ("latency_s", -1)]))
            xs_all += list(x)
            ys_all += list(y)
    compute, memory = roof_groups(d, int(a["hardware_id"][ps[0]]))
    lo = min(xs_all) / 8 if xs_all else 0.1
    hi = max(xs_all) * 8 if xs_all else 1e3
    labels = []
    if memory and compute:
        ridge = compute[0][0] / memory[0]
        lo, hi = min(lo, ridge / 30), max(hi, ridge * 30)
        xm = np.array([lo, ridge])
        line, = ax.plot(xm, memory[0] * xm, color="black", lw=2)
        b.record(line, f"memory roof {e}", "roofs", [memory[1], memory[1]], y=fk.axis_value([("bytes_per_s", 1)]),
                 kind="slope")
    for v, label, rows in compute:
        x0 = max(lo, v / memory[0]) if memory else lo
        line, = ax.plot([x0, hi], [v, v], color="0.25", lw=1.3, ls=":" if label.startswith("vector") else "-")
        b.record(line, f"roof {label} {e}", "roofs", [rows[0], rows[0]], y=fk.axis_value([("flops_per_s", 1)]))
        labels.append((v, f"{label}: {fk.si(v, 'FLOP/s')}"))
    if memory:
        labels.append((None, f"memory: {fk.si(memory[0], 'B/s')}"))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    floor = min(ys_all + ([memory[0] * lo] if memory else []) + [v for v, _, _ in compute] or [1.0])
    ax.set_ylim(floor / 3, (compute[0][0] if compute else max(ys_all or [1.0])) * 6)
    ax.set_xlabel("operational intensity (FLOP per DRAM byte)")
    ax.set_ylabel("attained FLOP/s (one chip)")
    ax.grid(True, which="major", alpha=0.3)
    return skipped, labels


def stack_labels(ax, labels):
    """Roof labels at the right end of their roof (the memory roof's at its left end), nudged up
    so that none overlaps another."""
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    x_lo, x_hi = ax.get_xlim()
    placed = []
    for v, text in sorted(labels, key=lambda t: (t[0] is not None, t[0] or 0)):
        if v is None:  # the memory roof: along the bottom left
            t = ax.text(0.02, 0.03, text, transform=ax.transAxes, ha="left", va="bottom", fontsize=8)
        else:
            t = ax.text(x_hi / 1.15, v * 1.1, text, ha="right", va="bottom", fontsize=8,
                        bbox=dict(boxstyle="square,pad=0.1", facecolor="white", edgecolor="none", alpha=0.85))
        bb = t.get_window_extent(renderer)
        for other in sorted(placed, key=lambda o: o.y0):
            if v is not None and bb.overlaps(other):
                _, y_px = ax.transData.transform((x_hi, t.get_position()[1]))
                t.set_y(ax.transData.inverted().transform((0, y_px + other.y1 - bb.y0 + 2))[1])
                bb = t.get_window_extent(renderer)
        placed.append(bb)


def roofline(d, out_dir):
    plats = [(e, ps) for e, ps in shortlisted_points(d) if ps]
    types = sorted({str(d.sheets.cols["type"][r]) for _, ps in plats for p in ps
                    for r in d.sheets.of(d.archive["index"][p])})
    nr, nc = grid(max(1, len(plats)), 3)
    b = fk.Builder("roofline.png", "Where do the workload's layers sit against each shortlisted platform's "
                   "roofs?", nr, nc, row_px=470)
    skipped, to_label = 0, []
    if not plats:
        fk.note_axes(b.axes[0, 0], "no point meets the budgets")
    for ax, (e, ps) in zip(b.axes.flat, plats):
        if not d.roofs.of(d.archive["hardware_id"][ps[0]]):
            fk.note_axes(ax, "roofs (/roofs) and mapping sheets:\nnot in this file")
            continue
        n, labels = roofline_panel(b, d, ax, e, ps, types)
        skipped += n
        to_label.append((ax, labels))
        ax.set_title(f"{e}: " + ", ".join(f"{d.label[p]} {d.variant_name(d.archive, p)}" for p in ps[:3])
                     + (" ..." if len(ps) > 3 else ""), fontsize=10)
    hide_unused(b.axes, max(1, len(plats)))
    handles = [Line2D([], [], ls="", marker="o", color=TYPE_COLOURS[i % len(TYPE_COLOURS)], mec="black", label=t)
               for i, t in enumerate(types)]
    wl = [w for w in d.workload_ids() if any(d.best_shortlisted(e, w) is not None for e, _ in plats)]
    if len(wl) > 1:
        handles += [Line2D([], [], ls="", marker=WORKLOAD_MARKERS[k % len(WORKLOAD_MARKERS)], color="0.5",
                           mec="black", label=d.workload_name(w)) for k, w in enumerate(wl)]
    b.layout(top_px=96, legend=(handles, [h.get_label() for h in handles]))
    b.fig.canvas.draw()
    for ax, labels in to_label:
        stack_labels(ax, labels)
    caption = (f"Scenario '{d.name}'; budgets: {d.budget_text()}. Per shortlisted platform, the layers of its "
               "shortlisted point of most throughput for each workload (colour: layer type as the mapping sheet "
               "names it; marker: workload), each at its FLOPs over its DRAM bytes and its FLOPs over its time (one "
               "occurrence, one chip, at the nominal clock). Roofs (/roofs): the memory roof (the outermost "
               "memory's bandwidth, the diagonal) and a compute roof per precision of the matrix engine (solid) "
               "and the vector unit (dotted); equal roofs share a line."
               + (f" {skipped} layers with no FLOPs or no DRAM traffic (collectives, gathers, data kept on chip) "
                  "have no place on a roofline and are left out." if skipped else ""))
    return b.finish(out_dir, caption)


# ---- 6. MFU and memory stalls by layer type -------------------------------------------------------

def mfu_stall(d, out_dir):
    plats = shortlisted_points(d)
    wids = [w for w in d.workload_ids() if any(d.best_shortlisted(e, w) is not None for e, _ in plats)]
    st = d.step.cols
    b = fk.Builder("mfu_stall.png", "Which layer types use the compute and which wait on memory, per platform?",
                   max(1, len(wids)), 3, row_px=380)
    if not wids or not d.step:
        for ax in b.axes.flat:
            fk.note_axes(ax, "no point meets the budgets" if not wids else "step breakdown (/step_breakdown):\n"
                         "not in this file")
    cols = [("mfu", 100.0, "MFU (% of the matrix peak)"), ("stall_fraction", 100.0, "memory stall (% of its time)"),
            ("share", 100.0, "share of the step's time (%)")]
    entries = [e for e, _ in plats]
    for i, w in enumerate(wids if d.step else []):
        pts = [(e, d.best_shortlisted(e, w)) for e in entries]
        pts = [(e, p) for e, p in pts if p is not None]
        types = []
        for _, p in pts:
            for r in d.step.of(d.archive["index"][p]):
                if st["type"][r] not in types:
                    types.append(str(st["type"][r]))
        width = 0.8 / max(1, len(pts))
        for ax, (field, scale, label) in zip(b.axes[i], cols):
            for j, (e, p) in enumerate(pts):
                rows = d.step.of(d.archive["index"][p])
                xs = [types.index(str(st["type"][r])) + (j - (len(pts) - 1) / 2) * width for r in rows]
                bars = ax.bar(xs, st[field][rows] * scale, width, color=f"C{j % 10}",
                              label=f"{e} ({d.label[p]})")
                b.record(bars, f"{field} {e} {d.workload_name(w)}", "step_breakdown", rows,
                         y=fk.axis_value([(field, 1)], scale))
            # Upright names when more than two: a slanted name's box reaches over its neighbour's.
            ax.set_xticks(range(len(types)), types, rotation=90 if len(types) > 2 else 0)
            ax.set_ylabel(label)
            ax.set_ylim(0, 105)
            ax.grid(True, axis="y", alpha=0.3)
            ax.set_title(f"{d.workload_name(w)}: {label.split(' (')[0]}", fontsize=10)
        b.axes[i, 0].legend(fontsize=8, loc="upper left")
    caption = (f"Scenario '{d.name}'; budgets: {d.budget_text()}. Per workload (row) and shortlisted platform "
               "(colour; its shortlisted point of most throughput), the step by layer type (/step_breakdown): "
               "left, the FLOPs of that type's layers over their time times the chip's matrix peak (MFU); middle, "
               "the share of their time spent waiting on memory (time-weighted memory-stall fraction); right, "
               "their share of the step's time. Layer times are one chip's at the nominal clock.")
    return b.finish(out_dir, caption)


# ---- 7. Pareto projections --------------------------------------------------------------------------

def objective_axes(d, wids):
    unit = one_unit(d, wids)
    noun = unit.split("/")[0].rstrip("s") if unit else "unit"
    e = d.archive["energy_per_sample_j"][d.selected] if len(d.selected) else d.archive["energy_per_sample_j"]
    e_scale, e_unit = (1.0, "J") if len(e) and np.median(e) >= 0.1 else (1e3, "mJ")
    return {"throughput_samples_per_s": (f"throughput ({unit or 'workload unit'})", 1.0, True),
            "latency_s": ("latency of a full batch (ms)", 1e3, True),
            "energy_per_sample_j": (f"energy per {noun} ({e_unit})", e_scale, True),
            "engineering_risk": ("engineering risk (0-1)", 1.0, False)}


def spans_decade(v):
    """Whether positive values span a decade: a log axis over less labels its minor ticks, which
    crowd (0.16, 0.18, 0.2 ... side by side), so such an axis stays linear."""
    v = np.asarray(v, dtype=float)
    v = v[v > 0]
    return len(v) > 0 and v.max() >= 10 * v.min()


def pareto_projections(d, out_dir):
    a, rows = d.archive, d.rows
    wids = d.workload_ids()
    axes_def = objective_axes(d, [w for w in wids if (a["workload_id"] == w).any()])
    b = fk.Builder("pareto_projections.png", "What does each objective cost in the others, and where does the "
                   "shortlist sit?", 2, 3, row_px=440)
    feas = np.nonzero(rows["feasible"].astype(bool))[0]
    pairs = list(itertools.combinations(axes_def, 2))
    for ax, (fx, fy) in zip(b.axes.flat, pairs):
        (lx, sx, logx), (ly, sy, logy) = axes_def[fx], axes_def[fy]
        ax.scatter(rows[fx][feas] * sx, rows[fy][feas] * sy, s=6, color="0.7", alpha=0.4, rasterized=True)
        for w in wids:
            m = [p for p in d.selected if a["workload_id"][p] == w]
            if m:
                s = ax.scatter(a[fx][m] * sx, a[fy][m] * sy, s=46, color=colour_of(d, w), edgecolor="black",
                               linewidth=0.6, marker="D", zorder=4)
                b.record(s, f"{fx} vs {fy} {d.workload_name(w)}", "archive", m, x=fk.axis_value([(fx, 1)], sx),
                         y=fk.axis_value([(fy, 1)], sy))
        ax.set_xscale("log" if logx and spans_decade(rows[fx][feas]) else "linear")
        ax.set_yscale("log" if logy and spans_decade(rows[fy][feas]) else "linear")
        if not logy:
            ax.set_ylim(-0.05, 1.05)
        ax.set_xlabel(lx)
        ax.set_ylabel(ly)
        ax.grid(True, which="major", alpha=0.3)
    handles = [Line2D([], [], ls="", marker="o", color="0.7", label="other feasible points" if d.points is not None
                      else "other archived points")]
    handles += [Line2D([], [], ls="", marker="D", color=colour_of(d, w), mec="black",
                       label=f"shortlisted: {d.workload_name(w)}") for w in wids if (a["workload_id"][d.selected] == w).any()]
    b.layout(top_px=90, legend=(handles, [h.get_label() for h in handles]))
    failed = []
    for ax, (fx, fy) in zip(b.axes.flat, pairs):
        (_, sx, _), (_, sy, _) = axes_def[fx], axes_def[fy]
        pts = [(a[fx][p] * sx, a[fy][p] * sy) for p in d.selected]
        failed += fk.place_labels(b.fig, ax, pts, [d.label[p] for p in d.selected], fontsize=7.5)
    note = (f" {len(failed)} labels found no free place and are left out ({', '.join(sorted(set(failed))[:12])})."
            if failed else "")
    caption = (f"Scenario '{d.name}'; budgets: {d.budget_text()}. Every pair of the four objectives (throughput "
               "max; latency of a full batch, energy per unit at the wall and engineering risk min). Diamonds: the "
               "shortlist (the front of each workload within the budgets), labelled with its S-numbers; grey: the "
               "other feasible points." + note)
    return b.finish(out_dir, caption)


def draw_all(d, out_dir, first):
    """Every figure: first the serving ones (plot_figures), then these."""
    return [f(d, out_dir) for f in first] + [f(d, out_dir) for f in (roofline, mfu_stall, pareto_projections)]
