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

namespace {

// Exercise 05's mapper run: the mapper on conv1d+oc (3 levels) under one constraint file.
mp::MapResult map_ex05(const std::string& constraints_file, mp::Constraints* out = nullptr) {
  const std::string d = dir("05-mapper-conv1d+oc-3level");
  const Loaded c = load(d, "3level.arch.yaml", "conv1d+oc.prob.yaml");
  const mp::Constraints cons = dse::io::read_timeloop_constraints(d + "3level.arch.yaml", d + constraints_file, c.arch, c.problem);
  if (out != nullptr) *out = cons;
  mp::MapperOptions o;
  o.objective = mp::Objective::energy;
  return mp::map_operator(c.arch, c.problem, cons, o);
}

// The non-unit temporal loops of a level, innermost first (Timeloop's permutation order).
std::string loops_inner_first(const lp::LevelMapping& lm, const lp::Problem& p) {
  std::string s;
  for (int i = p.num_dims - 1; i >= 0; --i) {
    const int d = lm.order[static_cast<std::size_t>(i)];
    if (lm.temporal[static_cast<std::size_t>(d)] > 1) s += p.dim_names[static_cast<std::size_t>(d)];
  }
  return s;
}

}  // namespace

// Exercise 05, no constraints: Timeloop's mapper (linear-pruned, [delay, energy]) reports
// 235,520.50 fJ/MAC (null.timeloop-mapper.stats.txt, fJ/Compute Total); every mapping takes
// 1536 cycles, so energy decides.
TEST(TimeloopMapper, Ex05NullConstraintsReachTimeloopBest) {
  const mp::MapResult r = map_ex05("null.constraints.yaml");
  ASSERT_TRUE(r.feasible);
  EXPECT_EQ(r.cost.cycles, 1536.0);
  EXPECT_LE(r.cost.energy_j * 1e15 / r.cost.macs, 235520.50);
}

// Exercise 05, 1mapping: the constraints pin every factor, permutation and keep, so the
// mapspace is one mapping, exercise 03's; Timeloop reports 32,130.51 fJ/MAC
// (baked.timeloop-mapper.stats.txt). The mapping found is that one: factors R=1 P=16 K=16
// at GlobalBuffer, R=3 P=1 K=2 at RegisterFile, 1 at MainMemory; loops innermost first P, K
// (GlobalBuffer) and R, K (RegisterFile); every data space kept everywhere.
TEST(TimeloopMapper, Ex05OneMappingConstraintsHonoured) {
  const std::string d = dir("05-mapper-conv1d+oc-3level");
  const Loaded c = load(d, "3level.arch.yaml", "conv1d+oc.prob.yaml");
  const mp::MapResult r = map_ex05("conv1d+oc-3level-1mapping.constraints.yaml");
  ASSERT_TRUE(r.feasible);
  EXPECT_NEAR(r.cost.energy_j * 1e15 / r.cost.macs, 32130.51, 0.001 * 32130.51);
  const int R = c.problem.dim_index("R"), P = c.problem.dim_index("P"), K = c.problem.dim_index("K");
  const auto t = [&](int l, int dim) { return r.mapping.levels[static_cast<std::size_t>(l)].temporal[static_cast<std::size_t>(dim)]; };
  EXPECT_EQ(t(0, R) * t(0, P) * t(0, K), 1);
  EXPECT_EQ(t(1, R), 1);
  EXPECT_EQ(t(1, P), 16);
  EXPECT_EQ(t(1, K), 16);
  EXPECT_EQ(t(2, R), 3);
  EXPECT_EQ(t(2, P), 1);
  EXPECT_EQ(t(2, K), 2);
  EXPECT_EQ(loops_inner_first(r.mapping.levels[1], c.problem), "PK");
  EXPECT_EQ(loops_inner_first(r.mapping.levels[2], c.problem), "RK");
  for (int l = 0; l < 3; ++l) EXPECT_EQ(r.mapping.levels[static_cast<std::size_t>(l)].keep, 7u) << l;
}

// Exercise 05, freebypass: factors and permutations pinned as in 1mapping, keep/bypass left
// to the mapper (64 choices). Timeloop reports 30,263.99 fJ/MAC with the GlobalBuffer
// keeping Inputs only (freebypass.timeloop-mapper.stats.txt / .map.yaml).
TEST(TimeloopMapper, Ex05FreeBypassReachesTimeloopBest) {
  const std::string d = dir("05-mapper-conv1d+oc-3level");
  const Loaded c = load(d, "3level.arch.yaml", "conv1d+oc.prob.yaml");
  mp::Constraints cons;
  const mp::MapResult r = map_ex05("conv1d+oc-3level-freebypass.constraints.yaml", &cons);
  ASSERT_TRUE(r.feasible);
  EXPECT_LE(r.cost.energy_j * 1e15 / r.cost.macs, 30263.99 * (1.0 + 1e-6));
  const int R = c.problem.dim_index("R"), P = c.problem.dim_index("P"), K = c.problem.dim_index("K");
  const auto& gb = r.mapping.levels[1];
  const auto& rf = r.mapping.levels[2];
  EXPECT_EQ(gb.temporal[static_cast<std::size_t>(P)], 16);
  EXPECT_EQ(gb.temporal[static_cast<std::size_t>(K)], 16);
  EXPECT_EQ(gb.temporal[static_cast<std::size_t>(R)], 1);
  EXPECT_EQ(rf.temporal[static_cast<std::size_t>(R)], 3);
  EXPECT_EQ(rf.temporal[static_cast<std::size_t>(K)], 2);
  EXPECT_EQ(loops_inner_first(gb, c.problem), "PK");
  EXPECT_EQ(loops_inner_first(rf, c.problem), "RK");
  EXPECT_EQ(r.mapping.levels[0].keep, 7u);  // MainMemory holds everything
  EXPECT_TRUE(mp::admitted(cons, c.arch, c.problem, r.mapping, r.cost));
}

// The example designs under their architectures' own constraints (dataspace keeps, fixed
// factors, permutations and splits on the nodes): the mapper reaches Timeloop's mapper's
// result or better (fJ/Compute Total of ref_outputs/default_problem/timeloop-mapper.stats.txt:
// simple_weight_stationary 13,994.23, simple_output_stationary 10,929.93, eyeriss_like
// 5,469.65), and the mapping it returns lies in the constrained mapspace.
TEST(TimeloopMapper, ExampleDesignsReachTimeloopMapperUnderOwnConstraints) {
  const std::string d = dir("07-example-designs");
  const std::pair<const char*, double> designs[] = {
      {"simple_weight_stationary", 13994.23}, {"simple_output_stationary", 10929.93}, {"eyeriss_like", 5469.65}};
  for (const auto& [design, timeloop_fj] : designs) {
    SCOPED_TRACE(design);
    const std::string e = d + design + "/";
    const Loaded c = load(e, "arch.yaml", "../default_problem.yaml");
    const mp::Constraints cons = dse::io::read_timeloop_constraints(e + "arch.yaml", "", c.arch, c.problem);
    mp::MapperOptions o;
    o.objective = mp::Objective::energy;
    const mp::MapResult r = mp::map_operator(c.arch, c.problem, cons, o);
    ASSERT_TRUE(r.feasible);
    EXPECT_LE(r.cost.energy_j * 1e15 / r.cost.macs, timeloop_fj);
    EXPECT_TRUE(mp::admitted(cons, c.arch, c.problem, r.mapping, r.cost));
    // The keeps the architectures fix (their nodes' `dataspace: {keep, bypass}`), by hand:
    // simple_weight_stationary's pe_spad keeps Weights and bypasses Inputs and Outputs,
    // simple_output_stationary's keeps Outputs and bypasses the others, eyeriss_like's
    // shared_glb bypasses Weights; the registers and scratchpads keep their own data space.
    const int W = c.problem.tensor_index("Weights"), I = c.problem.tensor_index("Inputs"), O = c.problem.tensor_index("Outputs");
    for (std::size_t l = 0; l < c.arch.levels.size(); ++l) {
      const std::string& name = c.arch.levels[l].name;
      const std::uint32_t keep = r.mapping.levels[l].keep;
      const std::string ds = std::string(design);
      if (name == "pe_spad") {
        EXPECT_EQ(keep, ds == "simple_weight_stationary" ? 1u << W : 1u << O) << name;
      }
      if (name == "shared_glb" && ds == "eyeriss_like") {
        EXPECT_EQ(keep & (1u << W), 0u) << name;
      }
      if (name == "weight_reg" || name == "weights_spad") {
        EXPECT_NE(keep & (1u << W), 0u) << name;
      }
      if (name == "input_activation_reg" || name == "ifmap_spad") {
        EXPECT_NE(keep & (1u << I), 0u) << name;
      }
      if (name == "output_activation_reg" || name == "psum_spad") {
        EXPECT_NE(keep & (1u << O), 0u) << name;
      }
    }
  }
}
