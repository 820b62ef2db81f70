#!/usr/bin/env python3
"""Measure a GPU's operator times for the validation suite (issue 10, item 4).

Runs on a machine with a CUDA (or ROCm) GPU and PyTorch, e.g. the H200 that the
`device` tool lends to some sessions, and writes CSV files in the formats of
../shared/oracles/measured (LLMCompass's real_hardware files), so that
`dse validate` reads them with `kind: operator_csv` cases (`dir: suite`):

  <prefix>_matmul.csv      M, N, K, <ms>ms, <TFLOP/s>Tflops   LLMCompass's method: 3 warm-ups, median of
                                                             single calls timed with time.time() around the
                                                             call and torch.cuda.synchronize()
  <prefix>_gelu.csv        elements, G elements/s           torch.compile'd tanh GELU (as LLMCompass)
  <prefix>_layernorm.csv   M, N, G elements/s               torch.compile'd LayerNorm (as LLMCompass)
  <prefix>_softmax.csv     M, N, G elements/s               eager torch.softmax (as LLMCompass)
and, for the hardware file's constants (device time of back-to-back calls, CUDA events):
  <prefix>_matmul_device.csv   M, N, K, device ms, TFLOP/s  the best shape gives the MAMF-style sustained
                                                             matrix rate (scenarios/hardware/*.yaml comments)
  <prefix>_bandwidth.csv       test, bytes, device ms, GB/s   copy (read + write) and read-only sum of 4 GiB
  <prefix>_attention.csv       kind, batch, heads, q_len, kv_len, head_dim, device ms, TFLOP/s, GB/s
  <prefix>_meta.json           device name, torch / CUDA versions, clocks, options

Every shape is FP16 (the suite's operator cases are FP16). Nothing is fitted here:
the files are measurements, and the script that made them is their source.

Usage:
  python3 scripts/measure_gpu.py --out DIR [--prefix h200] [--quick]
  python3 scripts/measure_gpu.py --dry-run      # print the plan; needs no GPU and no torch
Plan for the device lease: the full plan takes about 1-2 minutes on an H100-class GPU
(most of it torch.compile); --quick drops the largest shapes.
"""
import argparse
import json
import os
import statistics
import sys
import time

M_SWEEP = [32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768]  # M x 12288 x 12288
N_SWEEP = [32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768]  # 8192 x N x N
GELU_SWEEP = [2 ** e for e in range(10, 30)]  # 1024 .. 2^29, the oracle file's sizes
ROWS_SWEEP = [(4096, 2 ** e) for e in range(5, 16)] + [(2 ** e, 4096) for e in range(5, 16)]
ATTENTION = [  # kind, batch, heads, q_len, kv_len, head_dim
    ("prefill_causal", 8, 32, 2048, 2048, 128),
    ("prefill_causal", 4, 32, 4096, 4096, 128),
    ("prefill_causal", 1, 64, 8192, 8192, 128),
    ("decode", 64, 32, 1, 4096, 128),
    ("decode", 16, 32, 1, 32768, 128),
]
BANDWIDTH_BYTES = 4 << 30


def plan(quick):
    ms = [m for m in M_SWEEP if not (quick and m > 8192)]
    ns = [n for n in N_SWEEP if not (quick and n > 16384)]
    gemms = [(m, 12288, 12288) for m in ms] + [(8192, n, n) for n in ns]
    rows = [r for r in ROWS_SWEEP if not (quick and r[0] * r[1] > 2 ** 27)]
    gelu = [n for n in GELU_SWEEP if not (quick and n > 2 ** 27)]
    return {"matmul": gemms, "gelu": gelu, "rows": rows, "attention": ATTENTION,
            "bandwidth_bytes": BANDWIDTH_BYTES}


def print_plan(p, prefix):
    print(f"{prefix}_matmul.csv / {prefix}_matmul_device.csv: {len(p['matmul'])} GEMMs, "
          f"first {p['matmul'][0]}, last {p['matmul'][-1]}")
    print(f"{prefix}_gelu.csv: {len(p['gelu'])} sizes, {p['gelu'][0]} .. {p['gelu'][-1]} elements")
    print(f"{prefix}_layernorm.csv, {prefix}_softmax.csv: {len(p['rows'])} (rows, row length) shapes")
    print(f"{prefix}_attention.csv: {len(p['attention'])} cases")
    print(f"{prefix}_bandwidth.csv: copy and sum of {p['bandwidth_bytes'] >> 30} GiB")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="output folder (created)")
    ap.add_argument("--prefix", default="gpu", help="file name prefix, e.g. h200")
    ap.add_argument("--quick", action="store_true", help="drop the largest shapes")
    ap.add_argument("--dry-run", action="store_true", help="print the plan and exit (no torch needed)")
    a = ap.parse_args()
    p = plan(a.quick)
    if a.dry_run:
        print_plan(p, a.prefix)
        return 0
    if not a.out:
        ap.error("--out is required unless --dry-run")
    import torch  # noqa: E402 (only where a GPU is)
    import torch.nn.functional as F
    if not torch.cuda.is_available():
        sys.exit("measure_gpu.py: no CUDA/ROCm device visible to PyTorch")
    # torch.compile with its defaults, as LLMCompass calls it (shapes turn dynamic after the first
    # change); a new LayerNorm module per shape recompiles, so the cache limit is raised so that no
    # shape falls back to eager.
    try:
        import torch._dynamo
        torch._dynamo.config.cache_size_limit = 256
        torch._dynamo.config.accumulated_cache_size_limit = 4096
    except (ImportError, AttributeError):
        pass
    os.makedirs(a.out, exist_ok=True)
    dev = torch.device("cuda")
    h = torch.float16
    out = lambda name: os.path.join(a.out, f"{a.prefix}_{name}")  # noqa: E731
    sync = torch.cuda.synchronize

    def wall_median(fn, warm=3, reps=10):
        # LLMCompass's method (software_model/matmul.py run_on_gpu; time.time() there, perf_counter
        # here), with the warm-ups on the measured shape itself.
        for _ in range(warm):
            fn()
        sync()
        ts = []
        for _ in range(reps):
            t0 = time.perf_counter()
            fn()
            sync()
            ts.append(time.perf_counter() - t0)
        return statistics.median(ts)

    def device_mean(fn, warm=3, reps=20):
        for _ in range(warm):
            fn()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        sync()
        start.record()
        for _ in range(reps):
            fn()
        end.record()
        sync()
        return start.elapsed_time(end) / 1e3 / reps

    meta = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
            "cuda": torch.version.cuda, "hip": getattr(torch.version, "hip", None),
            "quick": a.quick, "dtype": "float16", "torch_compile": "defaults (automatic dynamic shapes)", "script": "scripts/measure_gpu.py",
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    t_all = time.time()

    with open(out("matmul.csv"), "w") as f_wall, open(out("matmul_device.csv"), "w") as f_dev:
        for m, n, k in p["matmul"]:
            x = torch.randn(m, k, device=dev, dtype=h)
            w = torch.randn(k, n, device=dev, dtype=h)
            fn = lambda: torch.matmul(x, w)  # noqa: E731
            t = wall_median(fn)
            td = device_mean(fn)
            fl = 2.0 * m * n * k
            f_wall.write(f"{m}, {n}, {k}, {t * 1e3:.4f}ms, {fl / t / 1e12:.4f}Tflops\n")
            f_dev.write(f"{m}, {n}, {k}, {td * 1e3:.5f}, {fl / td / 1e12:.2f}\n")
            print(f"matmul {m}x{n}x{k}: {t * 1e6:.1f} us wall, {td * 1e6:.1f} us device, "
                  f"{fl / td / 1e12:.1f} TFLOP/s", flush=True)
            del x, w

    gelu = torch.compile(lambda x: F.gelu(x, approximate="tanh"))
    with open(out("gelu.csv"), "w") as f:
        for n in p["gelu"]:
            x = torch.randn(n, device=dev, dtype=h)
            t = wall_median(lambda: gelu(x))
            f.write(f"{n}, {n / t / 1e9}\n")
            del x
    print("gelu done", flush=True)

    with open(out("layernorm.csv"), "w") as f_ln, open(out("softmax.csv"), "w") as f_sm:
        for m, n in p["rows"]:
            x = torch.randn(m, n, device=dev, dtype=h)
            ln = torch.nn.LayerNorm(n, device=dev, dtype=h)
            lnc = torch.compile(ln)
            t = wall_median(lambda: lnc(x))
            f_ln.write(f"{m}, {n}, {m * n / t / 1e9}\n")
            t = wall_median(lambda: torch.softmax(x, dim=-1))
            f_sm.write(f"{m}, {n}, {m * n / t / 1e9}\n")
            del x, ln, lnc
    print("layernorm, softmax done", flush=True)

    with open(out("attention.csv"), "w") as f:
        f.write("kind, batch, heads, q_len, kv_len, head_dim, device_ms, tflops, gbps\n")
        for kind, b, nh, ql, kl, d in p["attention"]:
            q = torch.randn(b, nh, ql, d, device=dev, dtype=h)
            k = torch.randn(b, nh, kl, d, device=dev, dtype=h)
            v = torch.randn(b, nh, kl, d, device=dev, dtype=h)
            causal = kind.startswith("prefill")
            td = device_mean(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal))
            fl = 4.0 * b * nh * ql * kl * d * (0.5 if causal else 1.0)
            by = 2.0 * (q.numel() + k.numel() + v.numel() + q.numel())
            f.write(f"{kind}, {b}, {nh}, {ql}, {kl}, {d}, {td * 1e3:.5f}, {fl / td / 1e12:.2f}, "
                    f"{by / td / 1e9:.1f}\n")
            del q, k, v
    print("attention done", flush=True)

    with open(out("bandwidth.csv"), "w") as f:
        f.write("test, bytes, device_ms, gbps\n")
        n = p["bandwidth_bytes"] // 2
        x = torch.empty(n, device=dev, dtype=h).normal_()
        y = torch.empty_like(x)
        td = device_mean(lambda: y.copy_(x), reps=10)
        f.write(f"copy, {4 * n}, {td * 1e3:.4f}, {4 * n / td / 1e9:.1f}\n")  # read + write
        td = device_mean(lambda: x.sum(dtype=torch.float32), reps=10)
        f.write(f"sum, {2 * n}, {td * 1e3:.4f}, {2 * n / td / 1e9:.1f}\n")
        del x, y
    print("bandwidth done", flush=True)

    meta["seconds"] = round(time.time() - t_all, 1)
    with open(out("meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(f"measure_gpu.py: wrote {a.out} in {meta['seconds']} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
