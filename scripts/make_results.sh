#!/usr/bin/env bash
# Regenerates the review reports of the shipped example scenarios into
# results/<scenario>/ (the result file <scenario>.h5, `dse shortlist` tables and the
# report: index.html, report.md, PNG figures, CSV mapping sheets).
#
#   scripts/make_results.sh [--tables-only] [DSE_BINARY] [OUT_DIR]
#
# DSE_BINARY defaults to build/release/dse/dse (scripts/build.sh release); runs one rank
# (no mpirun needed). OUT_DIR (default results; relative paths from the project root) gets
# one folder per scenario. --tables-only: the result file and the two shortlist tables,
# no report (the ctest results_current writes them elsewhere and compares them with
# results/: tests/report/check_results_current.sh). Each scenario line below: name, then the
# budgets of its shortlist and report (dse shortlist's options); add a line when a scenario is
# added to scenarios/.
set -euo pipefail
cd "$(dirname "$0")/.."
tables_only=0
if [ "${1:-}" = --tables-only ]; then
  tables_only=1
  shift
fi
DSE=${1:-build/release/dse/dse}
OUT_ROOT=${2:-results}
[[ -x $DSE ]] || { echo "make_results.sh: $DSE not found; build first (scripts/build.sh release) or pass the dse binary" >&2; exit 2; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
SCENARIOS=(
  "quickstart --sla-p99-ms 1 --power-w 180"
  "llm-serving --sla-ttft-ms 2000 --sla-tpot-ms 100 --power-w 10000"
  "accelerator-sweep --sla-p99-ms 5 --power-w 12"
  "mlperf-llama2-70b-server --sla-ttft-ms 2000 --sla-tpot-ms 200"
  "edge-cnn --sla-p99-ms 200 --area-mm2 8"
  "next-gen-chip --sla-ttft-ms 2000 --sla-tpot-ms 50 --power-w 8000"
)
for line in "${SCENARIOS[@]}"; do
  read -r name budgets <<<"$line"
  read -r -a budget_args <<<"$budgets"
  out=$OUT_ROOT/$name
  rm -rf "$out"
  mkdir -p "$out"
  "$DSE" run "scenarios/$name.yaml" -o "$out/$name.h5" --no-progress
  "$DSE" shortlist "$out/$name.h5" > "$out/pareto_all.txt"
  "$DSE" shortlist "$out/$name.h5" "${budget_args[@]}" > "$out/shortlist.txt"
  [ "$tables_only" = 1 ] && continue
  "$DSE" report "$out/$name.h5" -o "$out/report" "${budget_args[@]}"
done
