// Search quality per round (dse/driver/driver_quality.hpp, issue 59 item 5): the hypervolume of
// the normalised objective front, checked on hand-made fronts whose hypervolume is a sum of boxes,
// and on a whole run against a brute-force front of every point evaluated.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "dse/driver/context.hpp"
#include "dse/driver/driver.hpp"
#include "dse/driver/driver_quality.hpp"
#include "dse/driver/run.hpp"
#include "dse/h5/h5.hpp"
#include "search/hypervolume.hpp"
#include "tests/scratch.hpp"

namespace dse {
namespace {

using driver_detail::QualityBound;
using driver_detail::QualityRow;

const std::vector<search::Sense> kSenses = {search::Sense::maximize, search::Sense::minimize,
                                            search::Sense::minimize, search::Sense::minimize};

PointRecord record(std::uint64_t index, std::uint32_t workload, double throughput, double latency, double energy,
                   double risk) {
  PointRecord r;
  r.index = index;
  r.workload_id = workload;
  r.throughput_samples_per_s = throughput;
  r.latency_s = latency;
  r.energy_per_sample_j = energy;
  r.engineering_risk = risk;
  r.feasible = 1;
  return r;
}

PointModel model_of(search::DesignSpace space, PointRecord (*point)(std::uint64_t)) {
  return PointModel{std::move(space), kSenses, kConstraintMetrics, point, fill_evaluation};
}

PointRecord unused_point(std::uint64_t i) { return record(i, 0, 1.0, 1.0, 1.0, 0.0); }

// Workload 0's bounds: throughput ideal 100 / nadir 0 samples/s (maximised), latency 0 / 10 s,
// energy 0 / 1 J, risk 0 / 1, all linear: n = (100 - t) / 100, l / 10, e, r.
std::vector<QualityBound> linear_bounds() {
  return {{0, 0, 100.0, 0.0, 0}, {0, 1, 0.0, 10.0, 0}, {0, 2, 0.0, 1.0, 0}, {0, 3, 0.0, 1.0, 0}};
}

double front_hypervolume(const PointModel& m, const std::vector<QualityBound>& bounds,
                         const std::vector<PointRecord>& points) {
  driver_detail::ObjectiveFront front(m);
  for (const auto& r : points) front.insert(r);
  front.settle();
  const auto rows = driver_detail::hypervolume_rows(m, bounds, front, 7, 3);
  EXPECT_EQ(rows.size(), 1u);
  if (rows.empty()) return -1.0;
  EXPECT_EQ(rows[0].evaluations, 7u);
  EXPECT_EQ(rows[0].generation, 3u);
  return rows[0].hypervolume;
}

TEST(DriverQuality, HypervolumeOfHandMadeFronts) {
  const PointModel m = model_of(search::DesignSpace{{{"point", 4}}}, unused_point);
  // The ideal point: n = (0, 0, 0, 0), one box of 1.1^4 against the reference 1.1.
  EXPECT_NEAR(front_hypervolume(m, linear_bounds(), {record(0, 0, 100.0, 0.0, 0.0, 0.0)}), 1.4641, 1e-12);
  // A at n = (0.5, 0, 0, 0) and B at (0, 0.5, 0, 0): boxes 0.6 x 1.1^3 = 0.7986 each, overlapping in
  // 0.6 x 0.6 x 1.1^2 = 0.4356: 2 x 0.7986 - 0.4356 = 1.1616. C, dominated by A, adds nothing.
  const std::vector<PointRecord> two = {record(0, 0, 50.0, 0.0, 0.0, 0.0), record(1, 0, 100.0, 5.0, 0.0, 0.0),
                                        record(2, 0, 40.0, 1.0, 0.0, 0.0)};
  EXPECT_NEAR(front_hypervolume(m, linear_bounds(), two), 1.1616, 1e-12);
  // Log scale: throughput ideal 1,000, nadir 10 samples/s in log10: 100 samples/s is n = (2 - 3) / (1 - 3)
  // = 0.5; the rest at their ideal: 0.6 x 1.1^3 = 0.7986.
  auto log_bounds = linear_bounds();
  log_bounds[0] = {0, 0, 1000.0, 10.0, 1};
  EXPECT_NEAR(front_hypervolume(m, log_bounds, {record(0, 0, 100.0, 0.0, 0.0, 0.0)}), 0.7986, 1e-12);
  // Beyond the nadir in every objective (n > 1.1): nothing.
  EXPECT_EQ(front_hypervolume(m, linear_bounds(), {record(0, 0, -20.0, 12.0, 2.0, 2.0)}), 0.0);
}

TEST(DriverQuality, BoundsAreTheBestAndWorstFeasibleProbes) {
  const PointModel m = model_of(search::DesignSpace{{{"point", 4}}}, unused_point);
  std::vector<PointRecord> probes = {record(0, 0, 10.0, 2.0, 0.5, 0.0), record(1, 0, 30.0, 1.0, 0.25, 0.0),
                                     record(2, 0, 1000.0, 0.001, 9.0, 0.0)};
  probes[2].feasible = 0;  // not counted
  const auto b = driver_detail::bounds_from_probes(m, probes);
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b[0].ideal, 30.0);  // throughput, maximised
  EXPECT_EQ(b[0].nadir, 10.0);
  EXPECT_EQ(b[1].ideal, 1.0);
  EXPECT_EQ(b[1].nadir, 2.0);
  EXPECT_EQ(b[2].ideal, 0.25);
  EXPECT_EQ(b[2].nadir, 0.5);
  EXPECT_EQ(b[0].log_scale, 1);  // positive: log10
  EXPECT_EQ(b[3].log_scale, 0);  // risk 0: linear
}

// Two workloads of 2,500 points each; objectives from a hash, so the front keeps changing.
double unit(std::uint64_t index, std::uint64_t salt) {
  std::uint64_t x = index * 4 + salt + 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return static_cast<double>((x ^ (x >> 31)) >> 11) * 0x1.0p-53;
}

PointRecord hashed_point(std::uint64_t index) {
  return record(index, static_cast<std::uint32_t>(index % 2), 1.0 + unit(index, 1), 0.1 + unit(index, 2),
                0.1 + unit(index, 3), 0.0);
}

std::vector<QualityRow> read_rows(hid_t file) {
  const h5::Handle ds = h5::open_dataset(file, "hypervolume");
  h5::Handle t(H5Tcreate(H5T_COMPOUND, sizeof(QualityRow)), H5Tclose);
  H5Tinsert(t, "evaluations", offsetof(QualityRow, evaluations), H5T_NATIVE_UINT64);
  H5Tinsert(t, "generation", offsetof(QualityRow, generation), H5T_NATIVE_UINT64);
  H5Tinsert(t, "workload_id", offsetof(QualityRow, workload_id), H5T_NATIVE_UINT32);
  H5Tinsert(t, "front_size", offsetof(QualityRow, front_size), H5T_NATIVE_UINT64);
  H5Tinsert(t, "hypervolume", offsetof(QualityRow, hypervolume), H5T_NATIVE_DOUBLE);
  std::vector<QualityRow> rows(h5::dataset_rows(ds));
  if (!rows.empty()) h5::read_all(ds, t, rows.data());
  return rows;
}

// An exhaustive run of 5,000 points samples after 1,024, 2,048 and 4,096 points and at the end; each
// row's hypervolume is that of the brute-force front (no point's objectives dominating another's)
// of the points evaluated so far, normalised by the file's bounds, and never falls.
TEST(DriverQuality, ExhaustiveRunRecordsTheHypervolumeOfEveryPrefix) {
  const auto dir = dse::test::scratch_dir("driver_quality");
  const std::string path = (dir / "run.h5").string();
  const PointModel m = model_of(search::DesignSpace{{{"point", 5000}}}, hashed_point);
  auto ctx = make_local_context();
  h5::quiet_errors();
  std::vector<QualityRow> rows;
  std::vector<QualityBound> bounds;
  {
    const h5::Handle file = h5::create_file(path, ctx->file_access());
    init_driver_file(file, Store::archive);
    DriverOptions o;
    o.store = Store::archive;
    o.progress = false;
    o.max_round_points = 300;  // rounds cut at the samples anyway
    ASSERT_FALSE(drive(*ctx, m, SearchPlan{}, o, file).interrupted);
    rows = read_rows(file);
    bounds = driver_detail::read_quality_bounds(file);
  }
  ASSERT_EQ(rows.size(), 8u);  // 4 samples x 2 workloads
  ASSERT_EQ(bounds.size(), 8u);
  const std::uint64_t at[4] = {1024, 2048, 4096, 5000};
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const QualityRow& r = rows[k];
    EXPECT_EQ(r.evaluations, at[k / 2]);
    EXPECT_EQ(r.workload_id, k % 2);
    if (k >= 2) {
      EXPECT_GE(r.hypervolume, rows[k - 2].hypervolume);
    }
    // The brute-force front of workload w among points [0, evaluations).
    std::vector<search::Evaluation> mine;
    for (std::uint64_t i = r.workload_id; i < r.evaluations; i += 2) mine.push_back(to_evaluation(hashed_point(i)));
    std::vector<std::vector<double>> normalised;
    for (const auto& p : mine) {
      bool dominated = false;
      for (const auto& q : mine) {
        const bool no_worse = q.objectives[0] >= p.objectives[0] && q.objectives[1] <= p.objectives[1] &&
                              q.objectives[2] <= p.objectives[2];
        const bool better = q.objectives[0] > p.objectives[0] || q.objectives[1] < p.objectives[1] ||
                            q.objectives[2] < p.objectives[2];
        dominated = dominated || (no_worse && better);
      }
      if (dominated) continue;
      std::vector<double> n(4, 0.0);  // risk: every probe 0, so it is measured from 0 in its own units
      for (std::size_t j = 0; j < 3; ++j) {
        const QualityBound& b = bounds[r.workload_id * 4 + j];
        ASSERT_EQ(b.log_scale, 1);  // every value > 0
        n[j] = (std::log10(p.objectives[j]) - std::log10(b.ideal)) / (std::log10(b.nadir) - std::log10(b.ideal));
      }
      normalised.push_back(n);
    }
    EXPECT_EQ(r.front_size, normalised.size()) << "row " << k;
    const std::vector<double> ref(4, driver_detail::kQualityReference);
    EXPECT_NEAR(r.hypervolume, search::hypervolume(normalised, ref), 1e-12) << "row " << k;
  }
  std::filesystem::remove_all(dir);
}

// NSGA-II (2 islands) takes a row per generation. Stopped every ~300 evaluations and resumed (a
// checkpoint after every round), the run records the same rows, bit for bit, as the run never
// stopped: the rows after the last checkpoint are dropped with it and taken again on the replay.
TEST(DriverQuality, NsgaRunStoppedAndResumedRecordsTheSameRows) {
  const auto dir = dse::test::scratch_dir("driver_quality_resume");
  std::atomic<bool> cancel{false};
  std::atomic<std::uint64_t> calls{0};
  std::uint64_t stop_after = ~std::uint64_t{0};
  PointModel m = model_of(search::DesignSpace{{{"point", 5000}}}, hashed_point);
  m.evaluate = [&](std::uint64_t i) {
    if (calls.fetch_add(1) + 1 >= stop_after) cancel = true;
    return hashed_point(i);
  };
  SearchPlan plan;
  plan.sampler = SamplerKind::nsga2;
  plan.population = 60;
  plan.generations = 20;
  plan.islands = 2;
  plan.seed = 4;
  auto run = [&](const std::string& path, bool fresh, std::vector<QualityRow>& rows) {
    auto ctx = make_local_context();
    h5::quiet_errors();
    const h5::Handle file =
        fresh ? h5::create_file(path, ctx->file_access()) : h5::open_file_readwrite(path, ctx->file_access());
    if (fresh) init_driver_file(file, Store::archive);
    DriverOptions o;
    o.store = Store::archive;
    o.progress = false;
    o.checkpoint_interval_s = 0.0;
    o.cancel = &cancel;
    const bool interrupted = drive(*ctx, m, plan, o, file).interrupted;
    rows = read_rows(file);
    return interrupted;
  };
  std::vector<QualityRow> want;
  ASSERT_FALSE(run((dir / "whole.h5").string(), true, want));
  ASSERT_EQ(want.size(), 2u * 21u);  // 2 workloads x (the initial population + 20 generations)
  std::vector<QualityRow> got;
  stop_after = calls.load() + 300;
  bool interrupted = run((dir / "stopped.h5").string(), true, got);
  int stops = 0;
  while (interrupted) {
    ASSERT_LT(++stops, 50);
    cancel = false;
    stop_after = calls.load() + 300;
    interrupted = run((dir / "stopped.h5").string(), false, got);
  }
  EXPECT_GE(stops, 2);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t k = 0; k < want.size(); ++k) {
    EXPECT_EQ(got[k].evaluations, want[k].evaluations) << "row " << k;
    EXPECT_EQ(got[k].generation, want[k].generation) << "row " << k;
    EXPECT_EQ(got[k].workload_id, want[k].workload_id) << "row " << k;
    EXPECT_EQ(got[k].front_size, want[k].front_size) << "row " << k;
    EXPECT_EQ(got[k].hypervolume, want[k].hypervolume) << "row " << k;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace dse
