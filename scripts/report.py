#!/usr/bin/python3
"""The platform-review report of a DSE result file.

    /usr/bin/python3 scripts/report.py OUT.h5 -o DIR [--ttft-p99-s X] [--tpot-p99-s X] [--e2e-p99-s X]
        [--power-w Y] [--area-mm2 Z] [--memory-bytes M]     (budgets in SI units; dse report passes them)

Reads only the HDF5 file written by `dse run` (root attributes, /archive, /points when
stored, /pareto, and /mapping_sheets and /risk_items when present) and writes
DIR/index.html (self-contained: figures referenced relatively), DIR/report.md, the PNG
figures (all FIG_W_PX x FIG_H_PX pixels), DIR/shortlist.csv and one mapping sheet CSV
per shortlisted point (DIR/mapping_<index>.csv). Usually run by `dse report`.

The shortlist is the same filter-and-front as `dse shortlist` (dse/h5/shortlist.cpp):
archived feasible points within the budgets, non-dominated per workload over the
objectives (throughput max; latency, energy, risk min), ties kept.
"""
import argparse
import html
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot_figures as pf  # noqa: E402  (after the path set-up)

try:
    import h5py
except ImportError:  # pragma: no cover
    sys.exit("report.py: h5py is missing (Debian: apt-get install python3-h5py)")

OBJECTIVES = [("throughput_samples_per_s", "max"), ("latency_s", "min"),
              ("energy_per_sample_j", "min"), ("engineering_risk", "min")]
# The knob order of a hardware entry (dse/io/scenario.cpp, parse_hardware: the fields
# table order, first knob fastest in the variant number "NAME#v").
KNOB_ORDER = ["peak_flops_per_s", "memory_bandwidth_bytes_per_s", "memory_capacity_bytes",
              "kernel_overhead_s", "energy_per_flop_j", "energy_per_byte_j", "static_power_w",
              "engineering_risk", "area_mm2"]


def text(v):
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, np.ndarray) and v.dtype.kind == "S":
        return v.tobytes().decode("utf-8", "replace").rstrip("\0")
    return str(v)


def decode_names(col):
    return np.array([c.decode("utf-8", "replace").rstrip("\0") for c in col], dtype=object)


def rows_to_table(ds):
    """A compound dataset as a dict of numpy columns (byte strings decoded)."""
    data = ds[()]
    out = {}
    for name in data.dtype.names:
        col = data[name]
        out[name] = decode_names(col) if col.dtype.kind in "SO" else np.asarray(col)
    return out


def pareto_front(keys):
    """Positions of the non-dominated rows of keys (n x k, all minimised); ties kept."""
    n = keys.shape[0]
    if n == 0:
        return np.zeros(0, dtype=int)
    order = np.lexsort(keys.T[::-1])  # lexicographic over the columns in order
    front = []
    fkeys = np.empty((0, keys.shape[1]))
    for p in order:
        kp = keys[p]
        if fkeys.shape[0] and np.any(np.all(fkeys <= kp, axis=1) & np.any(fkeys < kp, axis=1)):
            continue
        front.append(p)
        fkeys = np.vstack([fkeys, kp])
    return np.array(front, dtype=int)


# The budgets dse report passes (dse/cli/budget_options.hpp), in SI units, by archive field.
BUDGET_FIELDS = (("--ttft-p99-s", "ttft_p99_s"), ("--tpot-p99-s", "tpot_p99_s"), ("--e2e-p99-s", "p99_latency_s"),
                 ("--power-w", "power_w"), ("--area-mm2", "area_mm2"), ("--memory-bytes", "memory_bytes"),
                 ("--cost-usd", "cost_usd"))


def within_budgets(rows, budgets):
    """Feasible rows within every budget (a dict field -> upper bound), as dse shortlist applies them."""
    ok = rows["feasible"].astype(bool)
    for field, bound in budgets.items():
        ok &= rows[field] <= bound
    return ok


def shortlist(rows, budgets):
    """Positions into rows (archive columns) of the shortlist, per workload, best throughput first."""
    n = len(rows["index"])
    ok = within_budgets(rows, budgets)
    keys = np.column_stack([-rows[f] if s == "max" else rows[f] for f, s in OBJECTIVES]) if n else np.zeros((0, 4))
    out = []
    for w in np.unique(rows["workload_id"]) if n else []:
        pos = np.nonzero(ok & (rows["workload_id"] == w))[0]
        out.extend(pos[pareto_front(keys[pos])].tolist())
    return np.array(out, dtype=int)


def scenario_name(scenario_text, fallback):
    m = re.search(r"^name:\s*([^\s#]+)", scenario_text, re.MULTILINE)
    return m.group(1).strip("'\"") if m else fallback


def hardware_roofs(scenario_text):
    """hardware name -> entry dict of the scenario (for peak FLOP/s and bandwidth), or {}."""
    try:
        import yaml
        doc = yaml.safe_load(scenario_text) or {}
    except Exception:  # noqa: BLE001 -- a scenario we cannot parse just has no roofs
        return {}
    out = {}
    for e in doc.get("hardware", []) or []:
        if isinstance(e, dict) and "name" in e:
            out[str(e["name"])] = e
    return out


def knob_values(spec):
    if isinstance(spec, dict):
        if "choices" in spec:
            return [float(x) for x in spec["choices"]]
        for key in ("log", "linear"):
            if key in spec:
                a, b, n = float(spec[key][0]), float(spec[key][1]), int(spec[key][2])
                ts = [0.0] if n == 1 else [i / (n - 1) for i in range(n)]
                return [a * (b / a) ** t if key == "log" else a + (b - a) * t for t in ts]
        return None
    try:
        return [float(spec)]
    except (TypeError, ValueError):
        return None


def hardware_figures(entries, hw_name):
    """(peak_flops_per_s, bandwidth_bytes_per_s) of a hardware name "NAME" or "NAME#v", or None."""
    base, _, v = hw_name.partition("#")
    e = entries.get(base)
    if e is None:
        return None
    variant = int(v) if v.isdigit() else 0
    values = {}
    for key in KNOB_ORDER:
        if key not in e:
            continue
        vals = knob_values(e[key])
        if vals is None:
            return None
        values[key] = vals[variant % len(vals)] if len(vals) > 1 else vals[0]
        if len(vals) > 1:
            variant //= len(vals)
    if "peak_flops_per_s" not in values or "memory_bandwidth_bytes_per_s" not in values:
        return None
    return values["peak_flops_per_s"], values["memory_bandwidth_bytes_per_s"]


def read_mapping_sheets(f):
    """point index -> list of layer dicts, from /mapping_sheets (a compound dataset with a
    point index column, or a group of per-point datasets named by index); None if absent."""
    if "mapping_sheets" not in f:
        return None
    node = f["mapping_sheets"]
    out = {}
    if isinstance(node, h5py.Dataset):
        t = rows_to_table(node)
        key = next((k for k in ("point_index", "index", "point") if k in t), None)
        if key is None:
            return None
        for i in range(len(t[key])):
            out.setdefault(int(t[key][i]), []).append({k: t[k][i] for k in t})
    else:
        for name, ds in node.items():
            if not isinstance(ds, h5py.Dataset) or not name.isdigit() or ds.dtype.names is None:
                continue
            t = rows_to_table(ds)
            out[int(name)] = [{k: t[k][i] for k in t} for i in range(len(next(iter(t.values()))))]
    return out


def read_variants(f):
    """/variants as {hardware_id: (full name, knobs)} (dse run's names table), or {}."""
    if "variants" not in f or f["variants"].dtype.names is None:
        return {}
    t = rows_to_table(f["variants"])
    return {int(i): (n, k) for i, n, k in zip(t["id"], t["name"], t["knobs"])}


def read_risk_items(f):
    """/risk_items as a dict of columns (platform/hardware, owner, item, severity ...), or None."""
    if "risk_items" not in f or not isinstance(f["risk_items"], h5py.Dataset):
        return None
    if f["risk_items"].dtype.names is None:
        return None
    return rows_to_table(f["risk_items"])


def load(path, budgets):
    with h5py.File(path, "r") as f:
        attrs = {k: text(v) for k, v in f.attrs.items()}
        if "archive" not in f:
            sys.exit(f"report.py: {path}: no /archive dataset (not a DSE result file?)")
        if f["archive"].shape[0] == 0:
            # Every point infeasible (issue 58 item 14): one line, not a traceback from the plots.
            sys.exit(f"report.py: {path}: the archive is empty (no evaluated point was feasible); "
                     "no report to draw")
        archive = rows_to_table(f["archive"])
        points = rows_to_table(f["points"]) if "points" in f and f["points"].shape[0] > 0 else None
        mapping = read_mapping_sheets(f)
        risk = read_risk_items(f)
        variants = read_variants(f)
    scenario = attrs.get("scenario", "")
    ctx = pf.Context(
        name=scenario_name(scenario, os.path.splitext(os.path.basename(path))[0]),
        source=os.path.basename(path), sla_s=budgets.get("p99_latency_s"), power_w=budgets.get("power_w"),
        archive=archive, points=points, selected=shortlist(archive, budgets), mapping=mapping, risk=risk,
        entries=hardware_roofs(scenario), attrs=attrs, budgets=budgets)
    ctx.roof = lambda hw: hardware_figures(ctx.entries, hw)
    # Full variant names (the records keep a cut copy of 31 characters) and what each variant is.
    for pos, hid in enumerate(archive["hardware_id"]):
        if int(hid) in variants:
            archive["hardware"][pos] = variants[int(hid)][0]
    ctx.knobs = [variants.get(int(h), ("", ""))[1] for h in archive["hardware_id"]]
    return ctx


# ---- output files ---------------------------------------------------------------------------

SHORTLIST_COLUMNS = ["index", "workload", "hardware", "batch", "throughput_samples_per_s", "latency_s",
                     "p99_latency_s", "energy_per_sample_j", "engineering_risk", "power_w", "area_mm2",
                     "cost_usd", "cost_per_hour_usd", "memory_bytes", "flops", "dram_bytes", "bottleneck"]
MAPPING_COLUMNS = ["layer", "type", "latency_s", "flops", "dram_bytes", "bottleneck", "stall_fraction",
                   "pct_of_peak", "mapping"]


def csv_cell(v):
    s = repr(float(v)) if isinstance(v, (float, np.floating)) else str(v)
    return '"' + s.replace('"', '""') + '"' if any(c in s for c in ',"\n') else s


def write_csv(path, header, rows):
    with open(path, "w", encoding="utf-8") as out:
        out.write(",".join(header) + "\n")
        for r in rows:
            out.write(",".join(csv_cell(v) for v in r) + "\n")


def mapping_rows(ctx, pos):
    """The mapping sheet of archive row pos: per-layer rows from /mapping_sheets, else one
    point-level row (whole workload) and a note."""
    a = ctx.archive
    idx = int(a["index"][pos])
    layers = (ctx.mapping or {}).get(idx)
    if layers:
        return [[layer.get(c, "") for c in MAPPING_COLUMNS] for layer in layers], None
    row = [f"(whole {a['workload'][pos]})", "workload", a["latency_s"][pos], a["flops"][pos], a["dram_bytes"][pos],
           a["bottleneck"][pos], "", "", "per-layer tiling and fusion plan: not in this file"]
    return [row], "per-layer mapping (tiling per level, fusion plan): not in this file (no /mapping_sheets)"


def md_table(header, rows):
    out = "| " + " | ".join(header) + " |\n|" + "---|" * len(header) + "\n"
    for r in rows:
        out += "| " + " | ".join(pf.fmt(v) for v in r) + " |\n"
    return out


def html_table(header, rows):
    out = "<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr>\n"
    for r in rows:
        out += "<tr>" + "".join(f"<td>{html.escape(pf.fmt(v))}</td>" for v in r) + "</tr>\n"
    return out + "</table>\n"


def write_report(ctx, out_dir, figures):
    a = ctx.archive
    sel = ctx.selected
    short_rows = [[a[c][p] for c in SHORTLIST_COLUMNS] + [ctx.knobs[p]] for p in sel]
    write_csv(os.path.join(out_dir, "shortlist.csv"), SHORTLIST_COLUMNS + ["knobs"], short_rows)
    sheets = []
    for p in sel:
        rows, note = mapping_rows(ctx, p)
        name = f"mapping_{int(a['index'][p])}.csv"
        write_csv(os.path.join(out_dir, name), MAPPING_COLUMNS, rows)
        sheets.append((p, name, rows, note))

    title = f"DSE platform review: {ctx.name}"
    view_cols = ["index", "workload", "hardware", "batch", "throughput_samples_per_s", "latency_s",
                 "p99_latency_s", "energy_per_sample_j", "power_w", "cost_usd", "engineering_risk", "bottleneck"]
    view = [[a[c][p] for c in view_cols] + [ctx.knobs[p]] for p in sel]
    view_cols = view_cols + ["knobs"]
    summary = (f"Source: `{ctx.source}` ({len(a['index'])} archived points"
               + (f", {len(ctx.points['index'])} evaluated points stored" if ctx.points is not None else
                  ", evaluated points not stored") + f"). {ctx.budget_text()}. Shortlist: {len(sel)} points "
               "(archived feasible points within the budgets, Pareto front per workload over throughput max, "
               "latency, energy per sample and engineering risk min; `dse shortlist` gives the same set).")

    md = [f"# {title}\n", summary + "\n", "## Shortlist\n", md_table(view_cols, view),
          "Full precision: [shortlist.csv](shortlist.csv)\n"]
    for fig in figures:
        md.append(f"## {fig.title}\n\n![{fig.title}]({fig.file})\n\n*{fig.caption}*\n")
    md.append("## Mapping sheets\n")
    for p, name, rows, note in sheets:
        md.append(f"### Point {int(a['index'][p])}: {a['hardware'][p]} / {a['workload'][p]} / batch {int(a['batch'][p])}\n")
        if note:
            md.append(f"*{note}*\n")
        md.append(md_table(MAPPING_COLUMNS, rows) + f"\nCSV: [{name}]({name})\n")
    with open(os.path.join(out_dir, "report.md"), "w", encoding="utf-8") as out:
        out.write("\n".join(md))

    style = ("body{font-family:sans-serif;max-width:1450px;margin:auto;padding:1em}"
             "table{border-collapse:collapse;font-size:12px;margin:0.5em 0}"
             "td,th{border:1px solid #bbb;padding:2px 6px;text-align:right}"
             "th{background:#eee}img{max-width:100%;border:1px solid #ddd}"
             ".cap{font-style:italic;color:#444}")
    h = [f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
         f"<style>{style}</style></head><body>", f"<h1>{html.escape(title)}</h1>",
         f"<p>{html.escape(summary.replace('`', ''))}</p>", "<h2>Shortlist</h2>", html_table(view_cols, view),
         "<p>Full precision: <a href='shortlist.csv'>shortlist.csv</a></p>", "<h2>Figures</h2><ul>"]
    h += [f"<li><a href='#{fig.file}'>{html.escape(fig.title)}</a></li>" for fig in figures]
    h.append("</ul>")
    for fig in figures:
        h.append(f"<h2 id='{fig.file}'>{html.escape(fig.title)}</h2><img src='{fig.file}' "
                 f"alt='{html.escape(fig.title)}'><p class='cap'>{html.escape(fig.caption)}</p>")
    h.append("<h2>Mapping sheets</h2>")
    for p, name, rows, note in sheets:
        h.append(f"<h3>Point {int(a['index'][p])}: {html.escape(str(a['hardware'][p]))} / "
                 f"{html.escape(str(a['workload'][p]))} / batch {int(a['batch'][p])}</h3>")
        if note:
            h.append(f"<p class='cap'>{html.escape(note)}</p>")
        h.append(html_table(MAPPING_COLUMNS, rows) + f"<p>CSV: <a href='{name}'>{name}</a></p>")
    h.append("</body></html>\n")
    with open(os.path.join(out_dir, "index.html"), "w", encoding="utf-8") as out:
        out.write("\n".join(h))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("input", help="result file written by 'dse run'")
    ap.add_argument("-o", "--output", required=True, help="report folder (created)")
    for flag, field in BUDGET_FIELDS:
        ap.add_argument(flag, type=float, default=None, dest=field, help=f"upper bound on {field} (SI units)")
    args = ap.parse_args(argv)
    budgets = {}
    for flag, field in BUDGET_FIELDS:
        v = getattr(args, field)
        if v is not None and not v > 0:
            ap.error(f"{flag}: expected a positive number (got {v})")
        if v is not None:
            budgets[field] = v
    ctx = load(args.input, budgets)
    try:
        os.makedirs(args.output, exist_ok=True)
        figures = pf.draw_all(ctx, args.output)
        write_report(ctx, args.output, figures)
    except OSError as e:  # one line, not a traceback: a folder that cannot be made or written
        print(f"report.py: writing {args.output} failed: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
