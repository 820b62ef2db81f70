#!/usr/bin/python3
"""Assert that DSE result files hold identical content.

Every dataset must be equal element by element (bit for bit for floats) and
every root attribute equal, except the attributes that describe the run rather
than its results: start_time, wall_time_s, ranks, threads, checkpoint_rounds
(round sizes follow the measured speed; the rows they hold do not), and the
attempt counters checkpoint_attempt, checkpoint_state_attempt and
checkpoint_archive_attempt (how many times the run was started or resumed), and
checkpoint_archive_round (the round whose archive checkpoint, deleted from the
finished output, was written last: a resume that rebuilt a lost one writes it afresh
in its first round), and checkpoint_archive_rows (the rows appended to that checkpoint:
the points that entered a local archive in each round, which depends on how the points
fell into rounds; seen with tests/mpi/overrides.yaml, whose few slow points make rounds
of a few points each).
usage: compare_h5.py REFERENCE.h5 OTHER.h5 [...]
"""
import sys

import h5py
import numpy as np

RUN_ATTRIBUTES = {"start_time", "wall_time_s", "ranks", "threads", "checkpoint_rounds", "checkpoint_attempt",
                  "checkpoint_state_attempt", "checkpoint_archive_attempt", "checkpoint_archive_round",
                  "checkpoint_archive_rows"}


def datasets(f):
    out = {}
    f.visititems(lambda name, obj: out.__setitem__(name, obj[()]) if isinstance(obj, h5py.Dataset) else None)
    return out


def compare(ref_path, other_path):
    problems = []
    with h5py.File(ref_path, "r") as a, h5py.File(other_path, "r") as b:
        da, db = datasets(a), datasets(b)
        if sorted(da) != sorted(db):
            problems.append(f"dataset names differ: {sorted(da)} vs {sorted(db)}")
        for name in sorted(set(da) & set(db)):
            x, y = da[name], db[name]
            if x.dtype != y.dtype or x.shape != y.shape:
                problems.append(f"/{name}: type or shape differs")
            elif x.tobytes() != y.tobytes():
                problems.append(f"/{name}: contents differ")
        ka = set(a.attrs) - RUN_ATTRIBUTES
        kb = set(b.attrs) - RUN_ATTRIBUTES
        if ka != kb:
            problems.append(f"attribute names differ: {sorted(ka ^ kb)}")
        for k in sorted(ka & kb):
            if not np.array_equal(np.asarray(a.attrs[k]), np.asarray(b.attrs[k])):
                problems.append(f"attribute {k} differs")
        if len(da.get("points", [])) == 0:
            problems.append("no points")
    return problems


def main(paths):
    if len(paths) < 2:
        print(__doc__)
        return 2
    bad = 0
    for other in paths[1:]:
        problems = compare(paths[0], other)
        for p in problems:
            print(f"{other} vs {paths[0]}: {p}")
        bad += len(problems)
    if bad == 0:
        print(f"{len(paths)} files identical (bar run attributes)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
