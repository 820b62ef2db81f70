// Mapper speed: one transformer-size GEMM on the 4-level GPU-class hierarchy
// (scenarios/hardware/gpu-4level.yaml), cold (no memo) and as a memo hit, and
// the Eyeriss-like VGG02 layer 5 under its own constraints (Timeloop oracle 06).
// Targets (issue 5): <= 1 ms cold, <= 1 us memo hit, <= 1 s Eyeriss.
#include <benchmark/benchmark.h>

#include <string>

#include "costmodel/mapper/memo.hpp"
#include "dse/io/timeloop_reader.hpp"
#include "dse/io/timeloop_writer.hpp"

namespace lp = dse::costmodel::loopnest;
namespace mp = dse::costmodel::mapper;

namespace {

const lp::Architecture& gpu() {
  static const lp::Architecture a = dse::io::read_loopnest_hardware(std::string(DSE_SOURCE_DIR) + "/scenarios/hardware/gpu-4level.yaml");
  return a;
}

void gemm_args(benchmark::internal::Benchmark* b) {
  b->Args({4096, 4096, 4096})->Args({2048, 12288, 4096})->Args({2048, 4096, 11008});
}

void BM_MapGemmGpuCold(benchmark::State& state) {
  const lp::Problem p = lp::make_gemm(state.range(0), state.range(1), state.range(2), 16);
  mp::MapperOptions o;
  o.objective = mp::Objective::latency;
  double evals = 0.0, cycles = 0.0;
  for (auto _ : state) {
    const mp::MapResult r = mp::map_operator(gpu(), p, mp::Constraints{}, o);
    evals = static_cast<double>(r.evaluated);
    cycles = r.objective_value;
    benchmark::DoNotOptimize(r.objective_value);
  }
  state.counters["evaluated"] = evals;
  state.counters["cycles"] = cycles;  // the objective found (same before and after pruning)
}
BENCHMARK(BM_MapGemmGpuCold)->Apply(gemm_args)->Unit(benchmark::kMicrosecond)->Repetitions(5)->ReportAggregatesOnly(true);

void BM_MapGemmGpuMemoHit(benchmark::State& state) {
  const lp::Problem p = lp::make_gemm(state.range(0), state.range(1), state.range(2), 16);
  mp::MapperOptions o;
  o.objective = mp::Objective::latency;
  mp::MapperCache cache;
  cache.map(gpu(), p, mp::Constraints{}, o);
  for (auto _ : state) {
    const mp::MapResult r = cache.map(gpu(), p, mp::Constraints{}, o);
    benchmark::DoNotOptimize(r.objective_value);
  }
  state.counters["hits"] = static_cast<double>(cache.hits());
}
BENCHMARK(BM_MapGemmGpuMemoHit)->Apply(gemm_args)->Unit(benchmark::kNanosecond)->Repetitions(5)->ReportAggregatesOnly(true);

void BM_MapEyerissVgg02Layer5(benchmark::State& state) {
  const std::string d = std::string(DSE_ORACLES_DIR) + "/timeloop/06-eyeriss-vgg02-layer5/";
  lp::Architecture a = dse::io::read_timeloop_arch(d + "eyeriss_like.yaml");
  dse::io::read_timeloop_ert(d + "ERT.yaml", a);
  const lp::Problem p = dse::io::read_timeloop_problem(d + "VGG02_layer5.yaml");
  const mp::Constraints c = dse::io::read_timeloop_constraints(d + "eyeriss_like.yaml", "", a, p);
  mp::MapperOptions o;
  double fj = 0.0, evals = 0.0;
  for (auto _ : state) {
    const mp::MapResult r = mp::map_operator(a, p, c, o);
    fj = r.cost.energy_j * 1e15 / r.cost.macs;
    evals = static_cast<double>(r.evaluated);
    benchmark::DoNotOptimize(fj);
  }
  state.counters["fJ_per_MAC"] = fj;
  state.counters["evaluated"] = evals;
}
BENCHMARK(BM_MapEyerissVgg02Layer5)->Unit(benchmark::kMillisecond)->Repetitions(5)->ReportAggregatesOnly(true);

}  // namespace

BENCHMARK_MAIN();
