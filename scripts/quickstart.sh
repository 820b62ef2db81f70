#!/usr/bin/env bash
# The README's first command: install what is missing, build, and run the main
# job on the shipped default scenario under mpirun with 2 ranks.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh release
# OpenMPI refuses root unless told; harmless for other users.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p results
# Two ranks, each bound to its half of the cores, with --threads 0: TBB sized to the cores the
# binding gives (OpenMPI's default binds each of 1-2 ranks to one core whatever --threads says).
if [ "$(nproc)" -ge 2 ]; then
  bind=(--map-by "ppr:2:node:PE=$(($(nproc) / 2))" --bind-to core)
else
  bind=(--oversubscribe --bind-to none)
fi
mpirun -q -np 2 "${bind[@]}" build/release/dse/dse run scenarios/quickstart.yaml -o results/quickstart.h5 --threads 0
# The review artifacts: index.html, report.md and the figures, from the HDF5 alone.
build/release/dse/dse report results/quickstart.h5 -o results/quickstart.report
