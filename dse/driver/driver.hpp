// The distributed search driver: a sampler (exhaustive, random or NSGA-II) asks
// for points; each round's points are handed to ranks in dynamic chunks (rank 0
// serves the chunks and also works), evaluated with TBB inside each rank,
// written collectively to HDF5 at their row, and folded into a constraint-robust
// Pareto archive per workload. A checkpoint in the output file follows the round
// that ends --checkpoint-interval seconds of work after the last one, and the last
// round: an interrupted or killed run resumes from the last checkpoint, the rounds
// after it redone (the samplers are deterministic). The search quality (the
// hypervolume of the front per workload) is recorded at fixed points of the run
// (driver_quality.hpp). At the end each rank writes its index range of /archive.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "dse/h5/h5.hpp"
#include "dse/h5/results.hpp"
#include "dse/plan.hpp"
#include "search/big_pages.hpp"
#include "search/design_space.hpp"
#include "search/pareto.hpp"
#include "search/sampler.hpp"

namespace dse {

class Context;

// How to evaluate a point and read its objectives; `evaluate` must be thread-safe.
struct PointModel {
  search::DesignSpace space;
  std::vector<search::Sense> senses;       // objective senses
  std::size_t metric_count = 0;            // constraint metrics, each minimised
  std::function<PointRecord(std::uint64_t index)> evaluate;
  // A record's objectives and metrics written into `e`, whose vectors keep their storage: the
  // filing reads them for every point (1,048,576 on the single-op bench), and a fresh Evaluation
  // took two allocations each time.
  std::function<void(const PointRecord&, search::Evaluation& e)> fill_evaluation;

  [[nodiscard]] search::Evaluation to_evaluation(const PointRecord& r) const {
    search::Evaluation e;
    fill_evaluation(r, e);
    return e;
  }
};

struct DriverOptions {
  int threads = 1;
  Store store = Store::all;
  double round_s = 2.0;                    // target wall time of one round
  double checkpoint_interval_s = 2.0;      // seconds of work between checkpoints (and one at the end)
  std::uint64_t max_round_points = 1u << 20;
  // Appended archive-checkpoint rows allowed beyond twice the archive before the local
  // archives are written afresh (kArchiveRows).
  std::uint64_t checkpoint_slack_rows = 65536;
  bool progress = true;
  const std::atomic<bool>* cancel = nullptr;  // set by SIGINT/SIGTERM
  // Called on rank 0 with a problem the run recovered from (none when empty).
  std::function<void(const std::string&)> warn;
  // When set, the rounds committed in the file so far (its checkpoint counter), kept up to date:
  // after a failure, the caller knows whether the file holds a checkpoint to resume from.
  std::int64_t* rounds_committed = nullptr;
};

struct DriverResult {
  std::uint64_t evaluated = 0;             // over all ranks, this session and earlier ones
  std::uint64_t feasible = 0;
  bool interrupted = false;
  // This rank's part of the merged archive: rows [archive_offset, archive_offset + archive.size()) of
  // /archive, ordered by index (the parts of the ranks in rank order are the whole archive).
  BigVector<PointRecord> archive;
  std::uint64_t archive_offset = 0;
  std::uint64_t archive_size = 0;          // the whole archive's size (every rank)
  // Wall time of the phases on this rank (for the run summary): evaluating rounds
  // (including waits for other ranks at the end of a round), writing checkpoints and
  // rows, and merging the local archives at the end.
  double evaluate_s = 0.0;
  double checkpoint_s = 0.0;
  double merge_s = 0.0;
  // Checkpoint datasets that an earlier, killed attempt was writing when it died (kAttempt):
  // left in the file untouched (their object headers may be half written, and HDF5 reads a
  // header to unlink it); the finished output leaves them out when it is rewritten.
  std::vector<std::string> stale_checkpoints;
};

// Checkpoint attributes in the output file (besides /points, /archive, /sampler_state).
inline constexpr const char* kRowsDone = "checkpoint_rows";
inline constexpr const char* kRoundsDone = "checkpoint_rounds";
inline constexpr const char* kEvaluated = "checkpoint_evaluated";
inline constexpr const char* kFeasible = "checkpoint_feasible";
// The archive checkpoint is append-only: each round adds the points that entered a local
// archive in that round to dataset checkpoint_archive_<round> (the round that created
// it); the first `rows` rows are committed. Re-inserting them gives the same archive,
// since a point that left the archive was removed by one that is (or whose remover is)
// still there. When the rows pass twice the archive, the archives are written afresh.
inline constexpr const char* kArchiveRound = "checkpoint_archive_round";
inline constexpr const char* kArchiveRows = "checkpoint_archive_rows";
// Every drive() over a file is a new attempt (kAttempt, counted and flushed before it
// writes anything), and the checkpoint datasets it creates carry its number in their
// names (checkpoint_name), so a resumed run never opens, overwrites or unlinks what a
// killed attempt left half written. kStateAttempt / kArchiveAttempt: the attempts that
// wrote the committed sampler state and archive checkpoint.
inline constexpr const char* kAttempt = "checkpoint_attempt";
inline constexpr const char* kStateAttempt = "checkpoint_state_attempt";
inline constexpr const char* kArchiveAttempt = "checkpoint_archive_attempt";
// 1 once the final archive (/archive) is written and flushed, before the checkpoints are
// deleted: a run killed from then until the output is renamed (run.cpp) resumes from
// /archive and only finishes. (It failed: the committed checkpoint was gone while the
// counters still named it.)
inline constexpr const char* kFinished = "checkpoint_finished";
// The rows of /hypervolume that the checkpoint commits (driver_quality.hpp).
inline constexpr const char* kQualityRows = "checkpoint_hypervolume_rows";

// "BASE_ROUND" for attempt 0 (files written before attempts were counted), else
// "BASE_ROUND_aATTEMPT".
std::string checkpoint_name(const char* base, std::int64_t round, std::int64_t attempt);

// Prepare a fresh output file for the driver (collective): datasets and counters.
void init_driver_file(hid_t file, Store store);

// Run the search over `file`, continuing from its checkpoint. Collective.
DriverResult drive(Context& ctx, const PointModel& model, const SearchPlan& plan, const DriverOptions& options,
                   hid_t file);

}  // namespace dse
