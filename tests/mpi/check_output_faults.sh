#!/usr/bin/env bash
# Output faults (issue 11): a read-only output directory and a full disk. In every case
# the run must end within the time limit (no rank left hanging) with exit code 1 and one
# line on standard error naming the file, leave no OUT.h5.partial or other new file, and
# leave the result of an earlier run (OUT.h5) byte-identical.
#
#  - read-only: the directory holding OUT.h5 is mode 555 (and, second case, OUT.h5 is to
#    go into a missing subdirectory of it). Root ignores permissions, so when run as root
#    the whole mpirun runs as user nobody (setpriv), from a scratch copy of dse under /tmp
#    that nobody can read.
#  - full disk: every rank runs under RLIMIT_FSIZE (ulimit -f) with SIGXFSZ ignored, so a
#    write past the limit fails with EFBIG the way a full disk fails with ENOSPC; this needs
#    no mount privilege (CI containers). Limits: 0 (the first write fails), 256 KiB, 2 MiB
#    and 90% of the finished file (the last writes fail). The shared-memory transport is
#    off (btl self,tcp) because its backing files would hit the limit inside MPI_Init.
#
#  - full disk during --resume: exit code 1, one line, the checkpoint OUT.h5.partial is
#    kept, and a later --resume completes with the same result as an uninterrupted run.
#
# usage: check_output_faults.sh DSE MPIRUN SCENARIO WORKDIR RANKS PYTHON COMPARE_PY
set -u
dse=$1 mpirun=$2 scenario=$3 work=$4 ranks=${5:-2} python=${6:-/usr/bin/python3} compare=$7
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
failed=0
mpi=("$mpirun" -q -np "$ranks" --oversubscribe)

# check NAME DIR RC STDERR_FILE EARLIER_COPY LISTING_BEFORE PATH_IN_MESSAGE
runtime_notes='^,?mca_[a-z]+_|^\[warn\] Epoll '
check() {
  local name=$1 dir=$2 rc=$3 err=$4 earlier=$5 before=$6 path=$7 fail=0
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then echo "FAIL $name: timed out (a rank hung)"; fail=1; fi
  if [ "$rc" != 1 ]; then echo "FAIL $name: exit code $rc, expected 1"; fail=1; fi
  # OpenMPI prints its own notes: OMPIO on a failed write ("mca_fbtl_posix_pwritev: error in
  # writev:File too large", ",mca_io_ompio_file_set_size: ..."), and now and then its event
  # library while MPI_Abort tears the job down ("[warn] Epoll MOD(1) on fd 26 failed. ...
  # Bad file descriptor", seen once in a 4-rank run); they are not ours.
  grep -vE "$runtime_notes" "$err" >"$err.own"
  mv "$err.own" "$err"
  local lines
  lines=$(wc -l <"$err")
  if [ "$lines" != 1 ]; then echo "FAIL $name: $lines lines on stderr, expected 1:"; cat "$err"; fail=1; fi
  if ! grep -qF "$path" "$err"; then echo "FAIL $name: the error does not name $path"; fail=1; fi
  if ! cmp -s "$earlier" "$dir/out.h5"; then echo "FAIL $name: the earlier out.h5 changed"; fail=1; fi
  if [ "$(ls -A "$dir")" != "$before" ]; then
    echo "FAIL $name: files left behind: $(ls -A "$dir" | tr '\n' ' ')"
    fail=1
  fi
  if [ "$fail" = 0 ]; then echo "ok $name: $(cat "$err")"; else failed=1; fi
}

# An earlier result to protect.
timeout 300 "${mpi[@]}" "$dse" run "$scenario" -o earlier.h5 --threads 1 --no-progress >/dev/null 2>earlier.err ||
  { echo "FAIL: reference run"; cat earlier.err; exit 1; }
size=$(stat -c %s earlier.h5)

# 1. Read-only output directory.
ro=$(mktemp -d /tmp/dse_ro_faults.XXXXXX)
chmod 755 "$ro"
cp "$dse" "$ro/dse" && cp "$scenario" "$ro/scenario.yaml" && mkdir "$ro/out" && cp earlier.h5 "$ro/out/out.h5"
chmod 755 "$ro/dse" && chmod 644 "$ro/scenario.yaml" "$ro/out/out.h5" && chmod 555 "$ro/out"
as_user=()
if [ "$(id -u)" = 0 ]; then
  command -v setpriv >/dev/null || { echo "FAIL: setpriv (util-linux) is needed to drop root"; exit 1; }
  # mpirun's session directory goes in $ro too (TMPDIR, and the test's own OMPI_MCA_orte_tmpdir_base,
  # tests/CMakeLists.txt, lies in the build tree, where nobody cannot write).
  as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$ro" TMPDIR="$ro" OMPI_MCA_orte_tmpdir_base="$ro")
  # Sanitizer suppression files named in *SAN_OPTIONS (scripts/sanitize.sh) sit in the
  # checkout, which nobody cannot read when the clone lies under a 0700 directory (mktemp -d):
  # the run as nobody gets readable copies beside its dse.
  for var in ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS; do
    val=${!var:-}
    [[ $val =~ (^|:)suppressions=([^:]*) ]] || continue
    supp=${BASH_REMATCH[2]}
    cp "$supp" "$ro/$var.supp" && chmod 644 "$ro/$var.supp"
    as_user+=("$var=${val/"suppressions=$supp"/"suppressions=$ro/$var.supp"}")
  done
  chmod 1777 "$ro"  # mpirun's session directory, as nobody
fi
before=$(ls -A "$ro/out")
for target in out/out.h5 out/sub/out.h5; do
  (cd "$ro" && timeout 120 "${as_user[@]}" "${mpi[@]}" ./dse run scenario.yaml -o "$target" --threads 1 \
     --no-progress >/dev/null 2>"$work/ro.err")
  check "read-only directory, -o $target, $ranks ranks" "$ro/out" $? "$work/ro.err" earlier.h5 "$before" \
    "$(dirname "$target")"
done
chmod -R u+w "$ro/out" && rm -rf "$ro"

# 2. Full disk (RLIMIT_FSIZE on every rank).
mkdir full && cp earlier.h5 full/out.h5
before=$(ls -A full)
for kib in 0 256 2048 $((size * 9 / 10 / 1024)); do
  timeout 120 "${mpi[@]}" --mca btl self,tcp bash -c 'trap "" XFSZ; ulimit -f "$1"; shift; exec "$@"' limit "$kib" \
    "$dse" run "$scenario" -o full/out.h5 --threads 1 --no-progress >/dev/null 2>full.err
  check "disk full after $kib KiB, $ranks ranks" full $? full.err earlier.h5 "$before" full/out.h5
done

# 3. Full disk during --resume: the checkpoint (OUT.h5.partial) is kept, and a later
#    --resume completes with the result of an uninterrupted run.
mkdir resume && cd resume || exit 1
# The larger variant of the sweep that check_resume.sh uses, so that the run lasts a few seconds.
sed 's/{log: \[1.0e12, 128.0e12, 4\]}/{log: [1.0e12, 128.0e12, 8]}/; s/{log: \[50.0e12, 1000.0e12, 4\]}/{log: [50.0e12, 1000.0e12, 8]}/' \
  "$scenario" >big.yaml
timeout 300 "${mpi[@]}" "$dse" run big.yaml -o ref.h5 --threads 1 --no-progress >/dev/null 2>ref.err ||
  { echo "FAIL: reference run of big.yaml"; cat ref.err; failed=1; }
"${mpi[@]}" "$dse" run big.yaml -o r.h5 --threads 1 --no-progress --checkpoint-interval 0.05 >/dev/null 2>term.err &
job=$!
for _ in $(seq 1 1000); do  # stop it as soon as the file appears (the run lasts ~2 s)
  [ -f r.h5.partial ] && break
  sleep 0.01
done
kill -TERM $(pgrep -f "^$dse run big.yaml -o r.h5") 2>/dev/null
wait $job
rc=$?
if [ "$rc" != 130 ] || [ ! -f r.h5.partial ]; then
  echo "FAIL: could not make a checkpoint to resume (exit code $rc)"; cat term.err; failed=1
else
  kib=$(( $(stat -c %s r.h5.partial) / 1024 + 128 ))  # room for a little more, not for the rest
  timeout 120 "${mpi[@]}" --mca btl self,tcp bash -c 'trap "" XFSZ; ulimit -f "$1"; shift; exec "$@"' limit "$kib" \
    "$dse" run --resume r.h5 --threads 1 --no-progress >/dev/null 2>full.err
  rc=$?
  grep -vE "$runtime_notes" full.err >full.own
  if [ "$rc" != 1 ] || [ "$(wc -l <full.own)" != 1 ] || [ ! -f r.h5.partial ] || [ -e r.h5 ]; then
    echo "FAIL resume on a full disk: exit code $rc (expected 1), stderr:"; cat full.err; ls -A; failed=1
  else
    echo "ok resume on a full disk, $ranks ranks: $(cat full.own)"
    timeout 300 "${mpi[@]}" "$dse" run --resume r.h5 --threads 1 --no-progress >/dev/null 2>resume.err ||
      { echo "FAIL: --resume after freeing space"; cat resume.err; failed=1; }
    "$python" "$compare" ref.h5 r.h5 || { echo "FAIL: resumed result differs"; failed=1; }
  fi
fi
cd ..

[ "$failed" = 0 ] && echo "read-only directory and full disk: clear error, nothing left behind, earlier result intact"
exit $failed
