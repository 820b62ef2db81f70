"""The data of the DSE report, read from a result file of `dse run` alone (used by
scripts/report.py and the figures): the records, the names tables, the per-point tables
(/mapping_sheets, /risk_items, /step_breakdown, /serving_curves, /roofs; docs/results-format.md),
the provenance, the budgets and the shortlist, which is the same filter-and-front as
`dse shortlist` (dse/h5/shortlist.cpp): archived feasible points within the budgets,
non-dominated per workload over the objectives (throughput max; latency, energy, risk min),
ties kept."""
import os
import re

import numpy as np

try:
    import h5py
except ImportError:  # pragma: no cover
    raise SystemExit("report.py: h5py is missing (Debian: apt-get install python3-h5py)")

OBJECTIVES = [("throughput_samples_per_s", "max"), ("latency_s", "min"),
              ("energy_per_sample_j", "min"), ("engineering_risk", "min")]
# The budgets dse report passes (dse/cli/budget_options.hpp), in SI units, by archive field.
BUDGET_FIELDS = (("--ttft-p99-s", "ttft_p99_s"), ("--tpot-p99-s", "tpot_p99_s"), ("--e2e-p99-s", "p99_latency_s"),
                 ("--power-w", "power_w"), ("--area-mm2", "area_mm2"), ("--memory-bytes", "memory_bytes"),
                 ("--cost-usd", "cost_usd"))
# The SLA metrics: budget field -> (name, p50 field and p99 field of /serving_curves, of the records).
SLA_METRICS = {"ttft_p99_s": ("TTFT", ("ttft_p50_s", "ttft_p99_s"), ("ttft_p50_s", "ttft_p99_s")),
               "tpot_p99_s": ("TPOT", ("tpot_p50_s", "tpot_p99_s"), ("tpot_p50_s", "tpot_p99_s")),
               "p99_latency_s": ("end-to-end", ("e2e_p50_s", "e2e_p99_s"), ("e2e_p50_s", "p99_latency_s"))}
DETAIL_TABLES = ("mapping_sheets", "risk_items", "step_breakdown", "serving_curves", "roofs")


def text(v):
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, np.ndarray) and v.dtype.kind == "S":
        return v.tobytes().decode("utf-8", "replace").rstrip("\0")
    return str(v)


def rows_to_table(ds):
    """A compound dataset as a dict of numpy columns (byte strings decoded)."""
    data = ds[()]
    out = {}
    for name in data.dtype.names:
        col = data[name]
        if col.dtype.kind in "SO":
            col = np.array([c.decode("utf-8", "replace").rstrip("\0") if isinstance(c, bytes) else str(c)
                            for c in col], dtype=object)
        out[name] = np.asarray(col)
    return out


def pareto_front(keys):
    """Positions of the non-dominated rows of keys (n x k, all minimised); ties kept."""
    n = keys.shape[0]
    if n == 0:
        return np.zeros(0, dtype=int)
    order = np.lexsort(keys.T[::-1])
    front, fkeys = [], np.empty((0, keys.shape[1]))
    for p in order:
        kp = keys[p]
        if fkeys.shape[0] and np.any(np.all(fkeys <= kp, axis=1) & np.any(fkeys < kp, axis=1)):
            continue
        front.append(p)
        fkeys = np.vstack([fkeys, kp])
    return np.array(front, dtype=int)


def within_budgets(rows, budgets):
    """Feasible rows within every budget (field -> upper bound), as dse shortlist applies them."""
    ok = rows["feasible"].astype(bool)
    for f, bound in budgets.items():
        ok &= rows[f] <= bound
    return ok


def shortlist(rows, budgets):
    """Positions into rows of the shortlist: per workload (ascending id), best throughput first."""
    n = len(rows["index"])
    if n == 0:
        return np.zeros(0, dtype=int)
    ok = within_budgets(rows, budgets)
    keys = np.column_stack([-rows[f] if s == "max" else rows[f] for f, s in OBJECTIVES])
    out = []
    for w in np.unique(rows["workload_id"]):
        pos = np.nonzero(ok & (rows["workload_id"] == w))[0]
        front = pos[pareto_front(keys[pos])]
        out.extend(sorted(front.tolist(), key=lambda p: (-rows["throughput_samples_per_s"][p], rows["index"][p])))
    return np.array(out, dtype=int)


def scenario_name(scenario_text, fallback):
    m = re.search(r"^name:\s*([^\s#]+)", scenario_text, re.MULTILINE)
    return m.group(1).strip("'\"") if m else fallback


def input_files(table_text):
    """The attribute input_files ("HASH BYTES PATH" a line) as (hash, bytes, path) triples."""
    out = []
    for line in table_text.splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3:
            out.append((parts[0], int(parts[1]) if parts[1].isdigit() else parts[1], parts[2]))
    return out


class Table:
    """A per-point table: its columns and, per key (point_index or hardware_id), its row numbers."""

    def __init__(self, cols, key):
        self.cols = cols
        self.rows = {}
        for i, k in enumerate(cols.get(key, [])):
            self.rows.setdefault(int(k), []).append(i)

    def of(self, key):
        return self.rows.get(int(key), [])

    def __bool__(self):
        return bool(self.rows)


class Data:
    def __init__(self, path, budgets):
        self.path, self.source, self.budgets = path, os.path.basename(path), dict(budgets)
        with h5py.File(path, "r") as f:
            self.attrs = {k: text(v) for k, v in f.attrs.items()}
            if "archive" not in f:
                raise SystemExit(f"report.py: {path}: no /archive dataset (not a DSE result file?)")
            if f["archive"].shape[0] == 0:
                raise SystemExit(f"report.py: {path}: the archive is empty (no evaluated point was feasible); "
                                 "no report to draw")
            self.archive = rows_to_table(f["archive"])
            self.points = rows_to_table(f["points"]) if "points" in f and f["points"].shape[0] > 0 else None
            self.workloads = self._names(f, "workloads")
            self.variants = self._names(f, "variants")
            self.present = {t: t in f for t in DETAIL_TABLES}
            self.sheets_of = f["mapping_sheets"].attrs.get("points", b"archive") if "mapping_sheets" in f else None
            tables = {t: rows_to_table(f[t]) if t in f and f[t].shape[0] > 0 else {} for t in DETAIL_TABLES}
        self.sheets = Table(tables["mapping_sheets"], "point_index")
        self.risk = Table(tables["risk_items"], "point_index")
        self.step = Table(tables["step_breakdown"], "point_index")
        self.curves = Table(tables["serving_curves"], "point_index")
        self.roofs = Table(tables["roofs"], "hardware_id")
        self.scenario = self.attrs.get("scenario", "")
        self.name = scenario_name(self.scenario, os.path.splitext(self.source)[0])
        self.selected = shortlist(self.archive, self.budgets)
        self.label = {int(p): f"S{i + 1}" for i, p in enumerate(self.selected)}
        self.rows_source = "points" if self.points is not None else "archive"
        self.rows = self.points if self.points is not None else self.archive

    @staticmethod
    def _names(f, name):
        if name not in f or f[name].dtype.names is None:
            return {}
        t = rows_to_table(f[name])
        return {int(t["id"][i]): {c: t[c][i] for c in t if c != "id"} for i in range(len(t["id"]))}

    # ---- names and units
    def unit(self, wid):
        """The throughput unit of workload wid: tokens/s, images/s or samples/s."""
        return str(self.workloads.get(int(wid), {}).get("throughput_unit", "samples/s"))

    def noun(self, wid):
        return self.unit(wid).split("/")[0].rstrip("s")  # token, image, sample

    def workload_name(self, wid, fallback=""):
        return str(self.workloads.get(int(wid), {}).get("name", fallback))

    def variant_name(self, rows, p):
        v = self.variants.get(int(rows["hardware_id"][p]))
        return str(v["name"]) if v else str(rows["hardware"][p])

    def entry(self, rows, p):
        """The hardware entry (platform) of row p: the variants table's, else NAME of NAME#v."""
        v = self.variants.get(int(rows["hardware_id"][p]))
        return str(v["entry"]) if v else str(rows["hardware"][p]).partition("#")[0]

    def knobs(self, rows, p):
        v = self.variants.get(int(rows["hardware_id"][p]))
        return str(v["knobs"]) if v else ""

    def served(self, rows, p):
        return self.unit(rows["workload_id"][p]) == "tokens/s"

    def entries(self):
        """Every hardware entry of the scenario (the variants table's), else of the stored rows."""
        names = {str(v["entry"]) for v in self.variants.values()} or set(self.row_entries().tolist())
        return sorted(names)

    def workload_ids(self):
        ids = set(np.unique(self.archive["workload_id"]).tolist())
        if self.points is not None:
            ids |= set(np.unique(self.points["workload_id"]).tolist())
        return sorted(ids | set(self.workloads))

    # ---- the shortlist by platform
    def shortlisted_entries(self):
        """Entries with a shortlisted point, in the order of their first shortlisted point (the
        shortlist runs per workload, best throughput first)."""
        out = []
        for p in self.selected:
            e = self.entry(self.archive, p)
            if e not in out:
                out.append(e)
        return out

    def row_entries(self):
        """The entry of every stored row (cached)."""
        if not hasattr(self, "_row_entries"):
            self._row_entries = np.array([self.entry(self.rows, p) for p in range(len(self.rows["index"]))],
                                         dtype=object)
        return self._row_entries

    def best_shortlisted(self, entry, wid, keep=None):
        """Archive position of the shortlisted point of entry and workload with the most
        throughput (among those keep(p) accepts), or None."""
        a = self.archive
        cand = [p for p in self.selected if self.entry(a, p) == entry and a["workload_id"][p] == wid
                and (keep is None or keep(p))]
        return max(cand, key=lambda p: (a["throughput_samples_per_s"][p], -int(a["index"][p]))) if cand else None

    def sla_fields(self):
        """The SLA metrics the budgets bound (budget field, name, curve fields, record fields),
        end-to-end when none is bound."""
        keys = [k for k in SLA_METRICS if k in self.budgets] or ["p99_latency_s"]
        return [(k,) + SLA_METRICS[k] for k in keys]

    # ---- budgets in words
    def budget_items(self):
        out = []
        for f, label, unit, scale in (("ttft_p99_s", "p99 time to first token", "ms", 1e3),
                                      ("tpot_p99_s", "p99 time per output token", "ms", 1e3),
                                      ("p99_latency_s", "p99 end-to-end latency", "ms", 1e3),
                                      ("power_w", "power at the wall", "W", 1.0),
                                      ("area_mm2", "area", "mm²", 1.0),
                                      ("memory_bytes", "memory per chip", "GB", 1e-9),
                                      ("cost_usd", "system cost", "USD", 1.0)):
            if f in self.budgets:
                out.append((label, f"≤ {self.budgets[f] * scale:g} {unit}"))
        return out

    def budget_text(self):
        items = self.budget_items()
        return "; ".join(f"{a} {b}" for a, b in items) if items else "no budgets"


# ---- the workload fit matrix -----------------------------------------------------------------------

FIT_MARKS = {"fits": "meets the budgets", "memory": "does not fit in memory", "sla": "misses the SLA",
             "power": "over the power budget", "area": "over the area budget", "infeasible": "infeasible",
             "unevaluated": "not evaluated", "unstored": "no stored point"}


def fit_cell(d, entry, wid):
    """(mark, row position or None) of the fit matrix cell entry x workload: the point of most
    throughput meeting every budget ("fits"), else why none does, judged over the stored rows
    (every evaluated point with --store all, else the archive):
      not evaluated    no row, or only rows whose kind cannot run the workload (bottleneck
                       'unsupported': a layer list on a system, a model on a system's chip)
      does not fit     no feasible row and some over the chip's memory (bottleneck 'capacity'),
                       or no feasible row within the memory budget
      misses the SLA   feasible rows within the memory budget, none within the SLA budgets
      over the power   some within memory and SLA, none also within the power budget
      over the area    ... none also within the area budget
      infeasible       no feasible row, for another reason."""
    r, b = d.rows, d.budgets
    m = np.nonzero((r["workload_id"] == wid) & (d.row_entries() == entry))[0]
    if len(m) == 0:
        return ("unstored" if d.points is None else "unevaluated"), None
    ok = within_budgets({k: v[m] for k, v in r.items()}, b)
    if ok.any():
        best = m[ok]
        return "fits", int(max(best, key=lambda p: (r["throughput_samples_per_s"][p], -int(r["index"][p]))))
    if all(str(r["bottleneck"][p]) == "unsupported" for p in m):
        return "unevaluated", None
    feas = m[r["feasible"][m].astype(bool)]
    if len(feas) == 0:
        return ("memory" if any(str(r["bottleneck"][p]) == "capacity" for p in m) else "infeasible"), None

    def within(rows, fields):
        keep = np.ones(len(rows), dtype=bool)
        for f in fields:
            if f in b:
                keep &= r[f][rows] <= b[f]
        return rows[keep]

    mem = within(feas, ["memory_bytes"])
    if len(mem) == 0:
        return "memory", None
    sla = within(mem, ["ttft_p99_s", "tpot_p99_s", "p99_latency_s"])
    if len(sla) == 0:
        return "sla", None
    if len(within(sla, ["power_w"])) == 0:
        return "power", None
    return "area", None
