#!/usr/bin/python3
"""ctest report_quickstart: `dse report` on the quickstart output.

usage: check_report.py DSE_BINARY SOURCE_DIR WORK_DIR

Checks: every expected file exists; each PNG decodes (matplotlib.image.imread) with
the size the report promises (scripts/plot_figures.py: FIG_W_PX x FIG_H_PX) and is not
blank (pixel variance above a threshold); the HTML references only files that exist;
the shortlist in the report is the one `dse shortlist` prints for the same budgets;
with /mapping_sheets and /risk_items added to the file, the report uses them."""
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

DSE, SRC, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, os.path.join(SRC, "scripts"))
import plot_figures  # noqa: E402

FIGURES = ["pareto_projections.png", "trade_curve.png", "workload_fit.png", "latency_sweep.png",
           "perf_per_watt.png", "roofline.png", "mfu_stall.png", "risk_map.png", "search_quality.png"]
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
    for name in FIGURES:
        path = os.path.join(rep, name)
        if not os.path.isfile(path):
            continue
        img = mpimg.imread(path)
        check(img.shape[:2] == (plot_figures.FIG_H_PX, plot_figures.FIG_W_PX),
              f"{name} is {plot_figures.FIG_W_PX}x{plot_figures.FIG_H_PX} (got {img.shape})")
        var = float(np.var(img[..., :3]))
        check(var > MIN_VARIANCE, f"{name} is not blank (pixel variance {var:.4g} > {MIN_VARIANCE})")
    with open(os.path.join(rep, "index.html"), encoding="utf-8") as f:
        page = f.read()
    refs = re.findall(r"""(?:src|href)\s*=\s*['"]([^'"]+)['"]""", page)
    check(len(refs) >= len(FIGURES), "the HTML references the figures")
    for ref in refs:
        if ref.startswith("#"):
            continue
        check(not re.match(r"^[a-z]+:", ref) and not ref.startswith("/"), f"HTML reference {ref} is relative")
        check(os.path.isfile(os.path.join(rep, ref)), f"HTML reference {ref} exists")
    for name in FIGURES:
        check(name in refs, f"the HTML shows {name}")
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
    import h5py
    with h5py.File(h5, "r") as f:
        sheets = f["mapping_sheets"][:]
    layers = [r["layer"].decode() for r in sheets if int(r["point_index"]) == want[0]]
    check(len(layers) > 0, f"/mapping_sheets holds the layers of point {want[0]}")
    with open(os.path.join(WORK, "report", f"mapping_{want[0]}.csv"), encoding="utf-8") as f:
        sheet = list(csv.DictReader(f))
    check([r["layer"] for r in sheet] == layers, f"mapping sheet from /mapping_sheets ({sheet})")
    check("no /mapping_sheets" not in md, "with /mapping_sheets the report does not say it is missing")

    # The same file without per-layer sheets: the figures that need them say so.
    h5n = os.path.join(WORK, "q_nosheets.h5")
    shutil.copy(h5, h5n)
    with h5py.File(h5n, "a") as f:
        del f["mapping_sheets"]
    _, md_n = check_report(h5n, os.path.join(WORK, "report_nosheets"), 1, 180)
    check("not in this file" in md_n, "without /mapping_sheets the report says 'not in this file'")

    # With risk items added, the owner and risk map uses them.
    h5x = os.path.join(WORK, "q_extra.h5")
    shutil.copy(h5, h5x)
    with h5py.File(h5x, "a") as f:
        rt = np.dtype([("platform", "S32"), ("owner", "S32"), ("item", "S64"), ("severity", "<f8")])
        f.create_dataset("risk_items", data=np.array([(b"datacenter-gpu", b"compiler team", b"new kernels", 0.3),
                                                      (b"inference-asic", b"runtime team", b"driver", 0.6)], dtype=rt))
    _, md2 = check_report(h5x, os.path.join(WORK, "report_extra"), 1, 180)
    check("No /risk_items" not in md2 and "No /risk_items" in md, "with /risk_items the risk map uses them")

    # A file without /points (--store archive) still gives a full report.
    h5a = os.path.join(WORK, "q_archive.h5")
    run(DSE, "run", os.path.join(SRC, "scenarios", "quickstart.yaml"), "-o", h5a, "--store", "archive")
    check_report(h5a, os.path.join(WORK, "report_archive"), 1, 180)

    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
