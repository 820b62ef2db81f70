#!/usr/bin/env bash
# Same scenario + seed => same HDF5 content (bar run attributes) for 1, 2, 3 and 4
# ranks and 1 or 2 threads (DSE_IDENTITY_CONFIGS, below), for one sampler: exhaustive, random,
# nsga2 or nsga2_islands (3 islands of 16, migrating 3 members every 2 generations). /hypervolume is compared too.
# random_filings: 140,000 random points of the scenario (scenarios/bench/single-op.yaml).
# usage: check_identity.sh DSE MPIRUN SCENARIO WORKDIR PYTHON COMPARE_PY SAMPLER
set -u
dse=$1 mpirun=$2 scenario=$3 work=$4 python=$5 compare=$6 sampler=$7
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
cp "$scenario" s.yaml
interval=0.05  # seconds between checkpoints
case "$sampler" in
  exhaustive) ;;
  random) printf 'search:\n  sampler: random\n  samples: 4000\n' >> s.yaml ;;
  nsga2) printf 'search:\n  sampler: nsga2\n  population: 48\n  generations: 12\n' >> s.yaml ;;
  random_filings)  # scenarios/bench/single-op.yaml (one workload, half its points archived): 70,000
    # points a rank on 2 ranks, more than a local archive's due queue (65,536), and checkpoints (which
    # file the archives) 30 s apart, so the 2-rank run files its archives together at a round's end
    sed -i '/^search:/,$d' s.yaml
    printf 'search:\n  sampler: random\n  samples: 140000\n' >> s.yaml
    interval=30 ;;
  nsga2_islands)
    printf 'search:\n  sampler: nsga2\n  population: 48\n  generations: 12\n  islands: 3\n  migration_interval: 2\n  migration_size: 3\n' >> s.yaml ;;
  *) echo "unknown sampler $sampler"; exit 2 ;;
esac
# DSE_IDENTITY_CONFIGS: the (ranks threads) pairs, comma-separated; scripts/sanitize.sh runs three of the five
# under ASan (the identity itself is the plain ctest job's to check).
IFS=, read -r -a configs <<< "${DSE_IDENTITY_CONFIGS:-1 1,2 1,3 1,4 1,2 2}"
[ "${#configs[@]}" -ge 2 ] || { echo "DSE_IDENTITY_CONFIGS: at least two (ranks threads) pairs to compare"; exit 2; }
files=()
for cfg in "${configs[@]}"; do
  set -- $cfg
  out="np$1_t$2.h5"
  if ! timeout 300 "$mpirun" -q -np "$1" --oversubscribe "$dse" run s.yaml -o "$out" --threads "$2" \
       --no-progress --checkpoint-interval "$interval" >/dev/null 2>>log; then
    echo "FAIL: $sampler run with $1 rank(s), $2 thread(s)"; cat log; exit 1
  fi
  files+=("$out")
done
"$python" "$compare" "${files[@]}"
