#!/usr/bin/env python3
"""Measure a GPU's operator times for the validation suite (issue 10, item 4).

Runs on a machine with a CUDA (or ROCm) GPU and PyTorch, e.g. the H200 that the
`device` tool lends to some sessions, and writes CSV files in the formats of
data/oracles/measured (LLMCompass's real_hardware files), so that
`dse validate` reads them with `kind: operator_csv` cases (`dir: suite`):

  <prefix>_matmul.csv      M, N, K, <ms>ms, <TFLOP/s>Tflops   LLMCompass's method: 3 warm-ups, median of
                                                             single calls timed with time.time() around the
                                                             call and torch.cuda.synchronize()
  <prefix>_gelu.csv        elements, G elements/s           torch.compile'd tanh GELU (as LLMCompass)
                           (and <prefix>_{gelu,layernorm,softmax}_device.csv: the same shapes, device time
                           of back-to-back calls, CUDA events)
  <prefix>_layernorm.csv   M, N, G elements/s               torch.compile'd LayerNorm (as LLMCompass)
  <prefix>_softmax.csv     M, N, G elements/s               eager torch.softmax (as LLMCompass)
and, for the hardware file's constants (device time of back-to-back calls, CUDA events):
  <prefix>_matmul_device.csv   M, N, K, device ms, TFLOP/s  the best shape gives the MAMF-style sustained
                                                             matrix rate (scenarios/hardware/*.yaml comments)
  <prefix>_bandwidth.csv       test, bytes, device ms, GB/s   copy (read + write) and read-only sum of 4 GiB
  <prefix>_attention.csv       kind, batch, heads, q_len, kv_len, head_dim, device ms, TFLOP/s, GB/s
  <prefix>_gemv.csv, <prefix>_gemv_device.csv   decode-shaped (skinny) GEMMs M x N x K, M = 1..256, on
                                                 Llama-3 weight shapes; the matmul files' formats
  <prefix>_matmul_fp8_device.csv   M, N, K, device ms, TFLOP/s  torch._scaled_mm (per-tensor FP8 e4m3,
                                                 BF16 out, cuBLASLt), where the GPU has FP8 (sm_89+)
  <prefix>_llama.csv           phase, batch, tokens, context, graph / eager / compiled-graph device ms: whole
                               forward steps of
                               a Llama-3-8B-shaped model (32 layers, d 4096, 32/8 heads, FFN 14336, vocab
                               128256; BF16, random weights), RMSNorm / RoPE / SDPA / SwiGLU in plain
                               PyTorch, one CUDA-graph replay per step (and the same step eager)
  <prefix>_power.csv, <prefix>_power_windows.csv, <prefix>_smi.csv, <prefix>_smi_reasons.csv
                               --power-seconds each of sustained BF16 and FP8 GEMMs, then copies and idle,
                               with nvidia-smi's power, clocks and clock-event reasons every 100 ms (energy
                               per FLOP / byte; the sustained clock and rate under the power cap)
  <prefix>_latency.csv         dependent-load latency (pointer chase): L2 hits (4, 32 MiB) and HBM (1 GiB)
  <prefix>_block_bandwidth.csv streaming rate of 1 .. 4x cores thread blocks (CuPy raw kernels)
  <prefix>_fa2.csv             FlashAttention-2 through SDPA's flash backend (and cuDNN's, where it runs) at
                               the FlashAttention-3 paper's benchmark shapes: batch x sequence = 16k tokens,
                               hidden 2048, head dim 64 / 128, 512 .. 16k tokens, with and without the causal
                               mask; forward and backward device time (CUDA events), TFLOP/s as the paper counts
  <prefix>_fa2_blocks.csv      per-block start-up of the FlashAttention-2 kernels: forward of one 128-row query
                               block per (batch, head) over 128 .. 8192 keys, backward of one 128-key block over
                               128 .. 8192 queries, at 132 .. 2112 (batch, head) groups (one wave and more)
  <prefix>_fa2_causal.csv      the causal mask's cost per key block: FlashAttention-2 forwards of 128 .. 512 tokens
                               (one to four 128-row query blocks per (batch, head)) with and without the causal
                               mask at 2 .. 8 groups per SM, each kernel's CUPTI duration
  <prefix>_kernels.csv         the kernels each call launches (name, grid, block, registers, shared memory,
                               median duration of 5 profiled calls, calls; torch.profiler / CUPTI; run 10 of
                               scenarios/validation/h200 had one call and no calls column): decode-shaped BF16 and
                               FP8 GEMMs, two large GEMMs, the SDPA calls above; which tile and split the
                               libraries chose; torch.compile's GELU (the sweep's dynamic-shape kernel and a
                               static one), the static compiled LayerNorm and eager softmax at large sizes
  <prefix>_meta.json           device name, torch / CUDA / cuDNN versions, SDPA's kernel choice for each llama row's
                               attention calls, clocks and time span per section, errors

Every operator shape is FP16 (the suite's operator cases are FP16); FP8 and the Llama steps as named. Nothing is fitted here:
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
import subprocess
import sys
import time
import traceback

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
# Decode-shaped GEMMs: M tokens against a Llama-3 weight (N x K = out x in features): 8B's QKV
# (6144 x 4096), 8B's gate+up (28672 x 4096), 70B's down projection (8192 x 28672).
GEMV_M = [1, 2, 4, 8, 16, 32, 64, 128, 256]
GEMV_NK = [(6144, 4096), (28672, 4096), (8192, 28672)]
FP8_M = [16, 32, 64, 128, 256]  # cuBLASLt's FP8 GEMM wants dimensions that are multiples of 16
FP8 = [(8192, 8192, 8192), (4096, 28672, 8192), (4096, 8192, 28672), (16384, 1024, 8192),
       (1024, 28672, 8192)] + [(m, n, k) for n, k in GEMV_NK for m in FP8_M]
LLAMA = [  # phase, batch, new tokens per sequence, context (tokens attended, new ones included)
    ("prefill", 1, 512, 512), ("prefill", 1, 2048, 2048), ("prefill", 1, 8192, 8192), ("prefill", 4, 2048, 2048),
    ("decode", 1, 1, 1024), ("decode", 1, 1, 8192), ("decode", 16, 1, 2048), ("decode", 64, 1, 2048),
    ("decode", 64, 1, 4096), ("decode", 256, 1, 1024),
]
# FlashAttention-3 paper (Shah et al. 2024, section 4.1): batch x sequence = 16k, hidden 2048.
FA2_SEQ = [512, 1024, 2048, 4096, 8192, 16384]
FA2_HEAD_DIMS = [64, 128]
# Per-block start-up: one query block (forward) or key block (backward) of 128 per (batch, head),
# 4 heads, the (batch, head) groups from one block per SM (132 on an H200) to 16 per SM.
FA2_BLOCK_LENGTHS = [128, 256, 512, 1024, 2048, 4096, 8192]
FA2_BLOCK_GROUPS_PER_SM = [1, 2, 4, 8, 16]
# The causal mask's cost: square forwards of one to four 128-row query blocks per (batch, head).
FA2_CAUSAL_LENGTHS = [128, 256, 384, 512]
FA2_CAUSAL_GROUPS_PER_SM = [2, 4, 8]
KERNEL_GEMMS = [(m, n, k) for n, k in GEMV_NK for m in GEMV_M] + [(4096, 12288, 12288),
                                                                                 (8192, 8192, 8192)]
KERNEL_FP8 = [(m, n, k) for n, k in GEMV_NK for m in FP8_M] + [(8192, 8192, 8192)]
KERNEL_CALLS = 5  # profiled calls per case (after 3 warm-ups): each kernel's median duration


def plan(quick, head_dims=None):
    ms = [m for m in M_SWEEP if not (quick and m > 8192)]
    ns = [n for n in N_SWEEP if not (quick and n > 16384)]
    gemms = [(m, 12288, 12288) for m in ms] + [(8192, n, n) for n in ns]
    rows = [r for r in ROWS_SWEEP if not (quick and r[0] * r[1] > 2 ** 27)]
    gelu = [n for n in GELU_SWEEP if not (quick and n > 2 ** 27)]
    gemv = [(m, n, k) for n, k in GEMV_NK for m in GEMV_M]
    dims = head_dims or FA2_HEAD_DIMS
    fa2 = [(seq, d, causal) for d in dims for causal in (False, True) for seq in FA2_SEQ]
    return {"matmul": gemms, "gelu": gelu, "rows": rows, "attention": ATTENTION,
            "bandwidth_bytes": BANDWIDTH_BYTES, "gemv": gemv, "fp8": FP8, "llama": LLAMA, "fa2": fa2,
            "fa2_blocks": [(d, length, g) for d in dims for g in FA2_BLOCK_GROUPS_PER_SM
                           for length in FA2_BLOCK_LENGTHS],
            "fa2_causal": [(d, length, g) for d in dims for g in FA2_CAUSAL_GROUPS_PER_SM
                           for length in FA2_CAUSAL_LENGTHS],
            "kernel_gemms": KERNEL_GEMMS, "kernel_fp8": KERNEL_FP8}


def print_plan(p, prefix):
    print(f"{prefix}_matmul.csv / {prefix}_matmul_device.csv: {len(p['matmul'])} GEMMs, "
          f"first {p['matmul'][0]}, last {p['matmul'][-1]}")
    print(f"{prefix}_gelu.csv: {len(p['gelu'])} sizes, {p['gelu'][0]} .. {p['gelu'][-1]} elements")
    print(f"{prefix}_layernorm.csv, {prefix}_softmax.csv: {len(p['rows'])} (rows, row length) shapes")
    print(f"{prefix}_attention.csv: {len(p['attention'])} cases")
    print(f"{prefix}_bandwidth.csv: copy and sum of {p['bandwidth_bytes'] >> 30} GiB")
    print(f"{prefix}_gemv.csv / {prefix}_gemv_device.csv: {len(p['gemv'])} decode-shaped GEMMs")
    print(f"{prefix}_matmul_fp8_device.csv: {len(p['fp8'])} FP8 GEMMs")
    print(f"{prefix}_llama.csv: {len(p['llama'])} Llama-3-8B-shaped forward steps")
    print(f"{prefix}_power.csv, {prefix}_power_windows.csv, {prefix}_smi.csv, {prefix}_smi_reasons.csv: "
          f"--power-seconds (default 4 s) each of 8192^3 BF16 GEMMs, 8192^3 and 1024x28672x8192 FP8 GEMMs, 8192^3 INT8 GEMMs, "
          f"2/3 of that of 4 GiB copies, 5 s idle; power, clocks and clock-event reasons every 100 ms")
    print(f"{prefix}_fa2.csv: {len(p['fa2'])} FlashAttention shapes (forward and backward; flash and cuDNN backends)")
    print(f"{prefix}_fa2_blocks.csv: {len(p['fa2_blocks'])} one-block-per-head shapes, forward and backward")
    print(f"{prefix}_fa2_causal.csv: {len(p['fa2_causal'])} square shapes, forward with and without the causal mask")
    print(f"{prefix}_kernels.csv: kernels of {len(p['kernel_gemms'])} BF16 GEMMs, {len(p['kernel_fp8'])} FP8 GEMMs "
          f"and 8 SDPA calls; GELU (dynamic and static), LayerNorm and softmax at large sizes")
    print(f"{prefix}_latency.csv, {prefix}_block_bandwidth.csv: pointer chase over 4 / 32 MiB (L2) and 1 GiB (HBM); "
          f"streaming rate of 1 .. 4x cores blocks (CuPy)")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="output folder (created)")
    ap.add_argument("--prefix", default="gpu", help="file name prefix, e.g. h200")
    ap.add_argument("--quick", action="store_true", help="drop the largest shapes")
    ap.add_argument("--sections", default="", help="comma-separated subset of: matmul, gemv, bandwidth, "
                    "llama, fp8, attention, gelu, rows, power, power_check, latency, fa2, fa2_blocks, fa2_causal, kernels (default: all)")
    ap.add_argument("--power-seconds", type=float, default=4.0, help="power: seconds of each sustained GEMM phase")
    ap.add_argument("--no-compile", action="store_true", help="llama: skip the torch.compile'd step")
    ap.add_argument("--head-dims", default="", help="fa2, fa2_blocks, fa2_causal: comma-separated head dims "
                    "(default 64,128)")
    ap.add_argument("--dry-run", action="store_true", help="print the plan and exit (no torch needed)")
    a = ap.parse_args()
    p = plan(a.quick, [int(x) for x in a.head_dims.split(",") if x] or None)
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

    def gemm_call(kind, m, n, k):
        # One GEMM as a callable holding its operands: "bf16" (torch.matmul), "fp8" (torch._scaled_mm,
        # per-tensor e4m3, BF16 out, B column-major as cuBLASLt wants it) or "int8" (torch._int_mm,
        # INT8 x INT8 -> INT32, random bytes).
        if kind == "fp8":
            one = torch.ones((), device=dev, dtype=torch.float32)
            x = torch.randn(m, k, device=dev, dtype=h).to(torch.float8_e4m3fn)
            w = torch.randn(n, k, device=dev, dtype=h).to(torch.float8_e4m3fn).t()  # K x N, column-major
            return lambda: torch._scaled_mm(x, w, scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
        if kind == "int8":
            x = torch.randint(-128, 128, (m, k), device=dev, dtype=torch.int8)
            w = torch.randint(-128, 128, (k, n), device=dev, dtype=torch.int8)
            return lambda: torch._int_mm(x, w)
        x = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        w = torch.randn(k, n, device=dev, dtype=torch.bfloat16)
        return lambda: torch.matmul(x, w)

    def smi():
        # Clocks and power as nvidia-smi reports them (absent on ROCm or without the tool).
        try:
            return subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,clocks.max.sm,clocks.mem,power.draw,"
                                   "power.limit,temperature.gpu", "--format=csv"], capture_output=True,
                                  text=True, timeout=20).stdout.strip()
        except (OSError, subprocess.SubprocessError) as e:
            return f"nvidia-smi: {e}"

    props = torch.cuda.get_device_properties(0)
    meta = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
            "cuda": torch.version.cuda, "hip": getattr(torch.version, "hip", None),
            "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
            "multiprocessors": props.multi_processor_count, "memory_bytes": props.total_memory,
            "quick": a.quick, "dtype": "float16", "torch_compile": "defaults (automatic dynamic shapes)",
            "script": "scripts/measure_gpu.py", "smi_before": smi(), "errors": {}, "seconds_per_section": {},
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    t_all = time.time()

    def gemm_files(wall_name, dev_name, shapes):
        with open(out(wall_name), "w") as f_wall, open(out(dev_name), "w") as f_dev:
            for m, n, k in shapes:
                x = torch.randn(m, k, device=dev, dtype=h)
                w = torch.randn(k, n, device=dev, dtype=h)
                fn = lambda: torch.matmul(x, w)  # noqa: E731
                t = wall_median(fn)
                td = device_mean(fn)
                fl = 2.0 * m * n * k
                f_wall.write(f"{m}, {n}, {k}, {t * 1e3:.4f}ms, {fl / t / 1e12:.4f}Tflops\n")
                f_dev.write(f"{m}, {n}, {k}, {td * 1e3:.5f}, {fl / td / 1e12:.2f}\n")
                f_wall.flush()
                f_dev.flush()
                print(f"matmul {m}x{n}x{k}: {t * 1e6:.1f} us wall, {td * 1e6:.1f} us device, "
                      f"{fl / td / 1e12:.1f} TFLOP/s, {2.0 * (m * k + k * n + m * n) / td / 1e9:.0f} GB/s",
                      flush=True)
                del x, w

    def matmul():
        gemm_files("matmul.csv", "matmul_device.csv", p["matmul"])

    def gemv():
        gemm_files("gemv.csv", "gemv_device.csv", p["gemv"])

    def fp8():
        if not hasattr(torch, "_scaled_mm") or getattr(torch, "float8_e4m3fn", None) is None:
            raise RuntimeError("this PyTorch has no torch._scaled_mm / float8_e4m3fn")
        if torch.version.hip is None and torch.cuda.get_device_capability(0) < (8, 9):
            raise RuntimeError("FP8 matrix instructions need sm_89 or later")
        with open(out("matmul_fp8_device.csv"), "w") as f:
            for m, n, k in p["fp8"]:
                fn = gemm_call("fp8", m, n, k)
                td = device_mean(fn)
                fl = 2.0 * m * n * k
                f.write(f"{m}, {n}, {k}, {td * 1e3:.5f}, {fl / td / 1e12:.2f}\n")
                f.flush()
                print(f"fp8 {m}x{n}x{k}: {td * 1e6:.1f} us device, {fl / td / 1e12:.1f} TFLOP/s", flush=True)
                del fn

    def gelu():
        gelu_c = torch.compile(lambda x: F.gelu(x, approximate="tanh"))
        with open(out("gelu.csv"), "w") as f, open(out("gelu_device.csv"), "w") as f_dev:
            for n in p["gelu"]:
                x = torch.randn(n, device=dev, dtype=h)
                t = wall_median(lambda: gelu_c(x))
                td = device_mean(lambda: gelu_c(x))
                f.write(f"{n}, {n / t / 1e9}\n")
                f_dev.write(f"{n}, {n / td / 1e9}\n")
                del x

    def rows():
        with open(out("layernorm.csv"), "w") as f_ln, open(out("softmax.csv"), "w") as f_sm, \
                open(out("layernorm_device.csv"), "w") as d_ln, open(out("softmax_device.csv"), "w") as d_sm:
            for m, n in p["rows"]:
                x = torch.randn(m, n, device=dev, dtype=h)
                ln = torch.nn.LayerNorm(n, device=dev, dtype=h)
                lnc = torch.compile(ln)
                t = wall_median(lambda: lnc(x))
                td = device_mean(lambda: lnc(x))
                f_ln.write(f"{m}, {n}, {m * n / t / 1e9}\n")
                d_ln.write(f"{m}, {n}, {m * n / td / 1e9}\n")
                t = wall_median(lambda: torch.softmax(x, dim=-1))
                td = device_mean(lambda: torch.softmax(x, dim=-1))
                f_sm.write(f"{m}, {n}, {m * n / t / 1e9}\n")
                d_sm.write(f"{m}, {n}, {m * n / td / 1e9}\n")
                del x, ln, lnc

    def attention():
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

    def bandwidth():
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

    def llama():
        with open(out("llama.csv"), "w") as f:
            f.write("phase, batch, tokens, context, graph_device_ms, eager_device_ms, compiled_graph_device_ms\n")
            model = LlamaShape(torch, dev)
            for phase, b, s, ctx in p["llama"]:
                meta.setdefault("sdpa_backend", {})[f"{phase} {b} {s} {ctx}"] = model.sdpa_backend(b, s, ctx)
                tg, te, tc, err = model.step_times(b, s, ctx, device_mean, compiled=not a.no_compile)
                if err:
                    meta["errors"][f"llama compiled {phase} {b} {s} {ctx}"] = err
                f.write(f"{phase}, {b}, {s}, {ctx}, {tg * 1e3:.4f}, {te * 1e3:.4f}, {tc * 1e3:.4f}\n")
                f.flush()
                print(f"llama {phase} batch {b} tokens {s} context {ctx}: {tg * 1e3:.3f} ms graph, "
                      f"{te * 1e3:.3f} ms eager, {tc * 1e3:.3f} ms compiled graph", flush=True)

    def power():
        # Sustained power for the energy constants and the clock under the power cap: back-to-back
        # 8192^3 BF16 GEMMs, 8192^3 FP8 GEMMs, FP8 GEMMs of a decode step's shape (1024 x 28672 x 8192,
        # a 70B model's gate/up projection at batch 1024), 8192^3 INT8 GEMMs (torch._int_mm, where
        # PyTorch has it), each for --power-seconds; 4 GiB copies for
        # 2/3 of that; then 5 s idle. <prefix>_power.csv holds each phase's device rate and wall-clock
        # span, <prefix>_power_windows.csv the device rate of each ~1 s window (when the clock falls
        # under the cap), <prefix>_smi.csv (sampled every 100 ms throughout the run) power.draw and
        # clocks.sm for the same spans. Energy per FLOP or per byte = (mean power in the span - mean
        # idle power) / rate.
        secs = a.power_seconds
        with open(out("power.csv"), "w") as f, open(out("power_windows.csv"), "w") as fw:
            f.write("phase, start_unix_s, end_unix_s, device_s, work, work_per_s\n")
            fw.write("phase, window, start_unix_s, device_s, work_per_s\n")

            def sustain(phase, fn, work_per_call, seconds):
                fn()
                sync()
                ev = lambda: torch.cuda.Event(enable_timing=True)  # noqa: E731
                marks = [(ev(), time.time(), 0)]
                marks[0][0].record()
                t0, calls = time.time(), 0
                while time.time() - t0 < seconds:
                    for _ in range(10):
                        fn()
                    calls += 10
                    sync()
                    if time.time() - marks[-1][1] >= 1.0:
                        e = ev()
                        e.record()
                        marks.append((e, time.time(), calls))
                if marks[-1][2] != calls:
                    e = ev()
                    e.record()
                    marks.append((e, time.time(), calls))
                sync()
                td = marks[0][0].elapsed_time(marks[-1][0]) / 1e3
                for i in range(1, len(marks)):
                    dt = marks[i - 1][0].elapsed_time(marks[i][0]) / 1e3
                    fw.write(f"{phase}, {i}, {marks[i - 1][1]:.3f}, {dt:.4f}, "
                             f"{work_per_call * (marks[i][2] - marks[i - 1][2]) / dt:.6g}\n")
                f.write(f"{phase}, {t0:.3f}, {time.time():.3f}, {td:.4f}, {work_per_call * calls:.6g}, "
                        f"{work_per_call * calls / td:.6g}\n")
                f.flush()
                fw.flush()
                print(f"power {phase}: {work_per_call * calls / td:.4g} per s over {td:.1f} s", flush=True)

            sustain("gemm_bf16_8192", gemm_call("bf16", 8192, 8192, 8192), 2.0 * 8192 ** 3, secs)
            if hasattr(torch, "_scaled_mm") and torch.version.hip is None \
                    and torch.cuda.get_device_capability(0) >= (8, 9):
                for m, n, k in ((8192, 8192, 8192), (1024, 28672, 8192)):
                    sustain(f"gemm_fp8_{m}x{n}x{k}", gemm_call("fp8", m, n, k), 2.0 * m * n * k, secs)
            if torch.version.hip is None and hasattr(torch, "_int_mm"):
                # On an H200 with PyTorch 2.11 this runs at ~129 TOPS (6.5% of peak, not power-capped):
                # PyTorch's INT8 path, not the IMMA rate TensorRT reaches, so the H200 preset takes
                # nothing from it (h200/power-repeat).
                sustain("gemm_int8_8192", gemm_call("int8", 8192, 8192, 8192), 2.0 * 8192 ** 3, secs)
            n = p["bandwidth_bytes"] // 2
            x = torch.empty(n, device=dev, dtype=h).normal_()
            y = torch.empty_like(x)
            sustain("copy_4gib", lambda: y.copy_(x), 4.0 * n, max(2.0, secs * 2 / 3))  # bytes read + written
            del x, y
            torch.cuda.empty_cache()
            t0 = time.time()
            time.sleep(5.0)
            f.write(f"idle, {t0:.3f}, {time.time():.3f}, 0, 0, 0\n")

    def power_check():
        # Checks of the power model, not used to set a constant: (1) the ramp from idle into the
        # power cap, every call of 600 back-to-back 8192^3 FP8, 300 BF16 and 600 INT8 GEMMs timed by its own
        # CUDA events after 3 s idle (<prefix>_ramp.csv: the unthrottled burst rate and how soon the
        # cap takes it down); (2) sustained whole steps of the Llama-3-8B-shaped model (one CUDA-graph
        # replay per step, BF16): decode at batch 256 over a 2048-token context and prefill of 4 x 2048
        # tokens, each for --power-seconds (<prefix>_power_check.csv; power and clocks in
        # <prefix>_smi.csv over the same spans).
        with open(out("ramp.csv"), "w") as f:
            f.write("phase, call, device_ms, tflops\n")
            kinds = [("fp8", 600), ("bf16", 300)] + ([("int8", 600)] if hasattr(torch, "_int_mm") else [])
            for kind, calls in kinds:
                phase = f"gemm_{kind}_8192"
                fn = gemm_call(kind, 8192, 8192, 8192)
                fn()
                sync()
                time.sleep(3.0)
                evs = [torch.cuda.Event(enable_timing=True) for _ in range(calls + 1)]
                evs[0].record()
                for i in range(calls):
                    fn()
                    evs[i + 1].record()
                sync()
                fl = 2.0 * 8192 ** 3
                for i in range(calls):
                    ms = evs[i].elapsed_time(evs[i + 1])
                    f.write(f"{phase}, {i}, {ms:.5f}, {fl / ms / 1e9:.1f}\n")
                f.flush()
                ts = [evs[i].elapsed_time(evs[i + 1]) for i in range(calls)]
                print(f"ramp {phase}: first 10 calls {fl * 10 / sum(ts[:10]) / 1e9:.0f} TFLOP/s, "
                      f"last 50 {fl * 50 / sum(ts[-50:]) / 1e9:.0f} TFLOP/s", flush=True)
                del fn
        torch.cuda.empty_cache()
        model = LlamaShape(torch, dev)
        with open(out("power_check.csv"), "w") as f:
            f.write("phase, batch, tokens, context, start_unix_s, end_unix_s, device_s, steps, step_ms\n")
            for phase, b, s, ctx in (("decode", 256, 1, 2048), ("prefill", 4, 2048, 2048)):
                def sustained(replay):
                    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    t0, steps = time.time(), 0
                    start.record()
                    while time.time() - t0 < a.power_seconds:
                        for _ in range(5):
                            replay()
                        steps += 5
                        sync()
                    end.record()
                    sync()
                    td = start.elapsed_time(end) / 1e3
                    f.write(f"{phase}, {b}, {s}, {ctx}, {t0:.3f}, {time.time():.3f}, {td:.4f}, {steps}, "
                            f"{td / steps * 1e3:.4f}\n")
                    f.flush()
                    print(f"sustained llama {phase} batch {b} tokens {s} context {ctx}: {td / steps * 1e3:.3f} ms "
                          f"per step over {td:.1f} s", flush=True)
                    return td / steps

                model.step_times(b, s, ctx, lambda replay, reps=0: sustained(replay), compiled=False, eager=False)
        del model
        torch.cuda.empty_cache()

    def memory_latency():
        # Load latency and the streaming rate of few thread blocks, with raw CUDA kernels through CuPy
        # (NVRTC): the hardware files' hbm_latency_s, and the rate of kernels that run fewer blocks
        # than the chip has cores (FlashAttention-2 at decode without split-KV: one block per
        # sequence and KV head). Pointer chase: one thread follows a random cyclic permutation of
        # 32-bit indices (every load depends on the last): over 4 and 32 MiB with the path warmed
        # (L2 hits), over 1 GiB cold (HBM). Streaming: `blocks` blocks of 256 or 1024 threads, each
        # reading its own 64 MiB with 16-byte loads.
        import cupy as cp
        chase = cp.RawKernel(r"""
        extern "C" __global__ void chase(const unsigned int* next, long long steps, unsigned int* out) {
          unsigned int i = 0;
          for (long long s = 0; s < steps; ++s) i = next[i];
          out[0] = i;
        }""", "chase")
        stream = cp.RawKernel(r"""
        struct alignas(16) F4 { float x, y, z, w; };  // one 16-byte load
        extern "C" __global__ void stream(const F4* a, long long n4_per_block, float* out) {
          const F4* p = a + (long long)blockIdx.x * n4_per_block;
          float acc = 0.f;
          for (long long i = threadIdx.x; i < n4_per_block; i += blockDim.x) {
            const F4 v = p[i];
            acc += v.x + v.y + v.z + v.w;
          }
          if (acc == 1.2345e30f) out[blockIdx.x] = acc;  // keeps the loads
        }""", "stream")

        def timed(launch, warm=None):
            (warm or launch)()  # the first launch also compiles the kernel
            start, end = cp.cuda.Event(), cp.cuda.Event()
            start.record()
            launch()
            end.record()
            end.synchronize()
            return cp.cuda.get_elapsed_time(start, end) / 1e3

        with open(out("latency.csv"), "w") as f:
            f.write("buffer_bytes, steps, device_s, ns_per_load\n")
            for buffer_bytes in (4 << 20, 32 << 20, 1 << 30):
                n = buffer_bytes // 4
                perm = torch.randperm(n, device=dev, dtype=torch.int64)
                nxt = torch.empty(n, device=dev, dtype=torch.int64)
                nxt[perm[:-1]] = perm[1:]
                nxt[perm[-1]] = perm[0]
                nxt32 = cp.asarray(nxt.to(torch.int32)).view(cp.uint32)
                res = cp.zeros(1, dtype=cp.uint32)
                steps = 200000
                # Below the L2 the warm-up walks the same path, so the timed walk hits in L2; over
                # 1 GiB the warm-up takes one step, so the timed walk's lines come from HBM.
                in_l2 = buffer_bytes < (40 << 20)
                t = timed(lambda: chase((1,), (1,), (nxt32, cp.int64(steps), res)),
                          None if in_l2 else lambda: chase((1,), (1,), (nxt32, cp.int64(1), res)))
                f.write(f"{buffer_bytes}, {steps}, {t:.6f}, {t / steps * 1e9:.1f}\n")
                f.flush()
                print(f"pointer chase over {buffer_bytes >> 20} MiB: {t / steps * 1e9:.1f} ns per load", flush=True)
                del perm, nxt, nxt32
        chunk = 64 << 20
        cores = torch.cuda.get_device_properties(0).multi_processor_count
        counts = sorted({1, 2, 4, 8, 16, 32, cores // 4, cores // 2, cores, 2 * cores, 4 * cores})
        buf = cp.zeros(max(counts) * chunk // 4, dtype=cp.float32)
        sink = cp.zeros(max(counts), dtype=cp.float32)
        with open(out("block_bandwidth.csv"), "w") as f:
            f.write("threads_per_block, blocks, bytes, device_s, gbps\n")
            for threads in (256, 1024):
                for blocks in counts:
                    t = timed(lambda: stream((blocks,), (threads,), (buf, cp.int64(chunk // 16), sink)))
                    f.write(f"{threads}, {blocks}, {blocks * chunk}, {t:.6f}, {blocks * chunk / t / 1e9:.1f}\n")
                    f.flush()
            print("block bandwidth done", flush=True)
        del buf, sink

    def kernel_profile(fn, calls=3, warm=2):
        # The kernels of `calls` calls of fn from torch.profiler's CUDA activity (CUPTI), in launch
        # order: name, grid, block, registers, shared memory, duration (us). Device time of each
        # kernel alone, without the host's dispatch between calls (SDPA takes ~25 us of host time a
        # call, more than its small shapes' kernels).
        import tempfile
        from torch.profiler import ProfilerActivity, profile
        for _ in range(warm):
            fn()
        sync()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(calls):
                fn()
            sync()
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as tf:
            path = tf.name
        prof.export_chrome_trace(path)
        with open(path) as jf:
            events = json.load(jf).get("traceEvents", [])
        os.unlink(path)
        rows = []
        for e in sorted((e for e in events if str(e.get("cat", "")).lower() == "kernel"), key=lambda e: e.get("ts", 0)):
            a_ = e.get("args", {})
            rows.append({"name": e.get("name", ""), "grid": "x".join(str(x) for x in a_.get("grid", [])),
                         "block": "x".join(str(x) for x in a_.get("block", [])),
                         "registers": a_.get("registers per thread", ""), "smem": a_.get("shared memory", ""),
                         "us": float(e.get("dur", 0.0))})
        return rows

    def per_call(rows, calls):
        # Mean duration per call of all kernels and of the longest one (by position in a call).
        if not rows or len(rows) % calls:
            return float("nan"), float("nan"), "", len(rows)
        n = len(rows) // calls
        means = [sum(rows[c * n + i]["us"] for c in range(calls)) / calls for i in range(n)]
        main_i = max(range(n), key=lambda i: means[i])
        return sum(means), means[main_i], rows[main_i]["grid"], n

    def sdpa_setup(b, h, q_len, kv_len, d, grad=False):
        # (batch, sequence, heads, head_dim) tensors seen as (batch, heads, sequence, head_dim), the
        # layout FlashAttention's own benchmarks use (no copy on the way into the kernel); BF16.
        def t(s):
            return torch.randn(b, s, h, d, device=dev, dtype=torch.bfloat16).transpose(1, 2).requires_grad_(grad)
        return t(q_len), t(kv_len), t(kv_len)

    def sdpa_backends():
        from torch.nn.attention import SDPBackend
        return [("flash", SDPBackend.FLASH_ATTENTION), ("cudnn", SDPBackend.CUDNN_ATTENTION)]

    def sdpa_times(backend, q, k, v, causal, backward, reps):
        # Forward: device time per call of back-to-back calls. Backward: device time of each
        # torch.autograd.grad call alone (its preprocess, main and dQ-convert kernels), timed by its
        # own pair of events after an untimed forward, mean over reps.
        from torch.nn.attention import sdpa_kernel
        with sdpa_kernel([backend]):
            fwd = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)  # noqa: E731
            t_fwd = device_mean(fwd, reps=reps)
            if not backward:
                return t_fwd, float("nan")
            o = fwd()
            g = torch.randn_like(o)
            for _ in range(2):
                torch.autograd.grad(fwd(), (q, k, v), g)
            pairs = []
            for _ in range(reps):
                o = fwd()
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                e0.record()
                torch.autograd.grad(o, (q, k, v), g)
                e1.record()
                pairs.append((e0, e1))
            sync()
            return t_fwd, sum(e0.elapsed_time(e1) for e0, e1 in pairs) / 1e3 / reps

    def fa2():
        # The FlashAttention-3 paper's benchmark (section 4.1): batch x sequence 16k tokens, hidden
        # 2048, BF16; TFLOP/s as it counts them: forward 4 x seq^2 x head_dim x heads x batch, halved
        # under the causal mask, backward 2.5 x the forward.
        from torch.nn.attention import sdpa_kernel
        with open(out("fa2.csv"), "w") as f:
            f.write("backend, pass, mask, head_dim, seq, batch, heads, device_ms, tflops, kernels_ms, kernels\n")
            for name, backend in sdpa_backends():
                for seq, d, causal in p["fa2"]:
                    b, h = 16384 // seq, 2048 // d
                    fl = 4.0 * seq * seq * d * h * b * (0.5 if causal else 1.0)
                    q, k, v = sdpa_setup(b, h, seq, seq, d, grad=True)
                    try:
                        t_f, t_b = sdpa_times(backend, q, k, v, causal, True, 10 if seq >= 4096 else 30)
                    except Exception as e:  # noqa: BLE001 (a backend that refuses the shape: recorded)
                        meta["errors"][f"fa2 {name} d{d} s{seq} {'causal' if causal else 'none'}"] = \
                            f"{type(e).__name__}: {e}"[:300]
                        continue
                    mask = "causal" if causal else "none"
                    with sdpa_kernel([backend]):
                        o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                        g = torch.randn_like(o)
                        kf = per_call(kernel_profile(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)), 3)
                        kb = per_call(kernel_profile(lambda: torch.autograd.grad(o, (q, k, v), g, retain_graph=True)), 3)
                    del o, g
                    f.write(f"{name}, forward, {mask}, {d}, {seq}, {b}, {h}, {t_f * 1e3:.5f}, {fl / t_f / 1e12:.1f}, "
                            f"{kf[0] / 1e3:.5f}, {kf[3]}\n")
                    f.write(f"{name}, backward, {mask}, {d}, {seq}, {b}, {h}, {t_b * 1e3:.5f}, "
                            f"{2.5 * fl / t_b / 1e12:.1f}, {kb[0] / 1e3:.5f}, {kb[3]}\n")
                    f.flush()
                    print(f"fa2 {name} d{d} s{seq} {mask}: forward {fl / t_f / 1e12:.0f} TFLOP/s, "
                          f"backward {2.5 * fl / t_b / 1e12:.0f} TFLOP/s", flush=True)
                    del q, k, v

    def per_sm_groups(sweep):
        # A probe's rows (head dim, length, (batch, head) groups per SM) as (head dim, length, groups, batch,
        # heads) on this GPU: 4 heads, batch = groups / 4.
        cores = torch.cuda.get_device_properties(0).multi_processor_count
        for d, length, per_sm in sweep:
            groups = per_sm * cores
            yield d, length, groups, groups // 4, 4

    def fa2_blocks():
        # Per-block start-up of FlashAttention-2's kernels (SDPA's flash backend). Forward: a
        # 128-row query block per (batch, head) (FlashAttention-2 launches one thread block per
        # 128 query rows) over L keys; backward: a 128-key block per (batch, head) (one thread
        # block per key block) over L queries. 4 heads, batch = groups / 4; groups = 1 .. 16 per
        # SM: at a fixed group count the time against L is a line whose intercept is what a block
        # costs besides its key (query) blocks, and the slope the time of one more.
        from torch.nn.attention import SDPBackend, sdpa_kernel
        backend = SDPBackend.FLASH_ATTENTION
        with open(out("fa2_blocks.csv"), "w") as f:
            f.write("pass, head_dim, groups, q_len, kv_len, kernels_us, kernels, main_kernel_us, main_grid\n")
            for d, length, groups, b, h in per_sm_groups(p["fa2_blocks"]):
                # FlashAttention-2's kernels index with 32-bit offsets: a tensor of 2^31 elements or
                # more faults (seen on the H200: backward, 2112 groups x 8192 x 128).
                if groups * length * d >= 2 ** 31:
                    continue
                with sdpa_kernel([backend]):
                    q, k, v = sdpa_setup(b, h, 128, length, d)
                    tot, main_us, grid, n = per_call(kernel_profile(
                        lambda: F.scaled_dot_product_attention(q, k, v), calls=5), 5)
                    f.write(f"forward, {d}, {groups}, 128, {length}, {tot:.3f}, {n}, {main_us:.3f}, {grid}\n")
                    del q, k, v
                    q, k, v = sdpa_setup(b, h, length, 128, d, grad=True)
                    o = F.scaled_dot_product_attention(q, k, v)
                    g = torch.randn_like(o)
                    tot, main_us, grid, n = per_call(kernel_profile(
                        lambda: torch.autograd.grad(o, (q, k, v), g, retain_graph=True), calls=5), 5)
                    f.write(f"backward, {d}, {groups}, {length}, 128, {tot:.3f}, {n}, {main_us:.3f}, {grid}\n")
                    f.flush()
                    del q, k, v, o, g
                if length == p["fa2_blocks"][-1][1]:
                    print(f"fa2_blocks d{d} {groups} groups done", flush=True)
            # A kernel that does nothing measurable (one element): the floor of a kernel's duration.
            x = torch.zeros(1, device=dev)
            tot, main_us, grid, n = per_call(kernel_profile(lambda: x.add_(1.0), calls=20), 20)
            f.write(f"one_element_add, 0, 1, 0, 0, {tot:.3f}, {n}, {main_us:.3f}, {grid}\n")

    def fa2_causal():
        # What the causal mask costs FlashAttention-2's forward per key block. Its blocks first run the key
        # blocks on the diagonal, which the mask cuts (ceil(128 / block_n) of them: one at head dim 64 on
        # 128-key blocks, two at 128 on 64-key blocks), then the plain ones below it (flash_fwd_kernel.h,
        # n_masking_steps). Square shapes of L = 128 .. 512 tokens: at L = 128 every key block a query block
        # runs is a masked one, so the causal call against the unmasked one (same blocks, same key blocks)
        # gives the masked step's extra time; longer L add plain steps to the longer blocks. 4 heads,
        # batch = groups / 4, groups = 2 .. 8 per SM (one to four waves of two resident blocks).
        from torch.nn.attention import SDPBackend, sdpa_kernel
        with open(out("fa2_causal.csv"), "w") as f:
            f.write("head_dim, groups, seq, mask, kernels_us, kernels, main_kernel_us, main_grid\n")
            for d, length, groups, b, h in per_sm_groups(p["fa2_causal"]):
                with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
                    q, k, v = sdpa_setup(b, h, length, length, d)
                    for causal in (False, True):
                        tot, main_us, grid, n = per_call(kernel_profile(
                            lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), calls=5), 5)
                        f.write(f"{d}, {groups}, {length}, {'causal' if causal else 'none'}, {tot:.3f}, {n}, "
                                f"{main_us:.3f}, {grid}\n")
                    f.flush()
                    del q, k, v
            print(f"fa2_causal: {len(p['fa2_causal'])} shapes done", flush=True)

    def kernels():
        # The kernels each call launches, from torch.profiler's CUDA activity (CUPTI): name, grid,
        # block, registers, shared memory and duration, one profiled call per case after warm-ups.
        import csv

        def capture(label, fn, w):
            calls = KERNEL_CALLS
            rows = kernel_profile(fn, calls=calls, warm=3)
            if not rows or len(rows) % calls:
                w.writerow([label, f"(CUPTI gave {len(rows)} kernel events for {calls} calls)", "", "", "", "", "", 0])
                rows = []
            n = len(rows) // calls
            for i in range(n):
                r = rows[i]
                us = statistics.median(rows[c * n + i]["us"] for c in range(calls))
                w.writerow([label, r["name"], r["grid"], r["block"], r["registers"], r["smem"], us, calls])
            rows = rows[:n]
            print(f"kernels {label}: {len(rows)} kernel(s)" + (f", first {rows[0]['name'][:100]}" if rows else ""),
                  flush=True)

        from torch.nn.attention import SDPBackend, sdpa_kernel
        with open(out("kernels.csv"), "w", newline="") as fk:
            w = csv.writer(fk)
            w.writerow(["case", "kernel", "grid", "block", "registers_per_thread", "shared_memory_bytes", "device_us",
                        "calls"])
            for m, n, k in p["kernel_gemms"]:
                capture(f"bf16 {m}x{n}x{k}", gemm_call("bf16", m, n, k), w)
            if hasattr(torch, "_scaled_mm") and torch.version.hip is None \
                    and torch.cuda.get_device_capability(0) >= (8, 9):
                for m, n, k in p["kernel_fp8"]:
                    capture(f"fp8 {m}x{n}x{k}", gemm_call("fp8", m, n, k), w)
            for name, backend, d, seq, causal in (("flash", SDPBackend.FLASH_ATTENTION, 128, 512, False),
                                                  ("flash", SDPBackend.FLASH_ATTENTION, 128, 512, True),
                                                  ("flash", SDPBackend.FLASH_ATTENTION, 64, 512, False),
                                                  ("flash", SDPBackend.FLASH_ATTENTION, 128, 16384, False),
                                                  ("cudnn", SDPBackend.CUDNN_ATTENTION, 128, 512, False),
                                                  ("cudnn", SDPBackend.CUDNN_ATTENTION, 128, 16384, False),
                                                  # head dim 256: the grids behind the backward's share
                                                  # (flash) and cuDNN's backwards, 19-41% fast in the model
                                                  ("flash", SDPBackend.FLASH_ATTENTION, 256, 4096, False),
                                                  ("cudnn", SDPBackend.CUDNN_ATTENTION, 256, 4096, False)):
                b, h = 16384 // seq, 2048 // d
                q, k, v = sdpa_setup(b, h, seq, seq, d, grad=True)
                mask = "causal" if causal else "none"
                try:
                    with sdpa_kernel([backend]):
                        o = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
                        g = torch.randn_like(o)
                        capture(f"sdpa {name} forward d{d} s{seq} {mask}",
                                lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal), w)
                        capture(f"sdpa {name} backward d{d} s{seq} {mask}",
                                lambda: torch.autograd.grad(o, (q, k, v), g, retain_graph=True), w)
                except Exception as e:  # noqa: BLE001
                    meta["errors"][f"kernels sdpa {name} d{d} s{seq} {mask}"] = f"{type(e).__name__}: {e}"[:300]
                fk.flush()
                del q, k, v
            # The element-wise and row kernels of the gelu and rows sections, for their launch
            # configurations (grid, block, registers) and durations: torch.compile's GELU as the gelu
            # sweep compiles it (static at its first size, then one dynamic-shape kernel tuned at the
            # second, 2,048 elements: automatic dynamic shapes) and compiled with dynamic=False at
            # each size; the compiled LayerNorm module with dynamic=False; eager softmax. The H200's runs
            # measure GELU at 0.85 TB/s and softmax at 1.3 TB/s for 4,096-element rows where a copy
            # moves 4.3 TB/s (docs/known-gaps.md, H200 measurements, item 1).
            try:
                gelu_fn = lambda x: F.gelu(x, approximate="tanh")  # noqa: E731
                gelu_dyn = torch.compile(gelu_fn)
                for n in (1024, 2048):
                    gelu_dyn(torch.randn(n, device=dev, dtype=h))
                for n in (1 << 25, 1 << 29):
                    x = torch.randn(n, device=dev, dtype=h)
                    capture(f"gelu dynamic (tuned at 2048) n{n}", lambda: gelu_dyn(x), w)
                    gelu_static = torch.compile(gelu_fn, dynamic=False)
                    capture(f"gelu static n{n}", lambda: gelu_static(x), w)
                    del x
                for m, n in ((32768, 4096), (4096, 32768), (4096, 4096)):
                    x = torch.randn(m, n, device=dev, dtype=h)
                    ln = torch.compile(torch.nn.LayerNorm(n, device=dev, dtype=h), dynamic=False)
                    capture(f"layernorm static {m}x{n}", lambda: ln(x), w)
                    capture(f"softmax eager {m}x{n}", lambda: torch.softmax(x, dim=-1), w)
                    del x, ln
            except Exception as e:  # noqa: BLE001
                meta["errors"]["kernels elementwise"] = f"{type(e).__name__}: {e}"[:300]
            fk.flush()

    # Clocks and power every 100 ms for the whole run (nvidia-smi where there is one).
    try:
        sampler = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,"
                                    "temperature.gpu", "--format=csv,noheader,nounits", "-lms", "100"],
                                   stdout=open(out("smi.csv"), "w"), stderr=subprocess.DEVNULL)
    except OSError:
        sampler = None
    try:
        reasons = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks_event_reasons.active,"
                                    "clocks_event_reasons.sw_power_cap,clocks_event_reasons.hw_slowdown,"
                                    "clocks_event_reasons.sw_thermal_slowdown,enforced.power.limit",
                                    "--format=csv,noheader", "-lms", "100"],
                                   stdout=open(out("smi_reasons.csv"), "w"), stderr=subprocess.STDOUT)
    except OSError:
        reasons = None

    # Most wanted first: a section that fails is recorded in meta.json and the others still run.
    for name, fn in [("matmul", matmul), ("gemv", gemv), ("bandwidth", bandwidth), ("llama", llama),
                     ("fp8", fp8), ("attention", attention), ("gelu", gelu), ("rows", rows), ("power", power), ("power_check", power_check),
                     ("latency", memory_latency), ("fa2", fa2), ("fa2_blocks", fa2_blocks),
                     ("fa2_causal", fa2_causal), ("kernels", kernels)]:
        if a.sections and name not in a.sections.split(","):
            continue
        meta.setdefault("smi_per_section", {})[name] = smi().splitlines()[-1]
        meta.setdefault("section_span_unix_s", {})[name] = [round(time.time(), 3)]
        t0 = time.time()
        try:
            fn()
            print(f"{name} done in {time.time() - t0:.1f} s", flush=True)
        except Exception as e:  # noqa: BLE001 (recorded, and the next section runs)
            traceback.print_exc()
            meta["errors"][name] = f"{type(e).__name__}: {e}"
        meta["seconds_per_section"][name] = round(time.time() - t0, 1)
        meta["section_span_unix_s"][name].append(round(time.time(), 3))
        torch.cuda.empty_cache()

    for proc in (sampler, reasons):
        if proc is not None:
            proc.terminate()
    meta["smi_after"] = smi()
    meta["seconds"] = round(time.time() - t_all, 1)
    with open(out("meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print(f"measure_gpu.py: wrote {a.out} in {meta['seconds']} s; errors: {meta['errors'] or 'none'}")
    return 1 if meta["errors"] else 0


class LlamaShape:
    """A Llama-3-8B-shaped decoder (Grattafiori et al. 2024, Table 3: 32 layers, model dimension 4096,
    FFN 14336, 32 query / 8 key-value heads, vocabulary 128,256) with random BF16 weights, written in
    plain PyTorch as Hugging Face's LlamaForCausalLM computes it: RMSNorm, fused QKV projection, RoPE,
    a KV cache of fixed size written in place, SDPA (FlashAttention where PyTorch picks it), output
    projection, SwiGLU (fused gate+up projection), and the LM head on the last token of each sequence
    (prefill) or on every new token (decode). Timing: one CUDA-graph replay per step (no launch gaps)
    and the same step eager (launch-bound where kernels are short)."""

    def __init__(self, torch, dev, layers=32, d=4096, heads=32, kv_heads=8, ffn=14336, vocab=128256):
        self.torch, self.dev, self.dt = torch, dev, torch.bfloat16
        self.L, self.d, self.nh, self.nkv, self.hd, self.ffn = layers, d, heads, kv_heads, d // heads, ffn
        g = torch.Generator(device=dev)
        g.manual_seed(0)

        def w(*shape):
            return torch.randn(*shape, device=dev, dtype=self.dt, generator=g) * 0.02

        self.layers = [dict(ln1=torch.ones(d, device=dev, dtype=self.dt), ln2=torch.ones(d, device=dev, dtype=self.dt),
                            wqkv=w((heads + 2 * kv_heads) * self.hd, d), wo=w(d, d), wgu=w(2 * ffn, d), wd=w(d, ffn))
                       for _ in range(layers)]
        self.emb = w(vocab, d)
        self.head = w(vocab, d)
        self.lnf = torch.ones(d, device=dev, dtype=self.dt)

    def rms(self, x, w, eps=1e-5):
        xf = x.float()
        return (xf * self.torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * w

    def rope(self, x, cos, sin):
        h = self.hd // 2
        return x * cos + self.torch.cat((-x[..., h:], x[..., :h]), -1) * sin

    def forward(self, tokens, cos, sin, caches, pos0):
        F = self.torch.nn.functional
        b, s = tokens.shape
        x = self.emb[tokens]
        for lw, (kc, vc) in zip(self.layers, caches):
            qkv = F.linear(self.rms(x, lw["ln1"]), lw["wqkv"])
            q, k, v = qkv.split([self.nh * self.hd, self.nkv * self.hd, self.nkv * self.hd], -1)
            q = self.rope(q.view(b, s, self.nh, self.hd).transpose(1, 2), cos, sin)
            k = self.rope(k.view(b, s, self.nkv, self.hd).transpose(1, 2), cos, sin)
            kc[:, :, pos0:pos0 + s] = k
            vc[:, :, pos0:pos0 + s] = v.view(b, s, self.nkv, self.hd).transpose(1, 2)
            args, kwargs = self.attention_args(q, kc[:, :, :pos0 + s], vc[:, :, :pos0 + s])
            o = F.scaled_dot_product_attention(*args, **kwargs)
            x = x + F.linear(o.reshape(b, self.nh, s, self.hd).transpose(1, 2).reshape(b, s, self.d), lw["wo"])
            gate, up = F.linear(self.rms(x, lw["ln2"]), lw["wgu"]).chunk(2, -1)
            x = x + F.linear(F.silu(gate) * up, lw["wd"])
        return F.linear(self.rms(x[:, -1:] if s > 1 else x, self.lnf), self.head)

    def attention_args(self, q, keys, values):
        """SDPA's arguments for queries q (b, heads, s, head_dim) over the cached keys and values."""
        b, _, s, _ = q.shape
        if s == 1:
            # Decode: the query heads of one KV group attend as rows of one head (exact GQA).
            return (q.reshape(b, self.nkv, self.nh // self.nkv, self.hd), keys, values), {}
        return (q, keys, values), {"is_causal": True, "enable_gqa": True}

    def sdpa_backend(self, b, s, ctx):
        """The kernel SDPA picks for a step's attention call (torch._fused_sdp_choice, the dispatcher's
        own choice: 0 math, 1 flash, 2 efficient, 3 cudnn) on same-shape tensors: which kernel ran
        decides whether decode attention splits the KV sequence over thread blocks."""
        torch = self.torch
        names = {0: "math", 1: "flash_attention", 2: "efficient_attention", 3: "cudnn_attention"}
        q = torch.empty(b, self.nh, s, self.hd, device=self.dev, dtype=self.dt)
        kv = torch.empty(b, self.nkv, ctx, self.hd, device=self.dev, dtype=self.dt)
        args, kwargs = self.attention_args(q, kv, kv)
        try:
            choice = int(torch._fused_sdp_choice(*args, **kwargs))
            return names.get(choice, str(choice))
        except Exception as e:  # noqa: BLE001 (a private API: record why it gave no answer)
            return f"unknown ({type(e).__name__}: {e})"

    def step_times(self, b, s, ctx, device_mean, compiled=True, eager=True):
        torch = self.torch
        caches = [(torch.zeros(b, self.nkv, ctx, self.hd, device=self.dev, dtype=self.dt),
                   torch.zeros(b, self.nkv, ctx, self.hd, device=self.dev, dtype=self.dt)) for _ in range(self.L)]
        for kc, vc in caches:
            kc.normal_()
            vc.normal_()
        pos0 = ctx - s
        tokens = torch.randint(0, self.emb.shape[0], (b, s), device=self.dev)
        pos = torch.arange(pos0, ctx, device=self.dev, dtype=torch.float32)
        inv = 1.0 / (500000.0 ** (torch.arange(0, self.hd, 2, device=self.dev, dtype=torch.float32) / self.hd))
        ang = torch.outer(pos, inv)
        ang = torch.cat((ang, ang), -1)
        cos, sin = ang.cos().to(self.dt), ang.sin().to(self.dt)
        fwd = lambda: self.forward(tokens, cos, sin, caches, pos0)  # noqa: E731
        reps = 5 if b * s >= 8192 else 20

        def graphed(fn):
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                for _ in range(2):
                    fn()
            torch.cuda.current_stream().wait_stream(stream)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                fn()
            t = device_mean(graph.replay, reps=reps)
            del graph
            return t

        t_compiled, err = float("nan"), ""
        with torch.no_grad():
            t_graph = graphed(fwd)
            t_eager = device_mean(fwd, reps=reps) if eager else float("nan")
            if compiled:
                # The same step through TorchInductor (dynamic shapes: one compilation per phase), which
                # fuses each RMSNorm, RoPE, SwiGLU product and residual add (with the next RMSNorm) into
                # single kernels and keeps cuBLAS GEMMs and the SDPA kernel; then one CUDA-graph replay.
                try:
                    if getattr(self, "compiled", None) is None:
                        self.compiled = torch.compile(self.forward, dynamic=True)
                    t_compiled = graphed(lambda: self.compiled(tokens, cos, sin, caches, pos0))
                except Exception as e:  # noqa: BLE001 (recorded in meta.json; the plain timings stand)
                    err = f"{type(e).__name__}: {e}"[:500]
        del caches
        torch.cuda.empty_cache()
        return t_graph, t_eager, t_compiled, err


if __name__ == "__main__":
    sys.exit(main())
