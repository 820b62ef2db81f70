#!/usr/bin/env bash
# Failures and signals on one rank of a distributed run (issue 58 items 7 and 8). Before, an error
# raised on some ranks only left the others waiting in the next collective call for a rank that had
# thrown: a point whose energy overflowed hung 2 ranks at 100% CPU (one in MPI_Allreduce, one in
# the HDF5 close barrier), and SIGTERM was ignored outside the evaluation.
#
#  1. A failure injected on one rank (DSE_TEST_FAULT=PHASE:RANK, dse/driver/agree.hpp) in each
#     phase -- evaluation, checkpoint, merge, final write, compression -- ends every rank within
#     10 s (the timeout fails the test) with exit code 1 and one line on stderr naming it.
#  2. A point whose figures overflow double (energy_per_byte_j: 1e308) on some rank: exit code 2,
#     one line naming the point, no file left.
#  3. SIGTERM raised on one rank in the merge, the final write, the compression and the printing
#     of the shortlist (DSE_TEST_FAULT=PHASE:RANK:signal): exit code 130, one line; the file kept
#     for --resume, which ends with the result of an uninterrupted run (after the printing the
#     result is complete).
#  4. SIGTERM to scripts/mpirun_stoppable.sh (mpirun itself turns SIGTERM into exit code 1):
#     exit code 130, the checkpoint kept, --resume completes.
# usage: check_rank_failures.sh DSE MPIRUN SCENARIO WORKDIR RANKS PYTHON COMPARE_PY STOPPABLE
set -u
dse=$1 mpirun=$2 scenario=$3 work=$4 ranks=$5 python=$6 compare=$7 stoppable=$8
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
failed=0
last=$((ranks - 1))
mpi=("$mpirun" -q -np "$ranks" --oversubscribe)
runtime_notes='^,?mca_[a-z]+_|^\[warn\] Epoll '

# expect NAME RC_WANTED TEXT_WANTED: checks $rc and err (one line of our own, holding TEXT_WANTED).
expect() {
  local name=$1 want_rc=$2 want_text=$3 fail=0
  grep -vE "$runtime_notes" err >err.own
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then echo "FAIL $name: not ended within 10 s (a rank hung)"; fail=1; fi
  if [ "$rc" != "$want_rc" ]; then echo "FAIL $name: exit code $rc, expected $want_rc"; fail=1; fi
  if [ "$(wc -l <err.own)" != 1 ]; then echo "FAIL $name: $(wc -l <err.own) lines on stderr, expected 1:"; cat err.own; fail=1; fi
  if ! grep -qF -- "$want_text" err.own; then echo "FAIL $name: stderr does not say '$want_text':"; cat err.own; fail=1; fi
  if [ "$fail" = 0 ]; then echo "ok $name: $(cat err.own)"; else failed=1; fi
}

# The sweep with 8 batch sizes (3,072 points: 192 chunks of 16, so every rank evaluates some).
sed -E '/^batch_sizes:/,/\]/c\batch_sizes: [1, 2, 4, 8, 16, 32, 64, 128]' "$scenario" >small.yaml
scenario=small.yaml
timeout 120 "${mpi[@]}" "$dse" run "$scenario" -o ref.h5 --threads 1 --no-progress >/dev/null 2>ref.err ||
  { echo "FAIL: reference run"; cat ref.err; exit 1; }

# 1. Injected failures.
for fault in "evaluate:$last" "evaluate:0" "checkpoint:$last" "merge:$last" "write:$last" "compress:0"; do
  rm -f out.h5*
  DSE_TEST_FAULT=$fault timeout 10 "${mpi[@]}" "$dse" run "$scenario" -o out.h5 --threads 1 --no-progress \
    >/dev/null 2>err
  rc=$?
  expect "failure in $fault, $ranks ranks" 1 "dse run: injected failure in ${fault%%:*} on rank ${fault##*:} (DSE_TEST_FAULT)"
  [ ! -e out.h5 ] && [ ! -e out.h5.lock ] || { echo "FAIL failure in $fault: out.h5 or its lock left"; failed=1; }
done
# A checkpoint kept by a failure after the last round resumes to the uninterrupted result.
rm -f out.h5*
DSE_TEST_FAULT="merge:$last" timeout 10 "${mpi[@]}" "$dse" run "$scenario" -o out.h5 --threads 1 --no-progress \
  >/dev/null 2>err
timeout 60 "${mpi[@]}" "$dse" run --resume out.h5 --threads 1 --no-progress >/dev/null 2>err &&
  "$python" "$compare" ref.h5 out.h5 >/dev/null || { echo "FAIL: --resume after a failure in the merge"; cat err; failed=1; }

# 2. A point whose figures overflow.
sed 's/energy_per_byte_j: 7.0e-12/energy_per_byte_j: 1.0e308/' "$scenario" >overflow.yaml
rm -f out.h5*
timeout 10 "${mpi[@]}" "$dse" run overflow.yaml -o out.h5 --threads 1 --no-progress >/dev/null 2>err
rc=$?
expect "figures past double, $ranks ranks" 2 "energy_per_sample_j is inf; a figure of the scenario is too large"
[ -z "$(ls out.h5* 2>/dev/null)" ] || { echo "FAIL overflow: files left: $(ls out.h5*)"; failed=1; }

# 3. SIGTERM in the phases after the evaluation.
for fault in "merge:$last" "write:$last" "compress:0" "print:0"; do
  rm -f out.h5*
  DSE_TEST_FAULT=$fault:signal timeout 10 "${mpi[@]}" "$dse" run "$scenario" -o out.h5 --threads 1 --no-progress \
    >/dev/null 2>err
  rc=$?
  expect "SIGTERM in ${fault%%:*}, $ranks ranks" 130 "interrupted"
  if [ "${fault%%:*}" = print ]; then
    "$python" "$compare" ref.h5 out.h5 >/dev/null || { echo "FAIL SIGTERM in print: out.h5 incomplete"; failed=1; }
  else
    timeout 60 "${mpi[@]}" "$dse" run --resume out.h5 --threads 1 --no-progress >/dev/null 2>err &&
      "$python" "$compare" ref.h5 out.h5 >/dev/null ||
      { echo "FAIL: --resume after SIGTERM in ${fault%%:*}"; cat err; failed=1; }
  fi
done

# 4. SIGTERM to the wrapper around mpirun, as soon as the checkpoint file appears.
rm -f out.h5*
bash "$stoppable" -q -np "$ranks" --oversubscribe "$dse" run "$scenario" -o out.h5 --threads 1 --no-progress \
  --checkpoint-interval 0.02 >/dev/null 2>err &
job=$!
for _ in $(seq 1 1000); do
  [ -f out.h5.partial ] && break
  sleep 0.01
done
kill -TERM $job
wait $job
rc=$?
if [ -e out.h5 ]; then
  echo "skip SIGTERM to mpirun_stoppable.sh: the run had finished before the signal"
else
  expect "SIGTERM to mpirun_stoppable.sh, $ranks ranks" 130 "interrupted"
  timeout 60 "${mpi[@]}" "$dse" run --resume out.h5 --threads 1 --no-progress >/dev/null 2>err &&
    "$python" "$compare" ref.h5 out.h5 >/dev/null || { echo "FAIL: --resume after SIGTERM to the wrapper"; cat err; failed=1; }
fi

[ "$failed" = 0 ] && echo "failures and signals on one rank: every rank stopped within 10 s with one line"
exit $failed
