#include "dse/driver/driver_round.hpp"

#include <algorithm>
#include <exception>
#include <tuple>
#include <utility>

#include "dse/driver/agree.hpp"
#include "dse/parallel.hpp"

namespace dse::driver_detail {

namespace {

constexpr int kTagRequest = 7401;
constexpr int kTagReply = 7402;

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

// Requests a worker rank keeps in flight: one chunk in hand and three asked for, so that rank 0
// (which answers between its own chunks) leaves no rank waiting idle. Rank 0's chunk is now and
// then much longer than the others: its filing flushes the archive queue (add() at twice the due
// size), and a 16,384-point chunk of the single-op bench took 0.07-0.11 s where most take
// 0.02-0.04 s. With two requests in flight the worker of a 2-rank run waited 0.09-0.14 s for
// replies in the last round alone; with four, 0.002-0.04 s over the whole run (3 runs each).
constexpr int kRequestsInFlight = 4;

// The cursor's share: a chunk is 1 / share of what is left. A worker rank holds up to
// kRequestsInFlight chunks (one in hand, the rest answered ahead), so when rank 0 takes the last
// chunk a worker may still have that many to do, and rank 0 waits for them: with one chunk a
// quarter of a rank's share of what is left (share 4 x ranks), rank 0 of a 2-rank NSGA-II run
// (population 10,000 in 32 islands, ~6,400 new points a generation) waited 4.4 ms a generation,
// 1.0-1.1 s of a 12 s run. Counting every chunk a worker may hold (share 4 x ranks x
// kRequestsInFlight) makes the chunks near the end that much smaller: 0.07-0.13 s of waiting,
// efficiency 0.80-0.86 -> 0.87-0.90 (docs/speed.md). One rank has nobody to wait for.
std::uint64_t cursor_share(std::uint64_t ranks) {
  return ranks == 1 ? 4 : 4 * ranks * static_cast<std::uint64_t>(kRequestsInFlight);
}

}  // namespace

RoundRunner::~RoundRunner() { (void)drain(); }

std::exception_ptr RoundRunner::drain() noexcept {
  if (!filing_pending_) return nullptr;
  filing_pending_ = false;
  std::exception_ptr thrown;
  try {
    arena_.execute([&] { filing_.wait(); });  // rethrows what the filing threw
  } catch (...) {
    thrown = std::current_exception();
  }
  dse::tsan_acquire(&filing_sync_);  // the filing's writes to the archive and the front
  return thrown;
}

void RoundRunner::run_chunk(const std::vector<std::uint64_t>& ids, std::uint64_t begin, std::uint64_t end,
                            RoundWork& out) {
  std::vector<PointRecord> chunk(end - begin);
  arena_.execute(
      [&] { dse::parallel_for(begin, end, [&](std::uint64_t p) { chunk[p - begin] = model_.evaluate(ids[p]); }); });
  for (std::uint64_t p = begin; p < end; ++p) {
    const PointRecord& r = chunk[p - begin];
    out.indices.push_back(r.index);
    ++out.evaluated;
    if (r.feasible != 0) ++out.feasible;
    if (keep_rows_) out.rows.emplace_back(p, r);
  }
  if (const std::exception_ptr e = drain()) std::rethrow_exception(e);
  filed_ = std::move(chunk);
  filing_pending_ = true;
  // The task_group's hand-off happens inside libtbb, which TSan does not see: without these the
  // filing's every access to the archive looked like a race (suppressed, but each one costs TSan a
  // report: the TSan job's 24,576-point sweep took minutes instead of seconds).
  dse::tsan_release(&filing_sync_);
  arena_.execute([&] {
    filing_.run([this] {
      dse::tsan_acquire(&filing_sync_);
      struct Released {  // also when an insert throws
        int* sync;
        ~Released() { dse::tsan_release(sync); }
      } released{&filing_sync_};
      for (const PointRecord& r : filed_) {
        archive_.insert(r);
        front_.insert(r);
      }
    });
  });
}

std::vector<PointRecord> RoundRunner::evaluate(const std::vector<std::uint64_t>& ids) {
  std::vector<PointRecord> out(ids.size());
  arena_.execute([&] {
    dse::parallel_for(std::uint64_t{0}, static_cast<std::uint64_t>(ids.size()),
                      [&](std::uint64_t i) { out[i] = model_.evaluate(ids[i]); });
  });
  return out;
}

// Evaluate positions [0, ids.size()) over all ranks in dynamic chunks. Rank 0 works on
// chunks too and answers the other ranks' requests between its chunks; a worker rank
// keeps kRequestsInFlight requests open. No thread and no polling loop: when rank 0 has
// no work left it blocks on the requests still to answer. Returns false when the round
// was cut short by a cancellation (on any rank).
bool run_round(Context& ctx, const std::vector<std::uint64_t>& ids, std::uint64_t min_chunk,
               std::uint64_t max_chunk, RoundRunner& runner, RoundWork& work, const DriverOptions& opt,
               const std::function<void()>& rank0_work) {
  const std::uint64_t n = ids.size();
  const auto ranks = static_cast<std::uint64_t>(ctx.size());
  ChunkCursor cursor(n, min_chunk, max_chunk, cursor_share(ranks));
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
  auto rank0_side_work = [&] {
    if (!rank0_work || ctx.rank() != 0) return;
    try {
      rank0_work();
    } catch (...) {
      failure = std::current_exception();
    }
  };
  if (!ctx.distributed() || ctx.size() == 1) {
    rank0_side_work();
    for (auto [b, e] = cursor.take(); b < n && !failure; std::tie(b, e) = cursor.take()) {
      if (cancelled(opt)) {
        (void)runner.drain();  // the round is discarded
        return false;
      }
      work_on(b, e);
    }
    if (const std::exception_ptr e = runner.drain(); e && !failure) failure = e;
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
    rank0_side_work();
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
  if (const std::exception_ptr e = runner.drain(); e && !failure) failure = e;
  agree(ctx, failure);
  const bool any_stop = ctx.max(stop || cancelled(opt) ? 1 : 0) != 0;
  return !any_stop;
}

// Every rank's evaluations of the round to every rank, ordered by position: each row's evaluation
// and workload id alone (position, index, feasibility, workload, objectives and the metrics asked
// for: 61 bytes with 4 objectives and no metric) go to every rank, not its 230-byte record. Each row
// goes to its position (the positions of a round are 0 .. rows - 1, each once), with no sort.
std::vector<search::Evaluation> all_evaluations(Context& ctx, const PointModel& model, const RoundWork& work,
                                                std::size_t metrics, std::vector<std::uint32_t>* workloads) {
  Bytes local;
  search::Evaluation row;
  for (const auto& [p, r] : work.rows) {
    model.fill_evaluation(r, row);
    const std::size_t kept = std::min(metrics, row.constraints.size());
    put(local, p);
    put(local, row.index);
    put(local, static_cast<std::uint8_t>(row.feasible ? 1 : 0));
    put(local, r.workload_id);
    put(local, static_cast<std::uint32_t>(row.objectives.size()));
    for (double v : row.objectives) put(local, v);
    put(local, static_cast<std::uint32_t>(kept));
    for (std::size_t j = 0; j < kept; ++j) put(local, row.constraints[j]);
  }
  const Bytes all = all_gather_bytes(ctx, std::move(local));
  std::vector<search::Evaluation> out;
  std::vector<std::uint32_t> workload;
  std::vector<char> placed;
  auto read_values = [&all](std::size_t& off, std::vector<double>& values) {
    const auto n = get<std::uint32_t>(all, off);
    if (n > (all.size() - off) / sizeof(double)) throw MpiError("truncated message");
    values.resize(n);
    for (double& v : values) v = get<double>(all, off);
  };
  // A row takes at least 29 bytes (position, index, feasibility, workload, two counts), so fewer rows than that.
  constexpr std::size_t kMinRow = 29;
  out.reserve(all.size() / (kMinRow + 8 * model.senses.size()));
  for (std::size_t off = 0; off < all.size();) {
    const auto p = get<std::uint64_t>(all, off);
    if (p >= all.size() / kMinRow) throw MpiError("a round's positions are not 0 .. rows - 1");
    if (p >= out.size()) {
      out.resize(p + 1);
      workload.resize(p + 1);
      placed.resize(p + 1, 0);
    }
    if (placed[p] != 0) throw MpiError("a round's positions are not 0 .. rows - 1");
    placed[p] = 1;
    search::Evaluation& e = out[p];
    e.index = get<std::uint64_t>(all, off);
    e.feasible = get<std::uint8_t>(all, off) != 0;
    workload[p] = get<std::uint32_t>(all, off);
    read_values(off, e.objectives);
    read_values(off, e.constraints);
  }
  if (std::find(placed.begin(), placed.end(), 0) != placed.end()) throw MpiError("a round's positions are not 0 .. rows - 1");
  if (workloads != nullptr) workloads->insert(workloads->end(), workload.begin(), workload.end());
  return out;
}

}  // namespace dse::driver_detail
