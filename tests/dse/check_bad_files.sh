#!/usr/bin/env bash
# Result files that are truncated, not HDF5, or of another layout version are refused
# with a one-line message and exit code 1 by every command that reads them, and a
# truncated checkpoint is refused by --resume; earlier results stay intact. A missing
# file is bad input (exit 2).
# usage: check_bad_files.sh DSE SCENARIO WORKDIR PYTHON
set -u
dse=$1 scenario=$2 work=$3 python=$4
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail=0
"$dse" run "$scenario" -o good.h5 --no-progress >/dev/null || { echo "FAIL: reference run"; exit 1; }
cp good.h5 keep.h5
head -c 4000 good.h5 > truncated.h5
echo "not an HDF5 file" > text.h5
cp good.h5 v99.h5
"$python" -c "import h5py,sys; f=h5py.File(sys.argv[1],'a'); f.attrs.modify('layout_version', 99)" v99.h5

expect() {  # expect NAME PATTERN COMMAND...: exit 1, one line on stderr matching PATTERN
  local name=$1 pattern=$2
  shift 2
  "$@" >/dev/null 2>err
  local rc=$?
  [ "$rc" = 1 ] || { echo "FAIL $name: exit code $rc, expected 1"; fail=1; }
  [ "$(wc -l < err)" = 1 ] || { echo "FAIL $name: expected one line on stderr:"; cat err; fail=1; }
  grep -q -- "$pattern" err || { echo "FAIL $name: stderr does not say '$pattern':"; cat err; fail=1; }
}
expect shortlist-truncated "truncated file" "$dse" shortlist truncated.h5
expect shortlist-text "file signature not found" "$dse" shortlist text.h5
expect shortlist-v99 "layout version 99 is not supported" "$dse" shortlist v99.h5
expect report-truncated "truncated file" "$dse" report truncated.h5 -o rep_t
expect report-v99 "layout version 99 is not supported" "$dse" report v99.h5 -o rep_v
[ ! -e rep_t/index.html ] || { echo "FAIL: a report was written for a truncated file"; fail=1; }
# A missing file or a directory is bad input: exit 2, one line (shortlist printed HDF5's errno text, exit 1:
# "file read failed: ... errno = 21, error message = 'Is a directory', buf = 0x..." for a directory).
mkdir -p a_directory
for case in "shortlist missing.h5|missing.h5: no such file" "report missing.h5 -o rep_m|missing.h5: no such file" \
            "shortlist a_directory|a_directory: a directory (expected a result file of dse run)" \
            "report a_directory -o rep_d|a_directory: a directory (expected a result file of dse run)"; do
  cmd=${case%%|*} want=${case#*|}
  $dse $cmd >/dev/null 2>err
  rc=$?
  [ "$rc" = 2 ] && [ "$(wc -l < err)" = 1 ] && grep -q "$want" err ||
    { echo "FAIL $cmd: exit code $rc, stderr:"; cat err; fail=1; }
done
# Figures a run never writes (issue 58 item 15: shortlist read a NaN row's absence silently and
# ranked a negative energy best), and an archive with no row (item 14: `dse report` printed a
# 54-line Python traceback).
cp good.h5 nan.h5
cp good.h5 negative.h5
"$python" - nan.h5 negative.h5 <<'PY'
import sys
import h5py
for path, field, value in ((sys.argv[1], "latency_s", float("nan")), (sys.argv[2], "energy_per_sample_j", -1.0)):
    with h5py.File(path, "a") as f:
        rows = f["archive"][...]
        rows[field][1] = value
        f["archive"][...] = rows
PY
expect shortlist-nan "/archive: row 1 (point [0-9]*): latency_s is nan" "$dse" shortlist nan.h5
expect shortlist-negative "energy_per_sample_j is -1" "$dse" shortlist negative.h5
printf '%s\n' 'name: none' 'hardware:' \
  '  - {name: tiny, peak_flops_per_s: 1e12, memory_bandwidth_bytes_per_s: 1e9, memory_capacity_bytes: 1, kernel_overhead_s: 0, energy_per_flop_j: 0, energy_per_byte_j: 0, static_power_w: 0, engineering_risk: 0}' \
  'workloads: [{name: w, layers: [{name: fc, kind: gemm, rows_per_sample: 1, n: 4096, k: 1024}]}]' \
  'batch_sizes: [1]' >none.yaml
"$dse" run none.yaml -o none.h5 --no-progress >/dev/null 2>err || { echo "FAIL: a run with no feasible point"; cat err; fail=1; }
expect report-empty "none.h5: the archive is empty (no evaluated point was feasible); no report to draw" \
  "$dse" report none.h5 -o rep_e
cp truncated.h5 again.h5.partial
expect resume-truncated "truncated file" "$dse" run --resume again.h5
cmp -s good.h5 keep.h5 || { echo "FAIL: the good result file changed"; fail=1; }
[ "$fail" = 0 ] && echo "truncated, foreign and other-version files refused with one line, exit 1"
exit $fail
