// Hand-checked cases of the GPU-class timing model (costmodel/gpu/gpu.hpp) on a
// toy GPU whose numbers make the arithmetic easy. Every expected value is
// worked out in the comment next to it.
#include "costmodel/gpu/gpu.hpp"

#include <gtest/gtest.h>

namespace {

using dse::costmodel::Bottleneck;
using dse::costmodel::GemmShape;
using dse::costmodel::GemmTile;
using dse::costmodel::GpuCheck;
using dse::costmodel::GpuHardware;
using dse::costmodel::Precision;

// 1 GHz, 1024 FP16 MACs/cycle/core, one 128x128x32 tile; memory so fast that
// only the matrix engine counts (unless a test changes it).
GpuHardware toy(std::int64_t cores) {
  GpuHardware hw;
  hw.name = "toy";
  hw.core_count = cores;
  hw.clock_hz = 1e9;
  hw.matrix_macs_per_cycle_per_core[static_cast<std::size_t>(Precision::fp16)] = 1024;
  hw.vector_fp32_flops_per_cycle_per_core = 128;
  hw.vector_fp16_flops_per_cycle_per_core = 256;
  hw.special_function_ops_per_cycle_per_core = 16;
  hw.sram_bytes_per_core = 1e6;
  hw.l2_bytes = 1e6;
  hw.l2_bandwidth_bytes_per_s = 1e30;
  hw.hbm_bytes = 1e12;
  hw.hbm_peak_bandwidth_bytes_per_s = 1e30;
  hw.hbm_achievable_fraction = 1.0;
  hw.hbm_latency_s = 0.0;
  hw.launch_overhead_library_s = 0.0;
  hw.launch_overhead_eager_s = 0.0;
  hw.launch_overhead_compiled_s = 0.0;
  hw.gemm_pipeline_stages = 2;
  hw.eager_softmax_single_pass_max_row_elements = 1024;
  hw.eager_softmax_single_pass_max_row_bytes = 4096;
  hw.compiled_reduction_single_pass_max_row_elements = 1024;
  hw.gemm_tiles = {GemmTile{128, 128, 32}};
  return hw;
}

// One 128x128x32 k-step: 128*128*32 / 1024 MAC per cycle = 512 cycles = 512 ns.
constexpr double kStepS = 512e-9;

TEST(GpuGemm, TileQuantisationWastesAWholeTile) {
  const GpuHardware hw = toy(1);
  // 128 x 128 x 32: one tile, one k-step -> 512 ns.
  const auto exact = dse::costmodel::evaluate_gemm(hw, GemmShape{128, 128, 32});
  ASSERT_TRUE(exact.feasible);
  EXPECT_NEAR(exact.latency_s, kStepS, 1e-12);
  // M = 129 needs ceil(129/128) = 2 tiles on the one core: 2 * 512 ns, for
  // 0.8% more useful work.
  const auto over = dse::costmodel::evaluate_gemm(hw, GemmShape{129, 128, 32});
  EXPECT_EQ(over.tile_count, 2);
  EXPECT_NEAR(over.latency_s, 2 * kStepS, 1e-12);
  // K = 33 needs ceil(33/32) = 2 k-steps -> 1024 ns.
  EXPECT_NEAR(dse::costmodel::evaluate_gemm(hw, GemmShape{128, 128, 33}).latency_s, 2 * kStepS, 1e-12);
}

TEST(GpuGemm, WaveQuantisationStepsWhenTilesCrossACoreMultiple) {
  const GpuHardware hw = toy(4);
  // N = 128, K = 32, M = 128 * t gives t tiles on 4 cores: ceil(t / 4) waves of 512 ns.
  for (std::int64_t t = 1; t <= 9; ++t) {
    const auto c = dse::costmodel::evaluate_gemm(hw, GemmShape{128 * t, 128, 32});
    const std::int64_t waves = (t + 3) / 4;
    EXPECT_EQ(c.waves, waves) << t;
    EXPECT_NEAR(c.latency_s, static_cast<double>(waves) * kStepS, 1e-12) << t;
  }
  // 4 tiles -> 512 ns, 5 tiles -> 1024 ns: 25% more work, 100% more time.
  const double t4 = dse::costmodel::evaluate_gemm(hw, GemmShape{512, 128, 32}).latency_s;
  const double t5 = dse::costmodel::evaluate_gemm(hw, GemmShape{640, 128, 32}).latency_s;
  EXPECT_NEAR(t5 / t4, 2.0, 1e-9);
  // Achieved FLOP/s at 4 tiles is the peak: 2*512*128*32 / 512 ns = 8.192e12
  // = 2 * 1024 * 4 cores * 1e9; percent of peak 100.
  const auto c4 = dse::costmodel::evaluate_gemm(hw, GemmShape{512, 128, 32});
  EXPECT_NEAR(c4.achieved_flops_per_s, 8.192e12, 1e3);
  EXPECT_NEAR(c4.pct_of_peak, 100.0, 1e-9);
  EXPECT_EQ(c4.bottleneck, Bottleneck::compute);
}

// The load stream of a pipelined main loop (Little's law). One core, one
// 128x128x320 tile: 10 k-steps, each loading (128 + 128) x 32 x 2 B = 16,384 B.
// HBM at 16.384 GB/s moves one step's loads in 1 us; the round trip is 1 us; the
// matrix engine needs 512 ns a step. Both operands (163,840 B) fit the L2 and
// are read once. With 2 stages one step's loads are in flight: each step waits
// 1 us + 1 us = 2 us. Prologue 1 us latency + 1 us transfer, epilogue the C tile,
// 32,768 B / 16.384 GB/s = 2 us: 2 + 10 x 2 + 2 = 24 us. With 3 stages two steps
// are in flight, 2 us / 2 = 1 us a step, the bandwidth's own bound: 2 + 10 + 2 = 14 us.
TEST(GpuGemm, OneStepInFlightAddsLatencyToTransfer) {
  GpuHardware hw = toy(1);
  hw.hbm_peak_bandwidth_bytes_per_s = 16.384e9;
  hw.hbm_latency_s = 1e-6;
  const auto two = dse::costmodel::evaluate_gemm(hw, GemmShape{128, 128, 320});
  ASSERT_TRUE(two.feasible);
  EXPECT_NEAR(two.hbm_bytes, 163840.0 + 32768.0, 1e-6);
  EXPECT_NEAR(two.latency_s, 24e-6, 1e-12);
  EXPECT_EQ(two.bottleneck, Bottleneck::memory);
  hw.gemm_pipeline_stages = 3;
  EXPECT_NEAR(dse::costmodel::evaluate_gemm(hw, GemmShape{128, 128, 320}).latency_s, 14e-6, 1e-12);
}

// An engine that streams its tiles (gemm_waves_pipelined: Gaudi's DMA engines prefetch the next
// tile's operands while the MME computes). One core, four 128 x 128 x 320 tiles (M = 512), so four
// waves of 10 k-steps, each loading 16,384 B; an L2 of 1 B keeps no panel, so every load comes
// from HBM. HBM at 16.384 GB/s, a 1 us round trip, 3 stages: a step is max(512 ns of products,
// 1 us of transfer, (1 + 1) us / 2 in flight) = 1 us. Per wave: prologue 1 + 1 us, k-steps 10 us,
// epilogue the C tile, 32,768 B = 2 us. In turn: 4 x (2 + 10 + 2) = 56 us. Streamed: one prologue,
// four waves of max(10 us of steps, 10 us of loads + 2 us of C write on the same HBM) = 12 us, one
// epilogue: 2 + 48 + 2 = 52 us (the 786,432 B of the four waves at 16.384 GB/s are 48 us).
// Compute-bound (HBM 10x faster, no round trip): a step is the 512 ns of products, prologue
// 0.1 us, epilogue 0.2 us, a wave's loads 1 us: in turn 4 x (0.1 + 5.12 + 0.2) = 21.68 us,
// streamed 0.1 + 4 x max(5.12, 1 + 0.2) + 0.2 = 20.78 us.
TEST(GpuGemm, StreamedTilesPayOnePrologueAndEpilogue) {
  GpuHardware hw = toy(1);
  hw.l2_bytes = 1.0;
  hw.hbm_peak_bandwidth_bytes_per_s = 16.384e9;
  hw.hbm_latency_s = 1e-6;
  hw.gemm_pipeline_stages = 3;
  const GemmShape s{512, 128, 320};
  const auto serial = dse::costmodel::evaluate_gemm(hw, s);
  ASSERT_TRUE(serial.feasible);
  EXPECT_EQ(serial.waves, 4);
  EXPECT_NEAR(serial.latency_s, 56e-6, 1e-12);
  hw.gemm_waves_pipelined = true;
  const auto streamed = dse::costmodel::evaluate_gemm(hw, s);
  EXPECT_NEAR(streamed.latency_s, 52e-6, 1e-12);
  EXPECT_EQ(streamed.hbm_bytes, serial.hbm_bytes);  // the same bytes, moved while the engine works
  hw.hbm_peak_bandwidth_bytes_per_s = 163.84e9;
  hw.hbm_latency_s = 0.0;
  EXPECT_NEAR(dse::costmodel::evaluate_gemm(hw, s).latency_s, 20.78e-6, 1e-12);
  hw.gemm_waves_pipelined = false;
  EXPECT_NEAR(dse::costmodel::evaluate_gemm(hw, s).latency_s, 21.68e-6, 1e-12);
}

// A tile two cores compute together (GemmTile::cores, Blackwell's 2-SM MMA). Four cores, so a
// wave holds two 256 x 128 x 32 pair tiles. Products: 256 x 128 x 32 MACs on 2 x 1,024 MACs a
// cycle = 512 ns a k-step, as one core's 128 x 128 x 32 tile. M = 512 (two pair tiles): one wave,
// 512 ns; M = 768 (three): two waves, 1,024 ns. The L2: a pair tile loads (256 + 128) x 32 x 2 B
// = 24,576 B a k-step where the two one-core 128 x 128 tiles over the same 256 x 128 outputs load
// 2 x (128 + 128) x 64 B = 32,768 B. With the L2 at 24.576 GB/s (HBM instant, no round trip) a
// 256 x 128 x 32 GEMM's one k-step takes 1 us on the pair and 1.333 us on two cores, and each
// kernel's prologue loads one step more: 2 us against 2.667 us.
TEST(GpuGemm, APairTileSplitsItsProductsAndSharesItsLoads) {
  GpuHardware hw = toy(4);
  const GemmTile pair{256, 128, 32, 1, 2};
  const GemmTile single{128, 128, 32};
  const auto two = dse::costmodel::evaluate_gemm_with_tile(hw, GemmShape{512, 128, 32}, pair);
  ASSERT_TRUE(two.feasible);
  EXPECT_EQ(two.waves, 1);
  EXPECT_NEAR(two.latency_s, kStepS, 1e-12);
  const auto three = dse::costmodel::evaluate_gemm_with_tile(hw, GemmShape{768, 128, 32}, pair);
  EXPECT_EQ(three.waves, 2);
  EXPECT_NEAR(three.latency_s, 2 * kStepS, 1e-12);
  hw.l2_bandwidth_bytes_per_s = 24.576e9;
  EXPECT_NEAR(dse::costmodel::evaluate_gemm_with_tile(hw, GemmShape{256, 128, 32}, pair).latency_s, 2e-6, 1e-12);
  EXPECT_NEAR(dse::costmodel::evaluate_gemm_with_tile(hw, GemmShape{256, 128, 32}, single).latency_s, 8e-6 / 3,
              1e-12);
  // A tile of more cores than the chip has is no kernel.
  EXPECT_FALSE(dse::costmodel::evaluate_gemm_with_tile(hw, GemmShape{256, 128, 32}, GemmTile{256, 128, 32, 1, 8})
                   .feasible);
}

// The same tile for 1-byte operands (costmodel::preset_tile). One core, FP8 at 2048 MACs a
// cycle, a 128 x 128 x 640 GEMM. Without gemm_tile_k_scales_with_precision the kernel keeps
// the list's k = 32: 20 k-steps of (128 + 128) x 32 x 1 B = 8,192 B, each 0.5 us at 16.384 GB/s
// and 1 us of round trip, one step in flight (2 stages): 1.5 us a step. Prologue 1 + 0.5 us,
// epilogue the BF16-sized C tile at 1 B an element, 16,384 B = 1 us: 1.5 + 20 x 1.5 + 1 = 32.5 us.
// With the flag the kernel takes k = 64 (a k-step moves the 16,384 B of the 16-bit kernel's):
// 10 steps of 1 + 1 us, prologue 2 us: 2 + 10 x 2 + 1 = 23 us. BF16 keeps k = 32 either way;
// FP32 takes 16 with the flag.
TEST(GpuGemm, OneByteKernelsTakeTwiceTheTileK) {
  GpuHardware hw = toy(1);
  hw.matrix_macs_per_cycle_per_core[static_cast<std::size_t>(Precision::fp8)] = 2048;
  hw.hbm_peak_bandwidth_bytes_per_s = 16.384e9;
  hw.hbm_latency_s = 1e-6;
  GemmShape s{128, 128, 640};
  s.precision = Precision::fp8;
  const auto plain = dse::costmodel::evaluate_gemm(hw, s);
  ASSERT_TRUE(plain.feasible);
  EXPECT_EQ(plain.tile.k, 32);
  EXPECT_NEAR(plain.latency_s, 32.5e-6, 1e-12);
  hw.gemm_tile_k_scales_with_precision = true;
  const auto scaled = dse::costmodel::evaluate_gemm(hw, s);
  EXPECT_EQ(scaled.tile.k, 64);
  EXPECT_NEAR(scaled.latency_s, 23e-6, 1e-12);
  EXPECT_EQ(dse::costmodel::preset_tile(hw, GemmTile{128, 128, 32}, Precision::int8).k, 64);
  EXPECT_EQ(dse::costmodel::preset_tile(hw, GemmTile{128, 128, 32}, Precision::bf16).k, 32);
  // 4-byte operands take half: 16 x 4 B = the same 64 B a k-step.
  EXPECT_EQ(dse::costmodel::preset_tile(hw, GemmTile{128, 128, 32}, Precision::fp32).k, 16);
  EXPECT_EQ(dse::costmodel::preset_tile(hw, GemmTile{128, 128, 32}, Precision::tf32).k, 16);
  s.precision = Precision::fp16;
  EXPECT_EQ(dse::costmodel::evaluate_gemm(hw, s).tile.k, 32);
}

TEST(GpuGemm, OpsPerByteRidgeSeparatesMemoryAndComputeBound) {
  GpuHardware hw = toy(32);
  hw.hbm_peak_bandwidth_bytes_per_s = 2e11;
  hw.hbm_achievable_fraction = 0.5;  // 1e11 B/s achievable
  hw.l2_bytes = 1e8;                  // both operands of the cases below fit: read once
  // peak = 2 * 1024 * 32 cores * 1e9 = 6.5536e13 FLOP/s; ridge = 6.5536e13 / 1e11 = 655.36 FLOP/byte
  EXPECT_NEAR(hw.ridge_flops_per_byte(Precision::fp16), 655.36, 1e-9);
  // 4096^3 GEMM: 2*4096^3 / (3 * 4096^2 * 2 B) = 1365 FLOP/byte > ridge: compute bound.
  // compute: 32x32 = 1024 tiles = 32 waves * 128 k-steps * 512 ns = 2.097 ms;
  // HBM: (A + B + C) = 3 * 32 MiB / 1e11 = 1.007 ms.
  const auto big = dse::costmodel::evaluate_gemm(hw, GemmShape{4096, 4096, 4096});
  EXPECT_EQ(big.bottleneck, Bottleneck::compute);
  EXPECT_EQ(big.bottleneck_detail, "compute");
  EXPECT_NEAR(big.compute_time_s, 32 * 128 * kStepS, 1e-12);
  EXPECT_NEAR(big.hbm_time_s, 3.0 * 33554432.0 / 1e11, 1e-9);
  // M = 8: about 2*8*4096*4096 / (4096*4096*2 B) = 8 FLOP/byte << ridge: the
  // 32 MiB B operand streams from HBM: >= 33554432 / 1e11 = 335.5 us, while the
  // (padded) compute is 1 wave * 128 k-steps * 512 ns = 65.5 us.
  const auto skinny = dse::costmodel::evaluate_gemm(hw, GemmShape{8, 4096, 4096});
  EXPECT_EQ(skinny.bottleneck, Bottleneck::memory);
  EXPECT_EQ(skinny.bottleneck_detail, "memory:hbm");
  EXPECT_NEAR(skinny.compute_time_s, 128 * kStepS, 1e-12);
  EXPECT_GE(skinny.latency_s, 33554432.0 / 1e11);
  EXPECT_GT(skinny.memory_stall_fraction, 0.75);  // 1 - 65.5 / >=335.5
}

// L2 reuse across waves (grouped rasterisation). Two cores, 128x128x32 tiles, a
// 1024 x 1024 x 1024 FP16 GEMM: 8 x 8 = 64 tiles, 32 waves of 2, 32 k-steps of
// 32 x 2 B = 64 B per panel row. Within a wave (the old rule) the 2 tiles share one A
// row panel: per k-step (1 x 128 + 2 x 128) x 64 B = 24,576 B; 32 waves x 32 steps =
// 25,165,824 B. An A row panel plus a B column panel over the whole k is
// (128 + 128) x 1024 x 2 B = 524,288 B; an L2 of 2 MiB holds g = 4 pairs, so 4 x 4
// groups of tiles read their panels once: 64 x 524,288 / 4 = 8,388,608 B. The
// operands (4 MiB) do not fit the L2 whole; C adds 1024 x 1024 x 2 = 2,097,152 B.
// With a 512 KiB L2 (g = 1) the grouped count (33,554,432 B) is no better than the
// wave's, which stays.
TEST(GpuGemm, GroupedRasterisationReusesPanelsAcrossWaves) {
  GpuHardware hw = toy(2);
  hw.l2_bytes = 2.0 * 1024 * 1024;
  const auto big = dse::costmodel::evaluate_gemm(hw, GemmShape{1024, 1024, 1024});
  ASSERT_TRUE(big.feasible);
  EXPECT_EQ(big.tile_count, 64);
  EXPECT_DOUBLE_EQ(big.hbm_bytes, 8388608.0 + 2097152.0);
  hw.l2_bytes = 512.0 * 1024;
  const auto small = dse::costmodel::evaluate_gemm(hw, GemmShape{1024, 1024, 1024});
  EXPECT_DOUBLE_EQ(small.hbm_bytes, 25165824.0 + 2097152.0);
}

TEST(GpuElementwise, StreamingKernelIsHbmTimePlusOverhead) {
  GpuHardware hw = toy(4);
  hw.hbm_peak_bandwidth_bytes_per_s = 2e11;
  hw.hbm_achievable_fraction = 0.5;
  hw.l2_bytes = 1024;
  hw.launch_overhead_eager_s = 5e-6;  // gelu_shape() defaults to the eager path
  // 1e6 fp16 elements read + written = 4e6 B / 1e11 B/s = 40 us; + 5 us launch.
  const auto c = dse::costmodel::evaluate_elementwise(hw, dse::costmodel::gelu_shape(1'000'000));
  ASSERT_TRUE(c.feasible);
  EXPECT_NEAR(c.hbm_time_s, 40e-6, 1e-12);
  EXPECT_NEAR(c.latency_s, 45e-6, 1e-12);
  // compute: 7e6 vector FLOPs / (256*4*1e9) = 6.836 us ... plus 1e6 tanh / (16*4*1e9) = 15.625 us
  EXPECT_NEAR(c.compute_time_s, 7e6 / 1.024e12 + 1e6 / 6.4e10, 1e-12);
  EXPECT_NEAR(c.memory_stall_fraction, (45e-6 - c.compute_time_s) / 45e-6, 1e-12);
  EXPECT_EQ(c.bottleneck_detail, "memory:hbm");
  // 1000 elements: 4 kB from HBM = 4e3 / 1e11 = 40 ns (operands start in HBM,
  // whatever the L2 size) << 5 us launch -> overhead bound.
  hw.l2_bytes = 1e6;
  EXPECT_EQ(dse::costmodel::evaluate_elementwise(hw, dse::costmodel::gelu_shape(1000)).bottleneck,
            Bottleneck::overhead);
}

TEST(GpuRows, KernelStructureSetsHbmPassesAndDispatchPathSetsOverhead) {
  using dse::costmodel::DispatchPath;
  GpuHardware hw = toy(4);
  hw.hbm_peak_bandwidth_bytes_per_s = 2e11;
  hw.hbm_achievable_fraction = 0.5;  // 1e11 B/s achievable; L2 bandwidth stays infinite
  hw.launch_overhead_library_s = 1e-6;
  hw.launch_overhead_eager_s = 2e-6;
  hw.launch_overhead_compiled_s = 3e-6;
  // Softmax, 1000 rows of 1024 fp16 (2048 B <= 4096 B, 1024 <= 1024 elements):
  // warp-per-row, one read + one write = 2 * 1000*1024*2 B = 4.096e6 B / 1e11 = 40.96 us.
  // compute: 6 FLOPs * 1.024e6 / (256*4*1e9) = 6 us, + (2*1.024e6 + 1000 rows) exp
  // / (16*4*1e9) = 32.016 us -> 38.016 us < 40.96 us; + 2 us eager overhead.
  const auto one = dse::costmodel::evaluate_softmax(hw, {1000, 1024, Precision::fp16, DispatchPath::eager});
  EXPECT_NEAR(one.hbm_bytes, 4.096e6, 1e-3);
  EXPECT_NEAR(one.latency_s, 40.96e-6 + 2e-6, 1e-12);
  // 1000 rows of 2048: 2048 > 1024 elements -> block-per-row kernel charged
  // two reads + one write = 3 * 4.096e6 B = 12.288e6 B / 1e11 = 122.88 us
  // (compute 12 + 64.016 = 76.016 us is below it); + 2 us.
  const auto two = dse::costmodel::evaluate_softmax(hw, {1000, 2048, Precision::fp16, DispatchPath::eager});
  EXPECT_NEAR(two.hbm_bytes, 12.288e6, 1e-3);
  EXPECT_NEAR(two.latency_s, 122.88e-6 + 2e-6, 1e-12);
  // The fused cross-entropy (flash-attn's xentropy kernel) over the same rows: forward, the
  // max-and-sum pass and the exp-sum pass read each row (2 * 4.096e6 = 8.192e6 B -> 81.92 us)
  // and only a loss and log-sum-exp per row are written; compute 5 * 2.048e6 / 1.024e12 =
  // 10 us + (2.048e6 + 1000) exp / 6.4e10 = 32.016 us -> 42.016 us, below it; + 2 us eager.
  // Backward: one read of the row and one write of its gradient, the same 8.192e6 B; compute
  // 8 + 32 = 40 us; + 2 us.
  const auto ce = dse::costmodel::evaluate_cross_entropy(hw, {1000, 2048, Precision::fp16, DispatchPath::eager}, false);
  EXPECT_NEAR(ce.hbm_bytes, 8.192e6, 1e-3);
  EXPECT_NEAR(ce.latency_s, 81.92e-6 + 2e-6, 1e-12);
  const auto ceb = dse::costmodel::evaluate_cross_entropy(hw, {1000, 2048, Precision::fp16, DispatchPath::eager}, true);
  EXPECT_NEAR(ceb.hbm_bytes, 8.192e6, 1e-3);
  EXPECT_NEAR(ceb.latency_s, 81.92e-6 + 2e-6, 1e-12);
  // Layer norm, compiled, 1000 x 2048 (> 1024: looped reduction): HBM one read
  // + one write = 8.192e6 B -> 81.92 us; the re-read (4.096e6 B) goes to L2
  // (l2_bytes = 3 * 4.096e6); compute 9 * 2.048e6 / 1.024e12 = 18 us; + 3 us.
  const auto ln = dse::costmodel::evaluate_layernorm(hw, {1000, 2048, Precision::fp16, DispatchPath::compiled});
  EXPECT_NEAR(ln.hbm_bytes, 8.192e6, 1e-3);
  EXPECT_NEAR(ln.l2_bytes, 12.288e6, 1e-3);
  EXPECT_NEAR(ln.latency_s, 81.92e-6 + 3e-6, 1e-12);
  EXPECT_NEAR(ln.overhead_s, 3e-6, 1e-15);
  // Its gradient (PyTorch's two CUDA kernels: dX from dY and X, then dgamma / dbeta from dY
  // and X again): four reads + one write = 5 * 4.096e6 = 20.48e6 B -> 204.8 us at 1e11 B/s;
  // compute 11 * 2.048e6 / 1.024e12 = 22 us is below it; + 3 us.
  const auto lnb =
      dse::costmodel::evaluate_layernorm_backward(hw, {1000, 2048, Precision::fp16, DispatchPath::compiled});
  EXPECT_NEAR(lnb.hbm_bytes, 20.48e6, 1e-3);
  EXPECT_NEAR(lnb.latency_s, 204.8e-6 + 3e-6, 1e-12);
  // A GEMM defaults to the library path. With memory made instant again, one
  // 128x128x32 tile is one 512 ns k-step; + 1 us library overhead.
  hw.hbm_peak_bandwidth_bytes_per_s = 1e30;
  hw.hbm_achievable_fraction = 1.0;
  EXPECT_NEAR(dse::costmodel::evaluate_gemm(hw, GemmShape{128, 128, 32}).latency_s, kStepS + 1e-6, 1e-12);
}

TEST(GpuGemm, InfeasibleIsAValue) {
  GpuHardware hw = toy(4);
  hw.gemm_tiles.clear();
  const auto c = dse::costmodel::evaluate_gemm(hw, GemmShape{128, 128, 128});
  EXPECT_FALSE(c.feasible);
  EXPECT_EQ(c.reason, GpuCheck::no_tiles);
  hw = toy(4);
  hw.sram_bytes_per_core = 1024;  // 2 stages * (128+128)*32*2 B = 32 KiB do not fit
  EXPECT_FALSE(dse::costmodel::evaluate_gemm(hw, GemmShape{128, 128, 128}).feasible);
}

// The kernel's tile order (GemmTile::group_m, Tensile's WorkGroupMapping). Four
// cores, 128x128x32 tiles, 512 x 512 x 32 FP16: 4 x 4 = 16 tiles, 4 waves of 4,
// one k-step whose panel rows are 32 x 2 B = 64 B. Row by row a wave is 1 tile
// row x 4 columns: (1 x 128 + 4 x 128) x 64 B = 40,960 B per wave, 163,840 B in
// all. In groups of 2 tile rows a wave is 2 x 2: (2 x 128 + 2 x 128) x 64 B =
// 32,768 B, 131,072 B in all. Groups of 4 make a wave 4 rows x 1 column: 40,960
// B again. The L2 (16,384 B) holds one A + B panel pair, so grouping across
// waves adds nothing (16 x 16,384 = 262,144 B), and the operands (65,536 B) do
// not fit it; C adds 512 x 512 x 2 = 524,288 B.
TEST(GpuGemm, TileOrderSetsThePanelsAWaveShares) {
  GpuHardware hw = toy(4);
  hw.l2_bytes = 16384;
  const GemmShape s{512, 512, 32};
  const auto rows = dse::costmodel::evaluate_gemm_with_tile(hw, s, GemmTile{128, 128, 32, 1});
  const auto pairs = dse::costmodel::evaluate_gemm_with_tile(hw, s, GemmTile{128, 128, 32, 2});
  const auto column = dse::costmodel::evaluate_gemm_with_tile(hw, s, GemmTile{128, 128, 32, 4});
  ASSERT_TRUE(rows.feasible && pairs.feasible && column.feasible);
  EXPECT_DOUBLE_EQ(rows.hbm_bytes, 163840.0 + 524288.0);
  EXPECT_DOUBLE_EQ(pairs.hbm_bytes, 131072.0 + 524288.0);
  EXPECT_DOUBLE_EQ(column.hbm_bytes, 163840.0 + 524288.0);
}

// A library selection table: the kernel of the nearest tuned size (Euclidean
// over m, n, batch, k), the earlier entry on a tie, nothing for another
// precision; its split runs as evaluate_gemm_split with the entry's tile.
TEST(GpuLibrary, NearestTunedSizeSetsTheKernel) {
  GpuHardware hw = toy(1);
  dse::costmodel::GemmLibraryEntry small;
  small.m = small.n = small.k = 128;
  small.tile = GemmTile{128, 128, 32, 1};
  small.solution = 5;
  small.order = 0;
  dse::costmodel::GemmLibraryEntry big = small;
  big.m = big.n = big.k = 1024;
  big.tile = GemmTile{64, 64, 32, 1};
  big.solution = 9;
  big.order = 1;
  dse::costmodel::GemmLibraryEntry split = small;  // same distance from (576, 576, 576) as `big`
  split.m = split.n = split.k = 128;
  split.split_k = 2;
  split.solution = 11;
  split.order = 2;
  hw.gemm_library = {small, big, split};
  EXPECT_EQ(dse::costmodel::library_kernel(hw, GemmShape{100, 100, 100})->solution, 5);
  EXPECT_EQ(dse::costmodel::library_kernel(hw, GemmShape{900, 900, 900})->solution, 9);
  // (576, 576, 576) is 448 from 128 and from 1024 on every axis: a tie of
  // `small` (order 0), `big` (1) and `split` (2) -> the first.
  EXPECT_EQ(dse::costmodel::library_kernel(hw, GemmShape{576, 576, 576})->solution, 5);
  GemmShape bf{100, 100, 100};
  bf.precision = Precision::bf16;
  EXPECT_EQ(dse::costmodel::library_kernel(hw, bf), nullptr);
  const auto c = dse::costmodel::evaluate_gemm(hw, GemmShape{900, 900, 900});
  EXPECT_EQ(c.library_solution, 9);
  EXPECT_EQ(c.tile, (GemmTile{64, 64, 32, 1}));
  // Only the split entry left: 128 x 128 x 64 in 2 slices of k = 32 run as a
  // batch of 2 on the one core: 2 waves x 1 k-step x 512 ns. HBM: A and B of the
  // sliced GEMM (2 x 128 x 32 x 2 B each, 32,768 B, all fit L2), C of both slices
  // (2 x 128 x 128 x 2 B = 65,536 B) and the fp32 partial sums written and read
  // back (2 x 4 B x 2 slices x 128 x 128 = 262,144 B).
  hw.gemm_library = {split};
  const auto sc = dse::costmodel::evaluate_gemm(hw, GemmShape{128, 128, 64});
  EXPECT_EQ(sc.library_solution, 11);
  EXPECT_EQ(sc.bottleneck_detail, "split_k=2");
  EXPECT_DOUBLE_EQ(sc.hbm_bytes, 32768.0 + 65536.0 + 262144.0);
  EXPECT_NEAR(sc.compute_time_s, 2 * kStepS, 1e-12);
  EXPECT_DOUBLE_EQ(sc.flops, 2.0 * 128 * 128 * 64);
}

// index_gemm_library (the k-d tree) answers exactly as the full scan does,
// ties included: a deterministic pseudo-random table of 600 sizes on a coarse
// grid (many equal distances) and 3,000 queries.
TEST(GpuLibrary, IndexedLookupEqualsTheFullScan) {
  GpuHardware hw = toy(1);
  std::uint64_t x = 12345;
  const auto next = [&x](std::int64_t mod) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::int64_t>((x >> 33) % static_cast<std::uint64_t>(mod));
  };
  for (int i = 0; i < 600; ++i) {
    dse::costmodel::GemmLibraryEntry e;
    e.m = 64 * (1 + next(16));
    e.n = 64 * (1 + next(16));
    e.batch = 1 + next(3);
    e.k = 64 * (1 + next(16));
    e.tile = GemmTile{128, 128, 32, 1};
    e.solution = i;
    e.order = i;
    hw.gemm_library.push_back(e);
  }
  GpuHardware indexed = hw;
  dse::costmodel::index_gemm_library(indexed);
  ASSERT_TRUE(indexed.gemm_library_indexed);
  for (int q = 0; q < 3000; ++q) {
    GemmShape s{32 * (1 + next(40)), 32 * (1 + next(40)), 32 * (1 + next(40))};
    s.batch = 1 + next(4);
    const auto* a = dse::costmodel::library_kernel(hw, s);
    const auto* b = dse::costmodel::library_kernel(indexed, s);
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    ASSERT_EQ(a->solution, b->solution) << s.m << "x" << s.n << "x" << s.k << " batch " << s.batch;
  }
}

}  // namespace
