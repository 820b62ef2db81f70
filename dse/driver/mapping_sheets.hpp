// The per-point tables of a result file (docs/results-format.md), for each archived point (or
// each Pareto point when the archive is larger than kSheetArchiveLimit), from point_details.hpp:
//   /mapping_sheets  one row per layer: what it costs and how it was mapped (a loop nest, folds
//                    on an array, a kernel), its repeats and fusion group
//   /risk_items      the items behind each point's engineering risk
//   /step_breakdown  each point's step by layer type: time, share, FLOPs, MFU, stall fraction
//   /serving_curves  each served point's latencies under rising load
//   /roofs           the compute and memory roofs of each hardware variant of those points
// Every rank computes them for the points of its part of the archive (its threads over the points)
// and writes them at their rows, so the rows are in index order for any rank count; the roofs of
// every variant met are computed by rank 0 from the variants all ranks met. Collective.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "dse/driver/context.hpp"
#include "dse/h5/h5.hpp"
#include "dse/h5/results.hpp"
#include "dse/io/scenario.hpp"
#include "search/design_space.hpp"

namespace dse {

inline constexpr std::size_t kSheetArchiveLimit = 10000;

// archive: this rank's part of the archive (ordered by index, the parts in rank order making the
// whole); pareto: every Pareto index, sorted; threads: this rank's TBB threads.
void write_point_details(hid_t file, Context& ctx, const Scenario& scenario, const search::DesignSpace& space,
                         std::span<const PointRecord> archive, std::uint64_t archive_size,
                         const std::vector<std::uint64_t>& pareto, int threads);

}  // namespace dse
