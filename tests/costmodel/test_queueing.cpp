// The serving simulation against queueing closed forms, plus the sweep, the RNG,
// percentiles, batching policies at light load, and the SLA bisection.
#include <gtest/gtest.h>

#include <cmath>

#include "costmodel/system/serving.hpp"

namespace cs = dse::costmodel::system;

namespace {

// One request = one "prefill" of P tokens at 1e-4 s per token and a single output
// token (no decode step), served one at a time: a single-server FIFO queue whose
// service time is 1e-4 * P seconds.
constexpr double kSecondsPerToken = 1e-4;
constexpr double kMeanTokens = 10000.0;  // mean service 1 s: mu = 1 / s

cs::LatencyModel linear_prefill_model() {
  cs::LatencyModel m;
  m.prefill_s = [](int batch, int prompt) { return kSecondsPerToken * prompt * batch; };
  m.decode_step_s = [](int /*batch*/, int /*context*/) { return 0.0; };
  return m;
}

cs::SimulationConfig single_server(double rate, cs::LengthDistribution prompt,
                                   cs::BatchingPolicy policy, std::uint64_t seed) {
  cs::SimulationConfig c;
  c.arrival_rate_per_s = rate;
  // 2 million requests: over seeds 1..10 (checked once by hand, not tuned per case)
  // the worst relative errors at rho = 0.5 were 0.9% (M/M/1 Wq), 1.25% (M/M/1 p99)
  // and 0.6% (M/D/1 Wq), inside the 2% the issue asks for. At rho = 0.8 the same
  // run length gave up to 2.2%: heavier load needs longer runs than a unit test.
  c.requests = 2'000'000;
  c.warmup_requests = 10'000;  // drop the start from an empty queue
  c.seed = seed;
  c.policy = policy;
  c.max_batch = 1;
  c.batch_timeout_s = 0.0;
  c.prompt = prompt;
  c.output = cs::LengthDistribution::fixed(1);
  return c;
}

}  // namespace

// splitmix64 from state 0: the reference sequence of Vigna's splitmix64.c.
TEST(Rng, SplitMix64ReferenceValues) {
  std::uint64_t s = 0;
  EXPECT_EQ(cs::splitmix64(s), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(cs::splitmix64(s), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(cs::splitmix64(s), 0x06c45d188009454fULL);
}

TEST(Rng, UniformAndExponentialMoments) {
  cs::Rng r(42);
  double su = 0.0;
  double se = 0.0;
  const int n = 1'000'000;
  for (int i = 0; i < n; ++i) {
    const double u = r.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    su += u;
    se += r.exponential(2.0);
  }
  // Standard errors: uniform sqrt(1/12/n) = 2.9e-4, exponential 2/sqrt(n) = 2e-3.
  EXPECT_NEAR(su / n, 0.5, 5 * 2.9e-4);
  EXPECT_NEAR(se / n, 2.0, 5 * 2e-3);
}

// M/M/1 (lambda = 0.5, mu = 1, rho = 0.5). An arrival sees the stationary queue
// (PASTA): N customers with P(N = n) = (1 - rho) rho^n, so its wait is the sum of
// N exponential(mu) services (the one in service is memoryless):
//   Wq = E[N] / mu = rho / (mu - lambda) = 1 s,
// and its time in system, N + 1 exponential(mu) services with N + 1 geometric, is
// exponential with rate mu - lambda: P(T > t) = exp(-(mu - lambda) t), so
//   p99(T) = ln(100) / (mu - lambda) = 9.2103 s.
// Service times are 1e-4 * round(Exp(mean 10000)) s: exponential to 1 part in 10^4.
TEST(Queueing, MM1MeanWaitAndP99Sojourn) {
  const double lambda = 0.5;
  const double mu = 1.0;
  for (const auto policy : {cs::BatchingPolicy::static_timeout, cs::BatchingPolicy::continuous}) {
    const auto c = single_server(
        lambda, cs::LengthDistribution::exponential(kMeanTokens, 1, 1 << 30), policy, 7);
    const auto r = cs::simulate_serving(linear_prefill_model(), c);
    ASSERT_TRUE(r.feasible);
    const double wq = (lambda / mu) / (mu - lambda);
    const double p99 = std::log(100.0) / (mu - lambda);
    EXPECT_NEAR(r.queue_wait.mean_s, wq, 0.02 * wq) << cs::to_string(policy);
    EXPECT_NEAR(r.e2e.p99_s, p99, 0.02 * p99) << cs::to_string(policy);
    EXPECT_NEAR(r.e2e.mean_s, 1.0 / (mu - lambda), 0.02 / (mu - lambda));
    EXPECT_NEAR(r.utilisation, lambda / mu, 0.01);
  }
}

// M/D/1 (deterministic service 1 s, lambda = 0.5): Pollaczek-Khinchine,
//   Wq = lambda E[S^2] / (2 (1 - rho)) = rho / (2 mu (1 - rho)) = 0.5 s.
TEST(Queueing, MD1MeanWait) {
  for (const auto policy : {cs::BatchingPolicy::static_timeout, cs::BatchingPolicy::continuous}) {
    for (const double lambda : {0.5}) {
      const auto c = single_server(
          lambda, cs::LengthDistribution::fixed(static_cast<int>(kMeanTokens)), policy, 3);
      const auto r = cs::simulate_serving(linear_prefill_model(), c);
      const double wq = lambda / (2.0 * (1.0 - lambda));
      EXPECT_NEAR(r.queue_wait.mean_s, wq, 0.02 * wq)
          << cs::to_string(policy) << " lambda=" << lambda;
      // Time in system is the wait plus exactly one second of service.
      EXPECT_NEAR(r.e2e.mean_s - r.queue_wait.mean_s, 1.0, 1e-9);
    }
  }
}

TEST(Queueing, SameSeedSameResultOtherSeedDiffers) {
  auto c = single_server(0.5, cs::LengthDistribution::exponential(kMeanTokens, 1, 1 << 30),
                         cs::BatchingPolicy::continuous, 5);
  c.requests = 20'000;
  c.warmup_requests = 0;
  const auto a = cs::simulate_serving(linear_prefill_model(), c);
  const auto b = cs::simulate_serving(linear_prefill_model(), c);
  EXPECT_EQ(a.e2e.p99_s, b.e2e.p99_s);
  EXPECT_EQ(a.ttft.mean_s, b.ttft.mean_s);
  c.seed = 6;
  const auto d = cs::simulate_serving(linear_prefill_model(), c);
  EXPECT_NE(a.e2e.p99_s, d.e2e.p99_s);
}

// Type-7 percentiles of 1..5: p50 = 3, p99 at h = 0.99 * 4 = 3.96: 4 + 0.96 = 4.96.
TEST(Serving, PercentileInterpolates) {
  std::vector<double> v{5, 3, 1, 4, 2};
  EXPECT_DOUBLE_EQ(cs::percentile(v, 0.5), 3.0);
  EXPECT_DOUBLE_EQ(cs::percentile(v, 0.99), 4.96);
  EXPECT_DOUBLE_EQ(cs::percentile(v, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(cs::percentile(v, 1.0), 5.0);
}

// A toy model: prefill(b, P) = 1 ms * b + 1 us * P; decode(b, C) = 10 ms + 0.1 ms * b.
namespace {
cs::LatencyModel toy_model() {
  cs::LatencyModel m;
  m.prefill_s = [](int b, int p) { return 1e-3 * b + 1e-6 * p; };
  m.decode_step_s = [](int b, int /*context*/) { return 10e-3 + 1e-4 * b; };
  return m;
}
}  // namespace

// Batch 4, prompt 100, 11 output tokens: TTFT = 4 ms + 0.1 ms = 4.1 ms;
// TPOT = 10.4 ms; e2e = 4.1 + 10 * 10.4 = 108.1 ms; 2 instances of 4 chips:
// requests/s = 2 * 4 / 0.1081, tokens/s = 11 x that, per chip / 8.
TEST(Serving, SweepArithmetic) {
  cs::SweepConfig s;
  s.batch_sizes = {1, 4};
  s.prompt_tokens = 100;
  s.output_tokens = 11;
  s.chips_per_instance = 4;
  s.instances = 2;
  const auto pts = cs::latency_throughput_sweep(toy_model(), s);
  ASSERT_EQ(pts.size(), 2u);
  const auto& p = pts[1];
  EXPECT_NEAR(p.ttft_s, 4.1e-3, 1e-15);
  EXPECT_NEAR(p.tpot_s, 10.4e-3, 1e-15);
  EXPECT_NEAR(p.e2e_s, 108.1e-3, 1e-12);
  EXPECT_NEAR(p.requests_per_s_system, 8.0 / 0.1081, 1e-9);
  EXPECT_NEAR(p.tokens_per_s_system, 88.0 / 0.1081, 1e-9);
  EXPECT_NEAR(p.tokens_per_s_per_chip, 11.0 / 0.1081, 1e-9);
}

// At a vanishing rate every request is alone. Static batching (max 4, timeout 20 ms)
// waits the timeout: TTFT = 20 ms + prefill(1, 100) = 21.1 ms. Continuous batching
// starts at once: TTFT = 1.1 ms, e2e = 1.1 + 10 * 10.1 = 102.1 ms.
TEST(Serving, LightLoadLatencies) {
  cs::SimulationConfig c;
  c.arrival_rate_per_s = 1e-3;
  c.requests = 200;
  c.max_batch = 4;
  c.batch_timeout_s = 20e-3;
  c.prompt = cs::LengthDistribution::fixed(100);
  c.output = cs::LengthDistribution::fixed(11);
  c.policy = cs::BatchingPolicy::static_timeout;
  const auto s = cs::simulate_serving(toy_model(), c);
  EXPECT_NEAR(s.ttft.p50_s, 21.1e-3, 1e-9);
  c.policy = cs::BatchingPolicy::continuous;
  const auto k = cs::simulate_serving(toy_model(), c);
  EXPECT_NEAR(k.ttft.p50_s, 1.1e-3, 1e-9);
  EXPECT_NEAR(k.e2e.p50_s, 102.1e-3, 1e-9);
}

// Under heavy load both policies fill their batches; continuous batching then has
// a lower p99 TTFT than padded static batches, and the SLA rate is found for it.
TEST(Serving, BatchesFillUnderLoad) {
  cs::SimulationConfig c;
  c.arrival_rate_per_s = 200.0;
  c.requests = 5000;
  c.max_batch = 8;
  c.batch_timeout_s = 5e-3;
  c.prompt = cs::LengthDistribution::uniform(50, 150);
  c.output = cs::LengthDistribution::lognormal(20.0, 0.5, 1, 100);
  c.policy = cs::BatchingPolicy::static_timeout;
  const auto s = cs::simulate_serving(toy_model(), c);
  c.policy = cs::BatchingPolicy::continuous;
  const auto k = cs::simulate_serving(toy_model(), c);
  EXPECT_GT(s.mean_batch, 7.0);
  EXPECT_GT(k.mean_batch, 7.0);
  EXPECT_GT(k.requests_per_s_system, 0.0);
  EXPECT_LE(k.ttft.p50_s, k.ttft.p95_s);
  EXPECT_LE(k.ttft.p95_s, k.ttft.p99_s);
  EXPECT_LE(k.ttft.p99_s, k.e2e.p99_s);
}

// Max rate at an SLA on the M/M/1 queue (mu = 1): p99(T) = ln(100) / (mu - lambda)
// <= 20 s  <=>  lambda <= 1 - ln(100) / 20 = 0.76974.
TEST(Serving, MaxRateAtSlaByBisectionMatchesMM1) {
  auto c = single_server(1.0, cs::LengthDistribution::exponential(kMeanTokens, 1, 1 << 30),
                         cs::BatchingPolicy::static_timeout, 9);
  c.requests = 300'000;
  c.warmup_requests = 5'000;
  const auto s = cs::max_rate_meeting_sla(linear_prefill_model(), c, cs::SlaMetric::e2e_p99,
                                          20.0);
  ASSERT_TRUE(s.found);
  const double expected = 1.0 - std::log(100.0) / 20.0;
  EXPECT_NEAR(s.max_rate_per_s, expected, 0.02 * expected);
  EXPECT_LE(s.at_max.e2e.p99_s, 20.0);
  // A bound below the unloaded service time cannot be met at any rate.
  const auto none = cs::max_rate_meeting_sla(linear_prefill_model(), c, cs::SlaMetric::ttft_p99,
                                             1e-3);
  EXPECT_FALSE(none.found);
}

TEST(Serving, InvalidConfigIsAValue) {
  cs::SimulationConfig c;
  c.arrival_rate_per_s = -1.0;
  EXPECT_EQ(cs::simulate_serving(toy_model(), c).status, cs::SimulationStatus::invalid_config);
  c.arrival_rate_per_s = 1.0;
  c.warmup_requests = c.requests;
  EXPECT_EQ(cs::simulate_serving(toy_model(), c).status,
            cs::SimulationStatus::no_measured_requests);
}

// The table model interpolates bilinearly and clamps at the edges.
TEST(Serving, LatencyTableInterpolation) {
  cs::LatencyTable t;
  t.batches = {1, 3};
  t.lengths = {100, 200};
  t.prefill_s = {1.0, 2.0, 3.0, 4.0};
  t.decode_step_s = {0.1, 0.2, 0.3, 0.4};
  ASSERT_TRUE(cs::valid(t));
  const auto m = cs::latency_model_from_table(t);
  EXPECT_DOUBLE_EQ(m.prefill_s(2, 150), 2.5);   // centre of the four corners
  EXPECT_DOUBLE_EQ(m.decode_step_s(1, 150), 0.15);
  EXPECT_DOUBLE_EQ(m.prefill_s(8, 1000), 4.0);  // clamped
  t.prefill_s.pop_back();
  EXPECT_FALSE(cs::valid(t));
}

// A histogram draws each length in proportion to its count: 10,000 draws of {100: 1, 300: 3}
// give 300 about 3/4 of the time (binomial s.d. 0.43%), and the nominal length is the mean,
// (100 + 3 x 300) / 4 = 250; lowest and highest are the histogram's ends.
TEST(Serving, EmpiricalLengthsFollowTheHistogram) {
  const auto d = cs::LengthDistribution::empirical({300, 100}, {3.0, 1.0});
  ASSERT_EQ(d.kind, cs::LengthDistribution::Kind::empirical);
  EXPECT_EQ(d.nominal(), 250);
  EXPECT_EQ(d.lowest(), 100);
  EXPECT_EQ(d.highest(), 300);
  cs::Rng rng(7);
  int long_ones = 0;
  for (int i = 0; i < 10000; ++i) {
    const int v = d.sample(rng);
    ASSERT_TRUE(v == 100 || v == 300);
    long_ones += v == 300;
  }
  EXPECT_NEAR(long_ones / 10000.0, 0.75, 0.02);
  // No positive weight, a length below 1, or mismatched sizes: not a histogram.
  EXPECT_NE(cs::LengthDistribution::empirical({10}, {0.0}).kind, cs::LengthDistribution::Kind::empirical);
  EXPECT_NE(cs::LengthDistribution::empirical({0}, {1.0}).kind, cs::LengthDistribution::Kind::empirical);
  EXPECT_NE(cs::LengthDistribution::empirical({10, 20}, {1.0}).kind, cs::LengthDistribution::Kind::empirical);
}

// Time per output token at light load (one request at a time, no queueing): a request of O
// tokens has O - 1 decode steps after its first token, each 20 ms here whatever the batch,
// so its TPOT is exactly 20 ms, at every percentile; TTFT is the 50 ms prefill.
TEST(Serving, TimePerOutputTokenAtLightLoad) {
  cs::LatencyModel m;
  m.prefill_s = [](int, int) { return 0.05; };
  m.decode_step_s = [](int, int) { return 0.02; };
  cs::SimulationConfig c;
  // One request every 100,000 s on average, each done within 4.05 s: two requests overlap (a
  // prefill then delays a running request's next token) with probability ~4e-5 per request.
  c.arrival_rate_per_s = 1e-5;
  c.requests = 500;
  c.max_batch = 8;
  c.prompt = cs::LengthDistribution::fixed(128);
  c.output = cs::LengthDistribution::uniform(2, 200);
  const auto r = cs::simulate_serving(m, c);
  ASSERT_TRUE(r.feasible);
  // The clock reaches ~5e7 s, where a double resolves ~1e-8 s: the differences carry that much.
  EXPECT_NEAR(r.tpot.p50_s, 0.02, 2e-8);
  EXPECT_NEAR(r.tpot.p99_s, 0.02, 2e-8);
  EXPECT_NEAR(r.ttft.p90_s, 0.05, 2e-8);
  EXPECT_LE(r.e2e.p50_s, r.e2e.p99_s);
}

// Several SLA bounds together: the largest rate meeting all of them is the smallest of the
// rates meeting each alone (each p99 rises with the rate under this model: a single server
// whose service grows with the batch).
TEST(Serving, SlaBoundsTogetherTakeTheTightest) {
  cs::LatencyModel m;
  m.prefill_s = [](int b, int) { return 0.02 * b; };
  m.decode_step_s = [](int b, int) { return 0.005 + 0.001 * b; };
  cs::SimulationConfig c;
  c.requests = 3000;
  c.warmup_requests = 300;
  c.max_batch = 16;
  c.prompt = cs::LengthDistribution::fixed(64);
  c.output = cs::LengthDistribution::fixed(32);
  cs::SlaBounds ttft, tpot, both;
  ttft.ttft_p99_s = 0.5;
  tpot.tpot_p99_s = 0.012;
  both.ttft_p99_s = 0.5;
  both.tpot_p99_s = 0.012;
  const auto a = cs::max_rate_meeting_sla(m, c, ttft, 1e-3);
  const auto b = cs::max_rate_meeting_sla(m, c, tpot, 1e-3);
  const auto ab = cs::max_rate_meeting_sla(m, c, both, 1e-3);
  ASSERT_TRUE(a.found && b.found && ab.found);
  EXPECT_LE(ab.max_rate_per_s, std::min(a.max_rate_per_s, b.max_rate_per_s) * (1.0 + 2e-3));
  EXPECT_GE(ab.max_rate_per_s, std::min(a.max_rate_per_s, b.max_rate_per_s) * (1.0 - 2e-3));
  EXPECT_TRUE(both.met_by(ab.at_max));
}
