// `dse shortlist` on a front of 10^5 and 10^6 rows (issue 58 item 8: on a 2-million-row front
// `dse shortlist` ran past 60 s and `--top 100000` took 33 s): the front itself (every row on it,
// one workload, the four default objectives), the first 20, and the table and CSV written to a
// discarding stream.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <ostream>
#include <streambuf>
#include <vector>

#include "dse/h5/shortlist.hpp"

namespace {

// Rows on the plane u + v + w + z = 1 of the four minimised keys (1 - throughput, latency,
// energy, risk): no row dominates another.
std::vector<dse::PointRecord> front_rows(std::size_t n) {
  std::vector<dse::PointRecord> rows(n);
  std::uint64_t x = 88172645463325252ULL;
  auto next = [&] {  // xorshift64
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return static_cast<double>(x >> 11) * 0x1.0p-53;
  };
  for (std::size_t i = 0; i < n; ++i) {
    const double u = next();
    const double v = next() * (1.0 - u);
    const double w = next() * (1.0 - u - v);
    auto& r = rows[i];
    r.index = i;
    r.feasible = 1;
    r.throughput_samples_per_s = 1.0 - u;
    r.latency_s = v;
    r.p99_latency_s = v;
    r.energy_per_sample_j = w;
    r.engineering_risk = 1.0 - u - v - w;
  }
  return rows;
}

class NullBuffer : public std::streambuf {
 protected:
  int overflow(int c) override { return c; }
  std::streamsize xsputn(const char* /*s*/, std::streamsize n) override { return n; }
};

void BM_ShortlistWholeFront(benchmark::State& state) {
  const auto rows = front_rows(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(dse::shortlist(rows, {}, dse::default_objectives(), 0));
  }
}
BENCHMARK(BM_ShortlistWholeFront)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ShortlistTop20(benchmark::State& state) {
  const auto rows = front_rows(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) {
    benchmark::DoNotOptimize(dse::shortlist(rows, {}, dse::default_objectives(), 20));
  }
}
BENCHMARK(BM_ShortlistTop20)->Arg(100000)->Arg(1000000)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_WriteShortlist(benchmark::State& state) {
  const auto rows = front_rows(static_cast<std::size_t>(state.range(0)));
  std::vector<std::size_t> all(rows.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  NullBuffer sink;
  std::ostream out(&sink);
  const auto format = state.range(1) == 0 ? dse::ShortlistFormat::table : dse::ShortlistFormat::csv;
  for (auto _ : state) dse::write_shortlist(rows, all, {}, dse::default_objectives(), format, out);
}
BENCHMARK(BM_WriteShortlist)->Args({1000000, 0})->Args({1000000, 1})->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
