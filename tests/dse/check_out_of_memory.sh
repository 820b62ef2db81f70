#!/usr/bin/env bash
# A run that runs out of memory (an address-space limit, ulimit -v) stops with one line naming the
# failure and exit 1, keeps its last checkpoint, and `dse run --resume` without the limit ends with
# the result of an uninterrupted run. Before, std::bad_alloc escaped every handler: std::terminate's
# abort (exit 134) with the C++ runtime's text (the checkpoint survived that too).
# Skipped (exit 77) under the sanitizers, whose shadow memory does not fit any such limit.
# usage: check_out_of_memory.sh DSE SCENARIO WORKDIR
set -u
dse=$1 scenario=$2 work=$3
if [ -n "${ASAN_OPTIONS:-}${TSAN_OPTIONS:-}" ]; then
  echo "skipped: an address-space limit and a sanitizer's shadow memory do not go together"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail=0
# 500 MB of address space: MPI, TBB and the first checkpoints fit, the million-point archive does
# not (it runs in 800 MB). Checkpoints fall every --checkpoint-interval seconds of work: with the
# default 2 s the run failed (at 2.1 s) before its first one, and with 0.5 s it did too on a loaded
# machine (the limit is reached after a fixed amount of work, the interval is wall time), so the
# test checkpoints every 0.1 s of work (an interval of 0 is refused).
(ulimit -v 500000; "$dse" run "$scenario" -o oom.h5 --store archive --threads 1 --no-progress \
  --checkpoint-interval 0.1 >/dev/null 2>err)
rc=$?
[ "$rc" = 1 ] || { echo "FAIL: exit code $rc under the limit, expected 1"; fail=1; }
head -n 1 err | grep -q "^dse run: internal error on rank 0: std::bad_alloc; the last checkpoint is kept in oom.h5.partial (dse run --resume oom.h5 continues from it)$" ||
  { echo "FAIL: the first line on stderr does not name the failure:"; head -n 3 err; fail=1; }
[ -f oom.h5.partial ] || { echo "FAIL: no checkpoint kept (oom.h5.partial)"; fail=1; }
"$dse" run --resume oom.h5 --threads 1 --no-progress >/dev/null 2>err || { echo "FAIL: --resume"; cat err; fail=1; }
"$dse" run "$scenario" -o whole.h5 --store archive --threads 1 --no-progress >/dev/null 2>err ||
  { echo "FAIL: the uninterrupted run"; cat err; fail=1; }
"$dse" shortlist oom.h5 --format csv > resumed.csv && "$dse" shortlist whole.h5 --format csv > whole.csv &&
  cmp -s resumed.csv whole.csv || { echo "FAIL: the resumed run's shortlist differs from the uninterrupted run's"; fail=1; }
# Too little address space for MPI to start (issue 58 item 18: `ulimit -v 200M` crashed inside
# MPI_Init, SIGSEGV): one line saying so, exit 1, nothing written.
(ulimit -v 200000; "$dse" run "$scenario" -o tiny.h5 --no-progress >/dev/null 2>err)
rc=$?
[ "$rc" = 1 ] && [ "$(wc -l < err)" = 1 ] &&
  grep -q "^dse run: cannot start MPI: the address-space limit (ulimit -v 200000 KiB) leaves less than the" err &&
  [ -z "$(ls tiny.h5* 2>/dev/null)" ] ||
  { echo "FAIL: ulimit -v 200000: exit code $rc, stderr:"; head -c 600 err; fail=1; }
[ "$fail" = 0 ] && echo "out of memory: one line, exit 1, checkpoint kept, resumed to the uninterrupted result"
exit $fail
