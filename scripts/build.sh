#!/usr/bin/env bash
# Configures and builds with a CMake preset (default: release). Incremental.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-release}
jobs=${DSE_BUILD_JOBS:-$(nproc)}
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$jobs"
