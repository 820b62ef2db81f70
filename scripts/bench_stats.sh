# shellcheck shell=bash
# Statistics of the bench scripts (sourced by bench_scaling.sh and bench_threads.sh): numbers on
# standard input, separated by spaces or newlines.
median() { tr -s ' \t' '\n' | grep -v '^$' | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
range() { tr -s ' \t' '\n' | grep -v '^$' | sort -g | awk 'NR == 1 {lo = $1} {hi = $1} END {printf "%.2f-%.2f", lo, hi}'; }
