// Real workloads on custom chips (issue 55 item 3): the shipped MobileNet-v2 ONNX model
// against the published network, every array operator of ResNet-50 and MobileNet-v2
// lowered to the same loop nest `dse map --op` reads from its mapping-sheet text, and the
// sanity a user checks: a larger global buffer never raises the mapper's DRAM traffic.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "costmodel/lowering/chip_eval.hpp"
#include "costmodel/lowering/lowering.hpp"
#include "costmodel/mapper/memo.hpp"
#include "costmodel/workload/presets.hpp"
#include "dse/io/onnx_import.hpp"
#include "dse/io/op_spec.hpp"
#include "dse/io/platform_reader.hpp"
#include "dse/io/timeloop_writer.hpp"
#include "tests/scratch.hpp"

namespace {

namespace wl = dse::costmodel::workload;
namespace lw = dse::costmodel::lowering;
namespace lp = dse::costmodel::loopnest;
namespace mp = dse::costmodel::mapper;

const std::string kMobileNet = std::string(DSE_SOURCE_DIR) + "/scenarios/workloads/mobilenet-v2.onnx";

wl::OperatorGraph mobilenet(std::int64_t batch, const std::string& file = kMobileNet) {
  dse::io::OnnxImportOptions o;
  o.batch = batch;
  return dse::io::import_onnx(file, o).graph;
}

wl::OperatorGraph resnet50(std::int64_t batch) {
  wl::PhaseSpec p;
  p.batch = batch;
  return wl::build_graph(*wl::workload_preset("resnet50"), p);
}

class ChipWorkloads : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!dse::io::onnx_support_built()) GTEST_SKIP() << "built with DSE_WITH_ONNX=OFF";
  }
};

// Sandler et al., CVPR 2018, Table 2, at 224 x 224: each row's MACs by hand. A 1x1
// convolution of C to K channels on an H x W output costs H W C K MACs, a 3x3 depthwise one
// 9 H W C; the first layer is a 3x3 stride-2 convolution of 3 to 32 channels.
double mobilenet_v2_macs_by_hand() {
  struct Row {
    int t, c, n, s;
  };
  const Row rows[] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                      {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  double hw = 112;  // after the first layer
  double macs = hw * hw * 3 * 3 * 3 * 32;
  double c_in = 32;
  for (const Row& r : rows) {
    for (int i = 0; i < r.n; ++i) {
      const double hidden = c_in * r.t;
      if (r.t != 1) macs += hw * hw * c_in * hidden;  // expansion, at the input's size
      if (i == 0 && r.s == 2) hw /= 2;
      macs += 9 * hw * hw * hidden;    // depthwise
      macs += hw * hw * hidden * r.c;  // projection
      c_in = r.c;
    }
  }
  macs += hw * hw * 320 * 1280;  // conv2d 1x1 to 1280 at 7 x 7
  macs += 1280.0 * 1000;         // the classifier
  return macs;
}

TEST_F(ChipWorkloads, MobileNetV2IsThePublishedNetwork) {
  const wl::OperatorGraph g = mobilenet(1);
  double conv_macs = 0.0, weights = 0.0, folded_batch_norms = 0.0;
  for (const auto& n : g.blocks[0].nodes) {
    if (n.op.kind != wl::OpKind::conv2d) continue;
    conv_macs += wl::macs(n.op);
    for (const auto& t : n.op.tensors)
      weights += t.role == wl::TensorRole::weight ? static_cast<double>(t.elements) : 0.0;
    if (n.op.name != "classifier") folded_batch_norms += static_cast<double>(n.op.conv.k);
  }
  EXPECT_EQ(conv_macs, mobilenet_v2_macs_by_hand());
  // The paper's "300M" multiply-adds (Table 4), rounded.
  EXPECT_NEAR(conv_macs, 300e6, 0.01 * 300e6);
  // torchvision's mobilenet_v2 has 3,504,872 parameters (its weights table, num_params): the
  // same convolutions with batch norms (2 parameters a channel) where this export folds each
  // into one bias a channel.
  EXPECT_EQ(weights + folded_batch_norms, 3504872.0);
}

TEST_F(ChipWorkloads, PlaceholderWeightsImportAsDenseWeights) {
  const std::string dense = (dse::test::scratch_dir("mobilenet") / "dense.onnx").string();
  const std::string cmd =
      "/usr/bin/python3 " + std::string(DSE_SOURCE_DIR) + "/scripts/make_mobilenet_v2_onnx.py " + dense + " --dense";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "make_mobilenet_v2_onnx.py failed (needs python3-onnx)";
  const wl::OperatorGraph a = mobilenet(8), b = mobilenet(8, dense);
  ASSERT_EQ(a.blocks[0].nodes.size(), b.blocks[0].nodes.size());
  for (std::size_t i = 0; i < a.blocks[0].nodes.size(); ++i) {
    const wl::Operator &x = a.blocks[0].nodes[i].op, &y = b.blocks[0].nodes[i].op;
    EXPECT_EQ(x.name, y.name);
    EXPECT_EQ(x.kind, y.kind);
    EXPECT_EQ(wl::macs(x), wl::macs(y)) << x.name;
    EXPECT_EQ(wl::bytes(x), wl::bytes(y)) << x.name;
    EXPECT_EQ(a.blocks[0].nodes[i].inputs, b.blocks[0].nodes[i].inputs) << x.name;
  }
}

// What dse map reads from a point's mapping sheet is the loop nest the point mapped.
void expect_map_text_equal(const wl::OperatorGraph& g, int bits) {
  const lp::Architecture a = dse::io::read_loopnest_hardware(dse::io::resolve_loopnest_hardware_path("eyeriss-like"));
  int checked = 0;
  for (const auto& b : g.blocks) {
    for (const auto& n : b.nodes) {
      if (lw::unit_of(n.op) != lw::Unit::array) continue;
      const lp::Problem lowered = lw::loopnest_problem(n.op, bits);
      const lp::Problem read = dse::io::parse_loopnest_op(lw::map_op_text(n.op, bits), 8, "op");
      EXPECT_EQ(mp::canonical_key(a, lowered, mp::Constraints{}, mp::MapperOptions{}),
                mp::canonical_key(a, read, mp::Constraints{}, mp::MapperOptions{}))
          << n.op.name << ": " << lw::map_op_text(n.op, bits);
      EXPECT_EQ(lp::macs(lowered), wl::macs(n.op)) << n.op.name;
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

TEST_F(ChipWorkloads, MappingSheetOperatorsAreTheLoweredLoopNests) {
  for (const std::int64_t batch : {1, 8}) {
    expect_map_text_equal(resnet50(batch), 16);
    expect_map_text_equal(mobilenet(batch), 8);
  }
}

// A known gap (docs/known-gaps.md, "The mapper and a larger buffer"; run with ctest -L known_gap):
// the heuristic mapper's answer is not monotone in a buffer's capacity.
class KnownGapChipWorkloads : public ChipWorkloads {};

// Each distinct array operator of ResNet-50 mapped on eyeriss-like with the global buffer at
// half, the preset's and twice its capacity, at the budget dse run uses by default: under the
// energy and energy-delay objectives (a DRAM access costs 1,280 pJ per 64 bits there, a
// global-buffer access 65.52) the DRAM traffic of the mapper's answer should never rise with the
// buffer, since a larger buffer only adds mappings. It does: with Timeloop's sliding-window rule
// (2026-12-08) layer4.0.conv2's answer at 55,296 words takes 3.00 mJ against 2.70 mJ at 27,648,
// whose mapping still fits; and at 30,000 evaluations the rule before fails too (layer4.0.conv1
// 1.495 mJ at 55,296 words against 1.106 at 27,648). Under the latency objective mappings of equal time may move more DRAM words
// (layer1.0.conv2: 2.21 MB at 110,592 words against 1.53 MB at 55,296, the same cycles), so
// traffic is not asserted there. Nor is the objective itself: a larger buffer only adds
// mappings, but the search is cut by its evaluation budget, and at 3,000 evaluations its
// energy-delay answer for layer1.0.conv2 is worse with the larger buffer (3.040e-6 J s against
// 2.897e-6; equal at 30,000: docs/known-gaps.md).
TEST_F(KnownGapChipWorkloads, ALargerGlobalBufferNeverRaisesDramTraffic) {
  lw::LoopnestChip chip;
  chip.arch = dse::io::read_loopnest_hardware(dse::io::resolve_loopnest_hardware_path("eyeriss-like"));
  chip.mapper.heuristic_evaluations = 3000;
  lw::OperatorMemo memo;
  std::vector<lp::Problem> ops;
  for (const auto& b : resnet50(1).blocks)
    for (const auto& n : b.nodes)
      if (lw::unit_of(n.op) == lw::Unit::array) ops.push_back(lw::loopnest_problem(n.op, 16));
  int compared = 0;
  for (const mp::Objective o : {mp::Objective::energy, mp::Objective::edp}) {
    chip.mapper.objective = o;
    for (const lp::Problem& p : ops) {
      const lw::MappedOperator* before = nullptr;
      lw::MappedOperator last;
      for (const std::int64_t words : {27648, 55296, 110592}) {
        chip.arch.levels[1].capacity_words = words;
        const lw::MappedOperator m = lw::map_on_chip(chip, p, memo);
        ASSERT_TRUE(m.feasible) << p.name;
        if (before != nullptr) {
          const std::string where =
              p.name + " at " + std::to_string(words) + " words, objective " + mp::objective_name(o);
          EXPECT_LE(m.dram_bytes, before->dram_bytes) << where;
          ++compared;
        }
        last = m;
        before = &last;
      }
    }
  }
  EXPECT_GT(compared, 50);
}

}  // namespace
