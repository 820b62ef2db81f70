// Validation of the SCALE-Sim compatible systolic model against SCALE-Sim v2
// itself: every case of data/oracles/scalesim/expected.csv (SCALE-Sim
// v2 outputs, commit 22f88b17) is re-run from its original .cfg and topology
// files, read at test time, and must match exactly on total and stall cycles
// and the six SRAM/DRAM counts, and within 0.01 percentage points on the
// three percentages, for both simulate_scalesim() and simulate_scalesim_reference().
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "costmodel/systolic/systolic.hpp"
#include "dse/error.hpp"
#include "dse/io/scalesim_io.hpp"
#include "tests/scratch.hpp"

namespace {

const std::string kDir = std::string(DSE_ORACLES_DIR) + "/scalesim";

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> f;
  std::stringstream s(line);
  std::string c;
  while (std::getline(s, c, ',')) f.push_back(c);
  return f;
}

struct Case {
  std::vector<std::string> f;  // the expected.csv row
};

std::vector<Case> load_cases(const std::string& file = "expected.csv") {
  std::ifstream in(kDir + "/" + file);
  std::vector<Case> cases;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    if (!line.empty()) cases.push_back({split(line)});
  }
  return cases;
}

void check_cases(const std::vector<Case>& cases) {
  for (const auto& c : cases) {
    const auto& f = c.f;
    ASSERT_EQ(f.size(), 16U);
    SCOPED_TRACE("case " + f[0]);
    const auto cfg = dse::io::read_scalesim_config(kDir + "/" + f[1]);
    const auto kind = f[3] == "yes" ? dse::io::TopologyKind::gemm : dse::io::TopologyKind::conv;
    const auto layers = dse::io::read_scalesim_topology(kDir + "/" + f[2], kind);
    const dse::io::ScalesimLayer* layer = nullptr;
    for (const auto& l : layers)
      if (l.name == f[4]) layer = &l;
    ASSERT_NE(layer, nullptr) << "layer " << f[4];
    // Both implementations: the fold-level one (what `dse scalesim` runs;
    // it replays row by row itself for overlapping convolutions such as
    // AlexNet conv1) and the row-by-row reference it is property-tested against.
    for (const bool reference : {false, true}) {
      SCOPED_TRACE(reference ? "simulate_scalesim_reference" : "simulate_scalesim");
      const auto r = reference ? dse::costmodel::simulate_scalesim_reference(cfg.array, layer->conv)
                               : dse::costmodel::simulate_scalesim(cfg.array, layer->conv);
      EXPECT_EQ(r.total_cycles, std::stoll(f[5]));
      EXPECT_EQ(r.stall_cycles, std::stoll(f[6]));
      EXPECT_NEAR(r.overall_util_pct, std::stod(f[7]), 0.01);
      EXPECT_NEAR(r.mapping_eff_pct, std::stod(f[8]), 0.01);
      EXPECT_NEAR(r.compute_util_pct, std::stod(f[9]), 0.01);
      EXPECT_EQ(r.sram_ifmap_reads, std::stoll(f[10]));
      EXPECT_EQ(r.sram_filter_reads, std::stoll(f[11]));
      EXPECT_EQ(r.sram_ofmap_writes, std::stoll(f[12]));
      EXPECT_EQ(r.dram_ifmap_reads, std::stoll(f[13]));
      EXPECT_EQ(r.dram_filter_reads, std::stoll(f[14]));
      EXPECT_EQ(r.dram_ofmap_writes, std::stoll(f[15]));
    }
  }
}

TEST(ScalesimValidation, EveryExpectedCaseMatches) {
  const auto cases = load_cases();
  ASSERT_EQ(cases.size(), 11U) << "expected.csv not found or changed in " << kDir;
  check_cases(cases);
}

// S11-S13 (expected-dram-blocks.csv): USER bandwidth, one case per dataflow, operands whose
// folds do not fill the array. SCALE-Sim's read buffer fetches whole lines of its prefetch
// matrix, which pads every fold to the array side with null requests
// (compute/systolic_compute_*.py create_*_prefetch_mat, memory/read_buffer.py
// set_fetch_matrix and prefetch_active_buffer): e.g. S11 (ws, 16x16, GEMM 180x72x250,
// Bandwidth 8) reads ceil(250/16) x 16 x 180 = 46,080 ifmap words for a 45,000-word ifmap and
// ceil(72/16) x 16 x 250 = 20,000 filter words for 18,000; S13 (is, Bandwidth 6) reads
// ceil(ceil(216/16) x 16 x 40 / 6) x 6 = 8,964 filter words.
TEST(ScalesimValidation, DramReadsCountWholePrefetchLines) {
  const auto cases = load_cases("expected-dram-blocks.csv");
  ASSERT_EQ(cases.size(), 3U) << "expected-dram-blocks.csv not found or changed in " << kDir;
  check_cases(cases);
}

std::string first_line(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::string l;
  std::getline(in, l);
  return l;
}

// The three reports, with SCALE-Sim v2's headers (as in the golden reports of
// scalesim-project/scale-sim-v2, test/general/golden_trace/*.csv).
TEST(ScalesimValidation, WritesTheThreeReportsWithScalesimHeaders) {
  const std::filesystem::path out = dse::test::scratch_file("scalesim");  // run_scalesim makes it
  std::filesystem::remove_all(out);
  const auto cfg = dse::io::read_scalesim_config(kDir + "/s1_alexnet_conv1_32x32_ws.cfg");
  const auto layers = dse::io::read_scalesim_topology(kDir + "/alexnet_conv1.csv", dse::io::TopologyKind::conv);
  const std::string dir = dse::io::run_scalesim(cfg, layers, out.string());
  EXPECT_EQ(std::filesystem::path(dir), out / "golden_32x32_ws");
  EXPECT_EQ(first_line(out / "golden_32x32_ws" / "COMPUTE_REPORT.csv"),
            "LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, Compute Util %,");
  EXPECT_EQ(first_line(out / "golden_32x32_ws" / "BANDWIDTH_REPORT.csv"),
            "LayerID, Avg IFMAP SRAM BW, Avg FILTER SRAM BW, Avg OFMAP SRAM BW, Avg IFMAP DRAM BW, Avg FILTER DRAM "
            "BW, Avg OFMAP DRAM BW,");
  EXPECT_EQ(first_line(out / "golden_32x32_ws" / "DETAILED_ACCESS_REPORT.csv"),
            "LayerID, SRAM IFMAP Start Cycle, SRAM IFMAP Stop Cycle, SRAM IFMAP Reads, SRAM Filter Start Cycle, "
            "SRAM Filter Stop Cycle, SRAM Filter Reads, SRAM OFMAP Start Cycle, SRAM OFMAP Stop Cycle, SRAM OFMAP "
            "Writes, DRAM IFMAP Start Cycle, DRAM IFMAP Stop Cycle, DRAM IFMAP Reads, DRAM Filter Start Cycle, DRAM "
            "Filter Stop Cycle, DRAM Filter Reads, DRAM OFMAP Start Cycle, DRAM OFMAP Stop Cycle, DRAM OFMAP "
            "Writes,");
  // The data row of the compute report: SCALE-Sim's golden row for this case
  // is "0, 112283, 0, 91.68309650614964, 94.53125, 90.78000992063485,".
  std::ifstream in(out / "golden_32x32_ws" / "COMPUTE_REPORT.csv");
  std::string header, row;
  std::getline(in, header);
  std::getline(in, row);
  EXPECT_EQ(row.substr(0, 20), "0, 112283, 0, 91.683");
  std::filesystem::remove_all(out);
}

// The rows of a SCALE-Sim report, each a list of trimmed fields (the header is row 0).
std::vector<std::vector<std::string>> read_report(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::vector<std::vector<std::string>> rows;
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> row;
    for (std::string f : split(line)) {
      f.erase(0, f.find_first_not_of(' '));
      f.erase(f.find_last_not_of(" \r") + 1);
      if (!f.empty()) row.push_back(f);
    }
    if (!row.empty()) rows.push_back(row);
  }
  return rows;
}

// Runs every case folder of data/oracles/scalesim/<folder> (run.cfg, conv.csv or gemm.csv and the
// three reports SCALE-Sim v2 itself, commit 22f88b17, wrote for it) through `dse scalesim`'s
// run_scalesim and compares every field of every report: integers exactly, real numbers to 1e-9
// relative.
void check_saved_runs(const std::string& folder, std::size_t expected_cases) {
  const std::filesystem::path root = std::filesystem::path(kDir) / folder;
  std::vector<std::filesystem::path> cases;
  for (const auto& e : std::filesystem::directory_iterator(root))
    if (e.is_directory()) cases.push_back(e.path());
  ASSERT_EQ(cases.size(), expected_cases) << "cases not found or changed in " << root;
  std::sort(cases.begin(), cases.end());
  const std::filesystem::path out = dse::test::scratch_file("scalesim_" + folder);
  for (const auto& dir : cases) {
    SCOPED_TRACE(dir.filename().string());
    std::filesystem::remove_all(out);
    const bool gemm = std::filesystem::exists(dir / "gemm.csv");
    const auto cfg = dse::io::read_scalesim_config((dir / "run.cfg").string());
    const auto layers = dse::io::read_scalesim_topology((dir / (gemm ? "gemm.csv" : "conv.csv")).string(),
                                                        gemm ? dse::io::TopologyKind::gemm : dse::io::TopologyKind::conv);
    const std::filesystem::path got_dir = dse::io::run_scalesim(cfg, layers, out.string());
    for (const char* report : {"COMPUTE_REPORT.csv", "DETAILED_ACCESS_REPORT.csv", "BANDWIDTH_REPORT.csv"}) {
      SCOPED_TRACE(report);
      const auto want = read_report(dir / report);
      const auto got = read_report(got_dir / report);
      ASSERT_EQ(got.size(), want.size());
      ASSERT_GE(want.size(), 2U);
      for (std::size_t r = 0; r < want.size(); ++r) {
        ASSERT_EQ(got[r].size(), want[r].size()) << "row " << r;
        for (std::size_t c = 0; c < want[r].size(); ++c) {
          if (r == 0) {
            EXPECT_EQ(got[r][c], want[r][c]);
            continue;
          }
          const double w = std::stod(want[r][c]);
          const double g = std::stod(got[r][c]);
          EXPECT_NEAR(g, w, 1e-9 * std::max(1.0, std::abs(w))) << want[0][c] << ", layer " << want[r][0];
        }
      }
    }
  }
  std::filesystem::remove_all(out);
}

// differential/: 30 random runs (scripts/scalesim_diff.py --cases 30 --seed 1: arrays of 2 to 32
// rows and columns, every dataflow, CALC and USER bandwidth, SRAMs of 1 to 512 KiB, one to three
// convolution or GEMM layers). This covers what expected.csv does not: the start and stop cycles
// of the six SRAM and DRAM traces and the bandwidth report. Cases 1, 7 and 27 are runs whose
// final ofmap drain starts (at the last demand row's cycle) before an earlier drain ends:
// SCALE-Sim reports the last drain's last line as the DRAM OFMAP stop cycle, not the latest line
// (case 1: 13,379, where the latest is 13,422).
TEST(ScalesimValidation, EveryFieldOfTheReportsOfThirtyRandomRuns) { check_saved_runs("differential", 30); }

// differential-forms/: 25 more (--cases 25 --seed 3 --forms) whose conv rows also take SCALE-Sim's
// other forms: a stride along the width, depthwise ("DP") layers run per channel, a note after
// the last comma. Case 4 (8x32, input stationary, USER bandwidth, a 2 KiB ifmap SRAM) is a run
// whose last ifmap request makes a fetch that ended long before: SCALE-Sim serves it one cycle
// after the request (SRAM IFMAP stop cycle 584), not at the fetch's end (395).
TEST(ScalesimValidation, EveryFieldOfTheReportsOfRandomRunsInEveryRowForm) { check_saved_runs("differential-forms", 25); }

TEST(ScalesimConfigReader, RefusesUnsupportedKeyWithFileLineAndKey) {
  const std::string text =
      "[general]\nrun_name = x\n\n[architecture_presets]\nArrayHeight: 8\nSparsitySupport: true\n";
  try {
    (void)dse::io::parse_scalesim_config(text, "bad.cfg");
    FAIL() << "expected a ConfigError";
  } catch (const dse::ConfigError& e) {
    EXPECT_EQ(e.line, 6);
    EXPECT_NE(std::string(e.what()).find("bad.cfg:6:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("SparsitySupport"), std::string::npos) << e.what();
  }
}

TEST(ScalesimConfigReader, RefusesBadValues) {
  EXPECT_THROW((void)dse::io::parse_scalesim_config("[general]\nrun_name=a\n[architecture_presets]\nDataflow: xs\n",
                                                     "c.cfg"),
               dse::ConfigError);
  EXPECT_THROW((void)dse::io::parse_scalesim_config(
                   "[general]\nrun_name=a\n[run_presets]\nInterfaceBandwidth: FAST\n", "c.cfg"),
               dse::ConfigError);
  EXPECT_THROW((void)dse::io::parse_scalesim_config("[architecture_presets]\nArrayHeight: 8\n", "c.cfg"),
               dse::ConfigError);  // no run_name
}

// SCALE-Sim v2's conv rows (scalesim/topology_utils.py, commit 22f88b17): a ninth field is the
// stride along the width; the text after a row's last comma is not read (its mobilnet_4k.csv ends
// rows with "#dw"); a name containing "DP" makes a depthwise layer, run as one single-channel
// layer per channel named <name>Channel_<i>.
TEST(ScalesimTopologyReader, StrideWidthNotesAndDepthwiseRows) {
  const auto layers = dse::io::parse_scalesim_topology(
      "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,\n"
      "C1, 16, 20, 3, 3, 8, 4, 1, 2,\n"
      "C2_dw, 10, 10, 3, 3, 1, 1, 2,#dw\n"
      "B3_DP, 9, 9, 3, 3, 3, 1, 1,\n"
      "C4, 8, 8, 1, 1, 2, 2, 1\n",
      "t.csv", dse::io::TopologyKind::conv);
  ASSERT_EQ(layers.size(), 6U);  // C1, C2_dw, three channels of B3_DP, C4
  EXPECT_EQ(layers[0].conv.stride_h, 1);
  EXPECT_EQ(layers[0].conv.stride_w, 2);
  EXPECT_EQ(layers[1].name, "C2_dw");
  EXPECT_EQ(layers[1].conv.stride_h, 2);
  EXPECT_EQ(layers[1].conv.stride_w, 2);
  for (int ch = 0; ch < 3; ++ch) {
    const auto& l = layers[static_cast<std::size_t>(2 + ch)];
    EXPECT_EQ(l.name, "B3_DPChannel_" + std::to_string(ch));
    EXPECT_EQ(l.conv.channels, 1);
    EXPECT_EQ(l.conv.num_filters, 1);
    EXPECT_EQ(l.conv.ifmap_h, 9);
  }
  EXPECT_EQ(layers[5].conv.stride_w, 1);  // a row ending in a number, no comma after it, is read whole
  EXPECT_THROW((void)dse::io::parse_scalesim_topology("h\nC1, 16, 20, 3, 3, 8, 4, 1, 2, 3,\n", "t.csv",
                                                      dse::io::TopologyKind::conv),
               dse::ConfigError);  // ten fields
  EXPECT_THROW((void)dse::io::parse_scalesim_topology("h\nD_DP, 4, 4, 1, 1, 65537, 1, 1,\n", "t.csv",
                                                      dse::io::TopologyKind::conv),
               dse::ConfigError);  // a depthwise row runs a layer per channel: at most 65,536
}

// SCALE-Sim v2 reads `Bandwidth` as a list and gives its first figure to all three operands
// (scale_config.py, single_layer_sim.py: bws[0] for ifmap, filter and ofmap).
TEST(ScalesimConfigReader, BandwidthListTakesItsFirstFigure) {
  const auto c = dse::io::parse_scalesim_config(
      "[general]\nrun_name=a\n[architecture_presets]\nBandwidth : 12, 4, 8\n[run_presets]\nInterfaceBandwidth: USER\n", "c.cfg");
  EXPECT_EQ(c.array.dram_words_per_cycle, 12);
  EXPECT_THROW((void)dse::io::parse_scalesim_config("[general]\nrun_name=a\n[architecture_presets]\nBandwidth : 12, x\n",
                                                     "c.cfg"),
               dse::ConfigError);
}

TEST(ScalesimTopologyReader, GemmRowsBecomeConvs) {
  const auto layers =
      dse::io::parse_scalesim_topology("Layer,M,N,K,\nG1,128,64,256,\n", "g.csv", dse::io::TopologyKind::gemm);
  ASSERT_EQ(layers.size(), 1U);
  EXPECT_EQ(layers[0].conv.ifmap_h, 128);
  EXPECT_EQ(layers[0].conv.ifmap_w, 256);
  EXPECT_EQ(layers[0].conv.filter_w, 256);
  EXPECT_EQ(layers[0].conv.num_filters, 64);
  EXPECT_THROW((void)dse::io::parse_scalesim_topology("Layer,M,N,K,\nG1,128,x,256,\n", "g.csv",
                                                      dse::io::TopologyKind::gemm),
               dse::ConfigError);
}

}  // namespace
