// Custom chips in scenarios (issue 55 items 2, 3, 6): kind: loopnest entries and their
// overrides (each refusal as one FILE:LINE:COL line), models at a phase on loop-nest,
// systolic and roofline chips, the vector unit and epilogue fusion by hand, the area model
// by hand, and an override that changes nothing giving the preset's figures bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>

#include "costmodel/loopnest/architecture.hpp"
#include "dse/driver/run.hpp"
#include "dse/error.hpp"
#include "dse/io/op_spec.hpp"
#include "dse/io/platform_reader.hpp"
#include "dse/io/scenario.hpp"
#include "dse/io/timeloop_reader.hpp"
#include "dse/io/timeloop_writer.hpp"

namespace dse {
namespace {

namespace lp = costmodel::loopnest;

std::string parse_error(const std::string& text) {
  try {
    (void)parse_scenario(text, "s.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

// A loop-nest entry on eyeriss-like with `extra` lines (4-space indented keys) and a workload.
std::string eyeriss(const std::string& extra,
                    const std::string& workload = "{name: w, model: resnet50, phase: inference}") {
  return "name: t\n"
         "hardware:\n"
         "  - name: e\n"
         "    kind: loopnest\n"
         "    architecture: eyeriss-like\n"
         "    mapper_evaluations: 300\n" +
         extra + "workloads:\n  - " + workload + "\nbatch_sizes: [1]\n";
}

TEST(ChipOverrides, UnknownPathNamesTheClosestValidOne) {
  const std::string e = parse_error(eyeriss("    overrides:\n      levels.shared_gbl.capacity_words: 1024\n"));
  EXPECT_EQ(e.rfind("s.yaml:8:7: hardware[0].overrides.levels.shared_gbl.capacity_words: expected a number of the "
                    "architecture ",
                    0),
            0u)
      << e;
  EXPECT_NE(
      e.find("the closest valid path is 'levels.shared_glb.capacity_words' (got \"levels.shared_gbl.capacity_words\")"),
      std::string::npos)
      << e;
}

TEST(ChipOverrides, ValuesTheNativeReaderRefusesAreRefused) {
  // read_loopnest_hardware reads mesh_x as an integer > 0 and capacity_words as a number >= 0
  // held in an int64: the override takes whole numbers there.
  EXPECT_NE(parse_error(eyeriss("    overrides:\n      compute.mesh_x: 0\n"))
                .find("s.yaml:8:23: hardware[0].overrides.compute.mesh_x: expected a whole number from 1 to 2^53 at "
                      "compute.mesh_x"),
            std::string::npos);
  EXPECT_NE(parse_error(eyeriss("    overrides:\n      levels.shared_glb.capacity_words: 1.5\n"))
                .find("expected a whole number from 0 to 2^53 at levels.shared_glb.capacity_words"),
            std::string::npos);
  EXPECT_NE(parse_error(eyeriss("    overrides:\n      levels.DRAM.read_energy_pj: -1\n"))
                .find("expected a number >= 0 at levels.DRAM.read_energy_pj"),
            std::string::npos);
}

TEST(ChipOverrides, AnInvalidHierarchyIsRefusedAtTheKnob) {
  // 13 PE columns under scratchpads meshed 14 wide: loopnest::validate refuses it.
  const std::string e = parse_error(eyeriss("    overrides:\n      compute.mesh_x: {choices: [14, 13]}\n"));
  EXPECT_EQ(e.rfind("s.yaml:8:23: hardware[0].overrides.compute.mesh_x: expected a valid hierarchy (", 0), 0u) << e;
  EXPECT_NE(e.find("(got compute.mesh_x=13)"), std::string::npos) << e;
}

TEST(ChipOverrides, GroupsCheckTheirChoicesAndLabels) {
  const std::string base = "    overrides:\n      pe:\n        paths: [compute.mesh_x, levels.psum_spad.mesh_x]\n";
  EXPECT_NE(parse_error(eyeriss(base + "        choices: [[14, 14], [16]]\n"))
                .find("hardware[0].overrides.pe.choices[1]: expected a list of 2 numbers (one per path)"),
            std::string::npos);
  EXPECT_NE(parse_error(eyeriss(base + "        choices: [14, 16]\n        labels: [a]\n"))
                .find("hardware[0].overrides.pe.labels: expected one label per choice (2) (got 1)"),
            std::string::npos);
  EXPECT_NE(parse_error(eyeriss(base + "        choices: [14]\n      compute.mesh_x: 14\n"))
                .find("expected a path no other override moves (pe moves it)"),
            std::string::npos);
}

TEST(ChipOverrides, VariantsCarryTheirValuesAndDseMapOptions) {
  const Scenario s =
      parse_scenario(eyeriss("    objective: {choices: [energy, latency]}\n    overrides:\n      glb:\n"
                             "        paths: [levels.shared_glb.capacity_words]\n        times: {choices: [1, 2]}\n"
                             "        labels: [base, double]\n"),
                     "s.yaml");
  const HardwareEntry& h = s.hardware[0];
  ASSERT_EQ(h.variants(), 4u);
  EXPECT_EQ(h.describe(3), "objective=latency glb=double");
  // The preset's 55,296 words, doubled.
  EXPECT_EQ(h.variant(3).loopnest.arch.levels[1].capacity_words, 110592);
  EXPECT_EQ(h.eval_arguments(3),
            "--hw eyeriss-like --override levels.shared_glb.capacity_words=110592 --objective latency "
            "--evaluations 300 --time-budget-ms 0 --seed 1");
}

// Every record field of a chip point, compared exactly.
void expect_same_record(const PointRecord& a, const PointRecord& b) {
  EXPECT_EQ(a.feasible, b.feasible);
  EXPECT_EQ(a.latency_s, b.latency_s);
  EXPECT_EQ(a.throughput_samples_per_s, b.throughput_samples_per_s);
  EXPECT_EQ(a.energy_per_sample_j, b.energy_per_sample_j);
  EXPECT_EQ(a.power_w, b.power_w);
  EXPECT_EQ(a.area_mm2, b.area_mm2);
  EXPECT_EQ(a.flops, b.flops);
  EXPECT_EQ(a.dram_bytes, b.dram_bytes);
  EXPECT_EQ(a.memory_bytes, b.memory_bytes);
  EXPECT_EQ(a.mfu, b.mfu);
  EXPECT_EQ(std::string(a.bottleneck), std::string(b.bottleneck));
}

TEST(ChipOverrides, AnOverrideThatChangesNothingGivesThePresetsFigures) {
  const std::string w = "{name: w, model: mobilenet-v2, phase: inference}";
  const Scenario plain = parse_scenario(eyeriss("    process_nm: 65\n", w), "a.yaml");
  const Scenario same =
      parse_scenario(eyeriss("    process_nm: 65\n    overrides:\n      levels.shared_glb.capacity_words: 55296\n"
                             "      compute.rates.0.energy_pj_per_mac: {times: 1}\n      clock_hz: 2.0e8\n",
                             w),
                     "b.yaml");
  expect_same_record(evaluate_point(plain, design_space(plain), 0), evaluate_point(same, design_space(same), 0));
}

TEST(ChipPoints, TheMemoGivesTheSameFigures) {
  const Scenario s = parse_scenario(
      eyeriss("    objective: {choices: [energy, latency]}\n", "{name: w, model: mobilenet-v2, phase: inference}"),
      "s.yaml");
  const auto space = design_space(s);
  const PointRecord first = evaluate_point(s, space, 0);
  const std::int64_t misses = s.hardware[0].loopnest->memo->misses();
  expect_same_record(first, evaluate_point(s, space, 0));
  (void)evaluate_point(s, space, 1);  // the other objective: every mapped operator a hit
  EXPECT_EQ(s.hardware[0].loopnest->memo->misses(), misses);
  EXPECT_GT(s.hardware[0].loopnest->memo->hits(), 0);
}

// A 1x1 convolution of 16 x 8 x 8 inputs to 16 channels, a ReLU on its output and an add of
// the ReLU's output and the block's input (explicit operator list).
const char* kTiny =
    "name: tiny\nblocks:\n  - name: b\n    ops:\n"
    "      - {name: conv, kind: conv2d, batch: batch, in_channels: 16, height: 8, width: 8, out_channels: 16, kernel: "
    "1}\n"
    "      - {name: relu, kind: elementwise, rows: batch, cols: 1024, after: conv}\n"
    "      - {name: add, kind: elementwise, rows: batch, cols: 1024, inputs: 2, after: relu}\n";

TEST(ChipPoints, VectorUnitAndEpilogueFusionByHand) {
  const std::string file = std::string(::testing::TempDir()) + "/tiny_chip_workload.yaml";
  { std::ofstream(file) << kTiny; }
  const Scenario s =
      parse_scenario(eyeriss("    fusion: {choices: [none, epilogue]}\n    vector_energy_per_op_j: 1.0e-13\n",
                             "{name: w, model: " + file + ", phase: inference}"),
                     "s.yaml");
  const auto space = design_space(s);
  const auto none = layer_breakdown(s, space, 0);
  const auto fused = layer_breakdown(s, space, 1);
  ASSERT_EQ(none.size(), 3u);
  ASSERT_EQ(fused.size(), 3u);
  // eyeriss-like: 168 PEs (one vector op each per cycle by default), 200 MHz, DRAM of 16-bit
  // words, 1.8 words per cycle each way, 1,280 pJ per 4-word access vector.
  const double clock = 2e8, e_vec = 1280e-12 / 4.0;
  // Unfused ReLU: 1,024 words in and 1,024 out at 1.8 words per cycle.
  EXPECT_DOUBLE_EQ(none[1].latency_s, 1024.0 / 1.8 / clock);
  EXPECT_DOUBLE_EQ(none[1].energy_j, 1024 * e_vec + 1024 * e_vec + 1024 * 1e-13);
  EXPECT_DOUBLE_EQ(none[1].dram_bytes, 2048 * 2.0);
  // Fused ReLU: 1,024 operations on 168 lanes, no memory traffic.
  EXPECT_DOUBLE_EQ(fused[1].latency_s, 1024.0 / 168.0 / clock);
  EXPECT_DOUBLE_EQ(fused[1].energy_j, 1024 * 1e-13);
  EXPECT_EQ(fused[1].dram_bytes, 0.0);
  EXPECT_NE(fused[1].mapping.find("fused into conv"), std::string::npos);
  // The add reads two tensors: never fused; 2,048 words read at 1.8 per cycle.
  EXPECT_DOUBLE_EQ(fused[2].latency_s, 2048.0 / 1.8 / clock);
  EXPECT_EQ(fused[2].mapping, "vector unit");
  // The convolution is the same mapped operator either way.
  EXPECT_EQ(none[0].latency_s, fused[0].latency_s);
  EXPECT_EQ(none[0].mapping.rfind("conv2d N=1 C=16 H=8 W=8 K=16 R=1 S=1 stride=1 bits=16 => ", 0), 0u)
      << none[0].mapping;
}

TEST(ChipPoints, AreaOfEyerissLikeAt65nmByHand) {
  const Scenario s = parse_scenario(eyeriss("    process_nm: 65\n"), "s.yaml");
  // Aladdin at 40 nm: a 16 x 16-bit multiplier 6,350 um^2 x (16/32)^2, a 32-bit accumulator
  // 278 um^2, a register bit 5.98 um^2; an SRAM bit 600 F^2; scaled by (65/40)^2.
  const double scale = (65.0 / 40.0) * (65.0 / 40.0);
  const double macs = 168 * (6350.0 / 4 + 278.0) * scale;
  // ifmap (12 words) and psum (24 words) scratchpads of 16-bit words are registers (<= 1 Kib).
  const double registers = 168 * (12 + 24) * 16 * 5.98 * scale;
  // The 55,296-word global buffer and the 224-word filter scratchpads are SRAM.
  const double sram = (55296.0 * 16 + 168 * 224.0 * 16) * 600 * 0.065 * 0.065;
  EXPECT_NEAR(s.hardware[0].variant(0).area_mm2(), (macs + registers + sram) * 1e-6, 1e-12);
}

TEST(ChipPoints, ModelsRunOnRooflineSystolicAndLoopnestChips) {
  const Scenario s = parse_scenario(
      "name: t\nhardware:\n"
      "  - {name: r, peak_flops_per_s: 1.0e12, memory_bandwidth_bytes_per_s: 1.0e11, memory_capacity_bytes: 8.0e9,\n"
      "     kernel_overhead_s: 0, energy_per_flop_j: 1.0e-12, energy_per_byte_j: 1.0e-11, static_power_w: 0,\n"
      "     engineering_risk: 0}\n"
      "  - {name: sa, kind: systolic, array_rows: 32, array_cols: 32, dataflow: ws, ifmap_sram_kib: 64,\n"
      "     filter_sram_kib: 64, ofmap_sram_kib: 64, dram_words_per_cycle: 16, clock_hz: 1.0e9, energy_per_mac_j: 0,\n"
      "     energy_per_sram_word_j: 0, energy_per_dram_word_j: 0, static_power_w: 0, memory_capacity_bytes: 8.0e9,\n"
      "     engineering_risk: 0}\n"
      "  - {name: e, kind: loopnest, architecture: eyeriss-like, mapper_evaluations: 300}\n"
      "  - {name: dgx, kind: system, system: dgx-h100-8}\n"
      "workloads:\n  - {name: bert, model: bert-base, phase: inference, seq: 128}\n"
      "batch_sizes: [1]\n",
      "s.yaml");
  const auto space = design_space(s);
  for (std::uint64_t i = 0; i < 3; ++i) {
    const PointRecord r = evaluate_point(s, space, i);
    EXPECT_EQ(r.feasible, 1) << i;
    // BERT-base, 128 tokens: 12 layers x (4 x 768^2 + 2 x 768 x 3072) x 128 MACs in the
    // projections and FFNs, plus the attention products; every chip counts the same FLOPs.
    EXPECT_EQ(r.flops, evaluate_point(s, space, 0).flops) << i;
    EXPECT_GT(r.flops, 2.0 * 12 * (4.0 * 768 * 768 + 2.0 * 768 * 3072) * 128);
  }
  const PointRecord sys = evaluate_point(s, space, 3);  // a system runs served models only
  EXPECT_EQ(sys.feasible, 0);
  EXPECT_EQ(std::string(sys.bottleneck), "unsupported");
}

// A Timeloop v0.4 architecture (the Eyeriss exercise of data/oracles/timeloop/06, with its ERT
// and its own dataspace constraints) as a loop-nest chip: a mapped layer of the point is what
// dse map's path gives for the operator the sheet names (read_timeloop_arch + ERT, the file's
// constraints, map_operator with an evaluation budget and no clock).
TEST(ChipPoints, TimeloopArchitectureUnderItsOwnConstraints) {
  const std::string dir = std::string(DSE_ORACLES_DIR) + "/timeloop/06-eyeriss-vgg02-layer5/";
  const Scenario s =
      parse_scenario("name: t\nhardware:\n  - name: tl\n    kind: loopnest\n    architecture: " + dir +
                         "eyeriss_like.yaml\n    ert: " + dir +
                         "ERT.yaml\n    mapper_evaluations: 500\n"
                         "workloads:\n  - {name: w, model: mobilenet-v2, phase: inference}\nbatch_sizes: [1]\n",
                     "s.yaml");
  const auto rows = layer_breakdown(s, design_space(s), 0);
  int checked = 0;
  for (const auto& row : rows) {
    const auto arrow = row.mapping.find(" => ");
    if (arrow == std::string::npos || checked == 3) continue;
    lp::Architecture a = io::read_timeloop_arch(dir + "eyeriss_like.yaml");
    io::read_timeloop_ert(dir + "ERT.yaml", a);
    const lp::Problem p = io::parse_loopnest_op(row.mapping.substr(0, arrow), 8, "op");
    costmodel::mapper::MapperOptions o;
    o.heuristic_evaluations = 500;
    const auto r =
        costmodel::mapper::map_operator(a, p, io::read_timeloop_constraints(dir + "eyeriss_like.yaml", "", a, p), o);
    EXPECT_EQ(row.latency_s, r.cost.latency_s) << row.name;
    EXPECT_EQ(row.energy_j, r.cost.energy_j) << row.name;
    ++checked;
  }
  EXPECT_EQ(checked, 3);
}

TEST(ChipWorkloads, PhaseAndModelErrorsAreOneLine) {
  EXPECT_NE(parse_error(eyeriss("", "{name: w, model: mobilenet-v2, phase: decode}"))
                .find("workloads[0].phase: expected inference or prefill for an ONNX model"),
            std::string::npos);
  EXPECT_NE(parse_error(eyeriss("", "{name: w, model: resnet50, phase: serve}"))
                .find("workloads[0].phase: expected inference, prefill, decode or train (got \"serve\")"),
            std::string::npos);
  EXPECT_NE(parse_error(eyeriss("", "{name: w, model: resnet5, phase: inference}"))
                .find("workloads[0].model: expected a workload preset or file, did you mean 'resnet50'?"),
            std::string::npos);
  // ResNet-50 has no decode phase: the builder's own reason, at the phase.
  EXPECT_NE(parse_error(eyeriss("", "{name: w, model: resnet50, phase: decode}"))
                .find("workloads[0].phase: expected a phase"),
            std::string::npos);
}

}  // namespace
}  // namespace dse
