// GPU-class evaluate() of one GEMM (issue 4: at least 1 million per second on
// one core). The A100 description is built inline from the same datasheet
// figures as scenarios/hardware/a100-sxm4-80gb.yaml so that the benchmark
// needs no YAML.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "costmodel/gpu.hpp"

namespace {

dse::costmodel::GpuHardware a100() {
  using dse::costmodel::GemmTile;
  using dse::costmodel::Precision;
  dse::costmodel::GpuHardware hw;
  hw.name = "a100-sxm4-80gb";
  hw.core_count = 108;
  hw.clock_hz = 1.41e9;
  hw.matrix_macs_per_cycle_per_core[static_cast<std::size_t>(Precision::fp16)] = 1024;
  hw.vector_fp32_flops_per_cycle_per_core = 128;
  hw.vector_fp16_flops_per_cycle_per_core = 512;
  hw.special_function_ops_per_cycle_per_core = 16;
  hw.sram_bytes_per_core = 166912;
  hw.l2_bytes = 41943040;
  hw.l2_bandwidth_bytes_per_s = 7.2192e12;
  hw.hbm_bytes = 85899345920.0;
  hw.hbm_peak_bandwidth_bytes_per_s = 2.039e12;
  hw.hbm_achievable_fraction = 0.8;
  hw.hbm_latency_s = 5e-7;
  hw.launch_overhead_library_s = 2.1e-5;
  hw.launch_overhead_eager_s = 1.2e-5;
  hw.launch_overhead_compiled_s = 4.5e-5;
  hw.eager_softmax_single_pass_max_row_elements = 1024;
  hw.eager_softmax_single_pass_max_row_bytes = 4096;
  hw.compiled_reduction_single_pass_max_row_elements = 1024;
  hw.gemm_pipeline_stages = 3;
  hw.gemm_tiles = {GemmTile{256, 128, 32}, GemmTile{128, 256, 32}, GemmTile{256, 64, 32},
                   GemmTile{64, 256, 32},  GemmTile{128, 128, 32}, GemmTile{128, 64, 32},
                   GemmTile{64, 128, 32},  GemmTile{64, 64, 32},   GemmTile{128, 128, 64},
                   GemmTile{64, 64, 64}};
  return hw;
}

void BM_GpuEvaluateGemm(benchmark::State& state) {
  const auto hw = a100();
  std::int64_t m = 64;
  for (auto _ : state) {
    const auto c = dse::costmodel::evaluate_gemm(hw, {m, 12288, 12288});
    benchmark::DoNotOptimize(c.latency_s);
    m = m == 32768 ? 64 : m * 2;  // walk the shapes so nothing is cached
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_GpuEvaluateGemm);

void BM_GpuEvaluateSoftmax(benchmark::State& state) {
  const auto hw = a100();
  for (auto _ : state) {
    const auto c = dse::costmodel::evaluate_softmax(hw, {4096, 4096});
    benchmark::DoNotOptimize(c.latency_s);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_GpuEvaluateSoftmax);

}  // namespace

BENCHMARK_MAIN();
