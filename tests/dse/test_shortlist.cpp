// `dse shortlist` re-derives the front from /archive for budgets. Reference: a
// brute-force filter-and-front over /points (every evaluated point, stored with
// --store all) of files written by the run() library function. A point left out
// of the archive is weakly dominated, in objectives AND metrics, by an archived one,
// so the expected relation (exact, no tolerance) is: every shortlisted row is a
// brute-force front point, and the set of (workload, objective values) of the
// shortlist equals that of the brute-force front.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "dse/driver/context.hpp"
#include "dse/error.hpp"
#include "dse/h5/h5.hpp"
#include "dse/h5/results.hpp"
#include "dse/driver/run.hpp"
#include "dse/h5/shortlist.hpp"
#include "search/pareto.hpp"
#include "tests/scratch.hpp"

namespace dse {
namespace {

std::vector<double> values(const PointRecord& r, const std::vector<ObjectiveSpec>& objectives) {
  std::vector<double> v;
  for (const auto& o : objectives) v.push_back(r.*o.field);
  return v;
}

// O(n^2): every feasible in-budget point not dominated by another of its workload.
std::vector<std::size_t> brute_force(const std::vector<PointRecord>& rows, const Budgets& b,
                                     const std::vector<ObjectiveSpec>& objectives) {
  std::vector<search::Sense> senses;
  for (const auto& o : objectives) senses.push_back(o.sense);
  auto ok = [&](const PointRecord& r) {
    return r.feasible != 0 && (!b.p99_latency_s || r.p99_latency_s <= *b.p99_latency_s) &&
           (!b.power_w || r.power_w <= *b.power_w) && (!b.area_mm2 || r.area_mm2 <= *b.area_mm2) &&
           (!b.memory_bytes || r.memory_bytes <= *b.memory_bytes);
  };
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (!ok(rows[i])) continue;
    const auto vi = values(rows[i], objectives);
    bool dominated = false;
    for (std::size_t j = 0; j < rows.size() && !dominated; ++j) {
      if (j == i || !ok(rows[j]) || rows[j].workload_id != rows[i].workload_id) continue;
      dominated = search::dominates(values(rows[j], objectives), vi, senses);
    }
    if (!dominated) out.push_back(i);
  }
  return out;
}

std::size_t expect_same_front(const ResultsFile& f, const Budgets& b, const std::vector<ObjectiveSpec>& objectives,
                       const std::string& what) {
  SCOPED_TRACE(what);
  const auto got = shortlist(f.archive, b, objectives);
  const auto want = brute_force(f.points, b, objectives);
  // Every shortlisted archive row is a brute-force front point.
  std::set<std::uint64_t> want_index;
  for (const auto i : want) want_index.insert(f.points[i].index);
  for (const auto i : got) EXPECT_TRUE(want_index.count(f.archive[i].index)) << "index " << f.archive[i].index;
  // Every brute-force front point is matched in objective values within its workload.
  std::set<std::pair<std::uint32_t, std::vector<double>>> got_values;
  for (const auto i : got) got_values.insert({f.archive[i].workload_id, values(f.archive[i], objectives)});
  std::set<std::pair<std::uint32_t, std::vector<double>>> want_values;
  for (const auto i : want) want_values.insert({f.points[i].workload_id, values(f.points[i], objectives)});
  EXPECT_EQ(got_values, want_values);
  return want.size();
}

class ShortlistFile : public ::testing::Test {
 protected:
  static ResultsFile make(const std::string& name, const std::string& scenario_text) {
    const auto dir = dse::test::scratch_dir("shortlist_" + name);
    const auto scenario = dir / "scenario.yaml";
    std::ofstream(scenario) << scenario_text;
    auto ctx = make_local_context();
    RunOptions opt;
    opt.scenario_path = scenario.string();
    opt.output_path = (dir / "out.h5").string();
    opt.threads = 1;
    opt.progress = false;
    (void)run(*ctx, opt);
    ResultsFile r = read_results(opt.output_path);
    EXPECT_EQ(read_archive_rows(opt.output_path).size(), r.archive.size());
    std::filesystem::remove_all(dir);
    return r;
  }
  static std::string read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
};

// A knob sweep (2 entries x 3x3x2x2 variants x 2 workloads x 8 batches = 1,152 points),
// with area and varying static power so that every budget bites.
const char* kSweep = R"(name: shortlist-sweep
seed: 3
hardware:
  - name: npu
    peak_flops_per_s: {log: [2.0e12, 128.0e12, 3]}
    memory_bandwidth_bytes_per_s: {log: [50.0e9, 3.2e12, 3]}
    memory_capacity_bytes: {choices: [0.02e9, 16.0e9]}
    kernel_overhead_s: {linear: [1.0e-6, 9.0e-6, 2]}
    energy_per_flop_j: 0.4e-12
    energy_per_byte_j: 10.0e-12
    static_power_w: 5.0
    engineering_risk: 0.2
    area_mm2: 120
  - name: gpu
    peak_flops_per_s: {log: [50.0e12, 1000.0e12, 3]}
    memory_bandwidth_bytes_per_s: {log: [1.0e12, 8.0e12, 3]}
    memory_capacity_bytes: 80.0e9
    kernel_overhead_s: {linear: [2.0e-6, 10.0e-6, 2]}
    energy_per_flop_j: 0.5e-12
    energy_per_byte_j: 7.0e-12
    static_power_w: {choices: [60.0, 120.0]}
    engineering_risk: 0.05
    area_mm2: 800
workloads:
  - name: mlp
    layers:
      - {name: fc1, kind: gemm, rows_per_sample: 1, n: 4096, k: 1024}
      - {name: act, kind: elementwise, elements_per_sample: 4096, flops_per_element: 8}
      - {name: fc2, kind: gemm, rows_per_sample: 1, n: 1024, k: 4096}
  - name: block
    layers:
      - {name: qkv_proj, kind: gemm, rows_per_sample: 128, n: 2304, k: 768}
      - {name: attn_qk, kind: gemm, rows_per_sample: 1536, n: 128, k: 64}
      - {name: ffn_up, kind: gemm, rows_per_sample: 128, n: 3072, k: 768}
batch_sizes: [1, 2, 4, 8, 16, 64, 256, 1024]
)";

TEST_F(ShortlistFile, QuickstartBudgetsMatchBruteForceOverPoints) {
  const ResultsFile f = make("quickstart", read(std::string(DSE_SOURCE_DIR) + "/scenarios/quickstart.yaml"));
  ASSERT_EQ(f.points.size(), 24u);
  const auto all = default_objectives();
  expect_same_front(f, {}, all, "no budgets");
  Budgets sla;
  sla.p99_latency_s = 1e-3;
  expect_same_front(f, sla, all, "p99 <= 1 ms");
  Budgets both = sla;
  both.power_w = 100.0;
  expect_same_front(f, both, all, "p99 <= 1 ms, power <= 100 W");
  Budgets mem;
  mem.memory_bytes = 0.05e9;
  expect_same_front(f, mem, parse_objectives("throughput,energy"), "memory <= 0.05 GB, 2 objectives");
  // With no budgets and the run's objectives the shortlist is /pareto.
  std::vector<std::uint64_t> idx;
  for (const auto i : shortlist(f.archive, {}, all)) idx.push_back(f.archive[i].index);
  std::sort(idx.begin(), idx.end());
  EXPECT_EQ(idx, f.pareto);
}

TEST_F(ShortlistFile, KnobSweepBudgetsMatchBruteForceOverPoints) {
  const ResultsFile f = make("sweep", kSweep);
  ASSERT_EQ(f.points.size(), 1152u);
  const auto all = default_objectives();
  struct Case {
    const char* what;
    Budgets b;
    const char* objectives;
  };
  std::vector<Case> cases;
  cases.push_back({"none", {}, "throughput,latency,energy,risk"});
  Budgets b1;
  b1.p99_latency_s = 0.2e-3;
  cases.push_back({"p99 <= 0.2 ms", b1, "throughput,latency,energy,risk"});
  Budgets b2 = b1;
  b2.power_w = 150.0;
  cases.push_back({"p99 <= 0.2 ms, power <= 150 W", b2, "throughput,latency,energy,risk"});
  Budgets b3;
  b3.area_mm2 = 200.0;
  b3.memory_bytes = 0.1e9;
  cases.push_back({"area <= 200, memory <= 0.1 GB", b3, "throughput,energy"});
  Budgets b4;
  b4.power_w = 70.0;
  cases.push_back({"power <= 70 W, throughput/power/area", b4, "throughput,power,area"});
  Budgets b5;
  b5.p99_latency_s = 1e-9;
  cases.push_back({"impossible SLA", b5, "throughput,latency,energy,risk"});
  std::set<std::size_t> sizes;
  for (const auto& c : cases) {
    const std::size_t n = expect_same_front(f, c.b, parse_objectives(c.objectives), c.what);
    // Only the impossible SLA leaves nothing; the budgets give fronts of differing sizes.
    EXPECT_EQ(n == 0, c.b.p99_latency_s == 1e-9) << c.what << ": " << n;
    sizes.insert(n);
  }
  EXPECT_GE(sizes.size(), 4u);
  EXPECT_TRUE(shortlist(f.archive, b5, all).empty());
  // --top keeps the best-throughput prefix of each workload's list.
  const auto full = shortlist(f.archive, b1, all);
  const auto top2 = shortlist(f.archive, b1, all, 2);
  std::map<std::uint32_t, std::vector<std::size_t>> by;
  for (const auto i : full) by[f.archive[i].workload_id].push_back(i);
  std::vector<std::size_t> want;
  for (const auto& [w, v] : by) want.insert(want.end(), v.begin(), v.begin() + static_cast<long>(std::min<std::size_t>(2, v.size())));
  EXPECT_EQ(top2, want);
}

TEST(ShortlistObjectives, ParsesNamesAndRejectsUnknownOrRepeated) {
  const auto o = parse_objectives("throughput, latency_s,power");
  ASSERT_EQ(o.size(), 3u);
  EXPECT_EQ(o[0].name, "throughput_samples_per_s");
  EXPECT_EQ(o[0].sense, search::Sense::maximize);
  EXPECT_EQ(o[1].name, "latency_s");
  EXPECT_EQ(o[2].name, "power_w");
  EXPECT_THROW((void)parse_objectives("throughput,flops"), InputError);
  EXPECT_THROW((void)parse_objectives("risk,risk"), InputError);
  EXPECT_THROW((void)parse_shortlist_format("xml"), InputError);
}

// The objectives as the shortlist's header writes them (name:sense) are accepted, so that a header
// can be pasted back (it was refused); a sense other than the quantity's own is refused.
TEST(ShortlistObjectives, AcceptsTheHeadersNameWithSense) {
  const auto o = parse_objectives("throughput_samples_per_s:max,latency_s:min, energy:min");
  ASSERT_EQ(o.size(), 3u);
  EXPECT_EQ(o[0].name, "throughput_samples_per_s");
  EXPECT_EQ(o[1].name, "latency_s");
  EXPECT_EQ(o[2].name, "energy_per_sample_j");
  auto message = [](const char* csv) {
    try {
      (void)parse_objectives(csv);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(message("latency:max"),
            "--objectives: 'latency:max': latency is minimised (the archive keeps the front in that sense)");
  EXPECT_EQ(message("throughput:min"),
            "--objectives: 'throughput:min': throughput is maximised (the archive keeps the front in that sense)");
  EXPECT_EQ(message("latency:low"), "--objectives: 'latency:low': expected :max or :min after the name");
  EXPECT_EQ(message("latency_s:min,latency"), "--objectives: 'latency' is listed twice");
}

}  // namespace
}  // namespace dse

namespace dse {
namespace {

// A result file written by hand: layout version 2 and an /archive of `rows` in `type`.
std::string crafted_archive(const std::string& name, const std::vector<PointRecord>& rows, hid_t type) {
  const std::string path = test::scratch_file(name + ".h5");
  h5::quiet_errors();
  const h5::Handle f = h5::create_file(path, {});
  h5::write_attribute(f, "layout_version", kResultsLayoutVersion);
  const h5::Handle ds = h5::create_dataset_1d(f, "archive", type, rows.size());
  h5::write_rows(ds, type, rows.data(), 0, rows.size(), false);
  return path;
}

PointRecord good_row(std::uint64_t index) {
  PointRecord r;
  r.index = index;
  r.feasible = 1;
  r.throughput_samples_per_s = 100.0 + static_cast<double>(index);
  r.latency_s = 1e-3;
  r.energy_per_sample_j = 1e-3;
  r.p99_latency_s = 1e-3;
  return r;
}

std::string read_error(const std::string& path) {
  try {
    (void)read_archive_rows(path);
  } catch (const IoError& e) {
    return e.what();
  }
  return "";
}

// Issue 58 item 15: an archive without latency_s read as latency 0 (HDF5 leaves a missing field
// of the compound at zero), NaN rows were dropped silently, a negative energy ranked best.
TEST(ShortlistReader, RefusesMissingFieldsAndBadFigures) {
  const std::vector<PointRecord> rows = {good_row(0), good_row(1)};
  const h5::Handle full = point_record_type();
  EXPECT_EQ(read_error(crafted_archive("good", rows, full)), "");
  // The record type without latency_s.
  const h5::Handle partial(H5Tcreate(H5T_COMPOUND, sizeof(PointRecord)), H5Tclose);
  for (int i = 0; i < H5Tget_nmembers(full); ++i) {
    char* name = H5Tget_member_name(full, static_cast<unsigned>(i));
    if (std::string(name) != "latency_s") {
      const h5::Handle t(H5Tget_member_type(full, static_cast<unsigned>(i)), H5Tclose);
      H5Tinsert(partial, name, H5Tget_member_offset(full, static_cast<unsigned>(i)), t);
    }
    H5free_memory(name);
  }
  const std::string missing = crafted_archive("no_latency", rows, partial);
  EXPECT_NE(read_error(missing).find(missing + ": /archive: no field latency_s"), std::string::npos)
      << read_error(missing);
  // A NaN, an infinity and a negative energy, and a feasible flag of 7.
  auto with = [&](const std::string& name, const std::function<void(PointRecord&)>& edit) {
    std::vector<PointRecord> r = rows;
    edit(r[1]);
    return read_error(crafted_archive(name, r, full));
  };
  EXPECT_NE(with("nan", [](PointRecord& r) { r.latency_s = std::nan(""); })
                .find(": /archive: row 1 (point 1): latency_s is nan"),
            std::string::npos);
  EXPECT_NE(with("inf", [](PointRecord& r) { r.throughput_samples_per_s = INFINITY; }).find("throughput_samples_per_s is inf"),
            std::string::npos);
  EXPECT_NE(with("negative", [](PointRecord& r) { r.energy_per_sample_j = -1.0; }).find("energy_per_sample_j is -1"),
            std::string::npos);
  EXPECT_NE(with("flag", [](PointRecord& r) { r.feasible = 7; }).find("feasible is 7"), std::string::npos);
  // A dataset that is not a table of points.
  const std::string bytes = test::scratch_file("bytes.h5");
  {
    const h5::Handle f = h5::create_file(bytes, {});
    h5::write_attribute(f, "layout_version", kResultsLayoutVersion);
    (void)h5::create_dataset_1d(f, "archive", H5T_STD_U8LE, 4);
  }
  EXPECT_NE(read_error(bytes).find("not a table of points"), std::string::npos);
}

// The front of a group computed at once (nondominated_rows) equals the scan that stops at --top:
// every --top gives the first rows of the whole front, in the same order. 20,000 rows, 6 in 7 of
// them on a front, 2 workloads, ties included.
TEST(ShortlistFront, TheWholeFrontAndTheTopScanAgree) {
  std::vector<PointRecord> rows;
  std::uint64_t x = 12345;
  auto next = [&] {  // xorshift64
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return static_cast<double>(x >> 11) * 0x1.0p-53;
  };
  for (std::uint64_t i = 0; i < 20000; ++i) {
    PointRecord r = good_row(i);
    r.workload_id = static_cast<std::uint32_t>(i % 2);
    // Points of the plane u + v + w = 1 (minimised: 1 - throughput, latency, energy) do not
    // dominate each other; one in 7 is pushed off the front by a longer latency.
    const double u = next();
    const double v = next() * (1.0 - u);
    r.throughput_samples_per_s = 1.0 - u;
    r.latency_s = v + (i % 7 == 0 ? 1.0 : 0.0);
    r.energy_per_sample_j = 1.0 - u - v;
    r.engineering_risk = static_cast<double>(i % 3) * 0.1;
    if (i % 101 == 0 && i > 0) {  // an exact tie: the same figures under another index
      rows.push_back(rows.back());
      rows.back().index += 100000;
    }
    rows.push_back(r);
  }
  const auto objectives = default_objectives();
  const Budgets none;
  const auto all = shortlist(rows, none, objectives, 0);
  ASSERT_GT(all.size(), 2000u);
  for (const std::size_t top : {std::size_t{1}, std::size_t{37}, std::size_t{1024}, std::size_t{1025}, std::size_t{5000}}) {
    SCOPED_TRACE(top);
    std::vector<std::size_t> want;
    std::map<std::uint32_t, std::size_t> per;
    for (const auto i : all)
      if (per[rows[i].workload_id]++ < top) want.push_back(i);
    EXPECT_EQ(shortlist(rows, none, objectives, top), want);
  }
  // And the whole front is what brute force finds (one workload, 2,000 rows).
  std::vector<PointRecord> some(rows.begin(), rows.begin() + 2000);
  for (auto& r : some) r.workload_id = 0;
  const auto got = shortlist(some, none, objectives, 0);
  const auto ref = brute_force(some, none, objectives);
  EXPECT_EQ(std::set<std::size_t>(got.begin(), got.end()), std::set<std::size_t>(ref.begin(), ref.end()));
}

}  // namespace
}  // namespace dse

namespace dse {
namespace {

TextTable three_columns(std::uint32_t first, std::size_t n) {
  TextTable t;
  t.columns = {"entry", "name", "knobs"};
  for (std::uint32_t i = first; i < first + n; ++i) {
    t.ids.push_back(i);
    t.rows.push_back({"npu", "npu#" + std::to_string(i), std::string(i % 5, 'k')});
  }
  return t;
}

// A names table written a part at a time (each rank its rows, `dse run`'s /variants) holds the rows
// write_text_table writes of the whole table, at their places; the widths are every part's largest.
// Widths by hand: "entry" 4 ("npu" + 1), "name" 7 ("npu#9" + 1 = 6, "npu#10" + 1 = 7), "knobs" 5 (4 k's + 1).
TEST(NamesTables, APartLandsAtItsRowsWithTheAgreedWidths) {
  h5::quiet_errors();
  const TextTable whole = three_columns(0, 12);
  EXPECT_EQ(text_table_widths(whole), (std::vector<std::size_t>{4, 7, 5}));
  const TextTable head = three_columns(0, 5);  // narrower on its own: "npu#4", at most 4 k's
  EXPECT_EQ(text_table_widths(head), (std::vector<std::size_t>{4, 6, 5}));
  const std::string a = test::scratch_file("names_whole.h5");
  const std::string b = test::scratch_file("names_part.h5");
  {
    const h5::Handle f = h5::create_file(a, {});
    write_text_table(f, "variants", whole, false, true);
  }
  {
    const h5::Handle f = h5::create_file(b, {});
    // Rows 5..11 alone, the whole table's widths: in parallel every rank writes its part so.
    write_text_table_part(f, "variants", three_columns(5, 7), text_table_widths(whole), 5, 12, false);
  }
  const h5::Handle fa = h5::open_file_readonly(a);
  const h5::Handle fb = h5::open_file_readonly(b);
  const TextTable ra = read_text_table(fa, "variants");
  const TextTable rb = read_text_table(fb, "variants");
  ASSERT_EQ(ra.ids.size(), 12U);
  ASSERT_EQ(rb.ids.size(), 12U);
  for (std::size_t i = 5; i < 12; ++i) {
    EXPECT_EQ(rb.ids[i], ra.ids[i]);
    EXPECT_EQ(rb.rows[i], ra.rows[i]);
  }
  EXPECT_EQ(rb.rows[0], (std::vector<std::string>{"", "", ""}));  // not written by this part
  // Reading only some ids.
  const std::vector<std::uint32_t> only = {3, 10};
  const TextTable some = read_text_table(fa, "variants", &only);
  EXPECT_EQ(some.ids, only);
  EXPECT_EQ(some.rows[1], (std::vector<std::string>{"npu", "npu#10", ""}));  // 10 % 5 = 0 k's
  // A part beyond the table, widths that do not match its columns, a cell wider than its column.
  const h5::Handle fc = h5::create_file(test::scratch_file("names_bad.h5"), {});
  EXPECT_THROW(write_text_table_part(fc, "v", head, text_table_widths(whole), 10, 12, false), IoError);
  EXPECT_THROW(write_text_table_part(fc, "v", head, {4, 7}, 0, 12, false), IoError);
  EXPECT_THROW(write_text_table_part(fc, "v", three_columns(10, 2), text_table_widths(head), 10, 12, false), IoError);
}

}  // namespace
}  // namespace dse
