// Model changes behind `dse validate` (issue #10): hand-derived figures.
//  * a residual add consumed by two GEMM chains joins only one epilogue;
//  * FP8 decode GEMV traffic is one byte per weight element;
//  * selective recomputation re-executes only the attention core;
//  * the ResNet max pool reads its input once;
//  * a decode attention kernel without GQA sharing streams the KV cache once per query head.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "costmodel/platform/evaluate.hpp"
#include "costmodel/workload/presets.hpp"
#include "costmodel/workload/spec.hpp"
#include "tests/costmodel/a100_test_chip.hpp"

namespace pf = dse::costmodel::platform;
namespace wl = dse::costmodel::workload;
namespace cm = dse::costmodel;

namespace {

// The A100-like test chip with an FP8 matrix rate added (2048 MACs/clk/SM, as H100's
// ratio of FP8 to FP16), so that FP8 kernels run at FP8 and not at the BF16 fallback.
pf::Platform chip() {
  pf::Platform p = dse::test::a100_test_chip();
  p.gpu.name = "a100-fp8-test";
  p.gpu.matrix_macs_per_cycle_per_core[static_cast<std::size_t>(cm::Precision::fp8)] = 2048;
  return p;
}

using dse::test::one_block;

}  // namespace

// A ResNet-style join: main = x W1, down = x W2, add(main, down), relu(add).
// Both GEMMs have the add as their only consumer; only the first chain may take
// it. By hand (bf16, 2 B/element, M = 4096, N = 1024): the fused graph does the
// unfused FLOPs exactly once (the old planner counted add + relu twice), and its
// DRAM traffic is the two GEMMs' own plus one read of the add's second operand,
// 4096 x 1024 x 2 B = 8,388,608 B (the add's output and the relu's read/write
// disappear into the epilogue).
TEST(E2eValidation, ResidualAddJoinsOneEpilogueOnly) {
  const pf::Platform p = chip();
  const auto P = wl::Precision::bf16;
  const auto g = one_block(
      {wl::Node{wl::make_linear("main", wl::LayerType::ffn, 4096, 1024, 256, P, false), {}},
       wl::Node{wl::make_linear("down", wl::LayerType::ffn, 4096, 1024, 512, P, false), {}},
       wl::Node{wl::make_elementwise("add", wl::LayerType::ffn, 4096, 1024, 1.0, 2, P), {"main", "down"}},
       wl::Node{wl::make_elementwise("relu", wl::LayerType::ffn, 4096, 1024, 1.0, 1, P), {"add"}}});
  pf::EvalOptions o;
  o.fusion = pf::FusionStrategy::none;
  const pf::GraphEval un = pf::evaluate_graph(p, g, o);
  ASSERT_EQ(un.layers.size(), 4u);
  o.fusion = pf::FusionStrategy::standard;
  const pf::GraphEval fu = pf::evaluate_graph(p, g, o);
  ASSERT_EQ(fu.layers.size(), 2u);
  EXPECT_EQ(fu.fusion_groups, 1);
  EXPECT_DOUBLE_EQ(fu.totals.flops, un.totals.flops);
  const double residual = 4096.0 * 1024.0 * 2.0;  // 8,388,608 B
  EXPECT_DOUBLE_EQ(fu.totals.dram_bytes, un.layers[0].dram_bytes + un.layers[1].dram_bytes + residual);
}

// FP8 decode GEMV (one token, 8192 x 8192 weight): weights, activation and output
// at 1 B/element -- 8192^2 + 2 x 8192 = 67,125,248 B -- twice fewer than BF16's
// 134,250,496 B; the kernel runs at FP8 and is memory-bound, so its busy time is
// at least 67,125,248 B / (2.039e12 x 0.8 B/s) = 41.15 us.
TEST(E2eValidation, Fp8DecodeGemvReadsOneBytePerWeight) {
  const pf::Platform p = chip();
  pf::EvalOptions o;
  o.launch = pf::LaunchMode::graph;
  const auto fp8 = pf::evaluate_graph(
      p, one_block({wl::Node{wl::make_linear("w", wl::LayerType::ffn, 1, 8192, 8192, wl::Precision::fp8, false), {}}}),
      o);
  const auto bf16 = pf::evaluate_graph(
      p, one_block({wl::Node{wl::make_linear("w", wl::LayerType::ffn, 1, 8192, 8192, wl::Precision::bf16, false), {}}}),
      o);
  ASSERT_EQ(fp8.layers.size(), 1u);
  EXPECT_EQ(fp8.layers[0].mapping.precision, "fp8");
  const double bytes = 8192.0 * 8192.0 + 2.0 * 8192.0;
  EXPECT_NEAR(fp8.totals.dram_bytes, bytes, 0.01 * bytes);
  EXPECT_NEAR(bf16.totals.dram_bytes, 2.0 * bytes, 0.01 * 2.0 * bytes);
  EXPECT_GE(fp8.totals.latency_s, bytes / (2.039e12 * 0.8));
  EXPECT_EQ(fp8.layers[0].bottleneck, cm::Bottleneck::memory);
}

namespace {
wl::TransformerSpec tiny_decoder() {
  wl::TransformerSpec s;
  s.name = "tiny";
  s.hidden = 64;
  s.layers = 2;
  s.heads = 4;
  s.ffn_hidden = 128;
  s.vocab = 100;
  return s;
}
// One training step of the tiny decoder: batch 1 of 32 tokens, no recomputation.
wl::PhaseSpec tiny_training_step() {
  wl::PhaseSpec ph;
  ph.phase = wl::Phase::training;
  ph.batch = 1;
  ph.seq = 32;
  return ph;
}
}  // namespace

// Selective recomputation of a tiny decoder (hidden 64, 4 heads of 16, 2 layers,
// FFN 128, vocab 100; batch 1 of 32 tokens): per layer the recomputed work is
// QK^T 2 x 4 x 32 x 32 x 16 = 131,072 FLOPs, AV the same, softmax 5 x (4 x 32) x 32
// = 20,480: 282,624 per layer, 565,248 for both. Full recompute re-runs the whole
// forward of the layers (more); no recompute adds nothing.
TEST(E2eValidation, SelectiveRecomputeRepeatsOnlyTheAttentionCore) {
  const wl::TransformerSpec s = tiny_decoder();
  wl::PhaseSpec ph = tiny_training_step();
  const auto none = wl::build_graph(s, ph);
  EXPECT_DOUBLE_EQ(wl::totals_of_pass(none, wl::Pass::recompute).flops, 0.0);
  ph.recompute_attention = true;
  const auto sel = wl::build_graph(s, ph);
  EXPECT_DOUBLE_EQ(wl::totals_of_pass(sel, wl::Pass::recompute).flops, 565248.0);
  EXPECT_DOUBLE_EQ(wl::totals(sel).flops, wl::totals(none).flops + 565248.0);
  ph.recompute_attention = false;
  ph.recompute = true;
  const auto full = wl::build_graph(s, ph);
  EXPECT_GT(wl::totals_of_pass(full, wl::Pass::recompute).flops, 565248.0);
  // Recompute copies carry the ".recompute" suffix the MFU count of dse validate skips.
  for (const auto& b : sel.blocks)
    for (const auto& n : b.nodes)
      if (n.op.pass == wl::Pass::recompute) {
        EXPECT_NE(n.op.name.find(".recompute"), std::string::npos);
        EXPECT_TRUE(n.op.kind == wl::OpKind::batched_gemm || n.op.kind == wl::OpKind::softmax);
      }
}

// JAX's checkpoint_dots_with_no_batch_dims (MaxText's remat_policy minimal) on the tiny decoder
// above: the backward pass reruns every forward operator of a layer but its projections (the
// gemm operators, whose outputs the policy saves), its collectives (none without TP) and its
// last residual add, whose output only leaves the layer (JAX reruns what the backward reads):
// the RMSNorms, the rotary embedding, the attention core, the first residual add and the
// SwiGLU product, each at its forward FLOPs, per layer.
TEST(E2eValidation, DotsPolicyRerunsAllButTheProjections) {
  const wl::TransformerSpec s = tiny_decoder();
  wl::PhaseSpec ph = tiny_training_step();
  ASSERT_TRUE(wl::apply_recompute("minimal", ph));
  EXPECT_TRUE(ph.recompute_non_matmul && !ph.recompute && !ph.recompute_attention);
  const auto g = wl::build_graph(s, ph);
  std::set<std::string> rerun;
  double rerun_flops = 0.0;
  for (const auto& b : g.blocks)
    for (const auto& n : b.nodes)
      if (n.op.pass == wl::Pass::recompute) {
        rerun.insert(n.op.name);
        rerun_flops += static_cast<double>(b.repeat) * wl::flops(n.op);
      }
  const std::set<std::string> want = {"norm_attn.recompute",    "attn_rope.recompute", "attn_qk.recompute",
                                      "attn_softmax.recompute", "attn_av.recompute",   "residual_attn.recompute",
                                      "norm_ffn.recompute",     "ffn_act.recompute"};
  EXPECT_EQ(rerun, want);
  // Each at the FLOPs of its forward original, both layers.
  double fwd = 0.0;
  for (const auto& b : g.blocks)
    for (const auto& n : b.nodes)
      if (n.op.pass == wl::Pass::forward && want.count(n.op.name + ".recompute") != 0)
        fwd += static_cast<double>(b.repeat) * wl::flops(n.op);
  EXPECT_GT(fwd, 565248.0);  // more than the attention core alone (selective, above)
  EXPECT_DOUBLE_EQ(rerun_flops, fwd);
  EXPECT_FALSE(wl::apply_recompute("dots", ph));
}

// ResNet-50 stem max pool (3x3, stride 2, pad 1) on the 64 x 112 x 112 conv1
// output: it reads that input once, 64 x 112 x 112 = 802,816 elements per image
// (not 9 per output, 64 x 56 x 56 x 9 = 1,806,336).
TEST(E2eValidation, ResNetMaxPoolReadsItsInputOnce) {
  wl::PhaseSpec ph;
  ph.phase = wl::Phase::prefill;
  ph.batch = 1;
  ph.seq = 1;
  const auto g = wl::build_graph(*wl::workload_preset("resnet50"), ph);
  bool found = false;
  for (const auto& b : g.blocks)
    for (const auto& n : b.nodes)
      if (n.op.name == "maxpool") {
        found = true;
        EXPECT_EQ(n.op.rows * n.op.cols, 802816);
        EXPECT_EQ(n.op.rows, 64 * 56 * 56);
      }
  EXPECT_TRUE(found);
}

// Attention dropout (training only) on the tiny decoder above (4 heads, 32 tokens,
// bf16): per layer the probabilities are 4 x 32 x 32 = 4,096 elements, so by hand
// the forward reads 8,192 B, writes 8,192 B and a 4,096 B mask (20,480 B) at 2
// FLOPs per element (8,192); its backward reads dy (8,192 B) and the mask, writes
// dx (8,192 B) at 1 FLOP per element. Selective recomputation re-runs it with the
// attention core: 565,248 + 2 x 8,192 = 581,632 FLOPs. Inference has no dropout.
TEST(E2eValidation, AttentionDropoutWritesAMaskTheBackwardReads) {
  wl::TransformerSpec s = tiny_decoder();
  s.attention_dropout = 0.1;
  wl::PhaseSpec ph = tiny_training_step();
  ph.recompute_attention = true;
  const auto g = wl::build_graph(s, ph);
  int fwd = 0, bwd = 0, rec = 0;
  for (const auto& b : g.blocks)
    for (const auto& n : b.nodes) {
      if (n.op.name == "attn_dropout") {
        ++fwd;
        EXPECT_TRUE(wl::is_dropout(n.op));
        EXPECT_DOUBLE_EQ(wl::bytes(n.op), 20480.0);
        EXPECT_DOUBLE_EQ(wl::flops(n.op), 8192.0);
        EXPECT_EQ(n.inputs, std::vector<std::string>{"attn_softmax"});
      } else if (n.op.name == "attn_dropout.bwd") {
        ++bwd;
        EXPECT_DOUBLE_EQ(wl::bytes(n.op), 20480.0);
        EXPECT_DOUBLE_EQ(wl::flops(n.op), 4096.0);
      } else if (n.op.name == "attn_dropout.recompute") {
        ++rec;
      } else if (n.op.name == "attn_av") {
        EXPECT_EQ(n.inputs.at(0), "attn_dropout");
      }
    }
  EXPECT_EQ(fwd, 1);
  EXPECT_EQ(bwd, 1);
  EXPECT_EQ(rec, 1);
  EXPECT_DOUBLE_EQ(wl::totals_of_pass(g, wl::Pass::recompute).flops, 581632.0);
  ph.phase = wl::Phase::prefill;
  ph.recompute_attention = false;
  for (const auto& b : wl::build_graph(s, ph).blocks)
    for (const auto& n : b.nodes) EXPECT_FALSE(wl::is_dropout(n.op)) << n.op.name;
}

// Fused decode attention of one GQA layer: batch 4, 8 query heads sharing 2 KV heads (group
// 4), head 64, 1024 cached keys, bf16. By hand: Q and O are 4 x 8 x 64 elements each; K and
// V 4 x 2 x 1024 x 64 each when the group shares its KV head, 4 x 8 x 1024 x 64 each when
// every query head streams it (4x). DRAM bytes are the fused kernel's Q + K + V + O traffic.
TEST(E2eValidation, DecodeAttentionPerQueryHeadReadsTheKvCacheOncePerQueryHead) {
  const pf::Platform p = chip();
  pf::EvalOptions o;
  o.launch = pf::LaunchMode::graph;
  o.fusion = pf::FusionStrategy::aggressive;
  wl::TransformerSpec s = tiny_decoder();
  s.hidden = 512;
  s.heads = 8;
  s.kv_heads = 2;
  wl::PhaseSpec ph;
  ph.phase = wl::Phase::decode;
  ph.batch = 4;
  ph.seq = 1;
  ph.context = 1023;
  auto attention_bytes = [&](bool per_query_head) {
    ph.kv_read_per_query_head = per_query_head;
    const auto g = pf::evaluate_graph(p, wl::build_graph(s, ph), o);
    for (const auto& l : g.layers)
      if (l.type == "fused_attention") return l.dram_bytes;
    return -1.0;
  };
  const double qo = 2.0 * 4 * 8 * 64 * 2;
  const double kv_shared = 2.0 * 4 * 2 * 1024 * 64 * 2;
  EXPECT_DOUBLE_EQ(attention_bytes(false), qo + kv_shared);
  EXPECT_DOUBLE_EQ(attention_bytes(true), qo + 4.0 * kv_shared);
}
