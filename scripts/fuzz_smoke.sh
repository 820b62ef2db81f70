#!/usr/bin/env bash
# Fuzz smoke for CI: builds the libFuzzer targets (clang, -DDSE_BUILD_FUZZERS=ON) and runs
# each for a short time (default 30 s) on a scratch copy of its corpus fuzz/corpus/<target>.
# The build also checks that the libraries compile warning-free with clang (-DDSE_WERROR=ON).
# Any crash, leak, UB report, timeout (>10 s per input) or escaped exception fails the script;
# the crashing input is left in the scratch folder (printed) to copy into fuzz/regressions/.
#
# Usage: scripts/fuzz_smoke.sh [SECONDS_PER_TARGET] [BUILD_DIR]
#   env: JOBS (build parallelism, default 1), LANES (targets run at once, default JOBS),
#        TARGETS (default: all eight),
#        KEEP=1 (keep the scratch corpora and logs, e.g. to merge a long run into fuzz/corpus).
set -euo pipefail
secs=${1:-30}
here=$(cd "$(dirname "$0")/.." && pwd)
build=${2:-$here/build/fuzz}
jobs=${JOBS:-1}
targets=${TARGETS:-"scenario gpu_hardware workload timeloop scalesim onnx results run"}

# Line tables only (-gline-tables-only): crash reports keep file:line, the build is faster.
CC=${CC:-clang} CXX=${CXX:-clang++} cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -gline-tables-only -DNDEBUG" \
  -DDSE_BUILD_FUZZERS=ON -DDSE_BUILD_TESTS=OFF -DDSE_BUILD_BENCH=OFF -DDSE_WERROR=ON >/dev/null
cmake --build "$build" --target fuzzers -j"$jobs" >/dev/null

work=$(mktemp -d /tmp/dse_fuzz_smoke.XXXXXX)
# One target per lane at a time (LANES, default JOBS): each still gets its SECONDS of wall time
# on a core of its own; two lanes on the 2-core CI machine halve the smoke run's wall time.
lanes=${LANES:-$jobs}
run_target() {
  local t=$1 dict=() start runs
  mkdir -p "$work/$t/corpus" "$work/$t/artifacts"
  cp "$here/fuzz/corpus/$t/"* "$work/$t/corpus/" 2>/dev/null || true
  case $t in
    scalesim) dict=(-dict="$here/fuzz/dict/scalesim.dict") ;;
    onnx|results) ;;
    *) dict=(-dict="$here/fuzz/dict/yaml.dict") ;;
  esac
  start=$(date +%s)
  if "$build/fuzz/fuzz_$t" "${dict[@]}" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
       -print_final_stats=1 -artifact_prefix="$work/$t/artifacts/" "$work/$t/corpus" \
       >"$work/$t/log" 2>&1; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$t/log" | grep -o '[0-9]*$' || echo '?')
    echo "fuzz_$t: ok, $runs runs in $(( $(date +%s) - start )) s" >"$work/$t/result"
  else
    { echo "fuzz_$t: FAILED (log $work/$t/log, inputs in $work/$t/artifacts/)"; tail -n 30 "$work/$t/log"; } \
      >"$work/$t/result"
    return 1
  fi
}
running=0
for t in $targets; do
  if [ "$running" -ge "$lanes" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  run_target "$t" &
  running=$((running + 1))
done
wait || true
status=0
for t in $targets; do
  cat "$work/$t/result" 2>/dev/null || echo "fuzz_$t: FAILED (no result; log $work/$t/log)"
  grep -q ': ok,' "$work/$t/result" 2>/dev/null || status=1
done
if [ "$status" -eq 0 ] && [ "${KEEP:-0}" != 1 ]; then rm -rf "$work"; else echo "corpora and logs kept in $work"; fi
exit "$status"
