// Nsga2Sampler::share_selections (issue 59): island selections split over cooperating copies, as
// the ranks of `dse run` split them, simulated in one process with one thread per copy and an
// exchange that concatenates every copy's bytes. The reference is one unshared sampler: every
// copy's state (save_state bytes) after every generation must equal it byte for byte, for 1, 2, 3
// and 5 copies and 7 (more copies than islands: two select nothing).
#include <gtest/gtest.h>

#include <barrier>
#include <cmath>
#include <cstddef>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "search/nsga2.hpp"
#include "search/wire.hpp"
#include "tests/search/zdt1_grid.hpp"

namespace dse::search {
namespace {

// ZDT1 on a grid (tests/search/zdt1_grid.hpp); constraint metric f1.
DesignSpace space() { return zdt1_grid::space(); }

Evaluation zdt1(const DesignSpace& s, std::uint64_t id) {
  const zdt1_grid::Point p = zdt1_grid::point(s, id);
  Evaluation e;
  e.index = id;
  // Objectives rounded to 1/16: many ties and equal vectors, so ranks and crowding see duplicates.
  e.objectives = {std::round(16 * p.f1) / 16, std::round(16 * p.f2) / 16};
  e.constraints = {p.f1};
  e.feasible = p.digits[1] % 17 != 0;  // some infeasible points (violation +inf)
  return e;
}

// The save_state bytes after every generation of one copy (part of parts; parts == 0: unshared).
std::vector<std::vector<std::byte>> run(const Nsga2Options& o, std::size_t part, std::size_t parts,
                                        const Nsga2Sampler::Exchange& exchange) {
  const DesignSpace sp = space();
  Nsga2Sampler s(sp, {Sense::minimize, Sense::minimize}, o);
  if (parts > 0) s.share_selections(part, parts, exchange);
  std::vector<std::vector<std::byte>> states;
  while (!s.done()) {
    std::vector<Evaluation> results;
    for (std::uint64_t id : s.ask(1u << 20)) results.push_back(zdt1(sp, id));
    s.tell(results);
    states.push_back(s.save_state());
  }
  return states;
}

// All-gather among `parts` threads: each copy's bytes, concatenated last part first (any order
// must do).
class Gather {
 public:
  explicit Gather(std::size_t parts) : sync_(static_cast<std::ptrdiff_t>(parts)), slots_(parts) {}
  std::vector<std::byte> operator()(std::size_t part, std::vector<std::byte> mine) {
    slots_[part] = std::move(mine);
    sync_.arrive_and_wait();
    std::vector<std::byte> all;
    for (std::size_t i = slots_.size(); i-- > 0;) all.insert(all.end(), slots_[i].begin(), slots_[i].end());
    sync_.arrive_and_wait();  // nobody overwrites a slot before every copy has read them all
    return all;
  }

 private:
  std::barrier<> sync_;
  std::vector<std::vector<std::byte>> slots_;
};

void expect_shared_equals_unshared(const Nsga2Options& o) {
  const auto reference = run(o, 0, 0, {});
  ASSERT_EQ(reference.size(), o.generations + 1);
  for (std::size_t parts : {1u, 2u, 3u, 5u, 7u}) {
    Gather gather(parts);
    std::vector<std::vector<std::vector<std::byte>>> states(parts);
    std::vector<std::thread> threads;
    for (std::size_t p = 0; p < parts; ++p) {
      threads.emplace_back([&, p] {
        states[p] = run(o, p, parts, [&, p](std::vector<std::byte> mine) { return gather(p, std::move(mine)); });
      });
    }
    for (auto& t : threads) t.join();
    for (std::size_t p = 0; p < parts; ++p) {
      ASSERT_EQ(states[p].size(), reference.size()) << parts << " parts, part " << p;
      for (std::size_t g = 0; g < reference.size(); ++g) {
        EXPECT_EQ(states[p][g], reference[g]) << parts << " parts, part " << p << ", generation " << g;
      }
    }
  }
}

TEST(Nsga2Shared, StateEqualsTheUnsharedSamplerEveryGeneration) {
  Nsga2Options o;
  o.population = 100;
  o.generations = 12;
  o.seed = 41;
  o.islands = 5;
  o.migration_interval = 2;  // generations with and without a migration
  expect_shared_equals_unshared(o);
}

TEST(Nsga2Shared, WithBudgetsAndUnevenIslands) {
  Nsga2Options o;
  o.population = 103;  // islands of 21 and 20
  o.generations = 8;
  o.seed = 5;
  o.islands = 5;
  o.migration_size = 3;
  o.budgets = {0.6};  // f1 above 0.6 is infeasible by its violation
  expect_shared_equals_unshared(o);
}

TEST(Nsga2Shared, OneIslandIsUnaffected) {
  Nsga2Options o;
  o.population = 40;
  o.generations = 5;
  o.seed = 9;
  expect_shared_equals_unshared(o);
}

TEST(Nsga2Shared, AFailedPartMakesEveryPartThrow) {
  Nsga2Options o;
  o.population = 40;
  o.generations = 3;
  o.islands = 4;
  const DesignSpace sp = space();
  Nsga2Sampler s(sp, {Sense::minimize, Sense::minimize}, o);
  // The other part's frame: status 0 (failed), empty body.
  s.share_selections(0, 2, [](std::vector<std::byte> mine) {
    wire::put_u8(mine, 0);
    wire::put_u64(mine, 0);
    return mine;
  });
  std::vector<Evaluation> results;
  for (std::uint64_t id : s.ask(1000)) results.push_back(zdt1(sp, id));
  EXPECT_THROW(s.tell(results), std::runtime_error);
  EXPECT_THROW(s.share_selections(2, 2, [](std::vector<std::byte> b) { return b; }), std::invalid_argument);
  EXPECT_THROW(s.share_selections(0, 2, {}), std::invalid_argument);
}

}  // namespace
}  // namespace dse::search
