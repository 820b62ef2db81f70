// Hypervolume against hand-computed areas, the analytic ZDT1 integral and an
// independent inclusion-exclusion computation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "search/hypervolume.hpp"

namespace dse::search {
namespace {

TEST(Hypervolume, HandComputedStaircase2D) {
  // Boxes from (1,3), (2,2), (3,1) to (4,4): columns of height 1, 2, 3 over x in
  // [1,2], [2,3], [3,4] -> 1 + 2 + 3 = 6.
  const std::vector<std::vector<double>> pts = {{1, 3}, {2, 2}, {3, 1}};
  const std::vector<double> ref = {4, 4};
  EXPECT_DOUBLE_EQ(hypervolume(pts, ref), 6.0);
  // A dominated point, a duplicate and a point outside the reference change nothing.
  const std::vector<std::vector<double>> more = {{1, 3}, {2, 2}, {3, 1}, {3, 3}, {2, 2}, {0, 5}, {4, 0}};
  EXPECT_DOUBLE_EQ(hypervolume(more, ref), 6.0);
  EXPECT_DOUBLE_EQ(hypervolume(std::vector<std::vector<double>>{}, ref), 0.0);
}

TEST(Hypervolume, HandComputed3D) {
  // Unit cube corner (0,0,0) to ref (2,2,2): 8; adding (1,1,-1) adds the slab
  // [1,2]x[1,2]x[-1,0] = 1 -> 9.
  const std::vector<double> ref = {2, 2, 2};
  EXPECT_DOUBLE_EQ(hypervolume(std::vector<std::vector<double>>{{0, 0, 0}}, ref), 8.0);
  EXPECT_DOUBLE_EQ(hypervolume(std::vector<std::vector<double>>{{0, 0, 0}, {1, 1, -1}}, ref), 9.0);
}

TEST(Hypervolume, MaximisedObjectivesMirror) {
  // Maximising f2 with reference 0 mirrors the minimisation case (1,3),(2,2),(3,1) ref (4,4).
  const std::vector<std::vector<double>> pts = {{1, 1}, {2, 2}, {3, 3}};
  const std::vector<double> ref = {4, 0};
  const std::vector<Sense> senses = {Sense::minimize, Sense::maximize};
  // Boxes [1,4]x[0,1], [2,4]x[0,2], [3,4]x[0,3] -> columns 1, 2, 3 -> 6.
  EXPECT_DOUBLE_EQ(hypervolume(pts, ref, senses), 6.0);
}

TEST(Hypervolume, Zdt1FrontConvergesToTwoThirds) {
  // ZDT1 front f2 = 1 - sqrt(f1); dominated area inside (1,1) = int_0^1 sqrt(f1) df1 = 2/3.
  // With N+1 front points f1 = i/N the staircase is a left Riemann sum of sqrt,
  // below 2/3 by at most 1/N (monotone integrand, total rise 1).
  for (int n : {10, 100, 10000}) {
    std::vector<std::vector<double>> pts;
    for (int i = 0; i <= n; ++i) {
      const double f1 = i / static_cast<double>(n);
      pts.push_back({f1, 1.0 - std::sqrt(f1)});
    }
    const double hv = hypervolume(pts, std::vector<double>{1.0, 1.0});
    EXPECT_LE(hv, 2.0 / 3.0);
    EXPECT_GE(hv, 2.0 / 3.0 - 1.0 / n);
  }
}

// Union volume of the boxes [p, ref] by inclusion-exclusion over all subsets.
double inclusion_exclusion(const std::vector<std::vector<double>>& pts, const std::vector<double>& ref) {
  const std::size_t n = pts.size();
  const std::size_t d = ref.size();
  double total = 0;
  for (std::uint32_t mask = 1; mask < (1U << n); ++mask) {
    std::vector<double> corner(d, -1e300);
    int bits = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (!(mask & (1U << i))) continue;
      ++bits;
      for (std::size_t j = 0; j < d; ++j) corner[j] = std::max(corner[j], pts[i][j]);
    }
    double vol = 1;
    for (std::size_t j = 0; j < d; ++j) vol *= std::max(0.0, ref[j] - corner[j]);
    total += (bits % 2 == 1 ? 1.0 : -1.0) * vol;
  }
  return total;
}

TEST(Hypervolume, MatchesInclusionExclusionInTwoToFiveDimensions) {
  std::mt19937_64 rng(2024);
  for (int trial = 0; trial < 200; ++trial) {
    const std::size_t d = 2 + static_cast<std::size_t>(trial % 4);
    const std::size_t n = 1 + static_cast<std::size_t>(rng() % 10);
    std::uniform_int_distribution<int> grid(0, 6);  // small grid: ties and duplicates
    std::vector<std::vector<double>> pts(n, std::vector<double>(d));
    for (auto& p : pts) {
      for (auto& v : p) v = grid(rng) * 0.5;
    }
    const std::vector<double> ref(d, 3.0);
    EXPECT_NEAR(hypervolume(pts, ref), inclusion_exclusion(pts, ref), 1e-9) << "trial " << trial;
  }
}

// Plain slicing down to one dimension (HSO without any sweep): the reference for larger sets.
double sliced(std::vector<std::vector<double>> pts, const std::vector<double>& ref, std::size_t d) {
  if (pts.empty()) return 0.0;
  if (d == 1) {
    double lo = ref[0];
    for (const auto& p : pts) lo = std::min(lo, p[0]);
    return ref[0] - lo;
  }
  std::sort(pts.begin(), pts.end(), [&](const auto& a, const auto& b) { return a[d - 1] < b[d - 1]; });
  double v = 0.0;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const double next = i + 1 < pts.size() ? pts[i + 1][d - 1] : ref[d - 1];
    if (next > pts[i][d - 1]) {
      v += sliced(std::vector<std::vector<double>>(pts.begin(), pts.begin() + static_cast<std::ptrdiff_t>(i) + 1),
                  ref, d - 1) * (next - pts[i][d - 1]);
    }
  }
  return v;
}

TEST(Hypervolume, SweepsMatchPlainSlicingOnLargerSets) {
  // The 3-D sweep and the 4-D slicing on the coordinate with the fewest values (issue 59 item 5)
  // against plain slicing: 3-D fronts of 100 points on a sphere (all non-dominated) with
  // dominated points, ties and duplicates mixed in, and 4-D sets whose second coordinate takes 3
  // values (an engineering risk per platform).
  std::mt19937_64 rng(59);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int trial = 0; trial < 4; ++trial) {
    std::vector<std::vector<double>> pts;
    for (int i = 0; i < 100; ++i) {
      const double a = u(rng) * 1.5707963;
      const double b = u(rng) * 1.5707963;
      pts.push_back({std::cos(a) * std::cos(b), std::sin(a) * std::cos(b), std::sin(b)});
    }
    for (int i = 0; i < 20; ++i) pts.push_back({std::round(u(rng) * 4) / 4, std::round(u(rng) * 4) / 4, 0.9});
    pts.push_back(pts[3]);
    const std::vector<double> ref3 = {1.1, 1.1, 1.1};
    EXPECT_NEAR(hypervolume(pts, ref3), sliced(pts, ref3, 3), 1e-12) << "3-D trial " << trial;
    std::vector<std::vector<double>> four;
    for (const auto& p : pts) four.push_back({p[0], std::floor(u(rng) * 3) / 3, p[1], p[2]});
    const std::vector<double> ref4 = {1.1, 1.1, 1.1, 1.1};
    const double want = sliced(four, ref4, 4);
    EXPECT_NEAR(hypervolume(four, ref4), want, 1e-12 * std::max(1.0, want)) << "4-D trial " << trial;
  }
}

TEST(Hypervolume, RejectsBadInput) {
  const std::vector<double> ref = {1, 1};
  EXPECT_THROW((void)hypervolume(std::vector<std::vector<double>>{{0.5}}, ref), std::invalid_argument);
  EXPECT_THROW((void)hypervolume(std::vector<std::vector<double>>{{NAN, 0.5}}, ref), std::invalid_argument);
}

}  // namespace
}  // namespace dse::search
