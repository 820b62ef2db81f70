// /mapping_sheets of a result file: one row per layer of each archived point (or of each
// Pareto point when the archive is larger than kSheetArchiveLimit), with what the layer
// costs and how it was mapped (a loop nest, folds on an array, a kernel). Every text column
// is as wide as its longest value, so a loop nest is never cut. Collective over the context.
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

// Rank 0 evaluates the layer breakdowns of the points (archive: rank 0's) and writes them.
void write_mapping_sheets(hid_t file, Context& ctx, const Scenario& scenario, const search::DesignSpace& space,
                          const std::vector<PointRecord>& archive, std::uint64_t archive_size,
                          const std::vector<std::uint64_t>& pareto);

}  // namespace dse
