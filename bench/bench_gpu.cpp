// GPU-class evaluate() of one GEMM (issue 4: at least 1 million per second on
// one core), on the shipped A100 preset (scenarios/hardware/a100-sxm4-80gb.yaml,
// read once before timing), so the figure follows the preset's tile list.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "costmodel/gpu.hpp"
#include "dse/gpu_hardware_reader.hpp"

namespace {

dse::costmodel::GpuHardware a100() {
  return dse::io::load_gpu_hardware(DSE_SOURCE_DIR "/scenarios/hardware/a100-sxm4-80gb.yaml");
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

// The MI210 preset's FP16 GEMMs go through rocBLAS's selection table (3,169
// tuned sizes, nearest by Euclidean distance: a k-d tree lookup per call, laid
// out by the reader's index_gemm_library).
void BM_GpuEvaluateGemmMi210Library(benchmark::State& state) {
  const auto hw = dse::io::load_gpu_hardware(DSE_SOURCE_DIR "/scenarios/hardware/mi210.yaml");
  std::int64_t m = 64;
  for (auto _ : state) {
    const auto c = dse::costmodel::evaluate_gemm(hw, {m, 12288, 12288});
    benchmark::DoNotOptimize(c.latency_s);
    m = m == 32768 ? 64 : m * 2;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_GpuEvaluateGemmMi210Library);

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
