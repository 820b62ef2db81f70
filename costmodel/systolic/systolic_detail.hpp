// Internals shared by the two SCALE-Sim compatible implementations of the
// systolic-array model (systolic.cpp: reference replay; systolic_fast.cpp:
// fold-level closed forms). Not part of the public API.
#pragma once

#include <cstdint>

#include "costmodel/systolic/systolic.hpp"

namespace dse::costmodel::detail {

// Rows of one fold of SCALE-Sim's demand matrices.
std::int64_t scalesim_fold_lines(const SystolicArray& a, const FoldPlan& p);

// Folds, mapping efficiency, compute utilisation, MACs and the three SRAM
// access counts (closed forms shared by every model).
void fill_fold_statistics(const SystolicArray& a, const LoweredShape& s, const FoldPlan& p,
                          std::int64_t fold_lines, SystolicResult& r);

}  // namespace dse::costmodel::detail
