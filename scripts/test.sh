#!/usr/bin/env bash
# The README's second command (and CI's): install what is missing, build with
# warnings as errors, and run the whole test suite with ctest; then the reliability
# jobs (issue 11): the unit tests under ASan + UBSan and the TBB/driver paths under
# TSan (scripts/sanitize.sh), and a 30 s libFuzzer smoke run per reader
# (scripts/fuzz_smoke.sh). Each job prints its wall time.
#
# env: DSE_TEST_QUICK=1   skip the sanitizer and fuzz jobs (local use; CI runs them)
#      DSE_TEST_JOBS      ctest parallelism (default: nproc)
#      DSE_FUZZ_SECONDS   seconds per fuzz target in the smoke run (default 30)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# setup.sh installed chromium: ctest report_browser must not skip for want of it.
export DSE_REQUIRE_CHROMIUM=1
t0=$(date +%s)
bash scripts/build.sh ci
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ctest --preset ci -j "${DSE_TEST_JOBS:-$(nproc)}"
echo "test.sh: build + ctest (ci) in $(( $(date +%s) - t0 )) s"

if [ "${DSE_TEST_QUICK:-0}" = 1 ]; then
  echo "test.sh: DSE_TEST_QUICK=1, skipping the sanitizer and fuzz smoke jobs"
  exit 0
fi
t1=$(date +%s)
JOBS=$(nproc) bash scripts/sanitize.sh both
echo "test.sh: sanitizers (asan+ubsan, tsan) in $(( $(date +%s) - t1 )) s"
t2=$(date +%s)
JOBS=$(nproc) bash scripts/fuzz_smoke.sh "${DSE_FUZZ_SECONDS:-30}"
echo "test.sh: fuzz smoke in $(( $(date +%s) - t2 )) s"
echo "test.sh: all jobs passed in $(( $(date +%s) - t0 )) s"
