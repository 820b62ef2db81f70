// The constraint-robust archive against brute force: for random point sets and
// random budgets, front_under(budgets) equals the Pareto front of all points within
// the budgets; merges in any order and tree shape give the same archive.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "search/constraint_archive.hpp"

namespace dse::search {
namespace {

struct Pt {
  std::uint64_t index;
  std::vector<double> obj;
  std::vector<double> met;
};

struct Problem {
  std::vector<Sense> senses;
  std::size_t metrics = 0;
  std::vector<Pt> points;
};

// Random problems: 1-4 objectives of mixed sense, 0-4 metrics; values either on a
// small integer grid (many ties and exact duplicates) or continuous, sometimes with
// metrics correlated with the objectives (the realistic trade-off shape).
Problem make_problem(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Problem p;
  const std::size_t m = 1 + rng() % 4;
  for (std::size_t j = 0; j < m; ++j) p.senses.push_back(rng() % 2 ? Sense::minimize : Sense::maximize);
  p.metrics = rng() % 5;
  const std::size_t n = 1 + rng() % 250;
  const int style = static_cast<int>(rng() % 3);
  std::uniform_int_distribution<int> grid(0, 4);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<std::uint64_t> ids(n);
  for (std::size_t i = 0; i < n; ++i) ids[i] = i * 7 + 3;  // sparse, not 0..n-1
  std::shuffle(ids.begin(), ids.end(), rng);
  for (std::size_t i = 0; i < n; ++i) {
    Pt pt{ids[i], {}, {}};
    for (std::size_t j = 0; j < m; ++j) pt.obj.push_back(style == 0 ? grid(rng) : unit(rng));
    for (std::size_t j = 0; j < p.metrics; ++j) {
      double v = style == 0 ? grid(rng) : unit(rng);
      if (style == 2) v = 0.5 * v + 0.5 * (p.senses[0] == Sense::minimize ? 1.0 - pt.obj[0] : pt.obj[0]);
      pt.met.push_back(v);
    }
    if (style == 0 && i > 0 && rng() % 5 == 0) {  // an exact duplicate under another index
      pt.obj = p.points[rng() % p.points.size()].obj;
    }
    p.points.push_back(pt);
  }
  return p;
}

// O(n^2) brute force: Pareto front over objectives of the points within the budgets.
std::vector<std::uint64_t> brute_front(const Problem& p, const std::vector<double>& budgets) {
  std::vector<const Pt*> within;
  for (const auto& pt : p.points) {
    bool ok = true;
    for (std::size_t j = 0; j < p.metrics; ++j) ok = ok && pt.met[j] <= budgets[j];
    if (ok) within.push_back(&pt);
  }
  std::vector<std::uint64_t> out;
  for (const Pt* a : within) {
    bool dominated = false;
    for (const Pt* b : within) dominated = dominated || dominates(b->obj, a->obj, p.senses);
    if (!dominated) out.push_back(a->index);
  }
  std::sort(out.begin(), out.end());
  return out;
}

ConstraintArchive build(const Problem& p, const std::vector<std::size_t>& order) {
  ConstraintArchive a(p.senses, p.metrics);
  for (std::size_t i : order) a.insert(p.points[i].index, p.points[i].obj, p.points[i].met);
  return a;
}

std::vector<std::size_t> iota_order(std::size_t n) {
  std::vector<std::size_t> o(n);
  for (std::size_t i = 0; i < n; ++i) o[i] = i;
  return o;
}

std::vector<double> random_budgets(const Problem& p, std::mt19937_64& rng) {
  std::vector<double> b(p.metrics);
  for (std::size_t j = 0; j < p.metrics; ++j) {
    switch (rng() % 4) {
      case 0: b[j] = std::numeric_limits<double>::infinity(); break;
      case 1: b[j] = p.points[rng() % p.points.size()].met[j]; break;  // exactly on a value
      case 2: b[j] = -1.0; break;                                       // nothing fits
      default: b[j] = std::uniform_real_distribution<double>(0.0, 4.0)(rng); break;
    }
  }
  return b;
}

TEST(ConstraintArchive, FrontUnderBudgetsEqualsBruteForce) {
  std::size_t checks = 0;
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    const Problem p = make_problem(seed);
    const ConstraintArchive a = build(p, iota_order(p.points.size()));
    std::mt19937_64 rng(seed * 1000003);
    for (int t = 0; t < 40; ++t) {
      const std::vector<double> budgets = random_budgets(p, rng);
      std::vector<std::uint64_t> got;
      for (const auto& e : a.front_under(budgets)) got.push_back(e.index);
      ASSERT_EQ(got, brute_front(p, budgets)) << "seed " << seed << " trial " << t;
      ++checks;
    }
  }
  EXPECT_EQ(checks, 300U * 40U);
}

TEST(ConstraintArchive, EveryArchivedPointIsNeededForSomeBudget) {
  // Minimality: a point is archived only if it is on the front for the budget equal
  // to its own metrics (otherwise the archive would keep more than needed).
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    const Problem p = make_problem(seed);
    const ConstraintArchive a = build(p, iota_order(p.points.size()));
    for (const auto& e : a.entries()) {
      const auto front = a.front_under(e.metrics);
      const bool present = std::any_of(front.begin(), front.end(), [&](const ArchiveEntry& f) { return f.index == e.index; });
      EXPECT_TRUE(present) << "seed " << seed << " index " << e.index;
    }
  }
}

TEST(ConstraintArchive, InsertionOrderAndMergeTreeDoNotMatter) {
  for (std::uint64_t seed = 1; seed <= 100; ++seed) {
    const Problem p = make_problem(seed);
    const ConstraintArchive reference = build(p, iota_order(p.points.size()));
    std::mt19937_64 rng(seed);
    std::vector<std::size_t> order = iota_order(p.points.size());
    std::shuffle(order.begin(), order.end(), rng);
    EXPECT_EQ(build(p, order), reference) << "seed " << seed;
    // Split over k "ranks", then merge as a chain in a random order and as a tree.
    const std::size_t k = 1 + rng() % 6;
    std::vector<ConstraintArchive> parts(k, ConstraintArchive(p.senses, p.metrics));
    for (std::size_t i : order) parts[rng() % k].insert(p.points[i].index, p.points[i].obj, p.points[i].met);
    std::vector<std::size_t> merge_order = iota_order(k);
    std::shuffle(merge_order.begin(), merge_order.end(), rng);
    ConstraintArchive chain(p.senses, p.metrics);
    for (std::size_t i : merge_order) chain.merge(parts[i]);
    EXPECT_EQ(chain, reference) << "seed " << seed;
    std::vector<ConstraintArchive> level = parts;
    while (level.size() > 1) {  // binary tree reduction, as an MPI driver would do
      std::vector<ConstraintArchive> next;
      for (std::size_t i = 0; i + 1 < level.size(); i += 2) {
        ConstraintArchive x = level[i + 1];
        x.merge(level[i]);
        next.push_back(std::move(x));
      }
      if (level.size() % 2) next.push_back(level.back());
      level = std::move(next);
    }
    EXPECT_EQ(level[0], reference) << "seed " << seed;
  }
}

const std::vector<Sense> kTwoMin = {Sense::minimize, Sense::minimize};

// Queues points from..to-1 on the line x + y = 1e9 (two objectives, both minimised).
void add_line(ConstraintArchive& a, std::uint64_t from, std::uint64_t to) {
  for (std::uint64_t i = from; i < to; ++i) {
    const double x = static_cast<double>(i);
    a.add(i, std::vector<double>{x, 1e9 - x}, {});
  }
}

// add() files its queue once it is as large as the archive and at least kFlushRows (65,536) rows;
// with defer_flushes the queue waits for the owner's flush() (flush_due() says when) up to twice
// that, and the archive is the same set either way. Points on the line x + y = const are
// mutually non-dominated, so every one is kept and the archive grows as they are filed.
TEST(ConstraintArchive, DeferredFlushesWaitForTheOwnerUpToTwiceTheDueSize) {
  const std::uint64_t due = ConstraintArchive::kFlushRows;
  ConstraintArchive plain(kTwoMin, 0);
  add_line(plain, 0, due - 1);
  EXPECT_FALSE(plain.flush_due());
  EXPECT_EQ(plain.pending(), due - 1);
  add_line(plain, due - 1, due);  // the 65,536th row: filed at once
  EXPECT_EQ(plain.pending(), 0u);
  EXPECT_EQ(plain.size(), due);

  ConstraintArchive deferred(kTwoMin, 0);
  deferred.defer_flushes(true);
  add_line(deferred, 0, due);
  EXPECT_TRUE(deferred.flush_due());
  EXPECT_EQ(deferred.pending(), due);  // left to the owner
  add_line(deferred, due, 2 * due - 1);
  EXPECT_EQ(deferred.pending(), 2 * due - 1);
  add_line(deferred, 2 * due - 1, 2 * due);  // twice the due size: filed by itself
  EXPECT_EQ(deferred.pending(), 0u);
  EXPECT_EQ(deferred.size(), 2 * due);
  // Now due at the archive's size, 131,072 rows: the owner flushes at 100,000.
  add_line(deferred, 2 * due, 2 * due + 100000);
  EXPECT_FALSE(deferred.flush_due());
  deferred.flush();
  ConstraintArchive reference(kTwoMin, 0);
  add_line(reference, 0, 2 * due + 100000);
  reference.flush();
  EXPECT_EQ(deferred, reference);
}

// The bound may be set per archive (rank 0 of `dse run` waits longer, dse/driver/driver.cpp): at
// factor 4 the queue files itself at 4 x 65,536 rows, not before; a factor of 0 is taken as 1.
TEST(ConstraintArchive, DeferredFlushFactorSetsTheBound) {
  const std::uint64_t due = ConstraintArchive::kFlushRows;
  ConstraintArchive four(kTwoMin, 0);
  four.defer_flushes(true, 4);
  add_line(four, 0, 4 * due - 1);
  EXPECT_TRUE(four.flush_due());
  EXPECT_EQ(four.pending(), 4 * due - 1);  // past twice the due size, still queued
  add_line(four, 4 * due - 1, 4 * due);         // four times: filed by itself
  EXPECT_EQ(four.pending(), 0u);
  EXPECT_EQ(four.size(), 4 * due);

  ConstraintArchive zero(kTwoMin, 0);
  zero.defer_flushes(true, 0);
  add_line(zero, 0, due - 1);
  EXPECT_EQ(zero.pending(), due - 1);
  add_line(zero, due - 1, due);  // factor 1: filed at the due size, as without deferral
  EXPECT_EQ(zero.pending(), 0u);
}

TEST(ConstraintArchive, BytesRoundTripAndLayout) {
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    const Problem p = make_problem(seed);
    const ConstraintArchive a = build(p, iota_order(p.points.size()));
    const auto bytes = a.to_bytes();
    EXPECT_EQ(ConstraintArchive::from_bytes(bytes), a);
    EXPECT_EQ(ConstraintArchive::from_bytes(bytes).to_bytes(), bytes);
    if (bytes.size() > 1) {
      EXPECT_THROW((void)ConstraintArchive::from_bytes(std::span(bytes).first(bytes.size() - 1)), std::invalid_argument);
    }
  }
  // Layout written out by hand: magic, u32 objectives=1, u32 metrics=1, sense byte 1
  // (maximize), u64 count=1, u64 index=258, f64 1.0 (0x3ff0000000000000), f64 -2.0
  // (0xc000000000000000), all little-endian.
  ConstraintArchive one({Sense::maximize}, 1);
  one.insert(258, std::vector<double>{1.0}, std::vector<double>{-2.0});
  const std::vector<int> expected = {'D', 'S', 'E', 'C', 'A', '1', 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1,
                                     1, 0, 0, 0, 0, 0, 0, 0, 2, 1, 0, 0, 0, 0, 0, 0,
                                     0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0xc0};
  const auto bytes = one.to_bytes();
  ASSERT_EQ(bytes.size(), expected.size());
  for (std::size_t i = 0; i < bytes.size(); ++i) EXPECT_EQ(std::to_integer<int>(bytes[i]), expected[i]) << "byte " << i;
  auto bad = bytes;
  bad[0] = std::byte{'X'};
  EXPECT_THROW((void)ConstraintArchive::from_bytes(bad), std::invalid_argument);
}

TEST(ConstraintArchive, EvaluationsDuplicatesAndBadValues) {
  ConstraintArchive a({Sense::minimize, Sense::minimize}, 1);
  Evaluation infeasible{1, {0.0, 0.0}, {0.0}, false};
  EXPECT_FALSE(a.insert(infeasible));
  EXPECT_TRUE(a.empty());
  Evaluation e{2, {1.0, 2.0}, {3.0}, true};
  EXPECT_TRUE(a.insert(e));
  EXPECT_FALSE(a.insert(e));  // same index again
  // Dominated in objectives but cheaper in the metric: kept (front for a tighter budget).
  EXPECT_TRUE(a.insert(3, std::vector<double>{2.0, 3.0}, std::vector<double>{1.0}));
  // Dominated in objectives and no cheaper: not kept.
  EXPECT_FALSE(a.insert(4, std::vector<double>{2.0, 3.0}, std::vector<double>{3.0}));
  // Equal objectives, worse metric: kept (ties are part of every brute-force front).
  EXPECT_TRUE(a.insert(5, std::vector<double>{1.0, 2.0}, std::vector<double>{9.0}));
  EXPECT_EQ(a.sorted_indices(), (std::vector<std::uint64_t>{2, 3, 5}));
  EXPECT_THROW(a.insert(6, std::vector<double>{NAN, 1.0}, std::vector<double>{1.0}), std::invalid_argument);
  EXPECT_THROW(a.insert(6, std::vector<double>{1.0}, std::vector<double>{1.0}), std::invalid_argument);
  EXPECT_THROW((void)a.front_under(std::vector<double>{}), std::invalid_argument);
  ConstraintArchive other({Sense::minimize}, 1);
  EXPECT_THROW(a.merge(other), std::invalid_argument);
}

}  // namespace
}  // namespace dse::search
