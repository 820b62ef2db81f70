#!/usr/bin/env bash
# Threads inside one rank under mpirun, launched as docs/cluster.md writes it (one rank with its
# cores: --map-by ppr:1:node:PE=N --bind-to core): the exhaustive accelerator sweep with
# --threads 1 and --threads N, alternated REPEAT times; prints each run's evaluation time (`time on
# rank 0`) and whole-mpirun wall, the medians and the speed-up of the evaluation.
# usage: scripts/bench_threads.sh [N] [REPEAT] [SCENARIO]
# Default: N = all cores of the machine, REPEAT 3, scenarios/accelerator-sweep.yaml searched
# exhaustively (its search: block replaced; 1,327,104 points), --store archive.
# DSE=path/to/dse picks the binary (default build/release/dse/dse, built if missing).
# Run it on an otherwise idle machine: other load lowers the N-thread figure.
set -euo pipefail
cd "$(dirname "$0")/.."
dse=${DSE:-build/release/dse/dse}
[ -x "$dse" ] || bash scripts/build.sh release
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
n=${1:-$(nproc)}
repeat=${2:-3}
scenario=${3:-scenarios/accelerator-sweep.yaml}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
sed '/^search:/,$d' "$scenario" >"$work/s.yaml"
printf 'search:\n  sampler: exhaustive\n' >>"$work/s.yaml"
echo "scenario $scenario (exhaustive), mpirun -np 1 --map-by ppr:1:node:PE=$n --bind-to core, $(nproc) cores," \
  "load $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-8s %8s %14s %10s\n" threads run evaluation_s wall_s
declare -A evals walls
for run in $(seq 1 "$repeat"); do
  for t in 1 "$n"; do
    start=$(date +%s.%N)
    mpirun -q -np 1 --map-by "ppr:1:node:PE=$n" --bind-to core "$dse" run "$work/s.yaml" -o "$work/out.h5" \
      --threads "$t" --store archive --no-progress >"$work/log" 2>"$work/err" || { cat "$work/err"; exit 1; }
    end=$(date +%s.%N)
    e=$(sed -nE 's/^time on rank 0: evaluation ([0-9.]+) s.*/\1/p' "$work/log")
    w=$(echo "$end - $start" | bc -l)
    evals[$t]="${evals[$t]:-} $e"
    walls[$t]="${walls[$t]:-} $w"
    printf "%-8s %8s %14.2f %10.2f\n" "$t" "$run" "$e" "$w"
    grep -h "warning" "$work/err" || true
  done
done
source scripts/bench_stats.sh  # median
e1=$(echo "${evals[1]}" | median)
en=$(echo "${evals[$n]}" | median)
printf "median evaluation: %.2f s (1 thread), %.2f s (%s threads): %.2fx; median wall %.2f s / %.2f s; load %s\n" \
  "$e1" "$en" "$n" "$(echo "$e1 / $en" | bc -l)" "$(echo "${walls[1]}" | median)" "$(echo "${walls[$n]}" | median)" \
  "$(cut -d' ' -f1-3 /proc/loadavg)"
