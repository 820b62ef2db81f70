#!/usr/bin/python3
"""ctest cli_platform_json: `dse eval ... --json` and `dse presets` keys and invariants, preset names
and option refusals (check_validate_cli.py checks `dse validate`).

usage: check_platform_cli.py DSE_EXECUTABLE
"""
import json
import re
import os
import subprocess
import sys
import tempfile

from cli_check import dse, need, run


# One decode step of Llama-2-70B on a DGX H100 with serving, rate and SLA.
e = json.loads(run("eval", "--system", "dgx-h100-8", "--workload", "llama2-70b", "--tp", "8", "--phase", "decode",
                   "--batch", "16", "--context", "1024", "--precision", "fp8", "--fusion", "aggressive",
                   "--rate", "2", "--sla-p99-ms", "2000", "--json"))
need(e, ["totals", "layers", "serving", "power_w", "energy_per_token_j", "perf_per_w", "risk"], "eval")
need(e["totals"], ["latency_s", "flops", "mfu", "energy_j", "tokens_per_s", "memory_bytes"], "eval.totals")
need(e["risk"], ["score", "items"], "eval.risk")
need(e["serving"], ["sweep", "at_rate", "max_rate_at_sla"], "eval.serving")
need(e["serving"]["at_rate"], ["p50_s", "p95_s", "p99_s"], "eval.serving.at_rate")
for layer in e["layers"]:
    need(layer, ["name", "type", "repeat", "latency_s", "flops", "dram_bytes", "bottleneck", "stall_fraction",
                 "pct_of_peak", "mapping"], "eval.layers[]")
# totals.flops is the sum of per-occurrence layer FLOPs times repeats
s = sum(l["flops"] * l["repeat"] for l in e["layers"])
if abs(s - e["totals"]["flops"]) > 1e-9 * max(1.0, s):
    sys.exit(f"totals.flops {e['totals']['flops']} != sum of layers {s}")
if not any(l["type"] == "fused_attention" for l in e["layers"]):
    sys.exit("aggressive fusion produced no fused_attention layer")
# The accelerators stay within 8 x 700 W; the wall (accelerators, host, fans, supply losses) within the DGX H100's
# published maximum, 10.2 kW (scenarios/systems/dgx-h100-8.yaml max_wall_w), and above the accelerators alone.
if e["accelerator_power_w"] > 8 * 700 * (1 + 1e-9):
    sys.exit(f"accelerator power {e['accelerator_power_w']} W above 8 x 700 W")
if not e["accelerator_power_w"] < e["power_w"] <= 10200 * (1 + 1e-9):
    sys.exit(f"wall power {e['power_w']} W not between the accelerators' {e['accelerator_power_w']} W and 10.2 kW")

# Single chip, no system, ResNet-50 prefill: no serving, keys still there.
r = json.loads(run("eval", "--hardware", "a100-sxm4-80gb", "--workload", "resnet50", "--phase", "prefill",
                   "--batch", "32", "--seq", "1", "--json"))
need(r["totals"], ["latency_s", "flops", "mfu", "energy_j", "memory_bytes"], "eval resnet.totals")

# A static-shape serving stack (--static-kv-tokens, --prompt-bucket-tokens): TTFT is the
# prefill of the padded prompt, round_up(218 + 1, 64) = 256 tokens (by hand), and TPOT the
# decode step over the whole 2048-position cache, each evaluated here on its own.
st = json.loads(run("eval", "--hardware", "h100-sxm5", "--workload", "llama3-8b", "--prompt", "218", "--output", "16",
                    "--static-kv-tokens", "2048", "--prompt-bucket-tokens", "64", "--json"))
one = st["serving"]["sweep"][0]
pre = json.loads(run("eval", "--hardware", "h100-sxm5", "--workload", "llama3-8b", "--phase", "prefill", "--batch",
                     str(one["batch"]), "--seq", "256", "--no-serving", "--json"))["totals"]["latency_s"]
dec = json.loads(run("eval", "--hardware", "h100-sxm5", "--workload", "llama3-8b", "--phase", "decode", "--batch",
                     str(one["batch"]), "--context", "2048", "--no-serving", "--json"))["totals"]["latency_s"]
if abs(one["ttft_s"] - pre) > 1e-9 * pre or abs(one["tpot_s"] - dec) > 1e-9 * dec:
    sys.exit(f"static shapes: TTFT {one['ttft_s']} vs prefill(256) {pre}, TPOT {one['tpot_s']} vs decode(2048) {dec}")
p = subprocess.run([dse, "eval", "--hardware", "h100-sxm5", "--workload", "llama3-8b", "--prompt", "218", "--output",
                    "16", "--static-kv-tokens", "200"], capture_output=True, text=True, timeout=60)
if p.returncode != 2 or "--static-kv-tokens 200 is below --prompt + --output (234)" not in p.stderr:
    sys.exit(f"--static-kv-tokens 200: exit {p.returncode}, stderr {p.stderr!r}")

# A preset name that is neither a preset nor a file names the presets it may have meant (a family
# prefix before the nearest by edit distance: "h100" is one edit from "h200"), at the key that gave it
# in a suite or scenario file; it said "h100:1:1: hardware file: expected a readable file (got "No such
# file or directory")".
# On the command line the option is named.
for args, msg in ((["--hardware", "h100"], "--hardware: expected a preset of hardware ('dse presets') or a readable "
                   "file, did you mean 'h100-sxm5'? (got 'h100')"),
                  (["--hardware", "a100"], "did you mean 'a100-sxm4-40gb', 'a100-sxm4-80gb'?"),
                  (["--hardware", "h201"], "did you mean 'h200'?"),
                  (["--system", "dgx-h100"], "--system: expected a preset of systems ('dse presets') or a readable "
                   "file, did you mean 'dgx-h100-8'? (got 'dgx-h100')"),
                  (["--hardware", "h100-sxm5", "--workload", "llama2-7"], "--workload: expected a workload preset or "
                   "file, did you mean 'llama2-7b'? (got 'llama2-7')")):
    if "--workload" not in args:
        args = [*args, "--workload", "llama2-7b"]
    p = subprocess.run([dse, "eval", *args], capture_output=True, text=True, timeout=60)
    if p.returncode != 2 or msg not in p.stderr:
        sys.exit(f"eval {' '.join(args)}: exit {p.returncode}, stderr {p.stderr!r}, want {msg!r}")
# dse map --hw: the loop-nest presets (hardware/research, then hardware).
for hw, msg in (("eyeriss-lik", "--hw: expected a preset of hardware/research or hardware ('dse presets') or a readable file, "
                 "did you mean 'eyeriss-like'? (got 'eyeriss-lik')"),
                ("gpu-4leve", "did you mean 'gpu-4level'? (got 'gpu-4leve')")):
    p = subprocess.run([dse, "map", "--hw", hw, "--op", "gemm M=4 N=4 K=4"], capture_output=True, text=True, timeout=60)
    if p.returncode != 2 or msg not in p.stderr:
        sys.exit(f"map --hw {hw}: exit {p.returncode}, stderr {p.stderr!r}, want {msg!r}")
with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "suite.yaml")
    for where, msg in (("hardware: h100", "cases[0].hardware: expected a preset of hardware ('dse presets') or a "
                        "readable file, did you mean 'h100-sxm5'? (got \"h100\")"),
                       ("system: dgx-h100", "cases[0].system: expected a preset of systems ('dse presets') or a "
                        "readable file, did you mean 'dgx-h100-8'? (got \"dgx-h100\")"),
                       ("hardware: h100-sxm5, workload: llama2-7", "cases[0].workload: expected a workload preset or "
                        "file, did you mean 'llama2-7b'? (got \"llama2-7\")")):
        workload = "" if "workload" in where else ", workload: llama2-7b"
        with open(path, "w") as f:
            f.write(f"measured_dir: {tmp}\ncases:\n  - {{name: d, kind: decode_latency, group: end_to_end, {where}"
                    f"{workload}, context: 128, measured: 1, unit: s, source: s}}\n")
        p = subprocess.run([dse, "validate", "--suite", path], capture_output=True, text=True, timeout=60)
        if p.returncode != 2 or msg not in p.stderr or "suite.yaml:3:" not in p.stderr:
            sys.exit(f"validate {where}: exit {p.returncode}, stderr {p.stderr!r}, want {msg!r}")
    # A system file's chip, at the file's chip key.
    sys_path = os.path.join(tmp, "sys.yaml")
    with open(os.path.join(os.path.dirname(__file__), "../../scenarios/systems/dgx-h100-8.yaml")) as f:
        text = f.read()
    with open(sys_path, "w") as f:
        f.write(re.sub(r"(?m)^chip: .*$", "chip: h100", text, count=1))
    p = subprocess.run([dse, "eval", "--system", sys_path, "--workload", "llama2-7b"], capture_output=True, text=True,
                       timeout=60)
    line = text[:re.search(r"(?m)^chip: ", text).start()].count("\n") + 1
    if p.returncode != 2 or f"{sys_path}:{line}:7: chip: expected a preset of hardware" not in p.stderr:
        sys.exit(f"system file chip h100: exit {p.returncode}, stderr {p.stderr!r}")
p = subprocess.run([dse, "eval", "--hardware", "h100-sxm5", "--workload", "llama2-70b", "--decode-attention", "x"],
                   capture_output=True, text=True, timeout=60)
if p.returncode != 2 or "--decode-attention: expected per_kv_head or per_query_head" not in p.stderr:
    sys.exit(f"eval --decode-attention x: exit {p.returncode}, stderr {p.stderr!r}")
p = subprocess.run([dse, "eval", "--hardware", "h100-sxm5", "--workload", "llama2-70b", "--attention-kernel", "x"],
                   capture_output=True, text=True, timeout=60)
if p.returncode != 2 or "--attention-kernel: expected native, flash2 or flash1 (got x)" not in p.stderr:
    sys.exit(f"eval --attention-kernel x: exit {p.returncode}, stderr {p.stderr!r}")
p = subprocess.run([dse, "eval", "--hardware", "h100-sxm5", "--workload", "llama2-7b", "--phase", "train", "--optimizer",
                    "adam"], capture_output=True, text=True, timeout=60)
if p.returncode != 2 or "--optimizer: expected fused or unfused (got adam)" not in p.stderr:
    sys.exit(f"eval --optimizer adam: exit {p.returncode}, stderr {p.stderr!r}")
for extra, message in ((["--phase", "train", "--loss-kernel", "apex"], "--loss-kernel: expected softmax or fused (got apex)"),
                       (["--phase", "train", "--logit-metrics", "-1"], "--logit-metrics must be >= 0"),
                       (["--logit-metrics", "2"], "--logit-metrics and --gradient-reduce-precision apply to --phase train"),
                       (["--phase", "train", "--gradient-reduce-precision", "fp64"],
                        "--gradient-reduce-precision: expected fp32, bf16, fp16, fp8, int8 or int4 (got fp64)"),
                       (["--phase", "train", "--gradient-reduce-precision", "int32"],
                        "--gradient-reduce-precision: expected fp32, bf16, fp16, fp8, int8 or int4 (got int32)"),
                       (["--phase", "prefill", "--loss-kernel", "fused"], "apply to --phase train"),
                       # Options where they would have no effect are refused, not ignored: the optimizer
                       # on inference (even its default, given), the serving sweep's options where no sweep
                       # runs, the decode kernel on a training step.
                       (["--phase", "prefill", "--optimizer", "fused"], "--overlap-data, --optimizer, --loss-kernel"),
                       (["--phase", "train", "--rate", "2", "--prompt", "100"],
                        "--prompt, --rate: serving options (decoder inference); --phase train runs no serving sweep"),
                       (["--no-serving", "--sla-p99-ms", "100"], "--sla-p99-ms: serving options; --no-serving skips"),
                       (["--workload", "bert-large", "--phase", "prefill", "--output", "8"],
                        "--output: serving options; the serving sweep is for decoder workloads and bert-large is not one"),
                       (["--phase", "train", "--decode-attention", "per_kv_head"],
                        "--decode-attention applies to decode steps"),
                       # A length out of range is refused, not replaced by the default (was: --seq -5
                       # ran at 1 token, --context -3 at 1,024); a cache context on prefill is refused.
                       (["--seq", "-5"], "--seq must be >= 1 (got -5)"),
                       (["--context", "-3"], "--context must be >= 0 (got -3)"),
                       (["--phase", "prefill", "--context", "100"], "--context applies to --phase decode"),
                       # The serving sweep's figures out of range (they ran: no sweep, or a simulation
                       # at a negative rate printing zeros).
                       (["--prompt", "0"], "--prompt: expected a number of tokens from 1 to 1073741824 or a range "
                                           "LOW-HIGH (got 0)"),
                       (["--output", "9-3"], "--output: expected a range LOW-HIGH of tokens, 1 <= LOW <= HIGH"),
                       (["--rate", "-2"], "--rate must be a finite number > 0 requests/s (got -2)"),
                       (["--sla-p99-ms", "0"], "--sla-p99-ms must be a finite number > 0 (got 0)"),
                       # Infinite ones too (an infinite SLA printed a max rate of 1.15e19 requests/s).
                       (["--rate", "inf"], "--rate must be a finite number > 0 requests/s (got inf)"),
                       (["--sla-p99-ms", "inf"], "--sla-p99-ms must be a finite number > 0 (got inf)"),
                       # A request past int's range (prompt + output overflowed: the sweep vanished).
                       (["--prompt", "1073741824", "--output", "1073741824"],
                        "prompt + output tokens (2147483648) exceed 2147483647"),
                       # Expert parallelism on a dense model (it ran as if --ep were 1).
                       (["--tp", "2", "--ep", "2"], "--ep applies to mixture-of-experts transformers"),
                       # Options whose parallelism is absent, or whose kernel does not run (each ran with
                       # the same result as without it).
                       (["--phase", "train", "--sharding", "full"], "act on data parallelism; give --dp > 1"),
                       (["--phase", "train", "--overlap-data", "0.5"], "act on data parallelism; give --dp > 1"),
                       (["--phase", "train", "--gradient-reduce-precision", "fp32"], "act on data parallelism"),
                       (["--phase", "train", "--sequence-parallel"], "act on tensor parallelism; give --tp > 1"),
                       (["--vocab", "replicated"], "act on tensor parallelism; give --tp > 1"),
                       (["--fusion", "aggressive", "--fusions", "norm_residual"], "give --fusion or --fusions, not both"),
                       (["--phase", "decode", "--decode-attention", "per_query_head"],
                        "describe the fused attention kernel"),
                       (["--fusions", "norm_residual", "--attention-kernel", "flash1"], "describe the fused attention kernel"),
                       (["--workload", "resnet50", "--phase", "prefill", "--fusion", "aggressive", "--decode-attention",
                         "per_query_head"], "describe the fused attention kernel"),
                       (["--phase", "prefill", "--fusion", "aggressive", "--no-serving", "--decode-attention",
                         "per_query_head"], "--decode-attention applies to decode steps: --phase decode, or the serving")):
    workload = [] if "--workload" in extra else ["--workload", "llama2-7b"]
    p = subprocess.run([dse, "eval", "--hardware", "h100-sxm5", *workload, *extra],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 2 or message not in p.stderr:
        sys.exit(f"eval {' '.join(extra)}: exit {p.returncode}, stderr {p.stderr!r}")
# The serving sweep says which batches fit in memory. By hand: Llama-2-7B's KV cache is 2 (K, V) x 32
# layers x 4,096 x 2 B = 524,288 B per token, so one sequence of 100,000 + 100 tokens holds 52.5 GB beside
# 13.5 GB of weights (66 GB, within the H100's 85.9 GB) and two hold 118 GB: batch 1 fits, batch 2 does not.
# At 200,000 + 100 tokens one sequence is 105 GB: none fits, and the text says so.
long_ctx = ["eval", "--hardware", "h100-sxm5", "--workload", "llama2-7b", "--phase", "decode", "--output", "100"]
serving = json.loads(run(*long_ctx, "--prompt", "100000", "--json"))["serving"]
fits = {x["batch"]: x["fits_memory"] for x in serving["sweep"]}
if serving["max_batch_fitting"] != 1 or not fits[1] or any(fits[b] for b in fits if b > 1):
    sys.exit(f"serving fits_memory at 100,100 tokens: {fits}, max_batch_fitting {serving['max_batch_fitting']}")
text = run(*long_ctx, "--prompt", "100000")
if "fits memory)" not in text or not re.search(r"^\s+1\s.*\byes$", text, re.M) or not re.search(r"^\s+2\s.*\bno$", text, re.M):
    sys.exit(f"serving sweep text without the fits column:\n{text}")
if "no batch fits in memory" not in run(*long_ctx, "--prompt", "200000"):
    sys.exit("serving sweep at 200,100 tokens: no 'no batch fits in memory' line")
# A serving sweep that cannot run says why (it vanished before): MPT-760M's learned position table has
# 2,048 rows (scenarios/validation/mpt-760m.yaml) and a 2,000 + 100-token request needs 2,100. A step past
# the table is infeasible, with the same reason.
mpt760 = ["eval", "--hardware", "h100-sxm5", "--workload",
          os.path.join(os.path.dirname(__file__), "../../scenarios/validation/mpt-760m.yaml")]
table_msg = "context + seq (2100 tokens) passes its learned position table (max_positions 2048)"
serving = json.loads(run(*mpt760, "--phase", "decode", "--context", "100", "--prompt", "2000", "--output", "100",
                         "--json"))["serving"]
if serving["evaluated"] or table_msg not in serving["reason"]:
    sys.exit(f"serving past the position table: {serving}")
if "serving sweep not run: batch 1, 2100 tokens" not in run(*mpt760, "--phase", "decode", "--context", "100",
                                                            "--prompt", "2000", "--output", "100"):
    sys.exit("serving past the position table: no 'serving sweep not run' line")
p = subprocess.run([dse, *mpt760, "--phase", "prefill", "--seq", "2100", "--no-serving", "--json"],
                   capture_output=True, text=True, timeout=60)
step = json.loads(p.stdout)  # an infeasible result is printed, and the exit code is 1
if p.returncode != 1 or step["feasible"] or table_msg not in step["reason"]:
    sys.exit(f"prefill past the position table: exit {p.returncode}, feasible {step['feasible']}, "
             f"reason {step['reason']!r}")
# A precision the platform's matrix engine lacks is named (the A100 preset has no fp8: its kernels run bf16).
a100_fp8 = ["eval", "--hardware", "a100-sxm4-80gb", "--workload", "llama2-7b", "--precision", "fp8", "--no-serving"]
if json.loads(run(*a100_fp8, "--json"))["kernel_precision"] != "bf16" or \
        "precision: fp8 is not a precision of this platform's matrix engine: the kernels run bf16" not in run(*a100_fp8):
    sys.exit("eval fp8 on the A100: the bf16 kernels are not named")
if json.loads(run("eval", "--hardware", "h100-sxm5", "--workload", "llama2-7b", "--precision", "fp8", "--no-serving",
                  "--json"))["kernel_precision"] != "":
    sys.exit("eval fp8 on the H100: kernel_precision is not empty")
# `dse eval --fusions` names the kinds: all four = --fusion aggressive, "" = --fusion none; an
# unknown kind is refused.
def eval_s(*extra):
    return json.loads(run("eval", "--hardware", "h200", "--workload", "llama3-8b", "--batch", "8", "--no-serving",
                          "--json", *extra))["totals"]["latency_s"]
for kinds, strategy in (("gemm_epilogue,norm_residual,flash_attention,conv_stage", "aggressive"), ("", "none")):
    if eval_s("--fusions", kinds) != eval_s("--fusion", strategy):
        sys.exit(f"--fusions {kinds!r} differs from --fusion {strategy}")
if not eval_s("--fusion", "none") > eval_s("--fusions", "flash_attention") > eval_s("--fusion", "aggressive"):
    sys.exit("--fusions flash_attention is not between --fusion none and aggressive")
p = subprocess.run([dse, "eval", "--hardware", "h200", "--workload", "llama3-8b", "--fusions", "flash"],
                   capture_output=True, text=True, timeout=60)
if p.returncode != 2 or "--fusions: expected gemm_epilogue" not in p.stderr:
    sys.exit(f"--fusions flash: exit {p.returncode}, stderr {p.stderr!r}")
# A system file's achievable_fraction must lie in (0, 1]: 0 and 1.5 are refused with the place
# and exit code 2; 0.5 is read, and halving the sustained link bandwidth slows the TP all-reduces
# of a prefill step (bandwidth-bound at 8 x 2048 tokens).
def system_file(tmp, frac):
    path = os.path.join(tmp, f"sys_{frac}.yaml")
    with open(path, "w") as f:
        f.write("kind: system\nname: t\nchip: h100-sxm5\nchips: 8\n"
                "interconnect: {topology: switch, link_bandwidth_bytes_per_s: 2.5e10, link_latency_s: 1.0e-6,"
                f" links: 18, achievable_fraction: {frac}}}\n")
    return path
def allreduce_s(path):
    e = json.loads(run("eval", "--system", path, "--workload", "llama2-70b", "--tp", "8", "--phase", "prefill",
                       "--batch", "8", "--seq", "2048", "--no-serving", "--json"))
    return sum(l["latency_s"] * l.get("repeat", 1) for l in e["layers"] if l["type"] == "all_reduce")
with tempfile.TemporaryDirectory() as tmp:
    for bad in ("0", "1.5"):
        p = subprocess.run([dse, "eval", "--system", system_file(tmp, bad), "--workload", "llama2-70b", "--tp", "8",
                            "--no-serving"], capture_output=True, text=True, timeout=60)
        want = "expected a number > 0 (got 0)" if bad == "0" else 'expected a number in (0, 1] (got "1.5")'
        if p.returncode != 2 or "interconnect.achievable_fraction: " + want not in p.stderr:
            sys.exit(f"achievable_fraction {bad}: exit {p.returncode}, stderr {p.stderr!r}")
    full, half = allreduce_s(system_file(tmp, "1.0")), allreduce_s(system_file(tmp, "0.5"))
    if not (half > 1.5 * full):
        sys.exit(f"achievable_fraction 0.5: all-reduce time {half} s against {full} s at 1.0")
# A scale_out level (interconnect.scale_out) is read from a system file and refused where it cannot hold:
# a chips_per_node that does not divide chips, torus nodes whose dims (one node) do not hold chips_per_node
# chips, ring nodes (a ring file has no dims of one node), or a key it lacks (nodes is not one: chips /
# chips_per_node).
with tempfile.TemporaryDirectory() as tmp:
    for topo, dims, per_node, extra, msg in (
            ("ring", "", 8, "", "interconnect.topology: expected switch, torus_2d or torus_3d (the nodes of a"
                                " scale_out system) (got ring)"),
            ("torus_2d", ", dims: [4, 4]", 8, "", "interconnect.scale_out.chips_per_node: expected the product of dims"
                                                  " (one node's torus_2d) = 16 (got 8)"),
            ("switch", "", 3, "", "interconnect.scale_out.chips_per_node: expected a divisor of chips = 16 (got 3)"),
            ("switch", "", 8, ", nodes: 2", "interconnect.scale_out"),
            ("switch", "", 8, "", None),
            ("torus_2d", ", dims: [4, 2]", 8, "", None)):
        path = os.path.join(tmp, f"so_{topo}_{per_node}.yaml")
        with open(path, "w") as f:
            f.write("kind: system\nname: t\nchip: a100-sxm4-80gb\nchips: 16\n"
                    f"interconnect: {{topology: {topo}{dims}, link_bandwidth_bytes_per_s: 2.5e10, links: 12,"
                    f" scale_out: {{chips_per_node: {per_node}, link_bandwidth_bytes_per_s: 2.5e10{extra}}}}}\n")
        p = subprocess.run([dse, "eval", "--system", path, "--workload", "llama2-7b", "--tp", "8", "--dp", "2",
                            "--phase", "train", "--seq", "512", "--no-serving", "--json"],
                           capture_output=True, text=True, timeout=60)
        if msg is None:
            if p.returncode != 0:
                sys.exit(f"scale_out system: exit {p.returncode}, stderr {p.stderr!r}")
        elif p.returncode != 2 or msg not in p.stderr:
            sys.exit(f"scale_out {topo} {per_node}{extra}: exit {p.returncode}, stderr {p.stderr!r}, want {msg!r}")

# A stray word on a command without positional arguments is refused, not dropped (it was:
# `dse validate extra` ran the suite, `dse eval ... extra` evaluated).
for args in (["presets"], ["validate"], ["eval", "--hardware", "h100-sxm5", "--workload", "llama2-7b"],
             ["map", "--hw", "eyeriss-like", "--op", "gemm M=4 N=4 K=4"], ["scalesim", "-c", "c", "-t", "t", "-p", "p"]):
    p = subprocess.run([dse, *args, "extra"], capture_output=True, text=True, timeout=60)
    if p.returncode != 2 or "too many positional options" not in p.stderr or p.stdout:
        sys.exit(f"{' '.join(args)} extra: exit {p.returncode}, stdout {p.stdout[:80]!r}, stderr {p.stderr!r}")

# A stack's all-reduce kernel (scenarios/stacks, tp_all_reduce): Llama-3-70B decode at batch 1 on 8x MI300X, TP 8,
# FP8 with bf16 all-reduces of 8,192 x 2 = 16,384 B. By hand from scenarios/systems/mi300x-8.yaml (7 links x 64 GB/s,
# alpha 1 us) and the MI300X's graph kernel overhead (4 us): vLLM's one-shot kernel 2 x 1 us + 7 x 16384 / 448e9 + 4 us
# = 6.256 us (costmodel/system/collectives.hpp peer_all_reduce_cost); the library's ring 2 x 7 x 1 us +
# 2 x 7/8 x 16384 / 448e9 + 4 us = 18.064 us.
def allreduce_s(stack):
    e = json.loads(run("eval", "--system", "mi300x-8", "--workload", "llama3-70b", "--tp", "8", "--precision", "fp8",
                       "--phase", "decode", "--batch", "1", "--context", "128", "--stack", stack, "--json"))
    return [l["latency_s"] for l in e["layers"] if l["name"] == "allreduce_attn"][0]
for stack, want in (("vllm-v1", 2e-6 + 7 * 16384 / 448e9 + 4e-6), ("vllm", 14e-6 + 2 * 7 / 8 * 16384 / 448e9 + 4e-6)):
    got = allreduce_s(stack)
    if abs(got - want) > 1e-4 * want:
        sys.exit(f"stack {stack}: allreduce_attn {got} s, want {want} s")
with tempfile.TemporaryDirectory() as tmp:
    bad = os.path.join(tmp, "bad-stack.yaml")
    with open(bad, "w") as f:
        f.write("kind: serving_stack\nname: bad\ntp_all_reduce: mesh\n")
    p = subprocess.run([dse, "eval", "--system", "mi300x-8", "--workload", "llama3-70b", "--tp", "8", "--stack", bad],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 2 or "tp_all_reduce: expected one of library, custom (got mesh)" not in p.stderr:
        sys.exit(f"bad tp_all_reduce: exit {p.returncode}, stderr {p.stderr!r}")

p = run("presets")
for name in ("h100-sxm5", "mi300x", "tpu-v4", "gaudi2", "dgx-h100-8", "llama2-70b"):
    if name not in p:
        sys.exit(f"presets: {name} missing")
print("ok")
