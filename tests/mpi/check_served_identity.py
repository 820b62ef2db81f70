#!/usr/bin/env python3
"""A served point of `dse run` is `dse eval` of the same configuration (issue 53, item 1).

Runs SCENARIO with --store all on one rank, then evaluates every served point again with
`dse eval`, built from the result file's own names tables: /variants' eval_arguments (system,
parallelism, precision, fusion, kernels, batching, stack), /workloads' (model, request lengths,
rate, simulated requests, seed, decode context) and the point's batch as --batch and --max-batch.
A variant whose chip or system figures a scenario's `overrides:` changed carries them as --override
PATH=VALUE options (dse/io/overrides.hpp), so `dse eval` reads the same patched files.
Every figure the record stores must equal the one `dse eval --json` prints, bit for bit (JSON
numbers carry 17 significant digits, which read back to the same double), the system's price and
its cost per hour included.

usage: check_served_identity.py DSE SCENARIO WORKDIR [--every N]
  --every N: only every N-th served point (by index: 0, N, 2N, ...), for large scenarios
"""
import concurrent.futures
import json
import os
import shlex
import subprocess
import sys

import h5py

dse, scenario, work = sys.argv[1:4]
every = int(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[4] == "--every" else 1
os.makedirs(work, exist_ok=True)
out = os.path.join(work, "served.h5")
if os.path.exists(out):
    os.remove(out)
subprocess.run([dse, "run", scenario, "-o", out, "--store", "all", "--no-progress"], check=True,
               stdout=subprocess.DEVNULL)

with h5py.File(out, "r") as f:
    points = f["points"][:]
    variants = {int(r["id"]): r["eval_arguments"].decode() for r in f["variants"][:]}
    workloads = {int(r["id"]): r["eval_arguments"].decode() for r in f["workloads"][:]}
    if f["variants"].attrs["variants"].decode() != "all":
        sys.exit("check_served_identity: /variants holds only the archive's variants")


def evaluate(row):
    args = [dse, "eval"] + shlex.split(variants[int(row["hardware_id"])]) + \
        shlex.split(workloads[int(row["workload_id"])]) + \
        ["--batch", str(int(row["batch"])), "--max-batch", str(int(row["batch"])), "--json"]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode not in (0, 1):
        return row, None, f"dse eval exit {p.returncode}: {p.stderr.strip()} ({shlex.join(args)})"
    return row, json.loads(p.stdout), shlex.join(args)


def expected(e, batch):
    """The record's fields as dse eval gives them (feasible points)."""
    s = e["serving"]
    at = s["at_rate"]
    sweep = [p for p in s["sweep"] if p["batch"] == batch][0]
    return {
        "throughput_samples_per_s": sweep["tokens_per_s"], "latency_s": sweep["e2e_s"],
        "energy_per_sample_j": e["energy_per_token_j"], "engineering_risk": e["risk"]["score"],
        "p99_latency_s": at["e2e"]["p99_s"], "e2e_p50_s": at["e2e"]["p50_s"],
        "ttft_p50_s": at["ttft"]["p50_s"], "ttft_p90_s": at["ttft"]["p90_s"], "ttft_p99_s": at["ttft"]["p99_s"],
        "tpot_p50_s": at["tpot"]["p50_s"], "tpot_p90_s": at["tpot"]["p90_s"], "tpot_p99_s": at["tpot"]["p99_s"],
        "power_w": e["power_w"], "accelerator_power_w": e["accelerator_power_w"], "mfu": e["totals"]["step_mfu"],
        "memory_bytes": e["totals"]["memory_bytes"], "flops": e["totals"]["flops"],
        "cost_usd": e["cost_usd"], "area_mm2": e["area_mm2"], "cost_per_hour_usd": e["cost_per_hour_usd"],
    }


served = [r for r in points if workloads.get(int(r["workload_id"]), "") and int(r["index"]) % every == 0]
bad = []
compared = feasible = 0
with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, os.cpu_count() or 1)) as pool:
    for row, e, cmd in pool.map(evaluate, served):
        if e is None:
            bad.append(cmd)
            continue
        compared += 1
        if not row["feasible"]:
            continue
        feasible += 1
        want = expected(e, int(row["batch"]))
        for field, value in want.items():
            if float(row[field]) != float(value):
                bad.append(f"point {int(row['index'])} {field}: dse run {float(row[field])!r}, dse eval {value!r} "
                           f"({cmd})")
        if row["bottleneck"].decode() != e["totals"]["bottleneck"]:
            bad.append(f"point {int(row['index'])} bottleneck: {row['bottleneck'].decode()} vs {e['totals']['bottleneck']}")
if not served:
    sys.exit("check_served_identity: no served point in " + scenario)
if bad:
    print("\n".join(bad[:20]))
    sys.exit(f"check_served_identity: {len(bad)} differences over {compared} points")
print(f"check_served_identity: {compared} served points ({feasible} feasible), every stored figure equals dse eval's")
