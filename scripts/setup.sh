#!/usr/bin/env bash
# Installs what DSE needs on Debian 12 (as root, or with sudo), only when missing.
# Quick when everything is already there: one dpkg query, no apt-get.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git bc
  openmpi-bin libopenmpi-dev libhdf5-openmpi-dev hdf5-tools
  libtbb-dev libboost-program-options-dev libyaml-cpp-dev
  googletest libgtest-dev libgmock-dev libbenchmark-dev
  python3 python3-h5py python3-matplotlib python3-numpy
  libonnx-dev libprotobuf-dev python3-onnx
  # Reliability jobs of scripts/test.sh (issue 11): clang + compiler-rt for the libFuzzer
  # targets (scripts/fuzz_smoke.sh), llvm-symbolizer for sanitizer stack traces, and
  # util-linux's setpriv for the read-only-output fault test (tests/mpi/check_output_faults.sh).
  clang libclang-rt-dev llvm util-linux
  # LLVM's linker: every tree links with it where the compiler accepts -fuse-ld=lld (CMakeLists.txt).
  lld
  # The report's browser test (ctest report_browser: headless screenshots of results/*/report).
  chromium
)

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
sudo_cmd=()
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "setup: run as root or install sudo" >&2; exit 1; }
  sudo_cmd=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
