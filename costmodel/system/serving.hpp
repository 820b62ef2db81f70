// Inference serving: a latency-throughput sweep over batch size, and a
// discrete-event simulation of one model instance under Poisson load with
// static (timeout) or continuous batching, giving p50/p95/p99 of time to
// first token and end-to-end latency, and the largest arrival rate whose p99
// meets an SLA (bisection). Pure: no I/O, no globals; deterministic for a
// seed on every platform (own RNG and transforms, no std::*_distribution).
//
// Conventions shared by the sweep and the simulation:
//  * The prefill of a batch produces each request's first token: TTFT ends
//    when the prefill ends. A request of O output tokens then needs O - 1
//    decode steps; it completes after its last one (end-to-end latency).
//  * Latencies come from a LatencyModel: prefill_s(batch, prompt_tokens) and
//    decode_step_s(batch, context_tokens), for one model instance (which may
//    span several chips). A batch's prefill uses its longest prompt.
//  * Tokens/s count output tokens.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "costmodel/system/collectives.hpp"

namespace dse::costmodel::system {

// ---------------------------------------------------------------- random numbers
// SplitMix64 (Steele, Lea & Flood 2014), used to seed; xoshiro256** (Blackman &
// Vigna 2018) for the streams. Both are integer-only, so identical everywhere.
std::uint64_t splitmix64(std::uint64_t& state) noexcept;

class Rng {
 public:
  explicit Rng(std::uint64_t seed) noexcept;
  std::uint64_t next() noexcept;
  double uniform() noexcept;              // [0, 1), 53 random bits
  double exponential(double mean) noexcept;  // -mean ln(1 - u)
  double standard_normal() noexcept;      // Box-Muller, one value per call

 private:
  std::uint64_t s_[4];
};

// ---------------------------------------------------------------- request lengths
struct LengthDistribution {
  enum class Kind { fixed, uniform, lognormal, exponential, empirical };
  Kind kind = Kind::fixed;
  double a = 1.0;  // fixed: value; uniform: low; lognormal: median; exponential: mean
  double b = 0.0;  // uniform: high (inclusive); lognormal: sigma of ln(length)
  int min_tokens = 1;
  int max_tokens = 1 << 30;
  // empirical: lengths and the cumulative share of requests up to each (increasing, the
  // last 1); a draw is the first length whose cumulative share exceeds a uniform number.
  std::vector<int> values;
  std::vector<double> cumulative;

  static LengthDistribution fixed(int tokens) noexcept;
  static LengthDistribution uniform(int low, int high) noexcept;
  // round(median * exp(sigma * Z)), Z standard normal, clamped to [min, max].
  static LengthDistribution lognormal(double median, double sigma, int min_tokens,
                                      int max_tokens) noexcept;
  // round(-mean ln(1 - U)), clamped to [min, max]: service times proportional to it
  // are (up to rounding) exponential, which the M/M/1 checks use.
  static LengthDistribution exponential(double mean, int min_tokens, int max_tokens) noexcept;
  // A histogram: lengths (any order, each >= 1) and their counts or weights (>= 0, not all 0).
  // Empty (a fixed length of 1 with no values) when the histogram is not valid.
  static LengthDistribution empirical(const std::vector<int>& lengths, const std::vector<double>& weights);

  int sample(Rng& rng) const noexcept;
  // The length the sweep uses: fixed value, (low+high)/2, median*exp(sigma^2/2)
  // (the lognormal mean), exponential mean, the histogram's mean; rounded and clamped.
  int nominal() const noexcept;
  // The shortest and longest lengths a draw can give.
  int lowest() const noexcept;
  int highest() const noexcept;
};

// ---------------------------------------------------------------- latency model
struct LatencyModel {
  std::function<double(int batch, int prompt_tokens)> prefill_s;
  std::function<double(int batch, int context_tokens)> decode_step_s;
};

// A table of measured or modelled latencies, bilinear in (batch, length) between
// grid points and clamped to the grid's edges. Row-major: [batch][length].
struct LatencyTable {
  std::vector<int> batches;   // increasing
  std::vector<int> lengths;   // increasing (prompt for prefill, context for decode)
  std::vector<double> prefill_s;
  std::vector<double> decode_step_s;
};
bool valid(const LatencyTable& t) noexcept;
double interpolate(const LatencyTable& t, const std::vector<double>& values, int batch,
                   int length) noexcept;
// A LatencyModel reading a (copied) table; check valid(t) first.
LatencyModel latency_model_from_table(LatencyTable t);

// A serving stack's runtime overhead per scheduler iteration (each prefill and each decode
// step): the host-side work the accelerators wait for between steps (scheduling, sampling,
// detokenisation, the framework's own launches), step_s + per_sequence_s x the iteration's
// sequences. Its figures and their sources live in the stack files (scenarios/stacks/).
struct ServingStack {
  std::string name = "none";
  std::string file;  // where its figures were read from (provenance); "" when built in
  double step_s = 0.0;
  double per_sequence_s = 0.0;
  // The kernel of its tensor-parallel all-reduces (collectives.hpp AllReduceKernel); a custom
  // kernel serves buffers up to tp_all_reduce_max_bytes (0: any size), the library the larger.
  AllReduceKernel tp_all_reduce = AllReduceKernel::library;
  double tp_all_reduce_max_bytes = 0.0;
  [[nodiscard]] double overhead_s(int batch) const noexcept {
    return step_s + per_sequence_s * static_cast<double>(batch);
  }
};

// ---------------------------------------------------------------- sweep
struct SweepConfig {
  std::vector<int> batch_sizes;
  int prompt_tokens = 128;
  int output_tokens = 128;
  int chips_per_instance = 1;
  int instances = 1;  // replicas in the system
};

struct SweepPoint {
  int batch = 0;
  double ttft_s = 0.0;   // prefill(batch, prompt)
  double tpot_s = 0.0;   // mean of decode_step(batch, prompt + i), i = 1 .. O-1
  double e2e_s = 0.0;    // ttft + (O - 1) tpot
  double tokens_per_s_system = 0.0;    // instances * batch * O / e2e
  double tokens_per_s_per_chip = 0.0;
  double requests_per_s_system = 0.0;  // instances * batch / e2e
  double requests_per_s_per_chip = 0.0;
};

// One static batch of `batch` identical requests, all starting together.
std::vector<SweepPoint> latency_throughput_sweep(const LatencyModel& model,
                                                 const SweepConfig& config);

// ---------------------------------------------------------------- simulation
// static_timeout: when the server is free it starts a batch of the waiting
//   requests (up to max_batch, arrival order) as soon as max_batch are waiting
//   or the oldest has waited batch_timeout_s; the batch runs its prefill and
//   max(O) - 1 decode steps at the full batch size (padded), and only then
//   frees the server.
// continuous: iteration-level scheduling (Orca, vLLM): before each iteration,
//   if requests wait and slots are free, admit up to the free slots and run
//   their prefill (prefill first; decode waits); else run one decode step of
//   all running requests at the batch's mean context (rounded). Finished
//   requests leave at once and free their slots.
enum class BatchingPolicy { static_timeout, continuous };
std::string_view to_string(BatchingPolicy p);

struct SimulationConfig {
  // Poisson arrivals to the whole system. With `instances` replicas and random
  // dispatch each replica sees a Poisson stream of rate / instances (thinning),
  // so one replica is simulated at that rate and its figures scaled.
  double arrival_rate_per_s = 1.0;
  int requests = 10000;         // simulated (per replica)
  int warmup_requests = 0;      // the first ones, left out of the statistics
  std::uint64_t seed = 1;
  BatchingPolicy policy = BatchingPolicy::continuous;
  int max_batch = 8;
  double batch_timeout_s = 0.0;  // static_timeout only
  LengthDistribution prompt = LengthDistribution::fixed(128);
  LengthDistribution output = LengthDistribution::fixed(128);
  int instances = 1;
  int chips_per_instance = 1;
};

// Percentiles by linear interpolation between order statistics (NumPy's default):
// q-th of sorted x[0..n-1] is x[h] + (h - floor h)(x[h+1] - x[h]) at h = q (n - 1).
struct LatencyStats {
  double mean_s = 0.0;
  double p50_s = 0.0;
  double p90_s = 0.0;
  double p95_s = 0.0;
  double p99_s = 0.0;
};
double percentile(std::vector<double>& values, double q);  // sorts values; q in [0, 1]

enum class SimulationStatus { ok, invalid_config, no_measured_requests };
std::string_view to_string(SimulationStatus s);

struct SimulationResult {
  bool feasible = true;
  SimulationStatus status = SimulationStatus::ok;
  int measured_requests = 0;
  LatencyStats ttft;        // arrival -> first token
  // Time per output token of each request of two or more output tokens: (last token - first
  // token) / (output tokens - 1), as MLPerf Inference's LoadGen computes TPOT per query.
  LatencyStats tpot;
  LatencyStats e2e;         // arrival -> last token (time in system)
  LatencyStats queue_wait;  // arrival -> start of the request's prefill
  double mean_batch = 0.0;          // requests per prefill (static) / per decode step (continuous)
  double utilisation = 0.0;         // busy time / simulated time
  double tokens_per_s_system = 0.0;    // output tokens / simulated time, times instances
  double tokens_per_s_per_chip = 0.0;
  double requests_per_s_system = 0.0;
  double requests_per_s_per_chip = 0.0;
};

SimulationResult simulate_serving(const LatencyModel& model, const SimulationConfig& config);

// ---------------------------------------------------------------- SLA
enum class SlaMetric { ttft_p99, tpot_p99, e2e_p99 };

// Bounds on the p99 latencies under load; a rate meets them when every bound given holds.
struct SlaBounds {
  std::optional<double> ttft_p99_s;
  std::optional<double> tpot_p99_s;
  std::optional<double> e2e_p99_s;
  [[nodiscard]] bool any() const noexcept { return ttft_p99_s || tpot_p99_s || e2e_p99_s; }
  [[nodiscard]] bool met_by(const SimulationResult& r) const noexcept;
};

struct SlaSearch {
  bool found = false;          // false when even a vanishing rate misses the bound
  double max_rate_per_s = 0.0; // largest system arrival rate found whose p99 <= bound
  SimulationResult at_max;
  int simulations = 0;
};

// Bisection on the arrival rate (same seed at every rate, so arrivals scale
// exactly with 1/rate): the bracket starts at the capacity of a full static batch
// of nominal lengths and doubles until the bound is missed, then halves until
// hi - lo <= relative_tolerance * hi. config.arrival_rate_per_s is ignored.
SlaSearch max_rate_meeting_sla(const LatencyModel& model, const SimulationConfig& config,
                               const SlaBounds& bounds, double relative_tolerance = 1e-3);
// One bound on one metric.
SlaSearch max_rate_meeting_sla(const LatencyModel& model, const SimulationConfig& config,
                               SlaMetric metric, double bound_s,
                               double relative_tolerance = 1e-3);

}  // namespace dse::costmodel::system
