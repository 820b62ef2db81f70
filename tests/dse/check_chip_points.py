#!/usr/bin/env python3
"""Points of `dse run` on custom chips are the single-configuration commands' figures (issue 55).

Loop-nest chips: runs EDGE_SCENARIO (scenarios/edge-cnn.yaml) with a random sample of its
points, then maps layers of the archived points again with `dse map`, built from the result
file alone: /variants' eval_arguments (the architecture, its overrides, the objective and the
mapper's evaluation budget, --time-budget-ms 0) and the layer's operator as its
/mapping_sheets row names it. Each layer's latency_s and energy_j equal dse map's bit for bit
(JSON numbers read back to the same double); each point's latency and energy per sample equal
its layers summed in the sheet's order, each times its repeat count, bit for bit.

Systolic chips: runs SYSTOLIC_SCENARIO (ResNet-50 on a 32 x 32 array, every dataflow, a DRAM
interface that never stalls) and runs each archived point's convolutions through `dse scalesim`
(SCALE-Sim's model, InterfaceBandwidth CALC, from the sheet's topology rows). dse run times a
layer with the native model, estimate_systolic: the same folds and skew as SCALE-Sim
(costmodel/systolic/systolic.hpp), its cycles counted where SCALE-Sim reports the last cycle's
index, so each convolution's cycles are SCALE-Sim's total plus one.

usage: check_chip_points.py DSE EDGE_SCENARIO SYSTOLIC_SCENARIO WORKDIR
"""
import json
import os
import random
import re
import shlex
import shutil
import subprocess
import sys

import h5py

dse, edge, systolic, work = sys.argv[1:5]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)


def run(scenario, name, extra=""):
    path = os.path.join(work, name + ".yaml")
    with open(scenario, encoding="utf-8") as src, open(path, "w", encoding="utf-8") as dst:
        dst.write(src.read() + extra)
    out = os.path.join(work, name + ".h5")
    subprocess.run([dse, "run", path, "-o", out, "--no-progress"], check=True, stdout=subprocess.DEVNULL)
    with h5py.File(out, "r") as f:
        archive = f["archive"][:]
        sheets = f["mapping_sheets"][:]
        variants = {int(r["id"]): r["eval_arguments"].decode() for r in f["variants"][:]}
    return archive, sheets, variants


def repeat_of(mapping):
    m = re.search(r", x(\d+)$", mapping)
    return int(m.group(1)) if m else 1


def check_totals(point, rows):
    """The point's figures are its layers summed in order (as costmodel/lowering sums them)."""
    latency = energy = 0.0
    for r in rows:
        n = float(repeat_of(r["mapping"].decode()))
        latency += n * r["latency_s"]
        energy += n * r["energy_j"]
    check(latency == point["latency_s"], f"point {point['index']}: latency {point['latency_s']!r} != layers' {latency!r}")
    per_sample = energy / float(point["batch"])
    check(per_sample == point["energy_per_sample_j"],
          f"point {point['index']}: energy per sample {point['energy_per_sample_j']!r} != layers' {per_sample!r}")


def loopnest_points():
    archive, sheets, variants = run(edge, "edge", "search:\n  sampler: random\n  samples: 16\n")
    rng = random.Random(55)
    chosen = rng.sample(list(archive), min(4, len(archive)))
    maps = 0
    for point in chosen:
        rows = [r for r in sheets if r["point_index"] == point["index"]]
        check(len(rows) > 0, f"point {point['index']}: no mapping sheet")
        check_totals(point, rows)
        mapped = [r for r in rows if " => " in r["mapping"].decode()]
        for r in rng.sample(mapped, min(10, len(mapped))):
            op = r["mapping"].decode().split(" => ")[0]
            args = [dse, "map"] + shlex.split(variants[int(point["hardware_id"])]) + ["--op", op, "--json"]
            got = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
            for key in ("latency_s", "energy_j"):
                check(float(got[key]) == r[key],
                      f"point {point['index']} layer {r['layer'].decode()}: {key} {r[key]!r} != dse map's {got[key]!r} "
                      f"({' '.join(shlex.quote(a) for a in args)})")
            maps += 1
    check(maps >= 20, f"only {maps} layers mapped again")
    return maps


def systolic_points():
    archive, sheets, _ = run(systolic, "systolic")
    convs = 0
    for point in archive:
        rows = [r for r in sheets if r["point_index"] == point["index"]]
        check_totals(point, rows)
        layers = []
        for r in rows:
            m = re.match(r"H=(\d+) W=(\d+) R=(\d+) S=(\d+) C=(\d+) K=(\d+) stride=(\d+)(?: x(\d+))? => (\w+),",
                         r["mapping"].decode())
            if m:
                layers.append((r, [int(v) for v in m.groups()[:7]], int(m.group(8) or 1), m.group(9)))
        dataflow = layers[0][3]
        folder = os.path.join(work, f"scalesim_{point['index']}")
        os.makedirs(folder)
        with open(os.path.join(folder, "c.cfg"), "w", encoding="utf-8") as f:
            f.write("[general]\nrun_name = p\n\n[architecture_presets]\nArrayHeight: 32\nArrayWidth: 32\n"
                    "IfmapSramSzkB: 256\nFilterSramSzkB: 256\nOfmapSramSzkB: 128\nIfmapOffset: 0\n"
                    f"FilterOffset: 10000000\nOfmapOffset: 20000000\nDataflow : {dataflow}\nBandwidth : 10\n"
                    "MemoryBanks: 1\n\n[run_presets]\nInterfaceBandwidth: CALC\n")
        with open(os.path.join(folder, "t.csv"), "w", encoding="utf-8") as f:
            f.write("Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,\n")
            for i, (_, dims, _, _) in enumerate(layers):
                h, w, r_, s, c, k, stride = dims
                f.write(f"l{i}, {h}, {w}, {r_}, {s}, {c}, {k}, {stride},\n")
        subprocess.run([dse, "scalesim", "-c", os.path.join(folder, "c.cfg"), "-t", os.path.join(folder, "t.csv"),
                        "-p", folder], check=True, stdout=subprocess.DEVNULL)
        with open(os.path.join(folder, "p", "COMPUTE_REPORT.csv"), encoding="utf-8") as f:
            totals = [int(line.split(",")[1]) for line in f.readlines()[1:]]
        for (r, _, count, _), cycles in zip(layers, totals):
            # 1 GHz clock: the layer's seconds are its cycles / 1e9, `count` runs of the convolution.
            native = round(r["latency_s"] * 1e9 / count)
            check(native == cycles + 1,
                  f"systolic point {point['index']} layer {r['layer'].decode()}: {native} cycles, SCALE-Sim {cycles}")
            convs += 1
    check(convs >= 50, f"only {convs} convolutions compared")
    return convs


maps = loopnest_points()
convs = systolic_points()
if failures:
    print("\n".join(failures[:20]))
    sys.exit(1)
print(f"chip points: {maps} loop-nest layers equal dse map's, {convs} systolic convolutions SCALE-Sim's cycles + 1")
