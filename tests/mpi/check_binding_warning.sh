#!/usr/bin/env bash
# A rank that mpirun binds to one core, given --threads 8, says so on standard error (issue 59
# item 0: `mpirun -np 1 dse run ... --threads 2` ran both threads on one core and nothing said so).
# usage: check_binding_warning.sh DSE MPIRUN SCENARIO WORKDIR
set -u
dse=$1 mpirun=$2 scenario=$3 work=$4
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
"$mpirun" -q -np 1 --bind-to core "$dse" run "$scenario" -o b.h5 --threads 8 --no-progress >out 2>err ||
  { echo "FAIL: the run"; cat err; exit 1; }
grep -q "^dse run: warning: --threads 8 asks for more threads than the 1 core(s) that rank 0 may run on" err ||
  { echo "FAIL: no warning; stderr:"; cat err; exit 1; }
grep -q "^cores per rank (its CPU binding): 1 (rank 0); threads per rank: 8 (rank 0)" out ||
  { echo "FAIL: the summary does not give the rank's cores:"; grep -i cores out; exit 1; }
echo "one core, --threads 8: warned, summary says 1 core and 8 threads"
