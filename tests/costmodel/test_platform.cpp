// Whole-graph platform evaluation (costmodel/platform): hand-checked identities.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "costmodel/platform/evaluate.hpp"
#include "costmodel/platform/system.hpp"
#include "costmodel/workload/presets.hpp"
#include "tests/costmodel/a100_test_chip.hpp"

namespace pf = dse::costmodel::platform;
namespace wl = dse::costmodel::workload;
namespace cm = dse::costmodel;

namespace {

using dse::test::a100_test_chip;
using dse::test::one_block;
pf::Platform a100() { return a100_test_chip(); }

}  // namespace

// A graph of one GEMM is exactly evaluate_gemm of its shape (framework launch keeps
// the library overhead; 4096^3 has far more tiles than cores, so split-K is not chosen).
TEST(Platform, SingleGemmEqualsEvaluateGemm) {
  const pf::Platform p = a100();
  const auto g = one_block({wl::Node{wl::make_linear("mm", wl::LayerType::ffn, 4096, 4096, 4096, wl::Precision::fp16), {}}});
  pf::EvalOptions o;
  o.fusion = pf::FusionStrategy::none;
  o.launch = pf::LaunchMode::framework;
  o.phase.precision = wl::Precision::fp16;
  const pf::GraphEval e = pf::evaluate_graph(p, g, o);
  const cm::GpuKernelCost ref = cm::evaluate_gemm(p.gpu, cm::GemmShape{4096, 4096, 4096, 1, cm::Precision::fp16});
  ASSERT_EQ(e.layers.size(), 1u);
  EXPECT_DOUBLE_EQ(e.layers[0].latency_s, ref.latency_s);
  EXPECT_DOUBLE_EQ(e.layers[0].dram_bytes, ref.hbm_bytes);
  EXPECT_DOUBLE_EQ(e.layers[0].flops, 2.0 * 4096.0 * 4096.0 * 4096.0);  // 2MNK by hand
  EXPECT_DOUBLE_EQ(e.totals.latency_s, ref.latency_s);
  // MFU = flops / (latency x 312 TFLOP/s), 312e12 = 108 x 1024 x 2 x 1.41e9.
  EXPECT_NEAR(e.totals.mfu, 2.0 * std::pow(4096.0, 3) / (ref.latency_s * 108 * 1024 * 2 * 1.41e9), 1e-12);
  // The layer's share of peak is that same fraction under either launch mode (it was
  // evaluate_gemm's percent figure, 100x, under framework launch).
  EXPECT_NEAR(e.layers[0].pct_of_peak, e.totals.mfu, 1e-12);
  EXPECT_NEAR(e.layers[0].pct_of_peak, ref.pct_of_peak / 100.0, 1e-12);
  o.launch = pf::LaunchMode::graph;
  const pf::GraphEval eg = pf::evaluate_graph(p, g, o);
  EXPECT_NEAR(eg.layers[0].pct_of_peak, eg.layers[0].flops / (eg.layers[0].latency_s * 108 * 1024 * 2 * 1.41e9), 1e-12);
}

// Totals are the per-layer figures times the block repeats, summed.
TEST(Platform, TotalsAdditiveWithRepeats) {
  const pf::Platform p = a100();
  wl::OperatorGraph g = one_block({wl::Node{wl::make_linear("a", wl::LayerType::ffn, 512, 1024, 1024, wl::Precision::bf16), {}},
                                   wl::Node{wl::make_softmax("s", wl::LayerType::attention, 512, 1024, wl::Precision::bf16), {"a"}}},
                                  7);
  wl::Block head;
  head.name = "head";
  head.nodes = {wl::Node{wl::make_norm("n", wl::OpKind::layernorm, 512, 1024, wl::Precision::bf16), {}}};
  g.blocks.push_back(head);
  pf::EvalOptions o;
  o.fusion = pf::FusionStrategy::none;
  const pf::GraphEval e = pf::evaluate_graph(p, g, o);
  ASSERT_EQ(e.layers.size(), 3u);
  double lat = 0, fl = 0, by = 0;
  for (const auto& l : e.layers) {
    lat += l.latency_s * static_cast<double>(l.repeat);
    fl += l.flops * static_cast<double>(l.repeat);
    by += l.dram_bytes * static_cast<double>(l.repeat);
  }
  EXPECT_EQ(e.layers[0].repeat, 7);
  EXPECT_EQ(e.layers[2].repeat, 1);
  EXPECT_DOUBLE_EQ(e.totals.latency_s, lat);
  EXPECT_DOUBLE_EQ(e.totals.flops, fl);
  EXPECT_DOUBLE_EQ(e.totals.dram_bytes, by);
  // flops by hand: 7 x (2*512*1024*1024 + 5*512*1024) + 7*512*1024 (layernorm)
  EXPECT_DOUBLE_EQ(e.totals.flops, 7.0 * (2.0 * 512 * 1024 * 1024 + 5.0 * 512 * 1024) + 7.0 * 512 * 1024);
  // block latency of the repeated block = its two layers
  EXPECT_DOUBLE_EQ(e.block_latency_s[0], e.layers[0].latency_s + e.layers[1].latency_s);
}

namespace {
// An attention chain qk -> softmax -> av: b heads, S tokens, head dim d (default 16, 512, 64).
std::vector<wl::Node> attention_chain(wl::Precision P, std::int64_t b = 16, std::int64_t S = 512, std::int64_t d = 64) {
  return {wl::Node{wl::make_batched_gemm("qk", wl::LayerType::attention, b, S, S, d, P), {}},
          wl::Node{wl::make_softmax("sm", wl::LayerType::attention, b * S, S, P), {"qk"}},
          wl::Node{wl::make_batched_gemm("av", wl::LayerType::attention, b, S, d, S, P), {"sm"}}};
}
// The graph evaluated under one fusion strategy at precision P.
pf::GraphEval evaluate_as(const pf::Platform& p, const wl::OperatorGraph& g, wl::Precision P, pf::FusionStrategy f) {
  pf::EvalOptions o;
  o.phase.precision = P;
  o.fusion = f;
  return pf::evaluate_graph(p, g, o);
}
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

// GEMM + activation epilogue: the element-wise kernel disappears.
TEST(Platform, GemmEpilogueRemovesActivationKernel) {
  const pf::Platform p = a100();
  const auto P = wl::Precision::bf16;
  const auto g = one_block({wl::Node{wl::make_linear("up", wl::LayerType::ffn, 256, 4096, 1024, P, true), {}},
                            wl::Node{wl::make_elementwise("gelu", wl::LayerType::ffn, 256, 4096, 8.0, 1, P), {"up"}}});
  pf::EvalOptions o;
  o.fusion = pf::FusionStrategy::none;
  const pf::GraphEval un = pf::evaluate_graph(p, g, o);
  o.fusion = pf::FusionStrategy::standard;
  const pf::GraphEval fu = pf::evaluate_graph(p, g, o);
  ASSERT_EQ(fu.layers.size(), 1u);
  EXPECT_DOUBLE_EQ(fu.totals.latency_s, un.layers[0].latency_s);
  EXPECT_DOUBLE_EQ(fu.totals.dram_bytes, un.layers[0].dram_bytes);
  EXPECT_DOUBLE_EQ(fu.totals.flops, un.totals.flops);  // same work
  EXPECT_EQ(fu.unsupported_fusion_groups, 0);
}

// EvalOptions::fusion_kinds replaces the strategy's set: a stack that fuses attention
// (FlashAttention) but runs GEMMs without epilogues. One block holding the attention
// chain and a GEMM -> GELU pair: with {flash_attention} the attention chain is one kernel
// and the GELU stays its own; with {gemm_epilogue} the reverse. Each equals the layers
// of the strategy that applies the same kind to that part (aggressive / standard).
TEST(Platform, FusionKindsSelectEachFusion) {
  const pf::Platform p = a100();
  const auto P = wl::Precision::fp16;
  std::vector<wl::Node> nodes = attention_chain(P);
  nodes.insert(nodes.end(), {wl::Node{wl::make_linear("up", wl::LayerType::ffn, 256, 4096, 1024, P, true), {}},
                             wl::Node{wl::make_elementwise("gelu", wl::LayerType::ffn, 256, 4096, 8.0, 1, P), {"up"}}});
  const auto g = one_block(std::move(nodes));
  const pf::GraphEval all = evaluate_as(p, g, P, pf::FusionStrategy::aggressive);
  const pf::GraphEval std_only = evaluate_as(p, g, P, pf::FusionStrategy::standard);
  const pf::GraphEval none = evaluate_as(p, g, P, pf::FusionStrategy::none);
  ASSERT_EQ(all.layers.size(), 2u);       // fused_attention, gemm_epilogue(up+gelu)
  ASSERT_EQ(std_only.layers.size(), 4u);  // qk, sm, av, gemm_epilogue(up+gelu)
  ASSERT_EQ(none.layers.size(), 5u);

  pf::EvalOptions o;
  o.phase.precision = P;
  o.fusion = pf::FusionStrategy::none;  // ignored once kinds are named
  o.fusion_kinds = std::vector<pf::FusionKind>{pf::FusionKind::flash_attention};
  const pf::GraphEval flash = pf::evaluate_graph(p, g, o);
  ASSERT_EQ(flash.layers.size(), 3u);  // fused_attention, up, gelu
  EXPECT_EQ(flash.layers[0].type, "fused_attention");
  EXPECT_DOUBLE_EQ(flash.layers[0].latency_s, all.layers[0].latency_s);
  EXPECT_DOUBLE_EQ(flash.layers[1].latency_s, none.layers[3].latency_s);
  EXPECT_DOUBLE_EQ(flash.layers[2].latency_s, none.layers[4].latency_s);

  o.fusion_kinds = std::vector<pf::FusionKind>{pf::FusionKind::gemm_epilogue};
  const pf::GraphEval epi = pf::evaluate_graph(p, g, o);
  ASSERT_EQ(epi.layers.size(), 4u);
  EXPECT_DOUBLE_EQ(epi.totals.latency_s, std_only.totals.latency_s);

  o.fusion_kinds = std::vector<pf::FusionKind>{};  // named, empty: nothing fused
  EXPECT_DOUBLE_EQ(pf::evaluate_graph(p, g, o).totals.latency_s, none.totals.latency_s);
  EXPECT_EQ(pf::fusion_kinds_of(pf::FusionStrategy::standard),
            (std::vector<pf::FusionKind>{pf::FusionKind::gemm_epilogue, pf::FusionKind::norm_residual}));
}

// A precision the matrix engine lacks runs in the first it has (kernel_precision), and the
// result says so: the test chip has bf16 but no fp8, so an fp8 step moves the same GEMM
// bytes as the bf16 one while the footprint counts fp8 weights (the lm_head stays bf16).
TEST(Platform, MissingPrecisionIsNamedInTheResult) {
  const pf::Platform p = a100();
  const pf::SystemSpec sys = pf::default_system(p, 1);
  auto step = [&](wl::Precision prec) {
    pf::SystemRequest r;
    r.spec = *wl::workload_preset("llama2-7b");
    r.phase.phase = wl::Phase::decode;
    r.phase.batch = 1;
    r.phase.context = 128;
    r.phase.precision = prec;
    r.serving.enabled = false;
    return pf::evaluate_system(p, sys, r);
  };
  const pf::SystemEval bf16 = step(wl::Precision::bf16);
  const pf::SystemEval fp8 = step(wl::Precision::fp8);
  ASSERT_TRUE(bf16.feasible && fp8.feasible) << fp8.reason;
  EXPECT_EQ(bf16.kernel_precision, "");
  EXPECT_EQ(bf16.precision_note, "");
  EXPECT_EQ(fp8.kernel_precision, "bf16");
  EXPECT_NE(fp8.precision_note.find("fp8 is not a precision of this platform's matrix engine: the kernels run bf16"),
            std::string::npos)
      << fp8.precision_note;
  const auto qkv = [](const pf::SystemEval& e) {
    for (const auto& l : e.chip.layers)
      if (l.name == "qkv_proj") return l.dram_bytes;
    return -1.0;
  };
  EXPECT_GT(qkv(bf16), 0.0);
  EXPECT_DOUBLE_EQ(qkv(fp8), qkv(bf16));
  EXPECT_LT(fp8.chip.footprint.weight_bytes, 0.6 * bf16.chip.footprint.weight_bytes);
  const pf::SystemEval int4 = step(wl::Precision::int4);  // int4 runs as int8, which this chip lacks too
  EXPECT_EQ(int4.kernel_precision, "bf16");
  EXPECT_NE(int4.precision_note.find("int4 runs as bf16 (no int4 kernels are modelled)"), std::string::npos)
      << int4.precision_note;
}

// Power never exceeds chips x TDP, however low the cap.
TEST(Platform, PowerNeverAboveTdp) {
  pf::Platform p = a100();
  const auto spec = *wl::workload_preset("llama2-7b");
  for (double tdp : {400.0, 150.0, 100.0, 70.0}) {
    p.energy.tdp_w = tdp;
    pf::SystemSpec sys = pf::default_system(p, 1);
    pf::SystemRequest r;
    r.spec = spec;
    r.phase.phase = wl::Phase::prefill;
    r.phase.batch = 8;
    r.phase.seq = 1024;
    r.serving.enabled = false;
    const pf::SystemEval e = pf::evaluate_system(p, sys, r);
    ASSERT_TRUE(e.feasible) << e.reason;
    EXPECT_LE(e.power.power_w, tdp * 1.000001) << "tdp " << tdp;
    EXPECT_GT(e.power.unthrottled_power_per_chip_w, 0.0);
  }
}

// Llama-2-70B decode on 8 chips: fast, and the kernel memo hits on the repeated shapes.
TEST(Platform, Llama70bDecodeIsFastAndMemoised) {
  const pf::Platform p = a100();
  pf::SystemRequest r;
  r.spec = *wl::workload_preset("llama2-70b");
  r.phase.phase = wl::Phase::decode;
  r.phase.batch = 64;
  r.phase.seq = 1;
  r.phase.context = 2048;
  r.degrees.tp = 8;
  r.serving.enabled = false;
  const pf::SystemSpec sys = pf::default_system(p, 8);
  const auto t0 = std::chrono::steady_clock::now();
  const pf::SystemEval e = pf::evaluate_system(p, sys, r);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(e.feasible) << e.reason;
  std::printf("llama2-70b decode tp8 eval: %.3f ms, cache %lld hits / %lld misses\n", ms,
              static_cast<long long>(e.cache_hits), static_cast<long long>(e.cache_misses));
  EXPECT_LT(ms, 50.0);
  // The graph alone, cold (fresh memo) and warm (memo filled by the first call).
  const wl::OperatorGraph g = wl::build_graph(pf::with_tensor_parallel(r.spec, 8), r.phase);
  pf::EvalOptions o;
  o.phase = r.phase;
  pf::KernelCache cache;
  const auto c0 = std::chrono::steady_clock::now();
  const pf::GraphEval cold = pf::evaluate_graph(p, g, o, &cache);
  const auto c1 = std::chrono::steady_clock::now();
  const pf::GraphEval warm = pf::evaluate_graph(p, g, o, &cache);
  const auto c2 = std::chrono::steady_clock::now();
  std::printf("graph eval cold %.3f ms (%lld misses), warm %.3f ms (%lld hits)\n",
              std::chrono::duration<double, std::milli>(c1 - c0).count(), static_cast<long long>(cold.cache_misses),
              std::chrono::duration<double, std::milli>(c2 - c1).count(), static_cast<long long>(warm.cache_hits));
  EXPECT_EQ(warm.cache_misses, 0);
  EXPECT_DOUBLE_EQ(warm.totals.latency_s, cold.totals.latency_s);
  EXPECT_GT(e.cache_hits, 0);  // ffn_gate and ffn_up share a shape, the norms share one
  EXPECT_GT(e.step_latency_s, 0.0);
}

// Implicit-GEMM convolution reads the real input, not the im2col matrix.
// 3x3 conv, 64 -> 64 channels, 56x56, batch 256, pad 1, fp16 (a ResNet-50
// layer1 conv2): GEMM M = 256*56*56 = 802816, N = 64, K = 64*9 = 576.
// im2col A = 802816 * 576 * 2 B = 924,844,032 B; real input = 256*64*56*56*2 =
// 102,760,448 B, read once (N = 64 fits one column block of every preset tile);
// weights 576*64*2 = 73,728 B; output 802816*64*2 = 102,760,448 B.
TEST(Platform, ConvImplicitGemmReadsRealInputNotIm2col) {
  wl::ConvShape c;
  c.n = 256;
  c.c = 64;
  c.h = c.w = 56;
  c.k = 64;
  c.r = c.s = 3;
  c.pad = 1;
  const auto g = one_block({wl::Node{wl::make_conv2d("conv", wl::LayerType::conv, c, wl::Precision::fp16), {}}});
  pf::EvalOptions o;
  o.fusion = pf::FusionStrategy::none;
  const pf::GraphEval e = pf::evaluate_graph(a100(), g, o);
  const double dram = e.layers.at(0).dram_bytes;
  std::printf("conv DRAM bytes %.0f (im2col 924844032, compulsory 205594624)\n", dram);
  EXPECT_LT(dram, 924844032.0);                          // below the unrolled A alone
  EXPECT_GE(dram, 102760448.0 + 73728.0 + 102760448.0);  // at least input + weights + output
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

// conv_stage fusion (aggressive, inference): a chain of convolutions whose
// weights fit in one core's SRAM is one kernel that reads the chain's input and
// writes its output once. Two 1x1 convolutions 16 -> 16 channels on 8 x 224 x 224
// fp16 activations, by hand:
//   input = output = 8 x 16 x 224 x 224 x 2 B = 12,845,056 B each;
//   weights = 2 x 16 x 16 x 2 B = 1,024 B;  traffic = 25,691,136 B;
//   FLOPs = 2 convs x 2 x (8 x 224 x 224) x 16 x 16 = 411,041,792, + 1 per
//   element for the ReLU between them (8 x 16 x 224 x 224 = 6,422,528).
// The kernel takes the larger of the two convolutions' matrix time and the
// traffic time, plus one graph launch; with n = 16 the matrix time (1.3 us at
// peak, a few times that with tile quantisation) stays under twice the traffic
// time.
TEST(Platform, ConvStageFusionReadsChainInputAndWritesOutputOnce) {
  pf::Platform p = a100();
  const auto P = wl::Precision::fp16;
  const wl::ConvShape c{8, 16, 224, 224, 16, 1, 1, 1, 0, 1};
  wl::OperatorGraph g = one_block({wl::Node{wl::make_conv2d("c1", wl::LayerType::conv, c, P), {}},
                                   wl::Node{wl::make_elementwise("r1", wl::LayerType::elementwise, 8 * 16, 224 * 224, 1.0, 1, P), {"c1"}},
                                   wl::Node{wl::make_conv2d("c2", wl::LayerType::conv, c, P), {"r1"}}});
  pf::EvalOptions o;
  o.phase.precision = P;
  o.phase.batch = 8;
  o.fusion = pf::FusionStrategy::aggressive;
  const pf::GraphEval fu = pf::evaluate_graph(p, g, o);
  ASSERT_EQ(fu.layers.size(), 1u);
  const pf::LayerResult& l = fu.layers[0];
  EXPECT_EQ(l.type, "fused_stage");
  EXPECT_EQ(l.mapping.fusion_group, "conv_stage(b)");
  EXPECT_DOUBLE_EQ(l.dram_bytes, 25691136.0);
  EXPECT_DOUBLE_EQ(l.flops, 411041792.0 + 6422528.0);
  const double mem_s = 25691136.0 / p.gpu.hbm_bandwidth_bytes_per_s();
  EXPECT_GE(l.latency_s, mem_s + p.graph_kernel_overhead_s - 1e-15);
  EXPECT_LE(l.latency_s, 2.0 * mem_s + p.graph_kernel_overhead_s);  // matrix time is below 2x the traffic time
  EXPECT_EQ(fu.unsupported_fusion_groups, 1);  // the test stack does not list conv_stage
  ASSERT_EQ(fu.block_latency_s.size(), 1u);
  EXPECT_DOUBLE_EQ(fu.block_latency_s[0], l.latency_s);

  // Unfused (standard): the two convolutions are separate kernels and move more.
  o.fusion = pf::FusionStrategy::standard;
  const pf::GraphEval un = pf::evaluate_graph(p, g, o);
  EXPECT_EQ(un.layers.size(), 2u);  // c1 + r1 epilogue, c2
  EXPECT_GT(un.totals.dram_bytes, fu.totals.dram_bytes);
  EXPECT_GT(un.totals.latency_s, fu.totals.latency_s);

  // Weights that do not fit in one core's SRAM: no stage fusion.
  o.fusion = pf::FusionStrategy::aggressive;
  p.gpu.sram_bytes_per_core = 1000.0;  // < 1,024 B of weights
  EXPECT_EQ(pf::evaluate_graph(p, g, o).layers.size(), 2u);
  // Training never fuses a stage (the backward pass needs the activations).
  p.gpu.sram_bytes_per_core = 166912.0;
  o.phase.phase = wl::Phase::training;
  for (const auto& layer : pf::evaluate_graph(p, g, o).layers) EXPECT_NE(layer.type, "fused_stage");
}

// ResNet-50 in INT8 on a core with 228 KB of SRAM (H100: 233,472 B): the res2
// stage's weights are, by hand, layer1.0: 64x64 + 9x64x64 + 64x256 + 64x256 =
// 73,728 B of convolution weights + 2 x (64 + 64 + 256 + 256) = 1,280 B of batch
// norm scale/shift; layer1.rest (x2): 256x64 + 9x64x64 + 64x256 = 69,632 + 768 B
// each; total 215,808 B <= 233,472. res3's first block alone needs 256x128 +
// 9x128x128 + 128x512 + 256x512 = 376,832 B. So exactly the res2 stage is one
// kernel (TensorRT's RnRes2FullFusion: res2a..res2c). In FP16 the stage needs
// 431,616 B: only its first block (2 x 75,008 = 150,016 B) fits on its own.
TEST(Platform, ConvStageFusionTakesResNet50Res2InInt8) {
  pf::Platform p = a100();
  p.gpu.sram_bytes_per_core = 233472.0;
  p.gpu.matrix_macs_per_cycle_per_core[static_cast<std::size_t>(cm::Precision::int8)] = 2048;
  wl::PhaseSpec ph;
  ph.phase = wl::Phase::prefill;
  ph.batch = 8;
  ph.precision = wl::Precision::int8;
  const auto spec = wl::workload_preset("resnet50");
  ASSERT_TRUE(spec.has_value());
  pf::EvalOptions o;
  o.fusion = pf::FusionStrategy::aggressive;
  o.phase = ph;
  const pf::GraphEval e = pf::evaluate_graph(p, wl::build_graph(*spec, ph), o);
  int stages = 0;
  for (const auto& l : e.layers)
    if (l.type == "fused_stage") {
      ++stages;
      EXPECT_EQ(l.name, "layer1.0..layer1.rest");
      EXPECT_EQ(l.mapping.fusion_group, "conv_stage(layer1.0+layer1.rest x2)");
      // input (maxpool output) 8 x 64 x 56 x 56 + output 8 x 256 x 56 x 56 + weights, 1 B each
      EXPECT_DOUBLE_EQ(l.dram_bytes, 8.0 * 64 * 56 * 56 + 8.0 * 256 * 56 * 56 + 215808.0);
    }
  EXPECT_EQ(stages, 1);
  ph.precision = wl::Precision::fp16;
  o.phase = ph;
  std::vector<std::string> fp16_stages;
  for (const auto& l : pf::evaluate_graph(p, wl::build_graph(*spec, ph), o).layers)
    if (l.type == "fused_stage") fp16_stages.push_back(l.mapping.fusion_group);
  EXPECT_EQ(fp16_stages, std::vector<std::string>{"conv_stage(layer1.0)"});
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

  const auto g = one_block({wl::Node{wl::make_batched_gemm("qk", wl::LayerType::attention, 16, 512, 512, 64, P), {}},
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
    std::vector<wl::Node> nodes{wl::Node{wl::make_batched_gemm("qk", wl::LayerType::attention, 16, 512, 512, 64, P), {}},
                                wl::Node{wl::make_softmax("sm", wl::LayerType::attention, 16 * 512, 512, P), {"qk"}}};
    if (with_dropout) nodes.push_back(wl::Node{wl::make_dropout("dr", wl::LayerType::attention, 16 * 512, 512, P), {"sm"}});
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
    EXPECT_EQ(bw.mapping.fusion_group, with_dropout ? "flash_attention_bwd(av.bwd_a+av.bwd_b+dr.bwd+sm.bwd+qk.bwd_a+qk.bwd_b)"
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

// A static-shape serving stack (ServingOptions::static_kv_tokens, prompt_bucket_tokens):
// every decode step attends over the whole static cache, whatever the sequence's own
// length, and a 218-token prompt in buckets of 64 runs its prefill as
// round_up(218 + 1, 64) = 256 tokens (by hand). The sweep's TTFT and TPOT are then the
// step latencies of those shapes, evaluated here on their own.
TEST(Platform, StaticShapeServingRunsPaddedShapes) {
  const pf::Platform p = a100();
  const pf::SystemSpec sys = pf::default_system(p, 1);
  pf::SystemRequest r;
  r.spec = *wl::workload_preset("llama2-7b");
  r.phase.phase = wl::Phase::decode;
  r.phase.batch = 8;
  r.phase.seq = 1;
  r.serving.batch_sizes = {8};
  r.serving.prompt_tokens = 218;
  r.serving.output_tokens = 16;
  r.serving.static_kv_tokens = 2048;
  r.serving.prompt_bucket_tokens = 64;
  const pf::SystemEval e = pf::evaluate_system(p, sys, r);
  ASSERT_TRUE(e.feasible) << e.reason;
  ASSERT_TRUE(e.serving.evaluated) << e.serving.reason;
  ASSERT_EQ(e.serving.sweep.size(), 1u);

  auto step = [&](wl::Phase phase, int seq, int context) {
    pf::SystemRequest s = r;
    s.serving.enabled = false;
    s.phase.phase = phase;
    s.phase.seq = seq;
    s.phase.context = context;
    const pf::SystemEval x = pf::evaluate_system(p, sys, s);
    EXPECT_TRUE(x.feasible) << x.reason;
    return x.step_latency_s;
  };
  const double prefill_256 = step(wl::Phase::prefill, 256, 0);
  const double decode_2048 = step(wl::Phase::decode, 1, 2048);
  const auto& pt = e.serving.sweep.front();
  EXPECT_NEAR(pt.ttft_s, prefill_256, 1e-12 * prefill_256);
  EXPECT_NEAR(pt.tpot_s, decode_2048, 1e-12 * decode_2048);
  // The unpadded stack is faster on both counts (shorter prompt, shorter cache).
  pf::SystemRequest paged = r;
  paged.serving.static_kv_tokens = 0;
  paged.serving.prompt_bucket_tokens = 0;
  const pf::SystemEval u = pf::evaluate_system(p, sys, paged);
  ASSERT_TRUE(u.serving.evaluated);
  EXPECT_NEAR(u.serving.sweep.front().ttft_s, step(wl::Phase::prefill, 218, 0), 1e-12 * prefill_256);
  EXPECT_LT(u.serving.sweep.front().tpot_s, pt.tpot_s);

  // A static cache shorter than prompt + output cannot hold the requests.
  r.serving.static_kv_tokens = 218 + 16 - 1;
  const pf::SystemEval bad = pf::evaluate_system(p, sys, r);
  EXPECT_FALSE(bad.serving.evaluated);
  EXPECT_NE(bad.serving.reason.find("static_kv_tokens 233"), std::string::npos) << bad.serving.reason;

  // A request of no prompt or no output tokens is no request: the sweep is not run, and says why.
  r.serving.static_kv_tokens = 0;
  r.serving.output_tokens = 0;
  const pf::SystemEval none = pf::evaluate_system(p, sys, r);
  EXPECT_FALSE(none.serving.evaluated);
  EXPECT_NE(none.serving.reason.find("prompt and output tokens are >= 1 (got 218 and 0)"), std::string::npos)
      << none.serving.reason;
  // Nor one whose length does not fit an int (prompt + output overflowed before).
  r.serving.prompt_tokens = 2'147'483'000;
  r.serving.output_tokens = 1000;
  const pf::SystemEval huge = pf::evaluate_system(p, sys, r);
  EXPECT_FALSE(huge.serving.evaluated);
  EXPECT_NE(huge.serving.reason.find("prompt + output tokens (2147484000) exceed 2147483647"), std::string::npos)
      << huge.serving.reason;
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
    return one_block({wl::Node{qk, {}}, wl::Node{wl::make_softmax("sm", wl::LayerType::attention, 64 * 1024, 1024, P), {"qk"}},
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

// The fusion kinds a platform file may list, as its reader's error names them; each
// name reads back as its kind.
TEST(Platform, FusionKindNamesRoundTrip) {
  EXPECT_EQ(pf::fusion_kind_names(), "gemm_epilogue, norm_residual, flash_attention or conv_stage");
  for (const auto f : pf::kFusionKinds) EXPECT_EQ(pf::fusion_kind_from_string(pf::to_string(f)), f);
  EXPECT_FALSE(pf::fusion_kind_from_string("epilogue").has_value());
}

// Every step a system runs takes the time its TDP allows: the evaluated step and each
// prefill / decode step of the serving table. Expected values by hand from the rule in
// costmodel/system/power.hpp (voltage_and_frequency, one chip): P_dyn = E_dyn / T,
// s = cbrt((TDP - P_static) / P_dyn) when P_static + P_dyn > TDP, time = T / s, with T and
// E_dyn the chip graph's unthrottled latency and dynamic energy (evaluate_graph).
TEST(Platform, SystemStepsRunAtTheClockTheTdpAllows) {
  pf::Platform p = a100();
  const auto spec = *wl::workload_preset("llama2-7b");
  auto unthrottled = [&](wl::Phase phase, int batch, int seq, int context) {
    wl::PhaseSpec ph;
    ph.phase = phase;
    ph.batch = batch;
    ph.seq = seq;
    ph.context = context;
    pf::EvalOptions o;
    o.phase = ph;
    return pf::evaluate_graph(p, wl::build_graph(spec, ph), o);
  };
  const pf::GraphEval pre = unthrottled(wl::Phase::prefill, 8, 256, 0);
  const pf::GraphEval dec256 = unthrottled(wl::Phase::decode, 8, 1, 256);
  const pf::GraphEval dec258 = unthrottled(wl::Phase::decode, 8, 1, 258);
  const auto dyn_w = [](const pf::GraphEval& g) { return g.totals.dynamic_energy_j / g.totals.latency_s; };
  // A cap that throttles all three: static power + half the smallest dynamic power.
  p.energy.static_power_w = 50.0;
  p.energy.tdp_w = 50.0 + 0.5 * std::min({dyn_w(pre), dyn_w(dec256), dyn_w(dec258)});
  const double s_pre = std::cbrt((p.energy.tdp_w - 50.0) / dyn_w(pre));
  ASSERT_LT(s_pre, 1.0);
  const pf::SystemSpec sys = pf::default_system(p, 1);

  pf::SystemRequest r;
  r.spec = spec;
  r.phase.phase = wl::Phase::prefill;
  r.phase.batch = 8;
  r.phase.seq = 256;
  r.serving.enabled = false;
  const pf::SystemEval e = pf::evaluate_system(p, sys, r);
  ASSERT_TRUE(e.feasible) << e.reason;
  EXPECT_TRUE(e.power.throttled);
  EXPECT_NEAR(e.power.throttle_factor, s_pre, 1e-9);
  EXPECT_NEAR(e.unthrottled_step_latency_s, pre.totals.latency_s, 1e-12 * pre.totals.latency_s);
  EXPECT_NEAR(e.step_latency_s, pre.totals.latency_s / s_pre, 1e-9 * e.step_latency_s);
  EXPECT_NEAR(e.tokens_per_s, 8.0 * 256.0 / e.step_latency_s, 1e-9 * e.tokens_per_s);

  // The serving table: TTFT is the throttled prefill of the prompt, TPOT the decode step
  // at prompt + 1 (output 2: one decode step), each throttled by its own power.
  pf::SystemRequest q = r;
  q.phase.phase = wl::Phase::decode;
  q.phase.seq = 1;
  q.serving.enabled = true;
  q.serving.batch_sizes = {8};
  q.serving.prompt_tokens = 256;
  q.serving.output_tokens = 2;
  const pf::SystemEval sv = pf::evaluate_system(p, sys, q);
  ASSERT_TRUE(sv.serving.evaluated) << sv.serving.reason;
  ASSERT_EQ(sv.serving.sweep.size(), 1u);
  const auto throttled = [&](const pf::GraphEval& g) {
    const double s = std::cbrt((p.energy.tdp_w - 50.0) / dyn_w(g));
    EXPECT_LT(s, 1.0);
    return g.totals.latency_s / s;
  };
  EXPECT_NEAR(sv.serving.sweep[0].ttft_s, pre.totals.latency_s / s_pre, 1e-9 * sv.serving.sweep[0].ttft_s);
  // Output 2: TPOT is the decode step at the prompt's length + 1 attended positions; the
  // table holds the steps at 256 and 258 and interpolates linearly, 257 is their mean.
  const double d256 = throttled(dec256);
  const double d258 = throttled(dec258);
  EXPECT_NEAR(sv.serving.sweep[0].tpot_s, 0.5 * (d256 + d258), 1e-6 * sv.serving.sweep[0].tpot_s);

  // A cap below the static power: no clock runs the step.
  p.energy.tdp_w = 40.0;
  const pf::SystemEval off = pf::evaluate_system(p, pf::default_system(p, 1), r);
  EXPECT_FALSE(off.feasible);
  EXPECT_EQ(off.reason, "power: static_power_exceeds_tdp");
}

namespace {
// Llama-2-7B training, one sequence of 512 tokens per micro-batch, serving off.
pf::SystemRequest llama2_7b_training() {
  pf::SystemRequest r;
  r.spec = *wl::workload_preset("llama2-7b");
  r.phase.phase = wl::Phase::training;
  r.phase.batch = 1;
  r.phase.seq = 512;
  r.serving.enabled = false;
  return r;
}
}  // namespace

// Memory of one chip under pipeline parallelism and sharded states, by hand from the
// unsharded footprint (costmodel/platform/system.cpp stage_memory): a stage holds 1/p of
// the weights, gradients and optimizer state; the first stage keeps min(m, p) of p
// micro-batches' activations of its L/p layers (Korthikanti et al. 2022, 4.2.3), times
// 1 + (p - 1)/(p v) interleaved; ZeRO-3 keeps 1/dp of the states plus two gathered units,
// a Llama-2-7B layer being 4 x 4096^2 + 3 x 4096 x 11008 + 2 x 4096 = 202,383,360
// parameters (404,766,720 bytes in bf16). Power: m micro-batches draw m times one's
// dynamic energy over m times its time; the optimizer update runs once per step, so the
// step's dynamic energy and time are m x one micro-batch's plus the update's.
TEST(Platform, PipelineAndShardedStatesDivideTheMemory) {
  const pf::Platform p = a100();
  const pf::SystemRequest r = llama2_7b_training();
  const auto run = [&](int pp, int dp, int m, int v, bool shard) {
    pf::SystemRequest q = r;
    q.degrees.pp = pp;
    q.degrees.dp = dp;
    q.micro_batches = m;
    q.virtual_stages = v;
    q.shard_states = shard;
    const pf::SystemEval e = pf::evaluate_system(p, pf::default_system(p, pp * dp), q);
    EXPECT_TRUE(e.feasible) << e.reason;
    return e;
  };
  const pf::SystemEval one = run(1, 1, 1, 1, false);
  const wl::MemoryFootprint& f = one.chip.footprint;
  const double states = f.weight_bytes + f.gradient_bytes + f.optimizer_bytes;
  EXPECT_DOUBLE_EQ(one.chip.totals.memory_bytes, states + f.activation_bytes);
  EXPECT_NEAR(run(4, 1, 8, 1, false).chip.totals.memory_bytes, states / 4 + f.activation_bytes, 1.0);
  EXPECT_NEAR(run(4, 1, 2, 1, false).chip.totals.memory_bytes, states / 4 + f.activation_bytes * 2 / 4, 1.0);
  EXPECT_NEAR(run(4, 1, 8, 2, false).chip.totals.memory_bytes, states / 4 + f.activation_bytes * (1 + 3.0 / 8), 1.0);
  EXPECT_NEAR(run(1, 8, 1, 1, true).chip.totals.memory_bytes, states / 8 + 2 * 404766720.0 + f.activation_bytes, 1.0);
  EXPECT_DOUBLE_EQ(run(1, 8, 1, 1, false).chip.totals.memory_bytes, one.chip.totals.memory_bytes);
  const pf::SystemEval two = run(1, 1, 2, 1, false);
  ASSERT_FALSE(one.power.throttled);
  ASSERT_FALSE(two.power.throttled);
  const double opt_s = one.step.optimizer_s;
  ASSERT_GT(opt_s, 0.0);
  const double opt_j = opt_s * p.gpu.hbm_bandwidth_bytes_per_s() * p.energy.hbm_byte_j;
  EXPECT_NEAR(two.step.step_time_s, 2.0 * (one.step.step_time_s - opt_s) + opt_s, 1e-9 * two.step.step_time_s);
  const double one_j = one.power.dynamic_power_w * one.step.step_time_s;
  EXPECT_NEAR(two.power.dynamic_power_w * two.step.step_time_s, 2.0 * (one_j - opt_j) + opt_j, 1e-9 * one_j);
}

// Hybrid sharding (shard_group): dp 8 as two copies of states sharded over 4 chips. Each chip
// keeps 1/4 of the weights, gradients and optimizer state plus the two gathered layers
// (2 x 404,766,720 bytes, as above) and updates 1/4 of the 6,738,415,616 parameters (38 B each,
// the fused bf16 update); after the reduce-scatter the two copies all-reduce each chip's shard,
// G/4 of the G = 2 x 6,738,415,616 bytes of bf16 gradients, over a 2-chip group of the chips'
// links: 2 alpha + 2 x 1/2 x G/4 over links x bandwidth x achievable fraction.
TEST(Platform, HybridShardingKeepsAQuarterOfTheStatesAndAllReducesItsShard) {
  const pf::Platform p = a100();
  const double params = 6738415616.0;
  pf::SystemRequest q = llama2_7b_training();
  const pf::SystemEval one = pf::evaluate_system(p, pf::default_system(p, 1), q);
  const wl::MemoryFootprint& f = one.chip.footprint;
  const double states = f.weight_bytes + f.gradient_bytes + f.optimizer_bytes;
  q.degrees.dp = 8;
  q.shard_states = true;
  q.shard_group = 4;
  const pf::SystemSpec sys = pf::default_system(p, 8);
  const pf::SystemEval e = pf::evaluate_system(p, sys, q);
  ASSERT_TRUE(e.feasible) << e.reason;
  EXPECT_NEAR(e.chip.totals.memory_bytes, states / 4 + 2 * 404766720.0 + f.activation_bytes, 1.0);
  EXPECT_NEAR(e.step.optimizer_s, params / 4.0 * 38.0 / p.gpu.hbm_bandwidth_bytes_per_s(), 1e-9);
  const auto& ic = sys.interconnect;
  const double shard_bytes = 2.0 * params / 4.0;
  const double want =
      2.0 * ic.link_latency_s + shard_bytes / (ic.links * ic.link_bandwidth_bytes_per_s * ic.achievable_fraction);
  EXPECT_NEAR(e.step.dp_replica_comm_s, want, 1e-12 * want);
}

// The optimizer update that ends a training step (pf::OptimizerKernel), by hand: Llama-2-7B
// has 6,738,415,616 parameters (32 layers of 202,383,360, two 32,000 x 4,096 embedding
// tables, the final norm's 4,096: Meta's published 6.74B), each chip updating its own share
// at the chip's sustained HBM bandwidth. Bytes per parameter: fused 28 (gradient, weight,
// two moments read; weight, moments written, fp32) + 4 (the clip's norm read) + 6 (a bf16
// step's master copy to the 16-bit weights) = 38; unfused (Composer's DecoupledAdamW, a kernel
// per step) 80 + 12 (PyTorch's clip_grad_norm_: norm read, in-place scale) + 6 = 98; an fp32
// step has no master copy (32). Sharded states (ZeRO-3 / FSDP over dp 8) update 1/8, a
// pipeline stage (pp 4) its 1/4. The step is compute + exposed communication + bubble + update.
TEST(Platform, OptimizerUpdateEndsTheTrainingStep) {
  const pf::Platform p = a100();
  const pf::SystemRequest r = llama2_7b_training();
  const double params = 6738415616.0;
  const double bw = p.gpu.hbm_bandwidth_bytes_per_s();
  const auto run = [&](pf::OptimizerKernel k, wl::Precision prec, int pp, int dp, bool shard) {
    pf::SystemRequest q = r;
    q.optimizer = k;
    q.phase.precision = prec;
    q.degrees.pp = pp;
    q.degrees.dp = dp;
    q.shard_states = shard;
    q.micro_batches = pp;
    const pf::SystemEval e = pf::evaluate_system(p, pf::default_system(p, pp * dp), q);
    EXPECT_TRUE(e.feasible) << e.reason;
    EXPECT_NEAR(e.step.step_time_s,
                e.step.compute_s + e.step.exposed_comm_s + e.step.bubble_s + e.step.shard_copies_s + e.step.optimizer_s,
                1e-12 * e.step.step_time_s);
    return e.step.optimizer_s;
  };
  const auto bf16 = wl::Precision::bf16;
  EXPECT_NEAR(run(pf::OptimizerKernel::fused, bf16, 1, 1, false), params * 38.0 / bw, 1e-9);
  EXPECT_NEAR(run(pf::OptimizerKernel::unfused, bf16, 1, 1, false), params * 98.0 / bw, 1e-9);
  EXPECT_NEAR(run(pf::OptimizerKernel::fused, wl::Precision::fp32, 1, 1, false), params * 32.0 / bw, 1e-9);
  EXPECT_NEAR(run(pf::OptimizerKernel::unfused, bf16, 1, 8, true), params / 8.0 * 98.0 / bw, 1e-9);
  EXPECT_NEAR(run(pf::OptimizerKernel::fused, bf16, 1, 8, false), params * 38.0 / bw, 1e-9);  // replicated states
  EXPECT_NEAR(run(pf::OptimizerKernel::fused, bf16, 4, 1, false), params / 4.0 * 38.0 / bw, 1e-9);
  // Inference has none.
  pf::SystemRequest inf = r;
  inf.phase.phase = wl::Phase::prefill;
  EXPECT_EQ(pf::evaluate_system(p, pf::default_system(p, 1), inf).step.optimizer_s, 0.0);
  // The names, as the CLI and the suite spell them.
  for (const auto k : {pf::OptimizerKernel::fused, pf::OptimizerKernel::unfused})
    EXPECT_EQ(pf::optimizer_kernel_from_string(pf::to_string(k)), k);
  EXPECT_FALSE(pf::optimizer_kernel_from_string("adam").has_value());
}

// PyTorch FSDP's copies around the collectives (sharding: fsdp, pf::shard_copy_bytes), by hand for
// Llama-2-7B's P = 6,738,415,616 parameters over dp 8 in bf16 (e = 2) with m = 2 micro-batches.
// Compute stream: the flat gradient assembled from its views (split's backward, at::cat), P e
// read and written per micro-batch: 2 x 2 P e = 8 P. Beside the collectives, per micro-batch: the
// pre-divide of the unsharded gradient 2 P e = 4 P, the post-divide of the shard 2 (P/8) e = P/2,
// the shard's cast to fp32 (P/8)(e + 4) = 3P/4, the fp32 shard copied to bf16 before two
// all-gathers 2 (P/8)(4 + e) = 3P/2: 6.75 P; twice, plus one accumulation into the saved shard,
// 12 P/8: 15 P. The step adds 8 P + (1 - overlap.data) x 15 P over the HBM bandwidth;
// sharding: full (no FlatParameter) adds none, and an fp32 step has no cast or low-precision copy.
TEST(Platform, FsdpFlatParameterCopiesAroundTheCollectives) {
  const double P = 6738415616.0;
  const pf::ShardCopyBytes c = pf::shard_copy_bytes(P, 8, 2.0, true, 2);
  EXPECT_NEAR(c.compute_stream, 8.0 * P, 1e-6 * P);
  EXPECT_NEAR(c.beside_collectives, 15.0 * P, 1e-6 * P);
  const pf::ShardCopyBytes f32 = pf::shard_copy_bytes(P, 8, 4.0, false, 1);
  EXPECT_NEAR(f32.compute_stream, 8.0 * P, 1e-6 * P);  // 2 x 1 x P x 4
  EXPECT_NEAR(f32.beside_collectives, 2.0 * P * 4.0 + 2.0 * P / 8.0 * 4.0, 1e-6 * P);
  EXPECT_EQ(pf::shard_copy_bytes(P, 1, 2.0, true, 2).compute_stream, 0.0);  // nothing sharded

  const pf::Platform p = a100();
  const double bw = p.gpu.hbm_bandwidth_bytes_per_s();
  const auto step = [&](bool flat, double overlap) {
    pf::SystemRequest q = llama2_7b_training();
    q.degrees.dp = 8;
    q.shard_states = true;
    q.flat_parameter = flat;
    q.micro_batches = 2;
    q.overlap.data = overlap;
    const pf::SystemEval e = pf::evaluate_system(p, pf::default_system(p, 8), q);
    EXPECT_TRUE(e.feasible) << e.reason;
    return e.step;
  };
  EXPECT_NEAR(step(true, 0.0).shard_copies_s, 23.0 * P / bw, 1e-9);
  EXPECT_NEAR(step(true, 0.5).shard_copies_s, (8.0 + 7.5) * P / bw, 1e-9);
  EXPECT_EQ(step(false, 0.0).shard_copies_s, 0.0);
  EXPECT_NEAR(step(true, 0.0).step_time_s - step(false, 0.0).step_time_s, 23.0 * P / bw, 1e-9);
  // The names: fsdp is sharded states with the FlatParameter's copies.
  EXPECT_EQ(pf::shard_states_from_string("fsdp"), std::optional<bool>(true));
  EXPECT_TRUE(pf::flat_parameter_sharding("fsdp"));
  EXPECT_FALSE(pf::flat_parameter_sharding("full"));
}
