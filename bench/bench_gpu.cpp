// GPU-class evaluate() of one GEMM (issue 4: at least 1 million per second on
// one core), on the shipped A100 preset (scenarios/hardware/a100-sxm4-80gb.yaml,
// read once before timing), so the figure follows the preset's tile list.
#include <benchmark/benchmark.h>

#include <cstdint>

#include "costmodel/gpu/gpu.hpp"
#include "costmodel/platform/evaluate.hpp"
#include "costmodel/workload/presets.hpp"
#include "dse/io/gpu_hardware_reader.hpp"
#include "dse/io/platform_reader.hpp"

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

// One step of a whole model (evaluate_graph: every operator lowered, the fusion walk, the
// totals) on the shipped H100 preset, with a fresh kernel cache each time as one `dse eval`
// runs it. Arg 0: Llama-2-70B training, 4,096 tokens, TP 8, FlashAttention-2 under
// aggressive fusion (the fused attention kernels forward and backward, with causal
// scheduling); arg 1: ResNet-50 inference, batch 32, aggressive (conv stages, epilogues).
void BM_EvaluateGraph(benchmark::State& state) {
  namespace pf = dse::costmodel::platform;
  namespace wl = dse::costmodel::workload;
  const pf::Platform p = dse::io::load_platform(DSE_SOURCE_DIR "/scenarios/hardware/h100-sxm5.yaml");
  const bool llm = state.range(0) == 0;
  wl::WorkloadSpec spec = *wl::workload_preset(llm ? "llama2-70b" : "resnet50");
  pf::EvalOptions o;
  o.fusion = pf::FusionStrategy::aggressive;
  o.phase.phase = llm ? wl::Phase::training : wl::Phase::prefill;
  o.phase.batch = llm ? 1 : 32;
  o.phase.seq = llm ? 4096 : 1;
  if (llm) {
    std::get<wl::TransformerSpec>(spec).tensor_parallel = 8;
    o.attention_kernel = pf::AttentionKernel::flash2;
  }
  const wl::OperatorGraph g = wl::build_graph(spec, o.phase);
  for (auto _ : state) {
    const pf::GraphEval e = pf::evaluate_graph(p, g, o);
    benchmark::DoNotOptimize(e.totals.latency_s);
  }
  state.SetLabel(llm ? "llama2-70b train tp8 flash2" : "resnet50 b32 inference");
}
BENCHMARK(BM_EvaluateGraph)->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
