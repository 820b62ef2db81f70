// Building workload graphs: Llama-2-70B decode (the graph the evaluator walks for
// every hardware point), with and without tensor parallelism, plus its footprint;
// and a training step. Evaluation with the mapper comes later (dse eval).
#include <benchmark/benchmark.h>

#include "costmodel/workload/footprint.hpp"
#include "costmodel/workload/presets.hpp"

namespace wl = dse::costmodel::workload;

namespace {

void BM_Llama2_70bDecodeGraph(benchmark::State& state) {
  auto spec = std::get<wl::TransformerSpec>(*wl::workload_preset("llama2-70b"));
  spec.tensor_parallel = state.range(0);
  wl::PhaseSpec ph;
  ph.phase = wl::Phase::decode;
  ph.batch = 32;
  ph.context = 4096;
  for (auto _ : state) {
    const wl::OperatorGraph g = wl::build_graph(spec, ph);
    const wl::MemoryFootprint f = wl::memory_footprint(g, ph);
    benchmark::DoNotOptimize(f.total_bytes());
  }
}
BENCHMARK(BM_Llama2_70bDecodeGraph)->Arg(1)->Arg(8)->Unit(benchmark::kMicrosecond);

void BM_Llama2_70bDecodeFromPreset(benchmark::State& state) {
  wl::PhaseSpec ph;
  ph.phase = wl::Phase::decode;
  ph.batch = 32;
  ph.context = 4096;
  for (auto _ : state) {
    const wl::OperatorGraph g = wl::build_graph(*wl::workload_preset("llama2-70b"), ph);
    benchmark::DoNotOptimize(wl::totals(g).flops);
  }
}
BENCHMARK(BM_Llama2_70bDecodeFromPreset)->Unit(benchmark::kMicrosecond);

void BM_Llama2_70bTrainingGraph(benchmark::State& state) {
  wl::PhaseSpec ph;
  ph.phase = wl::Phase::training;
  ph.batch = 8;
  ph.seq = 4096;
  ph.recompute = true;
  const auto spec = *wl::workload_preset("llama2-70b");
  for (auto _ : state) {
    const wl::OperatorGraph g = wl::build_graph(spec, ph);
    benchmark::DoNotOptimize(wl::memory_footprint(g, ph).total_bytes());
  }
}
BENCHMARK(BM_Llama2_70bTrainingGraph)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
