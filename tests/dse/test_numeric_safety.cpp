// Numeric safety of the readers and builders (issue 11, item 3): zero, negative, NaN and
// infinite figures are refused with a ConfigError; counts past 2^63 (huge layers x huge
// batches, huge Timeloop problems, huge SCALE-Sim layers, design spaces) are either refused
// with a ConfigError or computed in double without wrapping; never a NaN in the output.
// Expected values are powers of two worked out by hand in the comments.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "costmodel/layer.hpp"
#include "costmodel/loopnest/problem.hpp"
#include "costmodel/workload/graph.hpp"
#include "costmodel/workload/presets.hpp"
#include "costmodel/workload/spec.hpp"
#include "dse/error.hpp"
#include "dse/io/gpu_hardware_reader.hpp"
#include "dse/io/scalesim_io.hpp"
#include "dse/io/scenario.hpp"
#include "dse/io/timeloop_reader.hpp"
#include "dse/io/workload_reader.hpp"
#include "dse/io/yaml_reader.hpp"
#include "tests/scratch.hpp"

namespace dse {
namespace {

// A valid one-platform scenario; {HW} is replaced by extra/overriding hardware lines,
// {LAYER} by the layer, {BATCH} by the batch sizes.
std::string scenario(const std::string& peak, const std::string& power = "1.0",
                     const std::string& layer = "{name: fc, kind: gemm, rows_per_sample: 1, n: 64, k: 64}",
                     const std::string& batch = "[1]", const std::string& extra = "") {
  return "name: t\nhardware:\n  - name: hw\n    peak_flops_per_s: " + peak +
         "\n    memory_bandwidth_bytes_per_s: 1.0e12\n    memory_capacity_bytes: 1.0e9\n"
         "    kernel_overhead_s: 0.0\n    energy_per_flop_j: 1.0e-12\n    energy_per_byte_j: 1.0e-11\n"
         "    static_power_w: " + power + "\n    engineering_risk: 0.1\n" + extra +
         "workloads:\n  - name: w\n    layers:\n      - " + layer + "\nbatch_sizes: " + batch + "\n";
}

bool refused(const std::string& text) {
  try {
    (void)parse_scenario(text, "t.yaml");
  } catch (const ConfigError&) {
    return true;
  }
  return false;
}

TEST(NumericSafetyScenario, BadFiguresAreRefused) {
  EXPECT_FALSE(refused(scenario("1.0e12")));  // the valid baseline
  // peak_flops_per_s must be a finite number > 0.
  for (const char* v : {".nan", ".NaN", ".inf", "-.inf", "-1.0", "0", "1e400"}) {
    EXPECT_TRUE(refused(scenario(v))) << v;
  }
  // static_power_w may be 0 but not negative, NaN or infinite.
  EXPECT_FALSE(refused(scenario("1.0e12", "0")));
  for (const char* v : {".nan", ".inf", "-.inf", "-0.5"}) EXPECT_TRUE(refused(scenario("1.0e12", v))) << v;
  // A sweep with a NaN or infinite bound, or whose points are not finite.
  EXPECT_TRUE(refused(scenario("{choices: [1.0e12, .nan]}")));
  EXPECT_TRUE(refused(scenario("{linear: [1.0e12, .inf, 3]}")));
  EXPECT_TRUE(refused(scenario("1.0e12", "{linear: [1.0e308, -1.0e308, 3]}")));  // span is -inf: NaN at t=0
  EXPECT_TRUE(refused(scenario("{log: [1.0e-300, 1.0e300, 3]}") + ""));  // pow(1e600) overflows
  // A range with more steps than memory allows.
  EXPECT_TRUE(refused(scenario("{linear: [1.0e12, 2.0e12, 1000000000000]}")));
  // Non-positive, fractional or huge batch sizes and layer sizes.
  for (const char* b : {"[0]", "[-1]", "[1.5]", "[.nan]", "[99999999999999999999]"}) {
    EXPECT_TRUE(refused(scenario("1.0e12", "1.0", "{name: fc, kind: gemm, rows_per_sample: 1, n: 64, k: 64}", b))) << b;
  }
}

TEST(NumericSafetyScenario, DesignSpacesBeyond2To63AreRefused) {
  // Seven swept figures of 1000 points each: 1000^7 = 1e21 > 2^63-1 (~9.22e18) variants.
  auto swept = [](const char* from, const char* to) {
    return std::string("{linear: [") + from + ", " + to + ", 1000]}";
  };
  std::string hw = "name: t\nhardware:\n  - name: hw\n    peak_flops_per_s: " + swept("1e12", "2e12") +
                   "\n    memory_bandwidth_bytes_per_s: " + swept("1e12", "2e12") +
                   "\n    memory_capacity_bytes: " + swept("1e9", "2e9") +
                   "\n    kernel_overhead_s: " + swept("0", "1e-5") +
                   "\n    energy_per_flop_j: " + swept("1e-12", "2e-12") +
                   "\n    energy_per_byte_j: " + swept("1e-11", "2e-11") +
                   "\n    static_power_w: " + swept("1", "2") + "\n    engineering_risk: 0.1\n";
  const std::string tail = "workloads:\n  - name: w\n    layers:\n      - {name: fc, kind: gemm, rows_per_sample: 1, "
                           "n: 64, k: 64}\nbatch_sizes: [1]\n";
  EXPECT_TRUE(refused(hw + tail));
  // Six of them: 1000^6 = 1e18 <= 2^63-1, accepted and counted exactly.
  std::string six = hw;
  six.replace(six.find("static_power_w: {"), std::string::npos, "static_power_w: 1\n    engineering_risk: 0.1\n");
  const Scenario s = parse_scenario(six + tail, "t.yaml");
  EXPECT_EQ(hardware_variants(s), 1'000'000'000'000'000'000ULL);
  // 1e18 variants x 10 batch sizes = 1e19 > 2^63-1 points: refused.
  EXPECT_TRUE(refused(six + "workloads:\n  - name: w\n    layers:\n      - {name: fc, kind: gemm, rows_per_sample: 1, "
                            "n: 64, k: 64}\nbatch_sizes: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n"));
}

TEST(NumericSafetyScenario, HugeLayerTimesHugeBatchDoesNotWrap) {
  // rows_per_sample = n = k = batch = 2^62 (all legal int64): every count is taken in double.
  const std::string big = "4611686018427387904";  // 2^62
  const Scenario s = parse_scenario(
      scenario("1.0e12", "1.0", "{name: fc, kind: gemm, rows_per_sample: " + big + ", n: " + big + ", k: " + big + "}",
               "[" + big + "]"),
      "t.yaml");
  const auto& layer = s.workloads[0].layers[0];
  const std::int64_t batch = s.batch_sizes[0];
  // weights k*n*2 B = 2^125; activations rows*(k+n)*2 B = 2^124 * 2^63 * 2 = 2^188 (k + n = 2^63
  // overflows int64, so it must be summed in double).
  const double resident = costmodel::resident_bytes(s.workloads[0], batch);
  EXPECT_TRUE(std::isfinite(resident));
  EXPECT_GE(resident, std::ldexp(1.0, 188));
  const auto cost = costmodel::evaluate_workload(s.hardware[0].variant(0).roofline, s.workloads[0], batch);
  EXPECT_TRUE(std::isfinite(cost.flops) && cost.flops > 0.0);
  EXPECT_TRUE(std::isfinite(cost.latency_s) && cost.latency_s > 0.0);
  EXPECT_TRUE(std::isfinite(cost.energy_j) && cost.energy_j > 0.0);
  EXPECT_FALSE(cost.feasible);  // 2^188 bytes do not fit in 1 GB
  // flops of the GEMM = 2 m n k = 2 * 2^124 * 2^62 * 2^62 = 2^249.
  EXPECT_DOUBLE_EQ(costmodel::layer_work(layer, batch).flops, std::ldexp(1.0, 249));
}

std::string a100_with(const std::string& key, const std::string& value) {
  std::string text = io::read_text_file(std::string(DSE_SOURCE_DIR) + "/scenarios/hardware/a100-sxm4-80gb.yaml", "hw");
  const auto at = text.find(key + ":");
  EXPECT_NE(at, std::string::npos) << key;
  const auto start = at + key.size() + 1;
  const auto end = text.find_first_of("#\n", start);
  return text.substr(0, start) + " " + value + " " + text.substr(end);
}

TEST(NumericSafetyGpuHardware, BadFiguresAreRefused) {
  EXPECT_NO_THROW((void)io::parse_gpu_hardware(a100_with("clock_hz", "1.41e9"), "a100.yaml"));
  int cases = 0;
  for (const char* key : {"clock_hz", "hbm_bytes", "hbm_peak_bandwidth_bytes_per_s", "l2_bytes", "cores"}) {
    for (const char* v : {".nan", ".inf", "-.inf", "0", "-1", "1e999"}) {
      EXPECT_THROW((void)io::parse_gpu_hardware(a100_with(key, v), "a100.yaml"), ConfigError) << key << " = " << v;
      ++cases;
    }
  }
  EXPECT_EQ(cases, 30);
}

TEST(NumericSafetyWorkload, OverflowingDimensionsAreRefused) {
  auto gemm = [](const std::string& n) {
    return "name: w\nops:\n  - {name: g, kind: gemm, m: tokens, n: " + n + ", k: 64}\n";
  };
  EXPECT_NO_THROW((void)io::parse_workload_text(gemm("64"), "w.yaml"));
  // 2^62 * 4 = 2^64 overflows the int64 coefficient.
  EXPECT_THROW((void)io::parse_workload_text(gemm("4611686018427387904*4"), "w.yaml"), ConfigError);
  EXPECT_THROW((void)io::parse_workload_text(gemm("99999999999999999999"), "w.yaml"), ConfigError);
  for (const char* v : {"0", "-64", ".nan", "1.5"}) {
    EXPECT_THROW((void)io::parse_workload_text(gemm(v), "w.yaml"), ConfigError) << v;
  }
}

TEST(NumericSafetyWorkload, TransformerPhasesPast2To63ElementsAreRefused) {
  namespace wl = costmodel::workload;
  const auto spec = wl::workload_preset("llama2-7b");
  ASSERT_TRUE(spec.has_value());
  wl::PhaseSpec huge;
  huge.batch = std::int64_t{1} << 31;  // 2^31 x 2^31 = 2^62 tokens; x 4096 hidden = 2^74 elements
  huge.seq = std::int64_t{1} << 31;
  EXPECT_FALSE(wl::check(*spec, huge).empty());
  // A large but real phase (1024 x 8192 tokens) passes and builds with finite, positive totals.
  wl::PhaseSpec big;
  big.batch = 1024;
  big.seq = 8192;
  EXPECT_EQ(wl::check(*spec, big), "");
  const auto totals = wl::totals(wl::build_graph(*spec, big));
  EXPECT_TRUE(std::isfinite(totals.flops) && totals.flops > 0.0);
  EXPECT_TRUE(std::isfinite(totals.bytes) && totals.bytes > 0.0);
}

TEST(NumericSafetyTimeloop, ProblemsPast2To62AreRefused) {
  auto problem = [](const std::string& r, const std::string& p) {
    return "problem:\n  shape:\n    name: Conv1D\n    dimensions: [ R, P ]\n    data_spaces:\n"
           "    - name: Weights\n      projection:\n      - [ [R] ]\n"
           "    - name: Inputs\n      projection:\n      - [ [R], [P] ]\n"
           "    - name: Outputs\n      projection:\n      - [ [P] ]\n      read_write: True\n"
           "  instance:\n    R: " + r + "\n    P: " + p + "\n";
  };
  const auto ok = io::read_timeloop_problem(dse::test::write_scratch_file("ok.prob.yaml", problem("3", "16")));
  EXPECT_EQ(costmodel::loopnest::points(ok), 48);  // 3 x 16
  // 2^40 x 2^40 = 2^80 iteration points: refused rather than wrapped.
  EXPECT_THROW((void)io::read_timeloop_problem(
                   dse::test::write_scratch_file("big.prob.yaml", problem("1099511627776", "1099511627776"))),
               ConfigError);
  // 2^31 x 2^31 = 2^62 points: at the limit, accepted and exact.
  const auto edge =
      io::read_timeloop_problem(dse::test::write_scratch_file("edge.prob.yaml", problem("2147483648", "2147483648")));
  EXPECT_EQ(costmodel::loopnest::points(edge), std::int64_t{1} << 62);
  for (const char* v : {"0", "-3", ".nan", ".inf", "99999999999999999999"}) {
    EXPECT_THROW((void)io::read_timeloop_problem(dse::test::write_scratch_file("bad.prob.yaml", problem(v, "16"))),
                 ConfigError)
        << v;
  }
}

TEST(NumericSafetyScalesim, OversizedLayersAndArraysAreRefused) {
  using io::TopologyKind;
  EXPECT_NO_THROW((void)io::parse_scalesim_topology("Layer,M,N,K,\nG1,128,64,256,\n", "t.csv", TopologyKind::gemm));
  // 2^30 x 2^30 x 2^30 = 2^90 MACs: past 2^53.
  EXPECT_THROW((void)io::parse_scalesim_topology("Layer,M,N,K,\nG1,1073741824,1073741824,1073741824,\n", "t.csv",
                                                 TopologyKind::gemm),
               ConfigError);
  for (const char* v : {"0", "-1", "1.5", "nan", "inf", "99999999999999999999"}) {
    EXPECT_THROW((void)io::parse_scalesim_topology(std::string("Layer,M,N,K,\nG1,") + v + ",64,256,\n", "t.csv",
                                                   TopologyKind::gemm),
                 ConfigError)
        << v;
  }
  const std::string cfg = io::read_text_file(std::string(DSE_ORACLES_DIR) + "/scalesim/s_gemm_32x32_ws.cfg", "cfg");
  EXPECT_NO_THROW((void)io::parse_scalesim_config(cfg, "c.cfg"));
  auto with = [&](const std::string& key, const std::string& value) {
    std::string t = cfg;
    const auto at = t.find(key);
    const auto end = t.find('\n', at);
    return t.substr(0, at) + key + ": " + value + t.substr(end);
  };
  // kB x 1024 would overflow int64; a 2^40-PE side; an offset past 2^53.
  EXPECT_THROW((void)io::parse_scalesim_config(with("IfmapSramSzkB", "9007199254740993"), "c.cfg"), ConfigError);
  EXPECT_THROW((void)io::parse_scalesim_config(with("ArrayHeight", "1099511627776"), "c.cfg"), ConfigError);
  EXPECT_THROW((void)io::parse_scalesim_config(with("OfmapOffset", "9223372036854775807"), "c.cfg"), ConfigError);
}

}  // namespace
}  // namespace dse
