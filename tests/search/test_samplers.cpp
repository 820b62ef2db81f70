// Exhaustive and random samplers: coverage, rank-count independence, uniformity.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "search/exhaustive_sampler.hpp"
#include "search/random_sampler.hpp"

namespace dse::search {
namespace {

TEST(Mix64, MatchesSplitMix64ReferenceOutputs) {
  // SplitMix64 (Steele, Lea, Flood 2014; Vigna's splitmix64.c) seeded with 0 outputs
  // 0xe220a8397b1dcdaf then 0x6e789e6aa1b965f4; mix64(x) is the output for state x.
  EXPECT_EQ(mix64(0), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(mix64(0x9e3779b97f4a7c15ULL), 0x6e789e6aa1b965f4ULL);
}

TEST(ExhaustiveSampler, HandsOutEveryIndexOnceInAnyChunking) {
  for (std::uint64_t chunk : {1ULL, 3ULL, 7ULL, 100ULL, 1000ULL}) {
    ExhaustiveSampler s(5, 105);
    std::vector<std::uint64_t> seen;
    while (!s.done()) {
      const auto ids = s.ask(static_cast<std::size_t>(chunk));
      ASSERT_FALSE(ids.empty());
      seen.insert(seen.end(), ids.begin(), ids.end());
    }
    ASSERT_EQ(seen.size(), 100U);
    for (std::size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], 5 + i);
    EXPECT_TRUE(s.ask(10).empty());
  }
}

TEST(ExhaustiveSampler, RangesAndTellValidation) {
  ExhaustiveSampler s(10);
  EXPECT_EQ(s.ask_range(4), (IndexRange{0, 4}));
  EXPECT_EQ(s.ask_range(100), (IndexRange{4, 10}));
  EXPECT_TRUE(s.ask_range(1).empty());
  Evaluation ok;
  ok.index = 9;
  s.tell(std::span(&ok, 1));
  EXPECT_EQ(s.told(), 1U);
  ExhaustiveSampler t(10);
  (void)t.ask(2);
  Evaluation bad;
  bad.index = 5;  // not handed out yet
  EXPECT_THROW(t.tell(std::span(&bad, 1)), std::invalid_argument);
  t.seek(8);
  EXPECT_EQ(t.ask(5), (std::vector<std::uint64_t>{8, 9}));
  EXPECT_THROW(ExhaustiveSampler(5, 4), std::invalid_argument);
}

TEST(SplitRange, PartitionsContiguouslyForAnyPartCount) {
  for (std::uint64_t n : {0ULL, 1ULL, 10ULL, 97ULL}) {
    for (std::uint64_t parts = 1; parts <= 7; ++parts) {
      std::uint64_t next = 3;
      for (std::uint64_t p = 0; p < parts; ++p) {
        const IndexRange r = split_range({3, 3 + n}, parts, p);
        EXPECT_EQ(r.begin, next);
        EXPECT_LE(r.size(), n / parts + 1);
        EXPECT_GE(r.size(), n / parts);
        next = r.end;
      }
      EXPECT_EQ(next, 3 + n);
    }
  }
  EXPECT_THROW((void)split_range({0, 10}, 2, 2), std::invalid_argument);
}

TEST(IndexPermutation, IsABijectionOnSmallAndOddDomains) {
  for (std::uint64_t n : {1ULL, 2ULL, 3ULL, 5ULL, 7ULL, 64ULL, 1000ULL, 65537ULL}) {
    for (std::uint64_t seed : {0ULL, 1ULL, 12345ULL}) {
      const IndexPermutation perm(n, seed);
      std::vector<bool> hit(static_cast<std::size_t>(n), false);
      for (std::uint64_t k = 0; k < n; ++k) {
        const std::uint64_t v = perm(k);
        ASSERT_LT(v, n);
        ASSERT_FALSE(hit[static_cast<std::size_t>(v)]) << "n=" << n << " seed=" << seed << " k=" << k;
        hit[static_cast<std::size_t>(v)] = true;
      }
    }
  }
  EXPECT_THROW((void)IndexPermutation(10, 1)(10), std::out_of_range);
}

TEST(IndexPermutation, DistinctDrawsInAHugeSpace) {
  const std::uint64_t n = (1ULL << 62) + 12345;  // odd size near the 2^63 limit
  const IndexPermutation perm(n, 7);
  std::set<std::uint64_t> seen;
  for (std::uint64_t k = 0; k < 20000; ++k) {
    const std::uint64_t v = perm(k);
    ASSERT_LT(v, n);
    seen.insert(v);
  }
  EXPECT_EQ(seen.size(), 20000U);
  // Not an identity-like map: the draws spread over the whole space (the mean of
  // 20000 uniform draws is n/2 within a few standard errors n/sqrt(12*20000)).
  long double mean = 0;
  for (std::uint64_t v : seen) mean += static_cast<long double>(v) / 20000.0L;
  EXPECT_NEAR(static_cast<double>(mean / n), 0.5, 5.0 / std::sqrt(12.0 * 20000.0));
}

// Chi-square statistic of `counts` against a uniform expectation.
double chi_square(const std::vector<std::uint64_t>& counts, double expected) {
  double chi2 = 0;
  for (auto c : counts) chi2 += (static_cast<double>(c) - expected) * (static_cast<double>(c) - expected) / expected;
  return chi2;
}
// The 0.999 quantile of chi-square with 99 degrees of freedom (standard tables: 148.230).
constexpr double kChi2_99dof_p999 = 148.230;

TEST(RandomSampler, WithReplacementIsUniform) {
  RandomSampler s(100, 100000, 42, Replacement::with);
  std::vector<std::uint64_t> counts(100, 0);
  while (!s.done()) {
    for (auto id : s.ask(4096)) ++counts[static_cast<std::size_t>(id)];
  }
  EXPECT_LT(chi_square(counts, 1000.0), kChi2_99dof_p999);
}

TEST(RandomSampler, WithoutReplacementPrefixIsUniformAndDistinct) {
  const std::uint64_t n = 1000000;
  RandomSampler s(n, 10000, 9);
  std::vector<std::uint64_t> counts(100, 0);
  std::set<std::uint64_t> seen;
  for (auto id : s.ask(10000)) {
    ++counts[static_cast<std::size_t>(id / 10000)];
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 10000U);
  EXPECT_LT(chi_square(counts, 100.0), kChi2_99dof_p999);
  EXPECT_TRUE(s.done());
}

TEST(RandomSampler, CountIsClampedWithoutReplacementAndCoversTheSpace) {
  RandomSampler s(50, 1000, 3);
  EXPECT_EQ(s.count(), 50U);
  auto ids = s.ask(1000);
  std::sort(ids.begin(), ids.end());
  for (std::size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(ids[i], i);
  RandomSampler w(50, 1000, 3, Replacement::with);
  EXPECT_EQ(w.count(), 1000U);
  EXPECT_THROW(RandomSampler(0, 1, 1), std::invalid_argument);
}

// Simulates R ranks taking chunks of draw numbers in turns and computing sample(k)
// themselves; the union, keyed by draw number, must equal one rank's sequence.
std::vector<std::uint64_t> run_ranks(std::uint64_t size, std::uint64_t count, std::uint64_t seed, Replacement mode,
                                     unsigned ranks, std::uint64_t chunk) {
  RandomSampler master(size, count, seed, mode);
  std::vector<RandomSampler> local(ranks, RandomSampler(size, count, seed, mode));
  std::vector<std::uint64_t> by_draw(static_cast<std::size_t>(master.count()));
  unsigned r = 0;
  while (!master.done()) {
    const IndexRange draws = master.ask_draws(chunk);
    for (std::uint64_t k = draws.begin; k < draws.end; ++k) by_draw[static_cast<std::size_t>(k)] = local[r].sample(k);
    r = (r + 1) % ranks;
  }
  return by_draw;
}

TEST(RandomSampler, SameSampleForAnyRankCountAndChunking) {
  for (Replacement mode : {Replacement::without, Replacement::with}) {
    RandomSampler one(123457, 5000, 77, mode);
    const std::vector<std::uint64_t> reference = one.ask(5000);
    for (unsigned ranks : {1U, 2U, 3U, 4U}) {
      for (std::uint64_t chunk : {1ULL, 17ULL, 256ULL}) {
        EXPECT_EQ(run_ranks(123457, 5000, 77, mode, ranks, chunk), reference) << ranks << " ranks, chunk " << chunk;
      }
    }
    RandomSampler other_seed(123457, 5000, 78, mode);
    EXPECT_NE(other_seed.ask(5000), reference);
  }
}

TEST(RandomSampler, SeekResumesTheSameSequence) {
  RandomSampler a(1000, 100, 5);
  const auto all = a.ask(100);
  RandomSampler b(1000, 100, 5);
  b.seek(40);
  const auto tail = b.ask(100);
  EXPECT_EQ(tail, std::vector<std::uint64_t>(all.begin() + 40, all.end()));
}

TEST(CounterRng, BelowIsInRangeAndUniform) {
  CounterRng rng(1, 2);
  EXPECT_EQ(rng.below(1), 0U);
  std::vector<std::uint64_t> counts(100, 0);
  for (int i = 0; i < 100000; ++i) ++counts[static_cast<std::size_t>(rng.below(100))];
  EXPECT_LT(chi_square(counts, 1000.0), kChi2_99dof_p999);
  for (int i = 0; i < 1000; ++i) {
    const double u = rng.unit();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

}  // namespace
}  // namespace dse::search
