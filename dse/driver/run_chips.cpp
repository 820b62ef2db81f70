#include "dse/driver/run_chips.hpp"

#include <map>
#include <memory>
#include <set>

#include "costmodel/lowering/chip_eval.hpp"
#include "costmodel/lowering/lowering.hpp"

namespace dse {

namespace {

namespace lw = costmodel::lowering;
namespace wl = costmodel::workload;

struct ChipStep {
  std::shared_ptr<const wl::OperatorGraph> graph;
  wl::PhaseSpec phase;
};

// The step a point runs: the model's graph at the batch, or a layer list's.
ChipStep step_of(const WorkloadEntry& w, std::int64_t batch) {
  if (w.chip) return {w.chip->graphs.at(batch), w.chip->phase_at(batch)};
  ChipStep s;
  s.phase.phase = wl::Phase::prefill;
  s.phase.batch = batch;
  s.graph = std::make_shared<const wl::OperatorGraph>(lw::layer_list_graph(w, batch));
  return s;
}

// "" when the chip can be evaluated, else why not (a combination of overrides the scenario
// reader did not check that leaves an invalid hierarchy).
std::string unusable(const HardwareVariant& hw) {
  return hw.kind == HardwareKind::loopnest ? costmodel::loopnest::validate(hw.loopnest.arch) : std::string();
}

lw::GraphCost cost_of(const HardwareEntry& e, const HardwareVariant& hw, const ChipStep& s) {
  switch (hw.kind) {
    case HardwareKind::roofline:
      return lw::evaluate_graph(hw.roofline, *s.graph, s.phase);
    case HardwareKind::systolic:
      return lw::evaluate_graph(hw.systolic, *s.graph, s.phase);
    case HardwareKind::loopnest:
      return lw::evaluate_graph(hw.loopnest, *s.graph, s.phase, *e.loopnest->memo);
    case HardwareKind::system:
      break;
  }
  return {};
}

}  // namespace

bool is_chip_point(const HardwareEntry& entry, const HardwareVariant& hw, const WorkloadEntry& wl) {
  if (hw.kind == HardwareKind::loopnest) return entry.loopnest != nullptr && !wl.model.has_value();
  return wl.chip != nullptr && (hw.kind == HardwareKind::roofline || hw.kind == HardwareKind::systolic);
}

void evaluate_chip_point(const HardwareEntry& entry, const HardwareVariant& hw, const WorkloadEntry& wl,
                         std::int64_t batch, PointRecord& r) {
  r.engineering_risk = hw.engineering_risk();
  if (!unusable(hw).empty()) {
    r.feasible = 0;
    set_name(r.bottleneck, "unsupported");
    return;
  }
  const lw::GraphCost c = cost_of(entry, hw, step_of(wl, batch));
  r.latency_s = c.latency_s;
  r.throughput_samples_per_s = c.latency_s > 0.0 ? static_cast<double>(batch) / c.latency_s : 0.0;
  r.energy_per_sample_j = c.energy_j / static_cast<double>(batch);
  r.flops = c.flops;
  r.dram_bytes = c.dram_bytes;
  r.memory_bytes = c.memory_bytes;
  r.p99_latency_s = c.latency_s;  // one step, no queueing: every batch takes the same time
  r.ttft_p50_s = r.ttft_p90_s = r.ttft_p99_s = r.e2e_p50_s = c.latency_s;
  r.power_w = c.latency_s > 0.0 ? c.energy_j / c.latency_s : 0.0;
  r.accelerator_power_w = r.power_w;
  const double peak = hw.peak_flops_per_s();
  r.mfu = peak > 0.0 && c.latency_s > 0.0 ? c.flops / (c.latency_s * peak) : 0.0;
  r.feasible = c.feasible ? 1 : 0;
  set_name(r.bottleneck,
           c.reason == "unsupported" ? std::string("unsupported") : std::string(costmodel::to_string(c.bottleneck)));
}

std::vector<costmodel::LayerBreakdown> chip_layer_breakdown(const HardwareEntry& entry, const HardwareVariant& hw,
                                                            const WorkloadEntry& wl, std::int64_t batch) {
  if (!unusable(hw).empty()) return {};
  const lw::GraphCost c = cost_of(entry, hw, step_of(wl, batch));
  std::vector<costmodel::LayerBreakdown> out;
  for (const lw::OperatorCost& o : c.ops) {
    costmodel::LayerBreakdown b;
    b.name = o.name;
    b.type = o.type;
    b.repeat = o.repeat;
    b.latency_s = o.latency_s;
    b.energy_j = o.energy_j;
    b.flops = o.flops;
    b.dram_bytes = o.dram_bytes;
    b.stall_fraction = o.stall_fraction;
    b.pct_of_peak = o.pct_of_peak;
    b.bottleneck = o.bottleneck;
    b.mapping = o.mapping + (o.repeat > 1 ? ", x" + std::to_string(o.repeat) : std::string());
    out.push_back(std::move(b));
  }
  // Fusion groups: an epilogue chain (a batch norm fused into a convolution's output, a ReLU into
  // the batch norm's) is named after the operator it starts at, that operator included.
  std::map<std::string, std::string> root;
  std::set<std::string> roots;
  for (const lw::OperatorCost& o : c.ops)
    if (!o.fused_into.empty()) {
      const auto it = root.find(o.fused_into);
      root[o.name] = it != root.end() ? it->second : o.fused_into;
      roots.insert(root[o.name]);
    }
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto it = root.find(c.ops[i].name);
    if (!c.ops[i].fused_into.empty() && it != root.end()) out[i].fusion_group = it->second;
    else if (roots.count(c.ops[i].name) != 0) out[i].fusion_group = c.ops[i].name;
  }
  return out;
}

}  // namespace dse
