#!/usr/bin/env bash
# The include arrows (cmake/check_includes.cmake) pass on the tree as it is and fail on a
# copy with one wrong include planted in each of three folders: MPI in dse/io, Boost in
# dse/driver, the driver in dse/validate. Usage: check_arrows_planted.sh SOURCE_DIR WORK_DIR
set -euo pipefail
src=$1 work=$2
rm -rf "$work"; mkdir -p "$work"
cp -r "$src/cmake" "$src/costmodel" "$src/search" "$src/dse" "$work/"
cmake -DDSE_ARROWS_ROOT="$work" -P "$work/cmake/check_includes.cmake"
plant() {  # FILE LINE EXPECTED-MESSAGE
  local f=$work/$1
  cp "$f" "$f.orig"
  printf '%s\n' "$2" >> "$f"
  if cmake -DDSE_ARROWS_ROOT="$work" -P "$work/cmake/check_includes.cmake" 2> "$work/err.txt"; then
    echo "planted '$2' in $1: the check passed"; exit 1
  fi
  grep -qF "$3" "$work/err.txt" || { echo "planted '$2' in $1: unexpected message:"; cat "$work/err.txt"; exit 1; }
  mv "$f.orig" "$f"
}
plant dse/io/yaml_reader.cpp '#include <mpi.h>' "dse/io/yaml_reader.cpp: '#include <mpi.h>' breaks an arrow"
plant dse/driver/run.cpp '#include <boost/program_options.hpp>' "dse/driver/run.cpp: '#include <boost/program_options.hpp>'"
plant dse/validate/validate_suite.cpp '#include "dse/driver/driver.hpp"' "dse/validate/validate_suite.cpp"
plant costmodel/roofline.cpp '#include "dse/error.hpp"' "the cost model is pure"
cmake -DDSE_ARROWS_ROOT="$work" -P "$work/cmake/check_includes.cmake"
echo "arrows: the tree passes; each of 4 planted includes fails"
