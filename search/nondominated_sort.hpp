// Non-dominated sorting under Deb's constrained domination (Deb et al., IEEE TEVC 6(2), 2002):
// a feasible point (violation 0) dominates every infeasible one; two feasible points compare by
// Pareto dominance of their objectives (minimised); two infeasible ones by violation (the lower
// dominates; equal violations tie). Front 0 holds the points nothing dominates, front r + 1 those
// that only points of fronts 0..r dominate. The fronts are a function of the dominance relation
// alone, so every correct algorithm gives the same numbers.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace dse::search {

// The front of each of the n = violation.size() points; `objectives` holds n rows of m values in
// minimisation form (the rows of infeasible points are not read). Feasible points: the efficient
// non-dominated sort with sequential search, ENS-SS (Zhang, Tian, Cheng, Jin, IEEE TEVC 19(2),
// 2015): the points in lexicographic order of their objectives (a point can only be dominated by
// one before it), each put in the first front none of whose members dominates it, the front's
// members compared last-added first. Infeasible points: by distinct violation, after the feasible
// fronts.
[[nodiscard]] std::vector<std::size_t> constrained_fronts(std::span<const double> objectives, std::size_t m,
                                                          std::span<const double> violation);

// The same by Deb's fast non-dominated sort (2002, section III-A), O(m n^2) comparisons of every
// pair: the reference of the tests and the benchmark.
[[nodiscard]] std::vector<std::size_t> constrained_fronts_pairwise(std::span<const double> objectives, std::size_t m,
                                                                   std::span<const double> violation);

}  // namespace dse::search
