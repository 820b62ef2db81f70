#!/usr/bin/env bash
# Every bad scenario in tests/dse/bad gives exactly the one line in NAME.err on
# standard error, exit code 2, and no output file -- with one rank and, when
# MPIRUN is given, with 2 ranks under mpirun (printed once, no rank left hanging;
# -q silences mpirun's own banner about a non-zero exit).
# usage: check_bad_scenarios.sh DSE_BINARY CASES_DIR WORK_DIR [MPIRUN]
set -u
dse=$1 cases=$2 work=$3 mpirun=${4:-}
rm -rf "$work" && mkdir -p "$work"
fail=0
# run_on RANKS SCENARIO OUTPUT: `dse run` with 1 rank, or with 2 under mpirun; stderr in $work/stderr,
# the exit code returned.
run_on() {
  if [ "$1" = 1 ]; then
    "$dse" run "$2" -o "$3" 2>"$work/stderr" >/dev/null
  else
    timeout 60 "$mpirun" -q -np 2 --oversubscribe "$dse" run "$2" -o "$3" 2>"$work/stderr" >/dev/null
  fi
}
rank_counts="1${mpirun:+ 2}"
cd "$cases" || exit 1
for expected in *.err; do
  name=${expected%.err}
  for ranks in $rank_counts; do
    out="$work/$name-$ranks.h5"
    run_on "$ranks" "$name.yaml" "$out"
    rc=$?
    if [ "$rc" != 2 ]; then echo "FAIL $name ($ranks rank(s)): exit code $rc, expected 2"; fail=1; fi
    if ! diff -u "$expected" "$work/stderr"; then echo "FAIL $name ($ranks rank(s)): stderr differs"; fail=1; fi
    if ls "$work/$name-$ranks.h5"* >/dev/null 2>&1; then echo "FAIL $name ($ranks rank(s)): output file created"; fail=1; fi
  done
done
# Bad run options: the same (an infinite --checkpoint-interval ran; a stray word was dropped).
good=$(cd "$(dirname "$0")/../../scenarios" && pwd)/quickstart.yaml
# --threads 65537 aborted inside TBB; --resume X -o Y ignored -o (issue 58 items 6, 18).
for opt in "--checkpoint-interval inf" "--checkpoint-interval 0" "--threads -1" "--threads 65537" "--store some" \
           "--resume-changed-inputs"; do
  "$dse" run "$good" -o "$work/opt.h5" $opt 2>"$work/stderr" >/dev/null
  rc=$?
  [ "$rc" = 2 ] && [ "$(wc -l < "$work/stderr")" = 1 ] && ! ls "$work/opt.h5"* >/dev/null 2>&1 ||
    { echo "FAIL run $opt: exit code $rc, stderr:"; cat "$work/stderr"; fail=1; }
done
"$dse" run --resume "$work/a.h5" -o "$work/b.h5" 2>"$work/stderr" >/dev/null
rc=$?
[ "$rc" = 2 ] && [ "$(wc -l < "$work/stderr")" = 1 ] && grep -q "names another file" "$work/stderr" ||
  { echo "FAIL run --resume a.h5 -o b.h5: exit code $rc, stderr:"; cat "$work/stderr"; fail=1; }
# An output name MPI-IO cannot open (a 232-byte one aborted the job inside OpenMPI's shared-file-pointer
# component) and a preset name past the file system's name limit (std::filesystem threw: the job
# aborted) are refused in one line with exit 2, with 1 rank and under mpirun with 2.
long_name() { head -c "$1" /dev/zero | tr '\0' "$2"; }
printf 'name: long\nseed: 1\nhardware:\n  - {name: s, kind: system, system: %s}\n%s\n' "$(long_name 5000 y)" \
  'workloads: [{name: w, model: llama2-7b}]
batch_sizes: [1]' > "$work/long_system.yaml"
check_long() {  # WHAT EXPECTED_TEXT OUTPUT SCENARIO
  for ranks in $rank_counts; do
    run_on "$ranks" "$4" "$3"
    rc=$?
    [ "$rc" = 2 ] && [ "$(wc -l < "$work/stderr")" = 1 ] && grep -q -- "$2" "$work/stderr" &&
      ! ls "$3"* >/dev/null 2>&1 ||
      { echo "FAIL $1 ($ranks rank(s)): exit code $rc, stderr:"; head -c 600 "$work/stderr"; fail=1; }
  done
}
check_long "240-byte output name" "-o: expected a file name of at most 192 bytes" "$work/$(long_name 240 x).h5" "$good"
check_long "5000-byte system name" "hardware\[0\].system: expected a preset of systems" "$work/ls.h5" \
  "$work/long_system.yaml"
[ "$fail" = 0 ] && echo "all bad scenarios refused as expected"
exit $fail
