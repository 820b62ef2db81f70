#!/usr/bin/env bash
# ctest results_current: the shipped review results in results/ are those of the current model.
# Runs `scripts/make_results.sh --tables-only` into WORKDIR (each of its scenarios on one rank,
# `dse shortlist` without and with the budgets) and compares the tables with
# results/<name>/pareto_all.txt and shortlist.txt (model figures only, no timings). A change to
# the cost model that moves a shipped figure fails here until `scripts/make_results.sh` is rerun.
# usage: check_results_current.sh DSE PROJECT_DIR WORKDIR
set -u
dse=$1 root=$2 work=$3
rm -rf "$work" && mkdir -p "$work" || exit 1
if ! bash "$root/scripts/make_results.sh" --tables-only "$dse" "$work" >"$work/make_results.log" 2>&1; then
  echo "FAIL: scripts/make_results.sh --tables-only"; cat "$work/make_results.log"; exit 1
fi
status=0 n=0
for dir in "$work"/*/; do
  name=$(basename "$dir")
  n=$((n + 1))
  for f in pareto_all shortlist; do
    if ! diff -q "$root/results/$name/$f.txt" "$dir/$f.txt" >/dev/null; then
      echo "results/$name/$f.txt differs from the current model's (rerun scripts/make_results.sh):"
      diff "$root/results/$name/$f.txt" "$dir/$f.txt" | head -n 12
      status=1
    fi
  done
done
[ "$n" -gt 0 ] || { echo "scripts/make_results.sh --tables-only wrote no scenario"; exit 1; }
[ "$status" -eq 0 ] && echo "results/: $n scenarios' shortlists match the current model"
exit "$status"
