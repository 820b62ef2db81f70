// Timeloop v0.4's mapping and constraint language as its tutorials, example designs and
// parsers (src/mapping/parser.cpp, src/mapping/constraints.cpp, timeloopfe v4) write it:
// every form of a directive reads to the same mapping as the exercise's own file, and
// what the model does not support, or what Timeloop itself refuses, is refused at the
// offending token with FILE:LINE:COL and the reason (issue 57 item 1, issue 58 item 10).
#include <gtest/gtest.h>

#include <string>

#include "costmodel/loopnest/evaluate.hpp"
#include "costmodel/mapper/mapper.hpp"
#include "dse/error.hpp"
#include "dse/io/timeloop_reader.hpp"
#include "dse/io/timeloop_writer.hpp"
#include "tests/scratch.hpp"

namespace lp = dse::costmodel::loopnest;
namespace mp = dse::costmodel::mapper;

namespace {

const std::string kT03 = std::string(DSE_ORACLES_DIR) + "/timeloop/03-model-conv1d+oc-3level/";
const std::string kT04 = std::string(DSE_ORACLES_DIR) + "/timeloop/04-model-conv1d+oc-3levelspatial/";

struct Hw {
  lp::Architecture arch;
  lp::Problem problem;
};

Hw t03() {
  Hw h{dse::io::read_timeloop_arch(kT03 + "3level.arch.yaml"),
       dse::io::read_timeloop_problem(kT03 + "conv1d+oc.prob.yaml")};
  dse::io::read_timeloop_ert(kT03 + "ERT.yaml", h.arch);
  return h;
}

Hw t04(const char* arch = "3levelspatial.ref-output.arch.yaml") {
  Hw h{dse::io::read_timeloop_arch(kT04 + arch), dse::io::read_timeloop_problem(kT04 + "conv1d+oc+ic.prob.yaml")};
  dse::io::read_timeloop_ert(kT04 + "ERT.yaml", h.arch);
  return h;
}

lp::NestCost run(const Hw& h, const std::string& name, const std::string& text) {
  const std::string path = dse::test::write_scratch_file(name, text);
  return lp::evaluate(h.arch, h.problem, dse::io::read_timeloop_mapping(path, h.arch, h.problem));
}

// The message of the refusal of `text` as a mapping, with the scratch path replaced by "F".
std::string refusal(const Hw& h, const std::string& text) {
  const std::string path = dse::test::write_scratch_file("refused.map.yaml", text);
  try {
    (void)dse::io::read_timeloop_mapping(path, h.arch, h.problem);
  } catch (const dse::ConfigError& e) {
    std::string m = e.what();
    return m.rfind(path, 0) == 0 ? "F" + m.substr(path.size()) : m;
  }
  return "accepted";
}

void expect_same(const lp::NestCost& a, const lp::NestCost& b) {
  ASSERT_TRUE(a.feasible && b.feasible);
  EXPECT_EQ(a.cycles, b.cycles);
  EXPECT_DOUBLE_EQ(a.energy_j, b.energy_j);
  for (int l = 0; l < a.num_levels; ++l) {
    for (int t = 0; t < lp::kMaxTensors; ++t) {
      const auto& x = a.levels[static_cast<std::size_t>(l)].tensors[static_cast<std::size_t>(t)];
      const auto& y = b.levels[static_cast<std::size_t>(l)].tensors[static_cast<std::size_t>(t)];
      EXPECT_EQ(x.kept, y.kept) << l << " " << t;
      EXPECT_EQ(x.reads, y.reads) << l << " " << t;
      EXPECT_EQ(x.fills, y.fills) << l << " " << t;
      EXPECT_EQ(x.updates, y.updates) << l << " " << t;
    }
  }
}

// Exercise 03's bypass mapping with the directives' bodies given (factors and permutation
// of MainMemory, GlobalBuffer, RegisterFile; the dataspace directive type).
std::string bypass_map(const std::string& mm, const std::string& gb, const std::string& rf,
                       const std::string& ds_type = "dataspace") {
  return "mapping:\n"
         "  - target: MainMemory\n    type: temporal\n" +
         mm + "  - target: GlobalBuffer\n    type: temporal\n" + gb + "  - target: RegisterFile\n    type: temporal\n" +
         rf + "  - target: GlobalBuffer\n    type: " + ds_type +
         "\n    keep: [Weights, Inputs]\n    bypass: [Outputs]\n"
         "  - target: RegisterFile\n    type: " +
         ds_type + "\n    keep:\n    - Outputs\n    bypass:\n    - Weights\n    - Inputs\n";
}

}  // namespace

// Timeloop's factor forms (parser.cpp's regular expression reads "R=3", "R3", "R = 3";
// the front end turns a list [R=3, P=16] into "R=3,P=16"; "#" ends the string; 0 stands for
// the whole dimension) and permutation forms ("PRK", "P R K", "P,R,K", [P, R, K]) all read
// to the exercise's own mapping (exercise 03, bypass).
TEST(TimeloopLanguage, FactorAndPermutationFormsReadAlike) {
  const Hw h = t03();
  const lp::Mapping ref_map =
      dse::io::read_timeloop_mapping(kT03 + "conv1d+oc-3level-bypass.map.yaml", h.arch, h.problem);
  const lp::NestCost ref = lp::evaluate(h.arch, h.problem, ref_map);
  const std::string variants[] = {
      bypass_map("    factors: [R=1, P=1, K=1]\n    permutation: [P, R, K]\n",
                 "    factors: [R=1, P=16, K=16]\n    permutation: [P, R, K]\n",
                 "    factors: [R=3, P=1, K=2]\n    permutation: [R, P, K]\n"),
      bypass_map("    factors: R1 P1 K1\n    permutation: P R K\n", "    factors: R1 P16 K16\n    permutation: P,R,K\n",
                 "    factors: \"R = 3, P = 1, K = 2\"\n    permutation: RPK\n", "bypass"),
      bypass_map("    factors: R=1 P=1 K=1 # all at the top\n    permutation: PRK\n",
                 "    factors: [R1, P16, K16]\n    permutation: PRK\n", "    factors: R=0 K=2\n    permutation: RPK\n",
                 "datatype"),
      // MainMemory left out: its factors are 1 (Timeloop's default); RegisterFile's
      // permutation left out is R, P, K innermost first (Timeloop pads in dimension order:
      // R, P have factor 1 and K is the only loop there).
      bypass_map("    factors: R=1\n", "    factors: R=1 P=16 K=16\n    permutation: PRK\n",
                 "    factors: R=3 K=2\n    permutation: RPK\n"),
  };
  int i = 0;
  for (const std::string& v : variants) {
    SCOPED_TRACE(i);
    expect_same(run(h, "form" + std::to_string(i++) + ".map.yaml", v), ref);
  }
}

// A container with a spatial mesh is a target (exercise 04: target PE), the same level as
// Timeloop's inter_PE_spatial; its own temporal loops are fixed at 1; a storage level that
// does not fan out takes no spatial factors.
TEST(TimeloopLanguage, ContainersAsSpatialTargets) {
  const Hw h = t04();
  const lp::NestCost ref = lp::evaluate(
      h.arch, h.problem,
      dse::io::read_timeloop_mapping(kT04 + "conv1d+oc+ic-3levelspatial-kp-ws.map.yaml", h.arch, h.problem));
  const std::string base =
      "mapping:\n"
      "  - target: MainMemory\n    type: temporal\n    factors: R=1 P=1 K=1 C=1\n    permutation: PRKC\n"
      "  - target: GlobalBuffer\n    type: temporal\n    factors: R=3 P=1 K=2 C=32\n    permutation: PRKC\n"
      "  - target: RegisterFile\n    type: temporal\n    factors: R=1 P=16 K=1 C=1\n    permutation: RPKC\n";
  expect_same(run(h, "pe.map.yaml", base + "  - target: inter_PE_spatial\n    type: spatial\n    factors: K=16\n"),
              ref);
  expect_same(run(h, "pe2.map.yaml",
                  base + "  - target: PE\n    type: spatial\n    factors: [K=16]\n    permutation: [K]\n    split: 1\n"
                         "  - target: PE\n    type: temporal\n    factors: C=1 K=1\n"),
              ref);
  // split 0 puts K on the mesh's Y axis, which has no fan-out (meshX 16, meshY 1).
  const lp::NestCost y =
      run(h, "pe3.map.yaml",
          base + "  - target: PE\n    type: spatial\n    factors: K=16\n    permutation: K\n    split: 0\n");
  EXPECT_FALSE(y.feasible);
  EXPECT_EQ(y.reason, lp::Infeasible::fanout_exceeded);
  EXPECT_EQ(
      refusal(h, base + "  - target: PE\n    type: spatial\n    factors: K=16\n  - target: PE\n    type: temporal\n    "
                        "factors: C=2\n"),
      "F:19:14: mapping[4].factors: expected temporal factors of 1 (inter_PE_spatial holds no data; Timeloop fixes its "
      "temporal loops at 1) (got 'C=2')");
  const Hw now = t04("3levelspatial.arch.yaml");  // PE below the GlobalBuffer
  EXPECT_EQ(
      refusal(now, "mapping:\n  - target: GlobalBuffer\n    type: spatial\n    factors: R=1 K=16\n"),
      "F:4:18: mapping[0].factors: expected spatial factors of 1 (GlobalBuffer does not fan out; spatial factors go "
      "on the container or component that does) (got 'K=16')");
}

// Issue 58 item 10: factors are range-checked where they are read. Each refusal names the
// token's line and column.
TEST(TimeloopLanguage, FactorsRangeCheckedWhereRead) {
  const Hw h = t03();
  const std::string gb = "    factors: R=1 P=16 K=16\n    permutation: PRK\n";
  const std::string rf = "    factors: R=3 P=1 K=2\n    permutation: RPK\n";
  // 2^63 - 1 for a dimension of 3: accepted before as feasible with 0 cycles.
  EXPECT_EQ(refusal(h, bypass_map("    factors: R=9223372036854775807 P=1 K=1\n", gb, rf)),
            "F:4:14: mapping[0].factors: expected the factors of R to multiply to its size 3 (they reach "
            "9223372036854775807 here; only a mapping marked 'imperfect_factors: padded' may pad) (got "
            "'R=9223372036854775807')");
  EXPECT_EQ(refusal(h, bypass_map("    factors: R=99999999999999999999\n", gb, rf)),
            "F:4:14: mapping[0].factors: expected a factor of at most 2^63-1 (got 'R=99999999999999999999')");
  // Padded mappings may over-cover, but a product past 64 bits is still refused.
  EXPECT_EQ(refusal(h, "imperfect_factors: padded\n" +
                           bypass_map("    factors: R=4611686018427387904\n", "    factors: R=4 P=16 K=16\n", rf)),
            "F:8:14: mapping[1].factors: expected factors of R whose product fits in 64 bits (got 'R=4')");
  // Over-cover: K = 16 x 4 = 64 for a dimension of 32 (at the factor that passes 32).
  EXPECT_EQ(refusal(h, bypass_map("    factors: K=1\n", gb, "    factors: R=3 P=1 K=4\n")),
            "F:11:22: mapping[2].factors: expected the factors of K to multiply to its size 32 (they reach 64 here; "
            "only a mapping marked 'imperfect_factors: padded' may pad) (got 'K=4')");
  // Under-cover: K = 16 for 32.
  EXPECT_EQ(refusal(h, bypass_map("    factors: K=1\n", gb, "    factors: R=3 P=1 K=1\n")),
            "F:2:3: mapping: expected the factors of K to multiply to its size 32 (got a product of 16)");
  // A dimension twice in one directive (it took the last value before).
  EXPECT_EQ(refusal(h, bypass_map("    factors: R=1 K=1\n", gb, "    factors: R=3 P=1 K=2 R=1\n")),
            "F:11:26: mapping[2].factors: expected each dimension once per directive (R=3 at line 11 column 14 already "
            "sets it) (got 'R=1')");
  EXPECT_EQ(refusal(h, bypass_map("    factors: [R=1, K=1, K1]\n", gb, rf)),
            "F:4:25: mapping[0].factors[2]: expected each dimension once per directive (K=1 at line 4 column 20 "
            "already sets it) (got 'K1')");
  // Padding is allowed under the key, and paid: K = 16 x 4 = 64 walks twice the MACs.
  const lp::NestCost padded =
      run(h, "padded.map.yaml",
          "imperfect_factors: padded\n" + bypass_map("    factors: K=1\n", gb, "    factors: R=3 P=1 K=4\n"));
  ASSERT_TRUE(padded.feasible);
  EXPECT_EQ(padded.padded_macs, 2.0 * padded.macs);
}

// What the model does not have, or Timeloop refuses, is refused with its reason.
TEST(TimeloopLanguage, UnsupportedFormsRefusedWithReason) {
  const Hw h = t03();
  const std::string gb = "    factors: R=1 P=16 K=16\n    permutation: PRK\n";
  const std::string rf = "    factors: R=3 P=1 K=2\n    permutation: RPK\n";
  EXPECT_EQ(refusal(h, bypass_map("    factors: R=1,2 K=1\n", gb, rf)),
            "F:4:14: mapping[0].factors: expected a factor without a residual (Timeloop's 'R=3,2' imperfect "
            "factorisation is not modelled) (got 'R=1,2')");
  EXPECT_EQ(
      refusal(h, bypass_map("    factors: R<=1 K=1\n", gb, rf)),
      "F:4:14: mapping[0].factors: expected an exact factor (bounds <= and >= belong in constraints) (got 'R<=1')");
  EXPECT_EQ(refusal(h, bypass_map("    factors: R=1 Q=1\n", gb, rf)),
            "F:4:18: mapping[0].factors: expected a dimension of the problem (got 'Q')");
  EXPECT_EQ(refusal(h, bypass_map("    permutation: PRKP\n", gb, rf)),
            "F:4:21: mapping[0].permutation: expected each dimension once in a permutation (got 'P')");
  EXPECT_EQ(refusal(h, bypass_map("    permutation: PR_K\n", gb, rf)),
            "F:4:20: mapping[0].permutation: expected dimensions only ('_' belongs in constraints) (got '_')");
  EXPECT_EQ(refusal(h, bypass_map("    factors: R=1\n", gb, rf) +
                           "  - target: GlobalBuffer\n    type: temporal\n    factors: R=1\n"),
            "F:25:11: mapping[5].type: expected one temporal directive per level (GlobalBuffer has one at line 5 "
            "column 5) (got a second one)");
  EXPECT_EQ(refusal(h, bypass_map("    factors: R=1\n", gb, rf) +
                           "  - target: RegisterFile\n    type: bypass\n    bypass: [Outputs]\n"),
            "F:24:13: mapping[5].target: expected each data space kept or bypassed once per level (got 'Outputs' set "
            "again for RegisterFile)");
  EXPECT_EQ(refusal(h, bypass_map("    factors: R=1\n", gb, rf) +
                           "  - target: MainMemory\n    type: dataspace\n    bypass: [Inputs]\n"),
            "F:26:13: mapping[5].bypass: expected no bypass at the outermost level (every data space starts in "
            "MainMemory) (got a sequence)");
  EXPECT_EQ(
      refusal(h,
              "mapping:\n  - target: RegisterFile\n    type: dataspace\n    keep: [Weights]\n    bypass: [Weights]\n"),
      "F:5:13: mapping[0].bypass: expected a data space either kept or bypassed, not both (got 'Weights' in keep and "
      "bypass)");
  EXPECT_EQ(refusal(h, "mapping:\n  - target: RegisterFile\n    type: skew\n"),
            "F:3:11: mapping[0].type: expected temporal, spatial or dataspace (skew directives are not modelled) (got "
            "'skew')");
  EXPECT_EQ(refusal(h, "mapping:\n  - target: RegisterFile\n    type: temporal\n    no_reuse: [Inputs]\n"),
            "F:4:15: mapping[0].no_reuse: expected no no_reuse (Timeloop's reuse restrictions are not modelled) (got a "
            "sequence)");
  EXPECT_EQ(refusal(h, "mapping:\n  - target: RegisterFlie\n    type: temporal\n"),
            "F:2:13: mapping[0].target: expected a storage level or container (did you mean 'RegisterFile'?) (got "
            "'RegisterFlie')");
}

namespace {

mp::Constraints constraints(const Hw& h, const std::string& arch, const std::string& text) {
  return dse::io::read_timeloop_constraints(arch, dse::test::write_scratch_file("c.constraints.yaml", text), h.arch,
                                            h.problem);
}

std::string constraints_refusal(const Hw& h, const std::string& arch, const std::string& text) {
  const std::string path = dse::test::write_scratch_file("refused.constraints.yaml", text);
  try {
    (void)dse::io::read_timeloop_constraints(arch, path, h.arch, h.problem);
  } catch (const dse::ConfigError& e) {
    std::string m = e.what();
    return m.rfind(path, 0) == 0 ? "F" + m.substr(path.size()) : m;
  }
  return "accepted";
}

}  // namespace

// Constraint bounds (Timeloop's "K<=2", "P>=4"), an outermost-loop suffix ("PRK" before '_'
// innermost, after it outermost), and the least utilisation are honoured by the mapper.
TEST(TimeloopLanguage, ConstraintBoundsSuffixAndUtilisationHonoured) {
  const Hw h = t03();
  const mp::Constraints c =
      constraints(h, kT03 + "3level.arch.yaml",
                  "mapspace_constraints:\n  targets:\n"
                  "  - target: RegisterFile\n    type: temporal\n    factors: K<=2 P>=4\n"
                  "  - target: GlobalBuffer\n    type: temporal\n    factors: [K=16]\n    permutation: P_K\n");
  const int dk = h.problem.dim_index("K"), dp = h.problem.dim_index("P");
  EXPECT_EQ(c.levels[2].temporal_max[static_cast<std::size_t>(dk)], 2);
  EXPECT_EQ(c.levels[2].temporal_min[static_cast<std::size_t>(dp)], 4);
  EXPECT_EQ(c.levels[1].temporal[static_cast<std::size_t>(dk)], 16);
  mp::MapperOptions o;
  const mp::MapResult r = mp::map_operator(h.arch, h.problem, c, o);
  ASSERT_TRUE(r.feasible);
  const auto& rf = r.mapping.levels[2];
  const auto& gb = r.mapping.levels[1];
  EXPECT_LE(rf.temporal[static_cast<std::size_t>(dk)], 2);
  EXPECT_GE(rf.temporal[static_cast<std::size_t>(dp)], 4);
  EXPECT_EQ(gb.temporal[static_cast<std::size_t>(dk)], 16);
  // K is the outermost non-unit loop of the GlobalBuffer (order lists outermost first).
  for (int i = 0; i < h.problem.num_dims; ++i) {
    const int d = gb.order[static_cast<std::size_t>(i)];
    if (gb.temporal[static_cast<std::size_t>(d)] > 1) {
      EXPECT_EQ(d, dk);
      break;
    }
  }
  EXPECT_TRUE(mp::admitted(c, h.arch, h.problem, r.mapping, r.cost));

  // Exercise 04 (16 PEs): at least all of them used.
  const Hw s = t04();
  const mp::Constraints u =
      constraints(s, kT04 + "3levelspatial.ref-output.arch.yaml",
                  "constraints:\n  - target: RegisterFile\n    type: utilization\n    min: 1.0\n"
                  "  - target: GlobalBuffer\n    type: max_overbooked_proportion\n    proportion: 0.25\n");
  EXPECT_EQ(u.min_utilization, 1.0);
  const mp::MapResult ru = mp::map_operator(s.arch, s.problem, u, o);
  ASSERT_TRUE(ru.feasible);
  EXPECT_EQ(ru.cost.compute_instances_used, 16);
}

TEST(TimeloopLanguage, ConstraintRespecificationAndMacrosRefused) {
  const Hw h = t03();
  const std::string arch = kT03 + "3level.arch.yaml";
  EXPECT_EQ(constraints_refusal(h, arch,
                                "targets:\n  - target: RegisterFile\n    type: temporal\n    factors: K=2\n"
                                "  - target: RegisterFile\n    type: temporal\n    factors: R=3 K=1\n"),
            "F:7:18: targets[1].factors: expected one factor per dimension and level (Timeloop refuses a "
            "re-specification) (got 'K=1')");
  EXPECT_EQ(constraints_refusal(h, arch,
                                "targets:\n  - target: RegisterFile\n    type: dataspace\n    keep: [Weights]\n"
                                "  - target: RegisterFile\n    type: dataspace\n    bypass: [Weights]\n"),
            "F:7:13: targets[1].bypass: expected each data space kept or bypassed once per level (Timeloop refuses a "
            "re-specification) (got 'Weights' again for RegisterFile)");
  EXPECT_EQ(constraints_refusal(h, arch, "targets:\n  - target: RegisterFile\n    type: temporal\n    factors: K=64\n"),
            "F:4:14: targets[0].factors: expected a factor of at most the size of K, 32 (got 'K=64')");
  EXPECT_EQ(
      constraints_refusal(h, arch,
                          "targets:\n  - target: RegisterFile\n    type: temporal\n    factors: K=16\n"
                          "  - target: GlobalBuffer\n    type: temporal\n    factors: K=4\n"),
      "F:7:14: targets[1].factors: expected the fixed factors of K to multiply to at most its size 32 (got 'K=4')");
  EXPECT_EQ(
      constraints_refusal(
          h, arch, "targets:\n  - target: GlobalBuffer\n    type: max_overbooked_proportion\n    proportion: 1.5\n"),
      "F:4:17: targets[0].proportion: expected a number from 0 to 1 (got \"1.5\")");
  EXPECT_EQ(constraints_refusal(h, arch, "targets:\n  - target: GlobalBuffer\n    type: utilization\n    min: 0.5\n"),
            "F:2:13: targets[0].target: expected the innermost storage level (Timeloop constrains utilisation there "
            "only) (got \"GlobalBuffer\")");
  EXPECT_EQ(
      constraints_refusal(h, arch, "targets:\n  - target: GlobalBuffer\n    type: temporal\n    factors_only: [K=2]\n"),
      "F:4:19: targets[0].factors_only: expected factors, permutation, keep and bypass written out (the front "
      "end's constraint macro 'factors_only' is not supported) (got a sequence)");
  // Against the architecture's own constraints (exercise 06's Eyeriss: psum_spad fixes N=1).
  const std::string t06 = std::string(DSE_ORACLES_DIR) + "/timeloop/06-eyeriss-vgg02-layer5/";
  Hw e{dse::io::read_timeloop_arch(t06 + "eyeriss_like.yaml"),
       dse::io::read_timeloop_problem(t06 + "VGG02_layer5.yaml")};
  EXPECT_EQ(constraints_refusal(e, t06 + "eyeriss_like.yaml",
                                "targets:\n  - target: psum_spad\n    type: temporal\n    factors: N=1\n"),
            "F:4:14: targets[0].factors: expected one factor per dimension and level (Timeloop refuses a "
            "re-specification) (got 'N=1')");
}

// Timeloop's constraint file layouts (constraints.cpp Parse / ParseList, the front end's
// part-name match on "constraints") read alike: mapspace_constraints with targets, a bare
// list, a bare targets list, and the older {target, constraints: [...]} nesting.
TEST(TimeloopLanguage, ConstraintFileLayoutsReadAlike) {
  const Hw h = t03();
  const std::string arch = kT03 + "3level.arch.yaml";
  const std::string body =
      "  - target: GlobalBuffer\n    type: temporal\n    factors: [R=1, K<=16]\n    permutation: [P, R, K]\n"
      "  - target: RegisterFile\n    type: dataspace\n    keep: [Outputs]\n    bypass: [Weights]\n";
  const std::string layouts[] = {
      "mapspace_constraints:\n  version: 0.4\n  targets:\n" + body,
      "constraints:\n" + body,
      "targets:\n" + body,
      body.substr(0),  // a bare list
      "mapspace_constraints:\n  - target: GlobalBuffer\n    constraints:\n"
      "    - type: temporal\n      factors: R=1 K<=16\n      permutation: PRK\n"
      "  - name: RegisterFile\n    constraints:\n    - type: dataspace\n      keep: [Outputs]\n      bypass: "
      "[Weights]\n",
  };
  const int R = h.problem.dim_index("R"), K = h.problem.dim_index("K"), P = h.problem.dim_index("P");
  int i = 0;
  for (const std::string& text : layouts) {
    SCOPED_TRACE(i++);
    const mp::Constraints c = constraints(h, arch, text);
    EXPECT_EQ(c.levels[1].temporal[static_cast<std::size_t>(R)], 1);
    EXPECT_EQ(c.levels[1].temporal_max[static_cast<std::size_t>(K)], 16);
    ASSERT_EQ(c.levels[1].num_permutation, 3);
    EXPECT_EQ(c.levels[1].permutation[0], P);
    EXPECT_EQ(c.levels[1].permutation[2], K);
    EXPECT_EQ(c.levels[2].keep, 1u << h.problem.tensor_index("Outputs"));
    EXPECT_EQ(c.levels[2].bypass, 1u << h.problem.tensor_index("Weights"));
  }
  EXPECT_EQ(constraints_refusal(h, arch, "targets:\n  - target: GlobalBuffer\n    type: tempral\n"),
            "F:3:11: targets[0].type: expected temporal, spatial, dataspace, max_overbooked_proportion or "
            "utilization (got \"tempral\")");
  EXPECT_EQ(refusal(h, "mapping:\n  - target: GlobalBuffer\n    type: tempral\n    factors: R=1\n"),
            "F:3:11: mapping[0].type: expected temporal, spatial, dataspace, datatype or bypass (got \"tempral\")");
}
