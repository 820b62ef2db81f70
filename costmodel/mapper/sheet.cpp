#include "costmodel/mapper/sheet.hpp"

namespace dse::costmodel::mapper {

namespace lp = loopnest;

MappingSheet make_sheet(const lp::Architecture& a, const lp::Problem& p, const MapResult& r) {
  MappingSheet s;
  s.op = p.name;
  s.feasible = r.feasible;
  s.reason = lp::infeasible_name(r.reason);
  s.precision_bits = r.precision_bits;
  s.objective = objective_name(r.objective);
  s.strategy = strategy_name(r.strategy);
  s.evaluated = r.evaluated;
  s.gap_to_bound = r.gap;
  s.bound_value = r.bound_value;
  s.proven_optimal = r.proven_optimal;
  s.stopped_by = r.time_limited ? "time budget" : r.evaluation_limited ? "evaluation cap" : "finished";
  const lp::NestCost& c = r.cost;
  const int nl = static_cast<int>(a.levels.size());
  for (int l = 0; l < nl; ++l) {
    const auto lu = static_cast<std::size_t>(l);
    const lp::LevelMapping& lm = r.mapping.levels[lu];
    SheetLevel sl;
    sl.name = a.levels[lu].name;
    std::string x, y;
    for (int d = 0; d < p.num_dims; ++d) {
      const auto du = static_cast<std::size_t>(d);
      if (lm.temporal[du] > 1) sl.temporal += (sl.temporal.empty() ? "" : " ") + p.dim_names[du] + std::to_string(lm.temporal[du]);
      if (lm.spatial[du] > 1) {
        std::string& ax = lm.axis[du] == lp::Axis::x ? x : y;
        ax += (ax.empty() ? "" : " ") + p.dim_names[du] + std::to_string(lm.spatial[du]);
      }
    }
    for (int i = 0; i < p.num_dims; ++i) {
      const int d = lm.order[static_cast<std::size_t>(i)];
      if (d >= 0 && d < p.num_dims && lm.temporal[static_cast<std::size_t>(d)] > 1) {
        sl.order += (sl.order.empty() ? "" : " ") + p.dim_names[static_cast<std::size_t>(d)];
      }
    }
    if (!x.empty()) sl.spatial = "x: " + x;
    if (!y.empty()) sl.spatial += (sl.spatial.empty() ? "" : " ") + ("y: " + y);
    for (int t = 0; t < p.num_tensors; ++t) {
      if ((lm.keep >> t) & 1u) sl.keeps += (sl.keeps.empty() ? "" : " ") + p.tensors[static_cast<std::size_t>(t)].name;
    }
    sl.used_words = c.levels[lu].capacity_used_words;
    sl.capacity_words = a.levels[lu].capacity_words;
    sl.occupancy = sl.capacity_words > 0 ? static_cast<double>(sl.used_words) / static_cast<double>(sl.capacity_words) : 0.0;
    sl.instances = c.levels[lu].instances;
    sl.instances_used = c.levels[lu].utilized_instances;
    sl.cycles = c.levels[lu].cycles;
    sl.energy_j = c.levels[lu].energy_j;
    s.levels.push_back(sl);
  }
  s.cycles = c.cycles;
  s.latency_s = c.latency_s;
  s.energy_j = c.energy_j;
  s.energy_per_mac_j = c.macs > 0.0 ? c.energy_j / c.macs : 0.0;
  s.percent_of_peak = 100.0 * c.utilization;
  s.memory_stall_fraction = c.cycles > 0.0 ? (c.cycles - c.compute_cycles) / c.cycles : 0.0;
  if (!r.feasible) {
    s.bottleneck = Bottleneck::capacity;
  } else if (c.cycles > c.compute_cycles) {
    s.bottleneck = Bottleneck::memory;
    for (int l = 0; l < nl; ++l) {
      if (c.levels[static_cast<std::size_t>(l)].cycles >= c.cycles) {
        s.bottleneck_level = a.levels[static_cast<std::size_t>(l)].name;
        break;
      }
    }
  }
  return s;
}

}  // namespace dse::costmodel::mapper
