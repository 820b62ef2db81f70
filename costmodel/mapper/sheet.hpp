// Mapping sheet: what the mapper chose for one operator and what it costs,
// as plain values (the dse layer prints them as text or JSON).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "costmodel/mapper/mapper.hpp"
#include "costmodel/roofline.hpp"

namespace dse::costmodel::mapper {

struct SheetLevel {
  std::string name;
  std::string temporal;      // "K16 M4" (non-unit factors)
  std::string order;         // non-unit temporal loops, outermost first, e.g. "M K"
  std::string spatial;       // "x: K16 y: C4", or "" when none
  std::string keeps;         // kept tensors, e.g. "A B Z"
  std::int64_t used_words = 0;      // per instance, double buffering included
  std::int64_t capacity_words = 0;  // 0 = unbounded
  double occupancy = 0.0;           // used / capacity (0 when unbounded)
  std::int64_t instances_used = 0;
  std::int64_t instances = 0;
  double cycles = 0.0;              // bandwidth-limited cycles of one instance
  double energy_j = 0.0;
};

struct MappingSheet {
  std::string op;
  std::string fusion_group = "none";  // filled in by the fusion planner when one runs
  bool feasible = false;
  std::string reason;
  int precision_bits = 0;
  std::vector<SheetLevel> levels;     // outermost first
  Bottleneck bottleneck = Bottleneck::compute;
  std::string bottleneck_level;       // the level that bounds the cycles ("" when compute-bound)
  double cycles = 0.0;
  double latency_s = 0.0;
  double energy_j = 0.0;
  double energy_per_mac_j = 0.0;
  double percent_of_peak = 0.0;
  double memory_stall_fraction = 0.0;  // (cycles - compute cycles) / cycles
  std::string objective;
  std::string strategy;
  std::int64_t evaluated = 0;
  double gap_to_bound = 0.0;
  double bound_value = 0.0;
  // Whether the mapping is proven optimal on the objective (the branch and bound
  // finished, or the objective reaches the lower bound); otherwise gap_to_bound says
  // how far from the bound it may be.
  bool proven_optimal = false;
  // What ended the search: "finished" (the branch and bound completed, or the local
  // search converged), "evaluation cap" or "time budget" (then the result depends on
  // the machine's speed).
  std::string stopped_by;
};

MappingSheet make_sheet(const loopnest::Architecture& a, const loopnest::Problem& p, const MapResult& r);

}  // namespace dse::costmodel::mapper
