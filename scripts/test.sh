#!/usr/bin/env bash
# The README's second command (and CI's): install what is missing, build with
# warnings as errors, and run the whole test suite with ctest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh ci
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ctest --preset ci -j "${DSE_TEST_JOBS:-$(nproc)}"
