// Validation of the SCALE-Sim compatible systolic model against SCALE-Sim v2
// itself: every case of data/oracles/scalesim/expected.csv (SCALE-Sim
// v2 outputs, commit 22f88b17) is re-run from its original .cfg and topology
// files, read at test time, and must match exactly on total and stall cycles
// and the six SRAM/DRAM counts, and within 0.01 percentage points on the
// three percentages, for both simulate_scalesim() and simulate_scalesim_reference().
#include <gtest/gtest.h>

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
