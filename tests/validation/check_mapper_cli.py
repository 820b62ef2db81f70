"""ctest cli_mapper_budget: `dse timeloop-mapper` and `dse map` as issue 59 asks.

- Timeloop's own Eyeriss case (oracle 06, its constraints, energy objective) with the deterministic
  budget (--time-budget-ms 0): at most 2,096.21 fJ/MAC, the best Timeloop v3.0.3's timeloop-mapper
  reached (after 302 s, issue 59); the mapping written with -o has perfect factors (for every
  dimension the product of its factors over all temporal and spatial directives equals the problem's
  instance size: Timeloop v3.0.3 refuses anything else, "product of all factors of dimension M is
  260"), read back by `dse timeloop-model` to the same energy.
- --objective latency: 5,505,024 cycles (924,844,032 MACs on 168 PEs), printed as proven optimal.
- `dse map --json` states proven_optimal and stopped_by; bad budgets are refused with exit 2.

Usage: check_mapper_cli.py DSE ORACLES_DIR SCRATCH_DIR
"""
import json
import os
import re
import subprocess
import sys

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "dse"))
from cli_check import need, run  # noqa: E402

oracles, scratch = sys.argv[2], sys.argv[3]
d = os.path.join(oracles, "timeloop", "06-eyeriss-vgg02-layer5")
arch, prob, ert = (os.path.join(d, f) for f in ("eyeriss_like.yaml", "VGG02_layer5.yaml", "ERT.yaml"))
out_map = os.path.join(scratch, "cli_mapper_t06.map.yaml")

text = run("timeloop-mapper", arch, prob, ert, "--time-budget-ms", "0", "-o", out_map)
m = re.search(r"total energy: \S+ pJ \((\S+) fJ/MAC\)", text)
if not m:
    sys.exit(f"timeloop-mapper: no total energy line in\n{text}")
fj = float(m.group(1))
if fj > 2096.21:
    sys.exit(f"timeloop-mapper on oracle 06: {fj} fJ/MAC, above Timeloop v3.0.3's 2,096.21")
if "# search:" not in text or "search ended: finished" not in text:
    sys.exit(f"timeloop-mapper: no search line ending 'search ended: finished' in\n{text}")

instance = yaml.safe_load(open(prob))["problem"]["instance"]
mapping = yaml.safe_load(open(out_map))["mapping"]
product = {}
for e in mapping:
    if e["type"] not in ("temporal", "spatial"):
        continue
    for tok in e["factors"].split():
        name, value = tok.split("=")
        product[name] = product.get(name, 1) * int(value)
for name, p in product.items():
    if p != instance[name]:
        sys.exit(f"{out_map}: factors of {name} multiply to {p}, the problem has {instance[name]}")
back = run("timeloop-model", arch, prob, out_map, ert)
if f"({m.group(1)} fJ/MAC)" not in back:
    sys.exit(f"timeloop-model on the written mapping does not give {m.group(1)} fJ/MAC:\n{back}")

lat = run("timeloop-mapper", arch, prob, ert, "--objective", "latency", "--time-budget-ms", "0")
if "cycles: 5505024\n" not in lat or "proven optimal" not in lat:
    sys.exit(f"timeloop-mapper --objective latency: not 5505024 cycles, proven optimal:\n{lat}")

sheet = json.loads(run("map", "--hw", "eyeriss-like", "--op", "gemm M=64 N=64 K=64", "--json", "--time-budget-ms", "0"))
need(sheet, ["proven_optimal", "stopped_by", "gap_to_bound", "bound", "evaluated"], "dse map --json")
if sheet["stopped_by"] != "finished":
    sys.exit(f"dse map --json: stopped_by {sheet['stopped_by']!r} with no time budget and the default cap")

for bad, what in ((["--time-budget-ms", "-1"], "--time-budget-ms: expected"), (["--evaluations", "0"], "--evaluations: expected")):
    p = subprocess.run([sys.argv[1], "map", "--hw", "eyeriss-like", "--op", "gemm M=8 N=8 K=8", *bad],
                       capture_output=True, text=True, timeout=60)
    if p.returncode != 2 or what not in p.stderr:
        sys.exit(f"dse map {' '.join(bad)}: exit {p.returncode}, stderr {p.stderr!r}; want 2 and {what!r}")
print(f"oracle 06: {fj} fJ/MAC, perfect factors; latency 5505024 cycles, proven optimal")
