// The batch non-dominated filter (k-d tree sort-filter-skyline) against the O(n^2)
// definition, and the batched archive (add/flush, merge) against one-by-one insertion,
// on random inputs full of ties, exact duplicates and repeated indices.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "search/constraint_archive.hpp"
#include "search/dominance_filter.hpp"

namespace dse::search {
namespace {

// n rows of `stride` columns. Styles: 0 small integer grid (ties everywhere), 1 continuous,
// 2 a trade-off (column 1 falls as column 0 rises, most rows survive), 3 one value for all
// (every row equal), 4 grid with redundant columns (a copy of column 0 and a constant).
std::vector<double> make_rows(std::mt19937_64& rng, std::size_t n, std::size_t stride, int style) {
  std::uniform_int_distribution<int> grid(0, 3);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<double> k(n * stride);
  for (std::size_t i = 0; i < n; ++i) {
    double* r = k.data() + i * stride;
    for (std::size_t j = 0; j < stride; ++j) {
      switch (style) {
        case 0: r[j] = grid(rng); break;
        case 1: r[j] = unit(rng); break;
        case 2: r[j] = j == 1 ? 1.0 - r[0] + 0.01 * grid(rng) : unit(rng); break;
        case 3: r[j] = 1.0; break;
        default: r[j] = j == 1 ? r[0] : (j == 2 ? 5.0 : grid(rng)); break;
      }
      if (style != 3 && rng() % 50 == 0) r[j] = -r[j];  // negative values and -0.0
    }
    if (i > 0 && rng() % 6 == 0) {  // an exact duplicate of an earlier row
      const std::size_t src = rng() % i;
      std::copy_n(k.data() + src * stride, stride, r);
    }
  }
  return k;
}

// The candidates (positions, ascending) that no remover removes, by the definition.
std::vector<std::size_t> not_removed_brute_force(const std::vector<double>& cand, const std::vector<double>& rem,
                                                 std::size_t stride, std::size_t strict) {
  std::vector<std::size_t> want;
  for (std::size_t c = 0; c < cand.size() / stride; ++c) {
    bool kept = true;
    for (std::size_t q = 0; q < rem.size() / stride && kept; ++q) {
      bool le = true, lt = false;
      for (std::size_t j = 0; j < stride; ++j) {
        le = le && rem[q * stride + j] <= cand[c * stride + j];
        lt = lt || (j < strict && rem[q * stride + j] < cand[c * stride + j]);
      }
      kept = !(le && lt);
    }
    if (kept) want.push_back(c);
  }
  return want;
}

TEST(DominanceFilter, EqualsBruteForceOnRandomSets) {
  std::mt19937_64 rng(20240611);
  for (int t = 0; t < 600; ++t) {
    const std::size_t stride = 1 + rng() % 8;
    const std::size_t strict = 1 + rng() % stride;
    // Mostly small sets, some large enough for many tree levels.
    const std::size_t n = t % 10 == 0 ? 500 + rng() % 2500 : rng() % 120;
    const int style = static_cast<int>(rng() % 5);
    const std::vector<double> k = make_rows(rng, n, stride, style);
    ASSERT_EQ(nondominated_rows(k, stride, strict), nondominated_rows_brute_force(k, stride, strict))
        << "case " << t << ": n " << n << ", stride " << stride << ", strict " << strict << ", style " << style;
    ASSERT_EQ(nondominated_rows_no_nan(k, stride, strict), nondominated_rows_brute_force(k, stride, strict))
        << "case " << t;
  }
}

// The unchecked entry point still refuses a bad shape (ConstraintArchive::flush calls it).
TEST(DominanceFilter, NoNanEntryChecksTheShape) {
  const std::vector<double> k = {1.0, 2.0, 3.0};
  EXPECT_THROW((void)nondominated_rows_no_nan(k, 2, 1), std::invalid_argument);
  EXPECT_THROW((void)nondominated_rows_no_nan(k, 3, 4), std::invalid_argument);
  EXPECT_THROW((void)nondominated_rows_no_nan(k, 0, 1), std::invalid_argument);
  EXPECT_EQ(nondominated_rows_no_nan(k, 3, 3), std::vector<std::size_t>{0});
}

// rows_not_removed_by (the cross-rank merge of archives, driver_archive.cpp kept_records) against
// its definition by brute force: the candidates that no remover removes, on random sets with ties,
// duplicates and rows present in both sets, candidates and removers each an archive (already free
// of removed rows) or not, and empty sets.
TEST(DominanceFilter, RowsNotRemovedByEqualsBruteForce) {
  std::mt19937_64 rng(20261206);
  for (int t = 0; t < 600; ++t) {
    const std::size_t stride = 1 + rng() % 8;
    const std::size_t strict = 1 + rng() % stride;
    const std::size_t nc = t % 10 == 0 ? 500 + rng() % 2500 : rng() % 120;
    const std::size_t nr = t % 10 == 5 ? 500 + rng() % 2500 : rng() % 120;
    const int style = static_cast<int>(rng() % 5);
    std::vector<double> cand = make_rows(rng, nc, stride, style);
    std::vector<double> rem = make_rows(rng, nr, stride, style);
    for (std::size_t i = 0; i < nc && nr > 0; ++i) {  // some rows in both sets
      if (rng() % 8 == 0) std::copy_n(rem.data() + (rng() % nr) * stride, stride, cand.data() + i * stride);
    }
    auto minimal = [&](const std::vector<double>& k) {
      std::vector<double> out;
      for (std::size_t r : nondominated_rows(k, stride, strict))
        out.insert(out.end(), k.begin() + static_cast<std::ptrdiff_t>(r * stride),
                   k.begin() + static_cast<std::ptrdiff_t>((r + 1) * stride));
      return out;
    };
    if (t % 2 == 1) {  // as the driver uses it: two archives
      cand = minimal(cand);
      rem = minimal(rem);
    }
    const std::vector<std::size_t> want = not_removed_brute_force(cand, rem, stride, strict);
    ASSERT_EQ(rows_not_removed_by(cand, rem, stride, strict), want)
        << "case " << t << ": " << cand.size() / stride << " candidates, " << rem.size() / stride << " removers, stride "
        << stride << ", strict " << strict << ", style " << style;
  }
}

TEST(DominanceFilter, HandMadeCases) {
  // (1,2) removes (2,2); (1,2) and its duplicate both stay; (0,5) trades off.
  const std::vector<double> k = {2, 2, 1, 2, 0, 5, 1, 2};
  EXPECT_EQ(nondominated_rows(k, 2, 2), (std::vector<std::size_t>{1, 2, 3}));
  // Strict on column 0 only: (1, 1) does not remove (1, 2) (equal objective), but
  // (0, 3) does not remove (1, 2) either (worse metric); (0, 1) removes both.
  const std::vector<double> c = {1, 1, 1, 2, 0, 3};
  EXPECT_EQ(nondominated_rows(c, 2, 1), (std::vector<std::size_t>{0, 1, 2}));
  const std::vector<double> d = {1, 1, 1, 2, 0, 1};
  EXPECT_EQ(nondominated_rows(d, 2, 1), (std::vector<std::size_t>{2}));
  EXPECT_TRUE(nondominated_rows(std::vector<double>{}, 3, 1).empty());
  EXPECT_THROW((void)nondominated_rows(std::vector<double>{1, 2, 3}, 2, 1), std::invalid_argument);
  EXPECT_THROW((void)nondominated_rows(std::vector<double>{1, 2}, 2, 3), std::invalid_argument);
  EXPECT_THROW((void)nondominated_rows(std::vector<double>{1, NAN}, 2, 1), std::invalid_argument);
}

// Batched filing (add + flush, including automatic flushes) and merges of batched
// parts give exactly the archive of one-by-one insert(), also when an index comes again.
// distinct_rows by hand: the distinct rows in lexicographic order, each input row mapped to its
// value; -0.0 and 0.0 are one row (they compare equal, so they decide and remove alike).
TEST(DominanceFilter, DistinctRowsByHand) {
  const std::vector<double> k = {2, 1, 0, 5, 2, 1, -0.0, 5, 1, 9};
  const DistinctRows d = distinct_rows(k, 2);
  EXPECT_EQ(d.values, (std::vector<double>{0, 5, 1, 9, 2, 1}));
  EXPECT_EQ(d.of_row, (std::vector<std::size_t>{2, 0, 2, 0, 1}));
  EXPECT_TRUE(distinct_rows(std::vector<double>{}, 3).values.empty());
  EXPECT_THROW((void)distinct_rows(std::vector<double>{1, NAN}, 2), std::invalid_argument);
}

// The filters on rows given already in lexicographic order with copies side by side (a
// shortlist's sorted group, distinct_rows' values), where they skip their sort: the same sets as
// by brute force, and distinct_rows' values are each row's value.
TEST(DominanceFilter, SortedInputsWithCopiesEqualBruteForce) {
  std::mt19937_64 rng(20261207);
  for (int t = 0; t < 300; ++t) {
    const std::size_t stride = 1 + rng() % 6;
    const std::size_t strict = 1 + rng() % stride;
    const std::size_t n = t % 10 == 0 ? 500 + rng() % 1500 : rng() % 100;
    const int style = static_cast<int>(rng() % 5);
    std::vector<double> k = make_rows(rng, n, stride, style);
    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return std::lexicographical_compare(k.begin() + a * stride, k.begin() + (a + 1) * stride,
                                          k.begin() + b * stride, k.begin() + (b + 1) * stride);
    });
    std::vector<double> sorted;
    for (const std::size_t r : order) sorted.insert(sorted.end(), k.begin() + r * stride, k.begin() + (r + 1) * stride);
    ASSERT_EQ(nondominated_rows(sorted, stride, strict), nondominated_rows_brute_force(sorted, stride, strict))
        << "case " << t;
    const DistinctRows d = distinct_rows(sorted, stride);
    ASSERT_EQ(d.of_row.size(), n);
    for (std::size_t r = 0; r < n; ++r) {
      ASSERT_TRUE(std::equal(sorted.begin() + r * stride, sorted.begin() + (r + 1) * stride,
                             d.values.begin() + d.of_row[r] * stride))
          << "case " << t << ", row " << r;
    }
    // Candidates sorted, removers distinct and sorted: rows_not_removed_by against brute force.
    const std::vector<double> rem = d.values;
    std::vector<double> cand = make_rows(rng, n / 2 + 1, stride, style);
    const std::vector<std::size_t> want = not_removed_brute_force(cand, rem, stride, strict);
    ASSERT_EQ(rows_not_removed_by(cand, rem, stride, strict), want) << "case " << t;
  }
}

TEST(DominanceFilter, BatchedArchiveEqualsOneByOneInsertion) {
  std::mt19937_64 rng(77);
  for (int t = 0; t < 120; ++t) {
    const std::size_t m = 1 + rng() % 4;
    const std::size_t metrics = rng() % 5;
    std::vector<Sense> senses;
    for (std::size_t j = 0; j < m; ++j) senses.push_back(rng() % 2 ? Sense::minimize : Sense::maximize);
    const std::size_t n = t % 20 == 0 ? 3000 : 1 + rng() % 300;
    const std::size_t stride = m + metrics;
    std::vector<double> k = make_rows(rng, n, stride, static_cast<int>(rng() % 5));
    // Some indices come again, with their evaluation (one evaluation per index).
    std::vector<std::uint64_t> ids(n);
    for (std::size_t i = 0; i < n; ++i) {
      ids[i] = 1000 + i * 3;
      if (i > 0 && rng() % 8 == 0) {
        const std::size_t src = rng() % i;
        ids[i] = ids[src];
        std::copy_n(k.begin() + static_cast<std::ptrdiff_t>(src * stride), stride,
                    k.begin() + static_cast<std::ptrdiff_t>(i * stride));
      }
    }

    ConstraintArchive one_by_one(senses, metrics);
    ConstraintArchive batched(senses, metrics);
    const std::size_t parts = 1 + rng() % 4;
    std::vector<ConstraintArchive> part(parts, ConstraintArchive(senses, metrics));
    for (std::size_t i = 0; i < n; ++i) {
      const std::span<const double> row(k.data() + i * stride, stride);
      const auto obj = row.first(m);
      const auto met = row.subspan(m);
      one_by_one.insert(ids[i], obj, met);
      batched.add(ids[i], obj, met);
      const std::size_t p = static_cast<std::size_t>(ids[i] % parts);
      part[p].add(ids[i], obj, met);
      if (rng() % 97 == 0) batched.flush();
    }
    EXPECT_THROW((void)batched.entries(), std::logic_error) << "queued points must be flushed first";
    batched.flush();
    EXPECT_EQ(batched, one_by_one) << "case " << t;
    ConstraintArchive merged(senses, metrics);
    for (std::size_t p = parts; p-- > 0;) merged.merge(part[p]);
    EXPECT_EQ(merged, one_by_one) << "case " << t;
  }
}

}  // namespace
}  // namespace dse::search
