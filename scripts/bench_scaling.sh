#!/usr/bin/env bash
# Parallel efficiency of `dse run` from 1 to N ranks (one thread each) on one
# scenario: prints points/s per rank count and the efficiency against 1 rank.
# usage: scripts/bench_scaling.sh [SCENARIO] [MAX_RANKS]
# Default: tests/mpi/sweep.yaml with its figures swept 8 ways (49,152 points).
set -euo pipefail
cd "$(dirname "$0")/.."
dse=build/release/dse/dse
[ -x "$dse" ] || bash scripts/build.sh release
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ $# -ge 1 ]; then
  cp "$1" "$work/s.yaml"
else
  sed 's/{log: \[1.0e12, 128.0e12, 4\]}/{log: [1.0e12, 128.0e12, 8]}/; s/{log: \[50.0e12, 1000.0e12, 4\]}/{log: [50.0e12, 1000.0e12, 8]}/' \
    tests/mpi/sweep.yaml > "$work/s.yaml"
fi
max=${2:-2}
base=""
printf "%-6s %10s %14s %12s %s\n" ranks points seconds points/s efficiency
for np in $(seq 1 "$max"); do
  start=$(date +%s.%N)
  mpirun -q -np "$np" --oversubscribe "$dse" run "$work/s.yaml" -o "$work/out.h5" --threads 1 \
    --store archive --no-progress > "$work/log"
  line=$(head -1 "$work/log")
  end=$(date +%s.%N)
  points=$(echo "$line" | sed -E 's/^dse run: ([0-9]+) points.*/\1/')
  secs=$(echo "$end - $start" | bc -l)
  rate=$(echo "$points / $secs" | bc -l)
  [ -n "$base" ] || base=$rate
  eff=$(echo "$rate / ($base * $np)" | bc -l)
  printf "%-6s %10s %14.2f %12.0f %.2f\n" "$np" "$points" "$secs" "$rate" "$eff"
done
