// The driver's append-only archive checkpoint (driver.hpp, kArchiveRows): a run stopped
// after many rounds and resumed, again and again, ends with the same archive as an
// uninterrupted run, through appended rows and rewrites of the checkpoint alike.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "dse/driver/context.hpp"
#include "dse/driver/driver.hpp"
#include "dse/driver/driver_quality.hpp"
#include "dse/error.hpp"
#include "dse/h5/h5.hpp"
#include "dse/h5/results.hpp"
#include "dse/driver/run.hpp"
#include "tests/scratch.hpp"

namespace dse {
namespace {

std::uint64_t mix(std::uint64_t x) {  // splitmix64
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

double unit(std::uint64_t index, std::uint64_t salt) {
  return static_cast<double>(mix(index * 4 + salt) >> 11) * 0x1.0p-53;
}

// Three random objectives and fixed metrics: the archive is a small 3-D front whose
// members keep being replaced, so checkpoints append rows that later leave the archive.
PointRecord synthetic_point(std::uint64_t index) {
  PointRecord r;
  r.index = index;
  r.workload_id = static_cast<std::uint32_t>(index % 2);
  r.batch = 1;
  r.throughput_samples_per_s = unit(index, 1);
  r.latency_s = unit(index, 2);
  r.energy_per_sample_j = unit(index, 3);
  r.p99_latency_s = 1.0;
  r.power_w = 1.0;
  r.area_mm2 = 1.0;
  r.memory_bytes = 1.0;
  r.feasible = 1;
  return r;
}

struct Fixture {
  search::DesignSpace space{{{"point", 20000}}};
  std::atomic<bool> cancel{false};
  std::atomic<std::uint64_t> calls{0};
  std::uint64_t stop_after = ~std::uint64_t{0};  // evaluations before `cancel` is set
  Store store = Store::archive;
  SearchPlan plan;                                        // exhaustive unless a test says
  PointRecord (*point)(std::uint64_t) = synthetic_point;  // the model's evaluation
  std::vector<std::string> warnings;  // DriverOptions::warn
  double checkpoint_interval_s = 0.0;  // DriverOptions::checkpoint_interval_s
  std::chrono::microseconds point_time{0};  // how long one evaluation takes
  std::int64_t checkpoints = 0;             // DriverOptions::rounds_committed
  int threads = 1;                          // DriverOptions::threads
  PointModel model{space,
                   {search::Sense::maximize, search::Sense::minimize, search::Sense::minimize,
                    search::Sense::minimize},
                   kConstraintMetrics,
                   [this](std::uint64_t i) {
                     if (calls.fetch_add(1) + 1 >= stop_after) cancel = true;
                     if (point_time.count() > 0) std::this_thread::sleep_for(point_time);
                     return point(i);
                   },
                   fill_evaluation};

  DriverResult drive_file(const std::string& path, bool fresh) {
    auto ctx = make_local_context();
    h5::quiet_errors();
    const h5::Handle file = fresh ? h5::create_file(path, ctx->file_access()) : h5::open_file_readwrite(path, ctx->file_access());
    if (fresh) init_driver_file(file, store);
    DriverOptions o;
    o.threads = threads;
    o.store = store;
    o.round_s = 1e-6;           // rounds as small as max_round_points allows
    o.max_round_points = 256;   // ~80 rounds
    o.checkpoint_interval_s = checkpoint_interval_s;  // 0: a checkpoint after every round
    o.rounds_committed = &checkpoints;
    o.checkpoint_slack_rows = 0;  // rewrite the checkpoint as soon as appends pass 2x the archive
    o.progress = false;
    o.cancel = &cancel;
    o.warn = [this](const std::string& w) { warnings.push_back(w); };
    return drive(*ctx, model, plan, o, file);
  }
};

bool same(const PointRecord& a, const PointRecord& b) { return std::memcmp(&a, &b, sizeof(PointRecord)) == 0; }

// A run never stopped, whose archive the stopped-and-resumed runs must end with.
DriverResult uninterrupted(const std::filesystem::path& dir) {
  Fixture whole;
  return whole.drive_file((dir / "whole.h5").string(), true);
}

void expect_same_archive(const DriverResult& got, const DriverResult& want) {
  ASSERT_EQ(got.archive.size(), want.archive.size());
  for (std::size_t i = 0; i < want.archive.size(); ++i) {
    EXPECT_TRUE(same(got.archive[i], want.archive[i])) << "archive row " << i << " index " << want.archive[i].index;
  }
}

// The archive checkpoint dataset that a file's counters name.
std::string committed_archive(hid_t file) {
  return checkpoint_name("checkpoint_archive", h5::read_int_attribute(file, kArchiveRound),
                         h5::read_int_attribute(file, kArchiveAttempt));
}

// Removes the link of the archive checkpoint that a stopped run's counters name (as a kill -9
// once left a file) and returns its name.
std::string lose_committed_archive(const std::string& path) {
  auto ctx = make_local_context();
  const h5::Handle file = h5::open_file_readwrite(path, ctx->file_access());
  const std::string committed = committed_archive(file);
  EXPECT_TRUE(h5::has_link(file, committed));
  EXPECT_GE(H5Ldelete(file, committed.c_str(), H5P_DEFAULT), 0);
  return committed;
}

TEST(DriverCheckpoint, StoppedAndResumedManyTimesEndsWithTheUninterruptedArchive) {
  const auto dir = dse::test::scratch_dir("driver_checkpoint");
  const DriverResult want = uninterrupted(dir);
  ASSERT_FALSE(want.interrupted);
  ASSERT_EQ(want.evaluated, 20000u);
  ASSERT_GT(want.archive.size(), 10u);

  const std::string path = (dir / "stopped.h5").string();
  Fixture f;
  f.stop_after = 1500;
  DriverResult got = f.drive_file(path, true);
  int stops = 0;
  std::int64_t rewrites_seen = 0;
  std::int64_t appended_rows_seen = 0;
  while (got.interrupted) {
    ++stops;
    ASSERT_LT(stops, 100) << "the run does not progress";
    {
      const h5::Handle file = h5::open_file_readonly(path);
      rewrites_seen = std::max(rewrites_seen, h5::read_int_attribute(file, kArchiveRound));
      appended_rows_seen = std::max(appended_rows_seen, h5::read_int_attribute(file, kArchiveRows));
    }
    f.cancel = false;
    f.stop_after = f.calls.load() + 1500 + 97 * static_cast<std::uint64_t>(stops);  // stops land mid-round
    got = f.drive_file(path, false);
  }
  EXPECT_GE(stops, 8);
  EXPECT_GT(rewrites_seen, 0) << "no checkpoint rewrite was exercised";
  EXPECT_GT(appended_rows_seen, 0);
  EXPECT_EQ(got.evaluated, 20000u);  // counted once per point across all sessions
  expect_same_archive(got, want);
  std::filesystem::remove_all(dir);
}

// A killed attempt can leave a checkpoint dataset whose object header is half written
// (kill -9 during the flush; HDF5 then refuses even to unlink it: "bad object header
// version number"). The attempts are counted (kAttempt) and name their datasets, so the
// resumed run neither opens nor unlinks the leftover, finishes with the uninterrupted
// archive and reports the leftover as stale. Here the leftover is made by hand: the
// dataset the next round of the stopped attempt would have written, its header bytes
// overwritten.
TEST(DriverCheckpoint, ResumeSkipsAHalfWrittenDatasetOfAKilledAttempt) {
  const auto dir = dse::test::scratch_dir("driver_leftover");
  const DriverResult want = uninterrupted(dir);
  ASSERT_FALSE(want.interrupted);

  const std::string path = (dir / "killed.h5").string();
  Fixture f;
  f.stop_after = 3000;
  ASSERT_TRUE(f.drive_file(path, true).interrupted);
  std::string leftover;
  haddr_t header = HADDR_UNDEF;
  {
    auto ctx = make_local_context();
    const h5::Handle file = h5::open_file_readwrite(path, ctx->file_access());
    const std::int64_t attempt = h5::read_int_attribute(file, kAttempt);
    const std::int64_t rounds = h5::read_int_attribute(file, kRoundsDone);
    EXPECT_EQ(attempt, 1);
    leftover = checkpoint_name("sampler_state", rounds + 1, attempt);
    const h5::Handle ds = h5::create_extensible_1d(file, leftover, H5T_STD_U8LE, 65536, 0);
    H5O_info_t info;
    ASSERT_GE(H5Oget_info2(ds, &info, H5O_INFO_BASIC), 0);
    header = info.addr;
  }
  {
    std::fstream raw(path, std::ios::in | std::ios::out | std::ios::binary);
    raw.seekp(static_cast<std::streamoff>(header));
    const char junk[16] = {'\xEE', '\xEE', '\xEE', '\xEE', '\xEE', '\xEE', '\xEE', '\xEE',
                           '\xEE', '\xEE', '\xEE', '\xEE', '\xEE', '\xEE', '\xEE', '\xEE'};
    raw.write(junk, sizeof junk);
    ASSERT_TRUE(raw.good());
  }
  f.cancel = false;
  f.stop_after = ~std::uint64_t{0};
  const DriverResult got = f.drive_file(path, false);
  ASSERT_FALSE(got.interrupted);
  EXPECT_EQ(got.evaluated, 20000u);
  ASSERT_EQ(got.stale_checkpoints, std::vector<std::string>{leftover});
  expect_same_archive(got, want);
  {  // the leftover is truly unusable: unlinking it fails (what resuming did before attempts were counted)
    auto ctx = make_local_context();
    const h5::Handle file = h5::open_file_readwrite(path, ctx->file_access());
    EXPECT_LT(H5Ldelete(file, leftover.c_str(), H5P_DEFAULT), 0);
  }
  std::filesystem::remove_all(dir);
}

// A run killed after drive() wrote its final archive, while run.cpp was finishing the output
// (/pareto, mapping sheets, compression, the rename), left a file whose checkpoint datasets
// drive() had deleted while the counters still named them: --resume failed ("opening dataset
// checkpoint_archive_0 failed", seen once in about 30 kill -9 runs of the 4-rank sweep). The
// file that drive() leaves is that state; driving it again now finishes from /archive without
// evaluating a point, with the uninterrupted archive.
TEST(DriverCheckpoint, KilledAfterTheFinalArchiveResumesFromIt) {
  const auto dir = dse::test::scratch_dir("driver_finished");
  const DriverResult want = uninterrupted(dir);
  ASSERT_FALSE(want.interrupted);

  const std::string path = (dir / "finished.h5").string();
  Fixture f;
  const DriverResult first = f.drive_file(path, true);
  ASSERT_FALSE(first.interrupted);
  const std::uint64_t calls = f.calls.load();
  // Every point once, and the probes of the hypervolume bounds (driver_quality.hpp), which are
  // not counted as evaluations.
  EXPECT_EQ(calls, 20000u + driver_detail::probe_ids(f.model).size());
  {
    const h5::Handle file = h5::open_file_readonly(path);
    EXPECT_EQ(h5::read_int_attribute(file, kFinished), 1);
    const std::string committed = committed_archive(file);
    EXPECT_FALSE(h5::has_link(file, committed)) << "the state the fix is for: the committed checkpoint is gone";
  }
  const DriverResult again = f.drive_file(path, false);
  ASSERT_FALSE(again.interrupted);
  EXPECT_EQ(f.calls.load(), calls) << "a finished run evaluated points again";
  EXPECT_EQ(again.evaluated, 20000u);
  EXPECT_EQ(again.archive_size, want.archive.size());
  expect_same_archive(again, want);
  std::filesystem::remove_all(dir);
}

// A file can lose the link of its committed archive checkpoint while the counters survive: a
// 4-rank --resume once failed with "opening dataset checkpoint_archive_0 failed; object
// 'checkpoint_archive_0' doesn't exist" after a kill -9 right after the first checkpoint (how
// HDF5 lost the link is not known). With every row stored (/points), the resume rebuilds the archive
// from the committed rows and ends with the uninterrupted archive. Here the link is removed by
// hand from a stopped run's file.
TEST(DriverCheckpoint, ResumeRebuildsALostArchiveCheckpointFromPoints) {
  const auto dir = dse::test::scratch_dir("driver_lost_archive");
  const DriverResult want = uninterrupted(dir);
  ASSERT_FALSE(want.interrupted);

  const std::string path = (dir / "lost.h5").string();
  Fixture f;
  f.store = Store::all;
  f.stop_after = 3000;
  ASSERT_TRUE(f.drive_file(path, true).interrupted);
  const std::int64_t rows = h5::read_int_attribute(h5::open_file_readonly(path), kRowsDone);
  ASSERT_GT(rows, 0);
  const std::string committed = lose_committed_archive(path);
  f.cancel = false;
  f.stop_after = f.calls.load() + 5000;  // one more stop after the rebuild: its checkpoint must be usable
  DriverResult got = f.drive_file(path, false);
  ASSERT_TRUE(got.interrupted);
  // The resume says what it rebuilt, once; the resumes after it have nothing to say.
  ASSERT_EQ(f.warnings.size(), 1u);
  EXPECT_EQ(f.warnings[0], "the archive checkpoint " + committed +
                               " that the file's counters name is missing (a killed run); the archive was rebuilt "
                               "from the " +
                               std::to_string(rows) + " committed rows of /points");
  f.cancel = false;
  f.stop_after = ~std::uint64_t{0};
  got = f.drive_file(path, false);
  ASSERT_FALSE(got.interrupted);
  EXPECT_EQ(got.evaluated, 20000u);
  expect_same_archive(got, want);
  EXPECT_EQ(f.warnings.size(), 1u);
  std::filesystem::remove_all(dir);
}

// The archive checkpoint holds point indices, and a resume evaluates its share of them again. A
// file checkpointed by an earlier version held the records themselves (a compound dataset): it
// resumes from them as they are, without evaluating them, and ends with the uninterrupted archive.
// Here a stopped run's committed index checkpoint is replaced by the records of its indices.
TEST(DriverCheckpoint, ResumeReadsARecordCheckpointOfAnEarlierVersion) {
  const auto dir = dse::test::scratch_dir("driver_record_checkpoint");
  const DriverResult want = uninterrupted(dir);
  const std::string with_indices = (dir / "indices.h5").string();
  const std::string with_records = (dir / "records.h5").string();
  {
    Fixture f;
    f.stop_after = 3000;
    ASSERT_TRUE(f.drive_file(with_indices, true).interrupted);
  }
  std::filesystem::copy_file(with_indices, with_records);
  std::uint64_t rows = 0;
  {
    auto ctx = make_local_context();
    const h5::Handle file = h5::open_file_readwrite(with_records, ctx->file_access());
    const std::string name = committed_archive(file);
    rows = static_cast<std::uint64_t>(h5::read_int_attribute(file, kArchiveRows));
    ASSERT_GT(rows, 0u);
    std::vector<std::uint64_t> indices(rows);
    {
      const h5::Handle ds = h5::open_dataset(file, name);
      h5::read_rows(ds, H5T_NATIVE_UINT64, 0, rows, indices.data());
    }
    std::vector<PointRecord> records;
    for (const std::uint64_t i : indices) records.push_back(synthetic_point(i));
    ASSERT_GE(H5Ldelete(file, name.c_str(), H5P_DEFAULT), 0);
    const h5::Handle type = point_record_type();
    const h5::Handle ds = h5::create_extensible_1d(file, name, type, 1024, 0);
    h5::set_rows(ds, rows);
    h5::write_runs(ds, type, records.data(), {{0, rows}}, false);
  }
  Fixture a;
  const DriverResult from_indices = a.drive_file(with_indices, false);
  Fixture b;
  const DriverResult from_records = b.drive_file(with_records, false);
  ASSERT_FALSE(from_indices.interrupted);
  ASSERT_FALSE(from_records.interrupted);
  // The index checkpoint's rows are evaluated again on resume; the records are not.
  EXPECT_EQ(a.calls.load() - b.calls.load(), rows);
  expect_same_archive(from_indices, want);
  expect_same_archive(from_records, want);
  std::filesystem::remove_all(dir);
}

// A record the archive refuses (a feasible point with a NaN objective: ConstraintArchive's check)
// stops the run with the archive's error, whether the chunk's filing runs between chunks (one
// thread) or on a task of the arena while the next chunk is evaluated (two threads).
PointRecord point_with_a_nan(std::uint64_t index) {
  PointRecord r = synthetic_point(index);
  if (index == 7000) r.latency_s = std::nan("");
  return r;
}

TEST(DriverCheckpoint, ARecordTheArchiveRefusesStopsTheRunWithItsError) {
  const auto dir = dse::test::scratch_dir("driver_filing_error");
  for (const int threads : {1, 2}) {
    Fixture f;
    f.point = point_with_a_nan;
    f.threads = threads;
    try {
      (void)f.drive_file((dir / ("nan" + std::to_string(threads) + ".h5")).string(), true);
      ADD_FAILURE() << "no error with " << threads << " thread(s)";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("ConstraintArchive::insert: non-finite objective"), std::string::npos)
          << e.what();
    }
  }
  std::filesystem::remove_all(dir);
}

// Without rows (--store archive) a lost archive checkpoint cannot be rebuilt: the resume
// stops and says so, where it used to fail on opening the missing dataset.
TEST(DriverCheckpoint, LostArchiveCheckpointWithoutRowsStopsWithItsReason) {
  const auto dir = dse::test::scratch_dir("driver_lost_archive_norows");
  const std::string path = (dir / "lost.h5").string();
  Fixture f;
  f.stop_after = 3000;
  ASSERT_TRUE(f.drive_file(path, true).interrupted);
  const std::string committed = lose_committed_archive(path);
  f.cancel = false;
  try {
    (void)f.drive_file(path, false);
    FAIL() << "the resume went on without its archive";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()), "the archive checkpoint " + committed +
                                         " that the file's counters name is missing (a killed run), and the file "
                                         "keeps no rows to rebuild it from (--store archive): the run cannot be "
                                         "resumed; start it again");
  }
  EXPECT_TRUE(f.warnings.empty());
  std::filesystem::remove_all(dir);
}

// Checkpoints fall by time (--checkpoint-interval), not after every round: a stop between two
// checkpoints loses the rounds after the last one, which the resume replays from the sampler
// state that checkpoint saved. Evaluations are slowed (point_time) so that several rounds pass
// between checkpoints; stopped and resumed again and again, exhaustive search and NSGA-II (on
// four islands) end with the archive and the evaluation count of the run never stopped.
TEST(DriverCheckpoint, StoppedBetweenTimedCheckpointsEndsWithTheUninterruptedArchive) {
  const auto dir = dse::test::scratch_dir("driver_timed_checkpoints");
  for (const SamplerKind sampler : {SamplerKind::exhaustive, SamplerKind::nsga2}) {
    SearchPlan plan;
    plan.sampler = sampler;
    plan.population = 100;
    plan.generations = 40;
    plan.islands = 4;
    plan.migration_interval = 2;
    plan.seed = 3;
    Fixture whole;
    whole.plan = plan;
    const DriverResult want = whole.drive_file((dir / "whole.h5").string(), true);
    ASSERT_FALSE(want.interrupted);
    {  // the same run with timed checkpoints, never stopped: far fewer checkpoints than rounds
      Fixture timed;
      timed.plan = plan;
      timed.checkpoint_interval_s = 0.25;
      timed.point_time = std::chrono::microseconds(50);
      const DriverResult t = timed.drive_file((dir / "timed.h5").string(), true);
      // Rounds hold at most 256 points (max_round_points; NSGA-II: a generation of 100), so at least
      // 20,000 / 256 = 79 rounds (NSGA-II: 4,100 / 100 = 41); a checkpoint per 0.25 s leaves fewer
      // than half of them checkpointed unless 20,000 evaluations of 50 us (1 s on an idle core) take
      // 10 s.
      const std::int64_t rounds = sampler == SamplerKind::nsga2 ? 41 : 79;
      EXPECT_LT(timed.checkpoints, rounds / 2) << to_string(sampler);
      EXPECT_GE(timed.checkpoints, 1) << to_string(sampler);
      expect_same_archive(t, want);
    }

    const std::string path = (dir / "stopped.h5").string();
    Fixture f;
    f.plan = plan;
    f.checkpoint_interval_s = 0.25;
    f.point_time = std::chrono::microseconds(50);  // at most 5,000 points between checkpoints
    const std::uint64_t session = sampler == SamplerKind::nsga2 ? 3000 : 6000;
    f.stop_after = session;
    DriverResult got = f.drive_file(path, true);
    const std::uint64_t probes = driver_detail::probe_ids(f.model).size();
    std::uint64_t calls_before = probes;  // the first session also evaluates the probes
    std::int64_t rows_before = 0;
    std::int64_t lost = 0;  // evaluations of the sessions that their last checkpoints did not keep
    int stops = 0;
    while (got.interrupted) {
      ++stops;
      ASSERT_LT(stops, 100) << "the run does not progress";
      const std::int64_t rows = h5::read_int_attribute(h5::open_file_readonly(path), kRowsDone);
      const auto session_calls = static_cast<std::int64_t>(f.calls.load() - calls_before);
      lost += session_calls - (rows - rows_before);
      rows_before = rows;
      calls_before = f.calls.load();
      f.cancel = false;
      f.stop_after = f.calls.load() + session + 500 * static_cast<std::uint64_t>(stops);
      got = f.drive_file(path, false);
    }
    EXPECT_GE(stops, 1) << to_string(sampler);
    // What the stops lost (evaluations after each session's last checkpoint, redone on resume),
    // for the log: how much depends on the machine's load, so nothing is asserted on it; the timed
    // run above shows that rounds pass without a checkpoint.
    RecordProperty("evaluations_redone_" + std::string(to_string(sampler)), static_cast<int>(lost));
    EXPECT_EQ(got.evaluated, want.evaluated) << to_string(sampler);
    expect_same_archive(got, want);
  }
  std::filesystem::remove_all(dir);
}

// Random objectives and two random metrics: a constraint-robust archive of hundreds of points
// per workload, whose members keep being replaced as the run goes on.
PointRecord point_with_random_metrics(std::uint64_t index) {
  PointRecord r = synthetic_point(index);
  r.power_w = unit(index, 5);
  r.area_mm2 = unit(index, 6);
  return r;
}

// The archive by brute force, independently of the driver and search/: the points of each
// workload that no point of the same workload removes (every metric <= and the objectives
// Pareto-dominating: throughput maximised, the rest minimised), ordered by index.
std::vector<PointRecord> brute_force_archive(std::uint64_t points, PointRecord (*point)(std::uint64_t)) {
  std::vector<PointRecord> all;
  for (std::uint64_t i = 0; i < points; ++i) all.push_back(point(i));
  const auto removes = [](const PointRecord& q, const PointRecord& p) {
    if (q.workload_id != p.workload_id || q.p99_latency_s > p.p99_latency_s || q.ttft_p99_s > p.ttft_p99_s ||
        q.tpot_p99_s > p.tpot_p99_s || q.power_w > p.power_w || q.area_mm2 > p.area_mm2 ||
        q.memory_bytes > p.memory_bytes) {
      return false;
    }
    const double qo[4] = {-q.throughput_samples_per_s, q.latency_s, q.energy_per_sample_j, q.engineering_risk};
    const double po[4] = {-p.throughput_samples_per_s, p.latency_s, p.energy_per_sample_j, p.engineering_risk};
    bool strictly = false;
    for (int j = 0; j < 4; ++j) {
      if (qo[j] > po[j]) return false;
      strictly = strictly || qo[j] < po[j];
    }
    return strictly;
  };
  std::vector<PointRecord> out;
  for (const auto& p : all) {
    bool kept = true;
    for (std::size_t j = 0; j < all.size() && kept; ++j) kept = !removes(all[j], p);
    if (kept) out.push_back(p);
  }
  return out;
}

// The driver files points into its archive in batches and keeps only the records of archived
// points, compacted in place as they arrived; the result must be exactly the brute-force archive,
// in index order, whether the points arrive in index order (exhaustive) or in a random order
// (random sampling without replacement, every point once), with many rounds of checkpoints.
TEST(DriverCheckpoint, ArchiveIsEveryPointNoOtherRemovesWhateverTheArrivalOrder) {
  const auto dir = dse::test::scratch_dir("driver_brute");
  const std::vector<PointRecord> want = brute_force_archive(20000, point_with_random_metrics);
  ASSERT_GT(want.size(), 200u);  // hundreds of points: the archive is pruned as it changes
  for (const SamplerKind sampler : {SamplerKind::exhaustive, SamplerKind::random}) {
    Fixture f;
    f.point = point_with_random_metrics;
    f.plan.sampler = sampler;
    f.plan.samples = 20000;
    f.plan.seed = 5;
    const DriverResult got = f.drive_file((dir / "run.h5").string(), true);
    ASSERT_FALSE(got.interrupted);
    ASSERT_EQ(got.evaluated, 20000u);
    ASSERT_EQ(got.archive.size(), want.size()) << to_string(sampler);
    for (std::size_t i = 0; i < want.size(); ++i) {
      EXPECT_TRUE(same(got.archive[i], want[i])) << to_string(sampler) << " row " << i << " index " << want[i].index;
    }
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace dse
