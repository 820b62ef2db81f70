// The existing ParetoArchive against an O(n^2) brute-force front: many seeds,
// 2 to 5 objectives of mixed sense, ties and exact duplicates included.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "search/pareto.hpp"

namespace dse::search {
namespace {

TEST(ParetoArchiveBruteForce, EqualsTheQuadraticFrontInAnyOrder) {
  std::size_t sets = 0;
  for (std::uint64_t seed = 1; seed <= 400; ++seed) {
    std::mt19937_64 rng(seed);
    const std::size_t m = 2 + seed % 4;  // 2..5 objectives
    std::vector<Sense> senses;
    for (std::size_t j = 0; j < m; ++j) senses.push_back(rng() % 2 ? Sense::minimize : Sense::maximize);
    const std::size_t n = 1 + rng() % 300;
    const bool on_grid = seed % 2 == 0;  // a 5-level grid makes ties and duplicates common
    std::uniform_int_distribution<int> grid(0, 4);
    std::normal_distribution<double> normal(0.0, 1.0);
    std::vector<std::vector<double>> pts(n);
    for (auto& p : pts) {
      for (std::size_t j = 0; j < m; ++j) p.push_back(on_grid ? grid(rng) : normal(rng));
    }
    for (std::size_t i = 1; i < n; i += 9) pts[i] = pts[rng() % i];  // exact duplicates
    std::vector<std::uint64_t> expected;
    for (std::size_t a = 0; a < n; ++a) {
      bool dominated = false;
      for (std::size_t b = 0; b < n && !dominated; ++b) dominated = dominates(pts[b], pts[a], senses);
      if (!dominated) expected.push_back(a);
    }
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    for (int shuffle = 0; shuffle < 3; ++shuffle) {
      ParetoArchive archive(senses);
      for (std::size_t i : order) archive.insert(i, pts[i]);
      ASSERT_EQ(archive.sorted_indices(), expected) << "seed " << seed << " shuffle " << shuffle;
      for (const auto& p : archive.sorted_points()) EXPECT_EQ(p.objectives, pts[p.index]);
      std::shuffle(order.begin(), order.end(), rng);
    }
    // Merging two halves gives the same archive.
    ParetoArchive left(senses), right(senses);
    for (std::size_t i = 0; i < n; ++i) (i % 2 ? left : right).insert(i, pts[i]);
    right.merge(left);
    EXPECT_EQ(right.sorted_indices(), expected) << "seed " << seed;
    ++sets;
  }
  EXPECT_EQ(sets, 400U);
}

TEST(ParetoArchiveBruteForce, DominatesHandCases) {
  const std::vector<Sense> mm = {Sense::minimize, Sense::maximize};
  EXPECT_TRUE(dominates(std::vector<double>{1, 5}, std::vector<double>{2, 5}, mm));
  EXPECT_TRUE(dominates(std::vector<double>{2, 6}, std::vector<double>{2, 5}, mm));
  EXPECT_FALSE(dominates(std::vector<double>{2, 5}, std::vector<double>{2, 5}, mm));  // equal: no
  EXPECT_FALSE(dominates(std::vector<double>{1, 4}, std::vector<double>{2, 5}, mm));  // trade-off
}

}  // namespace
}  // namespace dse::search
