// `dse run`: the scenario's design space searched over MPI ranks and TBB threads
// (see dse/driver/driver.hpp), the archive and Pareto front written to HDF5.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "costmodel/breakdown.hpp"
#include "costmodel/platform/system.hpp"
#include "dse/driver/driver.hpp"
#include "dse/h5/results.hpp"
#include "dse/io/scenario.hpp"
#include "search/design_space.hpp"

namespace dse {

class Context;

struct RunOptions {
  std::string scenario_path;       // empty with resume
  std::string output_path;
  int threads = 0;                 // 0: one per core of the rank's CPU set (cpu_binding.hpp)
  Store store = Store::all;
  bool resume = false;             // continue OUTPUT.partial
  // With resume: continue even if a file the scenario reads has changed since the run started
  // (by default the run refuses, naming the file).
  bool resume_changed_inputs = false;
  double checkpoint_interval_s = 2.0;
  bool progress = true;
  const std::atomic<bool>* cancel = nullptr;  // SIGINT/SIGTERM: stop at the next safe point
  // Called on rank 0, when it happens, with a problem that did not fail the run: a resume
  // that rebuilt a lost checkpoint, a compression of /points that failed.
  std::function<void(const std::string&)> warn;
  // The commit of the program's sources, stored as the attribute `commit` ("" leaves "unknown").
  std::string commit;
};

struct RunSummary {
  std::uint64_t points = 0;        // evaluated
  std::uint64_t feasible = 0;
  std::uint64_t archive = 0;
  std::uint64_t pareto = 0;
  double wall_time_s = 0.0;
  // Rank 0's time per phase (DriverResult) and for the mapping sheets.
  double evaluate_s = 0.0;
  double checkpoint_s = 0.0;
  double merge_s = 0.0;
  double sheets_s = 0.0;
  double compress_s = 0.0;         // compressing /points after the run (rank 0, --store all)
  std::vector<int> rank_cores;     // per rank: the cores of its CPU set (sched_getaffinity)
  std::vector<int> rank_threads;   // per rank: its TBB threads
  std::string output_path;
  // Rank 0: the archive's rows the summary prints from (print_shortlist: the front under the
  // shortlist's default objectives, per workload), gathered from every rank's part, by index.
  std::vector<PointRecord> summary_rows;
};

// Knobs in index order (fastest first): hardware, workload, batch.
search::DesignSpace design_space(const Scenario& s);
// A point index decoded into the hardware variant, workload and batch it names.
struct DecodedPoint {
  std::vector<std::uint64_t> digits;
  const HardwareEntry* entry = nullptr;
  HardwareVariant hw;
  const WorkloadEntry* wl = nullptr;
  std::int64_t batch = 0;
};
DecodedPoint decode_point(const Scenario& s, const search::DesignSpace& space, std::uint64_t index);
PointRecord evaluate_point(const Scenario& s, const search::DesignSpace& space, std::uint64_t index);
// The driver's model of `s` (which, like `space`, must outlive it): evaluate_point, whose records
// must have finite, non-negative figures (InputError naming the point otherwise), and the
// objectives of to_evaluation.
PointModel point_model(const Scenario& s, const search::DesignSpace& space);
// The per-layer mapping sheet of point `index` (point_details.cpp).
std::vector<costmodel::LayerBreakdown> layer_breakdown(const Scenario& s, const search::DesignSpace& space,
                                                       std::uint64_t index);
// The request a served point evaluates (a model on a system variant at the point's batch,
// the cap on requests in flight per replica): the same as `dse eval` builds from its options.
costmodel::platform::SystemRequest served_request(const SystemVariant& v, const ModelWorkload& m, std::int64_t batch,
                                                  std::uint64_t seed);
// A model served on a system: the decode step at the point's batch (the most requests in
// flight per replica, `dse eval --max-batch`), the latency table over every batch size up
// to it, the static-batch sweep, and the simulation at the workload's arrival rate under
// the variant's batching policy and stack: `dse eval` of the same configuration, which
// tests/mpi/check_served_identity.py checks point by point.
costmodel::platform::SystemEval evaluate_served(const SystemVariant& v, const ModelWorkload& m, std::int64_t batch,
                                                std::uint64_t seed);
// The objectives (throughput max, latency min, energy min, risk min) and constraint
// metrics (p99 end-to-end latency, p99 TTFT, p99 TPOT, power, area, memory, cost) of a row.
inline constexpr std::size_t kConstraintMetrics = 7;
search::Evaluation to_evaluation(const PointRecord& r);
// The same into `e`, its vectors' storage reused.
void fill_evaluation(const PointRecord& r, search::Evaluation& e);
// The Pareto indices over the objectives among feasible rows, per workload; ascending.
std::vector<std::uint64_t> pareto_indices(const std::vector<PointRecord>& rows);

// Collective over the context. Throws InputError for a bad scenario or output path (on every
// rank, before any file is created; output_file.hpp says what is checked), IoError for output
// problems, Interrupted when cancelled (the partial file keeps the last checkpoint for --resume).
// A failure on any rank is thrown on every rank (agree.hpp).
RunSummary run(Context& ctx, const RunOptions& options);

}  // namespace dse
