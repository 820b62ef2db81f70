// Timeloop reference cases (data/oracles/timeloop): the original YAML
// inputs are read at test time and evaluated with the loop-nest model. Every
// expected number below is typed from data/oracles/timeloop/expected.md
// (reference outputs of the public Timeloop exercises; Timeloop v3.0.3
// reproduces the cycles and counts). Counts are per instance and must match
// exactly; energies (fJ/MAC by level and total) within 0.1 %. The cases added with
// Timeloop's own statistics files (exercise 03's bypass mapping, 04, the mapper outputs
// of 05 and the example designs) are compared with every figure of those files.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "costmodel/loopnest/evaluate.hpp"
#include "dse/error.hpp"
#include "dse/io/timeloop_reader.hpp"
#include "tests/scratch.hpp"
#include "tests/validation/timeloop_stats.hpp"

namespace lp = dse::costmodel::loopnest;

namespace {

const std::string kDir = std::string(DSE_ORACLES_DIR) + "/timeloop/";

struct Counts {
  const char* level;
  const char* tensor;
  std::int64_t reads, fills, updates, capacity;  // capacity < 0: not checked
};

struct Energy {
  const char* level;  // the compute component's name for the MACs
  double fj_per_mac;
};

struct Expected {
  double cycles, macs;
  std::vector<Counts> counts;
  std::vector<Energy> energy;
  double total_fj_per_mac;
};

void check(const std::string& sub, const std::string& arch, const std::string& prob, const std::string& map,
           const Expected& e) {
  const std::string d = kDir + sub + "/";
  const auto c = dse::io::read_timeloop_case(d + arch, d + prob, d + map, d + "ERT.yaml");
  const auto r = lp::evaluate(c.arch, c.problem, c.mapping);
  ASSERT_TRUE(r.feasible) << lp::infeasible_name(r.reason);
  EXPECT_EQ(r.cycles, e.cycles);
  EXPECT_EQ(r.macs, e.macs);
  EXPECT_DOUBLE_EQ(r.utilization, 1.0);  // expected.md: 100 % in every case
  auto level_of = [&](const std::string& name) {
    for (int l = 0; l < r.num_levels; ++l) {
      if (c.arch.levels[static_cast<std::size_t>(l)].name == name) return l;
    }
    return -1;
  };
  for (const auto& x : e.counts) {
    SCOPED_TRACE(std::string(x.level) + " " + x.tensor);
    const int l = level_of(x.level);
    const int t = c.problem.tensor_index(x.tensor);
    ASSERT_GE(l, 0);
    ASSERT_GE(t, 0);
    const auto& ts = r.levels[static_cast<std::size_t>(l)].tensors[static_cast<std::size_t>(t)];
    EXPECT_TRUE(ts.kept);
    EXPECT_EQ(ts.reads, x.reads);
    EXPECT_EQ(ts.fills, x.fills);
    EXPECT_EQ(ts.updates, x.updates);
    if (x.capacity >= 0) {
      EXPECT_EQ(ts.utilized_capacity, x.capacity);
    }
  }
  for (const auto& x : e.energy) {
    SCOPED_TRACE(x.level);
    double fj = 0.0;
    if (c.arch.compute.name == x.level) {
      fj = r.compute_energy_j * 1e15 / r.macs;
    } else {
      const int l = level_of(x.level);
      ASSERT_GE(l, 0);
      fj = r.levels[static_cast<std::size_t>(l)].energy_j * 1e15 / r.macs;
    }
    EXPECT_NEAR(fj, x.fj_per_mac, 0.001 * x.fj_per_mac);
  }
  EXPECT_NEAR(r.energy_j * 1e15 / r.macs, e.total_fj_per_mac, 0.001 * e.total_fj_per_mac);
}

}  // namespace

// expected.md row T00 and "T00 Buffer: W 48/0/0 cap 3; I 48/0/0 cap 18; O r 32, u 48, cap 16."
TEST(TimeloopValidation, T00_Conv1d_OneLevel) {
  check("00-model-conv1d-1level", "1level.arch.yaml", "conv1d.prob.yaml", "conv1d-1level.map.yaml",
        {48, 48,
         {{"Buffer", "Weights", 48, 0, 0, 3}, {"Buffer", "Inputs", 48, 0, 0, 18}, {"Buffer", "Outputs", 32, 0, 48, 16}},
         {{"MACC", 845.00}, {"Buffer", 1561.54}},
         2406.54});
}

// expected.md rows T01ws / T01os and their access-count lines.
TEST(TimeloopValidation, T01ws_Conv1d_TwoLevel_WeightStationary) {
  check("01-model-conv1d-2level", "2level.arch.yaml", "conv1d.prob.yaml", "conv1d-2level-ws.map.yaml",
        {48, 48,
         {{"Buffer", "Weights", 48, 3, 0, 1}, {"Buffer", "Inputs", 48, 18, 0, 16}, {"Buffer", "Outputs", 32, 0, 48, 16},
          {"MainMemory", "Weights", 3, 0, 0, -1}, {"MainMemory", "Inputs", 18, 0, 0, -1},
          {"MainMemory", "Outputs", 0, 0, 16, -1}},
         {{"MACC", 845}, {"Buffer", 1747.76}, {"MainMemory", 4907.32}},
         7500.08});
}

TEST(TimeloopValidation, T01os_Conv1d_TwoLevel_OutputStationary) {
  check("01-model-conv1d-2level", "2level.arch.yaml", "conv1d.prob.yaml", "conv1d-2level-os.map.yaml",
        {48, 48,
         {{"Buffer", "Weights", 48, 3, 0, 3}, {"Buffer", "Inputs", 48, 18, 0, 3}, {"Buffer", "Outputs", 32, 0, 48, 1},
          {"MainMemory", "Weights", 3, 0, 0, -1}, {"MainMemory", "Inputs", 18, 0, 0, -1},
          {"MainMemory", "Outputs", 0, 0, 16, -1}},
         {{"MACC", 845}, {"Buffer", 1747.76}, {"MainMemory", 4907.32}},
         7500.08});
}

// expected.md rows T02nt / T02t.
TEST(TimeloopValidation, T02nt_Conv1dOc_TwoLevel) {
  check("02-model-conv1d+oc-2level", "2level.arch.yaml", "conv1d+oc.prob.yaml", "conv1d+oc-2level-os.map.yaml",
        {1536, 1536,
         {{"Buffer", "Weights", 1536, 96, 0, 3}, {"Buffer", "Inputs", 1536, 576, 0, 3},
          {"Buffer", "Outputs", 1024, 0, 1536, 1}, {"MainMemory", "Weights", 96, 0, 0, -1},
          {"MainMemory", "Inputs", 576, 0, 0, -1}, {"MainMemory", "Outputs", 0, 0, 512, -1}},
         {{"MACC", 845}, {"Buffer", 1747.76}, {"MainMemory", 3665.44}},
         6258.20});
}

TEST(TimeloopValidation, T02t_Conv1dOc_TwoLevel_Tiled) {
  check("02-model-conv1d+oc-2level", "2level.arch.yaml", "conv1d+oc.prob.yaml",
        "conv1d+oc-2level-os-tiled.map.yaml",
        {1536, 1536,
         {{"Buffer", "Weights", 1536, 96, 0, 6}, {"Buffer", "Inputs", 1536, 288, 0, 3},
          {"Buffer", "Outputs", 1024, 0, 1536, 2}, {"MainMemory", "Weights", 96, 0, 0, -1},
          {"MainMemory", "Inputs", 288, 0, 0, -1}, {"MainMemory", "Outputs", 0, 0, 512, -1}},
         {{"MACC", 845}, {"Buffer", 1667.95}, {"MainMemory", 2649.35}},
         5162.30});
}

// expected.md row T03.
TEST(TimeloopValidation, T03_Conv1dOc_ThreeLevel) {
  check("03-model-conv1d+oc-3level", "3level.arch.yaml", "conv1d+oc.prob.yaml", "conv1d+oc-3level.map.yaml",
        {1536, 1536,
         {{"RegisterFile", "Weights", 1536, 96, 0, 6}, {"RegisterFile", "Inputs", 1536, 288, 0, 3},
          {"RegisterFile", "Outputs", 1024, 0, 1536, 2}, {"GlobalBuffer", "Weights", 96, 96, 0, 96},
          {"GlobalBuffer", "Inputs", 288, 18, 0, 18}, {"GlobalBuffer", "Outputs", 0, 0, 512, 512},
          {"MainMemory", "Weights", 96, 0, 0, -1}, {"MainMemory", "Inputs", 18, 0, 0, -1},
          {"MainMemory", "Outputs", 0, 0, 512, -1}},
         {{"MACC", 845}, {"RegisterFile", 1667.95}, {"GlobalBuffer", 2950.90}, {"MainMemory", 26666.67}},
         32130.51});
}

// expected.md row T06 (Eyeriss-like, 168 PEs = 14 x 12, shared_glb bypasses Weights).
TEST(TimeloopValidation, T06_EyerissVgg02Layer5) {
  check("06-eyeriss-vgg02-layer5", "eyeriss_like.yaml", "VGG02_layer5.yaml", "eyeriss-vgg02-layer5.map.yaml",
        {5505024, 924844032,
         {{"psum_spad", "Outputs", 5490688, 215040, 5505024, 8},
          {"weights_spad", "Weights", 5505024, 688128, 0, 192},
          {"ifmap_spad", "Inputs", 5505024, 286720, 0, 24},
          {"shared_glb", "Inputs", 12042240, 573440, 0, 5120},
          {"shared_glb", "Outputs", 12042240, 2408448, 12845056, 7168},
          {"DRAM", "Weights", 8257536, 0, 0, -1},
          {"DRAM", "Inputs", 573440, 0, 0, -1},
          {"DRAM", "Outputs", 2408448, 0, 3211264, -1}},
         {{"mac", 207.69}, {"psum_spad", 478.44}, {"weights_spad", 1107.50}, {"ifmap_spad", 105.92},
          {"shared_glb", 89.47}, {"DRAM", 1000.00}},
         2989.02});
}

TEST(TimeloopValidation, T06_InstancesAndBypass) {
  const std::string d = kDir + "06-eyeriss-vgg02-layer5/";
  const auto c = dse::io::read_timeloop_case(d + "eyeriss_like.yaml", d + "VGG02_layer5.yaml",
                                             d + "eyeriss-vgg02-layer5.map.yaml", d + "ERT.yaml");
  const auto r = lp::evaluate(c.arch, c.problem, c.mapping);
  // expected.md: 168 PEs = 14 x 12; shared_glb bypasses Weights.
  for (int l = 0; l < r.num_levels; ++l) {
    const auto& name = c.arch.levels[static_cast<std::size_t>(l)].name;
    if (name.find("spad") != std::string::npos) {
      EXPECT_EQ(r.levels[static_cast<std::size_t>(l)].instances, 168);
    }
    if (name == "shared_glb") {
      EXPECT_FALSE(r.levels[static_cast<std::size_t>(l)].tensors[0].kept);
    }
  }
  EXPECT_EQ(r.compute_instances_used, 168);
}

namespace {

std::string error_of(const std::string& path) {
  try {
    (void)dse::io::read_timeloop_arch(path);
  } catch (const dse::ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(TimeloopReader, RefusesSparsityWithFileAndLine) {
  const std::string path = dse::test::write_scratch_file(
      "sparse.arch.yaml",
      "architecture:\n  version: 0.4\n  nodes:\n  - !Component\n    name: Buffer\n"
      "    class: regfile\n    attributes: {depth: 64, width: 8, datawidth: 8, metadata_storage_width: 4}\n"
      "  - !Component\n    name: MACC\n    class: intmac\n");
  const std::string msg = error_of(path);
  EXPECT_NE(msg.find(path + ":7:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("sparsity"), std::string::npos) << msg;
}

TEST(TimeloopReader, RefusesCompoundComponentsBeyondStorageAndCompute) {
  const std::string path =
      dse::test::write_scratch_file("noc.arch.yaml",
                                    "architecture:\n  version: 0.4\n  nodes:\n  - !Component\n    name: Buffer\n"
                                    "    class: regfile\n    attributes: {depth: 64, width: 8, datawidth: 8}\n"
                                    "  - !Component\n    name: Router\n    class: mesh_noc_router\n"
                                    "  - !Component\n    name: MACC\n    class: intmac\n");
  const std::string msg = error_of(path);
  EXPECT_NE(msg.find(path + ":10:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("mesh_noc_router"), std::string::npos) << msg;
}

// Files given in another order: the architecture file where the problem goes (and the mapping
// where the ERT goes) is refused as the wrong input, where it read as an unknown key.
TEST(TimeloopReader, NamesAFileOfAnotherInputKind) {
  const std::string dir = kDir + "00-model-conv1d-1level/";
  try {
    (void)dse::io::read_timeloop_problem(dir + "1level.arch.yaml");
    FAIL() << "an architecture file read as a problem";
  } catch (const dse::ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), dir +
                                         "1level.arch.yaml:2:3: architecture: expected a Timeloop problem file "
                                         "(top-level key 'problem'); are the files in the command's order? (got the "
                                         "top-level key of a Timeloop architecture file)");
  }
  try {
    lp::Architecture arch = dse::io::read_timeloop_arch(dir + "1level.arch.yaml");
    dse::io::read_timeloop_ert(dir + "conv1d-1level.map.yaml", arch);
    FAIL() << "a mapping file read as an ERT";
  } catch (const dse::ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("mapping: expected a Timeloop ERT file"), std::string::npos) << e.what();
  }
}

namespace {

// Every figure of Timeloop's statistics file `stats` against the model on the same inputs:
// cycles, computes, per level and data space the reads, fills, updates and utilised
// capacity (a data space the file does not list at a level is bypassed there), and the
// fJ/Compute of every level and in total within 0.1 % (the file prints two decimals).
// With leakage_in_reference false (statistics of Timeloop v3.0.3, which leaves the ERT's leakage
// out), the model's energies are compared less the leakage it adds.
void check_against_stats(const std::string& arch, const std::string& prob, const std::string& map,
                         const std::string& ert, const std::string& stats, bool leakage_in_reference = true) {
  const auto c = dse::io::read_timeloop_case(arch, prob, map, ert);
  const auto r = lp::evaluate(c.arch, c.problem, c.mapping);
  const dse::test::TimeloopStats s = dse::test::read_timeloop_stats(stats);
  ASSERT_TRUE(r.feasible) << lp::infeasible_name(r.reason);
  ASSERT_FALSE(s.counts.empty()) << stats;
  ASSERT_GT(s.cycles, 0) << stats;
  EXPECT_EQ(r.cycles, static_cast<double>(s.cycles));
  EXPECT_EQ(r.macs, static_cast<double>(s.computes));
  for (std::size_t l = 0; l < c.arch.levels.size(); ++l) {
    for (int t = 0; t < c.problem.num_tensors; ++t) {
      const std::string& lv = c.arch.levels[l].name;
      const std::string& ds = c.problem.tensors[static_cast<std::size_t>(t)].name;
      SCOPED_TRACE(lv + " " + ds);
      const auto& ts = r.levels[l].tensors[static_cast<std::size_t>(t)];
      const auto it = s.counts.find({lv, ds});
      if (it == s.counts.end()) {
        EXPECT_FALSE(ts.kept);
        continue;
      }
      EXPECT_TRUE(ts.kept);
      EXPECT_EQ(ts.reads, it->second.reads);
      EXPECT_EQ(ts.fills, it->second.fills);
      EXPECT_EQ(ts.updates, it->second.updates);
      EXPECT_EQ(ts.utilized_capacity, it->second.capacity);
    }
  }
  for (const auto& [key, unused] : s.counts) {
    bool found = false;
    for (const auto& lv : c.arch.levels) found = found || lv.name == key.first;
    EXPECT_TRUE(found) << key.first << " is a level of Timeloop's statistics the model lacks";
  }
  ASSERT_TRUE(s.fj_per_compute.count("Total") != 0) << stats;
  for (const auto& [name, fj_ref] : s.fj_per_compute) {
    SCOPED_TRACE(name);
    double energy = -1.0;
    double leak = 0.0;
    for (std::size_t l = 0; l < c.arch.levels.size(); ++l) leak += r.levels[l].leak_energy_j;
    if (name == "Total") energy = r.energy_j - (leakage_in_reference ? 0.0 : leak);
    if (name == c.arch.compute.name) energy = r.compute_energy_j;
    for (std::size_t l = 0; l < c.arch.levels.size(); ++l) {
      if (c.arch.levels[l].name == name) {
        energy = r.levels[l].energy_j - (leakage_in_reference ? 0.0 : r.levels[l].leak_energy_j);
      }
    }
    ASSERT_GE(energy, 0.0) << "no level named " << name;
    EXPECT_NEAR(energy * 1e15 / r.macs, fj_ref, std::max(0.001 * fj_ref, 0.005));
  }
}

}  // namespace

// data/oracles/timeloop/08-differential: nine cases (seven random ones (scripts/timeloop_diff.py) with the
// and two variants of one) with the statistics Timeloop v3.0.3 itself wrote for them, each a rule
// the model once counted otherwise or refused:
// A and A2, a sliding window under two temporal loops (Timeloop runs each loop's iterations 0 and
// 1 and keeps the overlap only while the tile moves as it last moved: 5 and 10 input fills where
// exact reuse gives 5 and 8); B, a strided window held as its bounding box (3 words for 2 points);
// C to E, bandwidth-limited levels (whole cycles, ceil(compute cycles / slowdown) in Timeloop's
// floating-point order: 2, 6,273 and 81 cycles); F, `permutation: ""` (the default order); G and H,
// case D with `shared_bandwidth: 3` on three levels (reads and writes together: 8,139 cycles) and
// with the deprecated `bandwidth` (half for reads, half for writes: 8,064 cycles).
TEST(TimeloopValidation, RandomCasesMatchTimeloopV303Stats) {
  const std::string root = std::string(DSE_ORACLES_DIR) + "/timeloop/08-differential/";
  int cases = 0;
  for (const char* name : {"A-sliding-window-temporal", "A2-sliding-window-temporal", "B-strided-inputs-bounding-box",
                           "C-bandwidth-ceiling-simple_ws", "D-bandwidth-rounding-eyeriss",
                           "E-bandwidth-rounding-simple_os", "F-empty-permutation-eyeriss",
                           "G-shared-bandwidth-eyeriss", "H-deprecated-bandwidth-eyeriss"}) {
    SCOPED_TRACE(name);
    const std::string d = root + name + "/";
    check_against_stats(d + "arch.yaml", d + "prob.yaml", d + "map.yaml", d + "ERT.yaml", d + "timeloop-model.stats.txt",
                        false);
    ++cases;
  }
  EXPECT_EQ(cases, 9);
}

// Exercise 03's bypass mapping: `type: dataspace` directives with keep/bypass lists (the
// GlobalBuffer keeps Weights and Inputs, the RegisterFile only Outputs).
// Reference: ref-output/bypass/timeloop-model.stats.txt of the exercise.
TEST(TimeloopValidation, T03_BypassMapping_MatchesTimeloopStats) {
  const std::string d = kDir + "03-model-conv1d+oc-3level/";
  check_against_stats(d + "3level.arch.yaml", d + "conv1d+oc.prob.yaml", d + "conv1d+oc-3level-bypass.map.yaml",
                      d + "ERT.yaml", d + "bypass.timeloop-model.stats.txt");
}

// Exercise 04: a !Container PE with spatial {meshX: 16}; the mappings put their spatial
// factors on it (target: PE). The reference outputs were produced before the exercise's
// commit 800c916 moved PE below the GlobalBuffer: their parsed-processed-input.yaml holds
// GlobalBuffer[1..16] and their ERT names GlobalBuffer[1..16]. 3levelspatial.ref-output.arch.yaml
// is that earlier architecture (the exercise at 800c916^), which the figures belong to.
TEST(TimeloopValidation, T04cp_ChannelParallel_MatchesTimeloopStats) {
  const std::string d = kDir + "04-model-conv1d+oc-3levelspatial/";
  check_against_stats(d + "3levelspatial.ref-output.arch.yaml", d + "conv1d+oc+ic.prob.yaml",
                      d + "conv1d+oc+ic-3levelspatial-cp-ws.map.yaml", d + "ERT.yaml", d + "cp.timeloop-model.stats.txt");
}

TEST(TimeloopValidation, T04kp_OutputChannelParallel_MatchesTimeloopStats) {
  const std::string d = kDir + "04-model-conv1d+oc-3levelspatial/";
  check_against_stats(d + "3levelspatial.ref-output.arch.yaml", d + "conv1d+oc+ic.prob.yaml",
                      d + "conv1d+oc+ic-3levelspatial-kp-ws.map.yaml", d + "ERT.yaml", d + "kp.timeloop-model.stats.txt");
}

// Exercise 04's architecture as the exercise now ships it (PE below the GlobalBuffer), for
// which no Timeloop output is shipped: figures derived by hand. The GlobalBuffer (one
// instance) holds the whole problem (W 32x32x3 = 3072, I 32 x (3+16-1) = 576, O 32x16 = 512
// words), so MainMemory moves every element once; PE fans out to 16 RegisterFiles, all used,
// so 32x32x3x16 = 49152 MACs take 49152 / 16 = 3072 cycles.
TEST(TimeloopValidation, T04_CurrentArchitecture_PeBelowGlobalBuffer) {
  const std::string d = kDir + "04-model-conv1d+oc-3levelspatial/";
  for (const char* m : {"conv1d+oc+ic-3levelspatial-cp-ws.map.yaml", "conv1d+oc+ic-3levelspatial-kp-ws.map.yaml"}) {
    SCOPED_TRACE(m);
    const auto c = dse::io::read_timeloop_case(d + "3levelspatial.arch.yaml", d + "conv1d+oc+ic.prob.yaml", d + m,
                                               d + "ERT.yaml");
    const auto r = lp::evaluate(c.arch, c.problem, c.mapping);
    ASSERT_TRUE(r.feasible) << lp::infeasible_name(r.reason);
    ASSERT_EQ(c.arch.levels.size(), 4u);  // MainMemory, GlobalBuffer, inter_PE_spatial, RegisterFile
    EXPECT_EQ(c.arch.levels[2].name, "inter_PE_spatial");
    EXPECT_EQ(r.levels[1].instances, 1);
    EXPECT_EQ(r.levels[3].instances, 16);
    EXPECT_EQ(r.compute_instances_used, 16);
    EXPECT_EQ(r.cycles, 3072.0);
    EXPECT_EQ(r.levels[1].tensors[0].utilized_capacity, 3072);
    EXPECT_EQ(r.levels[1].tensors[1].utilized_capacity, 576);
    EXPECT_EQ(r.levels[1].tensors[2].utilized_capacity, 512);
    EXPECT_EQ(r.levels[0].tensors[0].reads, 3072);
    EXPECT_EQ(r.levels[0].tensors[1].reads, 576);
    EXPECT_EQ(r.levels[0].tensors[2].updates, 512);
  }
}

// Exercise 05: the mappings Timeloop's mapper found under each constraint file, evaluated by
// the model and compared with the mapper's own statistics (ref-output/<run>/timeloop-mapper.stats.txt).
TEST(TimeloopValidation, T05_MapperOutputs_MatchTimeloopStats) {
  const std::string d = kDir + "05-mapper-conv1d+oc-3level/";
  for (const char* run : {"null", "baked", "freebypass"}) {
    SCOPED_TRACE(run);
    check_against_stats(d + "3level.arch.yaml", d + "conv1d+oc.prob.yaml", d + run + ".timeloop-mapper.map.yaml",
                        d + "ERT.yaml", d + run + ".timeloop-mapper.stats.txt");
  }
}

// The exercises' example designs (workspace/example_designs at 2d55108) on their default
// problem (a 3x3 stride-2 convolution, 224x224x3 -> 112x112x32), with the mapping Timeloop's
// mapper found and its statistics.
TEST(TimeloopValidation, T07_ExampleDesigns_MatchTimeloopStats) {
  const std::string d = kDir + "07-example-designs/";
  for (const char* design : {"simple_weight_stationary", "simple_output_stationary", "eyeriss_like"}) {
    SCOPED_TRACE(design);
    const std::string e = d + design + "/";
    check_against_stats(e + "arch.yaml", d + "default_problem.yaml", e + "timeloop-mapper.map.yaml", e + "ERT.yaml",
                        e + "timeloop-mapper.stats.txt");
  }
}
