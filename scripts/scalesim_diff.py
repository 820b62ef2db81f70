#!/usr/bin/env python3
"""Differential check of `dse scalesim` against SCALE-Sim v2 itself on random cases.

Generates random SCALE-Sim runs (array shape, SRAM sizes, dataflow, CALC or USER bandwidth,
convolution or GEMM topologies of one to three layers), runs SCALE-Sim v2's own
`scalesim/scale.py` and `dse scalesim` on each, and compares every figure of the three
reports (COMPUTE_REPORT, DETAILED_ACCESS_REPORT, BANDWIDTH_REPORT). Integers must be equal,
real numbers equal to 1e-9 relative.

SCALE-Sim is not a dependency of the project: give the folder of a checkout of
scalesim-project/scale-sim-v2 (the reference cases in data/oracles/scalesim came from commit
22f88b17) and a Python that has numpy, tqdm and pandas (Debian: python3-numpy python3-tqdm
python3-pandas):

    python3 scripts/scalesim_diff.py --scalesim ~/scale-sim-v2 --python /usr/bin/python3 \\
        --dse build/release/dse/dse --cases 200 --seed 1

Exit status 0 when every case matches, 1 otherwise; each mismatch is printed with its
inputs kept under --keep (default: a temporary folder that is removed when all match).
"""

import argparse
import csv
import os
import random
import shutil
import subprocess
import sys
import tempfile


def random_case(rng, index, forms=None, large=None):
    """One SCALE-Sim run: config text, topology text, gemm flag, a short description.

    forms (a second random.Random, or None): also draw the other forms of SCALE-Sim's conv rows,
    from their own stream so that a seed's cases are otherwise the same: a ninth field (the
    stride along the width), a depthwise layer (a name containing "DP") and a note after the
    row's last comma. large (a third random.Random, or None): arrays of 32 to 128 a side and
    layers up to 2-4x larger, from that stream too."""
    rows = rng.choice([2, 3, 4, 5, 7, 8, 12, 16, 20, 32])
    cols = rng.choice([2, 3, 4, 6, 8, 9, 16, 24, 32])
    if large is not None:  # from its own stream: the seed's other draws stay the same
        rows, cols = large.choice([32, 48, 64, 100, 128]), large.choice([32, 64, 96, 128])
    df = rng.choice(["ws", "os", "is"])
    user = rng.random() < 0.6
    bw = rng.choice([1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 32])
    srams = [rng.choice([1, 2, 4, 8, 16, 64, 512]) for _ in range(3)]
    gemm = rng.random() < 0.4
    layers = []
    for n in range(rng.choice([1, 1, 2, 3])):
        if gemm:
            m, k, nn = rng.randint(1, 200), rng.randint(1, 300), rng.randint(1, 150)
            if large is not None:
                m, k, nn = m * large.randint(1, 2), k * large.randint(1, 2), nn * large.randint(1, 4)
            layers.append(f"G{n}, {m}, {nn}, {k},")
        else:
            r = rng.choice([1, 1, 2, 3, 3, 5, 7])
            s = rng.choice([r, r, 1, 3])
            stride = rng.choice([1, 1, 1, 2, 3, 4])
            h = rng.randint(r, r + 30)
            w = rng.randint(s, s + 30)
            c = rng.randint(1, 24)
            k = rng.randint(1, 48)
            if large is not None:
                c, k = c * large.randint(1, 4), k * large.randint(1, 4)
            name, stride_w, note = f"C{n}", "", ""
            if forms is not None:
                if forms.random() < 0.4:
                    stride_w = f" {forms.choice([1, 2, 3])},"
                if forms.random() < 0.3:
                    name, c = f"C{n}_DP", forms.randint(1, 6)
                if forms.random() < 0.3:
                    note = "#note"
            layers.append(f"{name}, {h}, {w}, {r}, {s}, {c}, {k}, {stride},{stride_w}{note}")
    name = f"case{index}"
    cfg = (f"[general]\nrun_name = {name}\n\n[architecture_presets]\n"
           f"ArrayHeight:    {rows}\nArrayWidth:     {cols}\n"
           f"IfmapSramSzkB:    {srams[0]}\nFilterSramSzkB:   {srams[1]}\nOfmapSramSzkB:    {srams[2]}\n"
           "IfmapOffset:    0\nFilterOffset:   10000000\nOfmapOffset:    20000000\n"
           f"Bandwidth : {bw}\nDataflow : {df}\nMemoryBanks:   1\n\n"
           f"[run_presets]\nInterfaceBandwidth: {'USER' if user else 'CALC'}\n")
    if gemm:
        topo = "Layer,M,N,K,\n" + "\n".join(layers) + "\n"
    else:
        topo = ("Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,\n"
                + "\n".join(layers) + "\n")
    desc = (f"{rows}x{cols} {df} {'USER bw ' + str(bw) if user else 'CALC'} SRAM {srams} KiB; "
            + " | ".join(layers))
    return name, cfg, topo, gemm, desc


def read_report(path):
    with open(path, newline="") as f:
        rows = [[c.strip() for c in r if c.strip() != ""] for r in csv.reader(f)]
    return rows[0], rows[1:]


def same(a, b):
    try:
        x, y = float(a), float(b)
    except ValueError:
        return a == b
    if x == y:
        return True
    return abs(x - y) <= 1e-9 * max(abs(x), abs(y))


def compare(ref_dir, dse_dir):
    diffs = []
    for report in ("COMPUTE_REPORT.csv", "DETAILED_ACCESS_REPORT.csv", "BANDWIDTH_REPORT.csv"):
        ref_head, ref_rows = read_report(os.path.join(ref_dir, report))
        got_head, got_rows = read_report(os.path.join(dse_dir, report))
        if ref_head != got_head or len(ref_rows) != len(got_rows):
            diffs.append(f"{report}: header or row count differs")
            continue
        for ref, got in zip(ref_rows, got_rows):
            for col, a, b in zip(ref_head, ref, got):
                if not same(a, b):
                    diffs.append(f"{report} layer {ref[0]} {col}: SCALE-Sim {a}, dse {b}")
    return diffs


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scalesim", required=True, help="a scale-sim-v2 checkout (holds scalesim/scale.py)")
    ap.add_argument("--python", default=sys.executable, help="the Python that runs SCALE-Sim")
    ap.add_argument("--dse", default="build/release/dse/dse")
    ap.add_argument("--cases", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--forms", action="store_true",
                    help="also draw conv rows with a stride width, depthwise (DP) layers and notes after the last comma")
    ap.add_argument("--large", action="store_true",
                    help="arrays of 32 to 128 a side, layers up to 2-4x larger in channels, filters and GEMM sizes (slower in SCALE-Sim)")
    ap.add_argument("--timeout", type=float, default=None,
                    help="seconds SCALE-Sim may take on one case; a case past it is skipped and counted")
    ap.add_argument("--keep", help="folder for the inputs and reports of mismatching cases")
    ap.add_argument("--save", help="folder to save every case in (run.cfg, conv.csv or gemm.csv, SCALE-Sim's three "
                    "reports): the layout of data/oracles/scalesim/differential")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="scalesim_diff_")
    keep = args.keep or os.path.join(work, "mismatches")
    failed = 0
    skipped = 0
    env = dict(os.environ, PYTHONPATH=os.path.abspath(args.scalesim))
    for i in range(args.cases):
        forms = random.Random(f"{args.seed}/{i}") if args.forms else None
        large = random.Random(f"large/{args.seed}/{i}") if args.large else None
        name, cfg, topo, gemm, desc = random_case(rng, i, forms, large)
        case_dir = os.path.join(work, name)
        os.makedirs(case_dir)
        cfg_path = os.path.join(case_dir, "run.cfg")
        topo_path = os.path.join(case_dir, "gemm.csv" if gemm else "conv.csv")
        with open(cfg_path, "w") as f:
            f.write(cfg)
        with open(topo_path, "w") as f:
            f.write(topo)
        kind = "gemm" if gemm else "conv"
        try:
            ref = subprocess.run([args.python, os.path.join(args.scalesim, "scalesim", "scale.py"), "-c", cfg_path,
                                  "-t", topo_path, "-i", kind, "-p", os.path.join(case_dir, "ref")],
                                 env=env, capture_output=True, text=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            skipped += 1
            print(f"{name}: skipped, SCALE-Sim past {args.timeout:g} s ({desc})", flush=True)
            continue
        got = subprocess.run([args.dse, "scalesim", "-c", cfg_path, "-t", topo_path, "-i", kind, "-p",
                              os.path.join(case_dir, "dse")], capture_output=True, text=True)
        ref_dir = os.path.join(case_dir, "ref", name)
        dse_dir = os.path.join(case_dir, "dse", name)
        if ref.returncode != 0 or not os.path.exists(os.path.join(ref_dir, "COMPUTE_REPORT.csv")):
            skipped += 1
            print(f"{name}: skipped, SCALE-Sim failed ({desc}): {ref.stderr.strip().splitlines()[-1:]}", flush=True)
            continue
        diffs = [f"dse exited {got.returncode}: {got.stderr.strip()}"] if got.returncode != 0 else compare(ref_dir, dse_dir)
        if args.save:
            dest = os.path.join(args.save, name)
            os.makedirs(dest, exist_ok=True)
            for f in (cfg_path, topo_path):
                shutil.copy(f, dest)
            for report in ("COMPUTE_REPORT.csv", "DETAILED_ACCESS_REPORT.csv", "BANDWIDTH_REPORT.csv"):
                shutil.copy(os.path.join(ref_dir, report), dest)
        if diffs:
            failed += 1
            print(f"{name}: MISMATCH ({desc})", flush=True)
            for d in diffs[:12]:
                print(f"    {d}", flush=True)
            shutil.copytree(case_dir, os.path.join(keep, name))
        else:
            print(f"{name}: equal ({desc})", flush=True)
    print(f"{args.cases - failed - skipped} of {args.cases - skipped} cases equal"
          + (f" ({skipped} skipped: SCALE-Sim failed or was too slow)" if skipped else "")
          + (f"; mismatches kept in {keep}" if failed else ""))
    if failed == 0:
        shutil.rmtree(work)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
