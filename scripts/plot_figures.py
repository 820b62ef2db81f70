"""The figures of the DSE report (used by scripts/report.py). Every figure is
FIG_W_PX x FIG_H_PX pixels, with a title, labelled axes with units and a caption that
names the scenario, SLA and budget. Data missing from the file gives a figure that
says "not in this file" instead of a blank one."""
import itertools
import os
from dataclasses import dataclass, field

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.colors import LogNorm  # noqa: E402

FIG_W_PX, FIG_H_PX, DPI = 1400, 900, 100
MAX_PANELS = 6
BOTTLENECK_COLOURS = {"compute": "tab:red", "memory": "tab:blue", "overhead": "tab:orange",
                      "interconnect": "tab:purple", "capacity": "tab:gray"}
# Objective field -> (axis label with unit, scale to the unit, log axis).
AXES = {"throughput_samples_per_s": ("throughput (samples/s)", 1.0, True),
        "latency_s": ("latency (ms)", 1e3, True),
        "energy_per_sample_j": ("energy per sample (mJ)", 1e3, True),
        "engineering_risk": ("engineering risk (0-1, lower is better)", 1.0, False)}


@dataclass
class Context:
    name: str
    source: str
    sla_s: object
    power_w: object
    archive: dict
    points: object
    selected: np.ndarray
    mapping: object
    risk: object
    entries: dict
    attrs: dict
    roof: object = None
    budgets: dict = field(default_factory=dict)
    knobs: list = field(default_factory=list)  # per archive row: its variant's knobs (/variants)

    def budget_text(self):
        sla = f"SLA p99 <= {self.sla_s * 1e3:g} ms" if self.sla_s is not None else "no SLA"
        pw = f"power budget <= {self.power_w:g} W" if self.power_w is not None else "no power budget"
        area = f", area <= {self.budgets['area_mm2']:g} mm2" if self.budgets.get("area_mm2") is not None else ""
        return f"{sla}, {pw}{area}"

    def caption(self, extra=""):
        return f"Scenario '{self.name}' ({self.source}); {self.budget_text()}." + (f" {extra}" if extra else "")

    def all_rows(self):
        """The evaluated points when stored, else the archive."""
        return self.points if self.points is not None else self.archive

    def platforms(self):
        """Shortlisted hardware names, best shortlisted throughput first."""
        a, best = self.archive, {}
        for p in self.selected:
            hw = a["hardware"][p]
            best[hw] = max(best.get(hw, 0.0), a["throughput_samples_per_s"][p])
        return sorted(best, key=lambda h: -best[h])


@dataclass
class Figure:
    file: str
    title: str
    caption: str
    notes: list = field(default_factory=list)


def fmt(v):
    if isinstance(v, (float, np.floating)):
        return f"{v:.4g}"
    if isinstance(v, (np.integer,)):
        return str(int(v))
    return str(v)


def new_figure(nrows=1, ncols=1):
    fig, axes = plt.subplots(nrows, ncols, figsize=(FIG_W_PX / DPI, FIG_H_PX / DPI), dpi=DPI, squeeze=False)
    return fig, axes


def finish(fig, out_dir, file, title, caption):
    fig.suptitle(title, fontsize=15, fontweight="bold")
    fig.text(0.01, 0.01, caption, fontsize=10, style="italic", wrap=True, va="bottom")
    fig.tight_layout(rect=(0, 0.05, 1, 0.95))
    fig.savefig(os.path.join(out_dir, file), dpi=DPI)  # fixed size: no bbox_inches="tight"
    plt.close(fig)
    return Figure(file, title, caption)


def note_axes(ax, message, xlabel, ylabel):
    """An axes that carries only a message (data not in the file), still labelled."""
    ax.text(0.5, 0.5, message, ha="center", va="center", fontsize=14, wrap=True,
            bbox=dict(boxstyle="round", facecolor="#fff3cd", edgecolor="#d39e00"), transform=ax.transAxes)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_xticks([])
    ax.set_yticks([])


def grid_for(n):
    n = max(1, min(n, MAX_PANELS))
    cols = min(3, n)
    return (n + cols - 1) // cols, cols


def hide_unused(axes, used):
    for ax in axes.flat[used:]:
        ax.set_visible(False)


def workload_colours(ctx):
    names = sorted(set(ctx.archive["workload"]))
    cmap = plt.get_cmap("tab10")
    return {w: cmap(i % 10) for i, w in enumerate(names)}


# ---- figures ------------------------------------------------------------------------------------

def pareto_projections(ctx, out_dir):
    rows, a, sel = ctx.all_rows(), ctx.archive, ctx.selected
    pairs = list(itertools.combinations(AXES, 2))
    fig, axes = new_figure(2, 3)
    colours = workload_colours(ctx)
    feasible = rows["feasible"].astype(bool)
    for ax, (fx, fy) in zip(axes.flat, pairs):
        (lx, sx, logx), (ly, sy, logy) = AXES[fx], AXES[fy]
        ax.scatter(rows[fx][feasible] * sx, rows[fy][feasible] * sy, s=10, color="0.6", alpha=0.25,
                   label="evaluated (dominated or over budget)" if ctx.points is not None else "archived")
        for w, c in colours.items():
            m = [p for p in sel if a["workload"][p] == w]
            if m:
                ax.scatter(a[fx][m] * sx, a[fy][m] * sy, s=55, color=c, edgecolor="black", linewidth=0.6,
                           marker="D", label=f"shortlisted: {w}", zorder=3)
        if logx:
            ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
        ax.set_xlabel(lx)
        ax.set_ylabel(ly)
        ax.grid(True, which="major", alpha=0.3)
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper right", fontsize=9, bbox_to_anchor=(0.99, 0.995))
    return finish(fig, out_dir, "pareto_projections.png", "Pareto front projections, each pair of objectives",
                  ctx.caption("Diamonds: shortlisted (per-workload front within budget); grey: other feasible points."))


def best_per_platform_workload(ctx, rows, mask):
    """(platform, workload) -> row position with the best throughput among mask."""
    best = {}
    for p in np.nonzero(mask)[0]:
        key = (rows["hardware"][p], rows["workload"][p])
        if key not in best or rows["throughput_samples_per_s"][p] > rows["throughput_samples_per_s"][best[key]]:
            best[key] = p
    return best


def trade_curve(ctx, out_dir):
    a, sel = ctx.archive, ctx.selected
    platforms = ctx.platforms()[:12]
    workloads = sorted(set(a["workload"][sel])) if len(sel) else []
    fig, axes = new_figure(1, 4)
    if not platforms:
        for ax, f in zip(axes.flat, AXES):
            note_axes(ax, "no point meets\nthe budgets", "platform", AXES[f][0])
        return finish(fig, out_dir, "trade_curve.png", "Platform trade curve (shortlisted platforms)", ctx.caption())
    mask = np.zeros(len(a["index"]), dtype=bool)
    mask[sel] = True
    best = best_per_platform_workload(ctx, a, mask)
    colours = workload_colours(ctx)
    width = 0.8 / max(1, len(workloads))
    x = np.arange(len(platforms))
    for ax, f in zip(axes.flat, AXES):
        label, scale, logy = AXES[f]
        for j, w in enumerate(workloads):
            vals = [a[f][best[(h, w)]] * scale if (h, w) in best else np.nan for h in platforms]
            ax.bar(x + (j - (len(workloads) - 1) / 2) * width, vals, width, color=colours[w], label=w)
        ax.set_xticks(x, platforms, rotation=30, ha="right")
        ax.set_xlabel("shortlisted platform")
        ax.set_ylabel(label)
        if logy:
            ax.set_yscale("log")
        ax.grid(True, axis="y", alpha=0.3)
    axes.flat[0].legend(title="workload", fontsize=9)
    return finish(fig, out_dir, "trade_curve.png", "Platform trade curve: throughput, latency, energy, risk",
                  ctx.caption("Per platform and workload: its shortlisted point of highest throughput; "
                              "a missing bar means no shortlisted point for that workload."))


def workload_fit(ctx, out_dir):
    rows = ctx.all_rows()
    shortlisted = ctx.platforms()
    platforms = (shortlisted + sorted(set(rows["hardware"]) - set(shortlisted)))[:20]
    workloads = sorted(set(rows["workload"]))
    ok = rows["feasible"].astype(bool)
    for name, bound in ctx.budgets.items():
        ok &= rows[name] <= bound
    best = best_per_platform_workload(ctx, rows, ok)
    m = np.full((len(platforms), len(workloads)), np.nan)
    for i, h in enumerate(platforms):
        for j, w in enumerate(workloads):
            if (h, w) in best:
                m[i, j] = rows["throughput_samples_per_s"][best[(h, w)]]
    fig, axes = new_figure()
    ax = axes[0, 0]
    finite = m[np.isfinite(m)]
    norm = LogNorm(vmin=finite.min(), vmax=max(finite.max(), finite.min() * 1.01)) if finite.size else None
    im = ax.imshow(np.ma.masked_invalid(m), cmap="viridis", norm=norm, aspect="auto")
    ax.set_facecolor("#f2dede")
    for i in range(len(platforms)):
        for j in range(len(workloads)):
            if np.isfinite(m[i, j]):
                b = rows["batch"][best[(platforms[i], workloads[j])]]
                ax.text(j, i, f"{m[i, j]:.4g} samples/s\n(batch {int(b)})", ha="center", va="center", fontsize=10,
                        color="white" if norm is not None and norm(m[i, j]) < 0.6 else "black")
            else:
                ax.text(j, i, "does not fit", ha="center", va="center", fontsize=11, color="#a94442",
                        fontweight="bold")
    ax.set_xticks(range(len(workloads)), workloads)
    ax.set_yticks(range(len(platforms)), [h + (" *" if h in shortlisted else "") for h in platforms])
    ax.set_xlabel("workload")
    ax.set_ylabel("platform (shortlisted first, * = shortlisted)")
    if norm is not None:
        fig.colorbar(im, ax=ax, label="best throughput within SLA and budget (samples/s, log scale)")
    return finish(fig, out_dir, "workload_fit.png", "Workload fit: throughput at SLA, platforms x workloads",
                  ctx.caption("Cell: highest throughput over batch sizes of a feasible point meeting the SLA and "
                              "power budget; 'does not fit': no such point."))


def latency_sweep(ctx, out_dir):
    rows = ctx.all_rows()
    platforms = ctx.platforms()
    nr, nc = grid_for(len(platforms))
    fig, axes = new_figure(nr, nc)
    colours = workload_colours(ctx)
    p50_field = "p50_latency_s" if "p50_latency_s" in rows else "latency_s"
    if not platforms:
        note_axes(axes[0, 0], "no point meets the budgets", "throughput (samples/s)", "latency (ms)")
    for ax, h in zip(axes.flat, platforms[:MAX_PANELS]):
        for w, c in colours.items():
            m = np.nonzero((rows["hardware"] == h) & (rows["workload"] == w) & rows["feasible"].astype(bool))[0]
            if not len(m):
                continue
            m = m[np.argsort(rows["batch"][m])]
            t = rows["throughput_samples_per_s"][m]
            p50, p99 = rows[p50_field][m] * 1e3, rows["p99_latency_s"][m] * 1e3
            if np.allclose(p50, p99, rtol=1e-12, atol=0):
                ax.plot(t, p50, "-o", color=c, ms=4, label=f"{w} p50 = p99 (no queueing spread)")
            else:
                ax.plot(t, p50, "-o", color=c, ms=4, label=f"{w} p50")
                ax.plot(t, p99, "--s", color=c, ms=4, mfc="none", label=f"{w} p99")
            for k in (0, len(m) - 1):
                ax.annotate(f"b={int(rows['batch'][m[k]])}", (t[k], rows["p99_latency_s"][m[k]] * 1e3),
                            fontsize=8, xytext=(3, 3), textcoords="offset points")
        if ctx.sla_s is not None:
            ax.axhline(ctx.sla_s * 1e3, color="red", lw=1.5, label=f"SLA {ctx.sla_s * 1e3:g} ms")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(h, fontsize=11)
        ax.set_xlabel("throughput (samples/s)")
        ax.set_ylabel("latency (ms)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    hide_unused(axes, max(1, min(len(platforms), MAX_PANELS)))
    extra = "Points: batch sizes (first and last labelled b=)."
    if p50_field == "latency_s":
        extra += " p50 is the batch latency; p99 from p99_latency_s (equal when the file has no queueing model)."
    if len(platforms) > MAX_PANELS:
        extra += f" First {MAX_PANELS} of {len(platforms)} shortlisted platforms shown."
    if ctx.points is None:
        extra += " Only archived points (run with --store all for every batch size)."
    return finish(fig, out_dir, "latency_sweep.png", "Latency-throughput sweep per shortlisted platform",
                  ctx.caption(extra))


def perf_per_watt(ctx, out_dir):
    rows = ctx.all_rows()
    a, sel = ctx.archive, ctx.selected
    fig, axes = new_figure(2, 2)
    colours = workload_colours(ctx)
    mask = np.zeros(len(a["index"]), dtype=bool)
    mask[sel] = True
    best = best_per_platform_workload(ctx, a, mask)
    platforms = ctx.platforms()[:12]
    workloads = sorted(colours)
    x = np.arange(len(platforms))
    width = 0.8 / max(1, len(workloads))
    panels = [(axes[0, 0], lambda p: a["throughput_samples_per_s"][p] / a["power_w"][p], "throughput per watt (samples/s/W)"),
              (axes[0, 1], lambda p: a["throughput_samples_per_s"][p] / a["area_mm2"][p] if a["area_mm2"][p] > 0 else np.nan,
               "throughput per area (samples/s/mm²)")]
    for ax, fn, label in panels:
        if label.startswith("throughput per area") and not np.any(a["area_mm2"] > 0):
            note_axes(ax, "area_mm2 is 0 for every point:\nplatform area not in this file", "shortlisted platform",
                      label)
            continue
        for j, w in enumerate(workloads):
            vals = [fn(best[(h, w)]) if (h, w) in best else np.nan for h in platforms]
            ax.bar(x + (j - (len(workloads) - 1) / 2) * width, vals, width, color=colours[w], label=w)
        ax.set_xticks(x, platforms, rotation=20, ha="right")
        ax.set_xlabel("shortlisted platform")
        ax.set_ylabel(label)
        ax.set_yscale("log")
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=8, title="workload")
    ax = axes[1, 0]
    feas = rows["feasible"].astype(bool)
    ax.scatter(rows["power_w"][feas], rows["throughput_samples_per_s"][feas], s=8, color="0.6", alpha=0.3,
               label="feasible points")
    for w in workloads:
        m = [p for p in sel if a["workload"][p] == w]
        if m:
            ax.scatter(a["power_w"][m], a["throughput_samples_per_s"][m], s=50, marker="D", color=colours[w],
                       edgecolor="black", label=f"shortlisted: {w}")
    if ctx.power_w is not None:
        ax.axvline(ctx.power_w, color="red", label=f"power budget {ctx.power_w:g} W")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("power (W)")
    ax.set_ylabel("throughput (samples/s)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    ax = axes[1, 1]
    for w in workloads:
        m = [p for p in sel if a["workload"][p] == w]
        if m:
            x_ms = a["p99_latency_s"][m] * 1e3
            y = a["throughput_samples_per_s"][m] / a["power_w"][m]
            ax.scatter(x_ms, y, s=50, marker="D", color=colours[w], edgecolor="black", label=w)
            for p, xv, yv in zip(m, x_ms, y):
                ax.annotate(f"{a['hardware'][p]} b={int(a['batch'][p])}", (xv, yv), fontsize=7, xytext=(3, 3),
                            textcoords="offset points")
    if ctx.sla_s is not None:
        ax.axvline(ctx.sla_s * 1e3, color="red", label=f"SLA {ctx.sla_s * 1e3:g} ms")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("p99 latency (ms)")
    ax.set_ylabel("throughput per watt (samples/s/W)")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    for axx, t in zip(axes.flat, ["efficiency per platform", "area efficiency per platform",
                                  "power vs throughput (all feasible points)", "efficiency vs p99 latency (shortlist)"]):
        axx.set_title(t, fontsize=11)
    return finish(fig, out_dir, "perf_per_watt.png", "Performance per watt dashboard",
                  ctx.caption("Bars: each platform's shortlisted point of highest throughput per workload; "
                              "power = energy per batch / batch latency."))


def roofline(ctx, out_dir):
    rows = ctx.all_rows()
    platforms = ctx.platforms()
    nr, nc = grid_for(len(platforms))
    fig, axes = new_figure(nr, nc)
    sources = []
    if not platforms:
        note_axes(axes[0, 0], "no point meets the budgets", "operational intensity (FLOP/byte)",
                  "attained performance (FLOP/s)")
    sel_idx = {int(ctx.archive["index"][p]): p for p in ctx.selected}
    for ax, h in zip(axes.flat, platforms[:MAX_PANELS]):
        xs, ys, cs, labels = [], [], [], []
        layers = []
        if ctx.mapping:
            for i, p in sel_idx.items():
                if ctx.archive["hardware"][p] == h:
                    layers += ctx.mapping.get(i, [])
        if layers:
            sources.append("operators from /mapping_sheets")
            for layer in layers:
                f, b, t = float(layer.get("flops", 0)), float(layer.get("dram_bytes", 0)), float(layer.get("latency_s", 0))
                if f > 0 and b > 0 and t > 0:
                    xs.append(f / b)
                    ys.append(f / t)
                    cs.append(str(layer.get("bottleneck", "")))
                    labels.append(str(layer.get("layer", "")))
        else:
            sources.append("whole-workload points (no /mapping_sheets: per-operator placement not in this file)")
            m = np.nonzero((rows["hardware"] == h) & rows["feasible"].astype(bool))[0]
            for p in m:
                f, b, t = rows["flops"][p], rows["dram_bytes"][p], rows["latency_s"][p]
                if f > 0 and b > 0 and t > 0:
                    xs.append(f / b)
                    ys.append(f / t)
                    cs.append(str(rows["bottleneck"][p]))
                    labels.append(f"{rows['workload'][p]} b={int(rows['batch'][p])}")
        roof = ctx.roof(h) if ctx.roof else None
        xs_arr = np.array(xs) if xs else np.array([1.0])
        lo, hi = max(xs_arr.min() / 4, 1e-3), xs_arr.max() * 4
        if roof:
            peak, bw = roof
            lo, hi = min(lo, peak / bw / 8), max(hi, peak / bw * 8)
            oi = np.logspace(np.log10(lo), np.log10(hi), 200)
            ax.plot(oi, np.minimum(peak, bw * oi), color="black", lw=2,
                    label=f"roof: {peak / 1e12:.3g} TFLOP/s, {bw / 1e9:.3g} GB/s")
            ax.axvline(peak / bw, color="black", ls=":", lw=1)
        for cls in sorted(set(cs)):
            k = [i for i, c in enumerate(cs) if c == cls]
            ax.scatter(np.array(xs)[k], np.array(ys)[k], s=40, color=BOTTLENECK_COLOURS.get(cls, "tab:green"),
                       edgecolor="black", linewidth=0.5, label=f"{cls}-bound", zorder=3)
        for x, y, lab in list(zip(xs, ys, labels))[:16]:
            ax.annotate(lab, (x, y), fontsize=6, xytext=(3, -8), textcoords="offset points")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlim(lo, hi)
        ax.set_title(h + ("" if roof else " (roof not in this file)"), fontsize=11)
        ax.set_xlabel("operational intensity (FLOP/byte of DRAM)")
        ax.set_ylabel("attained performance (FLOP/s)")
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    hide_unused(axes, max(1, min(len(platforms), MAX_PANELS)))
    extra = "Placed: " + "; ".join(sorted(set(sources))) + "." if sources else ""
    extra += " Roof from the scenario's peak FLOP/s and DRAM bandwidth; colour: bottleneck class."
    return finish(fig, out_dir, "roofline.png", "Roofline per shortlisted platform", ctx.caption(extra))


def mfu_stall(ctx, out_dir):
    fig, axes = new_figure(1, 2)
    layers = []
    if ctx.mapping:
        for p in ctx.selected:
            layers += ctx.mapping.get(int(ctx.archive["index"][p]), [])
    if not layers:
        for ax, yl in zip(axes.flat, ["MFU (% of peak FLOP/s)", "memory-stall fraction (% of layer time)"]):
            note_axes(ax, "per-layer breakdown (/mapping_sheets):\nnot in this file", "layer type", yl)
        return finish(fig, out_dir, "mfu_stall.png", "MFU and memory-stall fraction by layer type",
                      ctx.caption("Needs /mapping_sheets (per-layer pct_of_peak and stall_fraction)."))
    types = sorted({str(layer.get("type", "?")) for layer in layers})
    platforms = ctx.platforms()[:MAX_PANELS]
    sel_hw = {int(ctx.archive["index"][p]): ctx.archive["hardware"][p] for p in ctx.selected}
    by = {}
    for p_idx, hw in sel_hw.items():
        for layer in (ctx.mapping or {}).get(p_idx, []):
            t = float(layer.get("latency_s", 0.0))
            d = by.setdefault((hw, str(layer.get("type", "?"))), [0.0, 0.0, 0.0])
            d[0] += t
            d[1] += t * float(layer.get("pct_of_peak", 0.0))
            d[2] += t * float(layer.get("stall_fraction", 0.0))
    x = np.arange(len(types))
    width = 0.8 / max(1, len(platforms))
    cmap = plt.get_cmap("tab10")
    for j, h in enumerate(platforms):
        off = (j - (len(platforms) - 1) / 2) * width
        mfu = [by[(h, t)][1] / by[(h, t)][0] if (h, t) in by and by[(h, t)][0] > 0 else 0 for t in types]
        stall = [100 * by[(h, t)][2] / by[(h, t)][0] if (h, t) in by and by[(h, t)][0] > 0 else 0 for t in types]
        axes[0, 0].bar(x + off, mfu, width, color=cmap(j), label=h)
        axes[0, 1].bar(x + off, stall, width, color=cmap(j), label=f"{h}: memory stall")
        axes[0, 1].bar(x + off, [100 - s for s in stall], width, bottom=stall, color=cmap(j), alpha=0.3,
                       label=f"{h}: other")
    for ax, yl in zip(axes.flat, ["MFU (% of peak FLOP/s, latency-weighted)", "share of layer time (%)"]):
        ax.set_xticks(x, types, rotation=20, ha="right")
        ax.set_xlabel("layer type")
        ax.set_ylabel(yl)
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize=7)
    return finish(fig, out_dir, "mfu_stall.png", "MFU and memory-stall fraction by layer type",
                  ctx.caption("Stacked: memory-stall share (solid) and the rest (faint) of each layer type's time, "
                              "over the shortlisted points of each platform."))


def risk_map(ctx, out_dir):
    a = ctx.archive
    platforms = ctx.platforms()[:12]
    fig, axes = new_figure(1, 2)
    risk = ctx.risk
    hw_col = next((c for c in ("platform", "hardware") if risk is not None and c in risk), None)
    if risk is not None and hw_col and "owner" in risk:
        owners = sorted(set(risk["owner"]))
        sev = risk.get("severity", risk.get("risk", np.ones(len(risk["owner"]))))
        m = np.zeros((len(platforms), len(owners)))
        for i, h in enumerate(platforms):
            for j, o in enumerate(owners):
                m[i, j] = np.sum(np.asarray(sev, dtype=float)[(risk[hw_col] == h) & (risk["owner"] == o)])
        im = axes[0, 0].imshow(m, cmap="Reds", aspect="auto")
        axes[0, 0].set_xticks(range(len(owners)), owners, rotation=20, ha="right")
        axes[0, 0].set_yticks(range(len(platforms)), platforms)
        fig.colorbar(im, ax=axes[0, 0], label="summed risk severity (unitless)")
        note = "Risk items from /risk_items."
    else:
        note_axes(axes[0, 0], "risk items by owner (/risk_items):\nnot in this file", "owner", "shortlisted platform")
        note = "No /risk_items: right panel shows each platform's engineering_risk (scenario figure)."
    axes[0, 0].set_xlabel("owner")
    axes[0, 0].set_ylabel("shortlisted platform")
    ax = axes[0, 1]
    vals = [max(a["engineering_risk"][p] for p in ctx.selected if a["hardware"][p] == h) for h in platforms]
    ax.barh(range(len(platforms)), vals, color=plt.get_cmap("RdYlGn_r")(np.array(vals) if vals else []))
    for i, v in enumerate(vals):
        ax.text(v, i, f" {v:.2f}", va="center", fontsize=10)
    ax.set_yticks(range(len(platforms)), platforms)
    ax.set_xlim(0, 1)
    ax.set_xlabel("engineering risk (0 = proven, 1 = unproven; unitless)")
    ax.set_ylabel("shortlisted platform")
    ax.grid(True, axis="x", alpha=0.3)
    return finish(fig, out_dir, "risk_map.png", "Owner and risk map of the shortlisted platforms",
                  ctx.caption(note))


def draw_all(ctx, out_dir):
    return [f(ctx, out_dir) for f in (pareto_projections, trade_curve, workload_fit, latency_sweep, perf_per_watt,
                                       roofline, mfu_stall, risk_map)]
