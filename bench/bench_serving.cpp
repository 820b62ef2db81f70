// Serving evaluation speed (issue 7): a latency-throughput sweep over 8 batch sizes
// plus p50/p95/p99 at one arrival rate from 10,000 simulated requests, for a
// Llama-2-70B-like model on an 8-chip system. Target: under 20 ms on one core.
//
// The latency table is a plain roofline, built here (and inside the timed loop):
//   model   70e9 parameters in FP16 (140e9 bytes of weights), 80 layers,
//           d_model 8192, grouped-query attention with 8 KV heads of 128:
//           KV cache 2 (K,V) * 80 * 1024 * 2 B = 327,680 B per token.
//   system  8 chips x 3.35e12 B/s = 26.8e12 B/s and 8 x 989e12 = 7.912e15 FLOP/s
//           (H100-SXM-like figures), tensor parallel, communication not modelled.
//   prefill(b, P): flops = 2 * 70e9 * b P + 4 * 80 * 8192 * b P^2 / 2 (causal attention),
//                  bytes = 140e9 + b P * 327,680 (KV written)
//   decode(b, C):  flops = 2 * 70e9 * b + 4 * 80 * 8192 * b C,
//                  bytes = 140e9 + b C * 327,680 (KV read)
//   latency = max(flops / peak, bytes / bandwidth).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <vector>

#include "costmodel/system/serving.hpp"

namespace cs = dse::costmodel::system;

namespace {

constexpr double kParams = 70e9;
constexpr double kWeightBytes = 2.0 * kParams;  // FP16
constexpr double kLayers = 80.0;
constexpr double kModelDim = 8192.0;
constexpr double kKvBytesPerToken = 2.0 * kLayers * 8.0 * 128.0 * 2.0;
constexpr int kChips = 8;
constexpr double kBandwidth = kChips * 3.35e12;
constexpr double kPeakFlops = kChips * 989e12;

double roofline_s(double flops, double bytes) {
  return std::max(flops / kPeakFlops, bytes / kBandwidth);
}

cs::LatencyTable llama70b_table() {
  cs::LatencyTable t;
  t.batches = {1, 2, 4, 8, 16, 32, 64, 128};
  t.lengths = {64, 128, 256, 512, 1024, 2048, 4096};
  for (const int b : t.batches) {
    for (const int len : t.lengths) {
      const double bd = b;
      const double l = len;
      t.prefill_s.push_back(roofline_s(
          2.0 * kParams * bd * l + 4.0 * kLayers * kModelDim * bd * l * l / 2.0,
          kWeightBytes + bd * l * kKvBytesPerToken));
      t.decode_step_s.push_back(roofline_s(2.0 * kParams * bd + 4.0 * kLayers * kModelDim * bd * l,
                                           kWeightBytes + bd * l * kKvBytesPerToken));
    }
  }
  return t;
}

cs::SimulationConfig load_config() {
  cs::SimulationConfig c;
  c.arrival_rate_per_s = 20.0;
  c.requests = 10000;
  c.seed = 7;
  c.policy = cs::BatchingPolicy::continuous;
  c.max_batch = 64;
  c.prompt = cs::LengthDistribution::lognormal(512.0, 0.5, 16, 4096);
  c.output = cs::LengthDistribution::uniform(64, 256);
  c.chips_per_instance = kChips;
  return c;
}

void BM_ServingEvaluation(benchmark::State& state) {
  cs::SweepConfig sweep;
  sweep.batch_sizes = {1, 2, 4, 8, 16, 32, 64, 128};
  sweep.prompt_tokens = 512;
  sweep.output_tokens = 128;
  sweep.chips_per_instance = kChips;
  const cs::SimulationConfig load = load_config();
  cs::SimulationResult last;
  std::vector<cs::SweepPoint> points;
  for (auto _ : state) {
    const cs::LatencyModel model = cs::latency_model_from_table(llama70b_table());
    points = cs::latency_throughput_sweep(model, sweep);
    last = cs::simulate_serving(model, load);
    benchmark::DoNotOptimize(points.data());
    benchmark::DoNotOptimize(last);
  }
  state.counters["ttft_p99_ms"] = 1e3 * last.ttft.p99_s;
  state.counters["e2e_p50_s"] = last.e2e.p50_s;
  state.counters["e2e_p99_s"] = last.e2e.p99_s;
  state.counters["tok_per_s"] = last.tokens_per_s_system;
  state.counters["mean_batch"] = last.mean_batch;
  state.counters["b64_tpot_ms"] = 1e3 * points[6].tpot_s;
  state.counters["b64_tok_per_s"] = points[6].tokens_per_s_system;
}
BENCHMARK(BM_ServingEvaluation)->Unit(benchmark::kMillisecond);

// Not part of the 20 ms target: the bisection for the largest rate whose p99 TTFT
// stays under 2 s (about 15-25 simulations of 10,000 requests).
void BM_MaxRateAtSla(benchmark::State& state) {
  const cs::LatencyModel model = cs::latency_model_from_table(llama70b_table());
  const cs::SimulationConfig load = load_config();
  cs::SlaSearch s;
  for (auto _ : state) {
    s = cs::max_rate_meeting_sla(model, load, cs::SlaMetric::ttft_p99, 2.0, 1e-2);
    benchmark::DoNotOptimize(s);
  }
  state.counters["max_rate_per_s"] = s.max_rate_per_s;
  state.counters["simulations"] = s.simulations;
}
BENCHMARK(BM_MaxRateAtSla)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
