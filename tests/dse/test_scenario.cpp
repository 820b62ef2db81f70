// The scenario parser: the shipped scenario parses, and each kind of bad input
// gives the exact one-line message FILE:LINE:COL: key.path: expected (got X).
#include <gtest/gtest.h>

#include <string>

#include "dse/error.hpp"
#include "dse/io/scenario.hpp"
#include "dse/io/yaml_reader.hpp"

namespace dse {
namespace {

const std::string kBad = std::string(DSE_SOURCE_DIR) + "/tests/dse/bad/";

// The message parsing `text` (as file `name`) gives.
std::string parse_error(const std::string& text, const std::string& name) {
  try {
    (void)parse_scenario(text, name);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string error_of(const std::string& name) { return parse_error(io::read_text_file(kBad + name, "scenario"), name); }

TEST(Scenario, QuickstartParses) {
  const Scenario s = load_scenario(std::string(DSE_SOURCE_DIR) + "/scenarios/quickstart.yaml");
  EXPECT_EQ(s.name, "quickstart");
  EXPECT_EQ(s.hardware.size(), 3u);
  EXPECT_EQ(s.workloads.size(), 2u);
  EXPECT_EQ(s.batch_sizes, (std::vector<std::int64_t>{1, 8, 64, 256}));
  EXPECT_DOUBLE_EQ(s.hardware[1].variant(0).roofline.peak_flops_per_s, 312e12);
  EXPECT_EQ(s.workloads[1].layers.size(), 9u);
}

// Line 3 column 5 is the hardware entry that lacks the key (the parent's place).
TEST(ScenarioErrors, MissingKey) {
  EXPECT_EQ(error_of("missing_key.yaml"),
            "missing_key.yaml:3:5: hardware[0].peak_flops_per_s: missing required key, expected a number > 0 "
            "(got nothing)");
}

TEST(ScenarioErrors, WrongType) {
  EXPECT_EQ(error_of("wrong_type.yaml"),
            "wrong_type.yaml:4:23: hardware[0].peak_flops_per_s: expected a number (got \"fast\")");
}

TEST(ScenarioErrors, UnknownKeyWithSuggestion) {
  EXPECT_EQ(error_of("unknown_key.yaml"),
            "unknown_key.yaml:4:5: hardware[0].peak_flop_per_s: unknown key, did you mean 'peak_flops_per_s'? "
            "(got 'peak_flop_per_s')");
}

TEST(ScenarioErrors, NegativeSize) {
  EXPECT_EQ(error_of("negative_size.yaml"),
            "negative_size.yaml:6:28: hardware[0].memory_capacity_bytes: expected a number > 0 (got -8)");
}

TEST(ScenarioErrors, ZeroSize) {
  EXPECT_EQ(error_of("zero_size.yaml"), "zero_size.yaml:16:18: batch_sizes[1]: expected an integer > 0 (got 0)");
}

TEST(ScenarioErrors, YamlSyntax) {
  EXPECT_EQ(error_of("syntax_error.yaml"),
            "syntax_error.yaml:5:21: (yaml): expected valid YAML syntax (got \"end of sequence flow not found\")");
}

TEST(ScenarioErrors, MissingFile) {
  try {
    (void)load_scenario("no/such/scenario.yaml");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "no/such/scenario.yaml:1:1: scenario: expected a readable file (got \"No such file or directory\")");
  }
}

// A directory given as the scenario opens as a stream and read as an empty file ("(root): expected a
// mapping (got nothing)"); it is refused as the file it is not.
TEST(ScenarioErrors, DirectoryIsNotAReadableFile) {
  try {
    (void)load_scenario(std::string(DSE_SOURCE_DIR) + "/scenarios");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), std::string(DSE_SOURCE_DIR) +
                                         "/scenarios:1:1: scenario: expected a readable file (got \"Is a directory\")");
  }
}

TEST(ScenarioErrors, DuplicateHardwareName) {
  const std::string text = io::read_text_file(std::string(DSE_SOURCE_DIR) + "/scenarios/quickstart.yaml", "s");
  std::string dup = text;
  dup.replace(dup.find("name: inference-asic"), 20, "name: datacenter-gpu");
  try {
    (void)parse_scenario(dup, "dup.yaml");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("hardware[2].name: expected a name not used before (got \"datacenter-gpu\")"),
              std::string::npos)
        << e.what();
  }
}

// A shipped scenario (the quickstart unless named) with one edit, and the message parsing it gives.
std::string error_of_edit(const std::string& from, const std::string& to,
                          const std::string& scenario = "quickstart.yaml") {
  std::string text = io::read_text_file(std::string(DSE_SOURCE_DIR) + "/scenarios/" + scenario, "s");
  const auto at = text.find(from);
  if (at == std::string::npos) return "(edit not applied: " + from + ")";
  text.replace(at, from.size(), to);
  return parse_error(text, "edit.yaml");
}

// A repeated batch size would evaluate the same points twice under two indices (it ran).
TEST(ScenarioErrors, RepeatedBatchSize) {
  EXPECT_EQ(error_of_edit("batch_sizes: [1, 8, 64, 256]", "batch_sizes: [1, 8, 1]"),
            "edit.yaml:54:21: batch_sizes[2]: expected a batch size not listed before (got 1)");
}

// Empty sequences say so, and numbers read as written (they were "a sequence" and "-1.000000").
TEST(ScenarioErrors, EmptySequenceAndNumbersAsWritten) {
  EXPECT_EQ(error_of_edit("batch_sizes: [1, 8, 64, 256]", "batch_sizes: []"),
            "edit.yaml:54:14: batch_sizes: expected a non-empty sequence (got an empty sequence)");
  EXPECT_EQ(error_of_edit("static_power_w: 0.5", "static_power_w: -1.5"),
            "edit.yaml:15:21: hardware[0].static_power_w: expected a number >= 0 (got -1.5)");
  EXPECT_EQ(error_of_edit("engineering_risk: 0.4", "engineering_risk: 7"),
            "edit.yaml:16:23: hardware[0].engineering_risk: expected a number in [0, 1] (got 7)");
}

// A system or workload preset name that is neither a preset nor a file is reported at the scenario's
// key, with the presets it may have meant (it was "dgx-h100:1:1: system file: expected a readable file",
// and "llama3-8:1:1: workload: ...", without the scenario's place).
TEST(ScenarioErrors, UnknownPresetNamesTheNearOnesAtTheKey) {
  EXPECT_EQ(error_of_edit("system: dgx-h100-8,", "system: dgx-h100,", "llm-serving.yaml"),
            "edit.yaml:25:44: hardware[0].system: expected a preset of systems ('dse presets') or a readable file, "
            "did you mean 'dgx-h100-8'? (got \"dgx-h100\")");
  EXPECT_EQ(error_of_edit("model: llama3-8b,", "model: llama3-8,", "llm-serving.yaml"),
            "edit.yaml:41:35: workloads[1].model: expected a workload preset or file, did you mean 'llama3-8b'? "
            "(got \"llama3-8\")");
}

TEST(DidYouMean, OnlyCloseCandidates) {
  EXPECT_EQ(io::did_you_mean("batch_size", {"batch_sizes", "hardware"}), "batch_sizes");
  EXPECT_EQ(io::did_you_mean("zzz", {"batch_sizes", "hardware"}), "");
}

}  // namespace
}  // namespace dse
