// Search-side overheads: archive insert throughput and NSGA-II cost per generation
// (selection + offspring creation, evaluation excluded), random draw rate.
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>
#include <vector>

#include "search/constraint_archive.hpp"
#include "search/dominance_filter.hpp"
#include "search/nondominated_sort.hpp"
#include "search/nsga2.hpp"
#include "search/pareto.hpp"
#include "search/random_sampler.hpp"

namespace {

using dse::search::Sense;

// Points of a latency/energy-like trade-off: objectives on a noisy front
// (shape 0: independent uniform values; shape 1: near a convex front), metrics
// partly correlated with the objectives.
std::vector<std::vector<double>> make_points(std::size_t n, std::size_t dims, int shape, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<std::vector<double>> pts(n, std::vector<double>(dims));
  for (auto& p : pts) {
    const double t = u(rng);
    for (std::size_t j = 0; j < dims; ++j) {
      if (shape == 0) {
        p[j] = u(rng);
      } else {
        const double base = j % 2 == 0 ? t : 1.0 - std::sqrt(t);
        p[j] = base + 0.3 * u(rng);
      }
    }
  }
  return pts;
}

void BM_ConstraintArchiveInsert(benchmark::State& state) {
  const auto objectives = static_cast<std::size_t>(state.range(0));
  const auto metrics = static_cast<std::size_t>(state.range(1));
  const int shape = static_cast<int>(state.range(2));
  const std::size_t n = 100000;
  const auto pts = make_points(n, objectives + metrics, shape, 1);
  std::size_t archived = 0;
  for (auto _ : state) {
    dse::search::ConstraintArchive a(std::vector<Sense>(objectives, Sense::minimize), metrics);
    for (std::size_t i = 0; i < n; ++i) {
      a.insert(i, std::span(pts[i]).first(objectives), std::span(pts[i]).subspan(objectives));
    }
    archived = a.size();
    benchmark::DoNotOptimize(archived);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
  state.counters["archive_size"] = static_cast<double>(archived);
}
BENCHMARK(BM_ConstraintArchiveInsert)
    ->ArgNames({"obj", "metrics", "shape"})
    ->Args({2, 0, 0})->Args({2, 2, 0})->Args({2, 2, 1})->Args({4, 4, 1})
    ->Unit(benchmark::kMillisecond);

// The dominance filters under an archive's flush and a cross-rank archive merge: rows of 4
// objectives and 4 metrics near a front (shape 1, 18% of them kept). nondominated_rows over
// `rows` rows; rows_not_removed_by of `rows` candidates against
// `rows` other removers.
std::vector<double> flat_keys(std::size_t n, std::size_t dims, std::uint64_t seed) {
  std::vector<double> k;
  for (const auto& p : make_points(n, dims, 1, seed)) k.insert(k.end(), p.begin(), p.end());
  return k;
}

void BM_NondominatedRows(benchmark::State& state) {
  const auto rows = static_cast<std::size_t>(state.range(0));
  const auto keys = flat_keys(rows, 8, 3);
  std::size_t kept = 0;
  for (auto _ : state) {
    kept = dse::search::nondominated_rows(keys, 8, 4).size();
    benchmark::DoNotOptimize(kept);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * rows));
  state.counters["kept"] = static_cast<double>(kept);
}
BENCHMARK(BM_NondominatedRows)->Arg(262144)->Unit(benchmark::kMillisecond);

void BM_RowsNotRemovedBy(benchmark::State& state) {
  const auto rows = static_cast<std::size_t>(state.range(0));
  const auto candidates = flat_keys(rows, 8, 4);
  const auto removers = flat_keys(rows, 8, 5);
  std::size_t kept = 0;
  for (auto _ : state) {
    kept = dse::search::rows_not_removed_by(candidates, removers, 8, 4).size();
    benchmark::DoNotOptimize(kept);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * rows));
  state.counters["kept"] = static_cast<double>(kept);
}
BENCHMARK(BM_RowsNotRemovedBy)->Arg(262144)->Unit(benchmark::kMillisecond);

void BM_ParetoArchiveInsert(benchmark::State& state) {
  const auto dims = static_cast<std::size_t>(state.range(0));
  const std::size_t n = 100000;
  const auto pts = make_points(n, dims, 1, 1);
  std::size_t archived = 0;
  for (auto _ : state) {
    dse::search::ParetoArchive a(std::vector<Sense>(dims, Sense::minimize));
    for (std::size_t i = 0; i < n; ++i) a.insert(i, pts[i]);
    archived = a.size();
    benchmark::DoNotOptimize(archived);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * n));
  state.counters["archive_size"] = static_cast<double>(archived);
}
BENCHMARK(BM_ParetoArchiveInsert)->Arg(2)->Arg(4)->Unit(benchmark::kMillisecond);

// One NSGA-II generation on a 6-knob space (ZDT1-shaped objectives): the tell() that
// completes a batch runs selection and builds the next offspring. Evaluation untimed.
void BM_Nsga2Generation(benchmark::State& state) {
  const auto population = static_cast<std::size_t>(state.range(0));
  const dse::search::DesignSpace space({{"a", 1025}, {"b", 1025}, {"c", 1025}, {"d", 1025}, {"e", 1025}, {"f", 1025}});
  dse::search::Nsga2Options o;
  o.population = population;
  o.generations = 1000000;
  const auto eval = [&](std::uint64_t id) {
    const auto d = space.decode(id);
    double s = 0;
    for (std::size_t i = 1; i < d.size(); ++i) s += static_cast<double>(d[i]) / 1024.0;
    const double f1 = static_cast<double>(d[0]) / 1024.0;
    const double g = 1.0 + 9.0 * s / 5.0;
    return dse::search::Evaluation{id, {f1, g * (1.0 - std::sqrt(f1 / g))}, {}, true};
  };
  dse::search::Nsga2Sampler s(space, {Sense::minimize, Sense::minimize}, o);
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<dse::search::Evaluation> results;
    for (auto id : s.ask(population * 2)) results.push_back(eval(id));
    state.ResumeTiming();
    s.tell(results);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * population));
}
BENCHMARK(BM_Nsga2Generation)->Arg(100)->Arg(400)->Arg(1000)->Unit(benchmark::kMicrosecond);

// The non-dominated sort of one selection pool (n points, m objectives, all feasible; range(2):
// make_points' shape): ENS-SS (constrained_fronts) against Deb's pairwise sort. n = 500 and 626 are
// the pools of islands of 250 and 313 (population 4,000 in 16 islands, 10,000 in 32), m = 4 the
// accelerator sweep's objectives.
template <bool kPairwise>
void BM_Fronts(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto m = static_cast<std::size_t>(state.range(1));
  std::vector<double> obj;
  for (const auto& p : make_points(n, m, static_cast<int>(state.range(2)), 7)) obj.insert(obj.end(), p.begin(), p.end());
  const std::vector<double> viol(n, 0.0);
  for (auto _ : state) {
    auto f = kPairwise ? dse::search::constrained_fronts_pairwise(obj, m, viol)
                       : dse::search::constrained_fronts(obj, m, viol);
    benchmark::DoNotOptimize(f.data());
  }
}
void BM_FrontsEnsSs(benchmark::State& state) { BM_Fronts<false>(state); }
void BM_FrontsPairwise(benchmark::State& state) { BM_Fronts<true>(state); }
BENCHMARK(BM_FrontsEnsSs)->Args({500, 4, 0})->Args({500, 4, 1})->Args({626, 4, 1})->Args({500, 2, 1})->Args({2000, 4, 1})->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_FrontsPairwise)->Args({500, 4, 0})->Args({500, 4, 1})->Args({626, 4, 1})->Args({500, 2, 1})->Args({2000, 4, 1})->Unit(benchmark::kMicrosecond);

void BM_RandomSamplerDraw(benchmark::State& state) {
  const dse::search::RandomSampler s(std::uint64_t{1} << 40, std::uint64_t{1} << 40, 7,
                                     state.range(0) == 0 ? dse::search::Replacement::without
                                                         : dse::search::Replacement::with);
  std::uint64_t k = 0;
  for (auto _ : state) benchmark::DoNotOptimize(s.sample(k++));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_RandomSamplerDraw)->Arg(0)->Arg(1);

}  // namespace

BENCHMARK_MAIN();
