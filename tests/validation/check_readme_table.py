"""ctest readme_validation_table: docs/validation.md's per-group validation table against `dse validate --json`.

The table under "Per group" states the figures reached (issue targets beside them); this check
recomputes them and fails when the model, the suite or the table changes alone:
every group of the suite (and `platform_speedups`) has one row, whose n equals the suite's and whose
mean, median and max absolute errors equal the JSON's rounded to 0.1%. The figures the prose under the
table, the rows of the "At a glance" model table and docs/known-gaps.md's one-line summary quote from the suite
(subsets such as the MLPerf and NIM cases, groups taken together, platform-speedup pairs, single
cases) are recomputed from the JSON's cases and looked for, as those pages word them. It also checks
that every link from the README into docs/ names a file there and, with an #anchor, one of its headings,
and that every #anchor of docs/known-gaps.md's summary names one of its own headings.

Usage: check_readme_table.py DSE README.md docs/validation.md docs/known-gaps.md
"""
import json
import os
import re
import subprocess
import sys

dse, readme_path, validation_path, gaps_path = sys.argv[1:5]
readme = open(readme_path, encoding="utf-8").read()
validation = open(validation_path, encoding="utf-8").read()
gaps = open(gaps_path, encoding="utf-8").read()
header = "| group | what | n | mean | median | max | issue target |"
if header not in validation:
    sys.exit(f"docs/validation.md: no per-group table (header {header!r})")
rows = {}
for line in validation[validation.index(header):].splitlines()[2:]:
    if not line.startswith("|"):
        break
    cells = [c.strip() for c in line.strip("|").split("|")]
    if len(cells) != 7:
        sys.exit(f"README table row with {len(cells)} cells, want 7: {line!r}")
    group = cells[0].strip("`")
    if group in rows:
        sys.exit(f"README table: group {group} twice")
    rows[group] = cells

p = subprocess.run([dse, "validate", "--json"], capture_output=True, text=True, timeout=300)
if p.returncode != 0:
    sys.exit(f"dse validate --json: exit {p.returncode}: {p.stderr}")
v = json.loads(p.stdout)
want = dict(v["groups"])
want["platform_speedups"] = v["platform_speedup_errors"]


def pct(x):
    return f"{100.0 * x:.1f}%"


bad = []
for group, g in want.items():
    if group not in rows:
        bad.append(f"group {group} (n {g['n']}) has no row in the README's table")
        continue
    cells = rows[group]
    got = (cells[2], cells[3], cells[4], cells[5])
    exp = (str(g["n"]), pct(g["mean_abs_error"]), pct(g["median_abs_error"]), pct(g["max_abs_error"]))
    if got != exp:
        bad.append(f"{group}: README n / mean / median / max {got}, dse validate gives {exp}")
for group in rows:
    if group not in want:
        bad.append(f"README row {group}: no such group in dse validate --json")

# Links into docs/: each file exists and each #anchor names a heading of it (GitHub's slug rule:
# lower case, punctuation but hyphens dropped, spaces to hyphens); the Known gaps lines link there.
docs_dir = os.path.dirname(os.path.abspath(gaps_path))
links = re.findall(r"\(docs/([\w.\-]+\.md)(?:#([^)]+))?\)", readme)
if not any(f == os.path.basename(gaps_path) for f, a in links):
    bad.append("README: no links into docs/known-gaps.md")
slugs = {}
for f, a in links:
    path = os.path.join(docs_dir, f)
    if not os.path.isfile(path):
        bad.append(f"README links docs/{f}, which does not exist")
        continue
    if f not in slugs:
        headings = re.findall(r"^#{1,6} (.+)$", open(path, encoding="utf-8").read(), flags=re.M)
        slugs[f] = {re.sub(r"[^a-z0-9 \-]", "", h.lower()).replace(" ", "-") for h in headings}
    if a and a not in slugs[f]:
        bad.append(f"README links docs/{f}#{a}, which is no heading there")
gap_slugs = {re.sub(r"[^a-z0-9 \-]", "", h.lower()).replace(" ", "-")
             for h in re.findall(r"^#{1,6} (.+)$", gaps, flags=re.M)}
for a in re.findall(r"\]\(#([^)]+)\)", gaps):
    if a not in gap_slugs:
        bad.append(f"docs/known-gaps.md links #{a}, which is no heading there")

# The prose under the table and the whole-model rows of the model-validation table: each figure that
# `dse validate --json` gives is recomputed here from its cases and pairs, written as the README writes
# it, and looked for in the README (line breaks and indentation read as one space).
text = " ".join((readme + "\n" + validation + "\n" + gaps).split())
cases = v["cases"]
by_group = {}
for c in cases:
    by_group.setdefault(c["group"], []).append(c)


def signed(x, digits=1):
    return f"{100.0 * x:+.{digits}f}%"


def mean_abs(rows):
    return sum(abs(r["error"]) for r in rows) / len(rows)


def max_abs(rows):
    return max(abs(r["error"]) for r in rows)


def median_abs(rows):
    e = sorted(abs(r["error"]) for r in rows)
    return e[len(e) // 2] if len(e) % 2 else (e[len(e) // 2 - 1] + e[len(e) // 2]) / 2


def pick(rows, *words):
    return [r for r in rows if all(w in r["name"] for w in words)]


def figs(rows):  # "mean M%, max X%" as the bullets write it
    return f"{pct(mean_abs(rows))} mean, {pct(max_abs(rows))} max"


claims = []
e2e, mfu = by_group["end_to_end"], by_group["training_mfu"]
tpu, multi, sweep = by_group["training_tpu"], by_group["training_tpu_multislice"], by_group["training_seq_sweep"]
claims.append(f"inference mean {pct(mean_abs(e2e))}, max {pct(max_abs(e2e))} ({len(e2e)} cases); training mean "
              f"{pct(mean_abs(mfu))}, max {pct(max_abs(mfu))} ({len(mfu)})")
served = [c for c in e2e if c["name"].startswith(("mlperf", "nim-"))]
claims.append(f"{pct(mean_abs(served))} over the {len(served)} MLPerf and NIM cases alone")
first = [c for c in mfu if c["name"].startswith(("megatron", "palm"))]
assert len(first) == 6, "five Megatron-LM runs and PaLM"
claims.append(f"the five Megatron-LM runs and PaLM's MFU within {pct(max_abs(first))}")
mpt = [c for c in mfu if c["name"].startswith("mosaicml")]
claims.append(f"the {len(mpt)} llm-foundry MPT rows at 2,048 tokens {signed(min(c['error'] for c in mpt))} to "
              f"{signed(max(c['error'] for c in mpt))}")
claims.append(f"MaxText's {len(tpu)} one-slice training rows")
claims.append(f"are {figs(tpu)}; with them training is {len(mfu) + len(tpu)} cases at {figs(mfu + tpu)} "
              f"({len(mfu) + len(tpu) + len(sweep)} with the `training_seq_sweep` rows: {figs(mfu + tpu + sweep)})")
claims.append(f"The same tables' {len(multi)} multi-slice rows (`training_tpu_multislice`")
claims.append(f"are {figs(multi)}: the model predicts no per-chip loss")
order = v["rank_order_preserved"]
kept = [b for b, ok in order.items() if ok]
lost = [b for b, ok in order.items() if not ok]
if any("maxtext" in b for b in kept) or not all("maxtext" in b for b in lost):
    bad.append(f"rank order: the README says only MaxText benchmarks lose it; lost on {lost}")
claims.append(f"with them training is {len(mfu) + len(tpu) + len(multi)} cases at {figs(mfu + tpu + multi)}")
claims.append(f"({len(kept)} of {len(order)} benchmarks preserved)")
claims.append(f"holds on all {len(kept)} inference and llm-foundry training benchmarks; it is lost on the "
              f"{len(lost)} MaxText benchmarks")
claims.append(f"(`training_seq_sweep`) give mean {pct(mean_abs(sweep))} and max {pct(max_abs(sweep))}")

# Platform speedups: the pairs whose slower run is a multi-slice one, and the others.
multi_names = {c["name"] for c in multi}
pairs = v["platform_speedups"]
ms_pairs = [q for q in pairs if q["slower"] in multi_names]
one = [q for q in pairs if q["slower"] not in multi_names]
claims.append(f"(`platform_speedups`, {len(one)} pairs), is predicted within {pct(mean_abs(one))} on average "
              f"(median {pct(median_abs(one))}, max {pct(max_abs(one))})")
foundry = sorted((q for q in one if q["faster"].startswith("mosaicml")), key=lambda q: abs(q["error"]))
near, off = foundry[:-3], foundry[-3:]
if not all("760m" in q["slower"] for q in off):
    bad.append("platform_speedups: the three llm-foundry pairs furthest off are not all MPT-760M's")
claims.append(f"H100 over A100 on {len(near)} of the {len(foundry)} llm-foundry pairs within {pct(max_abs(near))}, "
              f"the other three the MPT-760M pairs with a row off its table's trend ("
              + ", ".join(signed(e) for e in sorted(q["error"] for q in off)) + ")")
trt = [q for q in one if q["faster"].startswith("trtllm")]
claims.append(f"TensorRT-LLM's H100 FP8 over A100 FP16 {signed(min(q['error'] for q in trt))} to "
              f"{signed(max(q['error'] for q in trt))}")
ml = {q["slower"].rsplit("-", 1)[1]: q for q in one if q["benchmark"] == "llm_offline:llama2-70b"}
claims.append(f"on MLPerf Llama-2-70B, H200 over H100 {signed(ml['8xh100']['error'])}, over MI300X "
              f"{signed(ml['8xmi300x']['error'])}, over Gaudi2 {signed(ml['8xgaudi2']['error'])}")
mx = {q["faster"]: q for q in one if q["faster"].startswith("maxtext")}
big = mx["maxtext-1024b-v5p-4096"]
claims.append(f"128B on 256 over 128 chips {signed(mx['maxtext-128b-v5p-512']['error'])}, 1024B on 2,048 over 1,024 "
              f"chips {signed(big['error'])} (x{big['measured']:.3f} measured, x{big['predicted']:.4f} predicted)")
ps = v["platform_speedup_errors"]
claims.append(f"The multi-slice rows add {len(ms_pairs)} pairs")
claims.append(f"x{min(q['measured'] for q in ms_pairs):.3f} to x{max(q['measured'] for q in ms_pairs):.3f} measured "
              f"against x{min(q['predicted'] for q in ms_pairs):.3f} to x{max(q['predicted'] for q in ms_pairs):.3f} "
              f"predicted (mean {pct(mean_abs(ms_pairs))}, max {pct(max_abs(ms_pairs))}): {ps['n']} pairs in all, "
              f"mean {pct(ps['mean_abs_error'])}, median {pct(ps['median_abs_error'])}, max {pct(ps['max_abs_error'])}")

# Research silicon (whole networks, then per layer; the larger figures in whole percent).
rs = {c["name"]: c["error"] for c in by_group["research_silicon"]}
layers = by_group["research_silicon_layers"]
claims.append(f"AlexNet's convolutions come out {signed(rs['eyeriss-alexnet-conv-fps'])} in frames/s and "
              f"{signed(rs['eyeriss-alexnet-conv-energy'])} in energy per frame, VGG-16's "
              f"{signed(rs['eyeriss-vgg16-conv-fps'], 0)} and {signed(rs['eyeriss-vgg16-conv-energy'], 0)}")
claims.append(f"(`research_silicon_layers`, the chip's per-layer tables, {len(layers)} cases) median "
              f"{pct(median_abs(layers))} and max {100.0 * max_abs(layers):.0f}%")

# Fused attention: the case names are "KERNEL fwd|bwd dHEADDIM sSEQ".
fa2_h100, fa2_h200 = by_group["attention"], by_group["attention_h200"]
native_h100, native_h200 = by_group["attention_native_h100"], by_group["attention_h200_native"]
fwd256 = pick(fa2_h100, " fwd ", " d256 ")
claims.append(f"(`attention`, {len(fa2_h100)} rows) mean {pct(mean_abs(fa2_h100))}, max {pct(max_abs(fa2_h100))} "
              f"(its {len(fwd256)} forwards at head dim 256 {signed(min(c['error'] for c in fwd256))} to "
              f"{signed(max(c['error'] for c in fwd256))}")
small = [c for c in fa2_h200 if " d256 " not in c["name"]]
claims.append(f"median {pct(median_abs(small))} and max {pct(max_abs(small))} at head dims 64 and 128, at 256 the "
              f"forwards within {pct(max_abs(pick(fa2_h200, ' fwd ', ' d256 ')))} and the backwards within "
              f"{pct(max_abs(pick(fa2_h200, ' bwd ', ' d256 ')))} (group of {len(fa2_h200)}: mean "
              f"{pct(mean_abs(fa2_h200))}, median {pct(median_abs(fa2_h200))})")
claims.append(f"(`attention_h200_native`) median {pct(median_abs(native_h200))}, max {pct(max_abs(native_h200))}")
cudnn = [c for c in native_h100 if c["name"].startswith("h100_cudnn") and " d256 " not in c["name"]]
cudnn256 = pick([c for c in native_h100 if c["name"].startswith("h100_cudnn")], " d256 ")
claims.append(f"(`attention_native_h100`, {len(native_h100)} rows) median {pct(median_abs(native_h100))}, max "
              f"{pct(max_abs(native_h100))} (cuDNN's {len(cudnn)} at head dims 64 and 128 median "
              f"{pct(median_abs(cudnn))}, max {pct(max_abs(cudnn))}; its {len(cudnn256)} at head dim 256 "
              f"{100.0 * min(-c['error'] for c in cudnn256):.1f}-"
              f"{100.0 * max(-c['error'] for c in cudnn256):.1f}% fast")

# The model-validation table's rows for these groups, and the Known gaps lines that quote them.
steps = by_group["llm_steps_h200"]
claims.append(f"| mean {pct(mean_abs(tpu))}, max {pct(max_abs(tpu))}; no constant set from them |")
claims.append(f"| mean {pct(mean_abs(multi))}, max {pct(max_abs(multi))}: the model predicts no per-chip loss")
claims.append(f"AlexNet {signed(rs['eyeriss-alexnet-conv-fps'])} in frames/s, "
              f"{signed(rs['eyeriss-alexnet-conv-energy'])} in energy; "
              f"VGG-16 {signed(rs['eyeriss-vgg16-conv-fps'], 0)}; per layer median {pct(median_abs(layers))}, "
              f"max {100.0 * max_abs(layers):.0f}%")
claims.append(f"Llama-3-8B-shaped steps mean {pct(mean_abs(steps))}, max {pct(max_abs(steps))}")
past = sorted((c["error"] for c in sweep if abs(c["error"]) > 0.25), reverse=True)
words = {1: "one", 2: "two", 3: "three", 4: "four"}
claims.append(f"the {len(served)} MLPerf and NIM inference cases alone are {pct(mean_abs(served))} mean, the training "
              f"max ({pct(max_abs(mfu))}) is {25.0 - 100.0 * max_abs(mfu):.1f} points from 25%, and "
              f"`training_seq_sweep` has {words.get(len(past), len(past))} rows past 25% ("
              + ", ".join(signed(e) for e in past) + ")")
claims.append(f"(#maxtext-on-several-tpu-slices): {pct(mean_abs(multi))} mean, "
              f"{pct(max_abs(multi))} max")
vgg = next(c for c in by_group["research_silicon"] if c["name"] == "eyeriss-vgg16-conv-fps")
claims.append(f"Eyeriss v1 runs VGG-16 at {vgg['measured']:.2f} frames/s where the mapper's mappings give "
              f"{vgg['predicted']:.2f} ({signed(vgg['error'], 0)}); per layer median {pct(median_abs(layers))}, max "
              f"{100.0 * max_abs(layers):.0f}%")

for c in claims:
    if c not in text:
        bad.append(f"docs/validation.md and docs/known-gaps.md do not say (from dse validate --json): {c}")

if bad:
    sys.exit("\n".join(bad))
print(f"docs/validation.md table: {len(rows)} rows match dse validate --json; {len(claims)} figures in its prose recomputed; "
      f"{len(links)} links into docs/ resolve")
