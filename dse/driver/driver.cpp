#include "dse/driver/driver.hpp"

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <utility>

#include "dse/driver/agree.hpp"
#include "dse/driver/context.hpp"
#include "dse/driver/driver_archive.hpp"
#include "dse/driver/driver_checkpoint.hpp"
#include "dse/driver/driver_quality.hpp"
#include "dse/driver/driver_round.hpp"
#include "dse/error.hpp"
#include "search/exhaustive_sampler.hpp"
#include "search/nsga2.hpp"
#include "search/random_sampler.hpp"

namespace dse {

namespace {

using Clock = std::chrono::steady_clock;
using driver_detail::Archive;
using driver_detail::ArchivePart;
using driver_detail::cancelled;
using driver_detail::get;
using driver_detail::kDeflate;
using driver_detail::ObjectiveFront;
using driver_detail::put;
using driver_detail::QualityBound;
using driver_detail::QualityRow;
using driver_detail::RoundRunner;
using driver_detail::RoundWork;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// How far rank 0's archive and front queues may grow before it files them inside a chunk
// (ConstraintArchive::defer_flushes; the other ranks: kDeferredFlushFactor, 2). Rank 0 answers chunk
// requests between its chunks: in a 2-rank single-op bench run one of its chunks that filed its
// queue took 143 ms and the worker waited 126 ms for replies. At 4, rank 0 files at the round's end
// with the others instead: 2-rank medians 0.75-0.86 s -> 0.70-0.88 s (lower in 4 of 5 alternated
// pairs, docs/speed.md), for up to one round's records more held on rank 0 (the largest rank's peak
// memory 268-292 -> 267-316 MB there).
constexpr std::size_t kRank0DeferredFlushFactor = 4;

// ---- samplers -----------------------------------------------------------------------------------

std::unique_ptr<search::Sampler> make_sampler(const PointModel& model, const SearchPlan& plan) {
  const std::uint64_t n = model.space.size();
  switch (plan.sampler) {
    case SamplerKind::exhaustive: return std::make_unique<search::ExhaustiveSampler>(n);
    case SamplerKind::random: return std::make_unique<search::RandomSampler>(n, plan.samples, plan.seed);
    case SamplerKind::nsga2: {
      search::Nsga2Options o;
      o.population = plan.population;
      o.generations = plan.generations;
      o.seed = plan.seed;
      o.islands = plan.islands;
      o.migration_interval = plan.migration_interval;
      o.migration_size = plan.migration_size;
      return std::make_unique<search::Nsga2Sampler>(model.space, model.senses, o);
    }
  }
  throw std::logic_error("unknown sampler");
}

// NSGA-II islands over ranks (issue 59): rank r selects islands [r K / P, (r + 1) K / P) and the
// ranks all-gather the parents each island keeps, instead of every rank selecting every island.
// The exchange is a collective inside tell(), which the driver calls inside agreed(): every rank
// tells the same results and reaches the same exchanges, and a rank that fails between two of them
// still takes part in the next one (the sampler then throws on every rank), so agree() follows.
void share_selections(search::Sampler& s, const SearchPlan& plan, Context& ctx) {
  if (plan.sampler != SamplerKind::nsga2 || plan.islands < 2 || ctx.size() < 2) return;
  static_cast<search::Nsga2Sampler&>(s).share_selections(
      static_cast<std::size_t>(ctx.rank()), static_cast<std::size_t>(ctx.size()), [&ctx](std::vector<std::byte> mine) {
        Bytes b(mine.size());
        if (!mine.empty()) std::memcpy(b.data(), mine.data(), mine.size());
        const Bytes all = driver_detail::all_gather_bytes(ctx, std::move(b));
        std::vector<std::byte> out(all.size());
        if (!all.empty()) std::memcpy(out.data(), all.data(), all.size());
        return out;
      });
}

void seek(search::Sampler& s, SamplerKind kind, std::uint64_t rows_done) {
  if (kind == SamplerKind::exhaustive) static_cast<search::ExhaustiveSampler&>(s).seek(rows_done);
  if (kind == SamplerKind::random) static_cast<search::RandomSampler&>(s).seek(rows_done);
}

std::uint64_t planned_points(const PointModel& model, const SearchPlan& plan) {
  switch (plan.sampler) {
    case SamplerKind::exhaustive: return model.space.size();
    case SamplerKind::random: return std::min(plan.samples, model.space.size());
    case SamplerKind::nsga2: return plan.population * (plan.generations + 1);
  }
  return 0;
}

class Progress {
 public:
  Progress(bool enabled, std::uint64_t planned, std::uint64_t done)
      : enabled_(enabled), planned_(planned), start_done_(done), tty_(isatty(STDERR_FILENO) != 0) {}

  void update(std::uint64_t done, std::size_t archive, bool final) {
    if (!enabled_ || (final && done == last_done_)) return;
    last_done_ = done;
    const auto now = Clock::now();
    if (!final && now - last_ < std::chrono::seconds(1)) return;
    last_ = now;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double rate = elapsed > 0 ? static_cast<double>(done - start_done_) / elapsed : 0.0;
    const double left = rate > 0 && planned_ > done ? static_cast<double>(planned_ - done) / rate : 0.0;
    std::fprintf(stderr, "%sdse: %llu/%llu points (%.1f%%), %.0f points/s, ETA %.0f s, archive %zu%s",
                 tty_ ? "\r" : "", static_cast<unsigned long long>(done), static_cast<unsigned long long>(planned_),
                 planned_ > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(planned_) : 100.0, rate,
                 left, archive, tty_ && !final ? "" : "\n");
    std::fflush(stderr);
  }

 private:
  bool enabled_;
  std::uint64_t planned_;
  std::uint64_t start_done_;
  bool tty_;
  std::uint64_t last_done_ = ~std::uint64_t{0};
  Clock::time_point start_ = Clock::now();
  Clock::time_point last_ = Clock::now() - std::chrono::seconds(2);
};

// One drive() over a file: the counters and checkpoint datasets it resumes from, the rounds, the
// checkpoints by time, the quality samples and the final archive.
class Driver {
 public:
  Driver(Context& ctx, const PointModel& model, const SearchPlan& plan, const DriverOptions& opt, hid_t file)
      : ctx_(ctx),
        model_(model),
        plan_(plan),
        opt_(opt),
        file_(file),
        store_rows_(opt.store == Store::all && h5::has_link(file, "points")),
        needs_results_(plan.sampler == SamplerKind::nsga2),
        archive_(model),
        front_(model),
        runner_(model, opt.threads, archive_, front_, store_rows_ || needs_results_),
        round_points_(std::max<std::uint64_t>(64, static_cast<std::uint64_t>(ctx.size()) * 64)) {
    if (ctx.size() > 1) {  // filed together at the rounds' ends (evaluate_round); one rank waits on none
      // Rank 0 answers the other ranks' chunk requests between its chunks, so a filing it is forced into
      // inside a chunk stalls them (kRank0DeferredFlushFactor); the others may file alone.
      const std::size_t factor =
          ctx.rank() == 0 ? kRank0DeferredFlushFactor : search::ConstraintArchive::kDeferredFlushFactor;
      archive_.defer_flushes(factor);
      front_.defer_flushes(factor);
    }
  }

  DriverResult run();

 private:
  void open_attempt();
  void restore();
  bool evaluate_round();
  void write_round_rows(RoundWork& work, std::uint64_t round_size);
  void sample_quality(std::uint64_t generation);
  void file_gathered();
  void size_next_round(std::uint64_t points, double eval_s);
  void checkpoint();
  void finish();

  Context& ctx_;
  const PointModel& model_;
  const SearchPlan& plan_;
  const DriverOptions& opt_;
  hid_t file_;
  bool store_rows_;
  bool needs_results_;
  // The committed counters (driver.hpp), and this run's progress past them.
  std::uint64_t rows_done_ = 0;
  std::uint64_t evaluated_ = 0;
  std::uint64_t feasible_ = 0;
  std::int64_t rounds_ = 0;  // checkpoints committed
  std::int64_t state_attempt_ = 0;
  std::int64_t archive_attempt_ = 0;
  std::int64_t attempt_ = 0;
  std::int64_t archive_round_ = 0;
  std::uint64_t archive_rows_ = 0;
  bool rewrite_archive_ = false;  // the next checkpoint writes the archive afresh
  std::uint64_t quality_committed_ = 0;
  bool finished_ = false;  // a killed run that had written its final archive (kFinished)
  std::unique_ptr<search::Sampler> sampler_;
  Archive archive_;
  ObjectiveFront front_;
  // NSGA-II, rank 0: the objective front of every point evaluated, filed from the evaluations every
  // rank receives each generation anyway, so a quality sample needs no collective.
  std::optional<ObjectiveFront> gathered_;
  // Rank 0: the feasible points received since the last file_gathered() (workload, index), and
  // their objectives, one row of senses.size() each.
  struct Received {
    std::vector<std::pair<std::uint32_t, std::uint64_t>> points;
    std::vector<double> objectives;
  } received_;
  std::optional<std::pair<std::uint64_t, std::uint64_t>> quality_due_;  // rank 0: {evaluated, generation} to sample
  RoundRunner runner_;
  std::vector<QualityBound> bounds_;      // rank 0
  std::vector<QualityRow> quality_rows_;  // rank 0: taken since the last checkpoint
  std::uint64_t next_sample_ = 0;         // exhaustive and random: the next quality sample
  std::vector<std::uint64_t> since_checkpoint_;  // indices this rank evaluated since the last checkpoint
  BigVector<PointRecord> scratch_;        // checkpoint buffers, kept from one to the next
  std::vector<std::uint64_t> entered_;
  std::optional<Progress> progress_;
  std::uint64_t round_points_;
  std::uint64_t archived_ = 0;  // the archive size at the last checkpoint
  Clock::time_point last_checkpoint_ = Clock::now();
  double last_checkpoint_s_ = 0.0;
  DriverResult result_;
};

// The resume counters, read by every rank, and this attempt's number, counted and flushed before
// it creates any dataset.
void Driver::open_attempt() {
  agreed(ctx_, [&] {
    rows_done_ = static_cast<std::uint64_t>(h5::read_int_attribute(file_, kRowsDone));
    evaluated_ = static_cast<std::uint64_t>(h5::read_int_attribute(file_, kEvaluated));
    feasible_ = static_cast<std::uint64_t>(h5::read_int_attribute(file_, kFeasible));
    rounds_ = h5::read_int_attribute(file_, kRoundsDone);
    auto int_or_0 = [&](const char* key) { return h5::has_attribute(file_, key) ? h5::read_int_attribute(file_, key) : 0; };
    state_attempt_ = int_or_0(kStateAttempt);
    archive_attempt_ = int_or_0(kArchiveAttempt);
    quality_committed_ = static_cast<std::uint64_t>(int_or_0(kQualityRows));
    attempt_ = int_or_0(kAttempt) + 1;
    finished_ = int_or_0(kFinished) == 1;
  });
  set_attribute(file_, kAttempt, attempt_);
  h5::flush(file_);
  if (opt_.rounds_committed != nullptr) *opt_.rounds_committed = rounds_;
}

// The sampler, the local archive and objective front as the committed checkpoint left them, and
// the hypervolume bounds. A run killed after its final archive was written (kFinished) has
// nothing left to evaluate, and its checkpoint datasets may be gone: it only finishes.
void Driver::restore() {
  driver_detail::ArchiveCheckpoint saved;
  bool has_quality = false;
  bool has_bounds = false;
  agreed(ctx_, [&] {
    sampler_ = make_sampler(model_, plan_);
    share_selections(*sampler_, plan_, ctx_);
    if (finished_) return;
    if (plan_.sampler == SamplerKind::nsga2) {
      const auto state =
          driver_detail::read_bytes_dataset(file_, checkpoint_name("sampler_state", rounds_, state_attempt_));
      if (!state.empty()) static_cast<search::Nsga2Sampler&>(*sampler_).restore_state(state);
    } else {
      seek(*sampler_, plan_.sampler, rows_done_);
    }
    saved = driver_detail::restore_archive(
        ctx_, file_, opt_, store_rows_, rows_done_, rounds_, archive_attempt_,
        [&](const std::vector<std::uint64_t>& ids) { return runner_.evaluate(ids); },
        [&](const PointRecord& r) {
          archive_.insert(r);
          front_.insert(r);
        });
    has_quality = h5::has_link(file_, "hypervolume");
    has_bounds = has_quality && h5::dataset_rows(h5::open_dataset(file_, "hypervolume_bounds")) > 0;
    if (has_bounds && ctx_.rank() == 0) bounds_ = driver_detail::read_quality_bounds(file_);
  });
  archive_round_ = saved.round;
  archive_rows_ = saved.rows;
  rewrite_archive_ = saved.rewrite;
  next_sample_ = driver_detail::next_quality_sample(rows_done_);
  if (finished_) return;
  if (!has_quality) driver_detail::create_quality_datasets(file_);  // a checkpoint of an earlier version
  if (!has_bounds) {
    bounds_ = driver_detail::probe_bounds(ctx_, model_, runner_);
    driver_detail::write_quality_bounds(file_, ctx_, bounds_);
  }
  if (needs_results_) {  // the restored fronts merged once; each generation's records are added after
    ObjectiveFront merged = driver_detail::global_front(ctx_, model_, front_);
    if (ctx_.rank() == 0) gathered_.emplace(std::move(merged));
  }
}

DriverResult Driver::run() {
  // More threads than TBB's default (the cores this process may use) need its worker limit
  // raised; lowering it again at the end starts no thread (lifting a limit does: RoundRunner).
  std::optional<tbb::global_control> more_workers;
  if (opt_.threads > tbb::this_task_arena::max_concurrency()) {
    more_workers.emplace(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(opt_.threads));
  }
  open_attempt();
  restore();
  progress_.emplace(opt_.progress && ctx_.rank() == 0, planned_points(model_, plan_), evaluated_);
  while (!finished_ && !sampler_->done()) {
    if (!evaluate_round()) {
      result_.interrupted = true;  // the last checkpoint stays; the rounds after it are redone on resume
      break;
    }
    // A checkpoint when rank 0 has worked --checkpoint-interval seconds since the last one, at
    // the end, and before a signal stops the run here.
    const bool due = ctx_.rank() == 0 && (seconds_since(last_checkpoint_) >= opt_.checkpoint_interval_s ||
                                          sampler_->done());
    const std::int64_t flags = ctx_.max((cancelled(opt_) ? 2 : 0) + (due ? 1 : 0));
    if (flags >= 1) checkpoint();
    if (flags >= 2) {
      result_.interrupted = true;
      break;
    }
  }
  result_.evaluated = evaluated_;
  result_.feasible = feasible_;
  // A signal from here on stops the run at the next of these points, where the file holds a
  // checkpoint (before the merge) or the final archive (after it) to resume from.
  if (!result_.interrupted && ctx_.max(cancelled(opt_) ? 1 : 0) != 0) result_.interrupted = true;
  if (!result_.interrupted) finish();
  if (!result_.interrupted) progress_->update(evaluated_, result_.archive_size, true);
  return result_;
}

// One round: rank 0 sizes it (cut at the next quality sample of exhaustive and random search),
// every rank's sampler asks the same ids, the ranks evaluate them, NSGA-II is told every result,
// the rows are written. Returns false when a signal cut it short (on any rank).
bool Driver::evaluate_round() {
  Bytes sz;
  put(sz, round_points_);
  sz = ctx_.broadcast(sz, 0);
  std::size_t off = 0;
  std::uint64_t n_ask = get<std::uint64_t>(sz, off);
  if (!needs_results_) n_ask = std::min(n_ask, next_sample_ - rows_done_);
  std::vector<std::uint64_t> ids;
  agreed(ctx_, [&] {
    ids = sampler_->ask(n_ask);
    if (ids.empty() && !sampler_->done()) throw Error("sampler handed out no points but is not done");
  });
  if (ids.empty()) return true;
  const auto t0 = Clock::now();
  // Chunks of at least 16 points per thread (TBB splits a chunk over the threads).
  const auto threads = static_cast<std::uint64_t>(std::max(1, opt_.threads));
  RoundWork work;
  if (!run_round(ctx_, ids, 16 * threads, 16384 * threads, runner_, work, opt_, [this] { file_gathered(); })) {
    return false;
  }
  // The local archives and fronts are filed when any rank's queue is due, on every rank at once: a
  // rank's filing (a dominance filter over its archive, ~50 ms at 64,000 queued rows) inside a chunk
  // held up rank 0's chunk replies, or the others at the round's end.
  const bool archive_due = ctx_.max(archive_.flush_due() ? 1 : 0) != 0;
  const bool front_due = ctx_.max(front_.flush_due() ? 1 : 0) != 0;
  if (archive_due || front_due) {
    agreed(ctx_, [&] {
      if (archive_due) archive_.settle();
      if (front_due) front_.settle();
    });
  }
  const double eval_s = seconds_since(t0);
  const std::size_t generation = needs_results_ ? static_cast<search::Nsga2Sampler&>(*sampler_).generation() : 0;
  std::vector<search::Evaluation> evals;
  // Rank 0 keeps every evaluation of an NSGA-II run, with its workload, for the front of every point
  // (file_gathered): the results every rank receives anyway, no records gathered.
  if (needs_results_) {
    std::vector<std::uint32_t> workloads;
    // Only the constraint metrics the sampler reads are sent and told (none: make_sampler sets no budgets).
    const std::size_t metrics = static_cast<search::Nsga2Sampler&>(*sampler_).budgets().size();
    evals = driver_detail::all_evaluations(ctx_, model_, work, metrics, gathered_ ? &workloads : nullptr);
    if (gathered_) {
      for (std::size_t i = 0; i < evals.size(); ++i) {
        if (!evals[i].feasible) continue;
        received_.points.push_back({workloads[i], evals[i].index});
        received_.objectives.insert(received_.objectives.end(), evals[i].objectives.begin(), evals[i].objectives.end());
      }
    }
  }
  agreed(ctx_, [&] {
    if (needs_results_) static_cast<search::Nsga2Sampler&>(*sampler_).tell(std::move(evals));
  });
  result_.evaluate_s += seconds_since(t0);
  const auto tw = Clock::now();
  write_round_rows(work, ids.size());
  rows_done_ += ids.size();
  evaluated_ += ctx_.sum(work.evaluated);
  feasible_ += ctx_.sum(work.feasible);
  since_checkpoint_.insert(since_checkpoint_.end(), work.indices.begin(), work.indices.end());
  if (needs_results_) {
    const std::size_t now = static_cast<search::Nsga2Sampler&>(*sampler_).generation();
    if (now != generation) quality_due_.emplace(evaluated_, now);
  } else if (rows_done_ >= next_sample_ || sampler_->done()) {
    sample_quality(0);
    next_sample_ = driver_detail::next_quality_sample(rows_done_);
  }
  result_.checkpoint_s += seconds_since(tw);
  size_next_round(ids.size(), eval_s);
  return true;
}

// The round's rows at their places in /points (collective; --store all).
void Driver::write_round_rows(RoundWork& work, std::uint64_t round_size) {
  if (!store_rows_) return;
  std::vector<PointRecord> buf;
  std::vector<h5::RowRun> runs;
  agreed(ctx_, [&] {
    std::sort(work.rows.begin(), work.rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    buf.reserve(work.rows.size());
    for (const auto& [p, r] : work.rows) {
      const std::uint64_t row = rows_done_ + p;
      if (!runs.empty() && runs.back().offset + runs.back().count == row) {
        ++runs.back().count;
      } else {
        runs.push_back({row, 1});
      }
      buf.push_back(r);
    }
  });
  const h5::Handle type = point_record_type();
  const h5::Handle points = h5::open_dataset(file_, "points");
  h5::set_rows(points, rows_done_ + round_size);
  h5::write_runs(points, type, buf.data(), runs, ctx_.distributed());
}

// NSGA-II, rank 0 (local): the points received since the last call filed into the front of every
// point, and the quality sample of the generation that ended then, if one did. Run at the start of
// the next round, while the other ranks evaluate (their chunks balance it), or before a checkpoint.
void Driver::file_gathered() {
  if (!gathered_) return;
  const std::size_t m = model_.senses.size();
  for (std::size_t i = 0; i < received_.points.size(); ++i) {
    const auto [workload, index] = received_.points[i];
    gathered_->insert(workload, index, std::span<const double>(received_.objectives).subspan(i * m, m));
  }
  received_.points.clear();
  received_.objectives.clear();
  if (!quality_due_) return;
  gathered_->settle();
  const auto rows =
      driver_detail::hypervolume_rows(model_, bounds_, *gathered_, quality_due_->first, quality_due_->second);
  quality_rows_.insert(quality_rows_.end(), rows.begin(), rows.end());
  quality_due_.reset();
}

// The hypervolume of the front of every point evaluated so far, per workload (driver_quality.hpp),
// on rank 0, which keeps the rows until the next checkpoint. Exhaustive and random search: the
// ranks' fronts merged (NSGA-II: file_gathered).
void Driver::sample_quality(std::uint64_t generation) {
  ObjectiveFront merged = driver_detail::global_front(ctx_, model_, front_);
  agreed(ctx_, [&] {
    if (ctx_.rank() != 0) return;
    merged.settle();
    const auto rows = driver_detail::hypervolume_rows(model_, bounds_, merged, evaluated_, generation);
    quality_rows_.insert(quality_rows_.end(), rows.begin(), rows.end());
  });
}

// Rank 0 sizes the next round from the evaluation rate: --checkpoint-interval seconds long (or ten
// times the last checkpoint's cost), at most max_round_points per rank, so that chunks stay
// large on big jobs (rank 0 serves every chunk request).
void Driver::size_next_round(std::uint64_t points, double eval_s) {
  if (ctx_.rank() != 0) return;
  const double rate = static_cast<double>(points) / std::max(eval_s, 1e-6);
  const double target_s = std::max(opt_.round_s, 10.0 * last_checkpoint_s_);
  round_points_ = std::clamp<std::uint64_t>(static_cast<std::uint64_t>(rate * target_s), 64,
                                            opt_.max_round_points * static_cast<std::uint64_t>(ctx_.size()));
}

// The checkpoint (collective): the points that entered this rank's local archive since the last
// one are appended to the archive checkpoint (kArchiveRows); when the appended rows pass twice the
// archive, all local archives are written afresh to a dataset named by the checkpoint. Then the
// sampler state, the hypervolume rows, the counters, and a flush. The counters switch to the new
// checkpoint only after it is written and flushed, and the old datasets are deleted after that,
// so a crash at any moment leaves the counters naming a complete checkpoint.
void Driver::checkpoint() {
  const auto tc = Clock::now();
  std::vector<std::uint64_t> local;
  agreed(ctx_, [&] {
    test_fault_point("checkpoint", ctx_.rank());
    file_gathered();
    archive_.settle();
    const std::span<const PointRecord> records = archive_.view(scratch_);
    if (!std::is_sorted(since_checkpoint_.begin(), since_checkpoint_.end())) {
      std::sort(since_checkpoint_.begin(), since_checkpoint_.end());  // in order already on a sweep
    }
    entered_.clear();
    local.reserve(records.size());
    for (const auto& r : records) {
      local.push_back(r.index);
      if (std::binary_search(since_checkpoint_.begin(), since_checkpoint_.end(), r.index)) entered_.push_back(r.index);
    }
  });
  archived_ = ctx_.sum(local.size());
  const std::int64_t old_archive_round = archive_round_;
  const std::int64_t old_archive_attempt = archive_attempt_;
  const std::int64_t old_state_attempt = state_attempt_;
  if (rewrite_archive_ || archive_rows_ + ctx_.sum(entered_.size()) > 2 * archived_ + opt_.checkpoint_slack_rows) {
    rewrite_archive_ = false;
    archive_round_ = rounds_ + 1;
    archive_attempt_ = attempt_;
    const h5::Handle ds =
        driver_detail::fresh_archive_checkpoint(file_, checkpoint_name("checkpoint_archive", archive_round_, attempt_));
    archive_rows_ = driver_detail::write_rank_rows(ds, ctx_, local, 0);
  } else {
    const h5::Handle ds =
        h5::open_dataset(file_, checkpoint_name("checkpoint_archive", archive_round_, archive_attempt_));
    archive_rows_ += driver_detail::write_rank_rows(ds, ctx_, entered_, archive_rows_);
  }
  state_attempt_ = attempt_;
  driver_detail::write_bytes_dataset(file_, ctx_, checkpoint_name("sampler_state", rounds_ + 1, attempt_),
                                     plan_.sampler == SamplerKind::nsga2
                                         ? static_cast<search::Nsga2Sampler&>(*sampler_).save_state()
                                         : std::vector<std::byte>{});
  quality_committed_ = driver_detail::append_quality_rows(file_, ctx_, quality_rows_, quality_committed_);
  quality_rows_.clear();
  h5::flush(file_);  // a failed write stops every rank (h5.hpp)
  ++rounds_;
  set_attribute(file_, kRowsDone, static_cast<std::int64_t>(rows_done_));
  set_attribute(file_, kRoundsDone, rounds_);
  set_attribute(file_, kEvaluated, static_cast<std::int64_t>(evaluated_));
  set_attribute(file_, kFeasible, static_cast<std::int64_t>(feasible_));
  set_attribute(file_, kArchiveRound, archive_round_);
  set_attribute(file_, kArchiveRows, static_cast<std::int64_t>(archive_rows_));
  set_attribute(file_, kStateAttempt, state_attempt_);
  set_attribute(file_, kArchiveAttempt, archive_attempt_);
  set_attribute(file_, kQualityRows, static_cast<std::int64_t>(quality_committed_));
  h5::flush(file_);  // a failed write stops every rank (h5.hpp)
  if (opt_.rounds_committed != nullptr) *opt_.rounds_committed = rounds_;
  std::vector<std::string> old = {checkpoint_name("sampler_state", rounds_ - 1, old_state_attempt)};
  if (archive_round_ != old_archive_round || archive_attempt_ != old_archive_attempt)
    old.push_back(checkpoint_name("checkpoint_archive", old_archive_round, old_archive_attempt));
  for (const auto& name : old) h5::remove_link(file_, name);
  since_checkpoint_.clear();
  progress_->update(evaluated_, archived_, false);
  last_checkpoint_s_ = seconds_since(tc);
  result_.checkpoint_s += last_checkpoint_s_;
  last_checkpoint_ = Clock::now();
}

// The final archive: the local archives merged, each rank writing its part of /archive; then
// kFinished, and the checkpoints deleted. A run that had got that far before it was killed reads
// its part of /archive back.
void Driver::finish() {
  const auto tm = Clock::now();
  ArchivePart part;
  BigVector<PointRecord> sorted;
  agreed(ctx_, [&] {
    file_gathered();  // nothing left after the last checkpoint, which the end of the search makes
    if (finished_) {
      part = driver_detail::read_archive_part(file_, ctx_);
    } else {
      sorted = archive_.take_sorted();
    }
  });
  if (!finished_) {
    part = driver_detail::global_archive(ctx_, model_, std::move(sorted));
    driver_detail::write_archive(file_, ctx_, part);
    quality_committed_ = driver_detail::append_quality_rows(file_, ctx_, quality_rows_, quality_committed_);
    quality_rows_.clear();
    set_attribute(file_, kQualityRows, static_cast<std::int64_t>(quality_committed_));
    h5::flush(file_);
    set_attribute(file_, kFinished, 1);
    h5::flush(file_);  // /archive is the committed result from here; the checkpoints may go
  }
  result_.archive = std::move(part.records);
  result_.archive_offset = part.offset;
  result_.archive_size = part.total;
  if (ctx_.max(cancelled(opt_) ? 1 : 0) != 0) {
    result_.interrupted = true;
    return;
  }
  result_.stale_checkpoints = driver_detail::delete_checkpoints(
      file_, attempt_,
      {checkpoint_name("sampler_state", rounds_, state_attempt_),
       checkpoint_name("checkpoint_archive", archive_round_, archive_attempt_)});
  result_.merge_s = seconds_since(tm);
}

}  // namespace

std::string checkpoint_name(const char* base, std::int64_t round, std::int64_t attempt) {
  std::string n = std::string(base) + "_" + std::to_string(round);
  if (attempt > 0) n += "_a" + std::to_string(attempt);
  return n;
}

void init_driver_file(hid_t file, Store store) {
  const h5::Handle type = point_record_type();
  if (store == Store::all) (void)h5::create_extensible_1d(file, "points", type, 4096, kDeflate);
  (void)driver_detail::fresh_archive_checkpoint(file, checkpoint_name("checkpoint_archive", 0, 0));
  (void)h5::create_extensible_1d(file, checkpoint_name("sampler_state", 0, 0), H5T_STD_U8LE, 65536, 0);
  set_attribute(file, kRowsDone, 0);
  set_attribute(file, kRoundsDone, 0);
  set_attribute(file, kEvaluated, 0);
  set_attribute(file, kFeasible, 0);
  set_attribute(file, kArchiveRound, 0);
  set_attribute(file, kArchiveRows, 0);
  set_attribute(file, kQualityRows, 0);
  driver_detail::create_quality_datasets(file);
}

DriverResult drive(Context& ctx, const PointModel& model, const SearchPlan& plan, const DriverOptions& opt,
                   hid_t file) {
  return Driver(ctx, model, plan, opt, file).run();
}

}  // namespace dse
