// Hypervolume indicator: the measure of the region dominated by a point set and
// bounded by a reference point. Exact in any dimension; 2-D and 3-D are O(n log n)
// sweeps, higher dimensions slice along the objective with the fewest distinct values
// (HSO): one 3-D sweep per distinct value in 4-D (an engineering risk that takes a few
// values costs a few sweeps), O(n^2 log n) at worst.
#pragma once

#include <span>
#include <vector>

#include "search/pareto.hpp"

namespace dse::search {

// points[i] has one value per objective; `senses` says which are maximised (reference
// and points are compared in each objective's sense). Points not strictly better than
// the reference in every objective contribute nothing. Dominated and duplicate points
// are allowed. Throws std::invalid_argument on size mismatches or non-finite values.
double hypervolume(std::span<const std::vector<double>> points, std::span<const double> reference,
                   std::span<const Sense> senses);
// All objectives minimised.
double hypervolume(std::span<const std::vector<double>> points, std::span<const double> reference);

}  // namespace dse::search
