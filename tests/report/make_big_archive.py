#!/usr/bin/python3
"""Writes a synthetic result file with N archive rows (default 1,000,000) in the layout
of `dse run` (dse/driver/driver.cpp: /archive chunked by 1024 rows, uncompressed), to
time `dse shortlist --timing` on a million archived points.

usage: make_big_archive.py OUT.h5 [N]"""
import sys

import h5py
import numpy as np

out, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
rng = np.random.default_rng(1)
# The record of result layout 5 (dse/h5/results.hpp PointRecord, point_record_type()).
floats = ["throughput_samples_per_s", "latency_s", "energy_per_sample_j", "engineering_risk", "flops", "dram_bytes",
          "memory_bytes", "p99_latency_s", "ttft_p99_s", "tpot_p99_s", "power_w", "area_mm2", "cost_usd",
          "cost_per_hour_usd", "ttft_p50_s", "ttft_p90_s", "tpot_p50_s", "tpot_p90_s", "e2e_p50_s",
          "accelerator_power_w", "mfu"]
dt = np.dtype({"names": ["index", "hardware_id", "workload_id", "batch", "hardware", "workload"] + floats +
                        ["feasible", "bottleneck"],
               "formats": ["<u8", "<u4", "<u4", "<i8", "S32", "S32"] + ["<f8"] * len(floats) + ["u1", "S16"],
               "offsets": [0, 8, 12, 16, 24, 56] + [88 + 8 * i for i in range(len(floats))] + [256, 257],
               "itemsize": 280})
a = np.zeros(n, dtype=dt)
a["index"] = np.arange(n) * 3
a["hardware_id"] = rng.integers(0, 5000, n)
a["workload_id"] = rng.integers(0, 4, n)
a["batch"] = 2 ** rng.integers(0, 12, n)
a["hardware"] = np.char.add(b"hw#", a["hardware_id"].astype("S8"))
a["workload"] = np.char.add(b"wl", a["workload_id"].astype("S2"))
peak = 10 ** rng.uniform(12, 15, n)
a["throughput_samples_per_s"] = peak / 1e9 * a["batch"] ** 0.5
a["latency_s"] = a["batch"] / a["throughput_samples_per_s"] * rng.uniform(0.8, 1.2, n)
a["energy_per_sample_j"] = 10 ** rng.uniform(-6, -2, n)
a["engineering_risk"] = rng.choice([0.05, 0.1, 0.2, 0.3, 0.4], n)
a["flops"] = 1e9 * a["batch"]
a["dram_bytes"] = 1e7 * a["batch"]
a["memory_bytes"] = 1e8 * rng.uniform(1, 100, n)
a["p99_latency_s"] = a["latency_s"] * rng.uniform(1.0, 3.0, n)
a["power_w"] = rng.uniform(5, 700, n)
a["area_mm2"] = rng.uniform(50, 900, n)
a["accelerator_power_w"] = a["power_w"]
a["feasible"] = 1
a["bottleneck"] = b"compute"
with h5py.File(out, "w") as f:
    f.attrs["layout_version"] = np.int64(5)
    for k in ("scenario", "scenario_file", "version", "start_time", "store", "sampler"):
        f.attrs[k] = np.bytes_({"scenario": "name: big-synthetic\n", "store": "archive"}.get(k, "synthetic"))
    # The exact file type of dse/driver/driver.cpp point_record_type() (NUL-terminated strings),
    # so that reading needs no type conversion, as with files written by `dse run`.
    tid = h5py.h5t.create(h5py.h5t.COMPOUND, dt.itemsize)
    for name in dt.names:
        sub, off = dt.fields[name][:2]
        if sub.kind == "S":
            t = h5py.h5t.C_S1.copy()
            t.set_size(sub.itemsize)
            t.set_strpad(h5py.h5t.STR_NULLTERM)
        else:
            t = h5py.h5t.py_create(sub)
        tid.insert(name.encode(), off, t)
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_chunk((1024,))
    space = h5py.h5s.create_simple((n,), (h5py.h5s.UNLIMITED,))
    ds = h5py.h5d.create(f.id, b"archive", tid, space, dcpl=dcpl)
    ds.write(h5py.h5s.ALL, h5py.h5s.ALL, a)
print(out, n)
