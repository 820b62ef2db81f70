#!/usr/bin/env python3
"""Names of any length and any UTF-8 survive a run (issue 58, defect 13: names were cut to 31
bytes, so variants of a 29-character name printed as "#1" and a cut mid-character gave invalid
JSON). Two hardware entries whose names share their first 40 bytes (UTF-8 letters included), two
variants each, and a workload name with Greek letters: `dse shortlist` in JSON, CSV and table form
names every row with the full entry name and its variant, and the JSON parses.

usage: check_long_names.py DSE WORKDIR
"""
import csv
import io
import json
import os
import subprocess
import sys

HW_A = "accélérateur-de-démonstration-très-long-A"  # 45 bytes in UTF-8
HW_B = "accélérateur-de-démonstration-très-long-B"
WORKLOAD = "une-charge-de-travail-au-nom-très-long-αβγ"


def entry(name, bandwidth, risk):
    return f"""  - name: {name}
    peak_flops_per_s: {{choices: [1.0e12, 2.0e12]}}
    memory_bandwidth_bytes_per_s: {bandwidth}
    memory_capacity_bytes: 8.0e9
    kernel_overhead_s: 5.0e-6
    energy_per_flop_j: 0.5e-12
    energy_per_byte_j: 20.0e-12
    static_power_w: 1
    engineering_risk: {risk}
"""


def main():
    dse, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    scenario = os.path.join(work, "long-names.yaml")
    out = os.path.join(work, "long-names.h5")
    for path in (out, out + ".partial"):
        if os.path.exists(path):
            os.remove(path)
    # A is slower but less risky than B, so both entries are on the front.
    text = ("name: long-names\nseed: 1\nhardware:\n" + entry(HW_A, "1.0e11", 0.05) + entry(HW_B, "2.0e11", 0.1) +
            f"workloads:\n  - name: {WORKLOAD}\n    layers:\n"
            "      - {name: fc1, kind: gemm, rows_per_sample: 1, n: 4096, k: 1024}\nbatch_sizes: [1, 8]\n")
    with open(scenario, "w", encoding="utf-8") as f:
        f.write(text)
    subprocess.run([dse, "run", scenario, "-o", out, "--no-progress"], check=True, stdout=subprocess.DEVNULL)

    expected = {f"{hw}#{v}" for hw in (HW_A, HW_B) for v in (0, 1)}
    js = subprocess.run([dse, "shortlist", out, "--format", "json"], check=True, capture_output=True).stdout
    rows = json.loads(js.decode("utf-8"))["shortlist"]
    assert rows, "empty shortlist"
    names = {r["hardware"] for r in rows}
    assert names <= expected, f"names not in {sorted(expected)}: {sorted(names - expected)}"
    assert {n.split("#")[0] for n in names} == {HW_A, HW_B}, f"both entries expected on the front: {sorted(names)}"
    assert all(r["workload"] == WORKLOAD for r in rows), [r["workload"] for r in rows]
    assert all(r["knobs"] in ("peak_flops_per_s=1e+12", "peak_flops_per_s=2e+12") for r in rows)

    text_csv = subprocess.run([dse, "shortlist", out, "--format", "csv"], check=True, capture_output=True).stdout
    csv_rows = list(csv.DictReader(io.StringIO(text_csv.decode("utf-8"))))
    assert {r["hardware"] for r in csv_rows} == names, "CSV and JSON name different rows"
    table = subprocess.run([dse, "shortlist", out], check=True, capture_output=True).stdout.decode("utf-8")
    for n in names:
        assert n in table, f"{n} missing from the table"
    print(f"check_long_names: {len(rows)} rows, names {sorted(names)}")


if __name__ == "__main__":
    main()
