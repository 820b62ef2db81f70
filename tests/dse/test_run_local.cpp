// `dse run` through the local (one-rank) context: the file it writes holds every
// point in index order and a Pareto set equal to a brute-force front.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "dse/driver/context.hpp"
#include "dse/error.hpp"
#include "dse/h5/h5.hpp"
#include "dse/h5/results.hpp"
#include "dse/driver/run.hpp"
#include "search/pareto.hpp"
#include "tests/scratch.hpp"

namespace dse {
namespace {

std::vector<std::uint64_t> brute_force_front(const std::vector<PointRecord>& rows) {
  const std::vector<search::Sense> senses = {search::Sense::maximize, search::Sense::minimize,
                                             search::Sense::minimize, search::Sense::minimize};
  std::vector<std::uint64_t> out;
  for (const auto& a : rows) {
    if (!a.feasible) continue;
    const double va[4] = {a.throughput_samples_per_s, a.latency_s, a.energy_per_sample_j, a.engineering_risk};
    bool dominated = false;
    for (const auto& b : rows) {
      if (!b.feasible || b.workload_id != a.workload_id) continue;
      const double vb[4] = {b.throughput_samples_per_s, b.latency_s, b.energy_per_sample_j, b.engineering_risk};
      if (search::dominates(vb, va, senses)) dominated = true;
    }
    if (!dominated) out.push_back(a.index);
  }
  return out;
}

TEST(RunLocal, QuickstartWritesAllPointsAndTheFront) {
  const auto dir = dse::test::scratch_dir("run_local");
  auto ctx = make_local_context();
  RunOptions opt;
  opt.scenario_path = std::string(DSE_SOURCE_DIR) + "/scenarios/quickstart.yaml";
  opt.output_path = (dir / "out.h5").string();
  opt.threads = 2;
  const RunSummary s = run(*ctx, opt);
  EXPECT_EQ(s.points, 24u);  // 3 hardware x 2 workloads x 4 batch sizes
  EXPECT_FALSE(std::filesystem::exists(opt.output_path + ".partial"));

  const ResultsFile r = read_results(opt.output_path);
  ASSERT_EQ(r.points.size(), 24u);
  for (std::size_t i = 0; i < r.points.size(); ++i) EXPECT_EQ(r.points[i].index, i);
  EXPECT_EQ(r.pareto, brute_force_front(r.points));
  // The archive (one part per workload, merged) in index order, each row the point's own record.
  ASSERT_FALSE(r.archive.empty());
  std::set<std::uint32_t> archived_workloads;
  for (std::size_t i = 0; i < r.archive.size(); ++i) {
    const PointRecord& a = r.archive[i];
    if (i > 0) {
      EXPECT_LT(r.archive[i - 1].index, a.index) << "archive row " << i;
    }
    ASSERT_LT(a.index, r.points.size());
    const PointRecord& p = r.points[a.index];
    EXPECT_EQ(a.workload_id, p.workload_id);
    EXPECT_EQ(a.hardware_id, p.hardware_id);
    EXPECT_EQ(a.batch, p.batch);
    EXPECT_EQ(a.latency_s, p.latency_s);
    archived_workloads.insert(a.workload_id);
  }
  EXPECT_EQ(archived_workloads.size(), 2u);
  EXPECT_EQ(r.info.ranks, 1);
  EXPECT_NE(r.info.scenario_text.find("name: quickstart"), std::string::npos);

  // /points was rewritten compressed after the run (byte shuffle + deflate), every
  // other dataset and attribute copied: the reads above went through the new file.
  {
    const h5::Handle f = h5::open_file_readonly(opt.output_path);
    const h5::Handle ds = h5::open_dataset(f, "points");
    const h5::Handle dcpl(H5Dget_create_plist(ds), H5Pclose);
    ASSERT_EQ(H5Pget_nfilters(dcpl), 2);
    auto filter = [&](unsigned i) {
      unsigned flags = 0;
      std::size_t n = 0;  // no client data wanted
      unsigned config = 0;
      return H5Pget_filter2(dcpl, i, &flags, &n, nullptr, 0, nullptr, &config);
    };
    EXPECT_EQ(filter(0), H5Z_FILTER_SHUFFLE);
    EXPECT_EQ(filter(1), H5Z_FILTER_DEFLATE);
    EXPECT_TRUE(h5::has_link(f, "archive"));
    EXPECT_TRUE(h5::has_link(f, "mapping_sheets"));
    EXPECT_EQ(h5::read_int_attribute(f, "complete"), 1);
  }
  EXPECT_FALSE(std::filesystem::exists(opt.output_path + ".partial.compressing"));
  std::filesystem::remove_all(dir);
}

// The results are complete before /points is compressed: when compressing fails, the run still
// succeeds with a warning and keeps the uncompressed file. Here the disk fills while /points is
// compressed (the test hook limits the size of the files written then, as a full disk would;
// issue 58 item 4: HDF5 crashed in H5Ocopy, exit 139, and again at exit on the file it had
// failed to close).
TEST(RunLocal, CompressionFailureKeepsTheUncompressedResults) {
  const auto dir = dse::test::scratch_dir("run_local_nocompress");
  ::setenv("DSE_TEST_COMPRESS_FILE_LIMIT", "100000", 1);
  auto ctx = make_local_context();
  RunOptions opt;
  opt.scenario_path = std::string(DSE_SOURCE_DIR) + "/scenarios/quickstart.yaml";
  opt.output_path = (dir / "out.h5").string();
  opt.progress = false;
  std::vector<std::string> warnings;
  opt.warn = [&](const std::string& w) { warnings.push_back(w); };
  (void)run(*ctx, opt);
  ::unsetenv("DSE_TEST_COMPRESS_FILE_LIMIT");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("compressing /points failed"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("File too large"), std::string::npos) << warnings[0];
  EXPECT_FALSE(std::filesystem::exists(opt.output_path + ".partial.compressing"));
  EXPECT_FALSE(std::filesystem::exists(opt.output_path + ".partial"));
  const ResultsFile r = read_results(opt.output_path);
  EXPECT_EQ(r.points.size(), 24u);
  const h5::Handle f = h5::open_file_readonly(opt.output_path);
  const h5::Handle dcpl(H5Dget_create_plist(h5::open_dataset(f, "points")), H5Pclose);
  EXPECT_EQ(H5Pget_nfilters(dcpl), 0);
  std::filesystem::remove_all(dir);
}

TEST(RunLocal, UnwritableOutputLeavesNoFile) {
  auto ctx = make_local_context();
  RunOptions opt;
  opt.scenario_path = std::string(DSE_SOURCE_DIR) + "/scenarios/quickstart.yaml";
  opt.output_path = "/proc/dse-cannot-write-here/out.h5";
  EXPECT_THROW((void)run(*ctx, opt), IoError);
  EXPECT_FALSE(std::filesystem::exists(opt.output_path));
}

}  // namespace
}  // namespace dse
