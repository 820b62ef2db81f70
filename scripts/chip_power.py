#!/usr/bin/env python3
"""Matrix FLOP energies of the presets without a power run of their own, from published sustained GEMMs.

The H200's energies come from its own measured power (scripts/power_constants.py). The other presets take
theirs from a published sustained GEMM (the rows below, each with its source and tag) by the same rule:

  The chip runs the GEMM at `power_w` (its power cap: a dense GEMM sustained for seconds runs at the cap,
  the power manager lowering the clock -- measured on the H200, 691-693 W of 700, and stated by AMD for its
  Instinct GPUs, rocm-blogs Understanding_Peak_and_Max-Achievable_FLOPS: "lowering it in the dense compute
  phases"). With the model's unthrottled rate R_m of that GEMM (dse eval, the preset's own kernel model) and
  the measured sustained rate R:
    R < R_m: the model's throttle rule (power.hpp, voltage_and_frequency) must turn R_m into R, so
             s = R / R_m, the dynamic power at the nominal clock is P_dyn = (power_w - static) / s^3 and the
             GEMM's time at the nominal clock is the model's, T = FLOPs / R_m;
    R >= R_m: the chip does the GEMM's work in T = FLOPs / R at P_dyn = power_w - static (s = 1: a rate the
             model does not reach needs no throttle); the model, slower at that shape, then draws less than
             the cap there -- the energy per FLOP is the chip's, the shortfall the kernel model's (the
             check in tests/dse/check_chip_power.py reports it);
    no R:    the model's rate is taken as the sustained one: T = FLOPs / R_m, P_dyn = power_w - static.
  The FLOP energy is what P_dyn x T leaves after the GEMM's HBM bytes (hbm_byte_j) and the model's L2 and
  other energy at the preset's figures, over the GEMM's FLOPs. The static power and hbm_byte_j
  are the preset's (each with its own source in the platform file) and are read back from it, so set those
  first. A row's tag is the tag the platform file gives the derived figure (D: the chip's own measured rate at
  its cap; R: the cap taken as the GEMM's power with no measurement of this chip's GEMM power).

Usage: python3 scripts/chip_power.py [--dse build/release/dse/dse] [--hardware NAME ...] [--verify]
--verify (a ctest): exits 1 unless every preset holds the derived figure to 0.5% (they are written with 4
digits).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

from power_constants import energy_section  # the `energy:` map of a platform file

# (hardware, energy key, precision, m, n, k, measured sustained FLOP/s or None, power W, tag, source)
ROWS = [
    ("mi300x", "matrix_flop_fp16_j", "bf16", 4096, 4864, 32896, 708e12, 750, "D",
     "ROCm/rocm-blogs blogs/software-tools-optimization/measuring-max-achievable-flops-part2/README.md @ 8e01195 (P): "
     "hipblaslt-bench, trig_float inputs, 'AMD Instinct MI300X | 654 TFLOPs (1115 MHz) | 708 TFLOPs (1207 MHz) | 1273 "
     "TFLOPs (1230 MHz)', BF16 at M=4096 N=4864 K=32896 on an MI300X (750W); the 750 W cap: D (the clock, 1,207 of "
     "2,100 MHz, is the power manager's)"),
    ("mi300x", "matrix_flop_int8_j", "fp8", 4096, 3648, 32896, 1273e12, 750, "D",
     "the same table, FP8 at M=4096 N=3648 K=32896 (its footnote 4 reads 1223.6 TFLOPs at 1273 MHz: 4% apart)"),
    ("b200", "matrix_flop_fp16_j", "bf16", 1792, 16128, 3072, 1745e12, 1000, "D",
     "stas00/ml-engineering compute/accelerator/README.md MAMF table (S): 'NVIDIA B200 SXM | 1745.0 | 2250 | 77.6% | "
     "1792x16128x3072'; the 1000 W cap: S, flashinfer-ai/flashinfer pull 2899 (sustained back-to-back kernels on a "
     "B200: 'SM clocks drop from 1965 MHz to ~1580 MHz', 'Power spikes to ~1000W')"),
    ("b200", "matrix_flop_int8_j", "fp8", 15360, 4096, 3072, 3432.5e12, 1000, "D",
     "the same MAMF table, FP8: 'NVIDIA B200 SXM | 3432.5 | 4500 | 76.3% | 15360x4096x3072' (S)"),
    ("gaudi3", "matrix_flop_fp16_j", "bf16", 16384, 4096, 768, 1243e12, 900, "D",
     "the same MAMF table, BF16: 'Intel Gaudi 3 | 1243.0 | 1677 | 74.1% | 16384x4096x768' (S); the 900 W cap: "
     "S, SqueezeBits blog '[Intel Gaudi] #6' (2025-10-28): 'evidence of thermal and power throttling' under heavy "
     "BF16 work"),
    ("gaudi3", "matrix_flop_int8_j", "fp8", 16640, 1536, 3072, 1289.5e12, 900, "R",
     "the same MAMF table, FP8: 'Intel Gaudi 3 | 1289.5 | 1677 | 76.9% | 16640x1536x3072' (S); R: the model runs the "
     "shape faster than that (s < 1), and the rule's throttle then makes an FP8 FLOP 2.6x a BF16 one"),
    ("gaudi2", "matrix_flop_fp16_j", "bf16", 8192, 8192, 8192, 423.9e12, 600, "R",
     "NAVER-INTEL-Co-Lab/gaudi-perf matmul/README.md (P): '8192 | 8192 | 8192 | Gaudi 2 | 423.9 | 432 | 98.1%' "
     "(BF16; of its shapes the one the preset's kernel model comes closest to, -15%); no measurement of its power "
     "under a GEMM: the 600 W cap taken as its draw (R; at 98% of the datasheet rate its clock may well not be "
     "lowered, so the draw may be below the cap)"),
    ("gaudi2", "matrix_flop_int8_j", "fp8", 16384, 16384, 16384, 842.7e12, 600, "R",
     "the same README (P): '16384 | 16384 | 16384 | Per Tensor | Gaudi v2 | 865 | 842.7 | 97.4%' (FP8, torch, "
     "per-tensor scaled); power as above (R)"),
    ("mi250x", "matrix_flop_fp16_j", "bf16", 8192, 8192, 8192, None, 560, "R",
     "no published power under a GEMM: the 560 W cap taken as the draw of a sustained GEMM at the preset's "
     "(MAMF-based) rate on both GCDs (R)"),
    ("mi250x", "matrix_flop_int8_j", "int8", 8192, 8192, 8192, None, 560, "R", "as the BF16 row (R)"),
    ("mi210", "matrix_flop_fp16_j", "fp16", 10240, 10240, 10240, 127.16e12, 300, "R",
     "zzc0721/torch-performance-test-data issue 195 (S, the preset's rate source): FP16 10240^3 127.16 TFLOPS; "
     "no published power under a GEMM: the 300 W cap taken as its draw (R)"),
    ("mi210", "matrix_flop_int8_j", "int8", 10240, 10240, 10240, None, 300, "R", "as the FP16 row (R)"),
    ("tpu-v4", "matrix_flop_fp16_j", "bf16", 8192, 8192, 8192, None, 192, "R",
     "Cloud TPU v4 doc (P): 'Measured min/mean/max power 90/170/192 W'; the measured maximum taken as the draw of "
     "a sustained matrix multiply at the datasheet rate (R: no GEMM power published)"),
    ("tpu-v4", "matrix_flop_int8_j", "int8", 8192, 8192, 8192, None, 192, "R", "as the BF16 row (R)"),
    ("tpu-v5e", "matrix_flop_fp16_j", "bf16", 8192, 8192, 8192, None, 250, "R",
     "no published power: the assumed 250 W cap taken as the draw of a sustained matrix multiply (R)"),
    ("tpu-v5e", "matrix_flop_int8_j", "int8", 8192, 8192, 8192, None, 250, "R", "as the BF16 row (R)"),
    ("tpu-v5p", "matrix_flop_fp16_j", "bf16", 8192, 8192, 8192, None, 450, "R",
     "no published power: the assumed 450 W cap taken as the draw of a sustained matrix multiply (R)"),
    ("tpu-v5p", "matrix_flop_int8_j", "int8", 8192, 8192, 8192, None, 450, "R", "as the BF16 row (R)"),
]


def gemm(dse, hardware, precision, m, n, k):
    with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
        f.write(f"name: probe\nblocks:\n  - name: b\n    ops:\n      - {{name: g, kind: gemm, m: {m}, n: {n}, k: {k}}}\n")
        path = f.name
    try:
        out = subprocess.run([dse, "eval", "--hardware", hardware, "--workload", path, "--precision", precision,
                              "--phase", "prefill", "--batch", "1", "--seq", "1", "--no-serving", "--json"],
                             capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(path)
    return json.loads(out)


def derive(dse, row, energy):
    hw, key, prec, m, n, k, rate, power_w, tag, _ = row
    e = gemm(dse, hw, prec, m, n, k)
    t = e["totals"]
    lat, flops, dram, dyn = t["unthrottled_latency_s"], t["flops"], t["dram_bytes"], t["dynamic_energy_j"]
    other_j = dyn - flops * energy[key] - dram * energy["hbm_byte_j"]  # the model's L2 and other energy
    model_rate = flops / lat
    s = rate / model_rate if rate is not None and rate < model_rate else 1.0
    busy_s = flops / rate if rate is not None and rate >= model_rate else lat
    p_dyn = (power_w - energy["static_power_w"]) / s ** 3
    value = (p_dyn * busy_s - dram * energy["hbm_byte_j"] - other_j) / flops
    rate_text = "no measured rate" if rate is None else f"measured {rate / 1e12:.1f}"
    print(f"{hw:8s} {key:19s} {value:.4g}  [{tag}]  ({prec} {m}x{n}x{k}: model {model_rate / 1e12:.1f} TFLOP/s "
          f"unthrottled, {rate_text}: s = {s:.4f}, {power_w} W at the cap, P_dyn = {p_dyn:.0f} W, static "
          f"{energy['static_power_w']:.4g} W)")
    return value


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dse", default="build/release/dse/dse")
    ap.add_argument("--hardware", action="append", help="only these presets (repeatable)")
    ap.add_argument("--verify", action="store_true", help="exit 1 unless the presets hold the derived figures")
    a = ap.parse_args()
    bad = []
    for row in ROWS:
        if a.hardware and row[0] not in a.hardware:
            continue
        path = f"scenarios/hardware/platform/{row[0]}.yaml"
        energy = energy_section(path)
        value = derive(a.dse, row, energy)
        if abs(energy[row[1]] / value - 1) > 0.005:
            bad.append(f"{row[0]} {row[1]}: preset {energy[row[1]]:.4g}, derived {value:.4g}")
    if a.verify:
        for b in bad:
            print(f"chip_power.py: FAIL {b}")
        if bad:
            return 1
        print("chip_power.py: every preset holds the derived matrix FLOP energies")
    return 0


if __name__ == "__main__":
    sys.exit(main())
