// `dse run`'s points on custom chips: a loop-nest chip running any workload (a layer list
// or a model at one phase), and a roofline or systolic chip running a model at one phase
// (costmodel/lowering). Layer lists on roofline and systolic chips keep their own path
// (run.cpp). A mapped operator goes through the rank's memo (dse/io/scenario_chips.hpp
// LoopnestEntry::memo) under the entry's evaluation budget, never a time budget, so a
// point's figures do not depend on the rank, the thread or the machine.
#pragma once

#include <cstdint>
#include <vector>

#include "costmodel/breakdown.hpp"
#include "dse/h5/results.hpp"
#include "dse/io/scenario.hpp"

namespace dse {

// Whether the point (hardware variant, workload) is one of these.
bool is_chip_point(const HardwareEntry& entry, const HardwareVariant& hw, const WorkloadEntry& wl);
// Fills the record's figures (its ids, names and area are the caller's).
void evaluate_chip_point(const HardwareEntry& entry, const HardwareVariant& hw, const WorkloadEntry& wl,
                         std::int64_t batch, PointRecord& r);
// The per-operator rows of the point's mapping sheet (each mapped operator's loop nest).
std::vector<costmodel::LayerBreakdown> chip_layer_breakdown(const HardwareEntry& entry, const HardwareVariant& hw,
                                                            const WorkloadEntry& wl, std::int64_t batch);

}  // namespace dse
