#!/usr/bin/env bash
# Parallel efficiency of `dse run` from 1 to N ranks (one thread each) on one
# scenario: prints, per rank count, points, wall seconds (the whole mpirun),
# points/s, efficiency against 1 rank (rate / (N x rate on 1 rank)), the archive
# size and the peak resident memory of the largest rank (/usr/bin/time -v).
# usage: scripts/bench_scaling.sh [SCENARIO] [MAX_RANKS] [STORE]
# Default: scenarios/bench/single-op.yaml (1,048,576 points), 2 ranks, --store archive.
# DSE=path/to/dse picks the binary (default build/release/dse/dse, built if missing).
# REPEAT=K (default 3) runs the rank counts K times, alternated (1, 2, .., N, 1, 2, ..), so that a
# drift of the machine's speed falls on every rank count alike; the table gives each rank count's
# median seconds (the efficiency from the medians) and, with K > 1, the range of the seconds and
# of the efficiency of each repetition (rank count N against the 1-rank run of the same repetition).
# Run it on an otherwise idle machine: on 2 cores any other load lowers the 2-rank figure.
set -euo pipefail
cd "$(dirname "$0")/.."
dse=${DSE:-build/release/dse/dse}
repeat=${REPEAT:-3}
[[ "$repeat" =~ ^[1-9][0-9]*$ ]] || { echo "bench_scaling: REPEAT must be a positive integer, not '$repeat'" >&2; exit 2; }
[ -x "$dse" ] || bash scripts/build.sh release
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
scenario=${1:-scenarios/bench/single-op.yaml}
max=${2:-2}
store=${3:-archive}
cp "$scenario" "$work/s.yaml"
echo "scenario $scenario, --threads 1, --store $store, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $dse"
declare -A secs points archive rss
for rep in $(seq 1 "$repeat"); do
  for np in $(seq 1 "$max"); do
    start=$(date +%s.%N)
    # Each rank bound to its own core (issue 59 item 0); more ranks than cores share them unbound.
    if [ "$np" -le "$(nproc)" ]; then bind=(--map-by "ppr:$np:node:PE=1" --bind-to core); else bind=(--oversubscribe --bind-to none); fi
    mpirun -q -np "$np" "${bind[@]}" sh -c \
      '/usr/bin/time -v -o "$0.$OMPI_COMM_WORLD_RANK" "$@"' "$work/time" \
      "$dse" run "$work/s.yaml" -o "$work/out.h5" --threads 1 --store "$store" --no-progress > "$work/log" 2> "$work/err" ||
      { cat "$work/err"; exit 1; }
    end=$(date +%s.%N)
    line=$(grep '^dse run:' "$work/log" | head -1)
    points[$np]=$(echo "$line" | sed -E 's/^dse run: ([0-9]+) points.*/\1/')
    archive[$np]=$(echo "$line" | sed -E 's/.*archive ([0-9]+).*/\1/')
    kib=$(cat "$work"/time.* 2>/dev/null | awk '/Maximum resident set size/ {if ($6 > m) m = $6} END {print m + 0}')
    rm -f "$work"/time.*
    ((kib > ${rss[$np]:-0})) && rss[$np]=$kib
    secs[$np,$rep]=$(echo "$end - $start" | bc -l)
  done
  if ((repeat > 1)); then
    printf "run %d of %d: %s\n" "$rep" "$repeat" \
      "$(for np in $(seq 1 "$max"); do printf "%d rank(s) %.2f s  " "$np" "${secs[$np,$rep]}"; done)"
  fi
done
seconds_of() { for rep in $(seq 1 "$repeat"); do echo "${secs[$1,$rep]}"; done; }  # rank count $1's runs
source scripts/bench_stats.sh  # median, range
printf "%-6s %10s %10s %12s %10s %10s %12s" ranks points seconds points/s efficiency archive max_rss_MiB
((repeat > 1)) && printf "  %-13s %s" "seconds_range" "efficiency_range"
printf "\n"
base=""
for np in $(seq 1 "$max"); do
  s_med=$(seconds_of "$np" | median)
  rate=$(echo "${points[$np]} / $s_med" | bc -l)
  [ -n "$base" ] || base=$rate
  eff=$(echo "$rate / ($base * $np)" | bc -l)
  printf "%-6s %10s %10.2f %12.0f %10.2f %10s %12.1f" "$np" "${points[$np]}" "$s_med" "$rate" "$eff" "${archive[$np]}" \
    "$(echo "${rss[$np]} / 1024" | bc -l)"
  if ((repeat > 1)); then
    effs=$(for rep in $(seq 1 "$repeat"); do
      echo "${secs[1,$rep]} / (${secs[$np,$rep]} * $np) * ${points[$np]} / ${points[1]}" | bc -l
    done | range)
    printf "  %-13s %s" "$(seconds_of "$np" | range)" "$effs"
  fi
  printf "\n"
done
