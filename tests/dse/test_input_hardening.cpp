// The readers under hostile input (issue 58): a key given twice and a second YAML document
// (yaml-cpp kept the first silently), files that are not text (HDF5, binary), FIFOs and devices
// (a FIFO blocked the reader forever), values echoed whole in messages (a password file named
// as a system file was printed whole), control bytes and invalid UTF-8 in names.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>

#include "dse/error.hpp"
#include "dse/io/scalesim_io.hpp"
#include "dse/io/scenario.hpp"
#include "dse/io/workload_reader.hpp"
#include "dse/io/yaml_reader.hpp"
#include "tests/scratch.hpp"

namespace dse {
namespace {

// The message of the ConfigError that parsing `text` throws, or "" when it parses.
std::string error_of(const std::string& text) {
  try {
    (void)parse_scenario(text, "t.yaml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

const std::string kValid =
    "name: t\n"
    "hardware:\n"
    "  - {name: hw, peak_flops_per_s: 1.0e12, memory_bandwidth_bytes_per_s: 1.0e12, memory_capacity_bytes: 1.0e9,\n"
    "     kernel_overhead_s: 0, energy_per_flop_j: 1.0e-12, energy_per_byte_j: 1.0e-11, static_power_w: 1,\n"
    "     engineering_risk: 0.1}\n"
    "workloads:\n"
    "  - {name: w, layers: [{name: fc, kind: gemm, rows_per_sample: 1, n: 64, k: 64}]}\n"
    "batch_sizes: [1]\n";

TEST(YamlHardening, ValidBaselineParses) { EXPECT_EQ(error_of(kValid), ""); }

// Issue 58 item 12: `seed: 1` then `seed: 2` read as 1 (the first value won silently).
TEST(YamlHardening, DuplicateKeysAreRefusedWithBothLines) {
  EXPECT_EQ(error_of("seed: 1\n" + kValid + "seed: 2\n"),
            "t.yaml:10:1: seed: expected each key once in a mapping (the first is on line 1) (got \"seed\" again)");
  // Nested: the key path names the entry (line 4, column 9 is the second `name` of the hardware entry).
  const std::string nested = "name: t\nhardware:\n  - name: a\n    name: b\n";
  EXPECT_EQ(error_of(nested),
            "t.yaml:4:5: hardware[0].name: expected each key once in a mapping (the first is on line 3) (got \"name\" "
            "again)");
  // In a flow mapping inside a sequence inside a mapping.
  EXPECT_NE(error_of("name: t\nx: {a: [1, {c: 1, c: 2}]}\n").find("x.a[1].c: expected each key once"),
            std::string::npos);
  // The same key in two different mappings is fine.
  EXPECT_EQ(error_of(kValid).find("each key once"), std::string::npos);
}

// Issue 58 item 12: a second document was ignored.
TEST(YamlHardening, ASecondDocumentIsRefused) {
  EXPECT_EQ(error_of(kValid + "---\nname: other\n"), "t.yaml:9:1: (yaml): expected one YAML document (got a second document)");
  EXPECT_NE(error_of(kValid + "---\n").find("expected one YAML document"), std::string::npos);
  // An explicit start marker on the one document, and an end marker, are fine.
  EXPECT_EQ(error_of("---\n" + kValid), "");
  EXPECT_EQ(error_of(kValid + "...\n"), "");
}

// Aliases are events to the duplicate-key pass, never expanded: a billion-laughs document is
// refused by the scenario reader as before (unknown key), and quickly.
TEST(YamlHardening, AliasesAreNotExpanded) {
  std::string laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  for (char c = 'b'; c <= 'k'; ++c) {
    const char prev = static_cast<char>(c - 1);
    laughs += std::string(1, c) + ": &" + c + " [*" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev +
              ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + "]\n";
  }
  EXPECT_NE(error_of(laughs).find("unknown key"), std::string::npos);
}

// Issue 58 item 17: the "(got ...)" part quoted values whole.
TEST(MessageHardening, ValuesAreQuotedAsShortEscapedExcerpts) {
  EXPECT_EQ(excerpt("abc"), "\"abc\"");
  EXPECT_EQ(excerpt(std::string(100, 'x')), "\"" + std::string(60, 'x') + "...\" (100 bytes)");
  EXPECT_EQ(printable("a\x1b[31mb\nc"), "a\\x1b[31mb\\x0ac");
  EXPECT_EQ(printable("\xff\xc3"), "\\xff\\xc3");                 // not UTF-8
  EXPECT_EQ(printable("\xc2\x9b" "x"), "\\xc2\\x9bx");              // C1 control (CSI)
  EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x82\xac"), "caf\xc3\xa9 \xe2\x82\xac");  // UTF-8 kept
  // A cut never splits a character: 59 bytes of 'x' then a 2-byte character.
  EXPECT_EQ(excerpt(std::string(59, 'x') + "\xc3\xa9" + std::string(10, 'y')),
            "\"" + std::string(59, 'x') + "...\" (71 bytes)");
  // A 5,000-byte kind in a scenario: the message holds 60 bytes of it.
  std::string text = kValid;
  text.replace(text.find("{name: hw,"), 10, "{name: hw, kind: " + std::string(5000, 'k') + ",");
  const std::string e = error_of(text);
  EXPECT_NE(e.find("(got \"" + std::string(60, 'k') + "...\" (5000 bytes))"), std::string::npos) << e;
  EXPECT_LT(e.size(), 300u);
}

// Issue 58 item 17: a system file that is not YAML (a password file) was printed whole. Lines of
// the form `user:$6$hash:...:::` read as mapping keys, a one-line text as a scalar: neither is quoted.
TEST(MessageHardening, AFileThatIsNotYamlMappingsIsNotQuoted) {
  const std::string shadow = test::write_scratch_file(
      "shadow_like", "root:$6$saltsalt$0123456789abcdefghijklmnop:19000:0:99999:7:::\n"
                     "daemon:$6$pepperpe$qrstuvwxyz0123456789abcd:19000:0:99999:7:::\n");
  const std::string passwd = test::write_scratch_file("passwd_like", "root:x:0:0:root:/root:/bin/bash saltsalt\n");
  for (const std::string& sys : {shadow, passwd}) {
    const std::string e = error_of("name: t\nhardware: [{name: s, kind: system, system: " + sys +
                                   "}]\nworkloads: [{name: w, model: llama2-7b}]\nbatch_sizes: [1]\n");
    EXPECT_NE(e, "");
    EXPECT_EQ(e.find("saltsalt"), std::string::npos) << e;
    EXPECT_EQ(e.find("$6$"), std::string::npos) << e;
  }
  EXPECT_NE(error_of("name: t\nhardware: [{name: s, kind: system, system: " + shadow + "}]\n")
                .find("unknown key, expected one of the documented keys (got a key of 61 bytes, not shown)"),
            std::string::npos);
  EXPECT_NE(error_of("name: t\nhardware: [{name: s, kind: system, system: " + passwd + "}]\n")
                .find("(root): expected a mapping (got text of 40 bytes, not shown)"),
            std::string::npos);
  // The same for a key given twice.
  EXPECT_NE(error_of("x: 1\n\"a b\": 1\n\"a b\": 2\n").find("(got a key of 3 bytes, not shown again)"), std::string::npos);
}

// Issue 58 items 13 (the parse-time part) and 17: names with control bytes or invalid UTF-8.
TEST(MessageHardening, NamesWithControlBytesOrInvalidUtf8AreRefused) {
  auto with_name = [&](const std::string& yaml_name) {
    std::string t = kValid;
    t.replace(t.find("{name: hw,"), 10, "{name: " + yaml_name + ",");
    return error_of(t);
  };
  EXPECT_EQ(with_name("\"hw-\xc3\xa9\""), "");  // UTF-8 is fine
  EXPECT_NE(with_name("\"hw\\e[31m\"").find("hardware[0].name: expected UTF-8 text without control characters (got "
                                            "\"hw\\x1b[31m\")"),
            std::string::npos);
  EXPECT_NE(with_name("\"hw\\0evil\"").find("expected UTF-8 text without control"), std::string::npos);
  EXPECT_NE(with_name("\"a\\tb\"").find("expected a name on one line"), std::string::npos);
  EXPECT_NE(with_name("\"\xff\xfe\"").find("(got \"\\xff\\xfe\")"), std::string::npos);
  // The scenario's own name and a workload's name too.
  EXPECT_NE(error_of("name: \"t\\x07\"\n" + kValid.substr(kValid.find('\n') + 1)).find("name: expected UTF-8"),
            std::string::npos);
}

// Issue 58 items 8 and 17: a FIFO named as a workload blocked forever; an HDF5 file or binary
// data reached the YAML parser, whose message printed its bytes.
TEST(FileHardening, FifosDevicesAndBinaryFilesAreRefusedBeforeParsing) {
  const std::string fifo = test::scratch_file("model.fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  try {
    (void)io::read_text_file(fifo, "workload");
    FAIL() << "a FIFO was read";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), fifo + ":1:1: workload: expected a regular file (got a FIFO)");
  }
  try {
    (void)io::read_text_file("/dev/null", "scenario");
    FAIL() << "a device was read";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("expected a regular file (got a character device)"), std::string::npos);
  }
  const std::string h5 = test::write_scratch_file("result.h5", std::string("\x89HDF\r\n\x1a\n", 8) + "rest");
  EXPECT_THROW((void)io::read_text_file(h5, "scenario"), ConfigError);
  std::string onnx("\x08\x07\x12\x04test", 8);
  onnx += std::string("\0\0\x01", 3);
  const std::string bin = test::write_scratch_file("model.onnx", onnx);
  try {
    (void)io::read_text_file(bin, "workload");
    FAIL() << "binary data was read";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), bin + ":1:1: workload: expected a text file (got binary data (an ONNX model?))");
  }
}

// Issue 58 item 16: the limit on text files is 16 MiB, stated in the message.
TEST(FileHardening, TextFilesPastTheLimitAreRefused) {
  const std::string big = test::write_scratch_file("big.yaml", std::string(io::kMaxTextFileBytes + 1, '#'));
  try {
    (void)io::read_text_file(big, "scenario");
    FAIL() << "a 16 MiB + 1 file was read";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("expected a file of at most 16 MiB (got 16777217 bytes)"), std::string::npos);
  }
}

}  // namespace
}  // namespace dse

namespace dse {
namespace {

// A valid systolic scenario whose hardware line `key: value` is replaced (or added) by `line`.
std::string systolic(const std::string& key, const std::string& value) {
  std::string hw =
      "  - name: sa\n    kind: systolic\n    array_rows: 32\n    array_cols: 32\n    dataflow: ws\n"
      "    ifmap_sram_kib: 64\n    filter_sram_kib: 64\n    ofmap_sram_kib: 64\n    dram_words_per_cycle: 8\n"
      "    clock_hz: 1.0e9\n    energy_per_mac_j: 0.06e-12\n    energy_per_sram_word_j: 0.31e-12\n"
      "    energy_per_dram_word_j: 40.0e-12\n    static_power_w: 2.0\n    memory_capacity_bytes: 16.0e9\n"
      "    area_per_pe_mm2: 0.0015\n    area_per_sram_kib_mm2: 0.0025\n    fixed_area_mm2: 10.0\n"
      "    engineering_risk: 0.3\n";
  const auto at = hw.find("    " + key + ":");
  const std::string line = "    " + key + ": " + value + "\n";
  if (at == std::string::npos) {
    hw += line;
  } else {
    hw.replace(at, hw.find('\n', at) + 1 - at, line);
  }
  return "name: t\nhardware:\n" + hw +
         "workloads:\n  - {name: w, layers: [{name: fc, kind: gemm, rows_per_sample: 1, n: 64, k: 64}]}\n"
         "batch_sizes: [1]\n";
}

TEST(NumericHardening, SystolicBaselineParsesAndItsAreaIsAsWritten) {
  const Scenario s = parse_scenario(systolic("word_bytes", "1"), "t.yaml");
  // 10 + 32 x 32 x 0.0015 + (64 + 64 + 64) x 0.0025 = 10 + 1.536 + 0.48 = 12.016 mm2.
  EXPECT_NEAR(s.hardware[0].variant(0).area_mm2(), 12.016, 1e-12);
}

// Issue 58 item 5: array_rows 0.5 was truncated to 0 and divided by (SIGFPE); item 9: 1e18 rows
// evaluated as another array, SRAMs of 1e16 KiB gave an area of -2.25e13 mm2 that passed budgets.
TEST(NumericHardening, SystolicFiguresMustBeWholeBoundedAndTheirAreaFinite) {
  for (const char* v : {"0.5", "1e18", "1048577", "{choices: [32, 0.5]}", "{linear: [1, 2, 3]}"}) {
    EXPECT_NE(error_of(systolic("array_rows", v)).find("array_rows: expected a whole number from 1 to 1048576"),
              std::string::npos)
        << v;
  }
  EXPECT_EQ(error_of(systolic("array_cols", "1048576")), "");  // 2^20, the largest side
  EXPECT_NE(error_of(systolic("dram_words_per_cycle", "0.5")).find("expected a whole number"), std::string::npos);
  EXPECT_NE(error_of(systolic("word_bytes", "1.5")).find("word_bytes: expected a whole number from 1 to 16"),
            std::string::npos);
  EXPECT_NE(error_of(systolic("word_bytes", "32")).find("from 1 to 16"), std::string::npos);
  for (const char* v : {"1e16", "8796093022209", "0.0001"}) {  // past 2^43 KiB, or under one byte
    EXPECT_NE(error_of(systolic("ifmap_sram_kib", v)).find("ifmap_sram_kib: expected from 1/1024 KiB"),
              std::string::npos)
        << v;
  }
  EXPECT_EQ(error_of(systolic("ofmap_sram_kib", "8796093022208")), "");  // 2^43 KiB is allowed
  // Each figure finite, their total not: 1e305 mm2 per PE x 2^40 PEs.
  std::string big = systolic("area_per_pe_mm2", "1e305");
  big.replace(big.find("array_rows: 32"), 14, "array_rows: 1048576");
  big.replace(big.find("array_cols: 32"), 14, "array_cols: 1048576");
  EXPECT_NE(error_of(big).find("area_per_pe_mm2: expected area figures whose total over the largest array and SRAMs "
                               "is finite"),
            std::string::npos)
      << error_of(big);
}

// Issue 58 item 9, the SCALE-Sim side: three SRAMs of int64_max / 1024 KiB each passed, and their
// sum in bytes wrapped.
TEST(NumericHardening, ScalesimSramsAreBoundedSoThatTheirSumFits) {
  const std::string cfg = io::read_text_file(std::string(DSE_ORACLES_DIR) + "/scalesim/s_gemm_32x32_ws.cfg", "cfg");
  auto with = [&](const std::string& value) {
    std::string t = cfg;
    const auto at = t.find("IfmapSramSzkB");
    return t.substr(0, at) + "IfmapSramSzkB: " + value + t.substr(t.find('\n', at));
  };
  EXPECT_NO_THROW((void)io::parse_scalesim_config(with("8796093022208"), "c.cfg"));  // 2^43
  EXPECT_THROW((void)io::parse_scalesim_config(with("8796093022209"), "c.cfg"), ConfigError);
  EXPECT_THROW((void)io::parse_scalesim_config(with("9007199254740991"), "c.cfg"), ConfigError);
}

// Issue 58 item 18: `repeat: 1e9` allocated 12.6 GB before a bad_alloc (one pipeline work item
// per repeated layer); the same for a transformer's layers.
TEST(NumericHardening, LayerCountsAreBounded) {
  std::string explicit_w = io::read_text_file(std::string(DSE_SOURCE_DIR) + "/scenarios/workloads/tiny-explicit.yaml", "w");
  const auto at = explicit_w.find("repeat: 4");
  ASSERT_NE(at, std::string::npos);
  EXPECT_NO_THROW((void)io::parse_workload_text(explicit_w, "w.yaml"));
  explicit_w.replace(at, 9, "repeat: 100001");
  try {
    (void)io::parse_workload_text(explicit_w, "w.yaml");
    FAIL() << "repeat 100001 was read";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("blocks[1].repeat: expected at most 100000 layers"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW((void)io::parse_workload_text("builder: decoder\nname: d\nhidden: 64\nlayers: 1000000000\nheads: 4\n"
                                             "ffn_hidden: 128\nvocab: 100\n",
                                             "w.yaml"),
               ConfigError);
}

// Served models: counts held in int by the serving simulation wrapped past 2^31 - 1.
TEST(NumericHardening, ServedCountsAreBounded) {
  const std::string base = "name: s\nhardware: [{name: s, kind: system, system: dgx-a100-8}]\n";
  EXPECT_EQ(error_of(base + "workloads: [{name: w, model: llama2-7b, requests: 1000000}]\nbatch_sizes: [1]\n"), "");
  EXPECT_NE(error_of(base + "workloads: [{name: w, model: llama2-7b, requests: 1000001}]\nbatch_sizes: [1]\n")
                .find("requests: expected at most 1000000"),
            std::string::npos);
  EXPECT_NE(error_of(base + "workloads: [{name: w, model: llama2-7b, prompt_tokens: 2147483648}]\nbatch_sizes: [1]\n")
                .find("prompt_tokens: expected an integer from 1 to 2147483647"),
            std::string::npos);
  EXPECT_NE(error_of(base + "workloads: [{name: w, model: llama2-7b}]\nbatch_sizes: [2147483648]\n")
                .find("batch_sizes[0]: expected at most 2147483647 with a model workload"),
            std::string::npos);
}

}  // namespace
}  // namespace dse

namespace dse {
namespace {

// Integers the model holds in an int: a bytes_per_element of 2^32 + 1 was cast to 1 and passed the
// "at most 16" check; chips, links, dims past 2^31 wrapped; NSGA-II's population x generations
// past 2^64.
TEST(NumericHardening, IntegersHeldInAnIntAreRefusedPastIntMax) {
  std::string t = kValid;
  t.replace(t.find("k: 64}"), 6, "k: 64, bytes_per_element: 4294967297}");
  EXPECT_NE(error_of(t).find("bytes_per_element: expected an integer from 1 to 2147483647 (got 4294967297)"),
            std::string::npos)
      << error_of(t);
  EXPECT_NE(error_of(kValid + "search: {sampler: nsga2, population: 4, generations: 2147483648}\n")
                .find("search.generations: expected an integer from 1 to 2147483647"),
            std::string::npos);
  std::string sys = io::read_text_file(std::string(DSE_SOURCE_DIR) + "/scenarios/systems/dgx-a100-8.yaml", "s");
  const auto at = sys.find("chips: 8");
  ASSERT_NE(at, std::string::npos);
  sys.replace(at, 8, "chips: 4294967304");
  const std::string path = test::write_scratch_file("chips.yaml", sys);
  EXPECT_NE(error_of("name: t\nhardware: [{name: s, kind: system, system: " + path +
                     "}]\nworkloads: [{name: w, model: llama2-7b}]\nbatch_sizes: [1]\n")
                .find("chips: expected an integer from 1 to 2147483647"),
            std::string::npos);
}

}  // namespace
}  // namespace dse
