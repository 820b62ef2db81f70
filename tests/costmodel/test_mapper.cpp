// Mapper: the result equals the optimum of a brute-force enumeration of the
// same mapspace (written here, no pruning), on 30 shapes x 3 small hardware
// descriptions and all three objectives; memoisation; constraints; bounds.
#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <limits>
#include <string>
#include <utility>
#include <thread>
#include <vector>

#include "costmodel/loopnest/evaluate.hpp"
#include "costmodel/mapper/mapper.hpp"
#include "costmodel/mapper/memo.hpp"
#include "costmodel/mapper/prune.hpp"
#include "costmodel/mapper/search_state.hpp"
#include "costmodel/mapper/sheet.hpp"

namespace lp = dse::costmodel::loopnest;
namespace mp = dse::costmodel::mapper;

namespace {

using i64 = std::int64_t;
constexpr std::size_t sz(int i) { return static_cast<std::size_t>(i); }

lp::StorageLevel level(const char* name, i64 cap, i64 mx, i64 my, double e_pj, double bw = 0.0) {
  lp::StorageLevel l;
  l.name = name;
  l.capacity_words = cap;
  l.mesh_x = mx;
  l.mesh_y = my;
  l.read_energy_j = e_pj * 1e-12;
  l.fill_energy_j = e_pj * 1e-12;
  l.update_energy_j = e_pj * 1e-12;
  l.read_bandwidth_words_per_cycle = bw;
  l.write_bandwidth_words_per_cycle = bw;
  return l;
}

// H1: DRAM -> buffer (12 words) -> 1 MAC.
lp::Architecture hw1() {
  lp::Architecture a;
  a.name = "h1";
  a.levels = {level("DRAM", 0, 1, 1, 64.0, 2.0), level("Buffer", 12, 1, 1, 1.0)};
  a.compute.rates[0] = lp::PrecisionRate{0, 1.0, 0.5e-12};
  return a;
}
// H2: DRAM -> GLB (16 words) -> 4 PEs on x, each an RF (3 words, weights and outputs only).
lp::Architecture hw2() {
  lp::Architecture a;
  a.name = "h2";
  lp::StorageLevel rf = level("RF", 3, 4, 1, 0.2);
  rf.may_keep = 0b101u;
  a.levels = {level("DRAM", 0, 1, 1, 100.0, 1.0), level("GLB", 16, 1, 1, 4.0, 4.0), rf};
  a.compute.mesh_x = 4;
  a.compute.rates[0] = lp::PrecisionRate{0, 1.0, 0.3e-12};
  return a;
}
// H3: DRAM -> 2 x 2 mesh of buffers (8 words, no outputs) via a pure fan-out level -> 2 x 2 MACs.
lp::Architecture hw3() {
  lp::Architecture a;
  a.name = "h3";
  lp::StorageLevel fan = level("inter_spatial", 0, 1, 1, 0.0);
  fan.may_keep = 0;
  lp::StorageLevel buf = level("Buf", 8, 2, 2, 2.0, 2.0);
  buf.may_keep = 0b011u;
  a.levels = {level("DRAM", 0, 1, 1, 50.0, 1.5), fan, buf};
  a.compute.mesh_x = 2;
  a.compute.mesh_y = 2;
  a.compute.rates[0] = lp::PrecisionRate{0, 1.0, 0.4e-12};
  return a;
}

lp::Problem conv1d(i64 k, i64 r, i64 p) {
  lp::Problem pr;
  pr.name = "conv1d";
  pr.type = lp::LayerType::conv;
  const int K = pr.add_dim("K", k), R = pr.add_dim("R", r), P = pr.add_dim("P", p);
  const int w = pr.add_tensor("Weights"), in = pr.add_tensor("Inputs"), out = pr.add_tensor("Outputs", true);
  pr.add_rank(w, {{static_cast<std::int8_t>(K), 1}});
  pr.add_rank(w, {{static_cast<std::int8_t>(R), 1}});
  pr.add_rank(in, {{static_cast<std::int8_t>(R), 1}, {static_cast<std::int8_t>(P), 1}});
  pr.add_rank(out, {{static_cast<std::int8_t>(K), 1}});
  pr.add_rank(out, {{static_cast<std::int8_t>(P), 1}});
  return pr;
}

std::vector<lp::Problem> shapes() {
  std::vector<lp::Problem> v;
  const int gemms[][3] = {{1, 1, 1}, {2, 2, 2}, {4, 2, 3}, {3, 5, 2}, {6, 4, 1}, {1, 8, 4}, {8, 1, 3},
                          {5, 3, 4}, {4, 4, 4}, {7, 2, 2}, {2, 6, 5}, {3, 3, 6}, {8, 2, 1}, {2, 8, 2},
                          {6, 6, 2}, {1, 4, 8}, {5, 5, 1}, {4, 3, 5}, {3, 7, 1}, {2, 4, 6}};
  for (const auto& g : gemms) v.push_back(lp::make_gemm(g[0], g[1], g[2]));
  const int convs[][3] = {{2, 3, 4}, {4, 3, 2}, {1, 3, 6}, {3, 2, 5}, {8, 1, 2}, {2, 2, 7}, {5, 3, 1}, {4, 1, 4}, {2, 3, 3}, {6, 2, 2}};
  for (const auto& c : convs) v.push_back(conv1d(c[0], c[1], c[2]));
  return v;
}

// ---- the brute-force enumerator: every point of the mapspace, no pruning ----
struct Brute {
  const lp::Architecture& a;
  const lp::Problem& p;
  int nl;
  int nd;
  // The prepared form, computed once: evaluate(prepare(a, p), m) equals evaluate(a, p, m) field for
  // field (LoopNestProperty.PreparedFormEqualsPlainEvaluate), and re-preparing per mapping was 29% of
  // this test's time (perf; 143 s of the ASan job's first pass).
  lp::PreparedNest pn = lp::prepare(a, p);
  lp::Mapping m{};
  std::array<double, 3> best{std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(),
                             std::numeric_limits<double>::infinity()};  // by Objective
  i64 points = 0;

  void orders(int l) {
    if (l == nl) {
      ++points;
      const lp::NestCost c = lp::evaluate(pn, m);
      if (!c.feasible) return;
      for (int o = 0; o < 3; ++o) best[sz(o)] = std::min(best[sz(o)], mp::objective_value(static_cast<mp::Objective>(o), c));
      return;
    }
    std::array<std::int8_t, lp::kMaxDims> ord{0, 1, 2, 3, 4, 5, 6, 7};
    do {  // every permutation of all dimensions, unit loops included
      m.levels[sz(l)].order = ord;
      orders(l + 1);
    } while (std::next_permutation(ord.begin(), ord.begin() + nd));
  }
  void keeps(int l) {
    if (l == nl) {
      // Capacity and fan-out do not depend on the loop order: one evaluation
      // with the identity orders says whether the tiling fits at all.
      for (int q = 0; q < nl; ++q) m.levels[sz(q)].order = {0, 1, 2, 3, 4, 5, 6, 7};
      const lp::NestCost c = lp::evaluate(pn, m);
      if (!c.feasible && (c.reason == lp::Infeasible::capacity_exceeded || c.reason == lp::Infeasible::fanout_exceeded)) return;
      orders(0);
      return;
    }
    const std::uint32_t all = (1u << p.num_tensors) - 1u;
    for (std::uint32_t k = 0; k <= all; ++k) {
      if (l == 0 && k != all) continue;
      if ((k & ~a.levels[sz(l)].may_keep) != 0) continue;
      m.levels[sz(l)].keep = k;
      keeps(l + 1);
    }
  }
  // Factors at (level l, dim d) with `covered` iterations of d already inside.
  void factors(int l, int d, std::array<i64, lp::kMaxDims> covered) {
    if (d == nd) {
      if (l == 0) {
        keeps(0);
      } else {
        factors(l - 1, 0, covered);
      }
      return;
    }
    const i64 r = (p.dim_sizes[sz(d)] + covered[sz(d)] - 1) / covered[sz(d)];
    const i64 fx = mp::fanout_x(a, l), fy = mp::fanout_y(a, l);
    const bool fan = fx * fy > 1;
    const bool store = !(a.levels[sz(l)].may_keep == 0 && a.levels[sz(l)].capacity_words == 0);
    const std::vector<i64> sc = fan ? mp::factor_candidates(r, true, std::max(fx, fy)) : std::vector<i64>{1};
    for (const i64 s : sc) {
      for (int ax = 0; ax < (s > 1 ? 2 : 1); ++ax) {
        m.levels[sz(l)].spatial[sz(d)] = s;
        m.levels[sz(l)].axis[sz(d)] = ax == 0 ? lp::Axis::x : lp::Axis::y;
        const i64 r2 = (r + s - 1) / s;
        std::vector<i64> tc = l == 0 ? std::vector<i64>{r2} : (store ? mp::factor_candidates(r2, true, 0) : std::vector<i64>{1});
        for (const i64 t : tc) {
          m.levels[sz(l)].temporal[sz(d)] = t;
          auto c2 = covered;
          c2[sz(d)] *= s * t;
          factors(l, d + 1, c2);
        }
      }
    }
  }
  void run() {
    m = lp::make_empty_mapping(a, p);
    std::array<i64, lp::kMaxDims> cov;
    cov.fill(1);
    factors(nl - 1, 0, cov);
  }
};

}  // namespace

TEST(Mapper, EqualsBruteForceOptimum) {
  const std::vector<lp::Architecture> hws = {hw1(), hw2(), hw3()};
  const auto ops = shapes();
  ASSERT_GE(ops.size(), 30u);
  int cases = 0;
  i64 brute_points = 0, mapper_evals = 0;
#if defined(__SANITIZE_ADDRESS__)
  // The ASan job looks for memory errors, not for more cases: the brute force over every shape
  // took 320 s there with the slow unwinder (17 s in the normal build, which checks them all; a
  // quarter of the shapes take 23 s under ASan with the fast one), so it takes every fourth
  // shape on each architecture.
  const std::size_t shape_stride = 4;
#else
  const std::size_t shape_stride = 1;
#endif
  for (const auto& a : hws) {
    ASSERT_EQ(lp::validate(a), "");
    for (std::size_t i = 0; i < ops.size(); i += shape_stride) {
      const auto& p = ops[i];
      Brute b{a, p, static_cast<int>(a.levels.size()), p.num_dims};
      b.run();
      brute_points += b.points;
      for (const mp::Objective obj : {mp::Objective::energy, mp::Objective::latency, mp::Objective::edp}) {
        const double opt = b.best[static_cast<std::size_t>(obj)];
        mp::MapperOptions o;
        o.objective = obj;
        const mp::MapResult r = mp::map_operator(a, p, mp::Constraints{}, o);
        ASSERT_TRUE(r.feasible) << a.name << " " << p.name;
        EXPECT_EQ(r.strategy, mp::Strategy::exhaustive) << a.name << " " << p.name;
        EXPECT_NEAR(r.objective_value, opt, 1e-12 * opt) << a.name << " " << p.name << " M/K=" << p.dim_sizes[0] << " "
                                                         << p.dim_sizes[1] << " " << p.dim_sizes[2] << " "
                                                         << mp::objective_name(obj);
        // The result is what evaluate() says of the mapping.
        EXPECT_DOUBLE_EQ(mp::objective_value(obj, lp::evaluate(a, p, r.mapping)), r.objective_value);
        // The per-operator lower bound holds.
        EXPECT_LE(r.bound_value, r.objective_value * (1.0 + 1e-12));
        mapper_evals += r.evaluated;
        ++cases;
      }
    }
  }
  std::cout << cases << " cases; brute force " << brute_points << " mappings, mapper " << mapper_evals << " evaluations\n";
}

TEST(Mapper, Deterministic) {
  const lp::Architecture a = hw2();
  const lp::Problem p = lp::make_gemm(64, 48, 32);
  mp::MapperOptions o;
  const mp::MapResult r1 = mp::map_operator(a, p, mp::Constraints{}, o);
  const mp::MapResult r2 = mp::map_operator(a, p, mp::Constraints{}, o);
  EXPECT_EQ(r1.objective_value, r2.objective_value);
  EXPECT_EQ(r1.evaluated, r2.evaluated);
  for (int l = 0; l < 3; ++l) EXPECT_EQ(r1.mapping.levels[sz(l)].temporal, r2.mapping.levels[sz(l)].temporal);
}

TEST(Mapper, HonoursConstraints) {
  const lp::Architecture a = hw2();
  const lp::Problem p = lp::make_gemm(8, 8, 8);
  mp::Constraints c;
  c.levels[1].bypass = 0b010u;         // GLB must not keep B
  c.levels[2].temporal[2] = 2;         // RF: K fixed to 2
  c.levels[1].spatial[0] = 4;          // 4 PEs split M
  c.levels[1].permutation[0] = 1;      // GLB: N innermost
  c.levels[1].num_permutation = 1;
  for (const mp::Objective obj : {mp::Objective::energy, mp::Objective::latency}) {
    mp::MapperOptions o;
    o.objective = obj;
    const mp::MapResult r = mp::map_operator(a, p, c, o);
    ASSERT_TRUE(r.feasible);
    EXPECT_EQ(r.mapping.levels[1].keep & 0b010u, 0u);
    EXPECT_EQ(r.mapping.levels[2].temporal[2], 2);
    EXPECT_EQ(r.mapping.levels[1].spatial[0], 4);
    if (r.mapping.levels[1].temporal[1] > 1) {  // N is the innermost loop of the GLB
      EXPECT_EQ(r.mapping.levels[1].order[sz(p.num_dims - 1)], 1);
    }
  }
  // An unsupported precision is a value, not an exception.
  lp::Architecture a8 = hw2();
  a8.compute.rates[0].bits = 8;
  mp::Constraints c16;
  c16.precisions[0] = 16;
  c16.num_precisions = 1;
  const mp::MapResult bad = mp::map_operator(a8, p, c16, mp::MapperOptions{});
  EXPECT_FALSE(bad.feasible);
  EXPECT_EQ(bad.reason, lp::Infeasible::unsupported_precision);
}

TEST(Mapper, MemoHitsAndMissesUnderThreads) {
  const lp::Architecture a = hw2();
  mp::MapperCache cache;
  const std::vector<lp::Problem> ops = {lp::make_gemm(8, 8, 8), lp::make_gemm(8, 4, 8), lp::make_gemm(4, 8, 4)};
  std::vector<std::thread> th;
  std::vector<double> got(8 * ops.size());
  for (int t = 0; t < 8; ++t) {
    th.emplace_back([&, t] {
      for (std::size_t i = 0; i < ops.size(); ++i) got[sz(t) * ops.size() + i] = cache.map(a, ops[i], {}, {}).objective_value;
    });
  }
  for (auto& x : th) x.join();
  EXPECT_EQ(cache.hits() + cache.misses(), 24);
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_GE(cache.misses(), 3);
  for (int t = 1; t < 8; ++t) {
    for (std::size_t i = 0; i < ops.size(); ++i) EXPECT_EQ(got[sz(t) * ops.size() + i], got[i]);
  }
  bool hit = false;
  const mp::MapResult r = cache.map(a, ops[0], {}, {}, &hit);
  EXPECT_TRUE(hit);
  EXPECT_EQ(r.objective_value, got[0]);
  // A different objective is a different key.
  mp::MapperOptions lat;
  lat.objective = mp::Objective::latency;
  cache.map(a, ops[0], {}, lat, &hit);
  EXPECT_FALSE(hit);
}

TEST(Mapper, SheetFigures) {
  const lp::Architecture a = hw2();
  const lp::Problem p = lp::make_gemm(32, 32, 32);
  const mp::MapResult r = mp::map_operator(a, p, {}, mp::MapperOptions{});
  const mp::MappingSheet s = mp::make_sheet(a, p, r);
  ASSERT_EQ(s.levels.size(), 3u);
  EXPECT_TRUE(s.feasible);
  EXPECT_DOUBLE_EQ(s.energy_j, r.cost.energy_j);
  EXPECT_GE(s.memory_stall_fraction, 0.0);
  EXPECT_LE(s.memory_stall_fraction, 1.0);
  for (const auto& l : s.levels) {
    if (l.capacity_words > 0) {
      EXPECT_LE(l.occupancy, 1.0);
    }
  }
  // 32^3 MACs on 4 PEs at 1 MAC/cycle: percent of peak = MACs / (cycles * 4).
  EXPECT_NEAR(s.percent_of_peak, 100.0 * 32768.0 / (s.cycles * 4.0), 1e-9);
}

// ---- pruning rule 1 (prune.hpp): equal order signatures => equal costs ----
// For pseudo-random tilings and keep masks on the three small hardware
// descriptions (and a 4-level one), every permutation of one level's loops is
// evaluated; orders whose signatures agree must give the same counts and
// figures, field for field. Shapes include sliding windows (conv1d input
// P + R) and a strided one (2P + R: a non-contiguous coordinate set).
namespace {

lp::Problem conv1d_strided(i64 k, i64 r, i64 p) {
  lp::Problem pr = conv1d(k, r, p);
  pr.tensors[1].ranks[0].terms[1].coef = 2;  // input column 2P + R
  return pr;
}

void expect_same_cost(const lp::NestCost& x, const lp::NestCost& y, const std::string& what) {
  ASSERT_EQ(x.feasible, y.feasible) << what;
  EXPECT_EQ(x.energy_j, y.energy_j) << what;
  EXPECT_EQ(x.cycles, y.cycles) << what;
  for (int l = 0; l < x.num_levels; ++l) {
    for (int t = 0; t < lp::kMaxTensors; ++t) {
      const lp::TensorStats& a = x.levels[sz(l)].tensors[sz(t)];
      const lp::TensorStats& b = y.levels[sz(l)].tensors[sz(t)];
      EXPECT_EQ(a.fills, b.fills) << what << " level " << l << " tensor " << t;
      EXPECT_EQ(a.reads, b.reads) << what << " level " << l << " tensor " << t;
      EXPECT_EQ(a.updates, b.updates) << what << " level " << l << " tensor " << t;
    }
  }
}

}  // namespace

TEST(MapperPruning, EquivalentLoopOrdersCostTheSame) {
  lp::Architecture h4 = hw2();  // 4 levels: DRAM -> GLB -> L1 (8 words) -> RF
  h4.name = "h4";
  h4.levels.insert(h4.levels.begin() + 2, level("L1", 8, 1, 1, 1.0, 2.0));
  ASSERT_EQ(lp::validate(h4), "");
  const std::vector<lp::Architecture> hws = {hw1(), hw2(), hw3(), h4};
  std::vector<lp::Problem> ops = {lp::make_gemm(8, 6, 12), conv1d(4, 3, 12), conv1d_strided(4, 3, 8),
                                  lp::make_batched_gemm(2, 4, 6, 8)};
  std::uint64_t seed = 12345;
  auto rnd = [&seed](std::uint64_t n) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return (seed >> 33) % n;
  };
  i64 groups = 0, merged = 0;
  for (const auto& a : hws) {
    const int nl = static_cast<int>(a.levels.size());
    for (const auto& p : ops) {
      std::array<mp::TensorShape, lp::kMaxTensors> shapes{};
      for (int t = 0; t < p.num_tensors; ++t) shapes[sz(t)] = mp::tensor_shape(p.tensors[sz(t)]);
      for (int trial = 0; trial < 12; ++trial) {
        lp::Mapping m = lp::make_empty_mapping(a, p);
        // Random temporal factors from each dimension's divisors, innermost level first.
        for (int d = 0; d < p.num_dims; ++d) {
          i64 rest = p.dim_sizes[sz(d)];
          for (int l = nl - 1; l > 0; --l) {
            const auto fc = mp::factor_candidates(rest, false, 0);
            const i64 f = fc[rnd(fc.size())];
            m.levels[sz(l)].temporal[sz(d)] = f;
            rest /= f;
          }
          m.levels[0].temporal[sz(d)] = rest;
        }
        for (int l = 1; l < nl; ++l) m.levels[sz(l)].keep &= static_cast<std::uint32_t>(rnd(16));
        std::uint32_t below = 0;
        for (int l = nl - 1; l >= 0; --l) {
          std::vector<std::pair<mp::OrderSignature, lp::NestCost>> seen;
          std::array<std::int8_t, lp::kMaxDims> ord{0, 1, 2, 3, 4, 5, 6, 7};
          do {
            lp::Mapping mm = m;
            mm.levels[sz(l)].order = ord;
            const lp::NestCost c = lp::evaluate(a, p, mm);
            const mp::OrderSignature s = mp::order_signature(ord, mm.levels[sz(l)].temporal, p.num_dims, shapes, p.num_tensors, below);
            bool found = false;
            for (const auto& [s2, c2] : seen) {
              if (s2 == s) {
                expect_same_cost(c, c2, a.name + " " + p.name + " level " + std::to_string(l));
                found = true;
                ++merged;
                break;
              }
            }
            if (!found) {
              seen.emplace_back(s, c);
              ++groups;
            }
          } while (std::next_permutation(ord.begin(), ord.begin() + p.num_dims));
          below |= m.levels[sz(l)].keep;
        }
      }
    }
  }
  std::cout << "orders: " << groups << " classes, " << merged << " orders merged into them\n";
  EXPECT_GT(merged, groups);  // the rule does merge (most orders here are redundant)
}

// Pruning shows in the figures: on a mapspace small enough to compare, the
// pruned exhaustive search evaluates fewer mappings than there are
// capacity-feasible (tiling, keeps, order) points, and reports what it cut.
TEST(MapperPruning, ReportsWhatItCut) {
  const lp::Architecture a = hw2();
  const lp::Problem p = conv1d(2, 3, 4);
  Brute b{a, p, static_cast<int>(a.levels.size()), p.num_dims};
  b.run();
  mp::MapperOptions o;
  const mp::MapResult r = mp::map_operator(a, p, mp::Constraints{}, o);
  ASSERT_EQ(r.strategy, mp::Strategy::exhaustive);
  EXPECT_NEAR(r.objective_value, b.best[static_cast<std::size_t>(mp::Objective::energy)], 1e-12 * r.objective_value);
  EXPECT_GT(r.orders_merged, 0);
  EXPECT_GT(r.pruned_by_bound, 0);
  EXPECT_LT(r.evaluated, b.points);
  std::cout << "brute force " << b.points << " mappings; mapper evaluated " << r.evaluated << ", merged "
            << r.orders_merged << " orders, cut " << r.pruned_by_bound << " branches by bound\n";
}

// ---- the heuristic (issue 59): spaces too large for the branch and bound ----
namespace {

// Cases the mapper maps with the local search: exhaustive_limit 1 keeps the branch and
// bound out (every space estimate here is above 10^6).
struct HeuristicCase {
  lp::Architecture a;
  lp::Problem p;
};

std::vector<HeuristicCase> heuristic_cases() {
  lp::Architecture h4 = hw2();  // DRAM -> GLB -> L1 (8 words) -> RF, 4 PEs
  h4.levels.insert(h4.levels.begin() + 2, level("L1", 8, 1, 1, 1.0, 2.0));
  return {{hw2(), lp::make_gemm(64, 48, 32)}, {hw3(), lp::make_gemm(36, 20, 48)}, {h4, conv1d(16, 3, 30)},
          {hw3(), conv1d_strided(12, 5, 24)}, {h4, lp::make_batched_gemm(4, 12, 18, 10)}};
}

mp::MapperOptions heuristic_options(mp::Objective obj) {
  mp::MapperOptions o;
  o.objective = obj;
  o.exhaustive_limit = 1;
  return o;
}

double value_on(mp::Objective o, const lp::NestCost& c) { return mp::objective_value(o, c); }

}  // namespace

// Each objective's answer is at least as good on that objective as the answers of the
// other two (issue 59: before, --objective edp found a lower energy than the energy
// objective on Timeloop's Eyeriss case), and map_operator returns map_all_objectives' entry.
TEST(MapperHeuristic, NoObjectiveIsBeatenOnItsOwnByAnother) {
  for (const auto& hc : heuristic_cases()) {
    const std::array<mp::MapResult, 3> all = mp::map_all_objectives(hc.a, hc.p, {}, heuristic_options(mp::Objective::energy));
    for (std::size_t x = 0; x < 3; ++x) {
      const auto ox = static_cast<mp::Objective>(x);
      ASSERT_TRUE(all[x].feasible) << hc.a.name << " " << hc.p.name;
      EXPECT_EQ(all[x].strategy, mp::Strategy::heuristic);
      for (std::size_t y = 0; y < 3; ++y) {
        EXPECT_LE(value_on(ox, all[x].cost), value_on(ox, all[y].cost)) << hc.a.name << " " << hc.p.name << " "
                                                                         << mp::objective_name(ox) << " vs " << y;
      }
      const mp::MapResult one = mp::map_operator(hc.a, hc.p, {}, heuristic_options(ox));
      EXPECT_EQ(one.objective_value, all[x].objective_value);
      EXPECT_EQ(one.evaluated, all[x].evaluated);
    }
  }
}

// The local search keeps the mapper's first local search as its first phase (classic.cpp),
// run alone here for each objective: the full search is never worse on any case.
TEST(MapperHeuristic, NeverWorseThanTheFirstLocalSearch) {
  for (const auto& hc : heuristic_cases()) {
    for (const mp::Objective obj : {mp::Objective::energy, mp::Objective::latency, mp::Objective::edp}) {
      const mp::MapperOptions o = heuristic_options(obj);
      const mp::Constraints none{};
      mp::detail::Search s(hc.a, hc.p, none, o);
      mp::detail::init_search(s, hc.a.compute.rates[0]);
      s.heuristic_stop = o.heuristic_evaluations;
      s.run_classic(obj);
      const double first = s.inc[static_cast<std::size_t>(obj)].score.value;
      const mp::MapResult r = mp::map_operator(hc.a, hc.p, {}, o);
      EXPECT_LE(r.objective_value, first) << hc.a.name << " " << hc.p.name << " " << mp::objective_name(obj);
      // And it is what evaluate() says of the mapping, above the lower bound.
      EXPECT_DOUBLE_EQ(value_on(obj, lp::evaluate(hc.a, hc.p, r.mapping)), r.objective_value);
      EXPECT_LE(r.bound_value, r.objective_value * (1.0 + 1e-12));
    }
  }
}

// With perfect factors only (Constraints::imperfect false, as dse timeloop-mapper prints
// by default) every dimension's factors multiply to its size exactly.
TEST(MapperHeuristic, PerfectFactorsDivideEveryDimension) {
  mp::Constraints c;
  c.imperfect = false;
  for (const auto& hc : heuristic_cases()) {
    for (const mp::Objective obj : {mp::Objective::energy, mp::Objective::latency}) {
      const mp::MapResult r = mp::map_operator(hc.a, hc.p, c, heuristic_options(obj));
      ASSERT_TRUE(r.feasible) << hc.a.name << " " << hc.p.name;
      for (int d = 0; d < hc.p.num_dims; ++d) {
        i64 prod = 1;
        for (std::size_t l = 0; l < hc.a.levels.size(); ++l) prod *= r.mapping.levels[l].temporal[sz(d)] * r.mapping.levels[l].spatial[sz(d)];
        EXPECT_EQ(prod, hc.p.dim_sizes[sz(d)]) << hc.a.name << " " << hc.p.name << " dim " << d;
      }
    }
  }
}

// The evaluation cap is deterministic and exact; a time budget that runs out is reported.
TEST(MapperHeuristic, BudgetsAreReported) {
  const HeuristicCase hc = heuristic_cases()[0];
  mp::MapperOptions o = heuristic_options(mp::Objective::energy);
  o.heuristic_evaluations = 700;
  const mp::MapResult r1 = mp::map_operator(hc.a, hc.p, {}, o);
  const mp::MapResult r2 = mp::map_operator(hc.a, hc.p, {}, o);
  EXPECT_EQ(r1.evaluated, 700);
  EXPECT_TRUE(r1.evaluation_limited);
  EXPECT_FALSE(r1.time_limited);
  EXPECT_EQ(r1.objective_value, r2.objective_value);
  for (int l = 0; l < 3; ++l) EXPECT_EQ(r1.mapping.levels[sz(l)].temporal, r2.mapping.levels[sz(l)].temporal);
  const mp::MappingSheet s1 = mp::make_sheet(hc.a, hc.p, r1);
  EXPECT_EQ(s1.stopped_by, "evaluation cap");
  // Unlimited, the same search converges on its own, no worse than when cut.
  o.heuristic_evaluations = std::int64_t{1} << 40;
  const mp::MapResult full = mp::map_operator(hc.a, hc.p, {}, o);
  EXPECT_FALSE(full.evaluation_limited);
  EXPECT_LE(full.objective_value, r1.objective_value);
  EXPECT_EQ(mp::make_sheet(hc.a, hc.p, full).stopped_by, "finished");
  // A budget of one microsecond ends the search at its first look at the clock: still a
  // mapping (the first one evaluated), flagged as cut by the clock.
  o.time_budget_ms = 0.001;
  const mp::MapResult t = mp::map_operator(hc.a, hc.p, {}, o);
  EXPECT_TRUE(t.time_limited);
  EXPECT_TRUE(t.feasible);
  EXPECT_EQ(mp::make_sheet(hc.a, hc.p, t).stopped_by, "time budget");
}

// The sheet says whether the mapping is proven optimal: the branch and bound's answers
// are (the 270 cases above equal the brute-force optimum), a local search's are not
// unless they reach the lower bound.
TEST(MapperHeuristic, SheetSaysProvenOptimalOrTheGap) {
  const lp::Architecture a = hw2();
  const lp::Problem small = lp::make_gemm(4, 4, 4);
  const mp::MapResult ex = mp::map_operator(a, small, {}, mp::MapperOptions{});
  ASSERT_EQ(ex.strategy, mp::Strategy::exhaustive);
  EXPECT_TRUE(ex.proven_optimal);
  EXPECT_TRUE(mp::make_sheet(a, small, ex).proven_optimal);
  const HeuristicCase hc = heuristic_cases()[0];
  const mp::MapResult h = mp::map_operator(hc.a, hc.p, {}, heuristic_options(mp::Objective::energy));
  const mp::MappingSheet sh = mp::make_sheet(hc.a, hc.p, h);
  EXPECT_EQ(sh.proven_optimal, h.objective_value <= h.bound_value * (1.0 + 1e-12));
  EXPECT_NEAR(sh.gap_to_bound, h.objective_value / h.bound_value - 1.0, 1e-12);
}

// A constraint that fixes a dimension's outermost temporal factor (here to 1, as Timeloop's
// "P=1 at DRAM") leaves the rest of the dimension to the outermost level whose factor is
// free: the local search starts there and keeps it there (the mapper before issue 59 put
// the rest at level 0 regardless and found no feasible mapping: docs/known-gaps.md).
TEST(MapperHeuristic, OutermostFactorFixedToOneStillMaps) {
  lp::Architecture a = hw2();
  a.levels[1].capacity_words = 4096;  // the GLB holds what DRAM may not iterate
  const lp::Problem p = lp::make_gemm(24, 48, 32);
  mp::Constraints c;
  c.levels[0].temporal[0] = 1;  // M: one DRAM iteration
  c.levels[0].temporal[2] = 1;  // K too
  for (const mp::Objective obj : {mp::Objective::energy, mp::Objective::latency}) {
    const mp::MapResult r = mp::map_operator(a, p, c, heuristic_options(obj));
    ASSERT_TRUE(r.feasible) << mp::objective_name(obj);
    EXPECT_EQ(r.strategy, mp::Strategy::heuristic);
    EXPECT_TRUE(mp::admitted(c, a, p, r.mapping, r.cost));
    EXPECT_EQ(r.mapping.levels[0].temporal[0], 1);
    EXPECT_EQ(r.mapping.levels[0].temporal[2], 1);
    for (int d = 0; d < 3; ++d) {
      i64 prod = 1;
      for (int l = 0; l < 3; ++l) prod *= r.mapping.levels[sz(l)].temporal[sz(d)] * r.mapping.levels[sz(l)].spatial[sz(d)];
      EXPECT_GE(prod, p.dim_sizes[sz(d)]) << d;
    }
  }
}
