#include "dse/driver/point_details.hpp"

#include <algorithm>
#include <map>
#include <utility>

#include "costmodel/platform/system.hpp"
#include "dse/driver/run.hpp"
#include "dse/driver/run_chips.hpp"

namespace dse {

namespace {

namespace pf = costmodel::platform;
namespace sys = costmodel::system;

// The mapping sheet of a served point: one chip of one replica, each layer once with its repeats.
std::vector<costmodel::LayerBreakdown> served_layers(const pf::SystemEval& e) {
  std::vector<costmodel::LayerBreakdown> out;
  for (const auto& l : e.chip.layers) {
    costmodel::LayerBreakdown b;
    b.name = l.name;
    b.type = l.layer;
    b.repeat = l.repeat;
    b.latency_s = l.latency_s;
    b.flops = l.flops;
    b.dram_bytes = l.dram_bytes;
    b.stall_fraction = l.stall_fraction;
    b.pct_of_peak = 100.0 * l.pct_of_peak;
    b.bottleneck = l.bottleneck;
    b.fusion_group = l.mapping.fusion_group;
    b.mapping = l.mapping.kernel + (l.mapping.tile.empty() ? "" : " " + l.mapping.tile) +
                (l.mapping.fusion_group.empty() ? "" : ", fused in " + l.mapping.fusion_group) + ", " +
                l.mapping.precision + ", x" + std::to_string(l.repeat);
    out.push_back(std::move(b));
  }
  return out;
}

std::vector<RiskRow> served_risk(const sys::RiskAssessment& a) {
  std::vector<RiskRow> out;
  for (const auto& i : a.items)
    out.push_back({std::string(sys::to_string(i.kind)), std::string(sys::to_string(i.owner)), i.weight, i.detail,
                   i.retiring_evidence});
  return out;
}

const char* kind_name(HardwareKind k) {
  switch (k) {
    case HardwareKind::roofline:
      return "roofline";
    case HardwareKind::systolic:
      return "systolic";
    case HardwareKind::system:
      return "system";
    case HardwareKind::loopnest:
      return "loopnest";
  }
  return "?";
}

// A layer list's or a custom chip's risk: the scenario's figure, as one item.
std::vector<RiskRow> scenario_risk(const HardwareEntry& entry, const HardwareVariant& hw) {
  const double w = hw.engineering_risk();
  if (!(w > 0.0)) return {};
  return {{"scenario_figure", "scenario", w,
           "engineering_risk " + io::format_number(w) + " given by the scenario for hardware entry '" + entry.name +
               "' (kind: " + kind_name(hw.kind) +
               "; the risk model of costmodel/system/risk.hpp needs a serving stack's maturity, precision and "
               "fusion support, which this kind does not describe)",
           "the source the scenario's author cites for the figure"}};
}

// The serving curve of an evaluated served point (CurveRow).
std::vector<CurveRow> serving_curve(const pf::SystemRequest& req, const pf::SystemEval& e) {
  const pf::ServingResult& sr = e.serving;
  if (!sr.evaluated || sr.sweep.empty() || !req.serving.rate_per_s) return {};
  const sys::SweepPoint* cap = &sr.sweep.back();
  for (const auto& p : sr.sweep)
    if (p.batch == sr.max_batch) cap = &p;
  const double capacity = cap->requests_per_s_system;
  if (!(capacity > 0.0)) return {};
  const sys::LatencyModel model = sys::latency_model_from_table(sr.table);
  sys::SimulationConfig sim = pf::serving_simulation(req, sr);
  std::vector<std::pair<double, bool>> rates;
  for (const double l : kCurveLoads) rates.emplace_back(l * capacity, false);
  rates.emplace_back(*req.serving.rate_per_s, true);
  std::stable_sort(rates.begin(), rates.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<CurveRow> out;
  for (const auto& [rate, own] : rates) {
    sim.arrival_rate_per_s = rate;
    out.push_back({rate / capacity, rate, own, sys::simulate_serving(model, sim)});
  }
  return out;
}

}  // namespace

std::vector<StepRow> step_breakdown(const std::vector<costmodel::LayerBreakdown>& layers,
                                    double matrix_peak_flops_per_s) {
  std::vector<StepRow> out;
  std::map<std::string, std::size_t> at;
  double total = 0.0;
  for (const auto& l : layers) {
    const auto [it, fresh] = at.emplace(l.type, out.size());
    if (fresh) out.push_back({l.type});
    StepRow& r = out[it->second];
    const double n = static_cast<double>(std::max<std::int64_t>(1, l.repeat));
    const double t = l.latency_s * n;
    r.layers += 1;
    r.time_s += t;
    r.flops += l.flops * n;
    r.stall_fraction += l.stall_fraction * t;  // weighted here, divided below
    total += t;
  }
  for (StepRow& r : out) {
    r.share = total > 0.0 ? r.time_s / total : 0.0;
    r.stall_fraction = r.time_s > 0.0 ? r.stall_fraction / r.time_s : 0.0;
    r.mfu = r.time_s > 0.0 && matrix_peak_flops_per_s > 0.0 ? r.flops / (r.time_s * matrix_peak_flops_per_s) : 0.0;
  }
  return out;
}

std::vector<RoofRow> hardware_roofs(const HardwareVariant& hw) {
  std::vector<RoofRow> out;
  switch (hw.kind) {
    case HardwareKind::roofline:
      out.push_back({"compute", "", hw.roofline.peak_flops_per_s, 0.0});
      out.push_back({"memory", "", 0.0, hw.roofline.memory_bandwidth_bytes_per_s});
      break;
    case HardwareKind::systolic: {
      const auto& s = hw.systolic;
      const double word = static_cast<double>(s.array.word_bytes);
      const double vector = s.vector_ops_per_cycle > 0 ? s.vector_ops_per_cycle : static_cast<double>(s.array.cols);
      out.push_back({"matrix", std::to_string(8 * s.array.word_bytes) + "-bit", hw.peak_flops_per_s(), 0.0});
      out.push_back({"vector", "", vector * s.clock_hz, 0.0});
      // Three operand interfaces (ifmap, filter, ofmap), each dram_words_per_cycle words a cycle.
      out.push_back({"memory", "", 0.0, 3.0 * static_cast<double>(s.array.dram_words_per_cycle) * word * s.clock_hz});
      break;
    }
    case HardwareKind::loopnest: {
      const auto& c = hw.loopnest;
      out.push_back({"matrix", std::to_string(c.bits()) + "-bit", c.peak_flops_per_s(), 0.0});
      if (c.vector_ops_per_cycle() > 0) out.push_back({"vector", "", c.vector_ops_per_cycle() * c.arch.clock_hz, 0.0});
      if (!c.arch.levels.empty()) {
        const auto& top = c.arch.levels.front();
        const double bw = top.read_bandwidth_words_per_cycle * static_cast<double>(top.instances()) *
                          static_cast<double>(top.word_bits) / 8.0 * c.arch.clock_hz;
        if (bw > 0.0) out.push_back({"memory", "", 0.0, bw});  // 0: unlimited, no roof
      }
      break;
    }
    case HardwareKind::system: {
      const auto& g = hw.system.system->chip.gpu;
      for (std::size_t p = 0; p < costmodel::kPrecisionCount; ++p) {
        const auto prec = static_cast<costmodel::Precision>(p);
        if (g.matrix_macs_per_cycle_per_core[p] > 0)
          out.push_back({"matrix", std::string(costmodel::to_string(prec)), g.peak_matrix_flops_per_s(prec), 0.0});
      }
      const double cores_hz = static_cast<double>(g.core_count) * g.clock_hz;
      out.push_back({"vector", "fp32", g.vector_fp32_flops_per_cycle_per_core * cores_hz, 0.0});
      out.push_back({"memory", "", 0.0, g.hbm_peak_bandwidth_bytes_per_s});
      break;
    }
  }
  return out;
}

PointDetails point_details(const Scenario& s, const search::DesignSpace& space, std::uint64_t index, bool curve) {
  const DecodedPoint p = decode_point(s, space, index);
  const HardwareVariant& hw = p.hw;
  const WorkloadEntry& wl = *p.wl;
  PointDetails d;
  if ((hw.kind == HardwareKind::system) != wl.model.has_value()) return d;  // not evaluated (run.cpp)
  if (hw.kind == HardwareKind::system) {
    // Without the curve, the step alone: the serving sweep and simulation change no layer or risk item.
    pf::SystemRequest req = served_request(hw.system, *wl.model, p.batch, s.seed);
    req.serving.enabled = curve;
    const pf::SystemEval e = pf::evaluate_system(hw.system.system->chip, hw.system.system->system, req);
    d.layers = served_layers(e);
    d.risk = served_risk(e.risk);
    const auto& g = hw.system.system->chip.gpu;
    d.step = step_breakdown(d.layers, g.peak_matrix_flops_per_s(pf::kernel_precision(g, req.phase.precision)));
    if (curve) d.curve = serving_curve(req, e);
    return d;
  }
  d.layers = layer_breakdown(s, space, index);
  d.risk = scenario_risk(*p.entry, hw);
  d.step = step_breakdown(d.layers, hw.peak_flops_per_s());
  return d;
}

std::vector<costmodel::LayerBreakdown> layer_breakdown(const Scenario& s, const search::DesignSpace& space,
                                                       std::uint64_t index) {
  const DecodedPoint p = decode_point(s, space, index);
  const HardwareVariant& hw = p.hw;
  const WorkloadEntry& wl = *p.wl;
  const std::int64_t batch = p.batch;
  if ((hw.kind == HardwareKind::system) != wl.model.has_value()) return {};
  if (hw.kind == HardwareKind::system) {
    // The step's layers alone: the serving sweep and simulation change none of them.
    pf::SystemRequest req = served_request(hw.system, *wl.model, batch, s.seed);
    req.serving.enabled = false;
    return served_layers(pf::evaluate_system(hw.system.system->chip, hw.system.system->system, req));
  }
  if (is_chip_point(*p.entry, hw, wl)) return chip_layer_breakdown(*p.entry, hw, wl, batch);
  return hw.kind == HardwareKind::roofline ? costmodel::layer_breakdown(hw.roofline, wl, batch)
                                           : costmodel::layer_breakdown(hw.systolic, wl, batch);
}

}  // namespace dse
