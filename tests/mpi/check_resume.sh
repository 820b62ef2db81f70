#!/usr/bin/env bash
# Faults during a distributed run, then --resume (issue: nothing lost on a crash):
#  1. SIGTERM to every rank (what a batch system sends) mid-run: each rank stops at its
#     next chunk, the last checkpoint stays in OUT.h5.partial, exit code 130, no OUT.h5;
#  2. kill -9 of one rank mid-run: the job stops (mpirun aborts the others);
#  3. a partial killed while the output was being finished (after the final archive);
#  4. a partial whose committed archive checkpoint link is gone (rebuilt from /points);
#  in all cases `dse run --resume OUT.h5` (with another rank count) completes, and the
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

# Wait until the partial file holds a checkpoint with rows, polling every 20 ms from one Python
# process (h5py imported once). It was one Python start per poll, ~0.4 s each, and the fault
# then often landed after the last point (up to all 196,608 rows checkpointed, with the whole
# run ~3 s on 2 ranks): a SIGTERM after the run had finished left exit code 0, and the test
# failed once in a full ctest run.
wait_for_checkpoint() {
  "$python" - "$1" <<'PY'
import sys, time
import h5py
deadline = time.time() + 60
while time.time() < deadline:
    try:
        with h5py.File(sys.argv[1], "r") as f:
            if int(f.attrs["checkpoint_rows"]) > 0:
                sys.exit(0)
    except Exception:  # not there yet, or being written
        pass
    time.sleep(0.02)
sys.exit(1)
PY
}

# The job's rank processes: its command line, in this test's directory (the 2- and 4-rank
# tests run the same command lines in other directories).
rank_pids() {
  for pid in $(pgrep -f "^$dse run big.yaml -o $1"); do
    [ "$(readlink "/proc/$pid/cwd")" = "$PWD" ] && echo "$pid"
  done
}

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
cp term.h5.partial lost.h5.partial  # for case 4
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

# 3. Killed while finishing the output (after the final archive: /pareto, the mapping sheets,
#    compression, the rename): a partial holding everything, here the finished reference itself,
#    resumes to the same result (it failed: /pareto existed, or the checkpoints were gone).
cp ref.h5 fin.h5.partial
run "$ranks" run --resume fin.h5 || { echo "FAIL: resume of a finished partial"; fail=1; }
"$python" "$compare" ref.h5 fin.h5 || fail=1

# 4. The archive checkpoint that the counters name lost from the file (seen once after a
#    kill -9): the resume rebuilds the archive from /points, says so on stderr, and ends with the
#    same result. The link is removed by hand from a copy of case 1's partial.
lost=$("$python" - lost.h5.partial <<'PY'
import sys
import h5py
with h5py.File(sys.argv[1], "r+") as f:
    a = f.attrs
    if int(a.get("checkpoint_finished", 0)) == 1:
        sys.exit(0)  # stopped after the final archive: no checkpoint left to lose
    name = "checkpoint_archive_%d" % int(a["checkpoint_archive_round"])
    if int(a.get("checkpoint_archive_attempt", 0)) > 0:
        name += "_a%d" % int(a["checkpoint_archive_attempt"])
    del f[name]
    print(name, int(a["checkpoint_rows"]))
PY
)
timeout 300 "$mpirun" -q -np "$ranks" --oversubscribe "$dse" run --resume lost.h5 --threads 1 --no-progress \
  >/dev/null 2>lost.err || { echo "FAIL: resume after a lost archive checkpoint"; cat lost.err; fail=1; }
if [ -n "$lost" ]; then
  set -- $lost
  want="dse run: warning: the archive checkpoint $1 that the file's counters name is missing (a killed run); the archive was rebuilt from the $2 committed rows of /points"
  grep -qxF "$want" lost.err || { echo "FAIL: no rebuild warning; wanted: $want"; cat lost.err; fail=1; }
  echo "lost $1 after $2 checkpointed rows: rebuilt"
fi
"$python" "$compare" ref.h5 lost.h5 || fail=1

if [ "$fail" = 0 ]; then
  echo "interrupt, kill and resume: results identical to the uninterrupted run"
else  # what the runs said, so that a failure seen once can be read from the ctest log
  for f in log term.err kill.err lost.err; do [ -s "$f" ] && { echo "--- $f (last 20 lines)"; tail -n 20 "$f"; }; done
fi
exit $fail
