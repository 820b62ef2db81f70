// The HDF5 result file: layout, writer (collective over ranks) and reader.
//
//   /points   one compound row per evaluated point, ordered by point index
//   /pareto   uint64 indices of the Pareto points (per workload), ascending
//   root attributes: layout_version, scenario, scenario_file, seed, version,
//                    ranks, threads, start_time, wall_time_s, objectives
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "dse/h5.hpp"

namespace dse {

class Context;

inline constexpr std::int64_t results_layout_version = 1;

// One row of /points. Plain data: its HDF5 compound type mirrors it field by field.
struct PointRecord {
  std::uint64_t index = 0;
  std::uint32_t hardware_id = 0;
  std::uint32_t workload_id = 0;
  std::int64_t batch = 0;
  char hardware[32] = {};
  char workload[32] = {};
  double throughput_samples_per_s = 0.0;
  double latency_s = 0.0;
  double energy_per_sample_j = 0.0;
  double engineering_risk = 0.0;
  double flops = 0.0;
  double dram_bytes = 0.0;
  double memory_bytes = 0.0;
  std::uint8_t feasible = 0;
  char bottleneck[16] = {};
};

// Copy a name into a fixed field, truncating and NUL-terminating.
template <std::size_t N>
void set_name(char (&field)[N], const std::string& s) {
  const std::size_t n = s.size() < N - 1 ? s.size() : N - 1;
  for (std::size_t i = 0; i < n; ++i) field[i] = s[i];
  for (std::size_t i = n; i < N; ++i) field[i] = '\0';
}

struct RunInfo {
  std::string scenario_text;
  std::string scenario_file;
  std::uint64_t seed = 0;
  std::string version;
  std::int64_t ranks = 1;
  std::int64_t threads = 1;
  std::string start_time;
  double wall_time_s = 0.0;
};

// Create `path` and write every rank's contiguous block of rows (rows of rank r
// start at `offset`; `total` rows in all) plus the Pareto indices (from rank 0;
// every rank passes the same list). Collective: every rank calls it.
void write_results(const std::string& path, Context& ctx, std::span<const PointRecord> rows,
                   std::uint64_t offset, std::uint64_t total, const std::vector<std::uint64_t>& pareto,
                   const RunInfo& info);

struct ResultsFile {
  RunInfo info;
  std::vector<PointRecord> points;
  std::vector<std::uint64_t> pareto;
};

// Read a whole result file; refuses files of another layout with an IoError.
ResultsFile read_results(const std::string& path);

}  // namespace dse
