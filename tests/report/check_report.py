#!/usr/bin/python3
"""ctest report_quickstart: `dse report` on the quickstart output, and the per-point tables of
`dse run` on quickstart and llm-serving.

usage: check_report.py DSE_BINARY SOURCE_DIR WORK_DIR

Checks: every expected file exists; each PNG decodes (matplotlib.image.imread) at the size
figures.json gives and is not blank (pixel variance above a threshold); the HTML references
only files and anchors that exist; the report's shortlist is the one `dse shortlist` prints for
the same budgets, and the report states the budgets and the run's provenance; every drawn
number equals the stored value it comes from (figure_checks.check_numbers) and no two texts of
a figure overlap (figure_checks.check_texts); the mapping sheet CSVs hold /mapping_sheets;
/risk_items, /step_breakdown and /serving_curves agree with the records (figure_checks.check_tables);
without the per-point tables the report still completes and says what is missing."""
import csv
import io
import os
import re
import shutil
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.image as mpimg  # noqa: E402
import numpy as np  # noqa: E402
import h5py  # noqa: E402

DSE, SRC, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, os.path.join(SRC, "scripts"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figure_checks as fc  # noqa: E402

FIGURES = ["workload_fit.png", "latency_sweep.png", "perf_per_watt.png", "risk_map.png", "roofline.png",
           "mfu_stall.png", "pareto_projections.png", "search_quality.png"]
# A blank (single-colour) image has variance 0; a figure with axes, text and markers on
# white is far above this (the quickstart figures measure > 0.01 on a 0..1 scale).
MIN_VARIANCE = 1e-3
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def run(*args):
    r = subprocess.run(list(args), capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(args)} failed ({r.returncode}):\n{r.stdout}\n{r.stderr}")
    return r.stdout


def shortlist_indices(h5, sla_ms, power_w):
    out = run(DSE, "shortlist", h5, "--sla-p99-ms", str(sla_ms), "--power-w", str(power_w), "--format", "csv")
    return sorted(int(r["index"]) for r in csv.DictReader(io.StringIO(out)))


def check_report(h5, rep, sla_ms, power_w):
    stdout = run(DSE, "report", h5, "-o", rep, "--sla-p99-ms", str(sla_ms), "--power-w", str(power_w))
    check(stdout.strip().splitlines()[-1] == os.path.join(rep, "index.html"), f"dse report prints the path ({stdout!r})")
    want = shortlist_indices(h5, sla_ms, power_w)
    check(len(want) > 0, "the budgets leave a non-empty shortlist")
    expected = ["index.html", "report.md", "shortlist.csv"] + FIGURES + [f"mapping_{i}.csv" for i in want]
    for name in expected:
        check(os.path.isfile(os.path.join(rep, name)), f"{rep}/{name} exists")
    with open(os.path.join(rep, "shortlist.csv"), encoding="utf-8") as f:
        got = sorted(int(r["index"]) for r in csv.DictReader(f))
    check(got == want, f"report shortlist {got} equals dse shortlist {want}")
    manifest = fc.load_manifest(rep)
    size = {f["file"]: (f["height_px"], f["width_px"]) for f in manifest["figures"]}
    check(sorted(size) == sorted(FIGURES), f"figures.json lists the figures ({sorted(size)})")
    for name in FIGURES:
        path = os.path.join(rep, name)
        if not os.path.isfile(path):
            continue
        img = mpimg.imread(path)
        check(img.shape[:2] == size.get(name), f"{name} is {size.get(name)} (got {img.shape})")
        var = float(np.var(img[..., :3]))
        check(var > MIN_VARIANCE, f"{name} is not blank (pixel variance {var:.4g} > {MIN_VARIANCE})")
    for f in fc.check_links(rep, manifest) + fc.check_texts(manifest):
        check(False, f)
    bad, n = fc.check_numbers(h5, manifest)
    for f in bad:
        check(False, f)
    check(n > 0, f"some drawn numbers read back ({n})")
    with open(os.path.join(rep, "index.html"), encoding="utf-8") as f:
        page = f.read()
    with h5py.File(h5, "r") as f:
        version, seed = f.attrs["version"], f.attrs["seed"]
        commit = f.attrs["commit"]
    version, commit = (v.decode() if isinstance(v, bytes) else str(v) for v in (version, commit))
    for what in (version, commit, f"<td>{seed}</td>", "p99 end-to-end latency", "≤ 180 W"):
        check(what in page, f"the report states {what!r} at the top")
    check(page.index("id='budgets'") < page.index("id='figures'") and
          page.index("id='provenance'") < page.index("id='figures'") and
          page.index("id='shortlist'") < page.index("id='figures'"), "budgets, provenance, shortlist come first")
    with open(os.path.join(rep, "report.md"), encoding="utf-8") as f:
        md = f.read()
    for name in FIGURES:
        check(f"]({name})" in md, f"report.md shows {name}")
    return want, md


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    h5 = os.path.join(WORK, "q.h5")
    run(DSE, "run", os.path.join(SRC, "scenarios", "quickstart.yaml"), "-o", h5)
    want, md = check_report(h5, os.path.join(WORK, "report"), 1, 180)

    # `dse shortlist --top N` keeps N rows per workload (0: all); a negative count is refused, not
    # wrapped to "all" (it was, read as an unsigned count).
    rows_all = len(list(csv.DictReader(io.StringIO(run(DSE, "shortlist", h5, "--top", "0", "--format", "csv")))))
    rows_1 = len(list(csv.DictReader(io.StringIO(run(DSE, "shortlist", h5, "--top", "1", "--format", "csv")))))
    check(rows_1 < rows_all, f"--top 1 keeps fewer rows ({rows_1}) than --top 0 ({rows_all})")
    r = subprocess.run([DSE, "shortlist", h5, "--top", "-1"], capture_output=True, text=True)
    check(r.returncode == 2 and "--top: expected a count >= 0 (got -1)" in r.stderr,
          f"--top -1 is refused (exit {r.returncode}, stderr {r.stderr!r})")

    # An output folder that cannot be made is one line from dse report, exit 1 (it was report.py's
    # traceback, and a second line).
    r = subprocess.run([DSE, "report", h5, "-o", "/proc/no_report_here"], capture_output=True, text=True)
    check(r.returncode == 1 and r.stderr == "dse report: cannot create the report folder /proc/no_report_here: "
          "No such file or directory\n", f"an impossible folder is refused (exit {r.returncode}, stderr {r.stderr!r})")

    # dse run writes /mapping_sheets: the report's per-point CSV holds that point's layers.
    with h5py.File(h5, "r") as f:
        sheets = f["mapping_sheets"][:]
    layers = [r["layer"].decode() for r in sheets if int(r["point_index"]) == want[0]]
    check(len(layers) > 0, f"/mapping_sheets holds the layers of point {want[0]}")
    with open(os.path.join(WORK, "report", f"mapping_{want[0]}.csv"), encoding="utf-8") as f:
        sheet = list(csv.DictReader(f))
    check([r["layer"] for r in sheet] == layers, f"mapping sheet from /mapping_sheets ({sheet})")
    check("no /mapping_sheets" not in md, "with /mapping_sheets the report does not say it is missing")

    # The same file without the per-point tables: the figures that need them say so.
    h5n = os.path.join(WORK, "q_nosheets.h5")
    shutil.copy(h5, h5n)
    with h5py.File(h5n, "a") as f:
        for t in ("mapping_sheets", "risk_items", "step_breakdown", "serving_curves", "roofs"):
            del f[t]
    _, md_n = check_report(h5n, os.path.join(WORK, "report_nosheets"), 1, 180)
    check("not in this file" in md_n, "without /mapping_sheets the report says 'not in this file'")

    # The per-point tables agree with the records: quickstart (layer lists) and llm-serving
    # (served points: the risk model's items and serving curves).
    bad, n = fc.check_tables(h5)
    for f in bad:
        check(False, f"quickstart: {f}")
    h5s = os.path.join(WORK, "llm.h5")
    run(DSE, "run", os.path.join(SRC, "scenarios", "llm-serving.yaml"), "-o", h5s, "--no-progress")
    bad, n2 = fc.check_tables(h5s)
    for f in bad:
        check(False, f"llm-serving: {f}")
    with h5py.File(h5s, "r") as f:
        owners = {r["owner"].decode() for r in f["risk_items"][:]}
        curves = f["serving_curves"].shape[0]
    check(len(owners) >= 2 and curves > 0, f"llm-serving stores risk owners {owners} and {curves} curve rows")
    print(f"per-point tables: {n} relations on quickstart, {n2} on llm-serving hold")

    # A file without /points (--store archive) still gives a full report.
    h5a = os.path.join(WORK, "q_archive.h5")
    run(DSE, "run", os.path.join(SRC, "scenarios", "quickstart.yaml"), "-o", h5a, "--store", "archive")
    check_report(h5a, os.path.join(WORK, "report_archive"), 1, 180)

    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
