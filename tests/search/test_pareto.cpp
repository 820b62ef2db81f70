// Hand-checked Pareto archive cases.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "search/pareto.hpp"

namespace dse::search {
namespace {

const std::vector<Sense> kMinMin = {Sense::minimize, Sense::minimize};

TEST(Dominates, StrictInOneNoWorseInAll) {
  const std::vector<double> a = {1, 2}, b = {2, 2}, c = {1, 2};
  EXPECT_TRUE(dominates(a, b, kMinMin));
  EXPECT_FALSE(dominates(b, a, kMinMin));
  EXPECT_FALSE(dominates(a, c, kMinMin));  // equal vectors do not dominate
}

TEST(Dominates, MaximiseFlipsTheSense) {
  const std::vector<Sense> s = {Sense::maximize, Sense::minimize};
  const std::vector<double> fast = {10, 1}, slow = {5, 1};
  EXPECT_TRUE(dominates(fast, slow, s));
  EXPECT_FALSE(dominates(slow, fast, s));
}

TEST(ParetoArchive, KeepsTheFrontOfAHandMadeSet) {
  // Points (index: x, y), both minimised. (3,3) is dominated by (2,2); (4,1),
  // (1,4) and (2,2) are mutually non-dominated; (2,2) twice is kept twice.
  ParetoArchive a(kMinMin);
  const std::vector<std::vector<double>> pts = {{3, 3}, {4, 1}, {1, 4}, {2, 2}, {2, 2}, {5, 5}};
  for (std::size_t i = 0; i < pts.size(); ++i) a.insert(i, pts[i]);
  EXPECT_EQ(a.sorted_indices(), (std::vector<std::uint64_t>{1, 2, 3, 4}));
}

TEST(ParetoArchive, MergeEqualsInsertingEverything) {
  ParetoArchive x(kMinMin), y(kMinMin), all(kMinMin);
  const std::vector<std::vector<double>> pts = {{1, 9}, {2, 8}, {9, 1}, {5, 5}, {6, 6}, {3, 3}};
  for (std::size_t i = 0; i < pts.size(); ++i) {
    (i % 2 ? x : y).insert(i, pts[i]);
    all.insert(i, pts[i]);
  }
  x.merge(y);
  EXPECT_EQ(x.sorted_indices(), all.sorted_indices());
  EXPECT_EQ(all.sorted_indices(), (std::vector<std::uint64_t>{0, 1, 2, 5}));
}

TEST(ParetoArchive, RejectsNonFiniteAndWrongArity) {
  ParetoArchive a(kMinMin);
  const std::vector<double> nan = {std::nan(""), 1}, three = {1, 2, 3};
  EXPECT_THROW(a.insert(0, nan), std::invalid_argument);
  EXPECT_THROW(a.insert(0, three), std::invalid_argument);
}

}  // namespace
}  // namespace dse::search
