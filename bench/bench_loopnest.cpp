// evaluate() throughput: a 1024^3 GEMM on a 4-level hierarchy (DRAM, shared
// buffer, per-PE buffer, per-PE registers) whose shared buffer fans out to a
// 16 x 16 PE mesh (M along X, N along Y). Run:
//   build/release/bench/bench_loopnest --benchmark_repetitions=5
#include <benchmark/benchmark.h>

#include "costmodel/loopnest/evaluate.hpp"

namespace lp = dse::costmodel::loopnest;

namespace {

lp::Architecture make_arch() {
  lp::Architecture a;
  auto level = [](const char* name, std::int64_t cap, std::int64_t mx, std::int64_t my, double e) {
    lp::StorageLevel s;
    s.name = name;
    s.capacity_words = cap;
    s.mesh_x = mx;
    s.mesh_y = my;
    s.read_energy_j = s.fill_energy_j = s.update_energy_j = e;
    s.read_bandwidth_words_per_cycle = 64;
    return s;
  };
  a.levels = {level("DRAM", 0, 1, 1, 64e-12), level("SharedBuffer", 1 << 20, 1, 1, 6e-12),
              level("PEBuffer", 4096, 16, 16, 1e-12), level("Registers", 64, 16, 16, 0.1e-12)};
  a.compute.mesh_x = 16;
  a.compute.mesh_y = 16;
  a.compute.rates[0].energy_per_mac_j = 0.2e-12;
  return a;
}

lp::Mapping make_mapping(const lp::Architecture& a, const lp::Problem& p) {
  lp::Mapping m = lp::make_empty_mapping(a, p);
  m.levels[0].temporal = {4, 4, 4, 1, 1, 1, 1, 1};
  m.levels[0].order = {0, 1, 2, 3, 4, 5, 6, 7};
  m.levels[1].temporal = {2, 2, 8, 1, 1, 1, 1, 1};
  m.levels[1].order = {2, 0, 1, 3, 4, 5, 6, 7};
  m.levels[1].spatial = {16, 16, 1, 1, 1, 1, 1, 1};
  m.levels[1].axis = {lp::Axis::x, lp::Axis::y};
  m.levels[2].temporal = {4, 4, 4, 1, 1, 1, 1, 1};
  m.levels[2].order = {0, 1, 2, 3, 4, 5, 6, 7};
  m.levels[3].temporal = {2, 2, 8, 1, 1, 1, 1, 1};
  m.levels[1].double_buffer = true;
  return m;
}

// The headline figure: evaluate(PreparedNest, Mapping), the form a mapper uses
// for the many mappings of one operator on one architecture (prepare() once).
void BM_EvaluateGemm4Level2D(benchmark::State& state) {
  const lp::Architecture a = make_arch();
  const lp::Problem p = lp::make_gemm(1024, 1024, 1024);  // dims M, N, K
  const lp::Mapping m = make_mapping(a, p);
  const lp::PreparedNest pn = lp::prepare(a, p);
  double sink = 0.0;
  for (auto _ : state) {
    const lp::NestCost r = lp::evaluate(pn, m);
    sink += r.energy_j;
    benchmark::DoNotOptimize(sink);
  }
  if (!lp::evaluate(pn, m).feasible) state.SkipWithError("mapping infeasible");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EvaluateGemm4Level2D);

// evaluate(Architecture, Problem, Mapping): prepare() on every call.
void BM_EvaluateGemm4Level2DUnprepared(benchmark::State& state) {
  const lp::Architecture a = make_arch();
  const lp::Problem p = lp::make_gemm(1024, 1024, 1024);
  const lp::Mapping m = make_mapping(a, p);
  double sink = 0.0;
  for (auto _ : state) {
    const lp::NestCost r = lp::evaluate(a, p, m);
    sink += r.energy_j;
    benchmark::DoNotOptimize(sink);
  }
  if (!lp::evaluate(a, p, m).feasible) state.SkipWithError("mapping infeasible");
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EvaluateGemm4Level2DUnprepared);

}  // namespace

BENCHMARK_MAIN();
