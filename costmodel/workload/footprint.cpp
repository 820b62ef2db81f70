#include "costmodel/workload/footprint.hpp"

#include <algorithm>

namespace dse::costmodel::workload {

namespace {

double activation_inputs(const Operator& op) {
  return bytes_of_role(op, TensorRole::input);
}

}  // namespace

MemoryFootprint memory_footprint(const OperatorGraph& g, const PhaseSpec& phase) noexcept {
  MemoryFootprint f;
  const GraphTotals t = totals(g);
  f.weight_bytes = t.parameter_bytes;
  f.kv_cache_bytes = g.kv_cache_bytes;
  if (phase.phase == Phase::training) {
    f.gradient_bytes = t.parameter_bytes;
    const double master = phase.precision == Precision::fp32 ? 0.0 : 4.0;
    f.optimizer_bytes = t.parameters * (master + 4.0 + 4.0);
    for (const Block& b : g.blocks) {
      double saved = 0.0;
      for (const Node& n : b.nodes) {
        if (n.op.pass == Pass::forward) saved += activation_inputs(n.op);
      }
      if (saved == 0.0) continue;  // a backward block
      const double repeat = static_cast<double>(b.repeat);
      if (phase.recompute && b.checkpoint && !b.nodes.empty()) {
        f.activation_bytes += repeat * activation_inputs(b.nodes.front().op) + saved;
      } else {
        f.activation_bytes += repeat * saved;
      }
    }
  } else {
    for (const Block& b : g.blocks) {
      for (const Node& n : b.nodes) {
        const double live = activation_inputs(n.op) + bytes_of_role(n.op, TensorRole::output);
        f.activation_bytes = std::max(f.activation_bytes, live);
      }
    }
  }
  return f;
}

CapacityCheck check_capacity(const MemoryFootprint& f, double capacity_bytes) noexcept {
  CapacityCheck c;
  c.required_bytes = f.total_bytes();
  c.capacity_bytes = capacity_bytes;
  if (c.required_bytes > capacity_bytes) {
    c.feasible = false;
    c.reason = FootprintStatus::exceeds_capacity;
    c.shortfall_bytes = c.required_bytes - capacity_bytes;
  }
  return c;
}

}  // namespace dse::costmodel::workload
