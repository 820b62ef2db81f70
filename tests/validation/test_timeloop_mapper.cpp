// The mapper on Timeloop v0.4 reference cases (data/oracles/timeloop,
// read at test time). Targets: the best energy Timeloop's own search reaches
// on the same mapspace (figures from the issue / expected.md, see each test).
#include <gtest/gtest.h>

#include <array>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "costmodel/loopnest/evaluate.hpp"
#include "costmodel/mapper/mapper.hpp"
#include "dse/io/timeloop_reader.hpp"
#include "dse/io/timeloop_writer.hpp"
#include "tests/scratch.hpp"

namespace lp = dse::costmodel::loopnest;
namespace mp = dse::costmodel::mapper;

namespace {

std::string dir(const std::string& c) { return std::string(DSE_ORACLES_DIR) + "/timeloop/" + c + "/"; }

struct Loaded {
  lp::Architecture arch;
  lp::Problem problem;
};

Loaded load(const std::string& d, const std::string& arch, const std::string& prob) {
  Loaded l;
  l.arch = dse::io::read_timeloop_arch(d + arch);
  dse::io::read_timeloop_ert(d + "ERT.yaml", l.arch);
  l.problem = dse::io::read_timeloop_problem(d + prob);
  return l;
}

// The mapping as write_timeloop_mapping writes it, read back by read_timeloop_mapping.
lp::Mapping written_and_read_back(const Loaded& c, const lp::Mapping& m, const std::string& name) {
  std::ostringstream y;
  dse::io::write_timeloop_mapping(y, c.arch, c.problem, m);
  return dse::io::read_timeloop_mapping(dse::test::write_scratch_file(name, y.str()), c.arch, c.problem);
}

}  // namespace

// T03 (conv1d+oc, 3 levels), no constraints. Timeloop v3.0.3's exhaustive
// (linear-pruned) search on this mapspace reaches 29,103.94 fJ/MAC (issue 5);
// the hand mapping shipped with the exercise gives 32,130.51 (expected.md).
// v3.0.3 counts no leakage (oracles/timeloop/README.md) while our ERT reader
// adds the ERT's leak actions, so the comparison is on energy less leakage.
TEST(TimeloopMapper, Conv1dOc3LevelBeatsTimeloopSearch) {
  const std::string d = dir("03-model-conv1d+oc-3level");
  const Loaded c = load(d, "3level.arch.yaml", "conv1d+oc.prob.yaml");
  const mp::Constraints cons = dse::io::read_timeloop_constraints(d + "3level.arch.yaml", "", c.arch, c.problem);
  mp::MapperOptions o;
  o.objective = mp::Objective::energy;
  const mp::MapResult r = mp::map_operator(c.arch, c.problem, cons, o);
  ASSERT_TRUE(r.feasible);
  double leak_j = 0.0;
  for (int l = 0; l < r.cost.num_levels; ++l) leak_j += r.cost.levels[static_cast<std::size_t>(l)].leak_energy_j;
  const double fj_per_mac = (r.cost.energy_j - leak_j) * 1e15 / r.cost.macs;
  std::cout << "T03 mapper: " << fj_per_mac << " fJ/MAC without leakage (" << r.cost.energy_j * 1e15 / r.cost.macs << " with), " << mp::strategy_name(r.strategy) << ", evaluated "
            << r.evaluated << ", gap to bound " << r.gap << '\n';
  EXPECT_LE(fj_per_mac, 29103.94);
  // The exhaustive branch and bound over the same mapspace (forced) reaches the same optimum.
  mp::MapperOptions ox = o;
  ox.exhaustive_limit = std::int64_t{1} << 40;
  const mp::MapResult rx = mp::map_operator(c.arch, c.problem, cons, ox);
  EXPECT_EQ(rx.strategy, mp::Strategy::exhaustive);
  EXPECT_LE(rx.cost.energy_j, r.cost.energy_j * (1.0 + 1e-12));
  // The mapping re-evaluates to the same figure.
  EXPECT_DOUBLE_EQ(lp::evaluate(c.arch, c.problem, r.mapping).energy_j, r.cost.energy_j);
}

// T06 (Eyeriss-like, VGG02 layer 5) under the architecture's own constraints:
// the reference mapper (8 threads) reaches 2,989.02 fJ/MAC (expected.md).
TEST(TimeloopMapper, EyerissVggLayer5UnderOwnConstraints) {
  const std::string d = dir("06-eyeriss-vgg02-layer5");
  const Loaded c = load(d, "eyeriss_like.yaml", "VGG02_layer5.yaml");
  const mp::Constraints cons = dse::io::read_timeloop_constraints(d + "eyeriss_like.yaml", "", c.arch, c.problem);
  mp::MapperOptions o;
  o.objective = mp::Objective::energy;
  const mp::MapResult r = mp::map_operator(c.arch, c.problem, cons, o);
  ASSERT_TRUE(r.feasible);
  const double fj_per_mac = r.cost.energy_j * 1e15 / r.cost.macs;
  std::cout << "T06 mapper: " << fj_per_mac << " fJ/MAC, " << mp::strategy_name(r.strategy) << ", evaluated "
            << r.evaluated << ", gap to bound " << r.gap << '\n';
  std::ostringstream y;
  dse::io::write_timeloop_mapping(y, c.arch, c.problem, r.mapping);
  std::cout << y.str();
  EXPECT_LE(fj_per_mac, 2989.02);
}

// T06 as `dse timeloop-mapper` maps it by default: perfect factors (Timeloop v3.0.3 loads
// no other mapping), the architecture's own constraints, the deterministic budget.
// Timeloop v3.0.3's timeloop-mapper (random-pruned, timeout 15,000, victory condition 500,
// energy metric) reached 2,096.21 fJ/MAC after 302 s (issue 59); the lower-latency bound
// is every one of the 168 PEs busy every cycle: 924,844,032 MACs / 168 = 5,505,024 cycles.
TEST(TimeloopMapper, EyerissPerfectFactorsReachTimeloopsBest) {
  const std::string d = dir("06-eyeriss-vgg02-layer5");
  const Loaded c = load(d, "eyeriss_like.yaml", "VGG02_layer5.yaml");
  mp::Constraints cons = dse::io::read_timeloop_constraints(d + "eyeriss_like.yaml", "", c.arch, c.problem);
  cons.imperfect = false;
  const std::array<mp::MapResult, 3> all = mp::map_all_objectives(c.arch, c.problem, cons, mp::MapperOptions{});
  const mp::MapResult& en = all[static_cast<std::size_t>(mp::Objective::energy)];
  const mp::MapResult& lat = all[static_cast<std::size_t>(mp::Objective::latency)];
  ASSERT_TRUE(en.feasible);
  const double fj_per_mac = en.cost.energy_j * 1e15 / en.cost.macs;
  std::cout << "T06 perfect factors: energy " << fj_per_mac << " fJ/MAC, latency " << lat.cost.cycles << " cycles ("
            << (lat.proven_optimal ? "proven" : "not proven") << "), " << en.evaluated << " evaluations\n";
  EXPECT_LE(fj_per_mac, 2096.21);
  EXPECT_DOUBLE_EQ(lat.cost.cycles, 924844032.0 / 168.0);
  EXPECT_TRUE(lat.proven_optimal);
  // Each objective's answer is the best of the three on its own objective.
  for (std::size_t x = 0; x < 3; ++x) {
    for (std::size_t y = 0; y < 3; ++y) {
      EXPECT_LE(mp::objective_value(static_cast<mp::Objective>(x), all[x].cost),
                mp::objective_value(static_cast<mp::Objective>(x), all[y].cost)) << x << " " << y;
    }
  }
  // Every dimension's factors multiply to its size (Timeloop's mapping parser refuses
  // anything else), as the YAML says when read back, and it costs the same read back.
  const lp::Mapping back = written_and_read_back(c, en.mapping, "mapper_t06_perfect.map.yaml");
  for (int dd = 0; dd < c.problem.num_dims; ++dd) {
    std::int64_t prod = 1;
    for (std::size_t l = 0; l < c.arch.levels.size(); ++l) {
      prod *= back.levels[l].temporal[static_cast<std::size_t>(dd)] * back.levels[l].spatial[static_cast<std::size_t>(dd)];
    }
    EXPECT_EQ(prod, c.problem.dim_sizes[static_cast<std::size_t>(dd)]) << c.problem.dim_names[static_cast<std::size_t>(dd)];
  }
  EXPECT_DOUBLE_EQ(lp::evaluate(c.arch, c.problem, back).energy_j, en.cost.energy_j);
}

// The reference mapping of T06 satisfies the constraints as read (the reader
// must not make Timeloop's own mapping illegal): its fixed factors agree.
TEST(TimeloopMapper, EyerissReferenceMappingMeetsConstraints) {
  const std::string d = dir("06-eyeriss-vgg02-layer5");
  const dse::io::TimeloopCase tc = dse::io::read_timeloop_case(d + "eyeriss_like.yaml", d + "VGG02_layer5.yaml",
                                                              d + "eyeriss-vgg02-layer5.map.yaml", d + "ERT.yaml");
  const mp::Constraints cons = dse::io::read_timeloop_constraints(d + "eyeriss_like.yaml", "", tc.arch, tc.problem);
  for (std::size_t l = 0; l < tc.arch.levels.size(); ++l) {
    for (int dd = 0; dd < tc.problem.num_dims; ++dd) {
      const auto du = static_cast<std::size_t>(dd);
      if (cons.levels[l].temporal[du] > 0) {
        EXPECT_EQ(cons.levels[l].temporal[du], tc.mapping.levels[l].temporal[du]) << l << " " << dd;
      }
      if (cons.levels[l].spatial[du] > 0) {
        EXPECT_EQ(cons.levels[l].spatial[du], tc.mapping.levels[l].spatial[du]) << l << " " << dd;
      }
    }
    EXPECT_EQ(cons.levels[l].bypass & tc.mapping.levels[l].keep, 0u) << l;
  }
}

// Mapping YAML written by the writer reads back to the same cost.
TEST(TimeloopMapper, WrittenMappingReadsBack) {
  const std::string d = dir("03-model-conv1d+oc-3level");
  const Loaded c = load(d, "3level.arch.yaml", "conv1d+oc.prob.yaml");
  mp::MapperOptions o;
  const mp::MapResult r = mp::map_operator(c.arch, c.problem, mp::Constraints{}, o);
  ASSERT_TRUE(r.feasible);
  const lp::Mapping back = written_and_read_back(c, r.mapping, "mapper_t03.map.yaml");
  EXPECT_DOUBLE_EQ(lp::evaluate(c.arch, c.problem, back).energy_j, r.cost.energy_j);
}
