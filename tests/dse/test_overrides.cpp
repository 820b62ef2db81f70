// Chip and system figures as knobs (`overrides:` of kind: system entries, dse/io/overrides.hpp):
// values, names and `dse eval` options of the variants; paths and values refused with the files'
// own checks at the scenario's place; an override that changes nothing gives the preset's figures
// bit for bit; more HBM bandwidth never lowers decode throughput.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "costmodel/platform/system.hpp"
#include "dse/driver/run.hpp"
#include "dse/error.hpp"
#include "dse/io/knob_values.hpp"
#include "dse/io/overrides.hpp"
#include "dse/io/yaml_reader.hpp"
#include "dse/io/platform_reader.hpp"
#include "dse/io/scenario.hpp"
#include "dse/io/workload_reader.hpp"

namespace dse {
namespace {

namespace pf = costmodel::platform;

const std::string kWorkload =
    "workloads:\n  - {name: chat, model: llama3-8b, prompt_tokens: 256, output_tokens: 32, rate_per_s: 1, "
    "requests: 100}\nbatch_sizes: [8]\n";

Scenario scenario_with(const std::string& overrides_lines) {
  return parse_scenario("name: o\nhardware:\n  - name: h\n    kind: system\n    system: dgx-h100-8\n    tp: 2\n" +
                            overrides_lines + kWorkload,
                        "o.yaml");
}

std::string error_of(const std::string& overrides_lines) {
  try {
    (void)scenario_with(overrides_lines);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

// exact_number_text is defined as the first of %.6g .. %.17g that reads back to the number; it
// starts its search at the shortest round trip. Checked against that definition, tried digit by
// digit, on numbers of every length in the normal range: powers of two (whose rounding interval is lopsided), tenths,
// the log steps a scenario sweeps and random bit patterns of normal doubles.
TEST(Overrides, ExactNumberTextIsTheFirstPrintfPrecisionThatReadsBack) {
  const auto by_definition = [](double v) {
    for (int digits = 6; digits <= 17; ++digits) {
      const std::string t = io::format_number(v, digits);
      if (std::stod(t) == v) return t;
    }
    return io::format_number(v, 17);
  };
  std::vector<double> values = {0.0, -0.0, 1.0, 0.1, 0.3, 1e15, 3e-13, 577969288415.3314, 8e9, 1.0 / 3.0,
                                std::nextafter(1.0, 2.0), std::nextafter(1.0, 0.0), 123456.0, 1234567.0,
                                std::numeric_limits<double>::infinity()};
  for (int e = -1000; e <= 1000; ++e) values.push_back(std::ldexp(1.0, e));
  for (int i = 0; i < 64; ++i) values.push_back(5.0e11 * std::pow(2e12 / 5e11, i / 63.0));
  std::mt19937_64 rng(20261206);
  while (values.size() < 60000) {
    double v = 0.0;
    const std::uint64_t bits = rng();
    std::memcpy(&v, &bits, sizeof v);
    // (std::stod refuses a text that rounds past the normal range, as both searches would)
    if (std::isnormal(v) && std::fabs(v) > 1e-300 && std::fabs(v) < 1e300) values.push_back(v);
  }
  for (const double v : values) ASSERT_EQ(io::exact_number_text(v), by_definition(v)) << v;
  EXPECT_EQ(io::exact_number_text(1e15), "1e+15");
  EXPECT_EQ(io::exact_number_text(577969288415.3314), "577969288415.3314");
  EXPECT_EQ(io::exact_number_text(0.1), "0.1");
}

TEST(Overrides, KnobsValuesNamesAndEvalOptions) {
  const Scenario s = scenario_with(
      "    overrides:\n"
      "      chip.memory.hbm_peak_bandwidth_bytes_per_s: {choices: [3.35e12, 6.0e12]}\n"
      "      rate: {paths: [chip.matrix_engine.macs_per_cycle_per_core.fp8, "
      "chip.matrix_engine.macs_per_cycle_per_core.bf16], times: {choices: [1, 1.5]}}\n"
      "      box: {paths: [system.chips, system.power.tdp_w], choices: [[4, 700], [8, 1000]]}\n"
      "      system.interconnect.link_bandwidth_bytes_per_s: 5.0e10\n");
  const HardwareEntry& e = s.hardware[0];
  ASSERT_EQ(e.variants(), 8u);  // 2 x 2 x 2; the fixed link bandwidth is no knob
  // Variant 7: every knob at its second value (the first knob fastest).
  const SystemVariant v = e.variant(7).system;
  EXPECT_EQ(v.name, "h#7");
  EXPECT_EQ(v.system->chip.gpu.hbm_peak_bandwidth_bytes_per_s, 6.0e12);
  EXPECT_EQ(v.system->chip.gpu.matrix_macs_per_cycle_per_core[static_cast<std::size_t>(costmodel::Precision::fp8)],
            6144.0);  // 4096 x 1.5
  EXPECT_EQ(v.system->chip.gpu.matrix_macs_per_cycle_per_core[static_cast<std::size_t>(costmodel::Precision::bf16)],
            3072.0);  // 2048 x 1.5
  EXPECT_EQ(v.system->system.chips, 8);
  EXPECT_EQ(v.system->system.power.tdp_w, 1000.0);
  EXPECT_EQ(v.system->system.interconnect.link_bandwidth_bytes_per_s, 5.0e10);
  EXPECT_EQ(v.dp, 4);                    // fills the 8 chips at tp 2
  EXPECT_EQ(e.variant(0).system.dp, 2);  // 4 chips
  const std::string knobs = e.describe(7);
  EXPECT_NE(knobs.find("tp=2 "), std::string::npos) << knobs;
  EXPECT_NE(knobs.find("dp=4 "), std::string::npos) << knobs;
  EXPECT_NE(
      knobs.find("chip.memory.hbm_peak_bandwidth_bytes_per_s=6e+12 chip.matrix_engine.macs_per_cycle_per_core.fp8=6144 "
                 "chip.matrix_engine.macs_per_cycle_per_core.bf16=3072 system.chips=8 system.power.tdp_w=1000 "
                 "system.interconnect.link_bandwidth_bytes_per_s=5e+10"),
      std::string::npos)
      << knobs;
  const std::string args = e.eval_arguments(7);
  EXPECT_NE(args.find(" --override chip.memory.hbm_peak_bandwidth_bytes_per_s=6e+12 --override "
                      "chip.matrix_engine.macs_per_cycle_per_core.fp8=6144"),
            std::string::npos)
      << args;
  // `dse eval --override` reads the same chip and system.
  const io::SystemFile again = io::load_system_with_overrides(
      io::resolve_system_path("dgx-h100-8"), {{"chip.memory.hbm_peak_bandwidth_bytes_per_s", 6.0e12},
                                              {"chip.matrix_engine.macs_per_cycle_per_core.fp8", 6144},
                                              {"chip.matrix_engine.macs_per_cycle_per_core.bf16", 3072},
                                              {"system.chips", 8},
                                              {"system.power.tdp_w", 1000},
                                              {"system.interconnect.link_bandwidth_bytes_per_s", 5.0e10}});
  EXPECT_EQ(again.chip.gpu.hbm_peak_bandwidth_bytes_per_s, v.system->chip.gpu.hbm_peak_bandwidth_bytes_per_s);
  EXPECT_EQ(again.system.price.chip_usd, v.system->system.price.chip_usd);
  EXPECT_EQ(again.system.chips, 8);
}

TEST(Overrides, PathsAndValuesAreCheckedAtTheScenariosPlace) {
  // A path the files lack names the closest one, at the key's line and column.
  EXPECT_EQ(
      error_of("    overrides:\n      chip.memory.hbm_byte: 1.0e11\n"),
      "o.yaml:8:7: hardware[0].overrides.chip.memory.hbm_byte: expected chip.<keys> or system.<keys>, a number of "
      "h100-sxm5.yaml, its platform sidecar or dgx-h100-8.yaml, did you mean 'chip.memory.hbm_bytes'? (got "
      "\"chip.memory.hbm_byte\")");
  // A value the chip file refuses: its reader's own check, reported at the value.
  EXPECT_EQ(error_of("    overrides:\n      chip.memory.hbm_bytes: {choices: [8.0e10, -1]}\n"),
            "o.yaml:8:30: hardware[0].overrides.chip.memory.hbm_bytes: h100-sxm5.yaml refuses it: memory.hbm_bytes: "
            "expected a number > 0 (got chip.memory.hbm_bytes=-1)");
  // ... and one the system file refuses.
  EXPECT_NE(error_of("    overrides:\n      system.interconnect.achievable_fraction: 1.5\n")
                .find("hardware[0].overrides.system.interconnect.achievable_fraction: dgx-h100-8.yaml refuses it: "
                      "interconnect.achievable_fraction: expected a number in (0, 1]"),
            std::string::npos);
  // A figure that is not a number (the chip's kind) is no path.
  EXPECT_NE(error_of("    overrides:\n      chip.kind: 1\n").find("expected chip.<keys> or system.<keys>"),
            std::string::npos);
  // A path moved by two knobs.
  EXPECT_NE(error_of("    overrides:\n      chip.clock_hz: 1.5e9\n      g: {paths: [chip.clock_hz], times: 2}\n")
                .find("expected a path no other override moves (chip.clock_hz moves it)"),
            std::string::npos);
  // A group's list of values per path must have one per path.
  EXPECT_NE(error_of("    overrides:\n      g: {paths: [chip.clock_hz, system.chips], choices: [[1.5e9]]}\n")
                .find("expected a list of 2 numbers (one per path)"),
            std::string::npos);
  // Every chip count the overrides give must take the degrees: tp 2 x pp 1 does not divide 3 chips.
  EXPECT_NE(error_of("    overrides:\n      system.chips: {choices: [4, 3]}\n")
                .find("expected tp x cp x pp to divide the chip count (the 3 chips of system dgx-h100-8)"),
            std::string::npos);
}

TEST(Overrides, ListElementsByNameOrPosition) {
  const YAML::Node tree = YAML::Load(
      "levels:\n  - {name: dram, bandwidth: 8}\n  - {name: shared_glb, capacity_words: 65536}\n"
      "tiles: [[256, 128, 64], [128, 64, 32]]\n");
  EXPECT_EQ(io::number_at(tree, "levels.shared_glb.capacity_words"), 65536.0);
  EXPECT_EQ(io::number_at(tree, "levels.dram.bandwidth"), 8.0);
  EXPECT_EQ(io::number_at(tree, "levels.1.capacity_words"), 65536.0);
  EXPECT_EQ(io::number_at(tree, "tiles.1.2"), 32.0);
  EXPECT_FALSE(io::number_at(tree, "levels.sram.capacity_words").has_value());
  EXPECT_FALSE(io::number_at(tree, "levels.dram.name").has_value());  // a name, not a number
}

// Every figure a record stores (names and numbers).
void expect_same_record(const PointRecord& a, const PointRecord& b) {
  const double PointRecord::*fields[] = {&PointRecord::throughput_samples_per_s,
                                         &PointRecord::latency_s,
                                         &PointRecord::energy_per_sample_j,
                                         &PointRecord::engineering_risk,
                                         &PointRecord::flops,
                                         &PointRecord::dram_bytes,
                                         &PointRecord::memory_bytes,
                                         &PointRecord::p99_latency_s,
                                         &PointRecord::ttft_p99_s,
                                         &PointRecord::tpot_p99_s,
                                         &PointRecord::power_w,
                                         &PointRecord::area_mm2,
                                         &PointRecord::cost_usd,
                                         &PointRecord::cost_per_hour_usd,
                                         &PointRecord::ttft_p50_s,
                                         &PointRecord::ttft_p90_s,
                                         &PointRecord::tpot_p50_s,
                                         &PointRecord::tpot_p90_s,
                                         &PointRecord::e2e_p50_s,
                                         &PointRecord::accelerator_power_w,
                                         &PointRecord::mfu};
  for (const auto f : fields) {
    // Bit for bit: the same double, not merely close.
    EXPECT_EQ(std::memcmp(&(a.*f), &(b.*f), sizeof(double)), 0) << a.*f << " vs " << b.*f;
  }
  EXPECT_EQ(a.feasible, b.feasible);
  EXPECT_STREQ(a.bottleneck, b.bottleneck);
  EXPECT_STREQ(a.hardware, b.hardware);
}

TEST(Overrides, AnOverrideThatChangesNothingGivesThePresetsFiguresBitForBit) {
  // The H100's and the DGX H100's own values (scenarios/hardware/h100-sxm5.yaml, its sidecar,
  // scenarios/systems/dgx-h100-8.yaml), written as a scenario would write them.
  const Scenario plain = scenario_with("");
  const Scenario same = scenario_with(
      "    overrides:\n"
      "      chip.memory.hbm_peak_bandwidth_bytes_per_s: 3.35e12\n"
      "      chip.memory.hbm_bytes: 85899345920\n"
      "      r: {paths: [chip.matrix_engine.macs_per_cycle_per_core.fp8, chip.area.die_area_mm2], times: 1}\n"
      "      system.interconnect.link_bandwidth_bytes_per_s: 2.5e10\n"
      "      system.chips: 8\n"
      "      chip.energy.hbm_byte_j: 1.186e-10\n");
  const search::DesignSpace a = design_space(plain);
  const search::DesignSpace b = design_space(same);
  ASSERT_EQ(a.size(), b.size());
  for (std::uint64_t i = 0; i < a.size(); ++i) {
    const PointRecord ra = evaluate_point(plain, a, i);
    const PointRecord rb = evaluate_point(same, b, i);
    ASSERT_EQ(ra.feasible, 1);
    expect_same_record(ra, rb);
  }
  // The price is the file's, exactly: 8 x (30,678 + 10,000) USD (scenarios/systems/dgx-h100-8.yaml).
  EXPECT_EQ(same.hardware[0].variant(0).system.system->system.price.chip_usd, 30678.0);
  EXPECT_EQ(evaluate_point(same, b, 0).cost_usd, 325424.0);
  // And the area is the system's 8 chips x 814 mm2 (scenarios/hardware/platform/h100-sxm5.yaml).
  EXPECT_EQ(evaluate_point(same, b, 0).area_mm2, 6512.0);
}

TEST(Overrides, MoreHbmBandwidthNeverLowersDecodeThroughput) {
  // A decode step streams the weights and the KV cache from HBM: with every other figure fixed,
  // a faster HBM can only shorten it at the nominal clock (or leave it, where compute or links
  // bind). Swept from 0.5 to 12 TB/s for two models, four TP degrees, four batches and two
  // precisions. Under the TDP cap the step runs at the clock the cap allows; there a faster HBM
  // lowers the throughput only where the kernels chosen at it (each the fastest at the nominal
  // clock) move more bytes, so that the step's dynamic energy rises and the capped clock falls:
  // checked as such (one case of this sweep, Llama-3-70B FP8 tp 2 batch 256 at 11.4 TB/s:
  // -0.044%, docs/known-gaps.md).
  std::vector<double> bandwidths;
  for (double bw = 0.5e12; bw <= 12.0e12; bw *= 1.25) bandwidths.push_back(bw);
  const std::string file = io::resolve_system_path("dgx-h100-8");
  std::vector<io::SystemFile> systems;
  for (const double bw : bandwidths)
    systems.push_back(io::load_system_with_overrides(file, {{"chip.memory.hbm_peak_bandwidth_bytes_per_s", bw}}));
  int checked = 0;
  int capped_drops = 0;
  for (const char* model : {"llama3-8b", "llama3-70b"}) {
    const auto spec = io::resolve_workload(model);
    for (const int tp : {1, 2, 4, 8}) {
      for (const std::int64_t batch : {1, 8, 64, 256}) {
        for (const auto precision : {costmodel::workload::Precision::bf16, costmodel::workload::Precision::fp8}) {
          double nominal_before = 0.0;
          double capped_before = 0.0;
          double energy_before = 0.0;
          for (std::size_t k = 0; k < systems.size(); ++k) {
            pf::SystemRequest req;
            req.spec = spec;
            req.phase.phase = costmodel::workload::Phase::decode;
            req.phase.batch = batch;
            req.phase.seq = 1;
            req.phase.context = 2048;
            req.phase.precision = precision;
            req.degrees = {tp, 1, 1, 1, 1};
            req.serving.enabled = false;
            const pf::SystemEval e = pf::evaluate_system(systems[k].chip, systems[k].system, req);
            if (!e.feasible || !e.chip.fits_memory) continue;
            const std::string at = std::string(model) + " tp " + std::to_string(tp) + " batch " +
                                   std::to_string(batch) + " at " + std::to_string(bandwidths[k]) + " B/s";
            const double nominal = e.tokens_per_s * e.step_latency_s / e.unthrottled_step_latency_s;
            EXPECT_GE(nominal, nominal_before) << at;
            if (e.tokens_per_s < capped_before) {
              ++capped_drops;
              EXPECT_TRUE(e.power.throttled) << at;
              EXPECT_GT(e.chip.totals.dynamic_energy_j, energy_before) << at;
            }
            nominal_before = nominal;
            capped_before = e.tokens_per_s;
            energy_before = e.chip.totals.dynamic_energy_j;
            ++checked;
          }
        }
      }
    }
  }
  EXPECT_EQ(checked, 840);     // the steps that fit in memory (120 of the 960 do not)
  EXPECT_LE(capped_drops, 1);  // the sweep's one case above; a new one is a change to look at
}

}  // namespace
}  // namespace dse
