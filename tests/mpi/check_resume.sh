#!/usr/bin/env bash
# Faults during a distributed run, then --resume (issue: nothing lost on a crash):
#  1. SIGTERM to every rank (what a batch system sends) mid-run: each rank stops at its
#     next chunk, the last checkpoint stays in OUT.h5.partial, exit code 130, no OUT.h5;
#  2. kill -9 of one rank mid-run: the job stops (mpirun aborts the others);
#  in both cases `dse run --resume OUT.h5` (with another rank count) completes, and the
#  result equals an uninterrupted run: same /points rows (no point lost or duplicated),
#  /archive, /pareto and attributes bar the run attributes.
# usage: check_resume.sh DSE MPIRUN SCENARIO WORKDIR PYTHON COMPARE_PY RANKS
set -u
dse=$1 mpirun=$2 scenario=$3 work=$4 python=$5 compare=$6 ranks=${7:-2}
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
# A larger variant of the sweep (x 32: 786,432 points) so that the run lasts a few
# seconds even with the batched archive (the x 2 variant finished in ~0.5 s, before
# a SIGTERM could land).
sed 's/{log: \[1.0e12, 128.0e12, 4\]}/{log: [1.0e12, 128.0e12, 16]}/; s/{log: \[50.0e12, 1000.0e12, 4\]}/{log: [50.0e12, 1000.0e12, 16]}/; s/{log: \[25.0e9, 3.2e12, 4\]}/{log: [25.0e9, 3.2e12, 8]}/; s/{log: \[1.0e12, 8.0e12, 4\]}/{log: [1.0e12, 8.0e12, 8]}/' \
  "$scenario" > big.yaml
run() { timeout 300 "$mpirun" -q -np "$1" --oversubscribe "$dse" "${@:2}" --threads 1 --no-progress >/dev/null 2>>log; }
fail=0

run "$ranks" run big.yaml -o ref.h5 || { echo "FAIL: reference run"; exit 1; }

rows_done() {  # checkpointed rows in a partial file, or 0
  "$python" -c "import h5py,sys; print(int(h5py.File(sys.argv[1],'r').attrs['checkpoint_rows']))" "$1" 2>/dev/null || echo 0
}

wait_for_checkpoint() {  # wait until the partial file holds a checkpoint with rows
  for _ in $(seq 1 600); do
    [ -f "$1" ] && [ "$(rows_done "$1")" -gt 0 ] && return 0
    sleep 0.05
  done
  return 1
}

rank_pids() { pgrep -f "^$dse run big.yaml -o $1" ; }

# 1. SIGTERM to every rank.
"$mpirun" -q -np "$ranks" --oversubscribe "$dse" run big.yaml -o term.h5 --threads 1 --no-progress \
  --checkpoint-interval 0.1 >/dev/null 2>term.err &
job=$!
wait_for_checkpoint term.h5.partial || { echo "FAIL: no checkpoint appeared"; fail=1; }
kill -TERM $(rank_pids term.h5) 2>/dev/null
wait $job
rc=$?
[ "$rc" = 130 ] || { echo "FAIL: SIGTERM run exit code $rc, expected 130"; cat term.err; fail=1; }
[ ! -e term.h5 ] || { echo "FAIL: SIGTERM run left a complete-looking term.h5"; fail=1; }
[ -e term.h5.partial ] || { echo "FAIL: no checkpoint file after SIGTERM"; fail=1; }
grep -q "dse run --resume term.h5" term.err || { echo "FAIL: no resume hint on stderr"; cat term.err; fail=1; }
echo "SIGTERM after $(rows_done term.h5.partial) checkpointed rows"
run $((ranks == 2 ? 4 : 2)) run --resume term.h5 || { echo "FAIL: resume after SIGTERM"; fail=1; }
"$python" "$compare" ref.h5 term.h5 || fail=1

# 2. kill -9 of one rank.
"$mpirun" -q -np "$ranks" --oversubscribe "$dse" run big.yaml -o kill.h5 --threads 1 --no-progress \
  --checkpoint-interval 0.1 >/dev/null 2>kill.err &
job=$!
wait_for_checkpoint kill.h5.partial || { echo "FAIL: no checkpoint appeared"; fail=1; }
victim=$(rank_pids kill.h5 | tail -1)
kill -9 "$victim" 2>/dev/null
wait $job
rc=$?
[ "$rc" != 0 ] || { echo "FAIL: the job did not stop after kill -9 of a rank"; fail=1; }
[ ! -e kill.h5 ] || { echo "FAIL: killed run left a complete-looking kill.h5"; fail=1; }
echo "kill -9 after $(rows_done kill.h5.partial) checkpointed rows (job exit code $rc)"
run "$ranks" run --resume kill.h5 || { echo "FAIL: resume after kill -9"; fail=1; }
"$python" "$compare" ref.h5 kill.h5 || fail=1

if [ "$fail" = 0 ]; then
  echo "interrupt, kill and resume: results identical to the uninterrupted run"
else  # what the runs said, so that a failure seen once can be read from the ctest log
  for f in log term.err kill.err; do [ -s "$f" ] && { echo "--- $f (last 20 lines)"; tail -n 20 "$f"; }; done
fi
exit $fail
