// The fused attention kernels (costmodel/platform/attention_fusion.cpp): hand-checked
// traffic, FLOPs and grids of FlashAttention forward and backward, decode packing, causal masks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "costmodel/platform/evaluate.hpp"
#include "tests/costmodel/a100_test_chip.hpp"

namespace pf = dse::costmodel::platform;
namespace wl = dse::costmodel::workload;
namespace cm = dse::costmodel;

namespace {

using dse::test::a100_test_chip;
using dse::test::attention_chain;
using dse::test::evaluate_as;
using dse::test::one_block;
pf::Platform a100() { return a100_test_chip(); }

}  // namespace

// FlashAttention-style fusion: the fused kernel moves Q, K, V and O only. With
// b = 16 heads, S = 512, d = 64 in fp16 (2 bytes), by hand:
//   Q = K = V = O = 16 x 512 x 64 x 2 = 1,048,576 bytes  -> 4,194,304 bytes;
//   score S x S per head: 16 x 512 x 512 x 2 = 8,388,608 bytes.
// By the operators' tensor lists (every tensor read or written once), the
// unfused chain moves Q+K+S (qk) + S+S (softmax) + S+V+O (av), so fusion removes
// exactly 4 x 8,388,608 = 33,554,432 bytes of score traffic.
TEST(Platform, FusedAttentionRemovesScoreTraffic) {
  const pf::Platform p = a100();
  const auto P = wl::Precision::fp16;
  const auto g = one_block(attention_chain(P));
  const pf::GraphEval un = evaluate_as(p, g, P, pf::FusionStrategy::standard);
  const pf::GraphEval fu = evaluate_as(p, g, P, pf::FusionStrategy::aggressive);
  ASSERT_EQ(un.layers.size(), 3u);
  ASSERT_EQ(fu.layers.size(), 1u);
  EXPECT_EQ(fu.layers[0].type, "fused_attention");
  EXPECT_DOUBLE_EQ(fu.layers[0].dram_bytes, 4194304.0);
  double tensor_bytes = 0.0;
  for (const auto& n : g.blocks[0].nodes) tensor_bytes += wl::bytes(n.op);
  EXPECT_DOUBLE_EQ(tensor_bytes - fu.layers[0].dram_bytes, 4.0 * 8388608.0);
  // The kernel model's own unfused counts (evaluate_gemm shares operand panels
  // between the tiles of a wave, also across batches), printed for the report.
  std::printf("unfused kernel DRAM bytes: qk %.0f, softmax %.0f, av %.0f; fused %.0f\n", un.layers[0].dram_bytes,
              un.layers[1].dram_bytes, un.layers[2].dram_bytes, fu.layers[0].dram_bytes);
  EXPECT_LT(fu.totals.dram_bytes, un.totals.dram_bytes);
  // two launches fewer and no score round trip: faster
  EXPECT_LT(fu.totals.latency_s, un.totals.latency_s);
  EXPECT_EQ(fu.unsupported_fusion_groups, 1);  // the test stack does not list flash_attention
}

// Decode attention (one query row per head) with GQA: the 8 query heads that
// share a KV head are packed into M (8 rows -> one 16-row MMA), so the fused
// kernel is bound by reading K and V. 8 sequences x 8 query heads, 1 KV head,
// context 4096, head dim 128, fp16: K = V = 8*4096*128*2 = 8,388,608 B, Q = O =
// 64*128*2 = 16,384 B -> 16,809,984 B at 2.039e12 * 0.8 = 1.6312e12 B/s = 10.305 us,
// + 2 us graph launch = 12.305 us. Packed matrix time: 2 products x 2 x 8 groups x
// 16 rows x 4096 x 128 FLOPs / 312e12 = 0.43 us (far below the memory time).
TEST(Platform, DecodeAttentionPacksGqaGroupAndIsMemoryBound) {
  const auto F = wl::Precision::fp16;
  const std::int64_t kv_el = 8 * 4096 * 128;
  wl::Operator qk = wl::make_batched_gemm("qk", wl::LayerType::attention, 64, 1, 4096, 128, F);
  qk.tensors[1] = wl::Tensor{"k", wl::TensorRole::kv_cache_read, kv_el, F, -1};
  wl::Operator av = wl::make_batched_gemm("av", wl::LayerType::attention, 64, 1, 128, 4096, F);
  av.tensors[1] = wl::Tensor{"v", wl::TensorRole::kv_cache_read, kv_el, F, -1};
  const auto g = one_block({wl::Node{std::move(qk), {}},
                            wl::Node{wl::make_softmax("sm", wl::LayerType::attention, 64, 4096, F), {"qk"}},
                            wl::Node{std::move(av), {"sm"}}});
  pf::EvalOptions o;
  o.fusion = pf::FusionStrategy::aggressive;
  o.launch = pf::LaunchMode::graph;
  const pf::GraphEval e = pf::evaluate_graph(a100(), g, o);
  ASSERT_EQ(e.layers.size(), 1u);
  EXPECT_EQ(e.layers[0].bottleneck, dse::costmodel::Bottleneck::memory);
  EXPECT_NEAR(e.layers[0].latency_s, 12.305e-6, 0.02 * 12.305e-6);
}

// A dropout kernel moves its bf16 input and output and a 1-byte mask: 5 B per
// element (8 x 512 x 512 = 2,097,152 elements -> 10,485,760 B). Under aggressive
// fusion a dropout between softmax and AV runs inside the flash-attention kernel:
// one layer, its traffic still Q + K + V + O only (4 x 16 x 512 x 64 x 2 B =
// 4,194,304 B, as in FusedAttentionRemovesScoreTraffic), its FLOPs added.
TEST(Platform, DropoutMaskBytesAndFlashAttentionAbsorbsIt) {
  const pf::Platform p = a100();
  const auto P = wl::Precision::bf16;
  pf::EvalOptions o;
  o.phase.precision = P;
  o.fusion = pf::FusionStrategy::none;
  const auto one = one_block({wl::Node{wl::make_dropout("d", wl::LayerType::attention, 8 * 512, 512, P), {}}});
  const pf::GraphEval e = pf::evaluate_graph(p, one, o);
  ASSERT_EQ(e.layers.size(), 1u);
  EXPECT_DOUBLE_EQ(e.layers[0].dram_bytes, 10485760.0);

  const auto g =
      one_block({wl::Node{wl::make_batched_gemm("qk", wl::LayerType::attention, 16, 512, 512, 64, P), {}},
                 wl::Node{wl::make_softmax("sm", wl::LayerType::attention, 16 * 512, 512, P), {"qk"}},
                 wl::Node{wl::make_dropout("dr", wl::LayerType::attention, 16 * 512, 512, P), {"sm"}},
                 wl::Node{wl::make_batched_gemm("av", wl::LayerType::attention, 16, 512, 64, 512, P), {"dr"}}});
  o.fusion = pf::FusionStrategy::aggressive;
  const pf::GraphEval fu = pf::evaluate_graph(p, g, o);
  ASSERT_EQ(fu.layers.size(), 1u);
  EXPECT_EQ(fu.layers[0].mapping.fusion_group, "flash_attention(qk+sm+dr+av)");
  EXPECT_DOUBLE_EQ(fu.layers[0].dram_bytes, 4194304.0);
  double flops = 0.0;
  for (const auto& n : g.blocks[0].nodes) flops += wl::flops(n.op);
  EXPECT_DOUBLE_EQ(fu.layers[0].flops, flops);
}

// Training with FlashAttention: the backward of qk -> sm [-> dr] -> av (16 heads, 512 x 512
// scores, head dim 64, bf16) is one FlashAttention-2 backward kernel (Dao 2023, Algorithm 2),
// not score-sized GEMMs. By hand: HBM traffic Q, K, V, O, dO in and dQ, dK, dV out, 8 tensors
// of 16 x 512 x 64 x 2 B = 8,388,608 B; matrix FLOPs five products of 2 x 16 x 512 x 512 x 64
// (dP, dV, dQ, dK and the recomputed S) = 2,684,354,560, plus the softmax backward's FLOPs
// twice (its own and P's recompute), as the operators count them. Its time, on the test chip
// (1,024 MACs per cycle per core, 108 cores, 1.41 GHz, full rate; tiles 256x128x32,
// 128x256x32, 128x128x32, 64x64x64), each product on its least-waste tile: S and dP (512 x
// 512 x 64, 16 heads) best on 64x64x64, 1,024 tiles = 10 waves of 1 k-step of 256 cycles =
// 2,560 cycles; dV, dQ, dK (512 x 64 x 512) on 64x64x64, 128 tiles = 2 waves of 8 k-steps =
// 4,096 cycles each; 17,408 cycles = 12.346 us, at kFlashBackwardMatrixShare 0.715 of the
// rate; the softmax work 16 x 512 x 512 scores x (3 FLOPs at 19.49 TFLOP/s + one exp at
// 2.436 T/s) = 2.367 us; the dropout's backward at its own compute time; against the traffic
// at HBM bandwidth, plus one kernel overhead. A dropout's backward joins it. Around
// it, the preprocess and dQ-copy kernels (llm-foundry's Triton kernel, FlashAttention-2):
// O and dO read (2 x 1,048,576 B), dQ's fp32 accumulator written and read back (2 x 4 x
// 524,288 B), dQ written (1,048,576 B): 7,340,032 B more, at HBM bandwidth after it.
TEST(Platform, FlashAttentionBackwardIsOneKernelWithoutScoreTraffic) {
  const pf::Platform p = a100();
  const auto P = wl::Precision::bf16;
  for (const bool with_dropout : {false, true}) {
    std::vector<wl::Node> nodes{
        wl::Node{wl::make_batched_gemm("qk", wl::LayerType::attention, 16, 512, 512, 64, P), {}},
        wl::Node{wl::make_softmax("sm", wl::LayerType::attention, 16 * 512, 512, P), {"qk"}}};
    if (with_dropout)
      nodes.push_back(wl::Node{wl::make_dropout("dr", wl::LayerType::attention, 16 * 512, 512, P), {"sm"}});
    nodes.push_back(wl::Node{wl::make_batched_gemm("av", wl::LayerType::attention, 16, 512, 64, 512, P),
                             {with_dropout ? "dr" : "sm"}});
    auto g = one_block(std::move(nodes));
    wl::append_backward(g, wl::PhaseSpec{});
    ASSERT_EQ(g.blocks.size(), 2u);
    pf::EvalOptions o;
    o.phase.precision = P;
    o.fusion = pf::FusionStrategy::none;
    const pf::GraphEval none = pf::evaluate_graph(p, g, o);
    o.fusion_kinds = std::vector<pf::FusionKind>{pf::FusionKind::flash_attention};
    const pf::GraphEval fa = pf::evaluate_graph(p, g, o);
    ASSERT_EQ(fa.layers.size(), 2u);  // the forward kernel and the backward kernel
    const pf::LayerResult& bw = fa.layers[1];
    EXPECT_EQ(bw.type, "fused_attention");
    EXPECT_EQ(bw.mapping.kernel, "flash_attention_bwd");
    EXPECT_EQ(bw.mapping.fusion_group, with_dropout
                                           ? "flash_attention_bwd(av.bwd_a+av.bwd_b+dr.bwd+sm.bwd+qk.bwd_a+qk.bwd_b)"
                                           : "flash_attention_bwd(av.bwd_a+av.bwd_b+sm.bwd+qk.bwd_a+qk.bwd_b)");
    EXPECT_DOUBLE_EQ(bw.dram_bytes, 8388608.0 + 7340032.0);
    double sm_flops = 0.0, drop_flops = 0.0;
    for (const auto& n : g.blocks[1].nodes) {
      if (n.op.name == "sm.bwd") sm_flops = wl::flops(n.op);
      if (n.op.name == "dr.bwd") drop_flops = wl::flops(n.op);
    }
    EXPECT_DOUBLE_EQ(bw.flops, 2684354560.0 + 2.0 * sm_flops + drop_flops);
    // The unfused backward layers, in the chain's order after the forward's 3 or 4.
    const std::size_t f = with_dropout ? 4 : 3;
    ASSERT_EQ(none.layers.size(), f + f + 2);  // the forward ops, then their backward ops (each GEMM two)
    auto compute = [&](std::size_t k) { return none.layers[k].latency_s * (1.0 - none.layers[k].stall_fraction); };
    const std::size_t dp = f, dv = f + 1, dr = f + 2, sm = with_dropout ? f + 3 : f + 2, dq = sm + 1, dk = sm + 2;
    EXPECT_EQ(none.layers[dp].name, "av.bwd_a");
    EXPECT_EQ(none.layers[dv].name, "av.bwd_b");
    EXPECT_EQ(none.layers[sm].name, "sm.bwd");
    EXPECT_EQ(none.layers[dq].name, "qk.bwd_a");
    EXPECT_EQ(none.layers[dk].name, "qk.bwd_b");
    EXPECT_GT(compute(dv), 4096.0 / 1.41e9);  // unfused, dV pads its 64 columns to a wider tile
    const double scores = 16.0 * 512 * 512;
    const double c = 17408.0 / 1.41e9 / 0.715 + scores * (3.0 / (128.0 * 108 * 1.41e9) + 1.0 / (16.0 * 108 * 1.41e9)) +
                     (with_dropout ? compute(dr) : 0.0);
    const double want = std::max(c, 8388608.0 / p.gpu.hbm_bandwidth_bytes_per_s()) +
                        7340032.0 / p.gpu.hbm_bandwidth_bytes_per_s() + p.graph_kernel_overhead_s;
    EXPECT_NEAR(bw.latency_s, want, 1e-9 * want);
    double unfused = 0.0;
    for (std::size_t k = f; k < none.layers.size(); ++k) unfused += none.layers[k].latency_s;
    EXPECT_LT(bw.latency_s, unfused);
  }
}

// The stack's attention kernel (EvalOptions::attention_kernel). flash1 (FlashAttention v1 and
// the 2022-23 Triton FlashAttention) takes twice FlashAttention-2's compute time (Dao 2023,
// abstract: "around 2x speedup compared to FlashAttention"); flash2 and flash1, written for
// Ampere's mma.sync, run their matrix work at the chip's warp_mma_fraction (a share of the
// rate on Hopper); native runs it at the full rate. By hand on the test chip (16 heads,
// 2048 x 2048 scores, head dim 64, bf16, no mask), each product on its least-waste tile: qk
// and dP (2048 x 2048 x 64) 38,912 cycles on any of the four tiles (e.g. 256x128x32: 2,048
// tiles = 19 waves of 2 k-steps of 1,024 cycles); av, dV, dQ, dK (2048 x 64 x 2048) 40,960
// cycles on 64x64x64 (512 tiles = 5 waves of 32 k-steps of 256 cycles); the softmax work per
// score at 19.49 TFLOP/s and 2.436 T/s exps: forward, on a kernel whose grid is known (flash2,
// flash1: 128-key blocks at head dim 64), 3 FLOPs and one exp, and once per row and key block
// O's rescale, 64 + 2 FLOPs and one exp, so 3 + 66/128 FLOPs and 1 + 1/128 exps a score; on a
// native kernel 4 FLOPs and one exp; backward 3 FLOPs and one exp. Forward =
// factor x ((qk + av) / share + softmax work), backward = factor x ((2 dP + dV + dQ + dK) /
// (share x 0.715) + softmax work), each against its traffic (forward Q,
// K, V, O: 4 x 16 x 2048 x 64 x 2 B = 16,777,216 B; backward 8 tensors = 33,554,432 B) at HBM
// bandwidth, plus one kernel overhead; the backward's preprocess and dQ copy add O and dO read,
// dQ's fp32 accumulator written and read, dQ written: 2 x 4,194,304 + 8 x 2,097,152 + 4,194,304 =
// 29,360,128 B at HBM bandwidth, whatever the generation. flash2 and flash1, whose grids are
// known, add their thread blocks' start-up once (pf::flash_block_startup_s, not scaled by the
// generation's factor): forward, 16 query blocks of 128 rows per head, 256 blocks on 216
// places (108 cores x 2 resident), 1.185 waves, each of two 500 ns round trips and its blocks'
// Q tiles and the first 128-key K block of each of its 216 / 16 = 13.5 heads, (216 + 13.5) x
// 128 x 64 x 2 B = 3,760,128 B at 1.6312 TB/s; backward, 16 key blocks of 128 per head on 108
// places (one per core), 2.370 waves, each its blocks' K and V blocks and the first Q and dO
// blocks (128 rows at head dim 64) of 108 / 16 = 6.75 heads: (2 x 108 + 2 x 6.75) x 128 x 64
// x 2 B = 3,760,128 B again.
TEST(Platform, AttentionKernelGenerationsScaleTheFusedCompute) {
  pf::Platform p = a100();
  const auto P = wl::Precision::bf16;
  auto g = one_block(attention_chain(P, 16, 2048, 64));
  wl::append_backward(g, wl::PhaseSpec{});
  pf::EvalOptions o;
  o.phase.precision = P;
  o.fusion = pf::FusionStrategy::none;
  const pf::GraphEval none = pf::evaluate_graph(p, g, o);
  ASSERT_EQ(none.layers.size(), 8u);  // qk, sm, av, then av.bwd_a, av.bwd_b, sm.bwd, qk.bwd_a, qk.bwd_b
  const double clock = 1.41e9, scores = 16.0 * 2048 * 2048;
  const double fp32 = 128.0 * 108 * clock, sfu = 16.0 * 108 * clock;
  const double fwd_matrix = (38912.0 + 40960.0) / clock;
  const double native_vector = scores * (4.0 / fp32 + 1.0 / sfu);
  const double grid_vector = scores * ((3.0 + 66.0 / 128.0) / fp32 + (1.0 + 1.0 / 128.0) / sfu);
  const double bwd_matrix = (2.0 * 38912.0 + 3.0 * 40960.0) / clock / 0.715,
               bwd_vector = scores * (3.0 / fp32 + 1.0 / sfu);
  const double bw = p.gpu.hbm_bandwidth_bytes_per_s();
  const double fwd_start = 256.0 / 216.0 * (2.0 * 5e-7 + 3760128.0 / bw);
  const double bwd_start = 256.0 / 108.0 * (2.0 * 5e-7 + 3760128.0 / bw);
  o.fusion_kinds = std::vector<pf::FusionKind>{pf::FusionKind::flash_attention};
  struct Case {
    pf::AttentionKernel kernel;
    double warp_mma_fraction, factor, share;
    const char* fwd_kernel;
  };
  for (const Case& c : {Case{pf::AttentionKernel::native, 1.0, 1.0, 1.0, "flash_attention"},
                        Case{pf::AttentionKernel::flash1, 1.0, 2.0, 1.0, "flash_attention_1"},
                        Case{pf::AttentionKernel::native, 2.0 / 3.0, 1.0, 1.0, "flash_attention"},
                        Case{pf::AttentionKernel::flash2, 2.0 / 3.0, 1.0, 2.0 / 3.0, "flash_attention"},
                        Case{pf::AttentionKernel::flash1, 2.0 / 3.0, 2.0, 2.0 / 3.0, "flash_attention_1"}}) {
    SCOPED_TRACE(std::string(pf::to_string(c.kernel)) + " at warp_mma_fraction " + std::to_string(c.warp_mma_fraction));
    p.gpu.warp_mma_fraction = c.warp_mma_fraction;
    o.attention_kernel = c.kernel;
    const pf::GraphEval fa = pf::evaluate_graph(p, g, o);
    ASSERT_EQ(fa.layers.size(), 2u);
    EXPECT_EQ(fa.layers[0].mapping.kernel, c.fwd_kernel);
    const double fwd_vector = c.kernel == pf::AttentionKernel::native ? native_vector : grid_vector;
    const bool known_grid = c.kernel != pf::AttentionKernel::native;
    const double fwd = c.factor * (fwd_matrix / c.share + fwd_vector) + (known_grid ? fwd_start : 0.0);
    const double bwd = c.factor * (bwd_matrix / c.share + bwd_vector) + (known_grid ? bwd_start : 0.0);
    ASSERT_GT(fwd, 16777216.0 / bw);  // compute-bound: the generation shows in the latency
    ASSERT_GT(bwd, 33554432.0 / bw);
    EXPECT_NEAR(fa.layers[0].latency_s, fwd + p.graph_kernel_overhead_s, 1e-9 * fwd);
    EXPECT_NEAR(fa.layers[1].latency_s, bwd + 29360128.0 / bw + p.graph_kernel_overhead_s, 1e-9 * bwd);
    // The mapping sheet names a known grid: 16 query blocks of 128 rows per head x 16 heads on 216
    // places (1.185 waves); backward 16 blocks of 128 keys per head on 108 (2.370).
    if (known_grid) {
      EXPECT_EQ(fa.layers[0].mapping.tile, "128x128 blocks of 4 warps, 256 blocks, 2 per core, 1.19 waves");
      EXPECT_EQ(fa.layers[1].mapping.tile,
                "128-key (128-query steps) blocks of 8 warps, 256 blocks, 1 per core, 2.37 waves");
    }
  }
  // The names, as scenario files and the CLI spell them.
  for (const auto k : {pf::AttentionKernel::native, pf::AttentionKernel::flash2, pf::AttentionKernel::flash1})
    EXPECT_EQ(pf::attention_kernel_from_string(pf::to_string(k)), k);
  EXPECT_FALSE(pf::attention_kernel_from_string("flash3").has_value());
}

// FlashAttention-2's forward waits on shared memory where its products need more operand bytes a
// clock than the core's 32 banks of 4 bytes move (pf::flash_forward_smem_factor). By hand, per key
// block of a thread block of block_m queries, block_n keys and w warps at head dim d (2-byte
// elements): K and V written (2 block_n d elements), each warp reading its block_m / w rows of Q
// and all of K and V (block_m d + 2 w block_n d), for 4 block_m block_n d FLOPs:
// - 128 x 64 x 8 warps (head dim 256 where a core holds less than 192 KiB of shared memory, the
//   test chip's 163 KiB): 4 x 128 x 64 / (2 x (128 + 2 x 64 x 9)) = 12.8 FLOPs a byte, 1,638.4
//   FLOPs a clock from 128 bytes, against the matrix engine's 2 x 1024 x 1.0: factor 1.25;
// - 64 x 64 x 4 warps (head dim 256 with 228 KiB, as on the H100): 4 x 64 x 64 / (2 x (64 + 2 x
//   64 x 5)) = 11.636, 1,489.45 a clock; at 1024 MACs a clock, sustained 0.85 and warp-MMA share
//   0.594 the products need 1,034 a clock: factor 1; at 2048 MACs (the H100's) 2,068.1: 1.3885;
// - head dim 128 (128 x 64 x 4): 21.33 a byte, 2,730.7 a clock: factor 1; head dim 64 (128 x 128
//   x 4): 23.27, 2,978.9: 1.
// flash1 and native kernels, and a chip without the figure, take 1.
TEST(Platform, FlashForwardWaitsOnSharedMemoryAtHeadDim256) {
  cm::GpuHardware hw = a100().gpu;
  const auto P = cm::Precision::bf16;
  const auto fa2 = pf::AttentionKernel::flash2;
  EXPECT_DOUBLE_EQ(pf::flash_forward_smem_factor(hw, fa2, 256, P), 1.0);  // not described
  hw.sram_bytes_per_cycle_per_core = 128.0;
  EXPECT_NEAR(pf::flash_forward_smem_factor(hw, fa2, 256, P), 1.25, 1e-12);
  EXPECT_DOUBLE_EQ(pf::flash_forward_smem_factor(hw, fa2, 128, P), 1.0);
  EXPECT_DOUBLE_EQ(pf::flash_forward_smem_factor(hw, fa2, 64, P), 1.0);
  EXPECT_DOUBLE_EQ(pf::flash_forward_smem_factor(hw, pf::AttentionKernel::flash1, 256, P), 1.0);
  EXPECT_DOUBLE_EQ(pf::flash_forward_smem_factor(hw, pf::AttentionKernel::native, 256, P), 1.0);
  hw.sram_bytes_per_core = 233472;
  hw.matrix_sustained_fraction = 0.85;
  hw.warp_mma_fraction = 0.594;
  EXPECT_DOUBLE_EQ(pf::flash_forward_smem_factor(hw, fa2, 256, P), 1.0);
  hw.matrix_macs_per_cycle_per_core[static_cast<std::size_t>(P)] = 2048;
  EXPECT_NEAR(pf::flash_forward_smem_factor(hw, fa2, 256, P), 2.0 * 2048 * 0.85 * 0.594 / (16384.0 / 1408.0 * 128.0),
              1e-12);
  EXPECT_NEAR(pf::flash_forward_smem_factor(hw, fa2, 256, P), 1.3885, 1e-4);
  EXPECT_DOUBLE_EQ(pf::flash_forward_smem_factor(hw, fa2, 128, P), 1.0);
  EXPECT_DOUBLE_EQ(pf::flash_forward_smem_factor(hw, fa2, 64, P), 1.0);
  // In a graph (the test chip's 163 KiB, so the 128 x 64 grid of 8 warps, one a core: 8 x 32 x 256 registers,
  // (128 + 2 x 64) x 256 x 2 B of shared memory): the forward's products take 1.25 x their time, and the
  // mapping sheet says so; 16 heads of 2,048 tokens are 256 blocks on 108 places, 2.37 waves.
  pf::Platform p = a100();
  const auto g = one_block(attention_chain(wl::Precision::bf16, 16, 2048, 256));
  pf::EvalOptions o;
  o.phase.precision = wl::Precision::bf16;
  o.fusion_kinds = std::vector<pf::FusionKind>{pf::FusionKind::flash_attention};
  o.attention_kernel = fa2;
  const pf::GraphEval without = pf::evaluate_graph(p, g, o);
  p.gpu.sram_bytes_per_cycle_per_core = 128.0;
  const pf::GraphEval with = pf::evaluate_graph(p, g, o);
  ASSERT_EQ(with.layers.size(), 1u);
  EXPECT_EQ(without.layers[0].mapping.tile, "128x64 blocks of 8 warps, 256 blocks, 1 per core, 2.37 waves");
  EXPECT_EQ(with.layers[0].mapping.tile,
            "128x64 blocks of 8 warps, 256 blocks, 1 per core, 2.37 waves, shared memory x1.25");
  EXPECT_GT(with.layers[0].latency_s, without.layers[0].latency_s);
  EXPECT_LT(with.layers[0].latency_s, 1.25 * without.layers[0].latency_s);
}

// FlashAttention-2's backward grid (flash_bwd_launch_template.h, by the shared memory a block may take, 144 KiB
// the threshold at head dims 64, 128 and 256) and the share of the forward's matrix rate its products run at,
// 1 / (1 + (1 / 0.715 - 1) x 128 / block_n), by hand: 128-key blocks (head dims 64, 96, 128 on the test chip's
// 163 KiB) 0.715; 64-key blocks (160, 192, 256; 128 below 144 KiB) 1 / (1 + 0.398601 x 2) = 0.556420; 32-key
// blocks (256 below 144 KiB) 1 / (1 + 0.398601 x 4) = 0.385445. flash1 (Triton, 128-key blocks) and native keep
// 0.715. In a graph at head dim 256 the mapping sheet gives the grid: 2,048 / 64 = 32 blocks per head x 16 heads
// = 512 blocks on 108 cores, 4.74 waves. Its latency, by the three kernels at a warp_mma_fraction of 1 (the same
// matrix rate): native = a + V + X, flash1 = 2 (a + V) + S1 + X (twice flash2's compute, 128-key blocks),
// flash2 = a x 0.715 / 0.556420 + V + S2 + X, where a is the products' time at 0.715, V the softmax work by hand
// (3 FP32 FLOPs and one exp per score: 16 x 2,048^2 scores at 128 x 108 FP32 lanes and 16 x 108 exps a clock of
// 1.41 GHz), S1 and S2 the grids' start-up (pf::flash_block_startup_s) and X what no kernel scales (side traffic,
// launch).
TEST(Platform, FlashBackwardShareFollowsItsKeyBlocks) {
  cm::GpuHardware hw = a100().gpu;
  const auto fa2 = pf::AttentionKernel::flash2;
  for (const std::int64_t d : {32, 64, 96, 128}) EXPECT_DOUBLE_EQ(pf::flash_backward_matrix_share(hw, fa2, d), 0.715);
  for (const std::int64_t d : {160, 192, 256}) EXPECT_NEAR(pf::flash_backward_matrix_share(hw, fa2, d), 0.556420, 1e-6);
  EXPECT_DOUBLE_EQ(pf::flash_backward_matrix_share(hw, pf::AttentionKernel::flash1, 256), 0.715);
  EXPECT_DOUBLE_EQ(pf::flash_backward_matrix_share(hw, pf::AttentionKernel::native, 256), 0.715);
  hw.sram_bytes_per_core = 100 * 1024;
  EXPECT_DOUBLE_EQ(pf::flash_backward_matrix_share(hw, fa2, 64), 0.715);
  EXPECT_NEAR(pf::flash_backward_matrix_share(hw, fa2, 128), 0.556420, 1e-6);
  EXPECT_NEAR(pf::flash_backward_matrix_share(hw, fa2, 256), 0.385445, 1e-6);

  pf::Platform p = a100();
  p.gpu.warp_mma_fraction = 1.0;
  auto g = one_block(attention_chain(wl::Precision::bf16, 16, 2048, 256));
  wl::append_backward(g, wl::PhaseSpec{});
  pf::EvalOptions o;
  o.phase.precision = wl::Precision::bf16;
  o.fusion_kinds = std::vector<pf::FusionKind>{pf::FusionKind::flash_attention};
  const auto backward = [&](pf::AttentionKernel k) {
    o.attention_kernel = k;
    const pf::GraphEval e = pf::evaluate_graph(p, g, o);
    EXPECT_EQ(e.layers.size(), 2u);
    return e.layers.at(1);
  };
  const auto native = backward(pf::AttentionKernel::native), flash1 = backward(pf::AttentionKernel::flash1),
             flash2 = backward(fa2);
  EXPECT_EQ(flash2.mapping.tile, "64-key (64-query steps) blocks of 8 warps, 512 blocks, 1 per core, 4.74 waves");
  EXPECT_EQ(flash1.mapping.tile, "128-key (128-query steps) blocks of 8 warps, 256 blocks, 1 per core, 2.37 waves");
  const double clock = 1.41e9, scores = 16.0 * 2048 * 2048;
  const double V = scores * (3.0 / (128.0 * 108 * clock) + 1.0 / (16.0 * 108 * clock));
  const double s1 = pf::flash_block_startup_s(p.gpu, pf::AttentionKernel::flash1, true, 2048, 2048, 16, 256, 2.0);
  const double s2 = pf::flash_block_startup_s(p.gpu, fa2, true, 2048, 2048, 16, 256, 2.0);
  const double a = flash1.latency_s - s1 - native.latency_s - V;
  const double x = native.latency_s - a - V;
  ASSERT_GT(a, 8.0 * 16 * 2048 * 256 * 2 / p.gpu.hbm_bandwidth_bytes_per_s());  // compute-bound
  EXPECT_NEAR(flash2.latency_s, a * 0.715 / 0.556420 + V + s2 + x, 1e-5 * flash2.latency_s);
  EXPECT_GT(s2, s1);  // twice the blocks: twice the waves of round trips
}

// A causal forward on a kernel with a known grid (flash2) takes the makespan of its thread
// blocks, not the kept share of the unmasked time. Head dim 64, 2,048 tokens: FlashAttention-2's
// 128 x 128 grid, 16 query blocks per head keeping 1, 2, .., 16 key blocks (136 of 256 tiles:
// the executed FLOPs are 136/256 of the unmasked ones). The test chip holds 2 such blocks per
// core (4 warps at 256 registers a thread in 65,536; 48 KiB of shared memory each in 163 KiB),
// 216 places. With 8 heads (128 blocks) every block starts at once and the longest, 16 key
// blocks, sets the time, as unmasked: ratio 1. With 27 heads (432 blocks) greedy list
// scheduling in launch order ends at 28 key-block times against the unmasked 32 (two full
// waves of 16): ratio 0.875. Both makespans from an independent brute force (a Python
// heap of 216 places' finish times, each block taken by the first place to free up). The
// blocks' start-up (pf::flash_block_startup_s), the same masked or not, comes on top of the
// makespan: its waves' two 500 ns round trips (at least one wave) and per wave the Q tiles of 216
// blocks and the first K block of 216 / 16 = 13.5 heads, 3,760,128 B at 1.6312 TB/s; 8 heads
// are 128 / 216 of a wave, 27 heads 2 waves.
TEST(Platform, CausalFlashForwardTakesItsBlocksMakespan) {
  const pf::Platform p = a100();
  const auto P = wl::Precision::bf16;
  pf::EvalOptions o;
  o.phase.precision = P;
  o.fusion_kinds = std::vector<pf::FusionKind>{pf::FusionKind::flash_attention};
  o.attention_kernel = pf::AttentionKernel::flash2;
  o.launch = pf::LaunchMode::graph;
  const auto forward = [&](std::int64_t heads, bool causal) {
    std::vector<wl::Node> nodes = attention_chain(P, heads, 2048, 64);
    nodes[0].op.causal = causal;
    const pf::GraphEval g = pf::evaluate_graph(p, one_block(std::move(nodes)), o);
    EXPECT_EQ(g.layers.size(), 1u);
    return g.layers.at(0);
  };
  const double bw = p.gpu.hbm_bandwidth_bytes_per_s();
  for (const auto& [heads, ratio] : {std::pair<std::int64_t, double>{8, 1.0}, {27, 0.875}}) {
    SCOPED_TRACE(std::to_string(heads) + " heads");
    const pf::LayerResult full = forward(heads, false), masked = forward(heads, true);
    const double traffic = 4.0 * static_cast<double>(heads) * 2048 * 64 * 2;  // Q, K, V, O
    const double waves = static_cast<double>(heads) * 16.0 / 216.0;
    const double start = std::max(1.0, waves) * 2.0 * 5e-7 + waves * 3760128.0 / bw;
    const double full_compute = full.latency_s - p.graph_kernel_overhead_s - start;
    ASSERT_GT(ratio * full_compute, traffic / bw);  // compute-bound, masked or not
    EXPECT_NEAR(masked.latency_s - p.graph_kernel_overhead_s - start, ratio * full_compute, 1e-9 * full_compute);
    EXPECT_NEAR(masked.flops, 136.0 / 256.0 * full.flops, 1e-9 * full.flops);
  }
}

// A causally masked fused attention runs only the (query block, key block) tiles that
// hold an unmasked score (FlashAttention-2, Dao 2023, 3.1.1). With one 128 x 128 tile
// and s = 1024: 8 x 8 tiles, row block i needs key blocks 0..i, 1 + 2 + ... + 8 = 36 of
// 64 = 0.5625 (by hand). 64 heads of 128, fp16: compute-bound on the test chip (34 GFLOP
// at 312 TFLOP/s = 110 us against 67 MB of Q, K, V, O at about 2 TB/s = 34 us), so the
// busy time and the executed FLOPs scale by exactly that share.
TEST(Platform, CausalFusedAttentionSkipsTilesAboveTheDiagonal) {
  pf::Platform p = a100();
  p.gpu.gemm_tiles = {cm::GemmTile{128, 128, 32}};
  const auto P = wl::Precision::fp16;
  auto graph = [&](bool causal) {
    wl::Operator qk = wl::make_batched_gemm("qk", wl::LayerType::attention, 64, 1024, 1024, 128, P);
    wl::Operator av = wl::make_batched_gemm("av", wl::LayerType::attention, 64, 1024, 128, 1024, P);
    qk.causal = av.causal = causal;
    return one_block({wl::Node{qk, {}},
                      wl::Node{wl::make_softmax("sm", wl::LayerType::attention, 64 * 1024, 1024, P), {"qk"}},
                      wl::Node{av, {"sm"}}});
  };
  pf::EvalOptions o;
  o.phase.precision = P;
  o.fusion = pf::FusionStrategy::aggressive;
  const pf::GraphEval full = pf::evaluate_graph(p, graph(false), o);
  const pf::GraphEval masked = pf::evaluate_graph(p, graph(true), o);
  ASSERT_EQ(full.layers.size(), 1u);
  ASSERT_EQ(masked.layers.size(), 1u);
  const auto& f = full.layers[0];
  const auto& m = masked.layers[0];
  ASSERT_EQ(f.bottleneck, cm::Bottleneck::compute);
  ASSERT_EQ(m.bottleneck, cm::Bottleneck::compute);
  const double launch = p.graph_kernel_overhead_s;  // o.launch is graph: one launch each
  EXPECT_NEAR((m.latency_s - launch) / (f.latency_s - launch), 0.5625, 1e-12);
  EXPECT_NEAR(m.flops / f.flops, 0.5625, 1e-12);
  EXPECT_DOUBLE_EQ(m.dram_bytes, f.dram_bytes);  // Q, K, V and O still move once
}
