// Hypervolume indicator: the measure of the region dominated by a point set and
// bounded by a reference point. Exact in any dimension; 2-D is an O(n log n) sweep,
// higher dimensions use recursive slicing along the last objective (HSO, roughly
// O(n^(d-1) log n): fine for the few hundred points of a population or front).
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
