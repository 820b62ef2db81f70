#!/usr/bin/python3
"""ctest cli_validate_json: `dse validate --json` keys, its groups, platform speedups and rank orders,
the suite's cases re-derived from `dse eval` (gpt-fast, llm-foundry, Megatron-LM, MaxText, MLPerf,
Eyeriss), `--group` and `--suite` (a folder of measurements, refusals with their place).

usage: check_validate_cli.py DSE_EXECUTABLE
"""
import functools
import json
import re
import os
import subprocess
import sys
import tempfile

from cli_check import dse, need, run

v = json.loads(run("validate", "--json"))
need(v, ["cases", "groups"], "validate")
for c in v["cases"]:
    need(c, ["name", "group", "source", "measured", "predicted", "error"], "validate.cases[]")
for g in ("operators", "end_to_end", "training_mfu"):
    need(v["groups"], [g], "validate.groups")
    need(v["groups"][g], ["n", "mean_abs_error", "median_abs_error", "max_abs_error"], f"validate.groups.{g}")
# platform_speedups: per benchmark, the measured fastest case over each other one, measured and predicted
# (the cases' own figures divided), error = predicted / measured - 1; MPT-13B on 8 GPUs: H100 over A100.
sp = [s for s in v["platform_speedups"] if s["benchmark"] == "training_mfu:mpt-13b.yaml:b2:s2048"]
byname = {c["name"]: c for c in v["cases"]}
h, a = byname["mosaicml-mpt-13b-h100-mb2"], byname["mosaicml-mpt-13b-a100-mb2"]
want_m, want_p = h["measured"] / a["measured"], h["predicted"] / a["predicted"]
if (len(sp) != 1 or sp[0]["faster"] != h["name"] or sp[0]["slower"] != a["name"]
        or abs(sp[0]["measured"] - want_m) > 1e-9 * want_m or abs(sp[0]["predicted"] - want_p) > 1e-9 * want_p
        or abs(sp[0]["error"] - (want_p / want_m - 1)) > 1e-9):
    sys.exit(f"validate platform_speedups for MPT-13B: {sp}, want x{want_m} measured, x{want_p} predicted")
# One pair per case that is not its benchmark's measured fastest: the four MLPerf Llama-2-70B platforms give 3.
mlperf = [s for s in v["platform_speedups"] if s["benchmark"] == "llm_offline:llama2-70b"]
if len(mlperf) != 3 or any(s["faster"] != "mlperf41-llama2-70b-offline-8xh200" for s in mlperf):
    sys.exit(f"validate platform_speedups for MLPerf Llama-2-70B: {mlperf}")
need(v["platform_speedup_errors"], ["n", "mean_abs_error", "median_abs_error", "max_abs_error"], "validate")
if v["platform_speedup_errors"]["n"] != len(v["platform_speedups"]):
    sys.exit("validate platform_speedup_errors.n differs from the pairs listed")
# gpt-fast's batch-1 rows (llm_offline, one static batch of 1, prompt 6 + 200 new tokens over a static
# 206-position cache): tokens/s = 200 / (prefill of 6 tokens + 199 decode steps over the static cache, --context
# 206 as in the static-shape check above), each step
# as `dse eval` gives it with the stack's fusion kinds and the vocabulary replicated on every TP rank.
gf = [c for c in v["cases"] if c["name"] == "gptfast-llama2-7b-a100-bf16-tp8-b1"]
if len(gf) != 1:
    sys.exit("validate: no case gptfast-llama2-7b-a100-bf16-tp8-b1")
def gf7b(phase, *extra):
    return json.loads(run("eval", "--hardware", "a100-sxm4-80gb", "--workload", "llama2-7b", "--tp", "8", "--phase",
                          phase, "--fusions", "norm_residual,flash_attention", "--vocab", "replicated", "--no-serving",
                          "--json", *extra))["totals"]["latency_s"]
want = 200 / (gf7b("prefill", "--seq", "6") + 199 * gf7b("decode", "--context", "206"))
if abs(gf[0]["predicted"] - want) > 1e-9 * want:
    sys.exit(f"gpt-fast TP-8 case: predicted {gf[0]['predicted']} tokens/s, dse eval gives {want}")
# Replicating the vocabulary gives each rank the whole lm_head, 2 x 32,000 x 4,096 = 262,144,000 FLOPs for the
# one token instead of 1/8 of them (Llama-2-7B's vocabulary and width), and drops the embedding all-reduce.
def gf7b_layers(vocab):
    return {l["name"]: l for l in json.loads(run(
        "eval", "--hardware", "a100-sxm4-80gb", "--workload", "llama2-7b", "--tp", "8", "--phase", "decode",
        "--context", "205", "--vocab", vocab, "--no-serving", "--json"))["layers"]}
rep, par = gf7b_layers("replicated"), gf7b_layers("parallel")
if "allreduce_embed" in rep or "allreduce_embed" not in par:
    sys.exit("--vocab replicated keeps the embedding all-reduce, or parallel drops it")
if (rep["lm_head"]["flops"], par["lm_head"]["flops"]) != (262144000, 32768000) or not (
        rep["lm_head"]["dram_bytes"] > 262144000 > par["lm_head"]["dram_bytes"]):
    sys.exit(f"--vocab replicated / parallel: lm_head {rep['lm_head']} / {par['lm_head']}")
for argv, msg in ((["--vocab", "sharded"], "--vocab: expected parallel or replicated (got sharded)"),
                  (["--vocab", "replicated", "--phase", "train", "--tp", "2"], "--vocab replicated applies to inference")):
    p = subprocess.run([dse, "eval", "--hardware", "a100-sxm4-80gb", "--workload", "llama2-7b", "--no-serving", *argv],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 2 or msg not in p.stderr:
        sys.exit(f"eval {argv}: exit {p.returncode}, stderr {p.stderr!r}")
# A training case in tokens/s/chip (llm-foundry's MPT-7B row on A100: 8 GPUs with FSDP FULL_SHARD, 2
# micro-batches of 6 x 2,048 tokens per step, eager PyTorch with FlashAttention) is 2 x 6 x 2048 tokens over
# the step `dse eval` gives that stack and configuration.
mpt = [c for c in v["cases"] if c["name"] == "mosaicml-mpt-7b-a100-mb6"]
def mpt7b(*extra, sharding="fsdp"):
    return json.loads(run("eval", "--system", "dgx-a100-8", "--dp", "8", "--sharding", sharding, "--micro-batches", "2",
                          "--workload", os.path.join(os.path.dirname(__file__), "../../scenarios/validation/mpt-7b.yaml"),
                          "--phase", "train", "--batch", "6", "--seq", "2048", "--fusions", "flash_attention",
                          "--launch", "framework", "--no-serving", "--json", *extra))
# The case names its stack's attention kernel (llm-foundry's attn_impl: triton = flash1), its
# optimizer (Composer's DecoupledAdamW, a kernel per arithmetic step = unfused), its loss (flash-attn's
# fused cross-entropy) and its training loop's two logging cross-entropies per micro-batch.
STACK = ("--loss-kernel", "fused", "--logit-metrics", "2")
ev = mpt7b("--attention-kernel", "flash1", "--optimizer", "unfused", *STACK)
native = mpt7b("--optimizer", "unfused", *STACK)
# Loss and metrics by hand, over the step's 6 x 2048 = 12,288 rows of MPT's 50,368-token vocabulary
# (618,921,984 bf16 logits, L): the fused loss reads L twice forward (4 B each) and reads and writes it
# backward (4 B); each metric is a log-softmax charged two reads and a write of L (6 B) and the fp32 copy
# of its output (2 B read, 4 B written); the metrics run twice per micro-batch and derive no backward.
L = 6 * 2048 * 50368
want = {"loss_cross_entropy": (4 * L, 1), "loss_cross_entropy.bwd": (4 * L, 1), "metric_log_softmax": (6 * L, 2),
        "metric_log_probs_fp32": (6 * L, 2)}
got = {l["name"]: (l["dram_bytes"], l["repeat"]) for l in ev["layers"] if l["name"] in want}
if got != want or any("metric_" in l["name"] and l["name"].endswith(".bwd") for l in ev["layers"]):
    sys.exit(f"--loss-kernel fused --logit-metrics 2: layers {got}, want {want}")
# Without the metrics the chip's micro-batch is shorter by exactly their two occurrences.
bare = mpt7b("--attention-kernel", "flash1", "--optimizer", "unfused", "--loss-kernel", "fused")
metrics_s = sum(l["latency_s"] * l["repeat"] for l in ev["layers"] if l["name"].startswith("metric_"))
if not metrics_s > 0 or abs((ev["totals"]["chip_latency_s"] - bare["totals"]["chip_latency_s"]) - metrics_s) > 1e-12:
    sys.exit(f"--logit-metrics 2 adds {ev['totals']['chip_latency_s'] - bare['totals']['chip_latency_s']} s, "
             f"its layers {metrics_s} s")
# The update runs once per step on each chip's 1/8 of the parameters: unfused moves 98 B per
# parameter (bf16 step), fused 38 (system.hpp OptimizerKernel), and nothing else differs.
fused = mpt7b("--attention-kernel", "flash1", *STACK)["parallel"]
unf = ev["parallel"]
if (not fused["optimizer_s"] > 0 or abs(unf["optimizer_s"] / fused["optimizer_s"] - 98.0 / 38.0) > 1e-9
        or abs((unf["step_time_s"] - fused["step_time_s"]) - (unf["optimizer_s"] - fused["optimizer_s"])) > 1e-12):
    sys.exit(f"--optimizer: unfused {unf}, fused {fused}")
# --sharding fsdp is full plus FSDP's gradient and shard copies (shard_copy_bytes), which add to the
# step as shard_copies_s; full has none.
full = mpt7b("--attention-kernel", "flash1", "--optimizer", "unfused", *STACK, sharding="full")["parallel"]
if (full["shard_copies_s"] != 0 or not unf["shard_copies_s"] > 0
        or abs((unf["step_time_s"] - full["step_time_s"]) - unf["shard_copies_s"]) > 1e-12):
    sys.exit(f"--sharding fsdp vs full: {unf} vs {full}")
kernels = {l["name"]: l["mapping"]["kernel"] for l in ev["layers"]}
if (kernels.get("attn_qk") != "flash_attention_1" or kernels.get("attn_av.bwd_a") != "flash_attention_1_bwd"
        or not ev["totals"]["latency_s"] > native["totals"]["latency_s"]):
    sys.exit(f"--attention-kernel flash1: kernels {kernels.get('attn_qk')}, {kernels.get('attn_av.bwd_a')}, "
             f"latency {ev['totals']['latency_s']} vs native {native['totals']['latency_s']}")
want_tps = 2 * 6 * 2048 / ev["totals"]["latency_s"]
# --overlap-data 0.5 hides half of those collectives (parallelism.hpp: exposed = (1 - overlap) x their time),
# and half of the copies that run beside them; those on the compute stream stay.
half = mpt7b("--attention-kernel", "flash1", "--optimizer", "unfused", *STACK, "--overlap-data", "0.5")["parallel"]
full_exp = ev["parallel"]["exposed_comm_s"]
copies_hidden = ev["parallel"]["shard_copies_s"] - half["shard_copies_s"]
if (full_exp <= 0 or abs(half["exposed_comm_s"] - 0.5 * full_exp) > 1e-12 or not copies_hidden > 0
        or abs(half["step_time_s"] - (ev["parallel"]["step_time_s"] - 0.5 * full_exp - copies_hidden)) > 1e-9):
    sys.exit(f"--overlap-data 0.5: exposed {half['exposed_comm_s']} vs {full_exp}, step {half['step_time_s']}")
if len(mpt) != 1 or abs(mpt[0]["predicted"] - want_tps) > 1e-9 * want_tps:
    sys.exit(f"validate mosaicml-mpt-7b-a100-mb6: {mpt[0]['predicted'] if mpt else None} tokens/s, want {want_tps}")
# max_positions (training_mfu): a sweep row runs the workload with its learned position table sized to the
# run's length, as `dse eval` does on a copy of the file with that max_positions: MPT-760M at 4,096 tokens on
# 8x H100 (12 x 4096 per micro-batch, two, on each chip).
sweep = [c for c in v["cases"] if c["name"] == "mosaicml-mpt-760m-h100-s4096-mb12"]
with tempfile.TemporaryDirectory() as tmp:
    src = open(os.path.join(os.path.dirname(__file__), "../../scenarios/validation/mpt-760m.yaml")).read()
    w4096 = os.path.join(tmp, "mpt-760m-4096.yaml")
    open(w4096, "w").write(src.replace("max_positions: 2048", "max_positions: 4096"))
    e4096 = json.loads(run("eval", "--system", "dgx-h100-8", "--dp", "8", "--sharding", "fsdp", "--micro-batches", "2",
                           "--workload", w4096, "--phase", "train", "--batch", "12", "--seq", "4096", "--fusions",
                           "flash_attention", "--attention-kernel", "flash1", "--optimizer", "unfused", *STACK,
                           "--launch", "framework", "--no-serving", "--json"))
want_4096 = 2 * 12 * 4096 / e4096["parallel"]["step_time_s"]  # per chip: each of the 8 runs its own sequences
if (len(sweep) != 1 or sweep[0]["group"] != "training_seq_sweep"
        or abs(sweep[0]["predicted"] - want_4096) > 1e-9 * want_4096
        or "learned position table 4096" not in sweep[0]["constants"]):
    sys.exit(f"validate mosaicml-mpt-760m-h100-s4096-mb12: {sweep}, want {want_4096} tokens/s/chip")
# The A100-SXM4-40GB preset is the A100-80GB's chip with 40 GB of HBM2 at 1,555 GB/s (its file says so): every
# figure of both files but the name and those two is the 80 GB file's, and an HBM-bound kernel (the optimizer
# update: parameters x 98 B over the achievable bandwidth) takes 2,039 / 1,555 times as long. llm-foundry's
# A100-40GB table joins the suite whole: its 31 8-GPU rows without checkpointing, 5 at 2,048 tokens.
def figures(path):
    lines = [ln.split("#", 1)[0].rstrip() for ln in open(path)]
    return [ln for ln in lines if ln.strip()]
hw = os.path.join(os.path.dirname(__file__), "../../scenarios/hardware")
for sub in ("", "platform"):
    a80, a40 = figures(os.path.join(hw, sub, "a100-sxm4-80gb.yaml")), figures(os.path.join(hw, sub, "a100-sxm4-40gb.yaml"))
    diff = [(x, y) for x, y in zip(a80, a40) if x != y]
    want = [] if sub else [("name: a100-sxm4-80gb", "name: a100-sxm4-40gb"),
                           ("  hbm_bytes: 85899345920", "  hbm_bytes: 42949672960"),
                           ("  hbm_peak_bandwidth_bytes_per_s: 2.039e12", "  hbm_peak_bandwidth_bytes_per_s: 1.555e12")]
    if len(a80) != len(a40) or diff != want:
        sys.exit(f"a100-sxm4-40gb.yaml ({sub or 'hardware'}) differs from the 80 GB file by {diff}")
def optimizer_s(system):
    return json.loads(run("eval", "--system", system, "--dp", "8", "--sharding", "fsdp", "--workload",
                          os.path.join(hw, "../validation/mpt-1b.yaml"), "--phase", "train", "--batch", "8", "--seq",
                          "2048", "--optimizer", "unfused", "--no-serving", "--json"))["parallel"]["optimizer_s"]
o80, o40 = optimizer_s("dgx-a100-8"), optimizer_s("dgx-a100-40gb-8")
if not o80 > 0 or abs(o40 / o80 - 2.039 / 1.555) > 1e-9:
    sys.exit(f"optimizer update on A100-40GB {o40} s vs 80GB {o80} s, want the ratio {2.039 / 1.555}")
a40 = [c for c in v["cases"] if "-a100-40gb-" in c["name"]]
if (len(a40) != 31 or sum(c["group"] == "training_mfu" for c in a40) != 5
        or any(not c["constants"].startswith("a100-sxm4-40gb:") for c in a40)):
    sys.exit(f"validate: {len(a40)} A100-40GB cases, want 31 (5 in training_mfu) on the a100-sxm4-40gb preset")
# --gradient-reduce-precision: the data-parallel all-reduce (exposed: the only collective of this run) moves the
# gradients in that precision (a ring: time = latency term + bytes x a constant), so fp32's time less bf16's is
# twice bf16's less fp8's; the parameters stay bf16. Refused outside training; the Megatron-LM cases reduce in fp32.
def dp_comm(*extra):
    return json.loads(run("eval", "--hardware", "a100-sxm4-80gb", "--workload", "llama2-7b", "--dp", "2",
                          "--phase", "train", "--batch", "1", "--seq", "512", "--no-serving", "--json",
                          *extra))["parallel"]["exposed_comm_s"]
t16, t32, t8 = dp_comm(), dp_comm("--gradient-reduce-precision", "fp32"), dp_comm("--gradient-reduce-precision", "fp8")
if not (t8 < t16 < t32) or abs((t32 - t16) - 2 * (t16 - t8)) > 1e-9 * t32:
    sys.exit(f"--gradient-reduce-precision: exposed_comm_s fp8 {t8}, bf16 {t16}, fp32 {t32}")
p = subprocess.run([dse, "eval", "--hardware", "a100-sxm4-80gb", "--workload", "llama2-7b", "--phase", "prefill",
                    "--gradient-reduce-precision", "fp32", "--no-serving"], capture_output=True, text=True, timeout=60)
if p.returncode != 2 or "--gradient-reduce-precision apply to --phase train" not in p.stderr:
    sys.exit(f"--gradient-reduce-precision outside training: exit {p.returncode}, {p.stderr!r}")
mega = [c for c in v["cases"] if c["name"] == "megatron-gpt-530b-dp8-a100-mfu"]
if len(mega) != 1 or "gradients reduced in fp32" not in mega[0]["constants"]:
    sys.exit(f"validate megatron-gpt-530b-dp8-a100-mfu constants: {mega}")
# MaxText's TPU tables (group training_tpu, 12 one-slice rows): each row's tokens/s/chip is its table's
# TFLOP/sec/chip (in the case's source) over MaxText's FLOPs per token, 6 N + 6 L H d s (causal attention, s =
# 2,048), N counted from the row's workload file (per layer 4 E H d + 3 E M + 2 E, then 2 E V + E); and a row runs
# as `dse eval` runs it: 32B on a v5p-128 slice (64 chips), tensor 4 x FSDP 16, 28 sequences per TP group.
tpu = [c for c in v["cases"] if c["group"] == "training_tpu"]
vdir = os.path.join(os.path.dirname(__file__), "../../scenarios/validation")
@functools.cache
def maxtext_dims(size):
    text = open(os.path.join(vdir, f"maxtext-{size}b.yaml")).read()
    w = {k: int(x) for k, x in re.findall(r"(?m)^(hidden|layers|heads|head_dim|ffn_hidden|vocab): (\d+)$", text)}
    return tuple(w[k] for k in ("hidden", "layers", "heads", "head_dim", "ffn_hidden", "vocab"))
def params(size):
    E, L, H, d, M, V = maxtext_dims(size)
    return L * (4 * E * H * d + 3 * E * M + 2 * E) + 2 * E * V + E
def flops_per_token(size):
    E, L, H, d, M, V = maxtext_dims(size)
    return 6 * params(size) + 6 * L * H * d * 2048
for c in tpu:
    tf = float(re.search(r"(\d+) TFLOP/sec/chip", c["source"]).group(1))
    want = tf * 1e12 / flops_per_token(re.search(r"^maxtext-(\d+)b-", c["name"]).group(1))
    if c["unit"] != "tokens/s/chip" or abs(c["measured"] - want) > 0.051:
        sys.exit(f"validate {c['name']}: measured {c['measured']} {c['unit']}, want {want:.2f} tokens/s/chip")
if len(tpu) != 12:
    sys.exit(f"validate: {len(tpu)} training_tpu cases, want 12")
# The same tables' multi-slice rows (group training_tpu_multislice, 28), their tokens/s/chip by the same rule.
multi = [c for c in v["cases"] if c["group"] == "training_tpu_multislice"]
for c in multi:
    tf = float(re.search(r"(\d+) TFLOP/sec/chip", c["source"]).group(1))
    if abs(c["measured"] - tf * 1e12 / flops_per_token(re.search(r"^maxtext-(\d+)b-", c["name"]).group(1))) > 0.051:
        sys.exit(f"validate {c['name']}: measured {c['measured']} {c['unit']}")
if len(multi) != 28:
    sys.exit(f"validate: {len(multi)} training_tpu_multislice cases, want 28")
# A multi-slice row runs as `dse eval` runs it (64B on 32 v5e-256 pods, hybrid sharding: FSDP over each pod's
# 256 chips, the 32 copies all-reducing their shards), and that all-reduce is by hand a ring over a switch of 32
# data-center-network ports (tpu-v5e-256-x32.yaml: 3.125 GB/s per chip, 10 us): 2 x 31 x 10 us + 2 x 31/32 x S /
# 3.125e9, S the chip's shard of the fp32 gradients, 4 N / 256 bytes.
ev64 = json.loads(run("eval", "--system", "tpu-v5e-256-x32", "--workload", os.path.join(vdir, "maxtext-64b.yaml"),
                      "--phase", "train", "--dp", "8192", "--sharding", "full", "--shard-group", "256",
                      "--gradient-reduce-precision", "fp32", "--overlap-data", "1", "--batch", "2", "--seq", "2048",
                      "--recompute", "full", "--fusions", "gemm_epilogue,norm_residual,flash_attention", "--no-serving",
                      "--json"))
shard_64 = 4 * params("64") / 256
want_ar = 2 * 31 * 1e-5 + 2 * 31 / 32 * shard_64 / 3.125e9
if abs(ev64["parallel"]["dp_replica_comm_s"] - want_ar) > 1e-9 * want_ar:
    sys.exit(f"eval 64B on tpu-v5e-256-x32: dp_replica_comm_s {ev64['parallel']['dp_replica_comm_s']}, want {want_ar}")
m64 = [c for c in multi if c["name"] == "maxtext-64b-v5e-256-x32"]
want_64 = 2 * 2048 / ev64["parallel"]["step_time_s"]
if len(m64) != 1 or abs(m64[0]["predicted"] - want_64) > 1e-9 * want_64 or "over groups of 256" not in m64[0]["constants"]:
    sys.exit(f"validate maxtext-64b-v5e-256-x32: {m64}, want {want_64} tokens/s/chip")
for args, msg in ((["--dp", "8", "--shard-group", "4"], "--shard-group acts on sharded states"),
                  (["--dp", "8", "--sharding", "full", "--shard-group", "3"], "--shard-group: expected a divisor of --dp = 8 (got 3)"),
                  (["--phase", "prefill", "--shard-group", "4"], "--shard-group,")):
    p = subprocess.run([dse, "eval", "--hardware", "a100-sxm4-80gb", "--workload", "llama2-7b", "--no-serving",
                        *(["--phase", "train"] if "--phase" not in args else []), *args],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 2 or msg not in p.stderr:
        sys.exit(f"dse eval {args}: exit {p.returncode}, stderr {p.stderr!r}, want {msg!r}")
ev32 = json.loads(run("eval", "--system", "tpu-v5p-128", "--workload", os.path.join(vdir, "maxtext-32b.yaml"),
                      "--phase", "train", "--tp", "4", "--dp", "16", "--sharding", "full", "--sequence-parallel",
                      "--overlap-data", "1", "--batch", "28", "--seq", "2048", "--recompute", "minimal",
                      "--fusions", "gemm_epilogue,norm_residual,flash_attention", "--no-serving", "--json"))
want_32 = 28 * 2048 / (ev32["parallel"]["step_time_s"] * 4)
m32 = [c for c in tpu if c["name"] == "maxtext-32b-v5p-128"]
if len(m32) != 1 or abs(m32[0]["predicted"] - want_32) > 1e-9 * want_32:
    sys.exit(f"validate maxtext-32b-v5p-128: {m32}, want {want_32} tokens/s/chip")
# Its constants end with the compute share of the step and the clock, as `dse eval` gives them for the
# same configuration: m x the chip's micro-batch latency over the step (both at the nominal clock), and
# the throttle factor (fails if either is left out or taken from another quantity, e.g. the throttled step).
share = 100 * 2 * ev["totals"]["chip_latency_s"] / ev["parallel"]["step_time_s"]
m = re.search(r"compute ([0-9.]+)% of the step, clock ([0-9.]+)% of nominal$", mpt[0]["constants"])
# Both are printed to 3 significant digits of at most 100 (%), so each is within 0.05 of the exact figure.
if (not m or abs(float(m.group(1)) - share) > 0.051
        or abs(float(m.group(2)) - 100 * ev["throttle_factor"]) > 0.051):
    sys.exit(f"validate mosaicml-mpt-7b-a100-mb6 constants: {mpt[0]['constants']!r}, want compute {share:.3f}%, "
             f"clock {100 * ev['throttle_factor']:.3f}%")
# Capacity: llm-foundry ran MPT-125M at micro-batch 40 of 2,048 tokens on A100 80GB with FlashAttention
# (the table above's row). FlashAttention saves no score-shaped tensor: eager attention's S and P in
# bf16, 12 layers x 2 x (40 x 12 heads x 2048^2 x 2 B) = 96.6 GB, against the row log-sum-exp
# 12 x 40 x 12 x 2048 x 4 B; eager does not fit the card's 85.9 GB, the measured stack does.
def mpt125(fusions):
    return json.loads(run("eval", "--hardware", "a100-sxm4-80gb", "--workload",
                          os.path.join(os.path.dirname(__file__), "../../scenarios/validation/mpt-125m.yaml"),
                          "--phase", "train", "--batch", "40", "--seq", "2048", "--fusions", fusions,
                          "--launch", "framework", "--no-serving", "--json"))["totals"]
fa, eager = mpt125("flash_attention"), mpt125("")
want_saved = 12 * (2 * 40 * 12 * 2048**2 * 2 - 40 * 12 * 2048 * 4)
if not fa["fits_memory"] or eager["fits_memory"] or eager["memory_bytes"] - fa["memory_bytes"] != want_saved:
    sys.exit(f"MPT-125M mb40 on A100: FlashAttention {fa['memory_bytes']} B (fits {fa['fits_memory']}), eager "
             f"{eager['memory_bytes']} B (fits {eager['fits_memory']}); want a difference of {want_saved} B")
# Training options of dse eval: bad values and inference phases are refused.
for args, msg in ((["--phase", "train", "--sharding", "half"], "--sharding: expected none, full or fsdp (got half)"),
                  (["--phase", "train", "--recompute", "some"], "--recompute: expected none, selective, minimal or full (got some)"),
                  (["--phase", "decode", "--micro-batches", "4"], "apply to --phase train"),
                  (["--phase", "train", "--overlap-data", "1.5"], "--overlap-data: expected a fraction in [0, 1]"),
                  (["--phase", "train", "--micro-batches", "0"], "--micro-batches and --virtual-stages must be >= 1")):
    p = subprocess.run([dse, "eval", "--hardware", "a100-sxm4-80gb", "--workload", "llama2-7b", "--no-serving"] + args,
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 2 or msg not in p.stderr:
        sys.exit(f"dse eval {args}: exit {p.returncode}, stderr {p.stderr!r}, want {msg!r}")
# The validation's Megatron-LM configuration (GPT-3 175B on A100 80GB, TP 8, PP 8, 64 micro-batches of 1,
# 3 chunks per chip, selective recomputation) ran, so it fits: 1/8 of the TP-8 states (16 B per parameter)
# plus the first stage's activations (Korthikanti et al. 2022) is 78 GB, not the 405 GB of one unpipelined chip.
meg = [c for c in v["cases"] if c["name"] == "megatron-gpt3-175b-a100-mfu"]
def megatron(*extra):
    return json.loads(run("eval", "--hardware", "a100-sxm4-80gb", "--workload",
                          os.path.join(os.path.dirname(__file__), "../../scenarios/validation/megatron-gpt-175b.yaml"),
                          "--phase", "train",
                          "--tp", "8", "--pp", "8", "--batch", "1", "--seq", "2048", "--micro-batches", "64",
                          "--virtual-stages", "3", "--recompute", "selective", "--no-serving", "--json", *extra))
ev = megatron()
if len(meg) != 1 or not ev["totals"]["fits_memory"]:
    sys.exit(f"megatron case {meg}, dse eval memory {ev['totals']['memory_bytes']} (fits {ev['totals']['fits_memory']})")
# The paper's other three runs (Korthikanti et al. 2022, Table 3: 22B on 8 GPUs, one micro-batch of 4; 530B on
# PP 35 with 280 micro-batches and 3 chunks per chip; 1T on PP 64 with 512 micro-batches) ran on A100-80GB with
# sequence parallelism and selective recomputation, so each fits; every one is a case of the suite.
here = os.path.dirname(__file__)
for size, extra in (("22b", ["--pp", "1", "--batch", "4"]),
                    ("530b", ["--pp", "35", "--batch", "1", "--micro-batches", "280", "--virtual-stages", "3"]),
                    ("1t", ["--pp", "64", "--batch", "1", "--micro-batches", "512"])):
    t = json.loads(run("eval", "--hardware", "a100-sxm4-80gb", "--workload",
                       os.path.join(here, f"../../scenarios/validation/megatron-gpt-{size}.yaml"), "--phase", "train",
                       "--tp", "8", "--seq", "2048", "--recompute", "selective", "--sequence-parallel", "--no-serving",
                       "--json", *extra))["totals"]
    if not t["fits_memory"] or not any(c["name"] == f"megatron-gpt-{size}-a100-mfu" for c in v["cases"]):
        sys.exit(f"megatron {size}: memory {t['memory_bytes']} B (fits {t['fits_memory']}), or no validation case")
# On the DGX A100 pod (scenarios/systems/dgx-a100-pod.yaml: nodes of 8, one 25 GB/s HDR port per GPU at 0.96,
# alpha 5 us) the 175B run's TP 8 x PP 8 spans 8 nodes, so every stage send crosses them. By hand: 3 chunks per
# chip, the busiest chips send after all 3, for each of 64 micro-batches, 1 x 2048 x 12288 x 2 B each, or 1/8 of
# that per TP rank under sequence parallelism (the boundary is sequence-sharded):
# 192 x (5 us + 50,331,648 / 24e9 s) = 0.403613 s, and 192 x (5 us + 6,291,456 / 24e9 s) = 0.051292 s exposed.
for extra, want in (([], 192 * (5e-6 + 50331648 / 24e9)), (["--sequence-parallel"], 192 * (5e-6 + 6291456 / 24e9))):
    par = json.loads(run("eval", "--system", "dgx-a100-pod", "--workload",
                         os.path.join(here, "../../scenarios/validation/megatron-gpt-175b.yaml"), "--phase", "train",
                         "--tp", "8", "--pp", "8", "--seq", "2048", "--batch", "1", "--micro-batches", "64",
                         "--virtual-stages", "3", "--recompute", "selective", "--no-serving", "--json", *extra))["parallel"]
    if abs(par["exposed_comm_s"] - want) > 1e-9 * want:
        sys.exit(f"175B on dgx-a100-pod {extra}: exposed comm {par['exposed_comm_s']} s, by hand {want}")
# The model FLOPs of the 22B run (no recomputation: MFU counts none) over its 8 chips are the paper's equation 7,
# 72 B L s h^2 (1 + s / 6h + v / 12hL) with B 4, L 48, s 2048, h 6144, v 51200 = 1.1436e15, plus the norms',
# activations' and residual adds' FLOPs the formula leaves out (under 0.5%).
t = json.loads(run("eval", "--hardware", "a100-sxm4-80gb", "--workload",
                   os.path.join(here, "../../scenarios/validation/megatron-gpt-22b.yaml"), "--phase", "train", "--tp",
                   "8", "--seq", "2048", "--batch", "4", "--sequence-parallel", "--no-serving", "--json"))["totals"]
eq7 = 72 * 4 * 48 * 2048 * 6144 ** 2 * (1 + 2048 / (6 * 6144) + 51200 / (12 * 6144 * 48))
if not 1.0 <= 8 * t["flops"] / eq7 < 1.005:
    sys.exit(f"megatron 22b: 8 x {t['flops']} FLOPs against equation 7's {eq7}")
# Sequence parallelism shards the 8 sbh of replicated activations per layer (two norm inputs, the QKV and
# FFN-up GEMM inputs; Korthikanti et al. 2022, section 4.2.2) over the 8 TP chips: 96 layers x 7/8 x 8 x
# 2048 x 12288 B, times the interleaved first stage's 1 + 7/24 = 21,843,935,232 B less.
sp = megatron("--sequence-parallel")["totals"]
if abs(ev["totals"]["memory"]["activation_bytes"] - sp["memory"]["activation_bytes"] - 21843935232) > 1:
    sys.exit(f"sequence parallelism: activations {sp['memory']['activation_bytes']} vs {ev['totals']['memory']}")
# Its breakdown (totals.memory) sums to the total; mixed-precision Adam: gradients = weights (2 B per
# parameter), optimizer = 6 x weights (fp32 master, momentum, variance: 12 B).
mem = ev["totals"]["memory"]
if (abs(sum(mem.values()) - ev["totals"]["memory_bytes"]) > 1e-6 * ev["totals"]["memory_bytes"]
        or abs(mem["gradient_bytes"] - mem["weight_bytes"]) > 1 or abs(mem["optimizer_bytes"] - 6 * mem["weight_bytes"]) > 8):
    sys.exit(f"megatron memory breakdown {mem} vs total {ev['totals']['memory_bytes']}")
# PaLM's slice (scenarios/systems/tpu-v4-pod-3072.yaml, a 12 x 16 x 16 torus, 2 links of 45 GB/s per
# dimension, alpha 1 us): a TP-12 group is the 12-chip ring of dims[0], so one TP all-reduce of a
# 4 x 2048-token activation (8192 x 18432 x 2 B = 301,989,888 B) takes, by hand,
# 2 x 11 x 1 us + 2 x (11/12) x 301,989,888 B / (2 x 45e9 B/s) = 6,173.646 us, plus the platform's
# 1 us per kernel (graph_kernel_overhead_s).
pod = json.loads(run("eval", "--system", "tpu-v4-pod-3072", "--workload",
                     os.path.join(os.path.dirname(__file__), "../../scenarios/validation/palm-540b.yaml"),
                     "--phase", "train", "--batch", "4", "--seq", "2048", "--tp", "12", "--json"))
ar = [l for l in pod["layers"] if l["name"] == "allreduce_attn"]
want_ar = 22e-6 + 2 * (11 / 12) * 301989888 / 9e10 + 1e-6
if len(ar) != 1 or abs(ar[0]["latency_s"] - want_ar) > 1e-9:
    sys.exit(f"tpu-v4-pod-3072 TP-12 all-reduce: {ar[0]['latency_s'] if ar else None} s, want {want_ar} s")
# Per measurement file ("files"): n, mean, median and max |error| of that file's cases, recomputed here.
import statistics
per_file = {}
for c in v["cases"]:
    if "file" in c:
        per_file.setdefault(c["file"], []).append(abs(c["error"]))
if set(per_file) != set(v["files"]) or "llmcompass_matmul_A100.csv" not in per_file:
    sys.exit(f"validate files: {sorted(v['files'])} vs the cases' files {sorted(per_file)}")
for f, errs in per_file.items():
    got = v["files"][f]
    want = {"n": len(errs), "mean_abs_error": sum(errs) / len(errs), "median_abs_error": statistics.median(errs),
            "max_abs_error": max(errs)}
    for k, x in want.items():
        if abs(got[k] - x) > 1e-9 * max(1.0, abs(x)):
            sys.exit(f"validate files.{f}.{k}: {got[k]} vs {x} from the cases")
# --group: only that group's cases, each as the whole run gives it; its statistics, rank orders and
# speedups are those of its cases (every speedup pair and rank-order benchmark of the whole run whose
# cases are in the group); a group the suite lacks is refused with the suite's groups and a hint.
sub = json.loads(run("validate", "--json", "--group", "end_to_end", "--group", "research_silicon"))
want = [c for c in v["cases"] if c["group"] in ("end_to_end", "research_silicon")]
if [(c["name"], c["predicted"]) for c in sub["cases"]] != [(c["name"], c["predicted"]) for c in want]:
    sys.exit("validate --group: the cases differ from the whole run's cases of those groups")
if sub["groups"] != {g: v["groups"][g] for g in ("end_to_end", "research_silicon")}:
    sys.exit(f"validate --group: groups {sub['groups']} differ from the whole run's")
names = {c["name"] for c in want}
if sub["platform_speedups"] != [x for x in v["platform_speedups"] if x["faster"] in names and x["slower"] in names]:
    sys.exit("validate --group: platform_speedups differ from the whole run's pairs within the groups")
if sub["rank_order_preserved"] != {b: ok for b, ok in v["rank_order_preserved"].items() if b.startswith("llm_offline")}:
    sys.exit(f"validate --group: rank orders {sub['rank_order_preserved']}")
p = subprocess.run([dse, "validate", "--group", "end_to_en"], capture_output=True, text=True, timeout=60)
if p.returncode != 2 or "research_silicon, research_silicon_layers, serving, training_mfu" not in p.stderr or \
        "did you mean 'end_to_end'? (got 'end_to_en')" not in p.stderr:
    sys.exit(f"validate --group end_to_en: exit {p.returncode}, stderr {p.stderr!r}")
# The H100 Llama-2 case carries NVIDIA's batch limit (suite key max_batch: 896, its config file):
# the chosen static batch must respect it and the constants must say so.
h100 = [c for c in v["cases"] if c["name"] == "mlperf41-llama2-70b-offline-8xh100"]
if len(h100) != 1 or "(of at most 896)" not in h100[0]["constants"]:
    sys.exit("validate: the 8x H100 Llama-2 case does not report its batch limit of 896")
best = int(h100[0]["constants"].split("best static batch ")[1].split()[0])
if best > 896:
    sys.exit(f"validate: static batch {best} above the case's max_batch 896")
# `dir: suite` reads an operator file beside the suite (what scripts/measure_gpu.py writes): the
# same rows through both folders give the same cases.
oracles = os.environ.get("DSE_ORACLES_DIR", os.path.join(os.path.dirname(__file__), "../../data/oracles"))
with open(os.path.join(oracles, "measured", "llmcompass_matmul_A100.csv")) as f:
    rows = f.read().splitlines()[:2]
with tempfile.TemporaryDirectory() as tmp:
    with open(os.path.join(tmp, "local_matmul.csv"), "w") as f:
        f.write("\n".join(rows) + "\n")
    with open(os.path.join(tmp, "suite.yaml"), "w") as f:
        f.write(f"measured_dir: {os.path.join(os.path.abspath(oracles), 'measured')}\ncases:\n"
                "  - {kind: operator_csv, group: operators, op: matmul, file: local_matmul.csv, dir: suite,"
                " hardware: a100-sxm4-80gb, source: local}\n")
    local = json.loads(run("validate", "--json", "--suite", os.path.join(tmp, "suite.yaml")))["cases"]
ref = {c["name"].split(" ")[1]: c for c in v["cases"] if c["name"].startswith("llmcompass_matmul_A100 ")}
if len(local) != 2:
    sys.exit(f"validate dir: suite: {len(local)} cases from a 2-row file")
for c in local:
    r = ref[c["name"].split(" ")[1]]
    if c["measured"] != r["measured"] or c["predicted"] != r["predicted"]:
        sys.exit(f"validate dir: suite: {c['name']} differs from the oracle file's case")
# A suite of one case that `dse validate` must refuse (exit 2) with `msg`, at a place in the suite file.
def refused(tmp, case, msg, what):
    path = os.path.join(tmp, "suite.yaml")
    with open(path, "w") as f:
        f.write(f"measured_dir: {tmp}\ncases:\n  - {case}\n")
    p = subprocess.run([dse, "validate", "--suite", path], capture_output=True, text=True, timeout=60)
    if p.returncode != 2 or msg not in p.stderr or "suite.yaml:" not in p.stderr:
        sys.exit(f"validate {what}: exit {p.returncode}, stderr {p.stderr!r}, want {msg!r}")
# Training cases: unit mfu or tokens/s/chip; launch (and fusions) are keys of training (and step) cases.
with tempfile.TemporaryDirectory() as tmp:
    for case, msg in (("{name: t, kind: training_mfu, group: training_mfu, hardware: a100-sxm4-80gb, workload: llama2-7b,"
                       " batch: 1, seq: 512, measured: 1, unit: furlongs, source: s}",
                       "cases[0].unit: expected mfu or tokens/s/chip (a training_mfu case) (got furlongs)"),
                      ("{name: d, kind: decode_latency, group: end_to_end, hardware: a100-sxm4-80gb, workload: llama2-7b,"
                       " context: 128, measured: 1, unit: s, launch: framework, source: s}",
                       "cases[0].launch: a key of training_mfu, llm_offline and serving (llm_server, ttft_latency, tpot_latency, "
                       "batch_latency) cases only"),
                      ("{name: d, kind: decode_latency, group: end_to_end, hardware: a100-sxm4-80gb, workload: llama2-7b,"
                       " context: 128, measured: 1, unit: s, stack: vllm, source: s}",
                       "cases[0].stack: a key of llm_offline and serving cases only"),
                      ("{name: d, kind: decode_latency, group: end_to_end, hardware: a100-sxm4-80gb, workload: llama2-7b,"
                       " context: 128, measured: 1, unit: s, fusions: [flash_attention], source: s}",
                       "a key of llm_step_csv, training_mfu, llm_offline and power cases only"),
                      ("{name: t, kind: training_mfu, group: training_mfu, hardware: a100-sxm4-80gb, workload: llama2-7b,"
                       " batch: 1, seq: 512, tp: 2, vocab: replicated, measured: 1, unit: mfu, source: s}",
                       "cases[0].vocab: a key of llm_offline and decode_latency cases only"),
                      ("{name: d, kind: decode_latency, group: end_to_end, hardware: a100-sxm4-80gb, workload: llama2-7b,"
                       " context: 128, measured: 1, unit: s, tp: 2, vocab: sharded, source: s}",
                       "cases[0].vocab: expected parallel or replicated (got sharded)"),
                      ("{name: d, kind: decode_latency, group: end_to_end, hardware: a100-sxm4-80gb, workload: llama2-7b,"
                       " context: 128, measured: 1, unit: s, dp: 8, source: s}",
                       "cases[0].dp: a key of training_mfu cases only"),
                      ("{name: t, kind: training_mfu, group: training_mfu, hardware: a100-sxm4-80gb, workload: llama2-7b,"
                       " batch: 1, seq: 512, dp: 8, sharding: half, measured: 1, unit: mfu, source: s}",
                       "cases[0].sharding: expected none, full or fsdp (got half)"),
                      ("{name: d, kind: decode_latency, group: end_to_end, hardware: a100-sxm4-80gb, workload: llama2-7b,"
                       " context: 128, measured: 1, unit: s, attention_kernel: flash1, source: s}",
                       "cases[0].attention_kernel: a key of training_mfu cases only"),
                      ("{name: t, kind: training_mfu, group: training_mfu, hardware: a100-sxm4-80gb, workload: llama2-7b,"
                       " batch: 1, seq: 512, attention_kernel: flash3, measured: 1, unit: mfu, source: s}",
                       "cases[0].attention_kernel: expected native, flash2 or flash1 (got flash3)"),
                      ("{name: t, kind: training_mfu, group: training_mfu, hardware: a100-sxm4-80gb, workload: llama2-7b,"
                       " batch: 1, seq: 512, optimizer: adam, measured: 1, unit: mfu, source: s}",
                       "cases[0].optimizer: expected fused or unfused (got adam)"),
                      ("{name: t, kind: training_mfu, group: training_mfu, hardware: a100-sxm4-80gb, workload: llama2-7b,"
                       " batch: 1, seq: 512, dp: 8, overlap_data: 1.5, measured: 1, unit: mfu, source: s}",
                       "cases[0].overlap_data"),
                      ("{name: d, kind: decode_latency, group: end_to_end, hardware: a100-sxm4-80gb, workload: llama2-7b,"
                       " context: 128, measured: 1, unit: s, optimizer: fused, source: s}",
                       "cases[0].optimizer: a key of training_mfu cases only"),
                      ("{name: t, kind: training_mfu, group: training_mfu, hardware: a100-sxm4-80gb, workload: llama2-7b,"
                       " batch: 1, seq: 512, loss_kernel: apex, measured: 1, unit: mfu, source: s}",
                       "cases[0].loss_kernel: expected softmax or fused (got apex)"),
                      ("{name: t, kind: training_mfu, group: training_mfu, hardware: a100-sxm4-80gb, workload: llama2-7b,"
                       " batch: 1, seq: 512, logit_metrics: 0, measured: 1, unit: mfu, source: s}",
                       "cases[0].logit_metrics"),
                      ("{name: d, kind: decode_latency, group: end_to_end, hardware: a100-sxm4-80gb, workload: llama2-7b,"
                       " context: 128, measured: 1, unit: s, logit_metrics: 2, source: s}",
                       "cases[0].logit_metrics: a key of training_mfu cases only"),
                      ("{name: d, kind: decode_latency, group: end_to_end, hardware: a100-sxm4-80gb, workload: llama2-7b,"
                       " context: 128, measured: 1, unit: s, max_positions: 4096, source: s}",
                       "cases[0].max_positions: a key of training_mfu cases only"),
                      ("{name: t, kind: training_mfu, group: training_mfu, hardware: a100-sxm4-80gb, workload: llama2-7b,"
                       " batch: 1, seq: 512, max_positions: 4096, measured: 1, unit: mfu, source: s}",
                       "cases[0].max_positions: a key of workloads with learned positions only (got llama2-7b)"),
                      ("{name: t, kind: training_mfu, group: training_mfu, hardware: a100-sxm4-80gb, workload: gpt3-175b,"
                       " batch: 1, seq: 512, max_positions: 0, measured: 1, unit: mfu, source: s}",
                       "cases[0].max_positions"),
                      ("{name: d, kind: decode_latency, group: end_to_end, hardware: a100-sxm4-80gb, workload: llama2-7b,"
                       " context: 128, measured: 1, unit: s, gradient_reduce_precision: fp32, source: s}",
                       "cases[0].gradient_reduce_precision: a key of training_mfu cases only"),
                      ("{name: t, kind: training_mfu, group: training_mfu, hardware: a100-sxm4-80gb, workload: llama2-7b,"
                       " batch: 1, seq: 512, dp: 2, gradient_reduce_precision: fp64, measured: 1, unit: mfu, source: s}",
                       'cases[0].gradient_reduce_precision: expected one of fp32, bf16, fp16, fp8, int8, int4 (did you mean \'fp32\'?) (got "fp64")'),
                      ("{name: t, kind: training_mfu, group: training_mfu, hardware: a100-sxm4-80gb, workload: llama2-7b,"
                       " batch: 1, seq: 512, dp: 2, gradient_reduce_precision: int32, measured: 1, unit: mfu, source: s}",
                       'cases[0].gradient_reduce_precision: expected one of fp32, bf16, fp16, fp8, int8, int4 (did you mean \'int8\'?) (got "int32")')):
        refused(tmp, case, msg, "bad training key")
    # Each model-driven kind's unit (a wrong one compared a latency with a rate: a decode_latency case
    # in tokens/s ran, -95%).
    for case, msg in (("{name: d, kind: decode_latency, group: end_to_end, hardware: h100-sxm5, workload: llama2-7b,"
                       " context: 100, measured: 1, unit: tokens/s, source: s}",
                       "cases[0].unit: expected s (the unit of decode_latency cases) (got tokens/s)"),
                      ("{name: o, kind: llm_offline, group: end_to_end, hardware: h100-sxm5, workload: llama2-7b,"
                       " measured: 1, unit: tokens/s/GPU, source: s}",
                       "cases[0].unit: expected tokens/s (the unit of llm_offline cases) (got tokens/s/GPU)"),
                      ("{name: o, kind: llm_offline, group: end_to_end, hardware: h100-sxm5, workload: llama2-7b,"
                       " per_chip: true, measured: 1, unit: tokens/s, source: s}",
                       "cases[0].unit: expected tokens/s/GPU (the unit of llm_offline cases with per_chip: true) (got tokens/s)"),
                      ("{name: v, kind: vision_offline, group: end_to_end, hardware: h100-sxm5, workload: resnet50,"
                       " measured: 1, unit: images/s, source: s}",
                       "cases[0].unit: expected samples/s (the unit of vision_offline cases) (got images/s)")):
        refused(tmp, case, msg, "bad unit")
# An llm_offline case the model cannot evaluate says why, by case name: it said "no batch of the case fits
# memory (at most 0 sequences)" for Llama-2-70B's 64 heads over TP 3, and "expected at least prompt + output
# tokens" at a static_kv_tokens key it did not have for a request past MPT-760M's 2,048-row position table.
# A precision the chip's matrix engine lacks is said in the constants: fp8 on an A100 runs bf16 kernels.
mpt760_file = os.path.abspath(os.path.join(os.path.dirname(__file__), "../../scenarios/validation/mpt-760m.yaml"))
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "suite.yaml")
    offline = "{name: o, kind: llm_offline, group: end_to_end, measured: 1000, unit: tokens/s, source: s, "
    for extra, msg in (("hardware: h100-sxm5, workload: llama2-70b, precision: fp8, tp: 3}",
                        "o: transformer 'llama2-70b': heads must be divisible by tensor_parallel"),
                       (f"hardware: h100-sxm5, workload: {mpt760_file}, prompt_tokens: 2000, output_tokens: 100}}",
                        "passes its learned position table (max_positions 2048)")):
        with open(path, "w") as f:
            f.write(f"measured_dir: {tmp}\ncases:\n  - {offline}{extra}\n")
        p = subprocess.run([dse, "validate", "--suite", path], capture_output=True, text=True, timeout=60)
        if p.returncode != 2 or msg not in p.stderr or "fits memory" in p.stderr or "static_kv_tokens" in p.stderr:
            sys.exit(f"validate infeasible llm_offline ({extra}): exit {p.returncode}, stderr {p.stderr!r}")
    with open(path, "w") as f:
        f.write(f"measured_dir: {tmp}\ncases:\n  - {offline}hardware: a100-sxm4-80gb, workload: llama2-7b, "
                "precision: fp8}\n  - {name: b, kind: llm_offline, group: end_to_end, measured: 1000, "
                "unit: tokens/s, source: s, hardware: a100-sxm4-80gb, workload: llama2-7b, precision: bf16}\n")
    cases = {c["name"]: c for c in json.loads(run("validate", "--suite", path, "--json"))["cases"]}
    if "fp8 kernels run as bf16" not in cases["o"]["constants"] or "kernels run as" in cases["b"]["constants"]:
        sys.exit(f"validate precision fallback not in the constants: {cases}")
    # A step whose modelled memory passes the chip's says so in its constants. By hand (as the serving
    # check below): Llama-2-7B's KV cache is 524,288 B per token, so a 200,000-token context holds 105 GB
    # beside 13.5 GB of weights, past the H100's 85.9 GB; a 100,000-token one, 66 GB, fits.
    with open(path, "w") as f:
        f.write(f"measured_dir: {tmp}\ncases:\n")
        for name, context in (("long", 200000), ("fits", 100000)):
            f.write(f"  - {{name: {name}, kind: decode_latency, group: end_to_end, hardware: h100-sxm5, workload: llama2-7b,"
                    f" context: {context}, measured: 1, unit: s, source: s}}\n")
    cases = {c["name"]: c for c in json.loads(run("validate", "--suite", path, "--json"))["cases"]}
    if (not re.search(r"modelled memory 1[01]\d\.?\d* GB of the chip's 85\.9\d* \(does not fit\)", cases["long"]["constants"])
            or "modelled memory" in cases["fits"]["constants"]):
        sys.exit(f"validate memory note: {cases}")
# kind: loopnest_network (research silicon): each layer at `dse map --objective latency`'s mapping (no time budget: the
# suite's mapper stops on its evaluation cap alone, so both give the same mapping on any machine), "2 x" counting it
# twice; frames/s = images / the summed latency, J/frame = the summed energy / images. Eyeriss AlexNet, batch 4: the
# suite's two cases against the five layers mapped one by one here.
alex = [(1, "conv2d N=4 C=3 H=227 W=227 K=96 R=11 S=11 stride=4"), (2, "conv2d N=4 C=48 H=31 W=31 K=128 R=5 S=5 stride=1"),
        (1, "conv2d N=4 C=256 H=15 W=15 K=384 R=3 S=3 stride=1"), (2, "conv2d N=4 C=192 H=15 W=15 K=192 R=3 S=3 stride=1"),
        (2, "conv2d N=4 C=192 H=15 W=15 K=128 R=3 S=3 stride=1")]
lat = energy = macs = 0.0
for n, op in alex:
    m = json.loads(run("map", "--hw", "eyeriss-like", "--op", op, "--objective", "latency", "--json", "--time-budget-ms", "0"))
    lat += n * m["latency_s"]
    energy += n * m["energy_j"]
    o = dict(kv.split("=") for kv in op.split()[1:])
    p_, q_ = (int(o["W"]) - int(o["S"])) // int(o["stride"]) + 1, (int(o["H"]) - int(o["R"])) // int(o["stride"]) + 1
    macs += n * int(o["N"]) * int(o["C"]) * int(o["K"]) * int(o["R"]) * int(o["S"]) * p_ * q_
if round(macs / 4 / 1e6, 1) != 665.8:  # the ISSCC abstract's "666 million MACs per 227x227 image"
    sys.exit(f"AlexNet conv MACs per frame {macs / 4}")
ey = {c["name"]: c for c in v["cases"] if c["name"].startswith("eyeriss-alexnet-conv-")}
for name, want in (("eyeriss-alexnet-conv-fps", 4 / lat), ("eyeriss-alexnet-conv-energy", energy / 4)):
    got = ey[name]["predicted"] if name in ey else None
    if got is None or abs(got - want) > 1e-4 * want or ey[name]["group"] != "research_silicon":
        sys.exit(f"validate {name}: {got}, want {want} from dse map")
# research_silicon_layers: one case per layer of the same two networks (JSSC 2017 Tables V and VI). The layers'
# times (images / frames/s) add up to their network's, measured (the tables' Total rows: 115.3 ms for AlexNet's
# batch of 4, 4309.5 ms for VGG-16's batch of 3, within 0.15 ms a layer: the tables' 0.1 ms and the cases' four
# digits) and predicted (the same mappings); their energies (J/frame) add up to the network's predicted energy.
for net, n_img, n_layers, total_s in (("alexnet", 4, 5, 0.1153), ("vgg16", 3, 13, 4.3095)):
    lay = [c for c in v["cases"] if c["group"] == "research_silicon_layers" and c["name"].startswith(f"eyeriss-{net}-conv")]
    fps = [c for c in lay if c["unit"] == "frames/s"]
    joules = [c for c in lay if c["unit"] == "J/frame"]
    whole = {c["unit"]: c for c in v["cases"] if c["name"].startswith(f"eyeriss-{net}-conv-")}
    if len(fps) != n_layers or len(joules) != n_layers or len(whole) != 2:
        sys.exit(f"research_silicon_layers {net}: {len(fps)} frames/s and {len(joules)} J/frame cases")
    meas_s = sum(n_img / c["measured"] for c in fps)
    pred_s = sum(n_img / c["predicted"] for c in fps)
    pred_j = sum(c["predicted"] for c in joules)
    if abs(meas_s - total_s) > 1.5e-4 * n_layers or abs(pred_s - n_img / whole["frames/s"]["predicted"]) > 1e-4 * pred_s \
            or abs(pred_j - whole["J/frame"]["predicted"]) > 1e-4 * pred_j:
        sys.exit(f"research_silicon_layers {net}: measured {meas_s} s against {total_s}, predicted {pred_s} s and {pred_j} J "
                 f"against the network's {whole}")
with tempfile.TemporaryDirectory() as tmp:
    for layers, unit, msg in (('["conv2d N=4 C=3 H=9 W=9 K=8 R=3 S=3", "2 x conv2d N=4 C=3 H=9 W=9 K=8 R=3 S=3 Z=2"]', "frames/s",
                               "cases[0].layers[1]: operator conv2d: unknown key 'Z'"),
                              ('["conv2d N=4 C=3 H=9 W=9 K=8 R=3 S=3"]', "fps",
                               "cases[0].unit: expected frames/s or J/frame (a loopnest_network case) (got fps)"),
                              ("[]", "frames/s", "cases[0].layers: expected a non-empty sequence"),
                              ('["0 x gemm M=8 N=8 K=8"]', "frames/s",
                               "cases[0].layers[0]: expected a count of 1 to 1000000 before ' x ' (got 0)"),
                              ('["99999999999999999999 x gemm M=8 N=8 K=8"]', "frames/s",
                               "cases[0].layers[0]: expected a count of 1 to 1000000 before ' x ' (got 99999999999999999999)")):
        refused(tmp, f"{{name: e, kind: loopnest_network, group: g, hardware: eyeriss-like, images: 4, layers: {layers},"
                     f" measured: 1, unit: {unit}, source: s}}", msg, "bad loopnest_network case")
    # A loopnest_network case takes its own keys only, and its keys belong to it alone.
    for case, msg in (("{name: e, kind: loopnest_network, group: g, hardware: eyeriss-like, images: 1, tp: 2,"
                       " layers: [gemm M=8 N=8 K=8], measured: 1, unit: frames/s, source: s}", "cases[0].tp: unknown key"),
                      ("{name: d, kind: decode_latency, group: g, hardware: h100-sxm5, workload: llama2-7b, context: 10,"
                       " images: 2, measured: 1, unit: s, source: s}",
                       "cases[0].images: a key of loopnest_network cases only (got decode_latency)")):
        refused(tmp, case, msg, "loopnest_network keys")
    # hardware: a loop-nest preset or file; a GPU-class preset or a missing name is refused at the key.
    for hw in ("h100-sxm5", "no-such-chip"):
        refused(tmp, f"{{name: e, kind: loopnest_network, group: g, hardware: {hw}, images: 1,"
                     " layers: [gemm M=8 N=8 K=8], measured: 1, unit: frames/s, source: s}",
                "cases[0].hardware: expected a loop-nest hardware", f"loopnest_network hardware {hw}")
# kind: llm_step_csv (forward steps written by scripts/measure_gpu.py): the named column is the
# measurement, decode context = tokens attended - new tokens, and the method's llm_steps fusion
# kinds drive the model. With all four kinds, a case must equal `dse eval --fusion aggressive`.
with tempfile.TemporaryDirectory() as tmp:
    with open(os.path.join(tmp, "steps.csv"), "w") as f:
        f.write("phase, batch, tokens, context, graph_device_ms, other_ms\n"
                "decode, 4, 1, 1025, 9.0, 1.0\nprefill, 1, 256, 256, 30.0, 3.0\n")
    def suite(column, fusions):
        path = os.path.join(tmp, "suite.yaml")
        with open(path, "w") as f:
            f.write(f"measured_dir: {tmp}\nmethod:\n  operators: {{launch: framework, fusion: none}}\n"
                    "  end_to_end: {launch: graph, fusion: aggressive}\n"
                    f"  llm_steps: {{launch: graph, fusions: [{fusions}]}}\n"
                    "  llm_offline: {prompt_tokens: 218, output_tokens: 294, batches: [1]}\n  vision_batch: 1\n"
                    "cases:\n  - {kind: llm_step_csv, group: steps, file: steps.csv, hardware: h200, workload: llama3-8b,"
                    f" precision: bf16, column: {column}, source: local}}\n")
        return path
    steps = json.loads(run("validate", "--json", "--suite",
                           suite("other_ms", "gemm_epilogue, norm_residual, flash_attention, conv_stage")))["cases"]
    if [c["measured"] for c in steps] != [1.0e-3, 3.0e-3]:
        sys.exit(f"llm_step_csv: measured {[c['measured'] for c in steps]}, expected the other_ms column")
    for c, args in zip(steps, (["--phase", "decode", "--batch", "4", "--context", "1024"],
                               ["--phase", "prefill", "--batch", "1", "--seq", "256"])):
        want = json.loads(run("eval", "--hardware", "h200", "--workload", "llama3-8b", "--fusion", "aggressive",
                              "--launch", "graph", "--no-serving", "--json", *args))["totals"]["latency_s"]
        if abs(c["predicted"] - want) > 1e-9 * want:
            sys.exit(f"llm_step_csv {c['name']}: predicted {c['predicted']} vs dse eval {want}")
    p = subprocess.run([dse, "validate", "--suite", suite("wall_ms", "flash_attention")], capture_output=True,
                       text=True, timeout=60)
    if p.returncode != 2 or "expected a device-ms column of" not in p.stderr:
        sys.exit(f"llm_step_csv bad column: exit {p.returncode}, stderr {p.stderr!r}")
    p = subprocess.run([dse, "validate", "--suite", suite("other_ms", "flash")], capture_output=True,
                       text=True, timeout=60)
    if p.returncode != 2 or "flash_attention or conv_stage" not in p.stderr:
        sys.exit(f"llm_step_csv bad fusion kind: exit {p.returncode}, stderr {p.stderr!r}")
    with open(os.path.join(tmp, "steps.csv"), "a") as f:
        f.write("decode, 4, 1, 0, 9.0, 1.0\n")  # a decode step that attends fewer tokens than it adds
    p = subprocess.run([dse, "validate", "--suite", suite("other_ms", "flash_attention")], capture_output=True,
                       text=True, timeout=60)
    if p.returncode != 2 or "steps.csv: row 4: expected batch >= 1" not in p.stderr:
        sys.exit(f"llm_step_csv bad row: exit {p.returncode}, stderr {p.stderr!r}")
# kind: attention_csv (FlashAttention benchmark shapes, scripts/measure_gpu.py --sections fa2 or the paper's
# TFLOP/s bars): the rows of the case's backend, measured from the named column (ms, or TFLOP/s over the
# benchmarks' FLOP count: forward 4 x seq^2 x head_dim x heads x batch, halved under the causal mask, x 2.5
# backward), the case's attention kernel in the model; bad keys refused at their place.
with tempfile.TemporaryDirectory() as tmp:
    with open(os.path.join(tmp, "fa.csv"), "w") as f:
        f.write("# a comment line\nbackend, pass, mask, head_dim, seq, batch, heads, device_ms, tflops\n"
                "flash, forward, none, 64, 512, 2, 4, 0.1, 50\nflash, backward, causal, 64, 512, 2, 4, 0.3, 50\n"
                "other, forward, none, 64, 512, 2, 4, 0.1, 50\n")
    def fa_suite(extra):
        path = os.path.join(tmp, "suite.yaml")
        with open(path, "w") as f:
            f.write(f"measured_dir: {tmp}\ncases:\n  - {{name: fa, kind: attention_csv, group: attention, file: fa.csv,"
                    f" hardware: h200{extra}, source: local}}\n")
        return path
    by_ms = json.loads(run("validate", "--json", "--suite", fa_suite(", backend: flash")))["cases"]
    by_tflops = json.loads(run("validate", "--json", "--suite", fa_suite(", backend: flash, column: tflops")))["cases"]
    native = json.loads(run("validate", "--json", "--suite",
                            fa_suite(", backend: flash, attention_kernel: native")))["cases"]
    if [c["name"] for c in by_ms] != ["fa fwd d64 s512", "fa bwd causal d64 s512"]:
        sys.exit(f"attention_csv names: {[c['name'] for c in by_ms]}")
    if [c["measured"] for c in by_ms] != [1.0e-4, 3.0e-4]:
        sys.exit(f"attention_csv device_ms: measured {[c['measured'] for c in by_ms]}")
    fwd_flops = 4.0 * 512 * 512 * 64 * 4 * 2  # 536,870,912
    for c, flops in zip(by_tflops, (fwd_flops, 2.5 * 0.5 * fwd_flops)):
        if abs(c["measured"] - flops / 50e12) > 1e-12 * flops:
            sys.exit(f"attention_csv tflops: {c['name']} measured {c['measured']}, want {flops / 50e12}")
    if [c["predicted"] for c in by_ms] != [c["predicted"] for c in by_tflops]:
        sys.exit("attention_csv: the measurement column changed the prediction")
    if "attention kernel flash2" not in by_ms[0]["constants"] or native[0]["predicted"] == by_ms[0]["predicted"]:
        sys.exit(f"attention_csv: flash2 by default, native when named ({by_ms[0]['constants']!r})")
    for extra, msg in (("", "cases[0].file: expected the case's backend: the file has a backend column"),
                       (", backend: cudnn", "cases[0].backend: expected a backend of"),
                       (", backend: flash, column: seq", "cases[0].column: expected a measurement column of"),
                       (", backend: flash, attention_kernel: flash3", "cases[0].attention_kernel: expected native, flash2")):
        p = subprocess.run([dse, "validate", "--suite", fa_suite(extra)], capture_output=True, text=True, timeout=60)
        if p.returncode != 2 or msg not in p.stderr:
            sys.exit(f"attention_csv {extra!r}: exit {p.returncode}, stderr {p.stderr!r}, want {msg!r}")
    refused(tmp, "{name: d, kind: decode_latency, group: g, hardware: h200, workload: llama2-7b, context: 128,"
                 " backend: flash, measured: 1, unit: s, source: s}",
            "cases[0].backend: a key of attention_csv cases only", "backend on decode_latency")
    with open(os.path.join(tmp, "fa.csv"), "a") as f:
        f.write("flash, sideways, none, 64, 512, 2, 4, 0.1, 50\n")
    p = subprocess.run([dse, "validate", "--suite", fa_suite(", backend: flash")], capture_output=True, text=True,
                       timeout=60)
    if p.returncode != 2 or "fa.csv: line 6: expected pass forward or backward" not in p.stderr:
        sys.exit(f"attention_csv bad row: exit {p.returncode}, stderr {p.stderr!r}")
# llm_offline at one static batch and its own lengths (case keys batch, prompt_tokens, output_tokens):
# per_chip gives TensorRT-LLM's out_tps = output x batch / total latency / tp (its XQA blog states the
# formula), where total latency = TTFT + (output - 1) x TPOT of `dse eval`'s serving sweep at that batch;
# without per_chip the same case is the whole TP group's rate (one replica: tp times the per-chip rate).
with tempfile.TemporaryDirectory() as tmp:
    def offline_suite(extra):
        path = os.path.join(tmp, "suite.yaml")
        unit = "tokens/s/GPU" if "per_chip: true" in extra else "tokens/s"  # the unit per_chip predicts in
        with open(path, "w") as f:
            f.write(f"measured_dir: {tmp}\nmethod:\n  operators: {{launch: framework, fusion: none}}\n"
                    "  end_to_end: {launch: graph, fusion: aggressive}\n"
                    "  llm_offline: {prompt_tokens: 218, output_tokens: 294, batches: [1, 2]}\n  vision_batch: 1\n"
                    "cases:\n  - {name: one, kind: llm_offline, group: e2e, hardware: h100-sxm5, workload: llama2-70b,"
                    f" precision: fp8, tp: 2, measured: 500, unit: {unit}, source: local{extra}}}\n")
        return path
    def out_tps(*extra, launch="graph"):  # TensorRT-LLM's out_tps at batch 64 from `dse eval`'s sweep (2048 + 512
        # tokens, TP 2)
        sweep = json.loads(run("eval", "--hardware", "h100-sxm5", "--workload", "llama2-70b", "--precision", "fp8",
                               "--tp", "2", "--fusion", "aggressive", "--launch", launch, "--prompt", "2048",
                               "--output", "512", "--json", *extra))["serving"]["sweep"]
        at64 = [x for x in sweep if x["batch"] == 64][0]
        return 512 * 64 / (at64["ttft_s"] + 511 * at64["tpot_s"]) / 2
    fixed = ", batch: 64, prompt_tokens: 2048, output_tokens: 512"
    per_chip = json.loads(run("validate", "--json", "--suite", offline_suite(fixed + ", per_chip: true")))["cases"][0]
    group = json.loads(run("validate", "--json", "--suite", offline_suite(fixed)))["cases"][0]
    want = out_tps()
    if abs(per_chip["predicted"] - want) > 1e-9 * want:
        sys.exit(f"llm_offline per_chip: predicted {per_chip['predicted']} vs out_tps {want} from dse eval")
    if abs(group["predicted"] - 2 * want) > 1e-9 * want:
        sys.exit(f"llm_offline without per_chip: predicted {group['predicted']} vs 2 x {want}")
    if "static batch 64" not in per_chip["constants"] or "2048 + 512 tokens" not in per_chip["constants"]:
        sys.exit(f"llm_offline static batch: constants {per_chip['constants']!r}")
    # launch: framework (vLLM's --enforce-eager) = `dse eval --launch framework`: the same formula over that
    # sweep, slower than the method's graph launch.
    eager = json.loads(run("validate", "--json", "--suite",
                           offline_suite(fixed + ", per_chip: true, launch: framework")))["cases"][0]
    want_eager = out_tps(launch="framework")
    if abs(eager["predicted"] - want_eager) > 1e-9 * want_eager or not want_eager < want:
        sys.exit(f"llm_offline launch framework: {eager['predicted']} vs {want_eager} (graph: {want})")
    if "launch framework" not in eager["constants"]:
        sys.exit(f"llm_offline launch framework: constants {eager['constants']!r}")
    # stack: vllm-0.5 (4 ms a step + 0.1 ms a sequence, scenarios/stacks/vllm-0.5.yaml) = `dse eval --stack
    # vllm-0.5`: the same formula over that sweep; at batch 64 each decode step pays 4 + 6.4 = 10.4 ms more, so
    # the rate falls to 512 x 64 / (T + 512 x 10.4 ms) / 2 of the stackless total T = 512 x 64 / (2 want).
    staged = json.loads(run("validate", "--json", "--suite",
                            offline_suite(fixed + ", per_chip: true, stack: vllm-0.5")))["cases"][0]
    want_stack = out_tps("--stack", "vllm-0.5")
    by_hand = 512 * 64 / (512 * 64 / (2 * want) + 512 * 10.4e-3) / 2
    if abs(staged["predicted"] - want_stack) > 1e-9 * want_stack or abs(want_stack - by_hand) > 1e-6 * by_hand:
        sys.exit(f"llm_offline stack vllm-0.5: {staged['predicted']} vs dse eval {want_stack}, by hand {by_hand}")
    if "stack vllm-0.5 (4 ms + 0.1 ms per sequence each iteration)" not in staged["constants"]:
        sys.exit(f"llm_offline stack: constants {staged['constants']!r}")
    # A serving case's launch: a ttft_latency case at launch framework is `dse eval --launch framework`'s
    # first-token latency of one request (the sweep's batch 1) of the same prompt, longer than at graph launch.
    def ttft_suite(extra):
        path = os.path.join(tmp, "serving.yaml")
        with open(path, "w") as f:
            f.write(f"measured_dir: {tmp}\nmethod:\n  operators: {{launch: framework, fusion: none}}\n"
                    "  end_to_end: {launch: graph, fusion: aggressive}\n"
                    "  llm_offline: {prompt_tokens: 218, output_tokens: 294, batches: [1, 2]}\n  vision_batch: 1\n"
                    "cases:\n  - {name: t, kind: ttft_latency, group: serving, hardware: h100-sxm5, workload: llama2-7b,"
                    f" precision: fp16, prompt_tokens: 512, measured: 0.05, unit: s, source: local{extra}}}\n")
        return path
    def eval_ttft(launch):
        sweep = json.loads(run("eval", "--hardware", "h100-sxm5", "--workload", "llama2-7b", "--precision", "fp16",
                               "--fusion", "aggressive", "--launch", launch, "--prompt", "512", "--output", "1",
                               "--json"))["serving"]["sweep"]
        return [x for x in sweep if x["batch"] == 1][0]["ttft_s"]
    for launch in ("graph", "framework"):
        extra = "" if launch == "graph" else ", launch: framework"
        got = json.loads(run("validate", "--json", "--suite", ttft_suite(extra)))["cases"][0]
        if abs(got["predicted"] - eval_ttft(launch)) > 1e-9 * eval_ttft(launch) or f"launch {launch}" not in got["constants"]:
            sys.exit(f"ttft_latency launch {launch}: {got['predicted']} vs {eval_ttft(launch)}, {got['constants']!r}")
    if not eval_ttft("framework") > eval_ttft("graph"):
        sys.exit("ttft_latency: framework launch not slower than graph launch")
    p = subprocess.run([dse, "validate", "--suite", ttft_suite(", launch: eager")], capture_output=True, text=True,
                       timeout=60)
    if p.returncode != 2 or "cases[0].launch: expected framework or graph (got eager)" not in p.stderr:
        sys.exit(f"ttft_latency launch eager: exit {p.returncode}, stderr {p.stderr!r}")
    # decode_attention: per_query_head = `dse eval --decode-attention per_query_head` (the KV cache streamed
    # once per query head): the same out_tps formula over that sweep, and slower than the shared read.
    slow = json.loads(run("validate", "--json", "--suite",
                          offline_suite(fixed + ", per_chip: true, decode_attention: per_query_head")))["cases"][0]
    want_slow = out_tps("--decode-attention", "per_query_head")
    if abs(slow["predicted"] - want_slow) > 1e-9 * want_slow or not want_slow < want:
        sys.exit(f"decode_attention per_query_head: {slow['predicted']} vs {want_slow} (shared read: {want})")
    for extra, message in ((", batch: 64, max_batch: 128", "not both"), (", batch: 100000", "fits memory"),
                           (", decode_attention: per_token", "expected per_kv_head or per_query_head")):
        p = subprocess.run([dse, "validate", "--suite", offline_suite(extra)], capture_output=True, text=True, timeout=60)
        if p.returncode != 2 or message not in p.stderr:
            sys.exit(f"llm_offline {extra!r}: exit {p.returncode}, stderr {p.stderr!r}")
    path = offline_suite("").replace("suite.yaml", "decode.yaml")
    with open(path, "w") as f:
        f.write(open(offline_suite("")).read().replace("kind: llm_offline", "kind: decode_latency, context: 100")
                .replace("source: local", "source: local, per_chip: true"))
    p = subprocess.run([dse, "validate", "--suite", path], capture_output=True, text=True, timeout=60)
    if p.returncode != 2 or "a key of llm_offline cases only" not in p.stderr:
        sys.exit(f"per_chip on decode_latency: exit {p.returncode}, stderr {p.stderr!r}")
# The power group (kind power): a GEMM case is `dse eval`'s accelerator power of the same GEMM on the same preset;
# the H200 MaxQ box's wall under Llama-2-70B offline, with every GPU at its 500 W cap in both the prefill and the
# decode steps (the case's constants say their clocks are below nominal), is by hand (8 x 500 + 1,780 host parts +
# 288 W of fans) / 0.95 (scenarios/systems/hgx-h200-8-maxq.yaml) = 6,387.4 W.
power = {c["name"]: c for c in v["cases"] if c["group"] == "power"}
with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as f:
    f.write("name: probe\nblocks:\n  - name: b\n    ops:\n      - {name: g, kind: gemm, m: 4096, n: 4864, k: 32896}\n")
    probe = f.name
ev = json.loads(run("eval", "--hardware", "mi300x", "--workload", probe, "--precision", "bf16", "--phase", "prefill",
                    "--batch", "1", "--seq", "1", "--no-serving", "--json"))
os.unlink(probe)
got = power["mi300x-power-gemm-bf16"]["predicted"]
if abs(got - ev["accelerator_power_w"]) > 1e-9 * got:
    sys.exit(f"power case mi300x-power-gemm-bf16 {got} W, dse eval {ev['accelerator_power_w']} W")
maxq = power["mlperf41-h200-maxq-llama2-70b-offline-wall"]
clocks = re.findall(r"at ([0-9.]+)% clock", maxq["constants"])
if len(clocks) != 2 or not all(float(c) < 100 for c in clocks) or abs(maxq["predicted"] - 6068 / 0.95) > 1e-6 * 6068:
    sys.exit(f"MaxQ wall: {maxq['predicted']} W, clocks {clocks}, want {6068 / 0.95:.1f} W with both steps capped")
with tempfile.TemporaryDirectory() as tmp:
    gemm = "ops: [{name: g, kind: gemm, m: 64, n: 64, k: 64}]"
    for case, msg in ((f"{{name: p, kind: power, group: power, hardware: h200, precision: bf16, {gemm}, measured: 1, "
                       "unit: s, source: s}", "cases[0].unit: expected W (the unit of power cases) (got s)"),
                      (f"{{name: p, kind: power, group: power, hardware: h200, precision: bf16, {gemm}, at: wall, "
                       "measured: 1, unit: W, source: s}", "cases[0].at: a system case (the wall needs a host)"),
                      (f"{{name: p, kind: power, group: power, hardware: h200, precision: bf16, {gemm}, at: socket, "
                       "measured: 1, unit: W, source: s}", "cases[0].at: expected accelerators or wall (got socket)"),
                      (f"{{name: p, kind: power, group: power, hardware: h200, precision: bf16, {gemm}, "
                       "workload: llama3-8b, measured: 1, unit: W, source: s}", "either ops (operators) or workload"),
                      ("{name: p, kind: power, group: power, hardware: h200, precision: bf16, workload: llama3-8b, "
                       "measured: 1, unit: W, source: s}", "a system case (an offline run)"),
                      ("{name: d, kind: decode_latency, group: end_to_end, hardware: a100-sxm4-80gb, workload: llama2-7b,"
                       f" context: 128, measured: 1, unit: s, {gemm}, source: s}}", "cases[0].ops: a key of power cases only")):
        refused(tmp, case, msg, "power case")
# Print the figures (no assertion on their size: see the issue's targets in the report).
for g, s in v["groups"].items():
    print(f"{g}: n={s['n']} mean|err|={100*s['mean_abs_error']:.1f}% median={100*s['median_abs_error']:.1f}% "
          f"max={100*s['max_abs_error']:.1f}%")
print("ok")
