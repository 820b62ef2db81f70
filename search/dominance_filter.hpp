// Exact non-dominated filtering of a whole set at once, in about O(n log n) on
// the data a design sweep produces, where inserting points one by one into a
// list costs O(n x archive).
//
// Rows are `stride` doubles each (row-major), every column minimised. Row q
// *removes* row p when q <= p in every column and q < p in at least one of the
// first `strict_columns` columns. With strict_columns == stride this is Pareto
// dominance; with the objectives first and the constraint metrics after it is
// the constraint-robust rule of ConstraintArchive (rows whose objectives are
// equal never remove each other, whatever their metrics).
//
// Method: the relation is a strict partial order, and q removes p implies q < p
// lexicographically, so rows are visited in lexicographic order and each row is
// checked only against the rows kept so far (which are final: sort-filter-skyline).
// The kept rows live in a k-d tree built once over all rows (median splits on the
// widest column) in which a node knows the componentwise minimum of its kept rows;
// a query descends only into nodes whose minimum is <= the row in every column,
// and stops at the first remover. Rows equal in every column share one decision.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace dse::search {

// Positions (ascending) of the rows no other row removes. Values must not be NaN
// (std::invalid_argument); keys.size() must be a multiple of stride (stride >= 1,
// 1 <= strict_columns <= stride).
std::vector<std::size_t> nondominated_rows(std::span<const double> keys, std::size_t stride,
                                           std::size_t strict_columns);
// The same for keys the caller knows hold no NaN (a ConstraintArchive's, all finite: make_key
// refuses others), without the scan of every value; the shape is still checked. NaN values give
// an unspecified answer.
std::vector<std::size_t> nondominated_rows_no_nan(std::span<const double> keys, std::size_t stride,
                                                  std::size_t strict_columns);

// Positions (ascending) of the rows of `candidates` that no row of `removers` removes
// (same columns and rule). Exact merge of archives that are each already free of
// removed rows: a row of archive A belongs to minimal(A u B) iff no row of B removes it.
// Copies of a row count once on either side, and a side already in lexicographic order
// (distinct_rows' values) is not sorted again; nor are the rows of distinct_rows and
// nondominated_rows.
std::vector<std::size_t> rows_not_removed_by(std::span<const double> candidates, std::span<const double> removers,
                                             std::size_t stride, std::size_t strict_columns);

// The distinct rows of `keys` (rows equal in every column are one; -0.0 equals 0.0) in
// lexicographic order, `values` (stride values each), and for each row of `keys` the position
// of its value among them, `of_row`. Every filter here gives rows equal in every column one
// decision, and one copy of a remover removes what all its copies remove: a set of design points
// often holds many copies of one key (knobs a saturated model ignores), which the filters then
// handle once. Values must not be NaN (std::invalid_argument); keys.size() a multiple of stride.
struct DistinctRows {
  std::vector<double> values;
  std::vector<std::size_t> of_row;
};
DistinctRows distinct_rows(std::span<const double> keys, std::size_t stride);

// The same set by brute force, O(n^2): the reference for tests and tiny inputs.
std::vector<std::size_t> nondominated_rows_brute_force(std::span<const double> keys, std::size_t stride,
                                                       std::size_t strict_columns);

}  // namespace dse::search
