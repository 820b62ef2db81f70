// Speed of `dse run`'s loop-nest points (issue 55, "What it must show"): a ResNet-50
// inference point on an Eyeriss-like loop-nest chip through the scenario layer
// (dse::evaluate_point: the variant decoded, the overrides applied, every operator lowered,
// each convolution and the classifier mapped by the project's mapper under the entry's
// evaluation budget, the vector unit's operators costed). Targets: >= 20 points/s on one
// core cold (every operator mapped: a fresh memo per point), >= 2,000 points/s when only
// knobs that leave the architecture alone change (the objective here: every operator a
// memo hit). items_per_second is points per second on one thread.
#include <benchmark/benchmark.h>

#include <string>

#include "dse/driver/run.hpp"
#include "dse/io/scenario.hpp"

namespace {

// ResNet-50 (the workload preset) at batch 1 on eyeriss-like, the three objectives as a knob
// and the global buffer's capacity as an override; mapper_evaluations as the argument.
std::string scenario_text(std::int64_t evaluations) {
  return "name: bench-chips\n"
         "hardware:\n"
         "  - name: eyeriss\n"
         "    kind: loopnest\n"
         "    architecture: eyeriss-like\n"
         "    objective: {choices: [energy, latency, edp]}\n"
         "    mapper_evaluations: " +
         std::to_string(evaluations) +
         "\n"
         "    process_nm: 65\n"
         "    overrides:\n"
         "      levels.shared_glb.capacity_words: {choices: [27648, 55296, 110592]}\n"
         "workloads:\n"
         "  - {name: resnet50, model: resnet50, phase: inference}\n"
         "batch_sizes: [1]\n";
}

// Cold: each point on a fresh memo, so each of its distinct operators is mapped.
void BM_LoopnestResNet50PointCold(benchmark::State& state) {
  dse::Scenario s = dse::parse_scenario(scenario_text(state.range(0)), "bench-chips.yaml");
  const dse::search::DesignSpace space = dse::design_space(s);
  double latency_s = 0.0;
  std::uint64_t i = 0;
  for (auto _ : state) {
    state.PauseTiming();
    dse::chips::share_memo(s);  // a new, empty memo
    state.ResumeTiming();
    const dse::PointRecord r = dse::evaluate_point(s, space, i++ % space.size());
    latency_s += r.latency_s;
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["mean_latency_ms"] = 1e3 * latency_s / static_cast<double>(state.iterations());
}
BENCHMARK(BM_LoopnestResNet50PointCold)->Arg(1000)->Arg(3000)->Arg(10000)->Unit(benchmark::kMillisecond);

// Warm: the points of one architecture under the three objectives, every operator a memo hit.
void BM_LoopnestResNet50PointMemoHit(benchmark::State& state) {
  const dse::Scenario s = dse::parse_scenario(scenario_text(3000), "bench-chips.yaml");
  const dse::search::DesignSpace space = dse::design_space(s);
  for (std::uint64_t i = 0; i < 3; ++i) (void)dse::evaluate_point(s, space, i);  // the objective varies fastest
  std::uint64_t i = 0;
  for (auto _ : state) benchmark::DoNotOptimize(dse::evaluate_point(s, space, i++ % 3).latency_s);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LoopnestResNet50PointMemoHit)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
