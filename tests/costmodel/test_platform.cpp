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
using dse::test::attention_chain;
using dse::test::evaluate_as;
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

// Ring context parallelism through evaluate_system (Llama-2-7B, 32 heads and KV heads of 128,
// 8,192 tokens over cp 2 on the test chip's 12 links of 25 GB/s, alpha 0.7 us): each layer's
// forward sends the chip's key-value chunk once (cp - 1) and its backward the chunk and its
// gradient, 3 sends of 2 x 32 x 4,096 x 128 x 2 B = 67,108,864 B, each 0.7 us + 67.1 MB /
// 300 GB/s: 32 layers x 3 x 224.4 us = 21.54 ms per step; every chip runs 4,096 tokens.
TEST(Platform, RingContextParallelSendsTheKeyValueChunks) {
  const pf::Platform p = a100();
  pf::SystemRequest q = llama2_7b_training();
  q.phase.seq = 8192;
  q.degrees.cp = 2;
  q.options.fusion_kinds = std::vector<pf::FusionKind>{pf::FusionKind::flash_attention};
  const pf::SystemEval e = pf::evaluate_system(p, pf::default_system(p, 2), q);
  ASSERT_TRUE(e.feasible) << e.reason;
  EXPECT_EQ(e.chips, 2);
  const double send = 0.7e-6 + 67108864.0 / (12 * 2.5e10);
  EXPECT_NEAR(e.step.cp_comm_s, 32 * 3 * send, 1e-9);
  // The whole sequence's tokens per step, on two chips.
  EXPECT_DOUBLE_EQ(e.chip.totals.tokens, 8192.0);
  // Decode splits no sequence: the step is refused with the reason.
  q.phase.phase = wl::Phase::decode;
  q.phase.seq = 1;
  q.phase.context = 100;
  const pf::SystemEval d = pf::evaluate_system(p, pf::default_system(p, 2), q);
  EXPECT_FALSE(d.feasible);
  EXPECT_NE(d.reason.find("not decode"), std::string::npos);
}
