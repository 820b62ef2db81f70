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
cp truncated.h5 again.h5.partial
expect resume-truncated "truncated file" "$dse" run --resume again.h5
cmp -s good.h5 keep.h5 || { echo "FAIL: the good result file changed"; fail=1; }
[ "$fail" = 0 ] && echo "truncated, foreign and other-version files refused with one line, exit 1"
exit $fail
