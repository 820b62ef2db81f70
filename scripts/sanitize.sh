#!/usr/bin/env bash
# Sanitizer CI job: builds the unit tests with ASan + UBSan (preset "asan") and runs them
# (ctest -LE known_gap in three passes: by unwinder, and the MPI tests with and without leak
# checks, below), then builds the TBB/driver paths with
# TSan (preset "tsan") and runs test_dse_run_local and `dse run tests/mpi/sweep.yaml --threads 2`.
# Any sanitizer report fails the job (halt_on_error); library false positives are suppressed in
# scripts/sanitizers/.
#
# Left to the plain ci job (each of its dse calls runs under ASan in another test, or it checks
# figures, not memory):
# - the 4-rank twins of the two MPI fault scripts and mpi_rank_failures_np3: their 2-rank runs take
#   the same code paths (the two 4-rank twins took 176 s of the ASan job on the 2-core CI machine);
# - results_current, which checks the figures shipped in results/: its dse run and shortlist calls
#   are those of mpi_quickstart_* and report_quickstart (27 s under ASan);
# - served_points_equal_dse_eval, next_gen_chip_points_equal_dse_eval and
#   chip_points_equal_single_commands, which compare dse run's figures with hundreds of dse eval,
#   dse map and dse scalesim runs bit for bit: the same serving and chip code runs under ASan in
#   mpi_identity_*, cli_platform_json and the unit tests (500 s, more than 600 s and 176 s under ASan);
# - report_browser: its dse calls (dse run on llm-serving, dse report) are report_quickstart's, the
#   rest is Chromium (169 s under ASan);
# - cli_validate_json, which checks the figures of `dse validate --json` and some 40 `dse eval`
#   calls: readme_validation_table runs `dse validate` under ASan and cli_platform_json `dse eval`
#   (131-140 s under ASan, the longest test of the first pass);
# and the identity scripts (mpi_identity_*) run three of their five (ranks threads) pairs:
# 1 1, 2 2 and 3 1 (DSE_IDENTITY_CONFIGS): one rank, two ranks with two threads, uneven shares;
# the 4-rank runs (four ASan processes on two cores) and 2 1 are the plain job's. The passes'
# test times in docs/reliability.md.
# Both presets compile at -Og with line tables only (-Og -g1, CMakePresets.json): reports keep
# function, file and line. -O2 with ASan + UBSan together took twice as long to compile as -O1 (the
# whole tree 673 s -> 374 s at -O1, -j2) and the tests ran no faster (pass 1 165 s -> 149 s,
# the mpi_init pass 388 s -> 316 s); TSan's two targets 105 s -> 85 s. -Og compiles faster still
# (the ASan tree 491 s against about 760 s at -O1; dse/io/scenario.cpp 14.4 s against 29.0 s) and
# its first pass ran 294 s against 279 s, the same day (docs/reliability.md). Clang (14) compiles the
# ASan tree in about 0.6x GCC 12's CPU time, but its build ran Mapper.EqualsBruteForceOptimum
# 3-4x slower (380 s against 97 s, with or without detect_stack_use_after_return): GCC stays.
#
# Usage: scripts/sanitize.sh [asan|tsan|both]   env: JOBS (default 1), ASAN_DIR, TSAN_DIR
set -euo pipefail
what=${1:-both}
here=$(cd "$(dirname "$0")/.." && pwd)
jobs=${JOBS:-1}
asan_dir=${ASAN_DIR:-$here/build/asan}
tsan_dir=${TSAN_DIR:-$here/build/tsan}
supp=$here/scripts/sanitizers
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# Keep OpenMPI plugins loaded to the end so LSan can name (and suppress) their one-time
# allocations; the slow unwinder walks through the uninstrumented MPI libraries.
export OMPI_MCA_mca_base_component_disable_dlclose=1

if [ "$what" = asan ] || [ "$what" = both ]; then
  start=$(date +%s)
  cmake --preset asan -B "$asan_dir" -DDSE_WERROR=ON >/dev/null
  cmake --build "$asan_dir" -j"$jobs"
  export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:suppressions=$supp/ubsan.supp"
  # Three passes. Tests whose processes never call MPI_Init record each allocation's stack with the
  # frame-pointer unwinder (the build keeps frame pointers); the slow unwinder made them 3-10x slower
  # (Mapper.EqualsBruteForceOptimum 99 s -> 23 s, cli_platform_json 58 s -> 25 s). Leak-checked
  # tests labelled mpi_init keep the slow unwinder: only it walks through OpenMPI's uninstrumented
  # libraries far enough for the lsan.supp entries to name them (with the fast one each stack ends
  # in an unnamed plugin frame). A test that starts MPI without the label fails the first pass with
  # an unnamed leak, so the split cannot hide one.
  # sanitize_options LEAKS UNWIND: ASAN_OPTIONS/LSAN_OPTIONS for a pass, leak checks on (1) or off
  # (0), fast (1) or slow (0) unwinder.
  sanitize_options() {
    export ASAN_OPTIONS="detect_leaks=$1:abort_on_error=1:fast_unwind_on_malloc=$2:detect_stack_use_after_return=1"
    export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0:fast_unwind_on_malloc=$2"
  }
  sanitize_options 1 1
  (cd "$asan_dir" && ctest -LE 'known_gap|mpi_init' -E '^cli_validate_json$' --output-on-failure -j"$jobs")
  # The mpi_init tests in two passes. A process that calls MPI_Init leaves some 3,400 one-time
  # allocations of OpenMPI's that LSan must match against lsan.supp at exit, through the slow
  # unwinder: a failing `dse run` took 3.5 s with leak checks, 0.7 s without (the run itself 0.4 s
  # in the plain build). So the leak-checked pass is the set that covers the MPI paths of dse
  # (run, gathers, collective HDF5 writes, checkpoints, the samplers over ranks); the others run
  # with ASan and UBSan but without leak checks, and their code runs leak-checked in one process
  # in the first pass (scenario errors, resume, overrides, chips).
  mpi_leak_checked='^(mpi_quickstart_.*|mpi_context_all_gather_np[0-9]|mpi_binding_warning|mpi_identity_(exhaustive|random|nsga2|nsga2_islands))$'
  mpi_left_out='mpi_(resume_after_faults|output_faults)_np4|mpi_rank_failures_np3|results_current|report_browser|(served|next_gen_chip)_points_equal_dse_eval|chip_points_equal_single_commands'
  export DSE_IDENTITY_CONFIGS="1 1,2 2,3 1"
  sanitize_options 1 0
  (cd "$asan_dir" && ctest -L mpi_init -LE known_gap -R "$mpi_leak_checked" --output-on-failure -j"$jobs")
  sanitize_options 0 1
  (cd "$asan_dir" && ctest -L mpi_init -LE known_gap \
    -E "$mpi_leak_checked|^($mpi_left_out)\$" --output-on-failure -j"$jobs")
  unset DSE_IDENTITY_CONFIGS
  unset ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS
  echo "asan+ubsan: clean in $(( $(date +%s) - start )) s"
fi

if [ "$what" = tsan ] || [ "$what" = both ]; then
  start=$(date +%s)
  cmake --preset tsan -B "$tsan_dir" -DDSE_WERROR=ON >/dev/null
  cmake --build "$tsan_dir" -j"$jobs" --target test_dse_run_local dse
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:ignore_noninstrumented_modules=1:history_size=7:suppressions=$supp/tsan.supp"
  "$tsan_dir/tests/dse/test_dse_run_local"
  out=$(mktemp -d /tmp/dse_tsan.XXXXXX)
  "$tsan_dir/dse/dse" run "$here/tests/mpi/sweep.yaml" -o "$out/sweep.h5" --threads 2
  rm -rf "$out"
  unset TSAN_OPTIONS
  echo "tsan: clean in $(( $(date +%s) - start )) s"
fi
