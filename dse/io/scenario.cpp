#include "dse/io/scenario.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>
#include <stdexcept>
#include <string_view>

#include "dse/io/knob_values.hpp"
#include "dse/io/lengths_reader.hpp"
#include "dse/io/overrides.hpp"
#include "dse/io/scalesim_io.hpp"
#include "dse/io/workload_reader.hpp"
#include "dse/io/yaml_reader.hpp"

namespace dse {

namespace {

using io::MapReader;
using io::Place;

// A name of the scenario, a hardware entry, workload or layer: one line of UTF-8 text without
// control characters (a name reaches the terminal in the shortlist and the reports).
std::string name_at(const MapReader& m) { return io::as_name(m.node("name", "a non-empty string"), m.place("name")); }

// A figure that may be swept (dse/io/knob_values.hpp).
std::vector<double> parse_values(const YAML::Node& node, const Place& at, bool positive) {
  return io::read_knob_values(node, at, positive);
}

struct FieldDef {
  const char* key;
  bool required;
  bool positive;   // > 0 (else >= 0)
  double fallback;
};

// The figures of each kind, in storage order. Keep build_* below in step.
const std::vector<FieldDef>& roofline_fields() {
  static const std::vector<FieldDef> f = {
      {"peak_flops_per_s", true, true, 0}, {"memory_bandwidth_bytes_per_s", true, true, 0},
      {"memory_capacity_bytes", true, true, 0}, {"kernel_overhead_s", true, false, 0},
      {"energy_per_flop_j", true, false, 0}, {"energy_per_byte_j", true, false, 0},
      {"static_power_w", true, false, 0}, {"engineering_risk", true, false, 0},
      {"area_mm2", false, false, 0},
  };
  return f;
}

const std::vector<FieldDef>& systolic_fields() {
  static const std::vector<FieldDef> f = {
      {"array_rows", true, true, 0}, {"array_cols", true, true, 0},
      {"dataflow", true, false, 0},  // ws 0, os 1, is 2
      {"ifmap_sram_kib", true, true, 0}, {"filter_sram_kib", true, true, 0},
      {"ofmap_sram_kib", true, true, 0}, {"dram_words_per_cycle", true, true, 0},
      {"word_bytes", false, true, 1}, {"clock_hz", true, true, 0},
      {"energy_per_mac_j", true, false, 0}, {"energy_per_sram_word_j", true, false, 0},
      {"energy_per_dram_word_j", true, false, 0}, {"static_power_w", true, false, 0},
      {"memory_capacity_bytes", true, true, 0}, {"vector_ops_per_cycle", false, false, 0},
      {"area_per_pe_mm2", false, false, 0}, {"area_per_sram_kib_mm2", false, false, 0},
      {"fixed_area_mm2", false, false, 0}, {"engineering_risk", true, false, 0},
  };
  return f;
}

const std::vector<FieldDef>& system_fields() {
  static const std::vector<FieldDef> f = {
      {"tp", false, true, 1},
      {"precision", false, false, 0},  // bf16 0, fp16 1, fp8 2, int8 3
      {"fusion", false, false, 1},     // none 0, standard 1, aggressive 2
      {"pp", false, true, 1},
      {"dp", false, true, 0},          // 0: fill the system (chips / (tp x pp))
      {"ep", false, true, 1},
      {"batching", false, false, 0},   // continuous 0, static 1
      {"batch_timeout_s", false, false, 0},
      {"stack", false, false, 0},      // 0: the system file's; k: HardwareEntry::stacks[k - 1]
      {"attention_kernel", false, false, 0},  // native 0, flash2 1, flash1 2
      {"cp", false, true, 1},          // context parallelism (workload/spec.hpp PhaseSpec::context_parallel)
  };
  return f;
}

// Field positions in system_fields().
constexpr std::size_t kTp = 0, kPrecision = 1, kFusion = 2, kPp = 3, kDp = 4, kEp = 5, kBatching = 6,
                      kBatchTimeout = 7, kStack = 8, kAttentionKernel = 9, kCp = 10;

const std::vector<FieldDef>& fields_of(HardwareKind k) {
  switch (k) {
    case HardwareKind::roofline: return roofline_fields();
    case HardwareKind::systolic: return systolic_fields();
    case HardwareKind::system: return system_fields();
    case HardwareKind::loopnest: break;  // per entry: dse/io/scenario_chips.cpp
  }
  return roofline_fields();
}

// A categorical figure: one of `names` (stored as its position), or {choices: [...]}.
std::vector<double> parse_category(const YAML::Node& node, const Place& at, const std::vector<std::string>& names) {
  std::string expected = "expected one of";
  for (const auto& n : names) expected += " " + n;
  auto one = [&](const YAML::Node& n, const Place& p) {
    const std::string v = io::as_string(n, p);
    const auto it = std::find(names.begin(), names.end(), v);
    if (it == names.end()) io::fail(p, n, expected, excerpt(v));
    return static_cast<double>(it - names.begin());
  };
  if (!node.IsMap()) return {one(node, at)};
  const MapReader m(node, at, {"choices"});
  const YAML::Node c = m.sequence("choices");
  std::vector<double> v;
  for (std::size_t i = 0; i < c.size(); ++i) v.push_back(one(c[i], m.place("choices").item(i)));
  return v;
}

const std::vector<std::string> kPrecisions = {"bf16", "fp16", "fp8", "int8"};
const std::vector<std::string> kFusions = {"none", "standard", "aggressive"};
const std::vector<std::string> kBatchings = {"continuous", "static"};
const std::vector<std::string> kAttentionKernels = {"native", "flash2", "flash1"};

// A serving stack value: a preset of scenarios/stacks, a file or none, or {choices: [...]};
// each is read into `stacks` and its field value is its position there + 1.
std::vector<double> parse_stacks(const YAML::Node& node, const Place& at,
                                 std::vector<costmodel::system::ServingStack>& stacks) {
  auto one = [&](const YAML::Node& n, const Place& p) {
    const std::string v = io::as_string(n, p);
    if (v != "none") {
      if (const std::string why = io::unknown_preset(v, "stacks"); !why.empty()) io::fail(p, n, why, "\"" + v + "\"");
    }
    try {
      stacks.push_back(io::resolve_stack(v));
    } catch (const ConfigError&) {
      throw;
    } catch (const Error& err) {
      io::fail(p, n, "expected a serving stack preset or file", "\"" + v + "\": " + err.what());
    }
    return static_cast<double>(stacks.size());
  };
  if (!node.IsMap()) return {one(node, at)};
  const MapReader m(node, at, {"choices"});
  const YAML::Node c = m.sequence("choices");
  std::vector<double> v;
  for (std::size_t i = 0; i < c.size(); ++i) v.push_back(one(c[i], m.place("choices").item(i)));
  return v;
}

// The values a system figure takes (its knob's, or the one fixed figure).
std::vector<double> values_of(const HardwareEntry& e, std::size_t field) {
  for (const auto& k : e.knobs) {
    if (k.field == field) return k.values;
  }
  return {e.figures[field]};
}

// Parallelism degrees of a system entry: whole numbers, and every combination of
// the swept values must map onto the system's chips (tp x cp x pp x dp divides the chip
// count; ep divides tp x dp, the chips that hold experts).
void check_system_degrees(const HardwareEntry& e, const MapReader& m, const io::SystemFile& system) {
  const int chips = system.system.chips;
  const std::string of = " (the " + std::to_string(chips) + " chips of system " + system.system.name + ")";
  const auto str = [](double v) { return std::to_string(static_cast<std::int64_t>(v)); };
  for (const std::size_t f : {kTp, kPp, kDp, kEp, kCp}) {
    const char* key = system_fields()[f].key;
    for (const double v : values_of(e, f)) {
      if (f == kDp && v == 0.0 && !m.has(key)) continue;  // the default: fill the system
      if (v != std::floor(v) || v < 1.0 || v > chips) {
        io::fail(m.place(key), m.node(key), "expected whole numbers from 1 to " + std::to_string(chips) + of,
                 io::format_number(v));
      }
    }
  }
  for (const double tp : values_of(e, kTp)) {
    for (const double pp : values_of(e, kPp)) {
      for (const double cp : values_of(e, kCp)) {
        const auto used = static_cast<std::int64_t>(tp * pp * cp);
        const bool fill = !m.has("dp");
        if (chips % used != 0) {
          const char* key = m.has("cp") ? "cp" : m.has("pp") ? "pp" : "tp";
          io::fail(m.place(key), m.node(key), "expected tp x cp x pp to divide the chip count" + of,
                   "tp " + str(tp) + " x cp " + str(cp) + " x pp " + str(pp) + " = " + std::to_string(used));
        }
        for (const double dp_value : values_of(e, kDp)) {
          const std::int64_t dp = fill ? chips / used : static_cast<std::int64_t>(dp_value);
          if (chips % (used * dp) != 0) {
            io::fail(m.place("dp"), m.node("dp"), "expected tp x cp x pp x dp to divide the chip count" + of,
                     "tp " + str(tp) + " x cp " + str(cp) + " x pp " + str(pp) + " x dp " + std::to_string(dp) + " = " +
                         std::to_string(used * dp));
          }
          for (const double ep : values_of(e, kEp)) {
            if ((static_cast<std::int64_t>(tp) * dp) % static_cast<std::int64_t>(ep) != 0) {
              io::fail(m.place("ep"), m.node("ep"), "expected ep to divide tp x dp (the chips holding experts)",
                       "ep " + str(ep) + " with tp " + str(tp) + " x dp " + std::to_string(dp) + " = " +
                           std::to_string(static_cast<std::int64_t>(tp) * dp));
            }
          }
        }
      }
    }
  }
  const bool static_batching = std::ranges::any_of(values_of(e, kBatching), [](double v) { return v == 1.0; });
  if (m.has("batch_timeout_s") && !static_batching) {
    io::fail(m.place("batch_timeout_s"), m.node("batch_timeout_s"), "batch_timeout_s only with batching: static",
             "batching continuous");
  }
}

// The same for each chip count the entry's overrides give its system (system.chips).
void check_system_degrees(const HardwareEntry& e, const MapReader& m) {
  if (!e.overrides) return check_system_degrees(e, m, *e.system);
  std::set<int> seen;
  for (const auto& sys : e.overrides->systems())
    if (seen.insert(sys->system.chips).second) check_system_degrees(e, m, *sys);
}

// `overrides:` (dse/io/overrides.hpp): each knob of several values becomes a knob of the entry
// over its choices (field system_fields().size() + k holds knob k's choice).
void add_overrides(HardwareEntry& e, const MapReader& m) {
  e.overrides = io::read_overrides(m.node("overrides"), m.place("overrides"), *e.system);
  for (std::size_t k = 0; k < e.overrides->knobs().size(); ++k) {
    const io::OverrideKnob& knob = e.overrides->knobs()[k];
    e.figures.push_back(0.0);
    if (knob.values.size() < 2) continue;
    std::vector<double> choices(knob.values.size());
    for (std::size_t c = 0; c < choices.size(); ++c) choices[c] = static_cast<double>(c);
    e.knobs.push_back({"overrides." + knob.key, e.figures.size() - 1, std::move(choices)});
  }
}

// Position of `key` in a kind's field table.
std::size_t field_index(const std::vector<FieldDef>& defs, const std::string& key) {
  for (std::size_t i = 0; i < defs.size(); ++i)
    if (key == defs[i].key) return i;
  throw std::logic_error("no field " + key);
}

// The figures of a systolic entry that the simulator takes as whole numbers or multiplies in int64
// (costmodel/systolic), over every swept value: an array of 0.5 rows was truncated to 0 and divided
// by (SIGFPE), one of 1e18 rows wrapped, SRAMs past 2^53 bytes summed past int64 to a negative area
// (issue 58 items 5 and 9). The area, formed from the largest values, must be finite.
void check_systolic_figures(const HardwareEntry& e, const MapReader& m) {
  const auto& defs = systolic_fields();
  const auto values = [&](const char* key) { return values_of(e, field_index(defs, key)); };
  const auto whole = [&](const char* key, double most) {
    if (!m.has(key)) return;
    for (const double v : values(key)) {
      if (v != std::floor(v) || v < 1.0 || v > most)
        io::fail(m.place(key), m.node(key), "expected a whole number from 1 to " + io::format_number(most, 17),
                 io::format_number(v, 17));
    }
  };
  whole("array_rows", static_cast<double>(io::kMaxArraySide));
  whole("array_cols", static_cast<double>(io::kMaxArraySide));
  whole("dram_words_per_cycle", 9007199254740992.0);  // 2^53: exact in double and in int64
  whole("word_bytes", 16.0);                          // a layer's bytes_per_element is at most 16 too
  double sram_kib = 0.0;
  for (const char* key : {"ifmap_sram_kib", "filter_sram_kib", "ofmap_sram_kib"}) {
    double most = 0.0;
    for (const double v : values(key)) {
      if (v * 1024.0 < 1.0 || v > static_cast<double>(io::kMaxSramKib))
        io::fail(m.place(key), m.node(key),
                 "expected from 1/1024 KiB (one byte) to " + std::to_string(io::kMaxSramKib) + " KiB (2^53 bytes)",
                 io::format_number(v, 17));
      most = std::max(most, v);
    }
    sram_kib += most;
  }
  const auto largest = [&](const char* key) {
    const auto v = values(key);
    return *std::max_element(v.begin(), v.end());
  };
  const double pes = largest("array_rows") * largest("array_cols");
  const double area =
      largest("fixed_area_mm2") + pes * largest("area_per_pe_mm2") + sram_kib * largest("area_per_sram_kib_mm2");
  if (!std::isfinite(area)) {
    const char* key = m.has("area_per_pe_mm2") ? "area_per_pe_mm2" : m.has("area_per_sram_kib_mm2") ? "area_per_sram_kib_mm2" : "fixed_area_mm2";
    io::fail(m.place(key), m.node(key), "expected area figures whose total over the largest array and SRAMs is finite",
             "a total past 1.8e308 mm2");
  }
}

// A dataflow value: ws, os or is, or {choices: [ws, os, ...]}.
std::vector<double> parse_dataflows(const YAML::Node& node, const Place& at) {
  auto one = [](const YAML::Node& n, const Place& p) {
    const std::string v = io::as_string(n, p);
    if (v == "ws") return 0.0;
    if (v == "os") return 1.0;
    if (v == "is") return 2.0;
    io::fail(p, n, "expected ws, os or is", excerpt(v));
  };
  if (!node.IsMap()) return {one(node, at)};
  const MapReader m(node, at, {"choices"});
  const YAML::Node c = m.sequence("choices");
  std::vector<double> v;
  for (std::size_t i = 0; i < c.size(); ++i) v.push_back(one(c[i], m.place("choices").item(i)));
  return v;
}

HardwareEntry parse_hardware(const YAML::Node& node, const Place& at) {
  if (!node.IsMap()) io::fail(at, node, "expected a mapping", io::describe(node));
  HardwareEntry e;
  const YAML::Node kind_node = node["kind"];
  const std::string kind = kind_node.IsDefined() ? io::as_string(kind_node, at.child("kind")) : "roofline";
  if (kind == "loopnest") return chips::parse_loopnest_entry(node, at);
  if (kind == "roofline") {
    e.kind = HardwareKind::roofline;
  } else if (kind == "systolic") {
    e.kind = HardwareKind::systolic;
  } else if (kind == "system") {
    e.kind = HardwareKind::system;
  } else {
    io::fail(at.child("kind"), kind_node, "expected roofline, systolic, system or loopnest", excerpt(kind));
  }
  const auto& defs = fields_of(e.kind);
  std::vector<std::string> allowed = {"name", "kind"};
  if (e.kind == HardwareKind::system) allowed.insert(allowed.end(), {"system", "overrides"});
  for (const auto& f : defs) allowed.emplace_back(f.key);
  const MapReader m(node, at, allowed);
  e.name = name_at(m);
  if (e.kind == HardwareKind::system) {
    const std::string preset = io::preset_at(m, "system", "systems");
    try {
      e.system = std::make_shared<const io::SystemFile>(io::resolve_system(preset));
    } catch (const ConfigError&) {
      throw;
    } catch (const Error& err) {
      io::fail(m.place("system"), m.node("system"), "expected a system preset or file", excerpt(preset) + ": " + err.what());
    }
  }
  for (std::size_t i = 0; i < defs.size(); ++i) {
    const FieldDef& f = defs[i];
    if (!f.required && !m.has(f.key)) {
      e.figures.push_back(f.fallback);
      continue;
    }
    const YAML::Node n = m.node(f.key, f.positive ? "a number > 0" : "a number >= 0");
    const std::string key = f.key;
    std::vector<double> values = key == "dataflow"    ? parse_dataflows(n, m.place(f.key))
                                 : key == "precision" ? parse_category(n, m.place(f.key), kPrecisions)
                                 : key == "fusion"    ? parse_category(n, m.place(f.key), kFusions)
                                 : key == "batching"  ? parse_category(n, m.place(f.key), kBatchings)
                                 : key == "attention_kernel" ? parse_category(n, m.place(f.key), kAttentionKernels)
                                 : key == "stack"     ? parse_stacks(n, m.place(f.key), e.stacks)
                                                      : parse_values(n, m.place(f.key), f.positive);
    for (const double v : values) {
      const bool risk = std::string(f.key) == "engineering_risk";
      if (v < 0.0 || (risk && v > 1.0)) {
        io::fail(m.place(f.key), n, risk ? "expected a number in [0, 1]" : "expected a number >= 0",
                 io::format_number(v));
      }
    }
    e.figures.push_back(values.front());
    if (values.size() > 1) e.knobs.push_back({f.key, i, std::move(values)});
  }
  if (e.kind == HardwareKind::system && m.has("overrides")) add_overrides(e, m);
  if (e.kind == HardwareKind::system) check_system_degrees(e, m);
  if (e.kind == HardwareKind::systolic) check_systolic_figures(e, m);
  return e;
}

costmodel::RooflineHardware build_roofline(const std::string& name, const std::vector<double>& f) {
  costmodel::RooflineHardware h;
  h.name = name;
  h.peak_flops_per_s = f[0];
  h.memory_bandwidth_bytes_per_s = f[1];
  h.memory_capacity_bytes = f[2];
  h.kernel_overhead_s = f[3];
  h.energy_per_flop_j = f[4];
  h.energy_per_byte_j = f[5];
  h.static_power_w = f[6];
  h.engineering_risk = f[7];
  h.area_mm2 = f[8];
  return h;
}

costmodel::SystolicHardware build_systolic(const std::string& name, const std::vector<double>& f) {
  auto i64 = [](double v) { return static_cast<std::int64_t>(v); };
  costmodel::SystolicHardware h;
  h.name = name;
  h.array.rows = i64(f[0]);
  h.array.cols = i64(f[1]);
  h.array.dataflow = f[2] == 0 ? costmodel::Dataflow::weight_stationary
                     : f[2] == 1 ? costmodel::Dataflow::output_stationary
                                 : costmodel::Dataflow::input_stationary;
  h.array.ifmap_sram_bytes = i64(f[3] * 1024.0);
  h.array.filter_sram_bytes = i64(f[4] * 1024.0);
  h.array.ofmap_sram_bytes = i64(f[5] * 1024.0);
  h.array.bandwidth_mode = costmodel::DramBandwidthMode::limited;
  h.array.dram_words_per_cycle = std::max<std::int64_t>(1, i64(f[6]));
  h.array.word_bytes = std::max<std::int64_t>(1, i64(f[7]));
  h.clock_hz = f[8];
  h.energy_per_mac_j = f[9];
  h.energy_per_sram_word_j = f[10];
  h.energy_per_dram_word_j = f[11];
  h.static_power_w = f[12];
  h.memory_capacity_bytes = f[13];
  h.vector_ops_per_cycle = f[14];
  h.area_per_pe_mm2 = f[15];
  h.area_per_sram_kib_mm2 = f[16];
  h.fixed_area_mm2 = f[17];
  h.engineering_risk = f[18];
  return h;
}

costmodel::LayerSpec parse_layer(const YAML::Node& node, const Place& at) {
  // The kind decides which keys are allowed; read it first from a loose view.
  if (!node.IsMap()) io::fail(at, node, "expected a mapping", io::describe(node));
  const YAML::Node kind_node = node["kind"];
  if (!kind_node.IsDefined()) {
    io::fail(at.child("kind"), node, "missing required key", "nothing");
  }
  const std::string kind = io::as_string(kind_node, at.child("kind"));
  costmodel::LayerSpec l;
  if (kind == "gemm") {
    const MapReader m(node, at, {"name", "kind", "rows_per_sample", "n", "k", "bytes_per_element"});
    l.name = name_at(m);
    l.kind = costmodel::LayerKind::gemm;
    l.rows_per_sample = m.positive_integer("rows_per_sample");
    l.n = m.positive_integer("n");
    l.k = m.positive_integer("k");
    l.bytes_per_element = m.positive_int_or("bytes_per_element", 2);
  } else if (kind == "elementwise") {
    const MapReader m(node, at,
                      {"name", "kind", "elements_per_sample", "flops_per_element", "tensors_touched",
                       "bytes_per_element"});
    l.name = name_at(m);
    l.kind = costmodel::LayerKind::elementwise;
    l.elements_per_sample = m.positive_integer("elements_per_sample");
    l.flops_per_element = m.has("flops_per_element") ? m.positive("flops_per_element") : 1.0;
    l.tensors_touched = m.positive_int_or("tensors_touched", 2);
    l.bytes_per_element = m.positive_int_or("bytes_per_element", 2);
  } else {
    io::fail(at.child("kind"), kind_node, "expected one of gemm, elementwise", excerpt(kind));
  }
  if (l.bytes_per_element > 16) {
    io::fail(at.child("bytes_per_element"), node["bytes_per_element"], "expected at most 16 bytes",
             std::to_string(l.bytes_per_element));
  }
  return l;
}

// One request length: a number of tokens, or {uniform: [LOW, HIGH]} (inclusive): the nominal
// length, and the distribution when it is a range.
std::int64_t read_length(const MapReader& m, const char* key, std::int64_t fallback,
                         std::optional<costmodel::system::LengthDistribution>& dist) {
  // Held in an int by the serving simulation (costmodel/platform ServingOptions).
  if (!m.has(key) || !m.node(key).IsMap()) return m.positive_int_or(key, static_cast<int>(fallback));
  const MapReader r(m.node(key), m.place(key), {"uniform"});
  const YAML::Node u = r.sequence("uniform");
  if (u.size() != 2) io::fail(r.place("uniform"), u, "expected [LOW, HIGH]", io::describe(u));
  const std::int64_t lo = io::as_positive_integer(u[0], r.place("uniform").item(0));
  const std::int64_t hi = io::as_positive_integer(u[1], r.place("uniform").item(1));
  if (hi < lo || hi > (1 << 30))
    io::fail(r.place("uniform"), u, "expected 1 <= LOW <= HIGH <= 2^30 tokens", io::describe(u));
  dist = costmodel::system::LengthDistribution::uniform(static_cast<int>(lo), static_cast<int>(hi));
  return dist->nominal();
}

// prompt_tokens and output_tokens (numbers or ranges), or lengths_file (a histogram of both,
// dse/io/lengths_reader.hpp, relative to the scenario file).
void read_request_lengths(const MapReader& m, ModelWorkload& mw) {
  if (m.has("lengths_file")) {
    for (const char* k : {"prompt_tokens", "output_tokens"})
      if (m.has(k)) io::fail(m.place(k), m.node(k), "lengths_file gives the lengths: leave out " + std::string(k), io::describe(m.node(k)));
    const std::string given = m.string("lengths_file");
    const std::filesystem::path base = std::filesystem::path(m.place("lengths_file").file).parent_path();
    const std::filesystem::path file = std::filesystem::path(given).is_absolute() ? std::filesystem::path(given) : base / given;
    try {
      const io::LengthHistogram h = io::read_length_histogram(file.string());
      mw.prompt_lengths = h.prompt;
      mw.output_lengths = h.output;
    } catch (const ConfigError&) {
      throw;
    } catch (const Error& err) {
      io::fail(m.place("lengths_file"), m.node("lengths_file"), "expected a request-length histogram", err.what());
    }
    mw.lengths_file = file.string();
    mw.prompt_tokens = mw.prompt_lengths->nominal();
    mw.output_tokens = mw.output_lengths->nominal();
    return;
  }
  mw.prompt_tokens = read_length(m, "prompt_tokens", 1024, mw.prompt_lengths);
  mw.output_tokens = read_length(m, "output_tokens", 256, mw.output_lengths);
}

WorkloadEntry parse_workload_entry(const YAML::Node& node, const Place& at) {
  if (node.IsMap() && node["model"].IsDefined() && node["phase"].IsDefined()) return chips::parse_chip_workload(node, at);
  if (node.IsMap() && node["model"].IsDefined()) {
    const MapReader m(node, at, {"name", "model", "prompt_tokens", "output_tokens", "lengths_file", "rate_per_s",
                                 "requests", "static_kv_tokens", "prompt_bucket_tokens"});
    WorkloadEntry w;
    w.name = name_at(m);
    ModelWorkload mw;
    const std::string model = m.string("model");
    mw.model_name = model;
    if (const std::string why = io::unknown_workload(model); !why.empty())
      io::fail(m.place("model"), m.node("model"), why, excerpt(model));
    try {
      mw.spec = io::resolve_workload(model);
    } catch (const ConfigError&) {
      throw;
    } catch (const Error& err) {
      io::fail(m.place("model"), m.node("model"), "expected a workload preset or file", excerpt(model) + ": " + err.what());
    }
    // The serving simulation holds these in int (costmodel/platform ServingOptions): a larger
    // count wrapped. Requests are simulated one by one at every point.
    constexpr std::int64_t kMaxTokens = std::numeric_limits<int>::max();
    constexpr std::int64_t kMaxRequests = 1'000'000;
    const auto bounded = [&](const char* key, std::int64_t fallback, std::int64_t most) {
      const std::int64_t v = m.positive_integer_or(key, fallback);
      if (v > most) io::fail(m.place(key), m.node(key), "expected at most " + std::to_string(most), std::to_string(v));
      return v;
    };
    read_request_lengths(m, mw);
    mw.rate_per_s = m.has("rate_per_s") ? m.positive("rate_per_s") : 1.0;
    mw.requests = static_cast<int>(bounded("requests", 1000, kMaxRequests));
    mw.static_kv_tokens = bounded("static_kv_tokens", 0, kMaxTokens);
    mw.prompt_bucket_tokens = bounded("prompt_bucket_tokens", 0, kMaxTokens);
    if (mw.static_kv_tokens > 0 && mw.static_kv_tokens < mw.prompt_tokens + mw.output_tokens)
      io::fail(m.place("static_kv_tokens"), m.node("static_kv_tokens"),
               "expected at least prompt_tokens + output_tokens (" + std::to_string(mw.prompt_tokens + mw.output_tokens) + ")",
               std::to_string(mw.static_kv_tokens));
    w.model = std::move(mw);
    return w;
  }
  const MapReader m(node, at, {"name", "layers"});
  WorkloadEntry w;
  w.name = name_at(m);
  const YAML::Node layers = m.sequence("layers");
  for (std::size_t i = 0; i < layers.size(); ++i) {
    w.layers.push_back(parse_layer(layers[i], m.place("layers").item(i)));
  }
  return w;
}

const std::string& name_of(const HardwareEntry& e) { return e.name; }
const std::string& name_of(const WorkloadEntry& w) { return w.name; }

template <class T>
void require_unique_names(const std::vector<T>& items, const YAML::Node& seq, const Place& at) {
  std::set<std::string> seen;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!seen.insert(name_of(items[i])).second) {
      io::fail(at.item(i).child("name"), seq[i]["name"], "expected a name not used before",
               excerpt(name_of(items[i])));
    }
  }
}

// The island model of NSGA-II (search/nsga2.hpp): islands 1 to population; with more than one,
// the migration interval and a migration size below the smallest island (population / islands).
void parse_islands(const MapReader& m, SearchPlan& p) {
  p.islands = static_cast<std::size_t>(m.positive_int_or("islands", 1, static_cast<int>(p.population)));
  p.migration_interval = static_cast<std::size_t>(m.positive_int_or("migration_interval", 1));
  // Unset: a fifth of the smallest island (search/nsga2.hpp).
  p.migration_size = m.has("migration_size") ? static_cast<std::size_t>(m.positive_int("migration_size")) : 0;
  const std::size_t smallest = p.population / p.islands;
  if (p.islands > 1 && smallest < 2) {
    io::fail(m.place("islands"), m.node("islands"),
             "expected islands of 2 members or more (population / islands; 25 or more search well)", std::to_string(p.islands));
  }
  if (p.islands > 1 && p.migration_size >= smallest) {
    io::fail(m.place("migration_size"), m.node("migration_size"),
             "expected a migration_size below the island size, population / islands = " + std::to_string(smallest),
             std::to_string(p.migration_size));
  }
}

SearchPlan parse_search(const YAML::Node& node, const Place& at, std::uint64_t seed) {
  const MapReader m(node, at,
                    {"sampler", "samples", "population", "generations", "islands", "migration_interval",
                     "migration_size"});
  SearchPlan p;
  p.seed = seed;
  const std::string kind = m.string_or("sampler", "exhaustive");
  if (kind == "exhaustive") {
    p.sampler = SamplerKind::exhaustive;
  } else if (kind == "random") {
    p.sampler = SamplerKind::random;
    p.samples = static_cast<std::uint64_t>(m.positive_integer("samples"));
  } else if (kind == "nsga2") {
    p.sampler = SamplerKind::nsga2;
    // At most 2^31 - 1 each: the planned points, population x (generations + 1), stay below 2^62.
    p.population = static_cast<std::size_t>(m.positive_int("population"));
    p.generations = static_cast<std::size_t>(m.positive_int("generations"));
    parse_islands(m, p);
  } else {
    io::fail(at.child("sampler"), m.node("sampler"), "expected one of exhaustive, random, nsga2", excerpt(kind));
  }
  for (const char* key : {"islands", "migration_interval", "migration_size"}) {
    if (p.sampler != SamplerKind::nsga2 && m.has(key)) {
      io::fail(at.child(key), m.node(key), "expected a key of sampler: nsga2 only", "sampler: " + kind);
    }
  }
  return p;
}

}  // namespace

std::uint64_t HardwareEntry::variants() const {
  std::uint64_t n = 1;
  for (const auto& k : knobs) n *= k.values.size();
  return n;
}

SystemVariant build_system(const std::string& name, const std::vector<double>& f,
                           const std::shared_ptr<const io::SystemFile>& sys,
                           const std::vector<costmodel::system::ServingStack>& stacks) {
  namespace wl = costmodel::workload;
  SystemVariant v;
  v.name = name;
  v.system = sys;
  v.tp = static_cast<int>(f[kTp]);
  v.pp = static_cast<int>(f[kPp]);
  v.cp = static_cast<int>(f[kCp]);
  v.dp = f[kDp] > 0 ? static_cast<int>(f[kDp]) : sys->system.chips / (v.tp * v.cp * v.pp);
  v.ep = static_cast<int>(f[kEp]);
  v.batching = f[kBatching] == 1 ? Batching::static_timeout : Batching::continuous;
  v.batch_timeout_s = f[kBatchTimeout];
  static const wl::Precision precisions[] = {wl::Precision::bf16, wl::Precision::fp16, wl::Precision::fp8,
                                             wl::Precision::int8};
  v.precision = precisions[static_cast<std::size_t>(f[kPrecision])];
  static const costmodel::platform::FusionStrategy fusions[] = {costmodel::platform::FusionStrategy::none,
                                                                costmodel::platform::FusionStrategy::standard,
                                                                costmodel::platform::FusionStrategy::aggressive};
  v.fusion = fusions[static_cast<std::size_t>(f[kFusion])];
  static const costmodel::platform::AttentionKernel kernels[] = {costmodel::platform::AttentionKernel::native,
                                                                 costmodel::platform::AttentionKernel::flash2,
                                                                 costmodel::platform::AttentionKernel::flash1};
  v.attention_kernel = kernels[static_cast<std::size_t>(f[kAttentionKernel])];
  const auto stack = static_cast<std::size_t>(f[kStack]);
  v.stack = stack > 0 ? stacks[stack - 1] : sys->system.default_stack;
  return v;
}

HardwareVariant HardwareEntry::variant(std::uint64_t v) const {
  std::vector<double> f = figures;
  std::string n = name;
  if (!knobs.empty()) n += "#" + std::to_string(v);
  for (const auto& k : knobs) {
    f[k.field] = k.values[v % k.values.size()];
    v /= k.values.size();
  }
  HardwareVariant out;
  out.kind = kind;
  if (kind == HardwareKind::roofline) {
    out.roofline = build_roofline(n, f);
  } else if (kind == HardwareKind::systolic) {
    out.systolic = build_systolic(n, f);
  } else if (kind == HardwareKind::loopnest) {
    out.loopnest = chips::build_loopnest(n, f, *loopnest);
  } else {
    out.system = build_system(n, f, system_at(f), stacks);
  }
  return out;
}

std::shared_ptr<const io::SystemFile> HardwareEntry::system_at(const std::vector<double>& f) const {
  if (!overrides) return system;
  return overrides->system(override_choices(f));
}

std::vector<std::size_t> HardwareEntry::override_choices(const std::vector<double>& f) const {
  std::vector<std::size_t> choices;
  const std::size_t base = system_fields().size();
  for (std::size_t k = 0; overrides && k < overrides->knobs().size(); ++k)
    choices.push_back(static_cast<std::size_t>(f[base + k]));
  return choices;
}

namespace {

std::string figure_text(double v) { return io::exact_number_text(v); }

// A field whose value is a position in a list of names (field_value_text prints the name).
bool categorical_field(HardwareKind kind, std::string_view key) {
  if (key == "dataflow") return true;
  return kind == HardwareKind::system && (key == "precision" || key == "fusion" || key == "batching" ||
                                          key == "attention_kernel" || key == "stack");
}

// A field whose text is its value's number alone (figure_text), the same in every variant: not a
// categorical field, nor a system's dp (0 fills the system: its text depends on the other fields).
bool numeric_field(HardwareKind kind, std::string_view key) {
  return !categorical_field(kind, key) && !(kind == HardwareKind::system && key == "dp");
}

// The text of a categorical field's value (its position in the list), else the number.
std::string field_value_text(HardwareKind kind, std::string_view key, double v,
                             const std::vector<costmodel::system::ServingStack>& stacks,
                             const std::shared_ptr<const io::SystemFile>& system) {
  const auto pick = [v](const std::vector<std::string>& names) { return names[static_cast<std::size_t>(v)]; };
  if (!categorical_field(kind, key)) return figure_text(v);
  if (key == "dataflow") return pick({"ws", "os", "is"});
  if (key == "precision") return pick(kPrecisions);
  if (key == "fusion") return pick(kFusions);
  if (key == "batching") return pick(kBatchings);
  if (key == "attention_kernel") return pick(kAttentionKernels);
  return v > 0 ? stacks[static_cast<std::size_t>(v) - 1].name : system->system.default_stack.name;  // stack
}

}  // namespace

std::string HardwareEntry::describe(std::uint64_t v) const { return describe(std::span(&v, 1)).front(); }

std::vector<std::string> HardwareEntry::describe(std::span<const std::uint64_t> vs) const {
  std::vector<std::string> out;
  out.reserve(vs.size());
  const auto& defs = fields_of(kind);
  // The text of each knob value of a numeric field, made once for all the variants (65,536
  // variants of five knobs: 327,680 numbers printed where 192 values are distinct).
  std::vector<std::vector<std::string>> texts(knobs.size());
  for (std::size_t k = 0; k < knobs.size() && kind != HardwareKind::loopnest; ++k) {
    if (knobs[k].field >= defs.size() || !numeric_field(kind, defs[knobs[k].field].key)) continue;
    for (const double value : knobs[k].values) texts[k].push_back(figure_text(value));
  }
  std::vector<const std::string*> text_of(figures.size());  // a swept numeric field's text
  std::vector<double> f;                                     // one variant's figures, its storage reused
  std::vector<bool> swept;
  for (std::uint64_t v : vs) {
    f.assign(figures.begin(), figures.end());
    swept.assign(f.size(), false);
    std::fill(text_of.begin(), text_of.end(), nullptr);
    for (std::size_t k = 0; k < knobs.size(); ++k) {
      const HardwareKnob& knob = knobs[k];
      const std::size_t j = v % knob.values.size();
      f[knob.field] = knob.values[j];
      v /= knob.values.size();
      swept[knob.field] = true;
      if (!texts[k].empty()) text_of[knob.field] = &texts[k][j];
    }
    if (kind == HardwareKind::loopnest) {
      out.push_back(chips::describe_loopnest(*loopnest, f, swept));
      continue;
    }
    std::string d;
    for (std::size_t i = 0; i < defs.size(); ++i) {
      const std::string_view key = defs[i].key;
      bool show = swept[i];
      if (kind == HardwareKind::system)
        show = show || (key != "batch_timeout_s" ? true : f[kBatching] == 1.0);
      if (kind == HardwareKind::system && key == "dp" && f[i] == 0.0)  // fill the system
        f[i] = system_at(f)->system.chips / (f[kTp] * f[kCp] * f[kPp]);
      if (!show) continue;
      if (!d.empty()) d += ' ';
      d += key;
      d += '=';
      if (text_of[i] != nullptr) {
        d += *text_of[i];
      } else {
        d += field_value_text(kind, key, f[i], stacks, system_at(f));
      }
    }
    if (overrides) d += " " + overrides->describe(override_choices(f));
    out.push_back(std::move(d));
  }
  return out;
}

std::string HardwareEntry::eval_arguments(std::uint64_t v) const {
  if (kind == HardwareKind::loopnest) return chips::map_arguments(*this, v);  // dse map's
  if (kind != HardwareKind::system) return "";
  const SystemVariant s = variant(v).system;
  std::string a = "--system " + system->file + " --tp " + std::to_string(s.tp) + " --pp " + std::to_string(s.pp) +
                  " --dp " + std::to_string(s.dp) + " --ep " + std::to_string(s.ep) +
                  (s.cp > 1 ? " --cp " + std::to_string(s.cp) : std::string()) + " --precision " +
                  std::string(costmodel::workload::to_string(s.precision)) + " --fusion " +
                  std::string(costmodel::platform::to_string(s.fusion)) + " --stack " +
                  (s.stack.file.empty() ? s.stack.name : s.stack.file);
  // The fused attention kernel's generation applies where attention is fused (`dse eval` refuses
  // --attention-kernel elsewhere).
  if (s.fusion == costmodel::platform::FusionStrategy::aggressive)
    a += " --attention-kernel " + std::string(costmodel::platform::to_string(s.attention_kernel));
  if (s.batching == Batching::static_timeout)
    a += " --batching static --batch-timeout-ms " + figure_text(s.batch_timeout_s * 1e3);
  if (overrides) a += " " + overrides->eval_arguments(override_choices(figures_of(v)));
  return a;
}

std::vector<double> HardwareEntry::figures_of(std::uint64_t v) const {
  std::vector<double> f = figures;
  for (const auto& k : knobs) {
    f[k.field] = k.values[v % k.values.size()];
    v /= k.values.size();
  }
  return f;
}

std::string eval_arguments(const WorkloadEntry& w, std::uint64_t seed) {
  if (!w.model) return "";
  const ModelWorkload& m = *w.model;
  std::string a = "--workload " + m.model_name + " --phase decode --context " +
                  std::to_string(m.prompt_tokens + m.output_tokens / 2);
  if (!m.lengths_file.empty()) {
    a += " --lengths " + m.lengths_file;
  } else {
    const auto length = [](std::int64_t nominal, const std::optional<costmodel::system::LengthDistribution>& d) {
      return d ? std::to_string(d->lowest()) + "-" + std::to_string(d->highest()) : std::to_string(nominal);
    };
    a += " --prompt " + length(m.prompt_tokens, m.prompt_lengths) + " --output " + length(m.output_tokens, m.output_lengths);
  }
  if (m.static_kv_tokens > 0) a += " --static-kv-tokens " + std::to_string(m.static_kv_tokens);
  if (m.prompt_bucket_tokens > 0) a += " --prompt-bucket-tokens " + std::to_string(m.prompt_bucket_tokens);
  a += " --rate " + figure_text(m.rate_per_s) + " --requests " + std::to_string(m.requests) + " --seed " +
       std::to_string(seed);
  return a;
}

const std::string& HardwareVariant::name() const {
  switch (kind) {
    case HardwareKind::roofline: return roofline.name;
    case HardwareKind::systolic: return systolic.name;
    case HardwareKind::system: return system.name;
    case HardwareKind::loopnest: return loopnest.name;
  }
  return roofline.name;
}

double HardwareVariant::engineering_risk() const {
  switch (kind) {
    case HardwareKind::roofline: return roofline.engineering_risk;
    case HardwareKind::systolic: return systolic.engineering_risk;
    case HardwareKind::system: return 0.0;  // assessed per point (costmodel/system/risk)
    case HardwareKind::loopnest: return loopnest.engineering_risk;
  }
  return 0.0;
}

double HardwareVariant::peak_flops_per_s() const {
  switch (kind) {
    case HardwareKind::roofline: return roofline.peak_flops_per_s;
    case HardwareKind::systolic:  // one MAC (2 FLOPs) per PE per cycle
      return 2.0 * static_cast<double>(systolic.array.rows) * static_cast<double>(systolic.array.cols) *
             systolic.clock_hz;
    case HardwareKind::system: return 0.0;  // per step (SystemEval::step_mfu)
    case HardwareKind::loopnest: return loopnest.peak_flops_per_s();
  }
  return 0.0;
}

double HardwareVariant::area_mm2() const {
  switch (kind) {
    case HardwareKind::roofline: return roofline.area_mm2;
    case HardwareKind::systolic: return systolic.area_mm2();
    case HardwareKind::system:  // every chip of the system (docs/hardware-guide.md, "Area and cost")
      return static_cast<double>(system.system->system.chips) * system.system->chip.die_area_mm2;
    case HardwareKind::loopnest: return loopnest.area_mm2();
  }
  return 0.0;
}

std::uint64_t hardware_variants(const Scenario& s) {
  std::uint64_t n = 0;
  for (const auto& e : s.hardware) n += e.variants();
  return n;
}

std::pair<std::size_t, std::uint64_t> locate_hardware(const Scenario& s, std::uint64_t h) {
  for (std::size_t i = 0; i < s.hardware.size(); ++i) {
    const std::uint64_t n = s.hardware[i].variants();
    if (h < n) return {i, h};
    h -= n;
  }
  throw std::out_of_range("hardware variant out of range");
}

namespace {

Scenario parse_scenario_text(const std::string& text, const std::string& file) {
  const YAML::Node root = io::parse_yaml(text, file);
  const Place top{file, ""};
  if (!root.IsMap()) io::fail({file, "(root)"}, root, "expected a mapping", io::describe(root));
  const MapReader m(root, top, {"name", "seed", "hardware", "workloads", "batch_sizes", "search"});
  Scenario s;
  s.file = file;
  s.text = text;
  s.name = name_at(m);
  s.seed = m.unsigned_or("seed", 0);

  const YAML::Node hw = m.sequence("hardware");
  for (std::size_t i = 0; i < hw.size(); ++i) s.hardware.push_back(parse_hardware(hw[i], m.place("hardware").item(i)));
  require_unique_names(s.hardware, hw, m.place("hardware"));

  const YAML::Node wl = m.sequence("workloads");
  for (std::size_t i = 0; i < wl.size(); ++i) s.workloads.push_back(parse_workload_entry(wl[i], m.place("workloads").item(i)));
  require_unique_names(s.workloads, wl, m.place("workloads"));

  const YAML::Node bs = m.sequence("batch_sizes");
  for (std::size_t i = 0; i < bs.size(); ++i) {
    const auto b = io::as_positive_integer(bs[i], m.place("batch_sizes").item(i));
    // A repeated size would evaluate the same points twice under two indices.
    if (std::find(s.batch_sizes.begin(), s.batch_sizes.end(), b) != s.batch_sizes.end())
      io::fail(m.place("batch_sizes").item(i), bs[i], "expected a batch size not listed before", std::to_string(b));
    // A served model's batch is an int in the serving simulation (evaluate_served).
    const bool served = std::any_of(s.workloads.begin(), s.workloads.end(), [](const WorkloadEntry& w) { return w.model.has_value(); });
    if (served && b > std::numeric_limits<int>::max())
      io::fail(m.place("batch_sizes").item(i), bs[i],
               "expected at most " + std::to_string(std::numeric_limits<int>::max()) + " with a model workload",
               std::to_string(b));
    s.batch_sizes.push_back(b);
  }
  chips::build_chip_graphs(s, wl, m.place("workloads"));
  chips::share_memo(s);
  // The design space (hardware variants x workloads x batch sizes) must be indexable by a
  // signed 64-bit integer: refuse it here rather than let a count wrap.
  {
    constexpr std::uint64_t kLimit = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < s.hardware.size(); ++i) {
      std::uint64_t n = 1;
      for (const auto& k : s.hardware[i].knobs) {
        if (n > kLimit / k.values.size()) {
          io::fail(m.place("hardware").item(i), hw[i], "expected at most 2^63-1 hardware variants",
                   "more (knob " + k.key + ")");
        }
        n *= k.values.size();
      }
      if (n > kLimit - total) {
        io::fail(m.place("hardware"), hw, "expected at most 2^63-1 hardware variants in all", "more");
      }
      total += n;
    }
    const std::uint64_t other = static_cast<std::uint64_t>(s.workloads.size()) * s.batch_sizes.size();
    if (other != 0 && total > kLimit / other) {
      io::fail(top, root, "expected a design space of at most 2^63-1 points (hardware x workloads x batch sizes)",
               "more");
    }
  }
  s.search.seed = s.seed;
  if (m.has("search")) s.search = parse_search(m.node("search"), m.place("search"), s.seed);
  return s;
}

}  // namespace

Scenario parse_scenario(const std::string& text, const std::string& file) {
  io::RecordedReads reads;
  Scenario s = parse_scenario_text(text, file);
  s.inputs = reads.files();
  return s;
}

Scenario load_scenario(const std::string& path) {
  return parse_scenario(io::read_text_file(path, "scenario"), path);
}

}  // namespace dse
