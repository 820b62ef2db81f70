// Speed of scenarios/next-gen-chip.yaml's points (issue 55): a served Llama-3-70B point on a
// GPU-class chip whose figures `overrides:` changed, evaluated as `dse run` evaluates it
// (dse/driver/run.hpp evaluate_point: the latency table up to the cap, the static-batch sweep,
// the simulation of 400 requests at the rate, power at the wall, risk, cost). Target: at least
// 200 points/s on one core. The points are taken across the whole design space (every 7th index,
// wrapping), so every override combination's pre-read chip and system is used.
// Also timed: reading the scenario, which reads every combination's chip and system once.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>

#include "dse/driver/run.hpp"
#include "dse/io/scenario.hpp"

namespace {

const std::string kScenario = std::string(DSE_SOURCE_DIR) + "/scenarios/next-gen-chip.yaml";

void BM_NextGenChipServedPoint(benchmark::State& state) {
  const dse::Scenario s = dse::load_scenario(kScenario);
  const dse::search::DesignSpace space = dse::design_space(s);
  std::uint64_t i = 0;
  std::int64_t feasible = 0;
  for (auto _ : state) {
    const dse::PointRecord r = dse::evaluate_point(s, space, i);
    feasible += r.feasible;
    benchmark::DoNotOptimize(r);
    i = (i + 7) % space.size();
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["feasible_share"] = static_cast<double>(feasible) / static_cast<double>(state.iterations());
}
BENCHMARK(BM_NextGenChipServedPoint)->Unit(benchmark::kMillisecond)->MinTime(5.0);

void BM_NextGenChipScenarioRead(benchmark::State& state) {
  for (auto _ : state) {
    const dse::Scenario s = dse::load_scenario(kScenario);
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK(BM_NextGenChipScenarioRead)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
