// The per-point tables of a result file (docs/results-format.md), for each archived point (or
// each Pareto point when the archive is larger than kSheetArchiveLimit), from point_details.hpp:
//   /mapping_sheets  one row per layer: what it costs and how it was mapped (a loop nest, folds
//                    on an array, a kernel), its repeats and fusion group
//   /risk_items      the items behind each point's engineering risk
//   /step_breakdown  each point's step by layer type: time, share, FLOPs, MFU, stall fraction
//   /serving_curves  each served point's latencies under rising load
//   /roofs           the compute and memory roofs of each hardware variant of those points
// Rank 0 computes them (its threads over the points) and writes them; collective over the context.
#pragma once

#include <cstdint>
#include <vector>

#include "dse/driver/context.hpp"
#include "dse/h5/h5.hpp"
#include "dse/h5/results.hpp"
#include "dse/io/scenario.hpp"
#include "search/design_space.hpp"

namespace dse {

inline constexpr std::size_t kSheetArchiveLimit = 10000;

// archive: rank 0's; threads: rank 0's TBB threads.
void write_point_details(hid_t file, Context& ctx, const Scenario& scenario, const search::DesignSpace& space,
                         const std::vector<PointRecord>& archive, std::uint64_t archive_size,
                         const std::vector<std::uint64_t>& pareto, int threads);

}  // namespace dse
