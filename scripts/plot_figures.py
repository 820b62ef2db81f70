"""The figures of the DSE report that answer where each workload fits and what it costs to
serve (used by scripts/report.py; scripts/plot_hardware.py has the hardware figures). Each
figure answers one question (its title), is FIG_W_PX wide, takes its units from the workload
(tokens/s, images/s, samples/s: /workloads), records what it draws (figure_kit.Builder.record)
and says in place of a panel when the file lacks its data."""
import numpy as np
from matplotlib.colors import Normalize
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle

import figure_kit as fk
import report_data as rd

WORKLOAD_COLOURS = ["tab:blue", "tab:orange", "tab:green", "tab:purple", "tab:brown", "tab:pink", "tab:olive",
                    "tab:cyan"]
MARK_STYLE = {"memory": ("#c8c8c8", "xx"), "sla": ("#f5c99b", "//"), "power": ("#f2a5a5", "\\\\"),
              "area": ("#d9c2e9", ".."), "infeasible": ("#e0e0e0", "--"), "unevaluated": ("#ffffff", ""),
              "unstored": ("#ffffff", "")}


def colour_of(d, wid):
    return WORKLOAD_COLOURS[d.workload_ids().index(int(wid)) % len(WORKLOAD_COLOURS)]


def grid(n, max_cols=4):
    cols = max(1, min(max_cols, n))
    return (n + cols - 1) // cols, cols


def hide_unused(axes, used):
    for ax in list(axes.flat)[used:]:
        ax.set_visible(False)


def one_unit(d, wids):
    units = {d.unit(w) for w in wids}
    return units.pop() if len(units) == 1 else None


# ---- 1. workload fit matrix ------------------------------------------------------------------------

def workload_fit(d, out_dir):
    entries, wids = d.entries(), d.workload_ids()
    cells = {(e, w): rd.fit_cell(d, e, w) for e in entries for w in wids}
    b = fk.Builder("workload_fit.png", "Which platform serves each workload within the budgets, and how fast?",
                   1, 1, row_px=max(320, 64 * len(entries) + 150), extra_px=30)
    ax = b.axes[0, 0]
    footnotes, letters = [], {}
    for j, w in enumerate(wids):
        col = [cells[(e, w)] for e in entries]
        vals = np.array([d.rows["throughput_samples_per_s"][p] if m == "fits" else np.nan for m, p in col])
        finite = vals[np.isfinite(vals)]
        norm = Normalize(vmin=0.0, vmax=finite.max() if finite.size else 1.0)
        im = ax.imshow(vals.reshape(-1, 1), cmap="YlGn", norm=norm, aspect="auto",
                       extent=(j - 0.5, j + 0.5, len(entries) - 0.5, -0.5))
        b.record(im, f"fit {d.workload_name(w)}", d.rows_source, [p if m == "fits" else -1 for m, p in col],
                 y=fk.axis_value([("throughput_samples_per_s", 1)]))
        for i, (m, p) in enumerate(col):
            if m == "fits":
                letter = chr(ord("a") + len(footnotes)) if len(footnotes) < 26 else str(len(footnotes) + 1)
                letters[(i, j)] = letter
                footnotes.append((letter, p))
                shade = "white" if norm(vals[i]) > 0.6 else "black"
                ax.text(j, i, f"{fk.rate(vals[i])} {d.unit(w)}\nbatch {int(d.rows['batch'][p])}  [{letter}]",
                        ha="center", va="center", fontsize=10, color=shade)
            else:
                face, hatch = MARK_STYLE[m]
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor=face, hatch=hatch, edgecolor="0.55",
                                       linewidth=0.0))
                ax.text(j, i, rd.FIT_MARKS[m], ha="center", va="center", fontsize=10, color="#6b2222",
                        fontweight="bold", bbox=dict(boxstyle="round,pad=0.2", facecolor="white", edgecolor="none"))
    ax.set_xlim(-0.5, len(wids) - 0.5)
    ax.set_ylim(len(entries) - 0.5, -0.5)
    ax.set_xticks(range(len(wids)), [f"{d.workload_name(w)}\n({d.unit(w)})" for w in wids])
    ax.set_yticks(range(len(entries)), entries)
    for k in range(1, len(wids)):
        ax.axvline(k - 0.5, color="white", lw=3)
    for k in range(1, len(entries)):
        ax.axhline(k - 0.5, color="white", lw=3)
    ax.set_xlabel("workload (throughput unit)")
    ax.set_ylabel("platform (hardware entry)")
    used = sorted({m for m, _ in cells.values()} - {"fits"})
    handles = [Patch(facecolor=MARK_STYLE[m][0], hatch=MARK_STYLE[m][1], edgecolor="0.55", label=rd.FIT_MARKS[m])
               for m in used]
    handles.insert(0, Patch(facecolor="#4c9a5a", label="best throughput within the budgets (darker: nearer "
                                                       "the column's best)"))
    b.tables.append(("Knobs of each cell's point", ["cell", "platform", "workload", "point", "variant", "knobs",
                                                    "batch", "throughput"],
                     [[f"[{letter}]", d.entry(d.rows, p), d.workload_name(d.rows["workload_id"][p]),
                       int(d.rows["index"][p]), d.variant_name(d.rows, p), d.knobs(d.rows, p),
                       int(d.rows["batch"][p]),
                       f"{fk.rate(d.rows['throughput_samples_per_s'][p])} {d.unit(d.rows['workload_id'][p])}"]
                      for letter, p in footnotes]))
    stored = ("every evaluated point" if d.points is not None else
              "the archived points only (run with --store all to tell why a cell has none)")
    caption = (f"Scenario '{d.name}'; budgets: {d.budget_text()}. Each cell: the point of highest throughput among "
               f"{stored} of that platform (any of its variants, knobs and batch sizes) and workload that meets every "
               "budget; its knobs are in the table under the figure ([letter]). A cell without one says why: 'does "
               "not fit in memory' (no feasible point fits the chip's memory or the memory budget), 'misses the SLA' "
               "(feasible points, none within the latency SLAs), 'over the power budget' (some meet the SLAs, none "
               "also within the power budget), 'over the area budget', 'not evaluated' (the platform's kind cannot "
               "run the workload, or no point of it was evaluated).")
    return b.finish(out_dir, caption, top_px=86, legend=(handles, [h.get_label() for h in handles]))


# ---- 2. latency-throughput sweep ------------------------------------------------------------------

def knee(p99):
    """The knee of a latency curve: its last point whose p99 is at most twice the p99 at the
    lowest load (beyond it, queueing takes over); None for a curve of fewer than 3 points."""
    if len(p99) < 3 or not p99[0] > 0:
        return None
    within = np.nonzero(np.asarray(p99) <= 2.0 * p99[0])[0]
    return int(within[-1]) if len(within) else None


def sweep_panels(d):
    """(entry, unit, [(workload id, archive position)]) per panel: the shortlisted point of most
    throughput of each workload on each shortlisted entry, workloads of one unit together."""
    panels = []
    for e in d.shortlisted_entries():
        by_unit = {}
        for w in d.workload_ids():
            # /serving_curves holds the Pareto points' curves: a shortlisted point off the
            # unconstrained front has none, so the best one with a curve is drawn.
            p = d.best_shortlisted(e, w, lambda q: bool(d.curves.of(d.archive["index"][q]))) \
                if d.unit(w) == "tokens/s" and d.curves else None
            p = p if p is not None else d.best_shortlisted(e, w)
            if p is not None:
                by_unit.setdefault(d.unit(w), []).append((w, p))
        panels += [(e, u, pts) for u, pts in by_unit.items()]
    return panels


def served_sweep(b, d, ax, w, p, metric):
    """One workload's serving curve on ax (p50 solid, p99 dashed, knee, the workload's own rate)."""
    key, name, (f50, f99), _ = metric
    a, c = d.archive, d.curves.cols
    rows = [r for r in d.curves.of(a["index"][p]) if c["feasible"][r]]
    if not rows:
        return False
    x = c["tokens_per_s"][rows]
    colour, lab = colour_of(d, w), f"{d.workload_name(w)} ({d.label[p]})"
    for f, style in ((f50, "-"), (f99, "--")):
        line, = ax.plot(x, c[f][rows] * 1e3, style, color=colour, marker="o" if style == "-" else "s", ms=3.5,
                        mfc=colour if style == "-" else "none", label=lab if style == "-" else None)
        b.record(line, f"{name} {f} {d.label[p]}", "serving_curves", rows, x=fk.axis_value([("tokens_per_s", 1)]),
                 y=fk.axis_value([(f, 1)], 1e3))
    k = knee(c[f99][rows])
    if k is not None:
        s = ax.scatter([x[k]], [c[f99][rows[k]] * 1e3], marker="*", s=160, color=colour, edgecolor="black", zorder=5)
        b.record(s, f"knee {d.label[p]}", "serving_curves", [rows[k]], x=fk.axis_value([("tokens_per_s", 1)]),
                 y=fk.axis_value([(f99, 1)], 1e3))
    own = [r for r in rows if c["at_workload_rate"][r]]
    if own:
        s = ax.scatter(c["tokens_per_s"][own], c[f99][own] * 1e3, marker="o", s=90, facecolor="none",
                       edgecolor="black", linewidth=1.4, zorder=6)
        b.record(s, f"workload rate {d.label[p]}", "serving_curves", own, x=fk.axis_value([("tokens_per_s", 1)]),
                 y=fk.axis_value([(f99, 1)], 1e3))
    return True


def batch_sweep(b, d, ax, w, p):
    """A layer list's latency against throughput over the batch sizes of the shortlisted variant."""
    a, r = d.archive, d.rows
    m = np.nonzero((r["hardware_id"] == a["hardware_id"][p]) & (r["workload_id"] == w) & r["feasible"].astype(bool))[0]
    m = m[np.argsort(r["batch"][m])]
    line, = ax.plot(r["throughput_samples_per_s"][m], r["latency_s"][m] * 1e3, "-o", color=colour_of(d, w), ms=4,
                    label=f"{d.workload_name(w)} ({d.label[p]})")
    b.record(line, f"batch sweep {d.label[p]}", d.rows_source, m.tolist(),
             x=fk.axis_value([("throughput_samples_per_s", 1)]), y=fk.axis_value([("latency_s", 1)], 1e3))
    return [(r["throughput_samples_per_s"][q], r["latency_s"][q] * 1e3, f"b={int(r['batch'][q])}") for q in m]


def latency_sweep(d, out_dir):
    panels = sweep_panels(d)
    served_any = any(u == "tokens/s" for _, u, _ in panels)
    metrics = d.sla_fields() if served_any else [("p99_latency_s",) + rd.SLA_METRICS["p99_latency_s"]]
    nr, nc = grid(max(1, len(panels)))
    b = fk.Builder("latency_sweep.png", "How do latencies grow with load on each shortlisted platform, and where "
                   "is the knee?", nr * len(metrics), nc, row_px=360, extra_px=20)
    labels_to_place = []
    if not panels:
        fk.note_axes(b.axes[0, 0], "no point meets the budgets:\nno shortlisted platform")
    for g, metric in enumerate(metrics):
        key, name = metric[0], metric[1]
        for k, (e, unit, pts) in enumerate(panels):
            ax = b.axes[g * nr + k // nc, k % nc]
            served = unit == "tokens/s"
            if served:
                drawn = [served_sweep(b, d, ax, w, p, metric) for w, p in pts]
                if not any(drawn):
                    fk.note_axes(ax, "serving curves (/serving_curves):\nnot in this file")
                    continue
            elif key == "tpot_p99_s":
                fk.note_axes(ax, "no TPOT: a layer list\nproduces no tokens")
                continue
            else:
                for w, p in pts:
                    labels_to_place.append((ax, batch_sweep(b, d, ax, w, p)))
            if key in d.budgets:
                ax.axhline(d.budgets[key] * 1e3, color="red", lw=1.5)
            ax.set_yscale("log")
            ax.set_title(f"{e}: {name}", fontsize=11)
            ax.set_xlabel(f"throughput ({unit})")
            ax.set_ylabel(f"{name} latency (ms)" if served else "batch latency (ms)")
            ax.grid(True, which="major", alpha=0.3)
            ax.legend(loc="upper left", fontsize=8)
    for g in range(len(metrics)):
        hide_unused(b.axes[g * nr:(g + 1) * nr], max(1, len(panels)))
    handles = [Line2D([], [], color="0.3", ls="-", marker="o", ms=4, label="p50"),
               Line2D([], [], color="0.3", ls="--", marker="s", mfc="none", ms=4, label="p99"),
               Line2D([], [], color="red", lw=1.5, label="SLA"),
               Line2D([], [], ls="", marker="*", ms=11, color="0.6", mec="black", label="knee"),
               Line2D([], [], ls="", marker="o", ms=8, mfc="none", mec="black", label="the workload's own rate")]
    b.layout(top_px=90, legend=(handles, [h.get_label() for h in handles]))
    for ax, pts in labels_to_place:
        fk.place_labels(b.fig, ax, [(x, y) for x, y, _ in pts], [t for _, _, t in pts], fontsize=7.5)
    caption = (f"Scenario '{d.name}'; budgets: {d.budget_text()}. Per shortlisted platform and workload, its "
               "shortlisted point of most throughput (S-number as in the shortlist table). Served models: the "
               "point's serving curve (/serving_curves, stored for the points of the unconstrained Pareto front; a "
               "platform's best shortlisted point with one is drawn), the simulation of its batching, cap, request lengths and "
               f"seed at {len(rd_loads())} request rates from 5% to 120% of the rate full batches sustain, and at "
               "the workload's own rate (ringed); x is the throughput achieved, y the latency the SLA bounds "
               "(p50 solid, p99 dashed; one row per bounded metric, end-to-end when none is), the SLA in red. "
               "Knee (star): the last rate whose p99 is at most twice the p99 at the lowest rate; past it queueing "
               "dominates. Layer lists have no queueing: their line runs over the batch sizes of the shortlisted "
               "variant (b=), p50 = p99 = the batch's latency.")
    return b.finish(out_dir, caption)


def rd_loads():
    return [0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.2]  # dse/driver/point_details.hpp kCurveLoads


# ---- 3. perf per watt and per dollar -------------------------------------------------------------

def perf_per_watt(d, out_dir):
    a, entries, wids = d.archive, d.shortlisted_entries(), sorted({int(w) for w in d.archive["workload_id"][d.selected]})
    # Custom chips and layer lists carry no price (cost_usd 0): the per-dollar panel shows the priced.
    has_cost = "cost_usd" in a and any(a["cost_usd"][p] > 0 for p in d.selected)
    panels = [("power_w", "at the wall"), ("accelerator_power_w", "accelerators only")]
    if has_cost:
        panels.append(("cost_usd", "system price"))
    pairs = [(e, w) for e in entries for w in wids]
    choice = {}
    for e, w in pairs:  # the shortlisted point of most throughput per wall watt
        cand = [p for p in d.selected if d.entry(a, p) == e and a["workload_id"][p] == w and a["power_w"][p] > 0]
        if cand:
            choice[(e, w)] = max(cand, key=lambda p: (a["throughput_samples_per_s"][p] / a["power_w"][p], -p))
    b = fk.Builder("perf_per_watt.png", "Which shortlisted platform gives the most throughput per watt"
                   + (" and per dollar?" if has_cost else "?"), 1, len(panels),
                   row_px=max(300, 34 * max(1, len(choice)) + 150))
    unit = one_unit(d, wids)
    rows_y = [k for k in pairs if k in choice]
    for ax, (field, what) in zip(b.axes.flat, panels):
        if not rows_y:
            fk.note_axes(ax, "no point meets the budgets")
            continue
        ys = np.arange(len(rows_y))
        vals, top = [], 0.0
        for w in wids:
            idx = [i for i, k in enumerate(rows_y) if k[1] == w and a[field][choice[k]] > 0]
            ps = [choice[rows_y[i]] for i in idx]
            v = a["throughput_samples_per_s"][ps] / a[field][ps]
            bars = ax.barh(ys[idx], v, color=colour_of(d, w), label=d.workload_name(w), height=0.7)
            b.record(bars, f"{field} {d.workload_name(w)}", "archive", ps,
                     y=fk.axis_value([("throughput_samples_per_s", 1), (field, -1)]))
            vals += list(zip(ys[idx], v, [w] * len(idx)))
            top = max(top, float(np.max(v)) if len(v) else 0.0)
        per = "$" if field == "cost_usd" else "W"
        for y, v, w in vals:
            ax.text(v, y, f" {v:,.4g}", va="center", fontsize=8.5)
        for i, k in enumerate(rows_y):
            if not a[field][choice[k]] > 0:
                ax.text(0, i, " no price" if per == "$" else " no power figure", va="center", fontsize=8.5,
                        color="0.4")
        ax.set_xlim(0, top * 1.3 if top > 0 else 1)
        # The rows are the same in every panel: named once, on the left.
        first = ax is b.axes.flat[0]
        ax.set_yticks(ys, [f"{e}: {d.workload_name(w)} ({d.label[choice[(e, w)]]})" for e, w in rows_y]
                      if first else [])
        ax.invert_yaxis()
        ax.set_xlabel((unit if unit else "each workload's unit") + f" per {'$' if per == '$' else 'W'}")
        ax.grid(True, axis="x", alpha=0.3)
        ax.set_title(f"per {'dollar' if per == '$' else 'watt'}, {what}", fontsize=11)
    cost_note = (" Per dollar: over the system's price (cost_usd; docs/hardware-guide.md); 'no price' where "
                 "the record carries none (custom chips)." if has_cost else
                 " Per dollar: no shortlisted record carries a system price (cost_usd), so that panel is left out.")
    caption = (f"Scenario '{d.name}'; budgets: {d.budget_text()}. Per shortlisted platform and workload, its "
               "shortlisted point of most throughput per watt at the wall (S-number as in the shortlist). Left: "
               "throughput over the power at the wall (accelerators at the clock their TDP allows, the system's "
               "host, power-supply losses); right: over the accelerators' power alone (for chips without a system "
               "file both are the chip's power)." + cost_note)
    return b.finish(out_dir, caption)


# ---- 4. owner and risk map ---------------------------------------------------------------------

def combined(weights):
    return 1.0 - float(np.prod(1.0 - np.asarray(weights, dtype=float))) if len(weights) else 0.0


def risk_map(d, out_dir):
    a, rk = d.archive, d.risk.cols
    entries = d.shortlisted_entries()
    items = {int(a["index"][p]): d.risk.of(a["index"][p]) for p in d.selected}
    owners = sorted({str(rk["owner"][r]) for rows in items.values() for r in rows})
    b = fk.Builder("risk_map.png", "Who owns the risks of the shortlisted platforms, and how severe are they?", 1, 2,
                   row_px=max(320, 60 * max(len(owners), len(entries)) + 170), gridspec_kw={"width_ratios": [3, 2]})
    ax = b.axes[0, 0]
    if not d.present["risk_items"]:
        fk.note_axes(ax, "risk items (/risk_items):\nnot in this file")
    elif not owners:
        fk.note_axes(ax, "no risk items: every shortlisted point\nhas engineering risk 0")
    else:
        m = np.zeros((len(owners), len(entries)))
        cell_rows, counts = [], {}
        for i, o in enumerate(owners):
            for j, e in enumerate(entries):
                best, best_rows = 0.0, []
                for p in d.selected:
                    if d.entry(a, p) != e:
                        continue
                    rows = [r for r in items[int(a["index"][p])] if rk["owner"][r] == o]
                    v = combined(rk["weight"][rows])
                    if v > best:
                        best, best_rows = v, rows
                m[i, j] = best
                cell_rows.append(best_rows)
                counts[(i, j)] = len(best_rows)
        im = ax.imshow(m, cmap="Reds", vmin=0, vmax=1, aspect="auto")
        b.record(im, "risk by owner", "risk_items", cell_rows, y=fk.axis_value([("weight", 1)], reduce="risk"))
        for (i, j), n in counts.items():
            ax.text(j, i, f"{m[i, j]:.2f}\n{n} item{'s' if n != 1 else ''}" if n else "none", ha="center",
                    va="center", fontsize=10, color="white" if m[i, j] > 0.55 else "black")
        ax.set_xticks(range(len(entries)), entries, rotation=20 if len(entries) > 4 else 0,
                      ha="right" if len(entries) > 4 else "center")
        ax.set_yticks(range(len(owners)), owners)
        ax.set_xlabel("shortlisted platform")
        ax.set_ylabel("owner")
        b.fig.colorbar(im, ax=ax, label="severity, 1 - Π(1 - weight)")
    ax = b.axes[0, 1]
    worst = [max((p for p in d.selected if d.entry(a, p) == e), key=lambda p: (a["engineering_risk"][p], -p))
             for e in entries]
    if worst:
        bars = ax.barh(range(len(entries)), a["engineering_risk"][worst], color="#c0504d", height=0.6)
        b.record(bars, "risk score", "archive", worst, y=fk.axis_value([("engineering_risk", 1)]))
        for i, p in enumerate(worst):
            ax.text(a["engineering_risk"][p], i, f" {a['engineering_risk'][p]:.2f} ({d.label[p]})", va="center",
                    fontsize=9)
        ax.set_yticks(range(len(entries)), entries)
        ax.invert_yaxis()
    ax.set_xlim(0, 1.3)
    ax.set_xticks([0, 0.25, 0.5, 0.75, 1.0])
    ax.set_xlabel("engineering risk of its riskiest shortlisted point (0-1)")
    ax.grid(True, axis="x", alpha=0.3)
    distinct = {}
    for p in d.selected:
        for r in items[int(a["index"][p])]:
            k = (str(rk["owner"][r]), str(rk["name"][r]), float(rk["weight"][r]), str(rk["detail"][r]),
                 str(rk["evidence"][r]))
            distinct.setdefault(k, []).append(d.label[p])
    b.tables.append(("Risk items of the shortlisted points", ["owner", "item", "weight", "what triggers it",
                                                              "evidence that would retire it", "points"],
                     [[o, n, f"{w:.3g}", det, ev, ", ".join(labels)]
                      for (o, n, w, det, ev), labels in sorted(distinct.items(), key=lambda kv: (kv[0][0], -kv[0][2]))]))
    caption = (f"Scenario '{d.name}'; budgets: {d.budget_text()}. Left: per owner and shortlisted platform, the "
               "severity of the owner's risk items on the platform's riskiest shortlisted point for that owner "
               "(weights combined as the risk model combines them: 1 - Π(1 - w)). Right: each platform's highest "
               "engineering risk among its shortlisted points. The items, what triggers each and the evidence "
               "that would retire it are in the table under the figure. Served points carry the risk model's "
               "items (costmodel/system/risk.hpp); layer lists and custom chips carry the scenario's own "
               "engineering_risk figure as one item (owner 'scenario'), none when it is 0.")
    return b.finish(out_dir, caption)


# ---- 5. search quality ----------------------------------------------------------------------------

def search_quality(d, out_dir):
    """Hypervolume of each workload's front against the points evaluated (/hypervolume, one row per
    round; normalisation in docs/results-format.md)."""
    import h5py
    with h5py.File(d.path, "r") as f:
        rows = f["hypervolume"][:] if "hypervolume" in f else None
    sampler = d.attrs.get("sampler", "")
    b = fk.Builder("search_quality.png", "How far did the search move its front, round by round?")
    ax = b.axes[0, 0]
    if rows is None or len(rows) == 0:
        fk.note_axes(ax, "no hypervolume rows in this file (/hypervolume)")
    else:
        for w in sorted({int(x) for x in rows["workload_id"]})[:10]:
            idx = np.nonzero(rows["workload_id"] == w)[0]
            line, = ax.plot(rows["evaluations"][idx], rows["hypervolume"][idx], marker="o", ms=3,
                            color=colour_of(d, w), label=d.workload_name(w))
            b.record(line, f"hypervolume {d.workload_name(w)}", "hypervolume", list(idx),
                     x=fk.axis_value([("evaluations", 1)]), y=fk.axis_value([("hypervolume", 1)]))
        if sampler != "nsga2":
            ax.set_xscale("log")
        ax.set_xlabel("points evaluated")
        ax.set_ylabel("hypervolume of the front (normalised, unitless)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, loc="lower right")
    caption = (f"Scenario '{d.name}', sampler {sampler or 'as stored'}. Each workload's front after each round, "
               "its objectives normalised by the probe bounds of /hypervolume_bounds (log10 where positive), "
               "reference point 1.1 in each; higher is better, a flat line means the search stopped improving.")
    return b.finish(out_dir, caption)
