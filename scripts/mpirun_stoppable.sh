#!/usr/bin/env bash
# mpirun, stoppable with a checkpoint: runs `mpirun ARGS...` and turns SIGTERM, SIGINT and SIGHUP
# sent to this script into SIGUSR1 to mpirun, which forwards it to every rank on every node; a
# `dse run` then stops at its next chunk, keeps the last checkpoint in OUT.h5.partial, and the job
# ends with exit code 130 (`dse run --resume OUT.h5` continues).
#
# Why: OpenMPI's mpirun (4.1) turns SIGTERM and SIGINT into an abort of its own -- SIGTERM to the
# ranks, SIGKILL a moment later -- and exits with code 1 whatever the ranks return. SIGUSR1 is
# forwarded as it is (ess_base_forward_signals), and `dse run` treats it as SIGTERM. Under Slurm,
# srun delivers SIGTERM to every rank itself (scripts/slurm/dse.sbatch), and this is not needed.
#
# usage: scripts/mpirun_stoppable.sh [MPIRUN OPTIONS] dse run SCENARIO -o OUT.h5 [...]
#        (MPIRUN in the environment names another launcher; default: mpirun)
set -u
"${MPIRUN:-mpirun}" "$@" &
job=$!
trap 'kill -USR1 "$job" 2>/dev/null' TERM INT HUP
# `wait` returns early (status > 128) when a trapped signal arrives: wait again until mpirun ends.
while :; do
  wait "$job"
  rc=$?
  kill -0 "$job" 2>/dev/null || break
done
exit "$rc"
