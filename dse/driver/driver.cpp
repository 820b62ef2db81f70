#include "dse/driver/driver.hpp"

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <memory>
#include <optional>
#include <span>
#include <tuple>

#include "dse/driver/agree.hpp"
#include "dse/driver/context.hpp"
#include "dse/driver/driver_archive.hpp"
#include "dse/error.hpp"
#include "dse/parallel.hpp"
#include "search/exhaustive_sampler.hpp"
#include "search/nsga2.hpp"
#include "search/random_sampler.hpp"

namespace dse {

namespace {

using Clock = std::chrono::steady_clock;
constexpr int kTagRequest = 7401;
constexpr int kTagReply = 7402;  // 7403: the archive merge's (dse/driver/driver_archive.cpp)

// Byte packing, the archive and its merge across ranks: dse/driver/driver_archive.hpp.
using driver_detail::all_gather_bytes;
using driver_detail::Archive;
using driver_detail::get;
using driver_detail::global_archive;
using driver_detail::put;

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
      return std::make_unique<search::Nsga2Sampler>(model.space, model.senses, o);
    }
  }
  throw std::logic_error("unknown sampler");
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

// ---- one rank's share of a round -----------------------------------------------------------------

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
class RoundRunner {
 public:
  RoundRunner(const PointModel& model, int threads, Archive& archive, bool keep_rows)
      : model_(model), archive_(archive), keep_rows_(keep_rows), arena_(std::max(1, threads)) {}

  void run_chunk(const std::vector<std::uint64_t>& ids, std::uint64_t begin, std::uint64_t end, RoundWork& out) {
    std::vector<PointRecord> chunk(end - begin);
    arena_.execute(
        [&] { dse::parallel_for(begin, end, [&](std::uint64_t p) { chunk[p - begin] = model_.evaluate(ids[p]); }); });
    for (std::uint64_t p = begin; p < end; ++p) {
      const PointRecord& r = chunk[p - begin];
      out.indices.push_back(r.index);
      ++out.evaluated;
      if (r.feasible != 0) ++out.feasible;
      archive_.insert(r);
      if (keep_rows_) out.rows.emplace_back(p, r);
    }
  }

 private:
  const PointModel& model_;
  Archive& archive_;
  bool keep_rows_;
  tbb::task_arena arena_;
};

bool cancelled(const DriverOptions& o) { return o.cancel != nullptr && o.cancel->load(); }

// Guided self-scheduling over the positions of a round: each chunk is a share of what is
// left (large chunks first, small ones at the end so that ranks finish together), never
// below `min_chunk` nor above `max_chunk` points.
class ChunkCursor {
 public:
  ChunkCursor(std::uint64_t n, std::uint64_t min_chunk, std::uint64_t max_chunk, std::uint64_t share)
      : n_(n), min_(min_chunk), max_(max_chunk), share_(share) {}
  // The next [begin, end); begin == n when nothing is left.
  std::pair<std::uint64_t, std::uint64_t> take() {
    const std::uint64_t left = n_ - next_;
    const std::uint64_t size = std::min(left, std::clamp<std::uint64_t>(left / share_, min_, max_));
    const std::uint64_t b = next_;
    next_ += size;
    return {b, next_};
  }
  void finish() { next_ = n_; }

 private:
  std::uint64_t n_;
  std::uint64_t min_;
  std::uint64_t max_;
  std::uint64_t share_;
  std::uint64_t next_ = 0;
};

// Requests a worker rank keeps in flight: one chunk in hand and one asked for, so that
// rank 0 (which answers between its own chunks) never leaves a rank waiting idle.
constexpr int kRequestsInFlight = 2;

// Evaluate positions [0, ids.size()) over all ranks in dynamic chunks. Rank 0 works on
// chunks too and answers the other ranks' requests between its chunks; a worker rank
// keeps kRequestsInFlight requests open. No thread and no polling loop: when rank 0 has
// no work left it blocks on the requests still to answer. Returns false when the round
// was cut short by a cancellation (on any rank).
bool run_round(Context& ctx, const std::vector<std::uint64_t>& ids, std::uint64_t min_chunk,
               std::uint64_t max_chunk, RoundRunner& runner, RoundWork& work, const DriverOptions& opt) {
  const std::uint64_t n = ids.size();
  const auto ranks = static_cast<std::uint64_t>(ctx.size());
  ChunkCursor cursor(n, min_chunk, max_chunk, 4 * ranks);
  // A chunk that fails (a point whose figures overflow, an allocation) stops this rank's work;
  // the round is wound down (rank 0 hands out no more chunks) and the failure agreed at its end.
  std::exception_ptr failure;
  auto work_on = [&](std::uint64_t b, std::uint64_t e) {
    try {
      test_fault_point("evaluate", ctx.rank());
      runner.run_chunk(ids, b, e, work);
    } catch (...) {
      failure = std::current_exception();
    }
  };
  if (!ctx.distributed() || ctx.size() == 1) {
    for (auto [b, e] = cursor.take(); b < n && !failure; std::tie(b, e) = cursor.take()) {
      if (cancelled(opt)) return false;
      work_on(b, e);
    }
    agree(ctx, failure);  // one rank: the error as every rank would throw it
    return true;
  }
  bool stop = false;
  if (ctx.rank() == 0) {
    // Every worker rank gets exactly kRequestsInFlight "done" replies: the first one ends
    // its requests, the others answer the requests it still had open.
    std::vector<int> done_replies(static_cast<std::size_t>(ctx.size()), 0);
    int finished = 0;
    auto answer = [&](int src) {
      const Bytes req = ctx.receive(src, kTagRequest);
      if ((!req.empty() && req[0] == 'C') || cancelled(opt)) stop = true;
      if (stop) cursor.finish();
      const auto [b, e] = cursor.take();
      Bytes reply;
      put(reply, b);
      put(reply, e);
      put(reply, static_cast<std::uint8_t>(stop ? 1 : 0));
      ctx.send(reply, src, kTagReply);
      if (b >= n && ++done_replies[static_cast<std::size_t>(src)] == kRequestsInFlight) ++finished;
    };
    // Hand every worker rank its first chunks before working: the requests are sent as
    // the round starts, and a rank left waiting for rank 0's first chunk would idle.
    for (int k = 0; k < (ctx.size() - 1) * kRequestsInFlight; ++k) answer(ctx.wait_any(kTagRequest));
    for (;;) {
      for (int src = ctx.poll(kTagRequest); src >= 0; src = ctx.poll(kTagRequest)) answer(src);
      if (stop || cancelled(opt) || failure) {
        stop = true;
        break;
      }
      const auto [b, e] = cursor.take();
      if (b >= n) break;
      work_on(b, e);
    }
    if (stop) cursor.finish();
    while (finished < ctx.size() - 1) answer(ctx.wait_any(kTagRequest));
  } else {
    // A rank that failed or was cancelled asks with 'C': rank 0 then hands out nothing more.
    auto request = [&] { ctx.send(Bytes{cancelled(opt) || failure ? 'C' : 'R'}, 0, kTagRequest); };
    for (int i = 0; i < kRequestsInFlight; ++i) request();
    int open = kRequestsInFlight;
    bool done = false;
    while (open > 0) {
      const Bytes reply = ctx.receive(0, kTagReply);
      --open;
      std::size_t off = 0;
      const auto b = get<std::uint64_t>(reply, off);
      const auto e = get<std::uint64_t>(reply, off);
      if (get<std::uint8_t>(reply, off) != 0) stop = true;
      if (b >= n) {
        done = true;
        continue;
      }
      if (!done) {
        request();  // ask for the next chunk before working on this one
        ++open;
      }
      if (!stop && !cancelled(opt) && !failure) work_on(b, e);  // a stopped round is discarded
    }
  }
  agree(ctx, failure);
  const bool any_stop = ctx.max(stop || cancelled(opt) ? 1 : 0) != 0;
  return !any_stop;
}

// Gather every rank's evaluations of the round to all ranks, ordered by position.
std::vector<search::Evaluation> all_evaluations(Context& ctx, const PointModel& model, const RoundWork& work) {
  Bytes local;
  for (const auto& [p, r] : work.rows) {
    put(local, p);
    put(local, r);
  }
  const Bytes all = all_gather_bytes(ctx, std::move(local));
  std::vector<std::pair<std::uint64_t, PointRecord>> rows;
  for (std::size_t off = 0; off < all.size();) {
    const auto p = get<std::uint64_t>(all, off);
    rows.emplace_back(p, get<PointRecord>(all, off));
  }
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<search::Evaluation> out;
  out.reserve(rows.size());
  for (const auto& [p, r] : rows) out.push_back(model.to_evaluation(r));
  return out;
}

// Datasets are chunked but not compressed: with HDF5 1.10.8, collective writes to
// deflate-filtered datasets corrupted the heap in the kill/resume tests (a malloc
// assertion inside H5D__chunk_collective_write, about one run in ten with 4 ranks).
// /points is compressed after the run, serially by rank 0 (h5::rewrite_compressed in run.cpp).
constexpr int kDeflate = 0;

herr_t collect_checkpoint(hid_t /*group*/, const char* name, const H5L_info_t* /*info*/, void* out) {
  const std::string n = name;
  if (n.rfind("checkpoint_archive_", 0) == 0 || n.rfind("sampler_state_", 0) == 0) {
    static_cast<std::vector<std::string>*>(out)->push_back(n);
  }
  return 0;
}

// Remove the checkpoint datasets of this attempt and the committed ones (collective:
// every rank lists the same names in the same order); return the others, which killed
// attempts left behind and which are not touched (driver.hpp, kAttempt).
std::vector<std::string> delete_checkpoints(hid_t file, std::int64_t attempt, const std::vector<std::string>& committed) {
  std::vector<std::string> names;
  std::vector<std::string> stale;
  h5::check_status(H5Literate(file, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_checkpoint, &names), "H5Literate");
  const std::string mine = "_a" + std::to_string(attempt);
  for (const auto& n : names) {
    const bool ours = n.size() > mine.size() && n.compare(n.size() - mine.size(), mine.size(), mine) == 0;
    if (ours || std::find(committed.begin(), committed.end(), n) != committed.end()) {
      h5::check_status(H5Ldelete(file, n.c_str(), H5P_DEFAULT), "H5Ldelete " + n);
    } else {
      stale.push_back(n);
    }
  }
  return stale;
}

// A new dataset in place of any old one of that name (collective). Checkpoint data is
// written into fresh datasets rather than rewritten in place: rewriting a filtered
// chunk that other ranks wrote before left stale rows with parallel HDF5 1.10.
h5::Handle fresh_dataset(hid_t file, const std::string& name, hid_t type, std::uint64_t chunk_rows, int deflate) {
  h5::remove_link(file, name);
  return h5::create_extensible_1d(file, name, type, chunk_rows, deflate);
}

// Rank 0's `records` as /archive (collective; `rows` = records.size() on rank 0).
void write_archive(hid_t file, Context& ctx, const std::vector<PointRecord>& records, std::uint64_t rows) {
  const h5::Handle type = point_record_type();
  const h5::Handle ds = fresh_dataset(file, "archive", type, 1024, kDeflate);
  h5::set_rows(ds, rows);
  std::vector<h5::RowRun> runs;
  if (ctx.rank() == 0 && !records.empty()) runs.push_back({0, records.size()});
  h5::write_runs(ds, type, records.data(), runs, ctx.distributed());
}

// Each rank's `local` rows at `base` + the rows of lower ranks in dataset `ds`, which is
// resized to hold them (collective); returns the rows written over all ranks.
std::uint64_t write_rank_rows(hid_t ds, Context& ctx, std::span<const PointRecord> local, std::uint64_t base) {
  Bytes mine;
  put(mine, static_cast<std::uint64_t>(ctx.rank()));
  put(mine, static_cast<std::uint64_t>(local.size()));
  const Bytes all = all_gather_bytes(ctx, std::move(mine));
  std::vector<std::uint64_t> sizes(static_cast<std::size_t>(ctx.size()), 0);
  for (std::size_t off = 0; off < all.size();) {
    const auto r = get<std::uint64_t>(all, off);
    sizes.at(r) = get<std::uint64_t>(all, off);
  }
  std::uint64_t offset = base;
  std::uint64_t total = 0;
  for (std::size_t r = 0; r < sizes.size(); ++r) {
    if (static_cast<int>(r) < ctx.rank()) offset += sizes[r];
    total += sizes[r];
  }
  const h5::Handle type = point_record_type();
  h5::set_rows(ds, base + total);
  std::vector<h5::RowRun> runs;
  if (!local.empty()) runs.push_back({offset, local.size()});
  h5::write_runs(ds, type, local.data(), runs, ctx.distributed());
  return total;
}

void write_bytes_dataset(hid_t file, Context& ctx, const std::string& name, const std::vector<std::byte>& bytes) {
  const h5::Handle ds = fresh_dataset(file, name, H5T_STD_U8LE, 65536, 0);
  h5::set_rows(ds, bytes.size());
  std::vector<h5::RowRun> runs;
  if (ctx.rank() == 0 && !bytes.empty()) runs.push_back({0, bytes.size()});
  h5::write_runs(ds, H5T_NATIVE_UCHAR, bytes.data(), runs, ctx.distributed());
}

std::vector<std::byte> read_bytes_dataset(hid_t file, const std::string& name) {
  const h5::Handle ds = h5::open_dataset(file, name);
  std::vector<std::byte> out(h5::dataset_rows(ds));
  if (!out.empty()) h5::read_all(ds, H5T_NATIVE_UCHAR, out.data());
  return out;
}

std::vector<PointRecord> read_archive(hid_t file, const std::string& name) {
  const h5::Handle ds = h5::open_dataset(file, name);
  std::vector<PointRecord> out(h5::dataset_rows(ds));
  const h5::Handle type = point_record_type();
  if (!out.empty()) h5::read_all(ds, type, out.data());
  return out;
}

// The committed archive checkpoint: where it is, how many rows of it count, and whether the
// next checkpoint must write it afresh.
struct ArchiveCheckpoint {
  std::int64_t round = 0;
  std::uint64_t rows = 0;
  bool rewrite = false;
};

// This rank's share of the committed archive checkpoint of `file`, inserted into `archive`.
ArchiveCheckpoint restore_archive(Context& ctx, hid_t file, const DriverOptions& opt, bool store_rows,
                                  std::uint64_t rows_done, std::int64_t rounds, std::int64_t archive_attempt,
                                  Archive& archive) {
  ArchiveCheckpoint out;
  // A checkpoint written before the archive checkpoint became append-only has neither
  // attribute: its whole dataset of the last round is the archive.
  const bool appended = h5::has_attribute(file, kArchiveRound);
  out.round = appended ? h5::read_int_attribute(file, kArchiveRound) : rounds;
  const std::string committed_archive = checkpoint_name("checkpoint_archive", out.round, archive_attempt);
  const bool lost_archive = !h5::has_link(file, committed_archive);
  const std::string lost_what =
      "the archive checkpoint " + committed_archive + " that the file's counters name is missing (a killed run)";
  if (lost_archive && !store_rows) {
    throw IoError(lost_what + ", and the file keeps no rows to rebuild it from (--store " +
                  std::string(to_string(opt.store)) + "): the run cannot be resumed; start it again");
  }
  if (lost_archive) {
    // The counters name an archive checkpoint the file no longer links: seen once in the
    // kill -9 tests, killed right after the first checkpoint (how HDF5 lost the link is not
    // known). /points holds every row the counters commit, and the archive of those rows
    // is the archive the checkpoint held: it is rebuilt from them, and the next checkpoint
    // writes it afresh.
    // Read in blocks (rows past the committed count belong to an unfinished round).
    const h5::Handle points = h5::open_dataset(file, "points");
    if (h5::dataset_rows(points) < rows_done) throw IoError("/points is shorter than its committed rows");
    const h5::Handle record = point_record_type();
    const auto p = static_cast<std::uint64_t>(ctx.size());
    std::vector<PointRecord> block;
    for (std::uint64_t at = 0; at < rows_done;) {
      block.resize(static_cast<std::size_t>(std::min<std::uint64_t>(rows_done - at, 1u << 16)));
      h5::read_rows(points, record, at, block.size(), block.data());
      for (std::size_t i = 0; i < block.size(); ++i)
        if ((at + i) % p == static_cast<std::uint64_t>(ctx.rank())) archive.insert(block[i]);
      at += block.size();
    }
    out.rewrite = true;
    if (ctx.rank() == 0 && opt.warn) {
      opt.warn(lost_what + "; the archive was rebuilt from the " + std::to_string(rows_done) +
               " committed rows of /points");
    }
    return out;
  }
  std::vector<PointRecord> saved = read_archive(file, committed_archive);
  out.rows = appended ? static_cast<std::uint64_t>(h5::read_int_attribute(file, kArchiveRows)) : saved.size();
  if (saved.size() < out.rows) throw IoError("checkpoint archive is shorter than its committed rows");
  saved.resize(out.rows);  // rows past the committed count belong to an unfinished checkpoint
  const auto p = static_cast<std::size_t>(ctx.size());
  for (std::size_t i = static_cast<std::size_t>(ctx.rank()); i < saved.size(); i += p) archive.insert(saved[i]);
  return out;
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

}  // namespace

std::string checkpoint_name(const char* base, std::int64_t round, std::int64_t attempt) {
  std::string n = std::string(base) + "_" + std::to_string(round);
  if (attempt > 0) n += "_a" + std::to_string(attempt);
  return n;
}

void init_driver_file(hid_t file, Store store) {
  const h5::Handle type = point_record_type();
  if (store == Store::all) (void)h5::create_extensible_1d(file, "points", type, 4096, kDeflate);
  (void)h5::create_extensible_1d(file, checkpoint_name("checkpoint_archive", 0, 0), type, 1024, kDeflate);
  (void)h5::create_extensible_1d(file, checkpoint_name("sampler_state", 0, 0), H5T_STD_U8LE, 65536, 0);
  set_attribute(file, kRowsDone, 0);
  set_attribute(file, kRoundsDone, 0);
  set_attribute(file, kEvaluated, 0);
  set_attribute(file, kFeasible, 0);
  set_attribute(file, kArchiveRound, 0);
  set_attribute(file, kArchiveRows, 0);
}

DriverResult drive(Context& ctx, const PointModel& model, const SearchPlan& plan, const DriverOptions& opt,
                   hid_t file) {
  // More threads than TBB's default (the cores this process may use) need its worker limit
  // raised; lowering it again at the end starts no thread (lifting a limit does: RoundRunner).
  std::optional<tbb::global_control> more_workers;
  if (opt.threads > tbb::this_task_arena::max_concurrency()) {
    more_workers.emplace(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(opt.threads));
  }
  const bool store_rows = opt.store == Store::all && h5::has_link(file, "points");
  const bool needs_results = plan.sampler == SamplerKind::nsga2;

  // Resume state: every rank reads the same attributes and datasets.
  std::uint64_t rows_done = 0;
  std::uint64_t evaluated = 0;
  std::uint64_t feasible = 0;
  std::int64_t rounds = 0;
  std::int64_t state_attempt = 0;
  std::int64_t archive_attempt = 0;
  std::int64_t attempt = 0;
  agreed(ctx, [&] {
    rows_done = static_cast<std::uint64_t>(h5::read_int_attribute(file, kRowsDone));
    evaluated = static_cast<std::uint64_t>(h5::read_int_attribute(file, kEvaluated));
    feasible = static_cast<std::uint64_t>(h5::read_int_attribute(file, kFeasible));
    rounds = h5::read_int_attribute(file, kRoundsDone);
    auto attempt_of = [&](const char* key) { return h5::has_attribute(file, key) ? h5::read_int_attribute(file, key) : 0; };
    state_attempt = attempt_of(kStateAttempt);
    archive_attempt = attempt_of(kArchiveAttempt);
    // This attempt's number, counted and flushed before it creates any dataset.
    attempt = attempt_of(kAttempt) + 1;
  });
  set_attribute(file, kAttempt, attempt);
  h5::flush(file);
  if (opt.rounds_committed != nullptr) *opt.rounds_committed = rounds;

  // A run killed after its final archive was written (kFinished) has nothing left to
  // evaluate, and its checkpoint datasets may be gone: it only finishes, from /archive.
  bool finished = false;
  std::unique_ptr<search::Sampler> sampler;
  Archive archive(model);
  ArchiveCheckpoint saved;
  agreed(ctx, [&] {
    finished = h5::has_attribute(file, kFinished) && h5::read_int_attribute(file, kFinished) == 1;
    sampler = make_sampler(model, plan);
    if (finished) {
      // nothing to restore
    } else if (plan.sampler == SamplerKind::nsga2) {
      const auto state = read_bytes_dataset(file, checkpoint_name("sampler_state", rounds, state_attempt));
      if (!state.empty()) static_cast<search::Nsga2Sampler&>(*sampler).restore_state(state);
    } else {
      seek(*sampler, plan.sampler, rows_done);
    }
    if (!finished) saved = restore_archive(ctx, file, opt, store_rows, rows_done, rounds, archive_attempt, archive);
  });
  std::int64_t archive_round = saved.round;
  std::uint64_t archive_rows = saved.rows;
  bool rewrite_archive = saved.rewrite;  // the next checkpoint writes the archive afresh

  const std::uint64_t planned = planned_points(model, plan);
  Progress progress(opt.progress && ctx.rank() == 0, planned, evaluated);
  RoundRunner runner(model, opt.threads, archive, store_rows || needs_results);
  const h5::Handle type = point_record_type();
  std::uint64_t round_points = std::max<std::uint64_t>(64, static_cast<std::uint64_t>(ctx.size()) * 64);

  DriverResult result;
  // Buffers of the checkpoints, kept from round to round (records by the hundred thousand).
  std::vector<PointRecord> scratch;
  std::vector<PointRecord> entered;
  while (!finished && !sampler->done()) {
    // Rank 0 sizes the round from the measured rate; every rank's sampler asks the same ids.
    Bytes sz;
    put(sz, round_points);
    sz = ctx.broadcast(sz, 0);
    std::size_t off = 0;
    const auto n_ask = get<std::uint64_t>(sz, off);
    std::vector<std::uint64_t> ids;
    agreed(ctx, [&] {
      ids = sampler->ask(n_ask);
      if (ids.empty() && !sampler->done()) throw Error("sampler handed out no points but is not done");
    });
    if (ids.empty()) break;
    const auto t0 = Clock::now();
    // Chunks of at least 16 points per thread (TBB splits a chunk over the threads).
    const auto threads = static_cast<std::uint64_t>(std::max(1, opt.threads));
    RoundWork work;
    if (!run_round(ctx, ids, 16 * threads, 16384 * threads, runner, work, opt)) {
      result.interrupted = true;
      break;  // the last checkpoint stays; this round is redone on resume
    }
    std::vector<search::Evaluation> evals;
    if (needs_results) evals = all_evaluations(ctx, model, work);
    std::vector<PointRecord> buf;
    std::vector<h5::RowRun> runs;
    agreed(ctx, [&] {
      if (needs_results) sampler->tell(evals);
      if (!store_rows) return;
      std::sort(work.rows.begin(), work.rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      buf.reserve(work.rows.size());
      for (const auto& [p, r] : work.rows) {
        const std::uint64_t row = rows_done + p;
        if (!runs.empty() && runs.back().offset + runs.back().count == row) {
          ++runs.back().count;
        } else {
          runs.push_back({row, 1});
        }
        buf.push_back(r);
      }
    });
    const auto tw = Clock::now();
    result.evaluate_s += std::chrono::duration<double>(tw - t0).count();
    if (store_rows) {
      const h5::Handle points = h5::open_dataset(file, "points");
      h5::set_rows(points, rows_done + ids.size());
      h5::write_runs(points, type, buf.data(), runs, ctx.distributed());
    }
    rows_done += ids.size();
    evaluated += ctx.sum(work.evaluated);
    feasible += ctx.sum(work.feasible);

    // Checkpoint: the points that entered this rank's local archive in this round are
    // appended to the archive checkpoint (kArchiveRows); every few rounds, when the
    // appended rows pass twice the archive, all local archives are written afresh to a
    // dataset named by the round. Then the sampler state, the counters, and a flush.
    // The counters switch to the new checkpoint only after it is written and flushed,
    // and the old datasets are deleted after that, so a crash at any moment leaves the
    // counters naming a complete checkpoint.
    const auto tc = Clock::now();
    std::span<const PointRecord> local;
    agreed(ctx, [&] {
      test_fault_point("checkpoint", ctx.rank());
      archive.settle();
      local = archive.view(scratch);
      std::sort(work.indices.begin(), work.indices.end());
      entered.clear();
      for (const auto& r : local) {
        if (std::binary_search(work.indices.begin(), work.indices.end(), r.index)) entered.push_back(r);
      }
    });
    const std::uint64_t archived = ctx.sum(local.size());
    const std::int64_t old_archive_round = archive_round;
    const std::int64_t old_archive_attempt = archive_attempt;
    const std::int64_t old_state_attempt = state_attempt;
    if (rewrite_archive || archive_rows + ctx.sum(entered.size()) > 2 * archived + opt.checkpoint_slack_rows) {
      rewrite_archive = false;
      archive_round = rounds + 1;
      archive_attempt = attempt;
      const h5::Handle ds = fresh_dataset(file, checkpoint_name("checkpoint_archive", archive_round, attempt), type,
                                          1024, kDeflate);
      archive_rows = write_rank_rows(ds, ctx, local, 0);
    } else {
      const h5::Handle ds = h5::open_dataset(file, checkpoint_name("checkpoint_archive", archive_round, archive_attempt));
      archive_rows += write_rank_rows(ds, ctx, entered, archive_rows);
    }
    state_attempt = attempt;
    write_bytes_dataset(file, ctx, checkpoint_name("sampler_state", rounds + 1, attempt),
                        plan.sampler == SamplerKind::nsga2
                            ? static_cast<search::Nsga2Sampler&>(*sampler).save_state()
                            : std::vector<std::byte>{});
    h5::flush(file);  // a failed write stops every rank (h5.hpp)
    ++rounds;
    set_attribute(file, kRowsDone, static_cast<std::int64_t>(rows_done));
    set_attribute(file, kRoundsDone, rounds);
    set_attribute(file, kEvaluated, static_cast<std::int64_t>(evaluated));
    set_attribute(file, kFeasible, static_cast<std::int64_t>(feasible));
    set_attribute(file, kArchiveRound, archive_round);
    set_attribute(file, kArchiveRows, static_cast<std::int64_t>(archive_rows));
    set_attribute(file, kStateAttempt, state_attempt);
    set_attribute(file, kArchiveAttempt, archive_attempt);
    h5::flush(file);  // a failed write stops every rank (h5.hpp)
    if (opt.rounds_committed != nullptr) *opt.rounds_committed = rounds;
    std::vector<std::string> old = {checkpoint_name("sampler_state", rounds - 1, old_state_attempt)};
    if (archive_round != old_archive_round || archive_attempt != old_archive_attempt)
      old.push_back(checkpoint_name("checkpoint_archive", old_archive_round, old_archive_attempt));
    for (const auto& name : old) h5::remove_link(file, name);
    progress.update(evaluated, archived, false);
    result.checkpoint_s += std::chrono::duration<double>(Clock::now() - tw).count();

    if (ctx.rank() == 0) {
      // Size the next round from the evaluation rate, long enough that the checkpoint
      // costs at most a tenth of it.
      const double eval_s = std::chrono::duration<double>(tc - t0).count();
      const double ckpt_s = std::chrono::duration<double>(Clock::now() - tc).count();
      const double rate = static_cast<double>(ids.size()) / std::max(eval_s, 1e-6);
      const double target_s = std::max(opt.round_s, 10.0 * ckpt_s);
      // The cap grows with the rank count so that chunks stay large (rank 0 serves
      // every chunk request) on big jobs.
      round_points = std::clamp<std::uint64_t>(static_cast<std::uint64_t>(rate * target_s), 64,
                                               opt.max_round_points * static_cast<std::uint64_t>(ctx.size()));
    }
    if (ctx.max(cancelled(opt) ? 1 : 0) != 0) {
      result.interrupted = true;
      break;
    }
  }
  result.evaluated = evaluated;
  result.feasible = feasible;
  // A signal from here on stops the run at the next of these points, where the file holds a
  // checkpoint (before the merge) or the final archive (after it) to resume from.
  const auto stop_here = [&] { return ctx.max(cancelled(opt) ? 1 : 0) != 0; };
  if (!result.interrupted && stop_here()) result.interrupted = true;
  if (!result.interrupted) {
    const auto tm = Clock::now();
    std::vector<PointRecord> sorted;
    agreed(ctx, [&] {
      if (finished) {
        // The archive as the killed run wrote it; on rank 0, as global_archive() gives it.
        result.archive = read_archive(file, "archive");
        if (ctx.rank() != 0) result.archive.clear();
      } else {
        sorted = archive.take_sorted();
      }
    });
    if (!finished) result.archive = global_archive(ctx, model, std::move(sorted));
    Bytes n;
    put(n, static_cast<std::uint64_t>(result.archive.size()));
    n = ctx.broadcast(n, 0);
    std::size_t off = 0;
    result.archive_size = get<std::uint64_t>(n, off);
    if (!finished) {
      write_archive(file, ctx, result.archive, result.archive_size);
      h5::flush(file);
      set_attribute(file, kFinished, 1);
      h5::flush(file);  // /archive is the committed result from here; the checkpoints may go
    }
    if (stop_here()) {
      result.interrupted = true;
      return result;
    }
    result.stale_checkpoints =
        delete_checkpoints(file, attempt,
                           {checkpoint_name("sampler_state", rounds, state_attempt),
                            checkpoint_name("checkpoint_archive", archive_round, archive_attempt)});
    result.merge_s = std::chrono::duration<double>(Clock::now() - tm).count();
  }
  if (!result.interrupted) progress.update(evaluated, result.archive_size, true);
  return result;
}

}  // namespace dse
