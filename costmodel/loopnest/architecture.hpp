// A memory hierarchy for loop-nest analysis: storage levels outermost first
// (DRAM/HBM ... register files), each replicated on a 2-D mesh, with the
// compute units at the bottom. A level that keeps no tensor and has capacity 0
// is a pure spatial fan-out point (Timeloop's inter_*_spatial levels).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "costmodel/loopnest/problem.hpp"

namespace dse::costmodel::loopnest {

inline constexpr int kMaxLevels = 8;  // storage levels of one hierarchy (fan-out levels included)

struct StorageLevel {
  std::string name;
  std::int64_t capacity_words = 0;  // per instance; 0 = unbounded (DRAM)
  int word_bits = 8;
  int block_words = 1;              // words per access vector (width / word width)
  std::int64_t mesh_x = 1;          // instances = mesh_x * mesh_y, counted from the top
  std::int64_t mesh_y = 1;
  double read_bandwidth_words_per_cycle = 0.0;   // per instance; 0 = unlimited
  double write_bandwidth_words_per_cycle = 0.0;  // fills + updates; 0 = unlimited
  double shared_bandwidth_words_per_cycle = 0.0;  // reads, fills and updates together; 0 = unlimited
  // Energy of one access vector (block_words words); leak per instance per cycle.
  double read_energy_j = 0.0;
  double fill_energy_j = 0.0;    // Timeloop/Accelergy "write"
  double update_energy_j = 0.0;
  double leak_energy_j_per_cycle = 0.0;
  // Idle instances are power-gated: only the instances a mapping uses leak (Timeloop's
  // default, buffer.cpp ComputeLeaksPerCycle: every instance gated on its own).
  bool power_gated = false;
  std::uint32_t may_keep = 0xFFFFFFFFu;  // bit t: tensor t may live here
  // Kinds of tensor this level may hold (a Timeloop keep/bypass list written by
  // role, so that one description serves every operator): kKeep* bits. Turned into
  // may_keep for one problem by bind_keep_roles.
  std::uint8_t keep_roles = kKeepAll;
  [[nodiscard]] std::int64_t instances() const noexcept { return mesh_x * mesh_y; }

  static constexpr std::uint8_t kKeepWeights = 1;  // Tensor::weights
  static constexpr std::uint8_t kKeepInputs = 2;   // other read-only operands
  static constexpr std::uint8_t kKeepOutputs = 4;  // the read-write output
  static constexpr std::uint8_t kKeepAll = 7;
};

struct PrecisionRate {
  int bits = 0;  // operand precision; 0 = any
  double macs_per_cycle = 1.0;       // per compute instance
  double energy_per_mac_j = 0.0;
};

struct ComputeLevel {
  std::string name = "compute";
  std::int64_t mesh_x = 1;
  std::int64_t mesh_y = 1;
  std::array<PrecisionRate, 4> rates{};
  int num_rates = 1;
  [[nodiscard]] std::int64_t instances() const noexcept { return mesh_x * mesh_y; }
};

struct Architecture {
  std::string name;
  std::vector<StorageLevel> levels;  // outermost first
  ComputeLevel compute;
  double clock_hz = 1e9;
  // Containers of a Timeloop description that have no spatial fan-out, so no level of
  // their own: names a mapping may still target (the readers use it; the model does not).
  std::vector<std::string> plain_containers;
};

// `a` with each level's may_keep narrowed to the tensors of `p` whose role its
// keep_roles lists (levels that keep every role are unchanged).
Architecture bind_keep_roles(Architecture a, const Problem& p);

// Why an architecture is malformed ("" when fine): no levels, too many levels,
// meshes that shrink going inwards or do not divide.
std::string validate(const Architecture& a);

}  // namespace dse::costmodel::loopnest
