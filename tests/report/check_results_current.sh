#!/usr/bin/env bash
# ctest results_current: the shipped review results in results/ are those of the current model.
# For each scenario that scripts/make_results.sh lists (name, SLA ms, power W), runs it on one
# rank and compares `dse shortlist` without and with the budgets against
# results/<name>/pareto_all.txt and shortlist.txt (model figures only, no timings). A change to
# the cost model that moves a shipped figure fails here until `scripts/make_results.sh` is rerun.
# usage: check_results_current.sh DSE PROJECT_DIR WORKDIR
set -u
dse=$1 root=$2 work=$3
rm -rf "$work" && mkdir -p "$work" || exit 1
mapfile -t lines < <(sed -n '/^SCENARIOS=(/,/^)/p' "$root/scripts/make_results.sh" | grep -o '"[^"]*"' | tr -d '"')
[ "${#lines[@]}" -gt 0 ] || { echo "no SCENARIOS in scripts/make_results.sh"; exit 1; }
status=0
for line in "${lines[@]}"; do
  read -r name sla_ms power_w <<<"$line"
  out=$work/$name.h5
  if ! "$dse" run "$root/scenarios/$name.yaml" -o "$out" --no-progress >"$work/$name.log" 2>&1; then
    echo "FAIL: dse run scenarios/$name.yaml"; cat "$work/$name.log"; exit 1
  fi
  "$dse" shortlist "$out" >"$work/$name.pareto_all.txt" || exit 1
  "$dse" shortlist "$out" --sla-p99-ms "$sla_ms" --power-w "$power_w" >"$work/$name.shortlist.txt" || exit 1
  for f in pareto_all shortlist; do
    if ! diff -q "$root/results/$name/$f.txt" "$work/$name.$f.txt" >/dev/null; then
      echo "results/$name/$f.txt differs from the current model's (rerun scripts/make_results.sh):"
      diff "$root/results/$name/$f.txt" "$work/$name.$f.txt" | head -n 12
      status=1
    fi
  done
done
[ "$status" -eq 0 ] && echo "results/: ${#lines[@]} scenarios' shortlists match the current model"
exit "$status"
