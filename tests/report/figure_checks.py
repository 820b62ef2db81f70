"""Checks of a `dse report` folder shared by the report tests (check_report.py, check_browser.py).

figures.json (scripts/report.py) lists, per figure, every text the matplotlib renderer drew with
its box in pixels, and every drawn series with the HDF5 dataset, rows and fields its numbers come
from and the numbers as matplotlib holds them (scripts/figure_kit.py). These functions read the
stored values back from the result file with h5py alone and compare them with the drawn ones, and
check the text boxes for overlaps; each returns a list of failures (strings)."""
import html.parser
import json
import os
import re

import numpy as np

# Drawn numbers are the stored float64 values through at most a product or quotient of two of them
# (figure_kit.axis_value), computed here in another order: a few ulps apart at most.
RTOL = 1e-9
# Two text boxes may touch (anti-aliased edges); more than this overlap both ways is an overlap.
SLACK_PX = 1.0


def load_manifest(rep):
    with open(os.path.join(rep, "figures.json"), encoding="utf-8") as f:
        return json.load(f)


def _value(table, row, spec):
    v = float(spec.get("scale", 1.0))
    for field, power in spec["fields"]:
        v *= float(table[field][row]) ** power
    return v


def _reduce(values, how):
    if how == "sum":
        return float(np.sum(values)) if values else 0.0
    if how == "max":
        return float(np.max(values)) if values else 0.0
    if how == "risk":  # the risk model's combination: 1 - prod(1 - w)
        return 1.0 - float(np.prod(1.0 - np.asarray(values, dtype=float))) if values else 0.0
    raise ValueError(f"unknown reduce {how!r}")


def _expected(table, rows, spec):
    """The value element `rows` (a row, -1 for none, or a list of rows) must show under spec."""
    if isinstance(rows, list):
        vals = [_value(table, r, spec) for r in rows]
        if spec.get("reduce") is None:
            if len(set(vals)) > 1:
                raise ValueError(f"several rows {rows} without a reduce")
            return vals[0] if vals else float("nan")
        return _reduce(vals, spec["reduce"])
    if rows < 0:
        return float("nan")
    return _value(table, rows, spec)


def _close(got, want):
    if np.isnan(want):
        return np.isnan(got)
    return bool(np.isclose(got, want, rtol=RTOL, atol=0.0))


def check_numbers(h5_path, manifest):
    """Every drawn number equals the value recomputed from the stored rows. Returns
    (failures, numbers checked)."""
    import h5py
    failures, checked, cache = [], 0, {}
    with h5py.File(h5_path, "r") as f:
        for fig in manifest["figures"]:
            for s in fig["series"]:
                where = f"{fig['file']}: series '{s['name']}' ({s['source']})"
                if s["source"] not in cache:
                    if s["source"] not in f:
                        failures.append(f"{where}: /{s['source']} not in {h5_path}")
                        continue
                    cache[s["source"]] = f[s["source"]][:]
                table = cache[s["source"]]
                rows = s["rows"]
                for axis in ("x", "y"):
                    spec, drawn = s[axis], s[f"drawn_{axis}"]
                    if spec is None or drawn is None:
                        continue
                    if s.get("kind") == "slope" and axis == "y":
                        drawn = [y / x for x, y in zip(s["drawn_x"], s["drawn_y"])]
                    if len(drawn) != len(rows):
                        failures.append(f"{where}: {len(drawn)} drawn {axis} values for {len(rows)} rows")
                        continue
                    for i, (r, got) in enumerate(zip(rows, drawn)):
                        want = _expected(table, r, spec)
                        checked += 1
                        if not _close(float(got), want):
                            failures.append(f"{where}: element {i} {axis} drawn {got!r}, stored rows {r} give {want!r}")
    return failures, checked


def check_texts(manifest):
    """No two texts of a figure overlap and none leaves the canvas (the renderer's boxes)."""
    failures = []
    for fig in manifest["figures"]:
        boxes = [t["box"] for t in fig["texts"]]
        for i, a in enumerate(boxes):
            for j in range(i + 1, len(boxes)):
                b = boxes[j]
                if min(a[2], b[2]) - max(a[0], b[0]) > SLACK_PX and min(a[3], b[3]) - max(a[1], b[1]) > SLACK_PX:
                    failures.append(f"{fig['file']}: texts overlap: {fig['texts'][i]['text']!r} and "
                                    f"{fig['texts'][j]['text']!r}")
            if a[0] < -SLACK_PX or a[1] < -SLACK_PX or a[2] > fig["width_px"] + SLACK_PX or \
                    a[3] > fig["height_px"] + SLACK_PX:
                failures.append(f"{fig['file']}: text {fig['texts'][i]['text']!r} leaves the canvas ({a})")
        if not fig["texts"]:
            failures.append(f"{fig['file']}: no text drawn (no title, no axes?)")
    return failures


class _Refs(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.refs, self.ids, self.imgs = [], set(), []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        for k in ("src", "href"):
            if a.get(k) is not None:
                self.refs.append((tag, k, a[k]))
        if tag == "img":
            self.imgs.append(a.get("src"))
        if tag == "link" or tag == "script" and a.get("src"):
            self.refs.append((tag, "external", a.get("href") or a.get("src")))


def check_links(rep, manifest):
    """The HTML references only files that exist beside it and anchors that exist, nothing on a
    network, and shows every figure of the manifest as an <img>."""
    with open(os.path.join(rep, "index.html"), encoding="utf-8") as f:
        page = f.read()
    p = _Refs()
    p.feed(page)
    failures = []
    for tag, attr, ref in p.refs:
        if attr == "external":
            failures.append(f"index.html: <{tag}> loads {ref!r} (the report is self-contained)")
        elif ref.startswith("#"):
            if ref[1:] not in p.ids:
                failures.append(f"index.html: link {ref} names no element")
        elif re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", ref) or ref.startswith("/") or ".." in ref.split("/"):
            failures.append(f"index.html: {tag} {attr}={ref!r} is not a file beside the report")
        elif not os.path.isfile(os.path.join(rep, ref)):
            failures.append(f"index.html: {tag} {attr}={ref!r} does not exist")
    for fig in manifest["figures"]:
        if fig["file"] not in p.imgs:
            failures.append(f"index.html does not show {fig['file']}")
    return failures


def _by_point(table):
    out = {}
    for i, k in enumerate(table["point_index"]):
        out.setdefault(int(k), []).append(i)
    return out


def check_tables(h5_path):
    """The per-point tables of `dse run` against the records they explain, each relation
    derived from how the record is made (docs/results-format.md):
      - a point's engineering_risk = 1 - prod(1 - weight) over its /risk_items (the risk model's
        combination, costmodel/system/risk.hpp; a layer list's one scenario_figure item);
      - its /step_breakdown times sum to its /mapping_sheets' latencies x repeats, its shares to 1;
      - the /serving_curves row at the workload's own rate is the simulation the record holds:
        its p99 TTFT, TPOT and end-to-end latency equal the record's (the same simulation, same seed);
      - every served Pareto point has a curve, its rates ascending.
    Returns (failures, relations checked)."""
    import h5py
    failures, n = [], 0
    with h5py.File(h5_path, "r") as f:
        a = f["archive"][:]
        rec = {int(r["index"]): r for r in a}
        if "points" in f and f["points"].shape[0] > 0:
            rec.update({int(r["index"]): r for r in f["points"][:]})
        sheets = f["mapping_sheets"][:]
        risk, step, curves = f["risk_items"][:], f["step_breakdown"][:], f["serving_curves"][:]
        pareto = set(int(i) for i in f["pareto"][:])
        units = {int(r["id"]): r["throughput_unit"].decode() for r in f["workloads"][:]}
    sheet_of, risk_of, step_of, curve_of = _by_point(sheets), _by_point(risk), _by_point(step), _by_point(curves)
    for p in sorted(sheet_of):
        r = rec[p]
        if r["bottleneck"].decode() == "unsupported":
            continue
        want = float(r["engineering_risk"])
        got = 1.0 - float(np.prod(1.0 - risk["weight"][risk_of.get(p, [])]))
        n += 1
        if not np.isclose(got, want, rtol=1e-9, atol=1e-12):
            failures.append(f"point {p}: risk items combine to {got!r}, the record's engineering_risk is {want!r}")
        rows = sheet_of[p]
        total = float(np.sum(sheets["latency_s"][rows] * np.maximum(1, sheets["repeat"][rows])))
        srows = step_of.get(p, [])
        n += 2
        if not np.isclose(float(np.sum(step["time_s"][srows])), total, rtol=1e-9):
            failures.append(f"point {p}: step_breakdown time {np.sum(step['time_s'][srows])!r} != sheet {total!r}")
        if total > 0 and not np.isclose(float(np.sum(step["share"][srows])), 1.0, rtol=1e-9):
            failures.append(f"point {p}: step_breakdown shares sum to {np.sum(step['share'][srows])!r}")
        served = units.get(int(r["workload_id"])) == "tokens/s"
        if served and p in pareto and r["feasible"]:
            c = curve_of.get(p, [])
            n += 1
            if not c:
                failures.append(f"served Pareto point {p} has no serving curve")
                continue
            rates = curves["rate_per_s"][c]
            if np.any(np.diff(rates) < 0):
                failures.append(f"point {p}: curve rates not ascending")
            own = [i for i in c if curves["at_workload_rate"][i] == 1]
            if len(own) != 1:
                failures.append(f"point {p}: {len(own)} curve rows at the workload's rate")
                continue
            for cf, rf in (("ttft_p99_s", "ttft_p99_s"), ("tpot_p99_s", "tpot_p99_s"), ("e2e_p99_s", "p99_latency_s")):
                n += 1
                if float(curves[cf][own[0]]) != float(r[rf]):
                    failures.append(f"point {p}: curve {cf} at the workload's rate {curves[cf][own[0]]!r} != "
                                    f"record {rf} {r[rf]!r}")
    return failures, n
