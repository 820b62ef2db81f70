// constrained_fronts (ENS-SS) against Deb's pairwise fast non-dominated sort and a hand-worked case.
#include <gtest/gtest.h>

#include <cstddef>
#include <limits>
#include <random>
#include <vector>

#include "search/nondominated_sort.hpp"

namespace dse::search {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(NondominatedSort, HandWorkedFronts) {
  // Two objectives, minimised. By hand: A(1,4), B(2,2), C(4,1) and B's duplicate G(2,2) are
  // dominated by nothing (front 0); D(2,4) is dominated by A, B and G, E(3,3) by B and G (front 1);
  // F(4,4) by D and E (front 2). Infeasible ones follow by violation: I (0.2) front 3, H and J
  // (0.5, a tie) front 4, K (+inf) front 5.
  const std::vector<double> obj = {1, 4, 2, 2, 4, 1, 2, 4, 3, 3, 4, 4, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0};
  const std::vector<double> viol = {0, 0, 0, 0, 0, 0, 0, 0.5, 0.2, 0.5, kInf};
  //                                A  B  C  D  E  F  G  H    I    J    K
  const std::vector<std::size_t> expected = {0, 0, 0, 1, 1, 2, 0, 4, 3, 4, 5};
  EXPECT_EQ(constrained_fronts(obj, 2, viol), expected);
  EXPECT_EQ(constrained_fronts_pairwise(obj, 2, viol), expected);
}

TEST(NondominatedSort, EnsSsEqualsPairwiseOnRandomInputsWithTiesAndDuplicates) {
  std::mt19937_64 rng(20150401);
  const std::vector<double> violations = {0.25, 0.5, 1.0, kInf};
  for (int trial = 0; trial < 400; ++trial) {
    const std::size_t m = 1 + rng() % 5;
    const std::size_t n = rng() % 4 == 0 ? rng() % 6 : rng() % 300;
    const std::uint64_t levels = 1 + rng() % 6;  // few levels: ties and equal rows
    const std::uint64_t infeasible = rng() % 4;  // in 8: 0 to 3/8 of the points
    std::vector<double> obj(n * m);
    std::vector<double> viol(n, 0.0);
    for (double& v : obj) {
      v = rng() % 3 == 0 ? std::uniform_real_distribution<double>(-1, 1)(rng) : static_cast<double>(rng() % levels);
      if (v == 0.0 && rng() % 2 == 0) v = -0.0;  // -0 equals +0
    }
    for (double& v : viol) {
      if (rng() % 8 < infeasible) v = violations[rng() % violations.size()];
    }
    ASSERT_EQ(constrained_fronts(obj, m, viol), constrained_fronts_pairwise(obj, m, viol))
        << "trial " << trial << ", n " << n << ", m " << m;
  }
}

}  // namespace
}  // namespace dse::search
