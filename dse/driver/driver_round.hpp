// One round of the driver (internal to dse/driver/driver.cpp): a round's positions handed out to
// ranks in chunks by guided self-scheduling (rank 0 serves the chunks and works too), each chunk
// evaluated on the rank's TBB arena and filed into its local archive and objective front.
#pragma once

#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <exception>

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "dse/driver/context.hpp"
#include "dse/driver/driver.hpp"
#include "dse/driver/driver_archive.hpp"

namespace dse::driver_detail {

struct RoundWork {
  std::vector<std::pair<std::uint64_t, PointRecord>> rows;  // (position in round, record), store all / nsga2
  std::vector<std::uint64_t> indices;                       // the point indices this rank evaluated
  std::uint64_t evaluated = 0;
  std::uint64_t feasible = 0;
};

// A rank's points are evaluated on --threads threads: one task arena of that many slots (the
// calling thread and threads - 1 TBB workers). An arena, not a process-wide global_control: on
// leaving its scope a global_control lifted the limit and TBB started the workers the default
// arena had asked for, from the destructor; with the address space spent (a run out of memory,
// unwinding) that thread could not start, and TBB's exception from a destructor aborted the run
// (exit 134) instead of its one-line error and exit 1.
//
// Filing overlaps evaluation: a chunk's records go into the archive and the objective front on a
// task of the arena while the calling thread goes on to the next chunk (the archive's batch
// filing, a dominance filter over the archive, was 12% of a 2-thread run's evaluation time when
// it ran between chunks). One filing task at a time, chunks filed in the order evaluated, so the
// archive and the front receive the same points in the same order as before. drain() waits for
// it: every reader of the archive or the front calls it first (run_round does at its end).
class RoundRunner {
 public:
  RoundRunner(const PointModel& model, int threads, Archive& archive, ObjectiveFront& front, bool keep_rows)
      : model_(model), archive_(archive), front_(front), keep_rows_(keep_rows), arena_(std::max(1, threads)) {}
  RoundRunner(const RoundRunner&) = delete;
  RoundRunner& operator=(const RoundRunner&) = delete;
  RoundRunner(RoundRunner&&) = delete;
  RoundRunner& operator=(RoundRunner&&) = delete;
  ~RoundRunner();

  // Evaluates positions [begin, end) of `ids` on the arena; their filing is started, not awaited.
  // Throws what the previous chunk's filing threw.
  void run_chunk(const std::vector<std::uint64_t>& ids, std::uint64_t begin, std::uint64_t end, RoundWork& out);
  // Waits for the filing in flight; the error it threw, if any (null otherwise).
  [[nodiscard]] std::exception_ptr drain() noexcept;
  // Evaluates `ids` on the arena (nothing filed): the probes of the hypervolume reference.
  std::vector<PointRecord> evaluate(const std::vector<std::uint64_t>& ids);

 private:
  const PointModel& model_;
  Archive& archive_;
  ObjectiveFront& front_;
  bool keep_rows_;
  tbb::task_arena arena_;
  tbb::task_group filing_;           // the filing in flight, run and waited inside arena_
  std::vector<PointRecord> filed_;   // the chunk it files
  bool filing_pending_ = false;
  int filing_sync_ = 0;              // ThreadSanitizer's sync object for the filing's hand-off
};

// Evaluate positions [0, ids.size()) over all ranks in dynamic chunks of min_chunk to max_chunk
// points (collective). Returns false when the round was cut short by a cancellation (on any rank).
// `rank0_work` (local, may be empty) runs on rank 0 once the other ranks have their first chunks,
// so that they take more of the round while it runs; an exception from it fails the round as a
// failed chunk does.
bool run_round(Context& ctx, const std::vector<std::uint64_t>& ids, std::uint64_t min_chunk, std::uint64_t max_chunk,
               RoundRunner& runner, RoundWork& work, const DriverOptions& opt,
               const std::function<void()>& rank0_work = {});

// Every rank's evaluations of the round, on every rank, ordered by position (collective), each with
// its first `metrics` constraint metrics only (the sampler's budgets: the rest are never read). With
// `workloads` (local, may be null), each evaluation's workload id is appended to it in the same order.
std::vector<search::Evaluation> all_evaluations(Context& ctx, const PointModel& model, const RoundWork& work,
                                                std::size_t metrics, std::vector<std::uint32_t>* workloads = nullptr);

inline bool cancelled(const DriverOptions& o) { return o.cancel != nullptr && o.cancel->load(); }

}  // namespace dse::driver_detail
