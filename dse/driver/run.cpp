#include "dse/driver/run.hpp"

#include <oneapi/tbb/task_arena.h>

#include <chrono>
#include <cstddef>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>

#include "costmodel/layer.hpp"
#include "dse/driver/context.hpp"
#include "dse/driver/mapping_sheets.hpp"
#include "dse/driver/run_chips.hpp"
#include "dse/error.hpp"
#include "dse/version.hpp"
#include "dse/io/yaml_reader.hpp"
#include "search/dominance_filter.hpp"
#include "search/pareto.hpp"

namespace dse {

namespace {

const std::vector<search::Sense> kSenses = {search::Sense::maximize, search::Sense::minimize,
                                            search::Sense::minimize, search::Sense::minimize};

}  // namespace

costmodel::platform::SystemRequest served_request(const SystemVariant& v, const ModelWorkload& m, std::int64_t batch, std::uint64_t seed) {
  namespace wl = costmodel::workload;
  costmodel::platform::SystemRequest req;
  req.spec = m.spec;
  req.phase.phase = wl::Phase::decode;
  req.phase.batch = batch;
  req.phase.seq = 1;
  req.phase.context = m.prompt_tokens + m.output_tokens / 2;
  req.phase.precision = v.precision;
  req.degrees = {v.tp, v.pp, v.dp, v.ep, v.cp};
  req.options.fusion = v.fusion;
  req.options.attention_kernel = v.attention_kernel;
  req.serving.max_batch = static_cast<int>(batch);
  req.serving.prompt_tokens = static_cast<int>(m.prompt_tokens);
  req.serving.output_tokens = static_cast<int>(m.output_tokens);
  req.serving.prompt_lengths = m.prompt_lengths;
  req.serving.output_lengths = m.output_lengths;
  req.serving.requests = m.requests;
  req.serving.seed = seed;
  req.serving.static_kv_tokens = static_cast<int>(m.static_kv_tokens);
  req.serving.prompt_bucket_tokens = static_cast<int>(m.prompt_bucket_tokens);
  req.serving.stack = v.stack;
  req.serving.rate_per_s = m.rate_per_s;
  if (v.batching == Batching::static_timeout) {
    req.serving.policy = costmodel::system::BatchingPolicy::static_timeout;
    req.serving.batch_timeout_s = v.batch_timeout_s;
  }
  return req;
}

search::DesignSpace design_space(const Scenario& s) {
  return search::DesignSpace({{"hardware", hardware_variants(s)},
                              {"workload", s.workloads.size()},
                              {"batch", s.batch_sizes.size()}});
}

namespace pf = costmodel::platform;

pf::SystemEval evaluate_served(const SystemVariant& v, const ModelWorkload& m, std::int64_t batch, std::uint64_t seed) {
  return pf::evaluate_system(v.system->chip, v.system->system, served_request(v, m, batch, seed));
}

DecodedPoint decode_point(const Scenario& s, const search::DesignSpace& space, std::uint64_t index) {
  DecodedPoint p;
  p.digits = space.decode(index);
  const auto [entry, variant] = locate_hardware(s, p.digits[0]);
  p.entry = &s.hardware[entry];
  p.hw = s.hardware[entry].variant(variant);
  p.wl = &s.workloads[p.digits[1]];
  p.batch = s.batch_sizes[p.digits[2]];
  return p;
}

namespace {

// A served point's record from its evaluation: throughput and latency of a full batch at
// the cap (no queueing), the latencies under load at the rate, power and energy at the wall.
void fill_served(const pf::SystemEval& e, std::int64_t batch, PointRecord& r) {
  const costmodel::system::SweepPoint* at_cap = nullptr;
  for (const auto& p : e.serving.sweep)
    if (p.batch == batch) at_cap = &p;
  r.feasible = e.feasible && e.serving.evaluated && at_cap != nullptr && e.chip.fits_memory &&
                       e.serving.at_rate.has_value() && e.serving.at_rate->feasible
                   ? 1
                   : 0;
  r.flops = e.chip.totals.flops;
  r.dram_bytes = e.chip.totals.dram_bytes;
  r.memory_bytes = e.chip.totals.memory_bytes;
  r.engineering_risk = e.risk.score;
  r.power_w = e.wall.wall_w;
  r.accelerator_power_w = e.power.power_w;
  r.mfu = e.step_mfu;
  r.cost_usd = e.cost.capital_usd;
  r.cost_per_hour_usd = e.cost.per_hour_usd;
  if (r.feasible != 0) {
    const auto& load = *e.serving.at_rate;
    r.throughput_samples_per_s = at_cap->tokens_per_s_system;  // output tokens/s of the system
    r.latency_s = at_cap->e2e_s;                               // one batch of requests, no queueing
    r.energy_per_sample_j = e.wall_energy_per_token_j;
    r.p99_latency_s = load.e2e.p99_s;
    r.e2e_p50_s = load.e2e.p50_s;
    r.ttft_p50_s = load.ttft.p50_s;
    r.ttft_p90_s = load.ttft.p90_s;
    r.ttft_p99_s = load.ttft.p99_s;
    r.tpot_p50_s = load.tpot.p50_s;
    r.tpot_p90_s = load.tpot.p90_s;
    r.tpot_p99_s = load.tpot.p99_s;
  }
  const bool fits = e.feasible && e.chip.fits_memory;
  set_name(r.bottleneck, fits ? std::string(costmodel::to_string(e.bottleneck)) : std::string("capacity"));
}

}  // namespace

PointRecord evaluate_point(const Scenario& s, const search::DesignSpace& space, std::uint64_t index) {
  const DecodedPoint p = decode_point(s, space, index);
  const auto& d = p.digits;
  const HardwareVariant& hw = p.hw;
  const WorkloadEntry& wl = *p.wl;
  const std::int64_t batch = p.batch;
  PointRecord r;
  r.index = index;
  r.hardware_id = static_cast<std::uint32_t>(d[0]);
  r.workload_id = static_cast<std::uint32_t>(d[1]);
  r.batch = batch;
  set_name(r.hardware, hw.name());
  set_name(r.workload, wl.name);
  r.area_mm2 = hw.area_mm2();
  const bool served = hw.kind == HardwareKind::system;
  if (served != wl.model.has_value()) {
    // A layer list needs roofline or systolic hardware; a model needs a system.
    r.feasible = 0;
    set_name(r.bottleneck, "unsupported");
    return r;
  }
  if (served) {
    fill_served(evaluate_served(hw.system, *wl.model, batch, s.seed), batch, r);
    return r;
  }
  if (is_chip_point(*p.entry, hw, wl)) {  // custom chips on models, loop-nest chips on anything (run_chips.hpp)
    evaluate_chip_point(*p.entry, hw, wl, batch, r);
    return r;
  }
  const costmodel::WorkloadCost c = hw.kind == HardwareKind::roofline
                                        ? costmodel::evaluate_workload(hw.roofline, wl, batch)
                                        : costmodel::evaluate_workload(hw.systolic, wl, batch);
  r.throughput_samples_per_s = c.throughput_samples_per_s;
  r.latency_s = c.latency_s;
  r.energy_per_sample_j = c.energy_per_sample_j;
  r.engineering_risk = hw.engineering_risk();
  r.flops = c.flops;
  r.dram_bytes = c.bytes;
  r.memory_bytes = c.memory_bytes;
  r.p99_latency_s = c.latency_s;  // no queueing in these models: every batch takes the same time
  r.ttft_p50_s = r.ttft_p90_s = r.ttft_p99_s = r.e2e_p50_s = c.latency_s;
  r.power_w = c.latency_s > 0 ? c.energy_j / c.latency_s : 0.0;
  r.accelerator_power_w = r.power_w;
  const double peak = hw.peak_flops_per_s();
  r.mfu = peak > 0.0 && c.latency_s > 0.0 ? c.flops / (c.latency_s * peak) : 0.0;
  r.feasible = c.feasible ? 1 : 0;
  set_name(r.bottleneck, std::string(costmodel::to_string(c.bottleneck)));
  return r;
}

void fill_evaluation(const PointRecord& r, search::Evaluation& e) {
  e.index = r.index;
  e.objectives.assign({r.throughput_samples_per_s, r.latency_s, r.energy_per_sample_j, r.engineering_risk});
  e.constraints.assign({r.p99_latency_s, r.ttft_p99_s, r.tpot_p99_s, r.power_w, r.area_mm2, r.memory_bytes, r.cost_usd});
  e.feasible = r.feasible != 0;
}

search::Evaluation to_evaluation(const PointRecord& r) {
  search::Evaluation e;
  fill_evaluation(r, e);
  return e;
}

std::vector<std::uint64_t> pareto_indices(const std::vector<PointRecord>& rows) {
  // Per workload, the feasible rows' objectives in minimisation form, filtered at once.
  std::map<std::uint32_t, std::pair<std::vector<std::uint64_t>, std::vector<double>>> parts;
  for (const auto& r : rows) {
    if (r.feasible == 0) continue;
    auto& [indices, keys] = parts[r.workload_id];
    const search::Evaluation e = to_evaluation(r);
    for (std::size_t j = 0; j < kSenses.size(); ++j) {
      keys.push_back(kSenses[j] == search::Sense::minimize ? e.objectives[j] : -e.objectives[j]);
    }
    indices.push_back(r.index);
  }
  std::vector<std::uint64_t> out;
  for (const auto& [w, part] : parts) {
    for (const std::size_t i : search::nondominated_rows(part.second, kSenses.size(), kSenses.size())) {
      out.push_back(part.first[i]);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

PointModel point_model(const Scenario& s, const search::DesignSpace& space) {
  return PointModel{space, kSenses, kConstraintMetrics,
                    [&s, &space](std::uint64_t i) {
                      PointRecord r = evaluate_point(s, space, i);
                      // A point whose figures overflow double (an energy per byte of 1e308, a peak of
                      // 5e-324 FLOP/s) stops the run with the point named (issue 58 item 7).
                      if (const std::string why = point_figure_problem(r); !why.empty()) {
                        throw InputError(s.file + ": point " + std::to_string(i) + " (hardware " +
                                         record_name(r.hardware, sizeof r.hardware) + ", workload " +
                                         record_name(r.workload, sizeof r.workload) + ", batch " +
                                         std::to_string(r.batch) + "): " + why +
                                         "; a figure of the scenario is too large or too small for double precision");
                      }
                      return r;
                    },
                    fill_evaluation};
}

}  // namespace dse
