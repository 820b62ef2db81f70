#!/usr/bin/python3
"""The platform-review report of a DSE result file.

    /usr/bin/python3 scripts/report.py OUT.h5 -o DIR [--ttft-p99-s X] [--tpot-p99-s X] [--e2e-p99-s X]
        [--power-w Y] [--area-mm2 Z] [--memory-bytes M]     (budgets in SI units; dse report passes them)

Reads only the HDF5 file written by `dse run` (scripts/report_data.py) and writes
DIR/index.html (self-contained: the figures beside it, referenced relatively, no network),
DIR/report.md, the PNG figures (FIG_W_PX wide), DIR/figures.json (each figure's texts with their
boxes and the numbers it draws, each with the dataset, rows and fields it comes from),
DIR/shortlist.csv and one mapping sheet CSV per shortlisted point (DIR/mapping_<index>.csv).
Usually run by `dse report`.
"""
import argparse
import html
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figure_kit as fk  # noqa: E402  (after the path set-up)
import plot_figures as pf  # noqa: E402
import plot_hardware as ph  # noqa: E402
import report_data as rd  # noqa: E402

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


# ---- the tables -------------------------------------------------------------------------------------

def shortlist_table(d):
    """The shortlist as the report shows it: header and rows (strings)."""
    a = d.archive
    header = ["#", "workload", "platform", "variant", "knobs", "batch", "throughput", "p99 TTFT (ms)",
              "p99 TPOT (ms)", "p99 e2e (ms)", "energy per unit", "power wall / accel. (W)", "price (USD)", "memory per chip (GB)",
              "MFU", "risk", "bottleneck", "point"]
    rows = []
    for p in d.selected:
        w = a["workload_id"][p]
        served = d.served(a, p)
        rows.append([d.label[p], d.workload_name(w, a["workload"][p]), d.entry(a, p), d.variant_name(a, p),
                     d.knobs(a, p), int(a["batch"][p]), f"{fk.rate(a['throughput_samples_per_s'][p])} {d.unit(w)}",
                     f"{a['ttft_p99_s'][p] * 1e3:,.4g}" if served else "-",
                     f"{a['tpot_p99_s'][p] * 1e3:,.4g}" if served else "-", f"{a['p99_latency_s'][p] * 1e3:,.4g}",
                     f"{a['energy_per_sample_j'][p]:.4g} J/{d.noun(w)}",
                     f"{a['power_w'][p]:,.4g} / {a['accelerator_power_w'][p]:,.4g}",
                     f"{a['cost_usd'][p]:,.0f}" if "cost_usd" in a and a["cost_usd"][p] > 0 else "-",
                     f"{a['memory_bytes'][p] / 1e9:.4g}", f"{a['mfu'][p]:.3f}", f"{a['engineering_risk'][p]:.3f}",
                     str(a["bottleneck"][p]), int(a["index"][p])])
    return header, rows


def sheet_rows(d, p):
    """The mapping sheet of archive row p for the HTML: per layer its kernel or tiling, fusion
    group, bottleneck class, share of the step, time and figures."""
    sh = d.sheets.cols
    rows = d.sheets.of(d.archive["index"][p])
    n = [max(1, int(sh["repeat"][r])) if "repeat" in sh else 1 for r in rows]
    times = [sh["latency_s"][r] * k for r, k in zip(rows, n)]
    total = sum(times) or 1.0
    return [[str(sh["layer"][r]), str(sh["type"][r]), k, str(sh["mapping"][r]),
             str(sh["fusion_group"][r]) if "fusion_group" in sh else "", str(sh["bottleneck"][r]),
             f"{100 * t / total:.1f}%", f"{sh['latency_s'][r] * 1e6:,.4g}", f"{sh['pct_of_peak'][r]:.3g}",
             f"{100 * sh['stall_fraction'][r]:.3g}"] for r, k, t in zip(rows, n, times)]


SHEET_HEADER = ["layer", "type", "repeat", "tiling or kernel", "fusion group", "bottleneck", "share of the step",
                "time per occurrence (µs)", "% of peak", "memory stall (%)"]


def provenance_rows(d):
    at = d.attrs
    files = rd.input_files(at.get("input_files", ""))
    absolute = [f[2] for f in files if os.path.isabs(f[2])]
    prefix = os.path.commonpath(absolute) if len(absolute) > 1 else ""
    rows = [["scenario", f"{d.name} ({at.get('scenario_file', '?')})"], ["result file", d.source],
            ["dse version", at.get("version", "?")], ["commit", at.get("commit", "not recorded (older dse run)")],
            ["seed", at.get("seed", "?")], ["sampler", at.get("sampler", "?")],
            ["run", f"{at.get('start_time', '?')}, {at.get('ranks', '?')} rank(s) x {at.get('threads', '?')} "
                    f"thread(s), {float(at.get('wall_time_s', 'nan')):.3g} s"],
            ["points", f"{at.get('checkpoint_evaluated', '?')} evaluated, {at.get('checkpoint_feasible', '?')} "
                       f"feasible, {len(d.archive['index'])} archived (store: {at.get('store', '?')})"]]
    file_rows = [[os.path.relpath(path, prefix) if prefix and os.path.isabs(path) else path, str(size), h]
                 for h, size, path in files]
    return rows, file_rows, prefix


def scenario_rows(d):
    entries = {}
    for v in d.variants.values():
        entries[str(v["entry"])] = entries.get(str(v["entry"]), 0) + 1
    ws = [[d.workload_name(w), d.unit(w), str(d.workloads.get(w, {}).get("eval_arguments", ""))]
          for w in d.workload_ids()]
    return [[e, str(n)] for e, n in sorted(entries.items())], ws


# ---- HTML and Markdown ----------------------------------------------------------------------------

STYLE = """
body{font-family:"DejaVu Sans",Arial,sans-serif;max-width:1400px;margin:0 auto;padding:12px 16px;color:#222}
h1{font-size:26px;margin:8px 0}h2{font-size:20px;margin:28px 0 8px;border-bottom:2px solid #ddd}
h3{font-size:15px;margin:14px 0 6px}p,li{font-size:14px;line-height:1.45}
table{border-collapse:collapse;font-size:12px;margin:6px 0 12px;max-width:100%}td,th{border:1px solid #bbb;
padding:2px 6px;vertical-align:top;overflow-wrap:anywhere}th{background:#eee;text-align:left}td.n{text-align:right;white-space:nowrap}
.grid{display:grid;grid-template-columns:1fr 1fr;gap:0 24px}
figure{margin:12px 0 24px;break-inside:avoid}figure img{width:100%;height:auto;border:1px solid #ddd}
figcaption{font-size:13px;color:#333;margin-top:4px}details{margin:4px 0}summary{cursor:pointer;font-size:14px}
.note{background:#fff3cd;border:1px solid #d39e00;padding:4px 8px;font-size:13px}
@media print{body{max-width:none;padding:0}h2{break-after:avoid}figure{break-inside:avoid}
.grid{grid-template-columns:1fr}table{font-size:9px}a{color:inherit;text-decoration:none}}
"""
# Opens every mapping sheet for printing (inline, no network).
PRINT_SCRIPT = ("<script>window.addEventListener('beforeprint',function(){document.querySelectorAll('details')"
                ".forEach(function(e){e.open=true;});});</script>")


def h(s):
    return html.escape(str(s))


def html_table(header, rows, numeric=()):
    out = ["<table><tr>" + "".join(f"<th>{h(c)}</th>" for c in header) + "</tr>"]
    for r in rows:
        out.append("<tr>" + "".join(f"<td class='n'>{h(v)}</td>" if i in numeric else f"<td>{h(v)}</td>"
                                    for i, v in enumerate(r)) + "</tr>")
    return "\n".join(out) + "</table>\n"


def md_table(header, rows):
    esc = [str(c).replace("|", "\\|") for c in header]
    out = "| " + " | ".join(esc) + " |\n|" + "---|" * len(header) + "\n"
    for r in rows:
        out += "| " + " | ".join(str(v).replace("|", "\\|").replace("\n", " ") for v in r) + " |\n"
    return out


def write_html(d, out_dir, figures, sheets):
    title = f"DSE platform review: {d.name}"
    prov, files, prefix = provenance_rows(d)
    entries, ws = scenario_rows(d)
    budgets = d.budget_items() or [("none", "every feasible point counts")]
    sh_header, sh_rows = shortlist_table(d)
    o = [f"<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><meta name='viewport' "
         f"content='width=device-width'><title>{h(title)}</title><style>{STYLE}</style></head><body>",
         f"<h1>{h(title)}</h1>",
         "<div class='grid'><div><h2 id='budgets'>Budgets</h2>" + html_table(["budget", "bound"], budgets),
         "<h2 id='scenario'>Scenario</h2>" + html_table(["platform (hardware entry)", "variants"], entries, {1})
         + html_table(["workload", "throughput unit", "dse eval options"], ws) + "</div>",
         "<div><h2 id='provenance'>Provenance</h2>" + html_table(["", ""], prov)
         + (f"<p>Files the scenario read (under {h(prefix)}), with the hash `dse run --resume` checks:</p>"
            if prefix else "<p>Files the scenario read:</p>")
         + html_table(["file", "bytes", "hash"], files, {1}) + "</div></div>",
         f"<h2 id='shortlist'>Shortlist ({len(d.selected)} points)</h2>",
         f"<p>Archived feasible points within the budgets, the Pareto front of each workload over throughput (max), "
         f"latency, energy and engineering risk (min): the set <code>dse shortlist</code> prints. Full precision: "
         f"<a href='shortlist.csv'>shortlist.csv</a>.</p>", html_table(sh_header, sh_rows, {5, 6, 7, 8, 9, 11, 12, 13}),
         "<h2 id='figures'>Figures</h2><ol>"]
    o += [f"<li><a href='#{f.file}'>{h(f.title)}</a></li>" for f in figures]
    o.append("<li><a href='#mapping-sheets'>Mapping sheets of the shortlisted points</a></li></ol>")
    for f in figures:
        o.append(f"<figure id='{f.file}'><h2>{h(f.title)}</h2><img src='{f.file}' width='{f.width_px}' "
                 f"height='{f.height_px}' alt='{h(f.title)}'><figcaption>{h(f.caption)}</figcaption></figure>")
        for heading, header, rows in f.tables:
            if rows:
                o.append(f"<h3>{h(heading)}</h3>" + html_table(header, rows))
    o.append("<h2 id='mapping-sheets'>Mapping sheets of the shortlisted points</h2>")
    missing = [t for t in rd.DETAIL_TABLES if not d.present[t]]
    if missing:
        o.append("<p class='note'>Per-point tables " + h(", ".join(f"/{t}" for t in missing)) + ": not in this "
                 "file (written by <code>dse run</code> since layout version 5); the figures that need them say "
                 "so.</p>")
    for p, name in sheets:
        a = d.archive
        rows = sheet_rows(d, p)
        o.append(f"<details><summary>{h(d.label[p])}: {h(d.variant_name(a, p))} / "
                 f"{h(d.workload_name(a['workload_id'][p]))} / batch {int(a['batch'][p])} (point "
                 f"{int(a['index'][p])}, {len(rows)} layers)</summary>"
                 + (html_table(SHEET_HEADER, rows, {2, 6, 7, 8, 9}) if rows else
                    "<p class='note'>no per-layer sheet for this point in this file</p>")
                 + f"<p>CSV: <a href='{name}'>{name}</a></p></details>")
    o.append(PRINT_SCRIPT + "</body></html>\n")
    with open(os.path.join(out_dir, "index.html"), "w", encoding="utf-8") as out:
        out.write("\n".join(o))


def write_markdown(d, out_dir, figures, sheets):
    title = f"DSE platform review: {d.name}"
    prov, files, _ = provenance_rows(d)
    sh_header, sh_rows = shortlist_table(d)
    md = [f"# {title}\n", "## Budgets\n", md_table(["budget", "bound"], d.budget_items() or [("none", "-")]),
          "## Provenance\n", md_table(["", ""], prov), md_table(["file", "bytes", "hash"], files),
          f"## Shortlist ({len(d.selected)} points)\n", md_table(sh_header, sh_rows),
          "Full precision: [shortlist.csv](shortlist.csv)\n"]
    for f in figures:
        md.append(f"## {f.title}\n\n![{f.title}]({f.file})\n\n*{f.caption}*\n")
        for heading, header, rows in f.tables:
            if rows:
                md.append(f"### {heading}\n\n" + md_table(header, rows))
    md.append("## Mapping sheets\n")
    missing = [t for t in rd.DETAIL_TABLES if not d.present[t]]
    if missing:
        md.append("Per-point tables " + ", ".join(f"/{t}" for t in missing) + ": not in this file (written by "
                  "`dse run` since layout version 5); the figures that need them say so.\n")
    for p, name in sheets:
        md.append(f"- {d.label[p]}: [{name}]({name})")
    with open(os.path.join(out_dir, "report.md"), "w", encoding="utf-8") as out:
        out.write("\n".join(md) + "\n")


def write_report(d, out_dir):
    figures = ph.draw_all(d, out_dir, (pf.workload_fit, pf.latency_sweep, pf.perf_per_watt, pf.risk_map))
    figures.append(pf.search_quality(d, out_dir))
    a = d.archive
    write_csv(os.path.join(out_dir, "shortlist.csv"), SHORTLIST_COLUMNS + ["knobs"],
              [[a[c][p] for c in SHORTLIST_COLUMNS] + [d.knobs(a, p)] for p in d.selected])
    sheets, sh = [], d.sheets.cols
    for p in d.selected:
        name = f"mapping_{int(a['index'][p])}.csv"
        rows = [[sh[c][r] for c in MAPPING_COLUMNS] for r in d.sheets.of(a["index"][p])]
        write_csv(os.path.join(out_dir, name), MAPPING_COLUMNS, rows)
        sheets.append((p, name))
    write_html(d, out_dir, figures, sheets)
    write_markdown(d, out_dir, figures, sheets)
    with open(os.path.join(out_dir, "figures.json"), "w", encoding="utf-8") as out:
        json.dump({"source": d.source, "budgets": d.budgets, "shortlist": [int(a["index"][p]) for p in d.selected],
                   "figures": [f.manifest() for f in figures]}, out, indent=1)
    return figures


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("input", help="result file written by 'dse run'")
    ap.add_argument("-o", "--output", required=True, help="report folder (created)")
    for flag, f in rd.BUDGET_FIELDS:
        ap.add_argument(flag, type=float, default=None, dest=f, help=f"upper bound on {f} (SI units)")
    args = ap.parse_args(argv)
    budgets = {}
    for flag, f in rd.BUDGET_FIELDS:
        v = getattr(args, f)
        if v is not None and not v > 0:
            ap.error(f"{flag}: expected a positive number (got {v})")
        if v is not None:
            budgets[f] = v
    d = rd.Data(args.input, budgets)
    try:
        os.makedirs(args.output, exist_ok=True)
        write_report(d, args.output)
    except OSError as e:  # one line, not a traceback: a folder that cannot be made or written
        print(f"report.py: writing {args.output} failed: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
