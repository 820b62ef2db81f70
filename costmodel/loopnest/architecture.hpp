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
  // Energy of one access vector (block_words words); leak per instance per cycle.
  double read_energy_j = 0.0;
  double fill_energy_j = 0.0;    // Timeloop/Accelergy "write"
  double update_energy_j = 0.0;
  double leak_energy_j_per_cycle = 0.0;
  std::uint32_t may_keep = 0xFFFFFFFFu;  // bit t: tensor t may live here
  [[nodiscard]] std::int64_t instances() const noexcept { return mesh_x * mesh_y; }
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
};

// Why an architecture is malformed ("" when fine): no levels, too many levels,
// meshes that shrink going inwards or do not divide.
std::string validate(const Architecture& a);

}  // namespace dse::costmodel::loopnest
