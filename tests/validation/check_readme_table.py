"""ctest readme_validation_table: the README's per-group validation table against `dse validate --json`.

The table under "Models and how they are validated" states the figures reached (issue targets beside
them); this check recomputes them and fails when the model, the suite or the table changes alone:
every group of the suite (and `platform_speedups`) has one row, whose n equals the suite's and whose
mean, median and max absolute errors equal the JSON's rounded to 0.1%. It also checks that every link
from the README's Known gaps into docs/known-gaps.md names a heading there.

Usage: check_readme_table.py DSE README.md docs/known-gaps.md
"""
import json
import re
import subprocess
import sys

dse, readme_path, gaps_path = sys.argv[1:4]
readme = open(readme_path, encoding="utf-8").read()
header = "| group | what | n | mean | median | max | issue target |"
if header not in readme:
    sys.exit(f"README: no validation table (header {header!r})")
rows = {}
for line in readme[readme.index(header):].splitlines()[2:]:
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

# Known gaps links: each #anchor must be a heading of docs/known-gaps.md (GitHub's slug rule:
# lower case, punctuation but hyphens dropped, spaces to hyphens).
gaps = open(gaps_path, encoding="utf-8").read()
slugs = {re.sub(r"[^a-z0-9 \-]", "", h.lower()).replace(" ", "-")
         for h in re.findall(r"^## (.+)$", gaps, flags=re.M)}
links = re.findall(r"\(docs/known-gaps\.md#([^)]+)\)", readme)
if not links:
    bad.append("README: no links into docs/known-gaps.md")
for a in links:
    if a not in slugs:
        bad.append(f"README links docs/known-gaps.md#{a}, which is no heading there")

if bad:
    sys.exit("\n".join(bad))
print(f"README table: {len(rows)} rows match dse validate --json; {len(links)} Known gaps links resolve")
