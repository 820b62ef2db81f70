// Internals shared by the two SCALE-Sim compatible implementations of the
// systolic-array model (systolic.cpp: reference replay; systolic_fast.cpp:
// fold-level closed forms). Not part of the public API.
#pragma once

#include <cstdint>

#include "costmodel/systolic/systolic.hpp"

namespace dse::costmodel::detail {

// Rows of one fold of SCALE-Sim's demand matrices.
std::int64_t scalesim_fold_lines(const SystolicArray& a, const FoldPlan& p);

// Elements of the prefetch matrix SCALE-Sim's compute/systolic_compute_{ws,os,is}.py hands
// an operand's read buffer in USER mode: the operand split into folds along its array
// dimension, each fold padded with null requests to the full array side (rows or
// columns), so row_folds x rows (or col_folds x cols) times the other dimension. The read
// buffer (memory/read_buffer.py, set_fetch_matrix) cuts this many elements, padding
// included, into lines of Bandwidth words, and its first prefetch fetches
// min(ceil(active half / Bandwidth), lines) whole lines.
std::int64_t scalesim_prefetch_elems(const SystolicArray& a, const LoweredShape& s, const FoldPlan& p, bool ifmap);

// Folds, mapping efficiency, compute utilisation, MACs and the three SRAM
// access counts (closed forms shared by every model).
void fill_fold_statistics(const SystolicArray& a, const LoweredShape& s, const FoldPlan& p,
                          std::int64_t fold_lines, SystolicResult& r);

}  // namespace dse::costmodel::detail
