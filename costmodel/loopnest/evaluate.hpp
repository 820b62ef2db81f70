// Loop-nest analysis (after Timeloop's nest analysis and buffer model): for an
// Architecture, a Problem and a Mapping, the words moved at every level for
// every tensor, the capacity used, energy, cycles and feasibility.
// evaluate() is re-entrant, allocates nothing and runs in a few hundred
// nanoseconds, so a mapper can call it millions of times.
#pragma once

#include <array>
#include <cstdint>

#include "costmodel/loopnest/architecture.hpp"
#include "costmodel/loopnest/mapping.hpp"
#include "costmodel/loopnest/problem.hpp"

namespace dse::costmodel::loopnest {

enum class Infeasible : std::uint8_t {
  none,
  capacity_exceeded,      // tiles kept at `level` exceed its capacity
  fanout_exceeded,        // spatial factors at `level` exceed the mesh below it
  unsupported_precision,  // no compute rate for the operand precision
  bad_factors,            // factors do not cover a dimension, or are < 1
  keep_not_allowed,       // the mapping keeps a tensor the level may not hold
  bad_shape,              // problem/architecture/mapping sizes disagree
};
const char* infeasible_name(Infeasible r) noexcept;

// Counts are per instance of the level, in words.
struct TensorStats {
  bool kept = false;
  std::int64_t reads = 0;    // words sent inwards (to the next keeping level or the MACs)
  std::int64_t fills = 0;    // words written from the level above
  std::int64_t updates = 0;  // partial sums written back from below
  std::int64_t utilized_capacity = 0;  // tile, words
  std::int64_t partition = 0;          // distinct words this instance ever holds (outputs)
  // Child instances served per read (multicast) or reduced per update (spatial reduction).
  double fanout_per_access = 1.0;
};

struct LevelCost {
  std::array<TensorStats, kMaxTensors> tensors{};
  std::int64_t instances = 1;           // of the architecture
  std::int64_t utilized_instances = 1;  // used by the mapping
  std::int64_t capacity_used_words = 0; // per instance, double buffering included
  double read_energy_j = 0.0;           // all utilised instances
  double fill_energy_j = 0.0;
  double update_energy_j = 0.0;
  double leak_energy_j = 0.0;
  double energy_j = 0.0;
  double cycles = 0.0;  // bandwidth-limited cycles of one instance
};

struct NestCost {
  bool feasible = true;
  Infeasible reason = Infeasible::none;
  int reason_level = -1;  // storage level index, or -1
  int num_levels = 0;
  std::array<LevelCost, kMaxLevels> levels{};
  double macs = 0.0;          // of the problem
  double padded_macs = 0.0;   // iterations walked, padding included
  std::int64_t compute_instances_used = 0;
  double compute_cycles = 0.0;
  double cycles = 0.0;        // max(compute, every level's bandwidth cycles)
  double latency_s = 0.0;
  double utilization = 0.0;   // MACs / (cycles * peak MACs per cycle)
  double compute_energy_j = 0.0;
  double energy_j = 0.0;
};

NestCost evaluate(const Architecture& arch, const Problem& problem, const Mapping& mapping) noexcept;

}  // namespace dse::costmodel::loopnest
