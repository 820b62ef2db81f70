// NSGA-II on ZDT1 (Zitzler, Deb, Thiele 2000) mapped onto a mixed-radix grid, plus
// determinism under any ask chunking / tell order, constraints and checkpoints.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "search/hypervolume.hpp"
#include "search/nsga2.hpp"
#include "search/pareto.hpp"
#include "tests/search/zdt1_grid.hpp"

namespace dse::search {
namespace {

using zdt1_grid::kRadix;
using zdt1_grid::kVars;

DesignSpace zdt1_space() { return zdt1_grid::space(); }

Evaluation zdt1(const DesignSpace& space, std::uint64_t id) {
  const zdt1_grid::Point p = zdt1_grid::point(space, id);
  Evaluation e;
  e.index = id;
  e.objectives = {p.f1, p.f2};
  e.constraints = {p.f1};  // used by the constrained test as a "budgeted metric"
  return e;
}

struct RunResult {
  std::vector<std::uint64_t> population;
  std::vector<std::vector<double>> objectives;
  std::vector<std::vector<std::uint64_t>> batches;  // sorted ids of each generation
  std::vector<std::vector<double>> all_front;        // front of every evaluated point
};

// Drives the sampler. shuffle_seed == 0: ask everything, tell in order. Otherwise
// interleave asks of random sizes with tells of random shuffled subsets.
RunResult drive(const Nsga2Options& opt, std::uint64_t shuffle_seed) {
  const DesignSpace space = zdt1_space();
  Nsga2Sampler s(space, {Sense::minimize, Sense::minimize}, opt);
  ParetoArchive archive({Sense::minimize, Sense::minimize});
  RunResult out;
  std::mt19937_64 rng(shuffle_seed);
  std::vector<Evaluation> outstanding;
  std::vector<std::uint64_t> batch;
  std::size_t generation = s.generation();
  while (!s.done()) {
    const bool do_ask = shuffle_seed == 0 ? outstanding.empty() : (rng() % 2 == 0 || outstanding.empty());
    if (do_ask) {
      const std::size_t n = shuffle_seed == 0 ? std::numeric_limits<std::size_t>::max() : 1 + rng() % 40;
      const auto ids = s.ask(n);
      if (ids.empty() && outstanding.empty()) {
        ADD_FAILURE() << "sampler neither done nor handing out work";
        break;
      }
      for (auto id : ids) {
        outstanding.push_back(zdt1(space, id));
        batch.push_back(id);
        archive.insert(id, outstanding.back().objectives);
      }
      if (!ids.empty()) continue;
    }
    std::size_t k = outstanding.size();
    if (shuffle_seed != 0) {
      std::shuffle(outstanding.begin(), outstanding.end(), rng);
      k = 1 + rng() % outstanding.size();
    }
    std::vector<Evaluation> now(outstanding.end() - static_cast<std::ptrdiff_t>(k), outstanding.end());
    outstanding.resize(outstanding.size() - k);
    s.tell(now);
    if (s.generation() != generation) {
      std::sort(batch.begin(), batch.end());
      out.batches.push_back(batch);
      batch.clear();
      generation = s.generation();
    }
  }
  for (const auto& m : s.population()) {
    out.population.push_back(m.evaluation.index);
    out.objectives.push_back(m.evaluation.objectives);
  }
  for (const auto& p : archive.sorted_points()) out.all_front.push_back(p.objectives);
  return out;
}

std::vector<std::vector<double>> front_objectives(const Nsga2Sampler& s) {
  std::vector<std::vector<double>> out;
  for (const auto& e : s.front()) out.push_back(e.objectives);
  return out;
}

Nsga2Options zdt1_options(std::uint64_t seed) {
  Nsga2Options o;
  o.population = 100;
  o.generations = 250;
  o.seed = seed;
  return o;
}

TEST(Nsga2, Zdt1ReachesTheTrueFrontHypervolume) {
  // True ZDT1 front: f2 = 1 - sqrt(f1), f1 in [0,1]. Hypervolume w.r.t. the
  // reference (1,1) = int_0^1 (1 - (1 - sqrt(f1))) df1 = 2/3. (The grid front
  // x1 = i/1024 is a subset of it, so 2/3 is an upper bound the search can reach only
  // approximately; 100 evenly spread points lose about 1/(2*100) = 0.005, i.e. 0.75%.)
  const double true_hv = 2.0 / 3.0;
  const std::vector<double> ref = {1.0, 1.0};
  const RunResult r = drive(zdt1_options(1), 0);
  std::vector<std::vector<double>> final_front;
  const std::vector<Sense> senses = {Sense::minimize, Sense::minimize};
  for (std::size_t i = 0; i < r.objectives.size(); ++i) final_front.push_back(r.objectives[i]);
  const double hv_population = hypervolume(final_front, ref);
  const double hv_archive = hypervolume(r.all_front, ref);
  std::printf("ZDT1 (%zu vars, grid %llu): HV(final population) = %.6f, HV(all evaluated) = %.6f, true = %.6f\n",
              kVars, static_cast<unsigned long long>(kRadix), hv_population, hv_archive, true_hv);
  EXPECT_GE(hv_population, 0.98 * true_hv);
  EXPECT_LE(hv_population, true_hv);
  EXPECT_GE(hv_archive, 0.98 * true_hv);
}

TEST(Nsga2, SameSeedSameRunDifferentSeedDifferentRun) {
  Nsga2Options o = zdt1_options(7);
  o.generations = 30;
  const RunResult a = drive(o, 0);
  const RunResult b = drive(o, 0);
  EXPECT_EQ(a.population, b.population);
  EXPECT_EQ(a.objectives, b.objectives);
  EXPECT_EQ(a.batches, b.batches);
  o.seed = 8;
  EXPECT_NE(drive(o, 0).population, a.population);
}

TEST(Nsga2, IndependentOfAskChunkingAndTellOrder) {
  Nsga2Options o = zdt1_options(11);
  o.generations = 30;
  const RunResult reference = drive(o, 0);
  ASSERT_EQ(reference.batches.size(), 31U);
  for (std::uint64_t shuffle : {1ULL, 2ULL, 3ULL}) {
    const RunResult r = drive(o, shuffle);
    EXPECT_EQ(r.batches, reference.batches) << "shuffle " << shuffle;
    EXPECT_EQ(r.population, reference.population) << "shuffle " << shuffle;
    EXPECT_EQ(r.objectives, reference.objectives) << "shuffle " << shuffle;
  }
}

TEST(Nsga2, ConstrainedFrontRespectsTheBudget) {
  // Budget f1 <= 0.5 on the constraint metric (= f1). The constrained true front is
  // the ZDT1 front for f1 in [0, 0.5]; its hypervolume w.r.t. (1,1) is
  // int_0^0.5 sqrt(x) dx + (1 - 0.5) * sqrt(0.5) = (2/3) 0.5^1.5 + 0.5^1.5 = (5/3) 0.5^1.5.
  const double true_hv = 5.0 / 3.0 * std::pow(0.5, 1.5);
  Nsga2Options o = zdt1_options(3);
  o.budgets = {0.5};
  const DesignSpace space = zdt1_space();
  Nsga2Sampler s(space, {Sense::minimize, Sense::minimize}, o);
  while (!s.done()) {
    std::vector<Evaluation> results;
    for (auto id : s.ask(1000)) results.push_back(zdt1(space, id));
    s.tell(results);
  }
  const auto front = front_objectives(s);
  ASSERT_FALSE(front.empty());
  for (const auto& f : front) EXPECT_LE(f[0], 0.5);
  const double hv = hypervolume(front, std::vector<double>{1.0, 1.0});
  std::printf("constrained ZDT1: HV = %.6f, true = %.6f\n", hv, true_hv);
  EXPECT_GE(hv, 0.98 * true_hv);
  EXPECT_LE(hv, true_hv);
}

TEST(Nsga2, InfeasiblePointsNeverReachTheFront) {
  Nsga2Options o = zdt1_options(5);
  o.generations = 40;
  const DesignSpace space = zdt1_space();
  Nsga2Sampler s(space, {Sense::minimize, Sense::minimize}, o);
  while (!s.done()) {
    std::vector<Evaluation> results;
    for (auto id : s.ask(1000)) {
      Evaluation e = zdt1(space, id);
      if (e.objectives[0] < 0.2) {  // "does not fit": objectives are garbage
        e.feasible = false;
        e.objectives = {std::nan(""), std::nan("")};
      }
      results.push_back(e);
    }
    s.tell(results);
  }
  const auto front = front_objectives(s);
  ASSERT_FALSE(front.empty());
  for (const auto& f : front) {
    EXPECT_GE(f[0], 0.2);
    EXPECT_TRUE(std::isfinite(f[1]));
  }
}

TEST(Nsga2, CheckpointMidGenerationResumesToTheSameResult) {
  Nsga2Options o = zdt1_options(21);
  o.population = 20;
  o.generations = 12;
  const RunResult reference = drive(o, 0);
  const DesignSpace space = zdt1_space();
  auto s = std::make_unique<Nsga2Sampler>(space, std::vector<Sense>{Sense::minimize, Sense::minimize}, o);
  bool restored = false;
  while (!s->done()) {
    const auto ids = s->ask(1000);
    std::vector<Evaluation> results;
    for (auto id : ids) results.push_back(zdt1(space, id));
    if (!restored && s->generation() == 5) {
      // Tell half, checkpoint, "crash", restore into a new sampler; the untold half
      // is handed out again.
      const std::size_t half = results.size() / 2;
      s->tell(std::span(results).first(half));
      const auto state = s->save_state();
      s = std::make_unique<Nsga2Sampler>(space, std::vector<Sense>{Sense::minimize, Sense::minimize}, o);
      s->restore_state(state);
      EXPECT_EQ(s->save_state(), state);
      EXPECT_EQ(s->outstanding(), results.size() - half);
      std::vector<Evaluation> rest;
      for (auto id : s->ask(1000)) rest.push_back(zdt1(space, id));
      EXPECT_EQ(rest.size(), results.size() - half);
      s->tell(rest);
      restored = true;
      continue;
    }
    s->tell(results);
  }
  EXPECT_TRUE(restored);
  std::vector<std::uint64_t> pop;
  for (const auto& m : s->population()) pop.push_back(m.evaluation.index);
  EXPECT_EQ(pop, reference.population);
  Nsga2Options other = o;
  other.seed = 22;
  Nsga2Sampler wrong(space, {Sense::minimize, Sense::minimize}, other);
  EXPECT_THROW(wrong.restore_state(s->save_state()), std::invalid_argument);
}

TEST(Nsga2, MixedCategoricalSpaceStaysInRangeAndConverges) {
  // Knobs: 4 dataflows (categorical), 64 array sizes, 3 precisions (categorical), 32 clocks.
  const DesignSpace space({{"dataflow", 4}, {"array", 64}, {"precision", 3}, {"clock", 32}});
  Nsga2Options o;
  o.population = 40;
  o.generations = 60;
  o.seed = 9;
  o.kinds = {KnobKind::categorical, KnobKind::ordinal, KnobKind::categorical, KnobKind::ordinal};
  // Objectives: latency-like a/(array*clock) + penalty for dataflow != 2, and
  // cost-like array + clock + precision. Minimal cost: array = clock = precision = 0.
  const auto eval = [&](std::uint64_t id) {
    const auto d = space.decode(id);
    Evaluation e;
    e.index = id;
    const double perf = static_cast<double>((d[1] + 1) * (d[3] + 1));
    e.objectives = {1000.0 / perf + (d[0] == 2 ? 0.0 : 5.0) + static_cast<double>(d[2]),
                    static_cast<double>(d[1] + d[3] + d[2])};
    return e;
  };
  Nsga2Sampler s(space, {Sense::minimize, Sense::minimize}, o);
  while (!s.done()) {
    std::vector<Evaluation> results;
    for (auto id : s.ask(7)) {
      ASSERT_LT(id, space.size());
      results.push_back(eval(id));
    }
    s.tell(results);
  }
  // On the true front dataflow is 2 and precision 0 (both strictly better in objective 1
  // and no worse in objective 2); NSGA-II must have found that for every front member.
  for (const auto& e : s.front()) {
    const auto d = space.decode(e.index);
    EXPECT_EQ(d[0], 2U);
    EXPECT_EQ(d[2], 0U);
  }
  EXPECT_GE(s.front().size(), 10U);
}

TEST(Nsga2, TinySpaceTerminates) {
  const DesignSpace space({{"a", 3}});
  Nsga2Options o;
  o.population = 10;
  o.generations = 5;
  Nsga2Sampler s(space, {Sense::minimize}, o);
  int rounds = 0;
  while (!s.done() && rounds++ < 100) {
    std::vector<Evaluation> results;
    for (auto id : s.ask(100)) results.push_back({id, {static_cast<double>(id)}, {}, true});
    s.tell(results);
  }
  EXPECT_TRUE(s.done());
  ASSERT_EQ(s.front().size(), 1U);
  EXPECT_EQ(s.front()[0].index, 0U);
}

TEST(Nsga2, RejectsResultsThatWereNotAsked) {
  const DesignSpace space = zdt1_space();
  Nsga2Sampler s(space, {Sense::minimize, Sense::minimize}, zdt1_options(1));
  const auto ids = s.ask(3);
  Evaluation stray = zdt1(space, ids[0]);
  stray.index = space.size() - 1;
  if (stray.index == ids[0]) stray.index -= 1;
  EXPECT_THROW(s.tell(std::span(&stray, 1)), std::invalid_argument);
  Evaluation wrong = zdt1(space, ids[0]);
  wrong.objectives.push_back(1.0);
  EXPECT_THROW(s.tell(std::span(&wrong, 1)), std::invalid_argument);
  EXPECT_THROW(Nsga2Sampler(space, {}, zdt1_options(1)), std::invalid_argument);
}

// tell(std::vector<Evaluation>&&), which `dse run` calls to move each generation's results in, runs
// the search the copying tell() runs: the same state byte for byte after every generation (islands
// and migration too), and the same refusals.
TEST(Nsga2, MovedResultsRunTheCopiedRun) {
  const DesignSpace space = zdt1_space();
  Nsga2Options o = zdt1_options(5);
  o.generations = 12;
  o.islands = 4;
  Nsga2Sampler copied(space, {Sense::minimize, Sense::minimize}, o);
  Nsga2Sampler moved(space, {Sense::minimize, Sense::minimize}, o);
  std::size_t generations = 0;
  while (!copied.done()) {
    const auto ids = copied.ask(std::numeric_limits<std::size_t>::max());
    ASSERT_EQ(moved.ask(std::numeric_limits<std::size_t>::max()), ids);
    std::vector<Evaluation> results;
    for (auto id : ids) results.push_back(zdt1(space, id));
    copied.tell(results);
    moved.tell(std::move(results));
    ASSERT_EQ(moved.save_state(), copied.save_state()) << "generation " << copied.generation();
    ++generations;
  }
  EXPECT_TRUE(moved.done());
  EXPECT_EQ(generations, 13U);  // the initial population and 12 offspring generations
  Nsga2Sampler s(space, {Sense::minimize, Sense::minimize}, zdt1_options(1));
  const auto ids = s.ask(3);
  std::vector<Evaluation> wrong{zdt1(space, ids[0])};
  wrong[0].objectives.push_back(1.0);
  EXPECT_THROW(s.tell(std::move(wrong)), std::invalid_argument);
  std::vector<Evaluation> right{zdt1(space, ids[0])};
  std::vector<Evaluation> conflicting{zdt1(space, ids[0])};
  conflicting[0].objectives[0] += 1.0;
  s.tell(std::move(right));
  EXPECT_THROW(s.tell(std::move(conflicting)), std::invalid_argument);
}

// ---- islands (search/nsga2.hpp, "Islands") -------------------------------------------------------

// The ids a run evaluates, in ask order (asking whole generations, telling them in order).
std::vector<std::uint64_t> evaluated_ids(const Nsga2Options& opt) {
  const DesignSpace space = zdt1_space();
  Nsga2Sampler s(space, {Sense::minimize, Sense::minimize}, opt);
  std::vector<std::uint64_t> out;
  while (!s.done()) {
    std::vector<Evaluation> results;
    for (auto id : s.ask(std::numeric_limits<std::size_t>::max())) {
      results.push_back(zdt1(space, id));
      out.push_back(id);
    }
    s.tell(results);
  }
  return out;
}

// Hypervolume w.r.t. (1, 1) of the front of the first `n` evaluations.
double hv_of_first(const std::vector<std::uint64_t>& ids, std::size_t n) {
  const DesignSpace space = zdt1_space();
  ParetoArchive archive({Sense::minimize, Sense::minimize});
  for (std::size_t i = 0; i < std::min(n, ids.size()); ++i) archive.insert(ids[i], zdt1(space, ids[i]).objectives);
  std::vector<std::vector<double>> front;
  for (const auto& p : archive.sorted_points()) front.push_back(p.objectives);
  return hypervolume(front, std::vector<double>{1.0, 1.0});
}

TEST(Nsga2Islands, Zdt1HypervolumeWithin2PercentOfOnePopulationAtEqualEvaluations) {
  // Issue 59: at an equal number of evaluations the island model reaches a hypervolume within
  // 2% of (or above) one population. Population 100 and 40 generations (about 4,100
  // evaluations, where one population is still 0.9% short of the true front's 2/3: a budget
  // at which the search, not the grid, sets the figure), four islands of 25 with the default
  // migration (every generation, 5 members), five seeds.
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    Nsga2Options one = zdt1_options(seed);
    one.generations = 40;
    Nsga2Options four = one;
    four.islands = 4;
    const auto a = evaluated_ids(one);
    const auto b = evaluated_ids(four);
    const std::size_t n = std::min(a.size(), b.size());
    const double hv_one = hv_of_first(a, n);
    const double hv_four = hv_of_first(b, n);
    std::printf("seed %llu, %zu evaluations: HV one population %.5f, 4 islands %.5f (%+.2f%%)\n",
                static_cast<unsigned long long>(seed), n, hv_one, hv_four, 100.0 * (hv_four / hv_one - 1.0));
    EXPECT_GE(hv_four, 0.98 * hv_one) << "seed " << seed;
    EXPECT_GT(n, 3500U);  // duplicates aside, (40 + 1) x 100 asked
  }
}

TEST(Nsga2Islands, IndependentOfAskChunkingAndTellOrder) {
  Nsga2Options o = zdt1_options(13);
  o.generations = 20;
  o.islands = 4;
  o.migration_interval = 3;
  const RunResult reference = drive(o, 0);
  ASSERT_EQ(reference.batches.size(), 21U);
  for (std::uint64_t shuffle : {1ULL, 2ULL}) {
    const RunResult r = drive(o, shuffle);
    EXPECT_EQ(r.batches, reference.batches) << "shuffle " << shuffle;
    EXPECT_EQ(r.population, reference.population) << "shuffle " << shuffle;
  }
  // Another island count is another run (and so is one island).
  Nsga2Options two = o;
  two.islands = 2;
  EXPECT_NE(drive(two, 0).population, reference.population);
}

TEST(Nsga2Islands, EachGenerationAsksThePopulationAndIslandsKeepTheirSize) {
  Nsga2Options o = zdt1_options(17);
  o.population = 103;  // 4 islands of 26, 26, 26, 25
  o.generations = 6;
  o.islands = 4;
  const DesignSpace space = zdt1_space();
  Nsga2Sampler s(space, {Sense::minimize, Sense::minimize}, o);
  while (!s.done()) {
    const auto ids = s.ask(std::numeric_limits<std::size_t>::max());
    EXPECT_LE(ids.size(), 103U);
    EXPECT_GE(ids.size(), 90U);  // offspring repeating a parent are not asked again
    std::vector<Evaluation> results;
    for (auto id : ids) results.push_back(zdt1(space, id));
    s.tell(results);
  }
  ASSERT_EQ(s.islands(), 4U);
  for (std::size_t k = 0; k < 4; ++k) EXPECT_EQ(s.island(k).size(), k < 3 ? 26U : 25U);
  EXPECT_EQ(s.population().size(), 103U);
  for (const auto& e : s.front()) {  // no front member dominated by another island's member
    for (const auto& m : s.population()) {
      EXPECT_FALSE(m.violation == 0.0 && dominates(m.evaluation.objectives, e.objectives,
                                                   std::vector<Sense>{Sense::minimize, Sense::minimize}));
    }
  }
}

TEST(Nsga2Islands, CheckpointResumesToTheSameResultAndRefusesAnotherIslandCount) {
  Nsga2Options o = zdt1_options(23);
  o.population = 40;
  o.generations = 10;
  o.islands = 4;
  const RunResult reference = drive(o, 0);
  const DesignSpace space = zdt1_space();
  const std::vector<Sense> senses = {Sense::minimize, Sense::minimize};
  auto s = std::make_unique<Nsga2Sampler>(space, senses, o);
  bool restored = false;
  while (!s->done()) {
    std::vector<Evaluation> results;
    for (auto id : s->ask(1000)) results.push_back(zdt1(space, id));
    if (!restored && s->generation() == 4) {
      s->tell(std::span(results).first(results.size() / 3));
      const auto state = s->save_state();
      s = std::make_unique<Nsga2Sampler>(space, senses, o);
      s->restore_state(state);
      EXPECT_EQ(s->save_state(), state);
      std::vector<Evaluation> rest;
      for (auto id : s->ask(1000)) rest.push_back(zdt1(space, id));
      s->tell(rest);
      restored = true;
      continue;
    }
    s->tell(results);
  }
  EXPECT_TRUE(restored);
  std::vector<std::uint64_t> pop;
  for (const auto& m : s->population()) pop.push_back(m.evaluation.index);
  EXPECT_EQ(pop, reference.population);
  Nsga2Options two = o;
  two.islands = 2;
  Nsga2Sampler other(space, senses, two);
  EXPECT_THROW(other.restore_state(s->save_state()), std::invalid_argument);
  Nsga2Options bad = o;
  bad.migration_size = 10;  // islands of 10
  EXPECT_THROW(Nsga2Sampler(space, senses, bad), std::invalid_argument);
  bad.islands = 41;
  EXPECT_THROW(Nsga2Sampler(space, senses, bad), std::invalid_argument);
}

}  // namespace
}  // namespace dse::search
