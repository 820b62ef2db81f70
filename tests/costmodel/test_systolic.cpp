// Hand-checked small cases of the systolic-array model. Every expected number
// is derived in the comment next to it from SCALE-Sim's counting rules
// (data/oracles/scalesim/README.md and the header of costmodel/systolic/systolic.hpp).
#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <sstream>
#include <string>

#include "costmodel/systolic/systolic.hpp"

namespace dse::costmodel {
namespace {

SystolicArray tiny(Dataflow d) {
  SystolicArray a;
  a.rows = 4;
  a.cols = 4;
  a.dataflow = d;  // 64 KiB SRAMs, CALC bandwidth (defaults)
  return a;
}

TEST(Systolic, LoweringUsesScalesimCeilRounding) {
  // AlexNet conv1: E = ceil((224 - 11 + 4) / 4) = ceil(54.25) = 55; T = 11*11*3 = 363.
  const auto s = lower(ConvLayer{224, 224, 11, 11, 3, 96, 4, 4});
  EXPECT_EQ(s.ofmap_h, 55);
  EXPECT_EQ(s.ofmap_px, 3025);
  EXPECT_EQ(s.window, 363);
  EXPECT_EQ(s.macs, 3025LL * 363 * 96);
  // GEMM M=128, N=64, K=256 -> Sr = 128 pixels, T = 256, Sc = 64.
  const auto g = lower(gemm_as_conv(128, 64, 256));
  EXPECT_EQ(g.ofmap_px, 128);
  EXPECT_EQ(g.window, 256);
  EXPECT_EQ(g.filters, 64);
}

TEST(Systolic, FoldPlanPerDataflow) {
  const auto g = lower(gemm_as_conv(128, 64, 256));
  SystolicArray a;  // 32 x 32
  a.dataflow = Dataflow::weight_stationary;  // T=256 on rows: 8 folds; Sc=64 on cols: 2
  EXPECT_EQ(fold_plan(a, g).folds(), 16);
  a.dataflow = Dataflow::output_stationary;  // Sr=128 on rows: 4; Sc=64 on cols: 2
  EXPECT_EQ(fold_plan(a, g).folds(), 8);
  a.dataflow = Dataflow::input_stationary;  // T=256 on rows: 8; Sr=128 on cols: 4
  EXPECT_EQ(fold_plan(a, g).folds(), 32);
}

TEST(Systolic, TinyWeightStationary) {
  // 4x4 array, GEMM 4x4x4: one fold. Fold length = R (weight load) + R + C + P - 2
  // = 4 + 4 + 4 + 4 - 2 = 14 rows; SCALE-Sim's total is the index of the last
  // row: 13. Overall util = 64 MACs / (13 * 16) = 30.769 %. Compute util =
  // 16 PEs * 4 rows streamed / (16 * (14 + 4 - 1)) = 4/17 = 23.529 %.
  const auto r = simulate_scalesim(tiny(Dataflow::weight_stationary), gemm_as_conv(4, 4, 4));
  EXPECT_EQ(r.total_cycles, 13);
  EXPECT_EQ(r.stall_cycles, 0);
  EXPECT_NEAR(r.overall_util_pct, 100.0 * 64 / (13 * 16), 1e-9);
  EXPECT_NEAR(r.mapping_eff_pct, 100.0, 1e-9);
  EXPECT_NEAR(r.compute_util_pct, 100.0 * 4 / 17, 1e-9);
  // SRAM: every operand word once (one fold); DRAM: 16 distinct words each,
  // all inside the first 655-word set of a 64 KiB buffer; ofmap drains 4
  // full lines of 4 words at the end.
  EXPECT_EQ(r.sram_ifmap_reads, 16);
  EXPECT_EQ(r.sram_filter_reads, 16);
  EXPECT_EQ(r.sram_ofmap_writes, 16);
  EXPECT_EQ(r.dram_ifmap_reads, 16);
  EXPECT_EQ(r.dram_filter_reads, 16);
  EXPECT_EQ(r.dram_ofmap_writes, 16);
}

TEST(Systolic, TinyOutputStationary) {
  // Fold length = T + R + C - 2 = 4 + 4 + 4 - 2 = 10 rows -> total 9.
  // SCALE-Sim adds (R + C) per fold to the ofmap SRAM writes: 16 + 8 = 24.
  const auto r = simulate_scalesim(tiny(Dataflow::output_stationary), gemm_as_conv(4, 4, 4));
  EXPECT_EQ(r.total_cycles, 9);
  EXPECT_EQ(r.sram_ofmap_writes, 24);
  EXPECT_EQ(r.sram_ifmap_reads, 16);
  // Compute util = 16 * 4 / (16 * ((T - 1 + R) + C - 1)) = 4 / 10.
  EXPECT_NEAR(r.compute_util_pct, 40.0, 1e-9);
}

TEST(Systolic, TinyInputStationary) {
  // Fold length = 2R + C + K - 2 = 8 + 4 + 4 - 2 = 14 -> total 13.
  const auto r = simulate_scalesim(tiny(Dataflow::input_stationary), gemm_as_conv(4, 4, 4));
  EXPECT_EQ(r.total_cycles, 13);
  EXPECT_EQ(r.sram_ifmap_reads, 16);
  EXPECT_EQ(r.sram_filter_reads, 16);
  EXPECT_EQ(r.sram_ofmap_writes, 16);
}

TEST(Systolic, PartialFoldsLowerMappingEfficiency) {
  // ws, 4x4 array, GEMM M=4, N=6, K=4: Sc = 6 on 4 columns -> col folds 4 + 2.
  // Mapping efficiency = mean(16/16, 8/16) = 75 %.
  const auto r = simulate_scalesim(tiny(Dataflow::weight_stationary), gemm_as_conv(4, 6, 4));
  EXPECT_EQ(r.folds, 2);
  EXPECT_NEAR(r.mapping_eff_pct, 75.0, 1e-9);
  EXPECT_EQ(r.total_cycles, 2 * 14 - 1);
}

TEST(Systolic, LimitedBandwidthStallsAndNeverSpeedsUp) {
  // A 64-word ifmap through a 1-word/cycle interface with a 64-byte SRAM
  // cannot keep a 4x4 array busy: stalls appear, and total = stall-free + stalls.
  SystolicArray a = tiny(Dataflow::weight_stationary);
  const auto free_run = simulate_scalesim(a, gemm_as_conv(16, 4, 4));
  a.bandwidth_mode = DramBandwidthMode::limited;
  a.dram_words_per_cycle = 1;
  a.ifmap_sram_bytes = a.filter_sram_bytes = a.ofmap_sram_bytes = 64;
  const auto limited = simulate_scalesim(a, gemm_as_conv(16, 4, 4));
  EXPECT_GT(limited.stall_cycles, 0);
  EXPECT_EQ(limited.total_cycles, free_run.total_cycles + limited.stall_cycles);
  EXPECT_GE(limited.dram_ifmap_reads, 64);  // at least the compulsory 16*4 words
}

TEST(Systolic, NativeEstimateCountsCompulsoryTrafficWhenOperandsFit) {
  // GEMM 128x64x256 ws with 64 KiB SRAMs: ifmap 128*256 = 32768 words, equal
  // to the 32768-word active half, so it is read once; filter 256*64 = 16384,
  // ofmap 128*64 = 8192. Cycles = 16 folds * 222 rows, no stalls (CALC).
  SystolicArray a;
  const auto r = estimate_systolic(a, gemm_as_conv(128, 64, 256));
  EXPECT_EQ(r.dram_ifmap_reads, 32768);
  EXPECT_EQ(r.dram_filter_reads, 16384);
  EXPECT_EQ(r.dram_ofmap_writes, 8192);
  EXPECT_EQ(r.total_cycles, 16 * 222);
  // With 10 words/cycle and 8 KiB SRAMs the ifmap (4096-word active half) is
  // re-streamed once per column fold: 2 * 32768 words, 6554 cycles > 3552.
  a.bandwidth_mode = DramBandwidthMode::limited;
  a.ifmap_sram_bytes = a.filter_sram_bytes = a.ofmap_sram_bytes = 8192;
  const auto u = estimate_systolic(a, gemm_as_conv(128, 64, 256));
  EXPECT_EQ(u.dram_ifmap_reads, 65536);
  EXPECT_EQ(u.total_cycles, 6554);
  EXPECT_EQ(u.stall_cycles, 6554 - 3552);
}


// ---- The fold-level simulate_scalesim() against the row-by-row replay ----
// simulate_scalesim_reference() replays SCALE-Sim's request rows one at a
// time and matches every oracle case (tests/validation/test_scalesim.cpp);
// the fast path must give exactly the same numbers, every field, on random
// small problems: all three dataflows, CALC and USER, SRAMs from 2 words
// (below SCALE-Sim's 100-set granularity) to a few thousand, interface
// widths 1..12 words per cycle, GEMMs and convolutions.

std::string describe(const SystolicArray& a, const ConvLayer& l) {
  std::ostringstream o;
  o << to_string(a.dataflow) << ' ' << a.rows << 'x' << a.cols << " sram " << a.ifmap_sram_bytes << '/'
    << a.filter_sram_bytes << '/' << a.ofmap_sram_bytes << (a.bandwidth_mode == DramBandwidthMode::limited ? " USER bw " : " CALC bw ")
    << a.dram_words_per_cycle << " conv H" << l.ifmap_h << " W" << l.ifmap_w << " R" << l.filter_h << " S"
    << l.filter_w << " C" << l.channels << " K" << l.num_filters << " s" << l.stride_h << ',' << l.stride_w;
  return o.str();
}

// Returns the number of differing fields (each reported).
int compare_all_fields(const SystolicResult& f, const SystolicResult& r, const std::string& what) {
  int bad = 0;
  auto eq = [&](std::int64_t x, std::int64_t y, const char* name) {
    if (x != y) {
      ++bad;
      ADD_FAILURE() << what << ": " << name << " fast " << x << " reference " << y;
    }
  };
  eq(f.total_cycles, r.total_cycles, "total_cycles");
  eq(f.stall_cycles, r.stall_cycles, "stall_cycles");
  eq(f.macs, r.macs, "macs");
  eq(f.folds, r.folds, "folds");
  eq(f.sram_ifmap_reads, r.sram_ifmap_reads, "sram_ifmap_reads");
  eq(f.sram_filter_reads, r.sram_filter_reads, "sram_filter_reads");
  eq(f.sram_ofmap_writes, r.sram_ofmap_writes, "sram_ofmap_writes");
  eq(f.dram_ifmap_reads, r.dram_ifmap_reads, "dram_ifmap_reads");
  eq(f.dram_filter_reads, r.dram_filter_reads, "dram_filter_reads");
  eq(f.dram_ofmap_writes, r.dram_ofmap_writes, "dram_ofmap_writes");
  eq(f.sram_ifmap_start, r.sram_ifmap_start, "sram_ifmap_start");
  eq(f.sram_ifmap_stop, r.sram_ifmap_stop, "sram_ifmap_stop");
  eq(f.sram_filter_start, r.sram_filter_start, "sram_filter_start");
  eq(f.sram_filter_stop, r.sram_filter_stop, "sram_filter_stop");
  eq(f.sram_ofmap_start, r.sram_ofmap_start, "sram_ofmap_start");
  eq(f.sram_ofmap_stop, r.sram_ofmap_stop, "sram_ofmap_stop");
  eq(f.dram_ifmap_start, r.dram_ifmap_start, "dram_ifmap_start");
  eq(f.dram_ifmap_stop, r.dram_ifmap_stop, "dram_ifmap_stop");
  eq(f.dram_filter_start, r.dram_filter_start, "dram_filter_start");
  eq(f.dram_filter_stop, r.dram_filter_stop, "dram_filter_stop");
  eq(f.dram_ofmap_start, r.dram_ofmap_start, "dram_ofmap_start");
  eq(f.dram_ofmap_stop, r.dram_ofmap_stop, "dram_ofmap_stop");
  // Same formulas on the same integers: the percentages are bit-identical.
  if (f.overall_util_pct != r.overall_util_pct || f.mapping_eff_pct != r.mapping_eff_pct ||
      f.compute_util_pct != r.compute_util_pct) {
    ++bad;
    ADD_FAILURE() << what << ": percentages differ";
  }
  return bad;
}

TEST(SystolicFastPath, MatchesReferenceOnRandomLayers) {
  std::mt19937_64 rng(0x5ca1e5);
  auto uni = [&](std::int64_t lo, std::int64_t hi) { return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng); };
  const Dataflow flows[3] = {Dataflow::weight_stationary, Dataflow::output_stationary, Dataflow::input_stationary};
  int fast = 0, overlap_fast = 0, overlap_replay = 0, failures = 0;
  for (int n = 0; n < 9000 && failures < 5; ++n) {
    SystolicArray a;
    a.rows = uni(1, 9);
    a.cols = uni(1, 9);
    a.dataflow = flows[n % 3];
    a.bandwidth_mode = (n / 3) % 2 == 0 ? DramBandwidthMode::unconstrained : DramBandwidthMode::limited;
    a.dram_words_per_cycle = uni(1, 12);
    // Mostly small SRAMs so that windows rotate, epochs shift and drains stall.
    auto sram = [&] { return uni(0, 3) == 0 ? uni(100, 5000) : uni(2, 400); };
    a.ifmap_sram_bytes = sram();
    a.filter_sram_bytes = sram();
    a.ofmap_sram_bytes = sram();
    ConvLayer l;
    const std::int64_t kind = uni(0, 2);
    if (kind == 0) {
      l = gemm_as_conv(uni(1, 40), uni(1, 40), uni(1, 40));
    } else if (kind == 1) {
      // conv with overlapping windows (stride < filter in at least one
      // direction), in bounds: the fold-level path when the ifmap buffer
      // stays in its first window, the replay otherwise.
      l.filter_h = uni(1, 4);
      l.filter_w = uni(2, 4);
      l.stride_h = uni(1, l.filter_h);
      l.stride_w = uni(1, l.filter_w - 1);
      const std::int64_t e = uni(1, 6), f = uni(1, 6);
      // Sometimes a few more rows / columns than the windows cover: SCALE-Sim's
      // ceil rounding then adds windows that read past the edge (empty requests).
      // (and now and then whole output rows that start past the edge)
      l.ifmap_h = (e - 1) * l.stride_h + l.filter_h + (uni(0, 3) == 0 ? uni(1, l.stride_h) : 0);
      if (uni(0, 7) == 0) l.stride_h = l.filter_h + uni(1, 2);
      l.ifmap_w = (f - 1) * l.stride_w + l.filter_w + (uni(0, 3) == 0 ? uni(1, l.stride_w) : 0);
      l.channels = uni(1, 3);
      l.num_filters = uni(1, 12);
      // Larger SRAMs a third of the time so that USER windows hold the whole ifmap.
      if (uni(0, 2) == 0) a.ifmap_sram_bytes = uni(100, 3000);
    } else {  // conv: non-overlapping windows (fast path) most of the time
      l.filter_h = uni(1, 3);
      l.filter_w = uni(1, 3);
      l.stride_h = l.filter_h + uni(uni(0, 4) == 0 ? -1 : 0, 1);
      l.stride_w = l.filter_w + uni(0, 1);
      l.stride_h = std::max<std::int64_t>(1, l.stride_h);
      const std::int64_t e = uni(1, 5), f = uni(1, 5);
      l.ifmap_h = (e - 1) * l.stride_h + l.filter_h + (uni(0, 5) == 0 ? uni(0, l.stride_h) : 0);
      l.ifmap_w = (f - 1) * l.stride_w + l.filter_w;
      l.channels = uni(1, 3);
      l.num_filters = uni(1, 12);
    }
    if (scalesim_fast_path_applies(a, l)) ++fast;
    if (kind == 1) ++(scalesim_fast_path_applies(a, l) ? overlap_fast : overlap_replay);
    const auto got = simulate_scalesim(a, l);
    const auto want = simulate_scalesim_reference(a, l);
    if (compare_all_fields(got, want, describe(a, l)) > 0) ++failures;
  }
  EXPECT_EQ(failures, 0);
  EXPECT_GT(fast, 6000) << "too few cases took the fold-level path";
  // Both regimes of overlapping convolutions are exercised.
  EXPECT_GT(overlap_fast, 1000) << "overlapping convs on the fold-level path";
  EXPECT_GT(overlap_replay, 100) << "overlapping convs that must be replayed";
  std::printf("fold-level path: %d of 9000 cases; overlapping convs: %d fold-level, %d replayed\n", fast,
              overlap_fast, overlap_replay);
}

TEST(SystolicFastPath, GemmsTakeTheFastPathOverlappingConvsWhenTheIfmapStaysInItsFirstWindow) {
  EXPECT_TRUE(scalesim_fast_path_applies(gemm_as_conv(128, 64, 256)));
  // 1x1 and non-overlapping 2x2/2 convolutions read each ifmap word once per fold.
  EXPECT_TRUE(scalesim_fast_path_applies(ConvLayer{8, 8, 1, 1, 4, 8, 1, 1}));
  EXPECT_TRUE(scalesim_fast_path_applies(ConvLayer{8, 8, 2, 2, 4, 8, 2, 2}));
  // AlexNet conv1 (11x11, stride 4) overlaps: not on every array ...
  const ConvLayer alex{224, 224, 11, 11, 3, 96, 4, 4};
  EXPECT_FALSE(scalesim_fast_path_applies(alex));
  // ... on a 64 KiB CALC ifmap SRAM its 224 * 224 * 3 = 150528 covered words
  // pass the first epoch of 50 * floor(65536 / 100) = 32750 insertions: replay;
  SystolicArray small;
  EXPECT_FALSE(scalesim_fast_path_applies(small, alex));
  // on 6 MiB (epoch 50 * 62914 = 3145700 words) it stays in the first epoch.
  SystolicArray tpu;
  tpu.rows = tpu.cols = 256;
  tpu.ifmap_sram_bytes = tpu.filter_sram_bytes = 6144 * 1024;
  tpu.ofmap_sram_bytes = 2048 * 1024;
  EXPECT_TRUE(scalesim_fast_path_applies(tpu, alex));
  compare_all_fields(simulate_scalesim(tpu, alex), simulate_scalesim_reference(tpu, alex), describe(tpu, alex));
  // 3x3/2 on 8 rows: E = ceil((8 - 3 + 2) / 2) = 4 rows, the last reading row 9 > 7.
  EXPECT_FALSE(scalesim_fast_path_applies(ConvLayer{8, 8, 3, 3, 1, 1, 3, 3}) &&
               scalesim_fast_path_applies(ConvLayer{8, 8, 3, 3, 1, 1, 2, 2}));
}

TEST(SystolicFastPath, MatchesReferenceOnLargerGemms) {
  // A few realistic shapes on 32x32 and 16x8 arrays, CALC and USER.
  const ConvLayer layers[] = {gemm_as_conv(128, 64, 256), gemm_as_conv(100, 70, 300), gemm_as_conv(64, 512, 96)};
  const Dataflow flows[3] = {Dataflow::weight_stationary, Dataflow::output_stationary, Dataflow::input_stationary};
  for (const auto& l : layers) {
    for (const Dataflow d : flows) {
      for (const bool user : {false, true}) {
        for (const std::int64_t kib : {2, 8, 64}) {
          SystolicArray a;
          a.rows = user ? 16 : 32;
          a.cols = user ? 8 : 32;
          a.dataflow = d;
          a.bandwidth_mode = user ? DramBandwidthMode::limited : DramBandwidthMode::unconstrained;
          a.dram_words_per_cycle = 4;
          a.ifmap_sram_bytes = a.filter_sram_bytes = a.ofmap_sram_bytes = kib * 1024;
          compare_all_fields(simulate_scalesim(a, l), simulate_scalesim_reference(a, l), describe(a, l));
        }
      }
    }
  }
}

}  // namespace
}  // namespace dse::costmodel
