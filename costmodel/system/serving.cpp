#include "costmodel/system/serving.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numbers>

namespace dse::costmodel::system {

// ---------------------------------------------------------------- random numbers

std::uint64_t splitmix64(std::uint64_t& state) noexcept {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Rng::Rng(std::uint64_t seed) noexcept {
  std::uint64_t st = seed;
  for (auto& s : s_) s = splitmix64(st);
}

namespace {
std::uint64_t rotl(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
}  // namespace

std::uint64_t Rng::next() noexcept {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform() noexcept {
  return static_cast<double>(next() >> 11) * 0x1.0p-53;
}

double Rng::exponential(double mean) noexcept { return -mean * std::log1p(-uniform()); }

double Rng::standard_normal() noexcept {
  const double u1 = 1.0 - uniform();  // (0, 1]
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

// ---------------------------------------------------------------- request lengths

LengthDistribution LengthDistribution::fixed(int tokens) noexcept {
  return LengthDistribution{Kind::fixed, static_cast<double>(tokens), 0.0, 1, 1 << 30, {}, {}};
}

LengthDistribution LengthDistribution::uniform(int low, int high) noexcept {
  return LengthDistribution{Kind::uniform, static_cast<double>(low), static_cast<double>(high),
                            1, 1 << 30, {}, {}};
}

LengthDistribution LengthDistribution::lognormal(double median, double sigma, int min_tokens,
                                                 int max_tokens) noexcept {
  return LengthDistribution{Kind::lognormal, median, sigma, min_tokens, max_tokens, {}, {}};
}

LengthDistribution LengthDistribution::exponential(double mean, int min_tokens,
                                                   int max_tokens) noexcept {
  return LengthDistribution{Kind::exponential, mean, 0.0, min_tokens, max_tokens, {}, {}};
}

LengthDistribution LengthDistribution::empirical(const std::vector<int>& lengths,
                                                const std::vector<double>& weights) {
  LengthDistribution d = fixed(1);
  if (lengths.empty() || lengths.size() != weights.size()) return d;
  std::vector<std::pair<int, double>> rows;
  double total = 0.0;
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    if (lengths[i] < 1 || !(weights[i] >= 0.0) || !std::isfinite(weights[i])) return d;
    rows.emplace_back(lengths[i], weights[i]);
    total += weights[i];
  }
  if (!(total > 0.0) || !std::isfinite(total)) return d;
  std::sort(rows.begin(), rows.end());
  d.kind = Kind::empirical;
  double sum = 0.0;
  double mean = 0.0;
  for (const auto& [len, w] : rows) {
    if (w == 0.0) continue;
    if (!d.values.empty() && d.values.back() == len) {
      sum += w;
      d.cumulative.back() = sum / total;
    } else {
      sum += w;
      d.values.push_back(len);
      d.cumulative.push_back(sum / total);
    }
    mean += static_cast<double>(len) * w / total;
  }
  d.cumulative.back() = 1.0;
  d.a = mean;
  d.min_tokens = d.values.front();
  d.max_tokens = d.values.back();
  return d;
}

namespace {
int round_clamp(double x, int lo, int hi) noexcept {
  const double r = std::nearbyint(x);
  if (!(r >= lo)) return lo;  // also NaN
  if (r > hi) return hi;
  return static_cast<int>(r);
}
}  // namespace

int LengthDistribution::sample(Rng& rng) const noexcept {
  const int lo = std::max(1, min_tokens);
  switch (kind) {
    case Kind::fixed: return round_clamp(a, lo, max_tokens);
    case Kind::uniform: {
      const double span = std::floor(b) - std::floor(a) + 1.0;
      return round_clamp(std::floor(a) + std::floor(rng.uniform() * span), lo, max_tokens);
    }
    case Kind::lognormal: return round_clamp(a * std::exp(b * rng.standard_normal()), lo, max_tokens);
    case Kind::exponential: return round_clamp(rng.exponential(a), lo, max_tokens);
    case Kind::empirical: {
      if (values.empty()) return lo;
      const double u = rng.uniform();
      const auto it = std::upper_bound(cumulative.begin(), cumulative.end(), u);
      const auto i = std::min(static_cast<std::size_t>(it - cumulative.begin()), values.size() - 1);
      return values[i];
    }
  }
  return lo;
}

int LengthDistribution::nominal() const noexcept {
  const int lo = std::max(1, min_tokens);
  switch (kind) {
    case Kind::fixed: return round_clamp(a, lo, max_tokens);
    case Kind::uniform: return round_clamp(0.5 * (a + b), lo, max_tokens);
    case Kind::lognormal: return round_clamp(a * std::exp(0.5 * b * b), lo, max_tokens);
    case Kind::exponential: return round_clamp(a, lo, max_tokens);
    case Kind::empirical: return round_clamp(a, lo, max_tokens);
  }
  return lo;
}

int LengthDistribution::lowest() const noexcept {
  const int lo = std::max(1, min_tokens);
  switch (kind) {
    case Kind::fixed: return round_clamp(a, lo, max_tokens);
    case Kind::uniform: return round_clamp(std::floor(a), lo, max_tokens);
    case Kind::empirical: return values.empty() ? lo : values.front();
    case Kind::lognormal:
    case Kind::exponential: return lo;
  }
  return lo;
}

int LengthDistribution::highest() const noexcept {
  const int lo = std::max(1, min_tokens);
  switch (kind) {
    case Kind::fixed: return round_clamp(a, lo, max_tokens);
    case Kind::uniform: return round_clamp(std::floor(b), lo, max_tokens);
    case Kind::empirical: return values.empty() ? lo : values.back();
    case Kind::lognormal:
    case Kind::exponential: return std::max(lo, max_tokens);
  }
  return lo;
}

// ---------------------------------------------------------------- latency table

bool valid(const LatencyTable& t) noexcept {
  const std::size_t n = t.batches.size() * t.lengths.size();
  if (n == 0 || t.prefill_s.size() != n || t.decode_step_s.size() != n) return false;
  if (!std::is_sorted(t.batches.begin(), t.batches.end()) ||
      !std::is_sorted(t.lengths.begin(), t.lengths.end())) {
    return false;
  }
  return std::adjacent_find(t.batches.begin(), t.batches.end()) == t.batches.end() &&
         std::adjacent_find(t.lengths.begin(), t.lengths.end()) == t.lengths.end();
}

namespace {
// Index i and weight w such that x lies between grid[i] and grid[i+1] (w of the way).
void bracket(const std::vector<int>& grid, int x, std::size_t& i, double& w) noexcept {
  if (grid.size() == 1 || x <= grid.front()) {
    i = 0;
    w = 0.0;
    return;
  }
  if (x >= grid.back()) {
    i = grid.size() - 2;
    w = 1.0;
    return;
  }
  const auto it = std::upper_bound(grid.begin(), grid.end(), x);
  i = static_cast<std::size_t>(it - grid.begin()) - 1;
  w = static_cast<double>(x - grid[i]) / static_cast<double>(grid[i + 1] - grid[i]);
}
}  // namespace

double interpolate(const LatencyTable& t, const std::vector<double>& values, int batch,
                   int length) noexcept {
  std::size_t bi = 0;
  std::size_t li = 0;
  double bw = 0.0;
  double lw = 0.0;
  bracket(t.batches, batch, bi, bw);
  bracket(t.lengths, length, li, lw);
  const std::size_t nl = t.lengths.size();
  const std::size_t bi1 = t.batches.size() > 1 ? bi + 1 : bi;
  const std::size_t li1 = nl > 1 ? li + 1 : li;
  const double v00 = values[bi * nl + li];
  const double v01 = values[bi * nl + li1];
  const double v10 = values[bi1 * nl + li];
  const double v11 = values[bi1 * nl + li1];
  const double v0 = v00 + lw * (v01 - v00);
  const double v1 = v10 + lw * (v11 - v10);
  return v0 + bw * (v1 - v0);
}

LatencyModel latency_model_from_table(LatencyTable t) {
  auto shared = std::make_shared<const LatencyTable>(std::move(t));
  LatencyModel m;
  m.prefill_s = [shared](int batch, int prompt) {
    return interpolate(*shared, shared->prefill_s, batch, prompt);
  };
  m.decode_step_s = [shared](int batch, int context) {
    return interpolate(*shared, shared->decode_step_s, batch, context);
  };
  return m;
}

// ---------------------------------------------------------------- sweep

std::vector<SweepPoint> latency_throughput_sweep(const LatencyModel& model,
                                                 const SweepConfig& config) {
  std::vector<SweepPoint> out;
  out.reserve(config.batch_sizes.size());
  const int o = std::max(1, config.output_tokens);
  const double chips = static_cast<double>(std::max(1, config.chips_per_instance)) *
                       std::max(1, config.instances);
  for (const int b : config.batch_sizes) {
    SweepPoint p;
    p.batch = b;
    p.ttft_s = model.prefill_s(b, config.prompt_tokens);
    double decode_s = 0.0;
    for (int i = 1; i < o; ++i) decode_s += model.decode_step_s(b, config.prompt_tokens + i);
    p.tpot_s = o > 1 ? decode_s / (o - 1) : 0.0;
    p.e2e_s = p.ttft_s + decode_s;
    if (p.e2e_s > 0.0) {
      p.requests_per_s_system = config.instances * static_cast<double>(b) / p.e2e_s;
      p.tokens_per_s_system = p.requests_per_s_system * o;
      p.requests_per_s_per_chip = p.requests_per_s_system / chips;
      p.tokens_per_s_per_chip = p.tokens_per_s_system / chips;
    }
    out.push_back(p);
  }
  return out;
}

// ---------------------------------------------------------------- simulation

std::string_view to_string(BatchingPolicy p) {
  switch (p) {
    case BatchingPolicy::static_timeout: return "static_timeout";
    case BatchingPolicy::continuous: return "continuous";
  }
  return "unknown";
}

std::string_view to_string(SimulationStatus s) {
  switch (s) {
    case SimulationStatus::ok: return "ok";
    case SimulationStatus::invalid_config: return "invalid_config";
    case SimulationStatus::no_measured_requests: return "no_measured_requests";
  }
  return "unknown";
}

double percentile(std::vector<double>& values, double q) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const double h = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (h - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

namespace {

// Stream ids that decorrelate the three random streams of one seed.
constexpr std::uint64_t kArrivalStream = 0x41525249564c5331ULL;  // "ARRIVLS1"
constexpr std::uint64_t kPromptStream = 0x50524f4d50545331ULL;   // "PROMPTS1"
constexpr std::uint64_t kOutputStream = 0x4f55545055545331ULL;   // "OUTPUTS1"

struct Requests {
  std::vector<double> arrival_s;
  std::vector<int> prompt;
  std::vector<int> output;
  // Filled by the simulation.
  std::vector<double> start_s;  // prefill start
  std::vector<double> first_token_s;
  std::vector<double> done_s;
};

Requests make_requests(const SimulationConfig& c, double rate) {
  const auto n = static_cast<std::size_t>(c.requests);
  Requests r;
  r.arrival_s.resize(n);
  r.prompt.resize(n);
  r.output.resize(n);
  r.start_s.assign(n, 0.0);
  r.first_token_s.assign(n, 0.0);
  r.done_s.assign(n, 0.0);
  Rng arrivals(c.seed ^ kArrivalStream);
  Rng prompts(c.seed ^ kPromptStream);
  Rng outputs(c.seed ^ kOutputStream);
  double t = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    t += arrivals.exponential(1.0) / rate;  // unit exponentials scaled: exact in 1/rate
    r.arrival_s[i] = t;
    r.prompt[i] = c.prompt.sample(prompts);
    r.output[i] = c.output.sample(outputs);
  }
  return r;
}

struct RunTotals {
  double busy_s = 0.0;
  double batched_requests = 0.0;  // sum of batch sizes over batches (or decode steps)
  double batches = 0.0;
};

RunTotals run_static(const LatencyModel& m, const SimulationConfig& c, Requests& r) {
  RunTotals tot;
  const std::size_t n = r.arrival_s.size();
  const auto cap = static_cast<std::size_t>(c.max_batch);
  std::vector<double> cumulative;  // time from batch start to the end of decode step i
  double free_at = 0.0;
  std::size_t i = 0;
  while (i < n) {
    const double oldest = r.arrival_s[i];
    double trigger = oldest + c.batch_timeout_s;
    if (i + cap - 1 < n) trigger = std::min(trigger, r.arrival_s[i + cap - 1]);
    const double start = std::max(free_at, trigger);
    std::size_t end = i;
    while (end < n && end - i < cap && r.arrival_s[end] <= start) ++end;
    const int b = static_cast<int>(end - i);
    int max_prompt = 0;
    int max_output = 1;
    for (std::size_t j = i; j < end; ++j) {
      max_prompt = std::max(max_prompt, r.prompt[j]);
      max_output = std::max(max_output, r.output[j]);
    }
    cumulative.assign(static_cast<std::size_t>(max_output), 0.0);
    double t = m.prefill_s(b, max_prompt);
    cumulative[0] = t;
    for (int s = 1; s < max_output; ++s) {
      t += m.decode_step_s(b, max_prompt + s);
      cumulative[static_cast<std::size_t>(s)] = t;
    }
    for (std::size_t j = i; j < end; ++j) {
      r.start_s[j] = start;
      r.first_token_s[j] = start + cumulative[0];
      r.done_s[j] = start + cumulative[static_cast<std::size_t>(r.output[j] - 1)];
    }
    tot.busy_s += t;
    tot.batched_requests += b;
    tot.batches += 1.0;
    free_at = start + t;
    i = end;
  }
  return tot;
}

struct Slot {
  std::size_t request;
  int remaining;  // decode steps still to run
  int context;    // tokens in its KV cache
};

RunTotals run_continuous(const LatencyModel& m, const SimulationConfig& c, Requests& r) {
  RunTotals tot;
  const std::size_t n = r.arrival_s.size();
  const auto cap = static_cast<std::size_t>(c.max_batch);
  std::vector<Slot> running;
  running.reserve(cap);
  long long context_sum = 0;
  std::size_t next = 0;  // first request not yet admitted (FIFO)
  std::size_t done = 0;
  double t = 0.0;
  while (done < n) {
    if (running.empty() && next < n && r.arrival_s[next] > t) t = r.arrival_s[next];
    const bool waiting = next < n && r.arrival_s[next] <= t;
    if (waiting && running.size() < cap) {
      std::size_t end = next;
      int max_prompt = 0;
      while (end < n && running.size() + (end - next) < cap && r.arrival_s[end] <= t) {
        max_prompt = std::max(max_prompt, r.prompt[end]);
        ++end;
      }
      const double d = m.prefill_s(static_cast<int>(end - next), max_prompt);
      for (std::size_t j = next; j < end; ++j) r.start_s[j] = t;
      t += d;
      tot.busy_s += d;
      for (std::size_t j = next; j < end; ++j) {
        r.first_token_s[j] = t;
        if (r.output[j] <= 1) {
          r.done_s[j] = t;
          ++done;
        } else {
          running.push_back(Slot{j, r.output[j] - 1, r.prompt[j]});
          context_sum += r.prompt[j];
        }
      }
      next = end;
      continue;
    }
    // Decode one token for every running request.
    const auto b = static_cast<long long>(running.size());
    const int mean_context = static_cast<int>((context_sum + b / 2) / b);
    const double d = m.decode_step_s(static_cast<int>(b), mean_context);
    t += d;
    tot.busy_s += d;
    tot.batched_requests += static_cast<double>(b);
    tot.batches += 1.0;
    std::size_t k = 0;
    for (std::size_t s = 0; s < running.size(); ++s) {
      Slot slot = running[s];
      slot.context += 1;
      slot.remaining -= 1;
      if (slot.remaining == 0) {
        r.done_s[slot.request] = t;
        context_sum -= slot.context - 1;
        ++done;
      } else {
        context_sum += 1;
        running[k++] = slot;
      }
    }
    running.resize(k);
  }
  return tot;
}

// Type-7 percentile of v's elements from index `from` on, using nth_element: after
// the call v[from..] is partitioned around the returned order statistic (so later
// calls with larger q may search only to its right).
double percentile_from(std::vector<double>& v, std::size_t& from, double q) {
  const double h = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const auto lo_it = v.begin() + static_cast<std::ptrdiff_t>(lo);
  std::nth_element(v.begin() + static_cast<std::ptrdiff_t>(from), lo_it, v.end());
  double next = *lo_it;
  if (lo + 1 < v.size()) next = *std::min_element(lo_it + 1, v.end());
  from = lo;
  return *lo_it + (h - static_cast<double>(lo)) * (next - *lo_it);
}

LatencyStats stats_of(std::vector<double>& v) {
  LatencyStats s;
  if (v.empty()) return s;
  double sum = 0.0;
  for (const double x : v) sum += x;
  s.mean_s = sum / static_cast<double>(v.size());
  std::size_t from = 0;  // increasing q: each search starts at the last order statistic
  s.p50_s = percentile_from(v, from, 0.50);
  s.p90_s = percentile_from(v, from, 0.90);
  s.p95_s = percentile_from(v, from, 0.95);
  s.p99_s = percentile_from(v, from, 0.99);
  return s;
}

bool valid_distribution(const LengthDistribution& d) {
  return d.max_tokens >= std::max(1, d.min_tokens) && std::isfinite(d.a) && std::isfinite(d.b) &&
         !(d.kind == LengthDistribution::Kind::uniform && d.b < d.a) &&
         !(d.kind == LengthDistribution::Kind::lognormal && (d.a <= 0.0 || d.b < 0.0)) &&
         !(d.kind == LengthDistribution::Kind::exponential && d.a <= 0.0) &&
         !(d.kind == LengthDistribution::Kind::empirical &&
           (d.values.empty() || d.values.size() != d.cumulative.size() || d.values.front() < 1));
}

}  // namespace

SimulationResult simulate_serving(const LatencyModel& model, const SimulationConfig& config) {
  SimulationResult res;
  const SimulationConfig& c = config;
  if (!(c.arrival_rate_per_s > 0.0) || !std::isfinite(c.arrival_rate_per_s) || c.requests < 1 ||
      c.warmup_requests < 0 || c.max_batch < 1 || !(c.batch_timeout_s >= 0.0) ||
      c.instances < 1 || c.chips_per_instance < 1 || !model.prefill_s || !model.decode_step_s ||
      !valid_distribution(c.prompt) || !valid_distribution(c.output)) {
    res.feasible = false;
    res.status = SimulationStatus::invalid_config;
    return res;
  }
  if (c.warmup_requests >= c.requests) {
    res.feasible = false;
    res.status = SimulationStatus::no_measured_requests;
    return res;
  }
  const double rate = c.arrival_rate_per_s / c.instances;
  Requests r = make_requests(c, rate);
  const RunTotals tot = c.policy == BatchingPolicy::static_timeout ? run_static(model, c, r)
                                                                   : run_continuous(model, c, r);

  const auto first = static_cast<std::size_t>(c.warmup_requests);
  const std::size_t n = r.arrival_s.size();
  std::vector<double> ttft;
  std::vector<double> tpot;
  std::vector<double> e2e;
  std::vector<double> wait;
  ttft.reserve(n - first);
  tpot.reserve(n - first);
  e2e.reserve(n - first);
  wait.reserve(n - first);
  double tokens = 0.0;
  double end_s = 0.0;
  for (std::size_t i = 0; i < n; ++i) end_s = std::max(end_s, r.done_s[i]);
  for (std::size_t i = first; i < n; ++i) {
    ttft.push_back(r.first_token_s[i] - r.arrival_s[i]);
    if (r.output[i] > 1) tpot.push_back((r.done_s[i] - r.first_token_s[i]) / (r.output[i] - 1));
    e2e.push_back(r.done_s[i] - r.arrival_s[i]);
    wait.push_back(r.start_s[i] - r.arrival_s[i]);
    tokens += r.output[i];
  }
  res.measured_requests = static_cast<int>(n - first);
  res.ttft = stats_of(ttft);
  res.tpot = stats_of(tpot);
  res.e2e = stats_of(e2e);
  res.queue_wait = stats_of(wait);
  res.mean_batch = tot.batches > 0.0 ? tot.batched_requests / tot.batches : 0.0;
  // The measured window runs from the first measured arrival to the last completion.
  const double window_s = end_s - r.arrival_s[first];
  res.utilisation = end_s > 0.0 ? tot.busy_s / end_s : 0.0;
  if (window_s > 0.0) {
    const double chips = static_cast<double>(c.chips_per_instance) * c.instances;
    res.requests_per_s_system = c.instances * static_cast<double>(n - first) / window_s;
    res.tokens_per_s_system = c.instances * tokens / window_s;
    res.requests_per_s_per_chip = res.requests_per_s_system / chips;
    res.tokens_per_s_per_chip = res.tokens_per_s_system / chips;
  }
  return res;
}

// ---------------------------------------------------------------- SLA

namespace {
// The bracket's low end: a rate this far below the first guess counts as "no load".
constexpr double kVanishingRateFraction = 1e-6;
// Doublings of the high end allowed before giving up on finding a missing rate.
constexpr int kMaxDoublings = 60;

}  // namespace

bool SlaBounds::met_by(const SimulationResult& r) const noexcept {
  if (!r.feasible) return false;
  if (ttft_p99_s && !(r.ttft.p99_s <= *ttft_p99_s)) return false;
  if (tpot_p99_s && !(r.tpot.p99_s <= *tpot_p99_s)) return false;
  if (e2e_p99_s && !(r.e2e.p99_s <= *e2e_p99_s)) return false;
  return true;
}

SlaSearch max_rate_meeting_sla(const LatencyModel& model, const SimulationConfig& config,
                               SlaMetric metric, double bound_s, double relative_tolerance) {
  SlaBounds b;
  (metric == SlaMetric::ttft_p99 ? b.ttft_p99_s : metric == SlaMetric::tpot_p99 ? b.tpot_p99_s : b.e2e_p99_s) =
      bound_s;
  return max_rate_meeting_sla(model, config, b, relative_tolerance);
}

SlaSearch max_rate_meeting_sla(const LatencyModel& model, const SimulationConfig& config,
                               const SlaBounds& bounds, double relative_tolerance) {
  SlaSearch out;
  SimulationConfig c = config;
  // First guess: the system's capacity with full static batches of nominal lengths.
  const int b = std::max(1, c.max_batch);
  const int p = c.prompt.nominal();
  const int o = c.output.nominal();
  double batch_s = model.prefill_s ? model.prefill_s(b, p) : 0.0;
  for (int i = 1; i < o && model.decode_step_s; ++i) batch_s += model.decode_step_s(b, p + i);
  double hi = batch_s > 0.0 ? std::max(1, c.instances) * b / batch_s : 1.0;
  auto run = [&](double rate) {
    c.arrival_rate_per_s = rate;
    ++out.simulations;
    return simulate_serving(model, c);
  };
  double lo = hi * kVanishingRateFraction;
  SimulationResult at_lo = run(lo);
  if (!bounds.met_by(at_lo)) {
    out.at_max = at_lo;
    return out;
  }
  out.found = true;
  for (int k = 0; k < kMaxDoublings; ++k) {
    const SimulationResult r = run(hi);
    if (!bounds.met_by(r)) break;
    lo = hi;
    at_lo = r;
    hi *= 2.0;
  }
  while (hi - lo > relative_tolerance * hi) {
    const double mid = 0.5 * (lo + hi);
    const SimulationResult r = run(mid);
    if (bounds.met_by(r)) {
      lo = mid;
      at_lo = r;
    } else {
      hi = mid;
    }
  }
  out.max_rate_per_s = lo;
  out.at_max = at_lo;
  return out;
}

}  // namespace dse::costmodel::system
