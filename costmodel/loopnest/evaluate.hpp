// Loop-nest analysis (after Timeloop's nest analysis and buffer model): for an
// Architecture, a Problem and a Mapping, the words moved at every level for
// every tensor, the capacity used, energy, cycles and feasibility.
// evaluate() is re-entrant, allocates nothing and runs in about a hundred
// nanoseconds (with a PreparedNest), so a mapper can call it millions of times.
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

// Everything evaluate() needs that depends only on the architecture and the
// problem, computed once by prepare() and reused for every mapping of that
// operator on that hardware (a mapper evaluates millions). Plain values, no
// references: it may outlive `arch` and `problem` and be copied freely.
// evaluate(prepare(a, p), m) equals evaluate(a, p, m) field for field.
struct PreparedLevel {
  std::int64_t capacity_words = 0;
  std::int64_t instances = 1;
  std::int64_t fan_x = 0;  // child instances per instance along each mesh axis
  std::int64_t fan_y = 0;
  std::int64_t block_words = 1;
  double read_bandwidth_words_per_cycle = 0.0;
  double write_bandwidth_words_per_cycle = 0.0;
  double shared_bandwidth_words_per_cycle = 0.0;
  double read_energy_j = 0.0;
  double fill_energy_j = 0.0;
  double update_energy_j = 0.0;
  double leak_energy_j_per_cycle = 0.0;
  bool power_gated = false;
  std::uint32_t may_keep = 0;
};

struct PreparedTensor {
  std::array<Rank, kMaxRanks> ranks{};
  int num_ranks = 0;
  bool read_write = false;
  bool simple = true;          // every coordinate is one dimension with a positive coefficient
  std::uint32_t dim_mask = 0;  // bit d: dimension d indexes the tensor
  std::array<std::int8_t, kMaxDims> rank_of{};    // coordinate fed by dimension d, -1 if none
  std::array<std::int64_t, kMaxDims> coef_of{};   // its coefficient
  std::array<std::int8_t, kMaxRanks> used_dims{};  // first dimension of every coordinate
  int num_used = 0;
};

struct PreparedNest {
  bool shape_ok = false;  // level, dimension and tensor counts within limits
  int num_levels = 0;
  int num_dims = 0;
  int ext_dims = 0;  // dimensions whose extents matter: num_dims, or more when a coordinate uses one beyond
  int num_tensors = 0;
  std::array<std::int64_t, kMaxDims> dim_sizes{};
  double macs = 0.0;
  double macs_per_point = 1.0;
  bool rate_ok = false;  // a compute rate exists for the operand precision
  double macs_per_cycle = 0.0;
  double energy_per_mac_j = 0.0;
  double peak_macs_per_cycle = 0.0;  // all compute instances
  double clock_hz = 1e9;
  std::array<PreparedLevel, kMaxLevels> levels{};
  std::array<PreparedTensor, kMaxTensors> tensors{};
};

PreparedNest prepare(const Architecture& arch, const Problem& problem) noexcept;
// The fast path for many mappings of one (architecture, problem) pair.
NestCost evaluate(const PreparedNest& prepared, const Mapping& mapping) noexcept;

}  // namespace dse::costmodel::loopnest
