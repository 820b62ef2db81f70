// `dse run`: the scenario's design space, evaluated over MPI ranks and TBB
// threads, merged into a Pareto front and written to HDF5.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dse/results.hpp"
#include "dse/scenario.hpp"
#include "search/design_space.hpp"

namespace dse {

class Context;

struct RunOptions {
  std::string scenario_path;
  std::string output_path;
  int threads = 0;  // 0: TBB's default (all cores)
};

struct RunSummary {
  std::uint64_t points = 0;
  std::uint64_t feasible = 0;
  std::uint64_t pareto = 0;
  double wall_time_s = 0.0;
  std::string output_path;
};

// Knobs in index order (fastest first): hardware, workload, batch.
search::DesignSpace design_space(const Scenario& s);
PointRecord evaluate_point(const Scenario& s, const search::DesignSpace& space, std::uint64_t index);

// The Pareto points (throughput max, latency min, energy min, risk min) among the
// feasible rows, computed separately per workload; indices ascending.
std::vector<std::uint64_t> pareto_indices(const std::vector<PointRecord>& rows);

// Collective over the context. Throws InputError for a bad scenario (on every
// rank, before any file is created), IoError for output problems.
RunSummary run(Context& ctx, const RunOptions& options);

}  // namespace dse
