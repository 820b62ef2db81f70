#include "dse/io/scenario_chips.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "costmodel/workload/presets.hpp"
#include "dse/io/knob_values.hpp"
#include "dse/io/onnx_import.hpp"
#include "dse/io/platform_reader.hpp"
#include "dse/io/scenario.hpp"
#include "dse/io/timeloop_reader.hpp"
#include "dse/io/workload_reader.hpp"

namespace dse {

namespace lp = costmodel::loopnest;
namespace mp = costmodel::mapper;
namespace lw = costmodel::lowering;
namespace wl = costmodel::workload;
using io::MapReader;
using io::Place;

costmodel::workload::PhaseSpec ChipWorkload::phase_at(std::int64_t batch) const {
  wl::PhaseSpec p = phase;
  p.batch = batch;
  return p;
}

namespace chips {

namespace {

// The mapper's evaluation budget of a point when the entry gives none: what keeps a
// ResNet-50 point's cold mapping near 50 ms on one core (bench/bench_chips.cpp).
constexpr double kDefaultMapperEvaluations = 3000;

enum class Check : std::uint8_t { non_negative, whole_non_negative, whole_positive, fraction, category };

struct ChipField {
  const char* key;
  double fallback;
  Check check;
};

// The figures of a loop-nest entry, in storage order; override knobs follow them (each a
// figure holding its choice's position). Keep build_loopnest in step.
const std::vector<ChipField>& loopnest_fields() {
  static const std::vector<ChipField> f = {
      {"objective", static_cast<double>(mp::Objective::energy), Check::category},
      {"constraints", 0, Check::category},
      {"precision_bits", 0, Check::whole_non_negative},  // 0: the first compute rate's
      {"mapper_evaluations", kDefaultMapperEvaluations, Check::whole_positive},
      {"vector_ops_per_cycle", 0, Check::non_negative},  // 0: one per compute instance
      {"vector_energy_per_op_j", 0, Check::non_negative},
      {"static_power_w", 0, Check::non_negative},
      {"memory_capacity_bytes", 0, Check::non_negative},  // 0: unbounded
      {"engineering_risk", 0, Check::fraction},
      {"process_nm", 0, Check::non_negative},     // 0: no reference area figures
      {"mac_area_mm2", -1, Check::non_negative},  // -1: process_nm's reference figure
      {"sram_area_mm2_per_kib", -1, Check::non_negative},
      {"register_area_mm2_per_kib", -1, Check::non_negative},
      {"vector_lane_area_mm2", -1, Check::non_negative},
      {"fixed_area_mm2", 0, Check::non_negative},
      {"fusion", 0, Check::category},  // none 0, epilogue 1 (LoopnestChip::fuse_epilogues)
  };
  return f;
}

constexpr std::size_t kObjective = 0, kConstraints = 1, kPrecisionBits = 2, kEvaluations = 3, kVectorOps = 4,
                      kVectorEnergy = 5, kStaticPower = 6, kCapacity = 7, kRisk = 8, kProcess = 9, kMacArea = 10,
                      kSramArea = 11, kRegisterArea = 12, kVectorArea = 13, kFixedArea = 14, kFusion = 15;
constexpr std::size_t kFirstOverride = 16;

const char* const kObjectives[] = {"latency", "energy", "edp"};  // mapper::Objective's order
const char* const kFusions[] = {"none", "epilogue"};

// fusion: none | epilogue, or {choices: [...]}.
std::vector<double> fusion_values(const YAML::Node& n, const Place& at) {
  const auto one = [](const YAML::Node& x, const Place& p) {
    const std::string s = io::as_string(x, p);
    if (s == "none") return 0.0;
    if (s == "epilogue") return 1.0;
    io::fail(p, x, "expected none or epilogue", "\"" + s + "\"");
  };
  if (!n.IsMap()) return {one(n, at)};
  const MapReader m(n, at, {"choices"});
  const YAML::Node c = m.sequence("choices");
  std::vector<double> v;
  for (std::size_t i = 0; i < c.size(); ++i) v.push_back(one(c[i], m.place("choices").item(i)));
  return v;
}

// A path given in a scenario: absolute, else relative to the scenario's folder when a file is
// there, else as given (the current folder).
std::string scenario_path(const std::string& given, const Place& at) {
  const std::filesystem::path p(given);
  if (p.is_absolute()) return given;
  std::error_code ec;
  const std::filesystem::path beside = std::filesystem::path(at.file).parent_path() / p;
  return std::filesystem::exists(beside, ec) ? beside.string() : given;
}

std::vector<double> field_values(const ChipField& f, const YAML::Node& n, const Place& at) {
  std::vector<double> v = io::read_knob_values(n, at, false);
  for (const double x : v) {
    const bool whole = x == std::floor(x) && x <= 9007199254740992.0;
    const char* expected = f.check == Check::fraction             ? "expected a number in [0, 1]"
                           : f.check == Check::whole_positive     ? "expected a whole number > 0"
                           : f.check == Check::whole_non_negative ? "expected a whole number >= 0"
                                                                  : "expected a number >= 0";
    const bool ok = x >= 0.0 && (f.check != Check::fraction || x <= 1.0) &&
                    (f.check != Check::whole_positive || (whole && x >= 1.0)) &&
                    (f.check != Check::whole_non_negative || whole);
    if (!ok) io::fail(at, n, expected, io::format_number(x));
  }
  return v;
}

// objective: energy | latency | edp, or {choices: [...]}.
std::vector<double> objective_values(const YAML::Node& n, const Place& at) {
  const auto one = [](const YAML::Node& x, const Place& p) {
    mp::Objective o{};
    const std::string s = io::as_string(x, p);
    if (!mp::parse_objective(s, o)) io::fail(p, x, "expected energy, latency or edp", "\"" + s + "\"");
    return static_cast<double>(o);
  };
  if (!n.IsMap()) return {one(n, at)};
  const MapReader m(n, at, {"choices"});
  const YAML::Node c = m.sequence("choices");
  std::vector<double> v;
  for (std::size_t i = 0; i < c.size(); ++i) v.push_back(one(c[i], m.place("choices").item(i)));
  return v;
}

// constraints: FILE | none, or {choices: [...]}: each a Timeloop v0.4 constraints file.
std::vector<double> constraint_values(const YAML::Node& n, const Place& at, LoopnestEntry& e) {
  const auto one = [&](const YAML::Node& x, const Place& p) {
    const std::string s = io::as_string(x, p);
    const std::string file = s == "none" ? "" : scenario_path(s, p);
    try {
      e.constraint_sources.push_back(
          file.empty() && e.native ? nullptr : std::make_shared<const io::TimeloopConstraintSource>(e.file, file));
    } catch (const ConfigError&) {
      throw;
    } catch (const Error& err) {
      io::fail(p, x, "expected a Timeloop v0.4 constraints file or none", "\"" + s + "\": " + err.what());
    }
    e.constraint_names.push_back(s);
    return static_cast<double>(e.constraint_names.size() - 1);
  };
  if (!n.IsMap()) return {one(n, at)};
  const MapReader m(n, at, {"choices"});
  const YAML::Node c = m.sequence("choices");
  std::vector<double> v;
  for (std::size_t i = 0; i < c.size(); ++i) v.push_back(one(c[i], m.place("choices").item(i)));
  return v;
}

// The architecture: a loop-nest preset (hardware/research, hardware) or file, native or a
// Timeloop v0.4 architecture (then `ert`).
void read_architecture(const MapReader& m, LoopnestEntry& e) {
  e.architecture = m.string("architecture");
  const std::vector<std::string> presets{"hardware/research", "hardware"};
  const std::string given = scenario_path(e.architecture, m.place("architecture"));
  if (const std::string why = io::unknown_preset(given, presets); !why.empty())
    io::fail(m.place("architecture"), m.node("architecture"), why, "\"" + e.architecture + "\"");
  e.file = io::resolve_loopnest_hardware_path(given);
  const YAML::Node probe = io::parse_yaml(io::read_text_file(e.file, "architecture"), e.file);
  e.native = probe.IsMap() && probe["loopnest_hardware"].IsDefined();
  if (e.native) {
    if (m.has("ert"))
      io::fail(m.place("ert"), m.node("ert"), "expected no ert for a native loop-nest file (its energies are in it)",
               "ert");
    e.base = io::read_loopnest_hardware(e.file);
    return;
  }
  if (!probe.IsMap() || !probe["architecture"].IsDefined())
    io::fail(m.place("architecture"), m.node("architecture"),
             "expected a loop-nest architecture (a native loopnest_hardware file or a Timeloop v0.4 architecture)",
             "\"" + e.architecture + "\"");
  if (!m.has("ert"))
    io::fail(m.place("architecture"), m.node("architecture"),
             "expected `ert:` (its Accelergy ERT) with a Timeloop architecture", "no ert");
  e.ert = scenario_path(m.string("ert"), m.place("ert"));
  e.base = io::read_timeloop_arch(e.file);
  io::read_timeloop_ert(e.ert, e.base);
}

}  // namespace

HardwareEntry parse_loopnest_entry(const YAML::Node& node, const Place& at) {
  const auto& defs = loopnest_fields();
  std::vector<std::string> allowed = {"name", "kind", "architecture", "ert", "overrides"};
  for (const auto& f : defs) allowed.emplace_back(f.key);
  const MapReader m(node, at, allowed);
  HardwareEntry h;
  h.kind = HardwareKind::loopnest;
  h.name = m.string("name");
  auto e = std::make_shared<LoopnestEntry>();
  read_architecture(m, *e);
  for (std::size_t i = 0; i < defs.size(); ++i) {
    const ChipField& f = defs[i];
    std::vector<double> values;
    if (i == kConstraints) {
      values = m.has(f.key) ? constraint_values(m.node(f.key), m.place(f.key), *e)
                            : constraint_values(YAML::Node("none"), m.place(f.key), *e);
    } else if (!m.has(f.key)) {
      values = {f.fallback};
    } else {
      values = i == kObjective ? objective_values(m.node(f.key), m.place(f.key))
               : i == kFusion  ? fusion_values(m.node(f.key), m.place(f.key))
                               : field_values(f, m.node(f.key), m.place(f.key));
    }
    h.figures.push_back(values.front());
    if (values.size() > 1) h.knobs.push_back({f.key, i, std::move(values)});
  }
  if (m.has("overrides"))
    e->overrides = io::read_loopnest_overrides(m.node("overrides"), m.place("overrides"), e->base, e->architecture);
  for (const auto& k : e->overrides) {
    const std::size_t field = h.figures.size();
    h.figures.push_back(0.0);
    if (k.values.size() > 1) {
      std::vector<double> positions;
      for (std::size_t c = 0; c < k.values.size(); ++c) positions.push_back(static_cast<double>(c));
      h.knobs.push_back({k.key, field, std::move(positions)});
    }
  }
  h.loopnest = std::move(e);
  return h;
}

lw::LoopnestChip build_loopnest(const std::string& name, const std::vector<double>& f, const LoopnestEntry& e) {
  lw::LoopnestChip c;
  c.name = name;
  std::vector<std::size_t> choices;
  for (std::size_t k = 0; k < e.overrides.size(); ++k)
    choices.push_back(static_cast<std::size_t>(f[kFirstOverride + k]));
  c.arch = e.overrides.empty() ? e.base : io::apply_loopnest_knobs(e.base, e.overrides, choices);
  c.keeps_by_role = e.native;
  c.fuse_epilogues = f[kFusion] == 1.0;
  c.mapper.objective = static_cast<mp::Objective>(static_cast<int>(f[kObjective]));
  c.mapper.heuristic_evaluations = static_cast<std::int64_t>(f[kEvaluations]);
  c.mapper.time_budget_ms = 0.0;  // never the clock: a point is the same on any machine (mapper.hpp)
  const auto& source = e.constraint_sources[static_cast<std::size_t>(f[kConstraints])];
  if (source) {
    c.constraints = [source](const lp::Architecture& a, const lp::Problem& p) { return source->bind(a, p); };
    c.constraints_id = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(source.get()));
  }
  c.operand_bits = static_cast<int>(f[kPrecisionBits]);
  c.vector = {f[kVectorOps], f[kVectorEnergy]};
  c.static_power_w = f[kStaticPower];
  c.memory_capacity_bytes = f[kCapacity];
  c.engineering_risk = f[kRisk];
  c.area = lw::reference_area_figures(f[kProcess], c.bits());
  if (f[kMacArea] >= 0.0) c.area.mac_mm2 = f[kMacArea];
  if (f[kSramArea] >= 0.0) c.area.sram_mm2_per_kib = f[kSramArea];
  if (f[kRegisterArea] >= 0.0) c.area.register_mm2_per_kib = f[kRegisterArea];
  if (f[kVectorArea] >= 0.0) c.area.vector_lane_mm2 = f[kVectorArea];
  c.area.fixed_mm2 = f[kFixedArea];
  return c;
}

std::string describe_loopnest(const LoopnestEntry& e, const std::vector<double>& f, const std::vector<bool>& swept) {
  const auto& defs = loopnest_fields();
  std::string out;
  const auto add = [&out](const std::string& kv) { out += (out.empty() ? "" : " ") + kv; };
  for (std::size_t i = 0; i < defs.size(); ++i) {
    if (!swept[i]) continue;
    const std::string v = i == kObjective     ? kObjectives[static_cast<int>(f[i])]
                          : i == kConstraints ? e.constraint_names[static_cast<std::size_t>(f[i])]
                          : i == kFusion      ? kFusions[static_cast<int>(f[i])]
                                              : io::exact_number_text(f[i]);
    add(std::string(defs[i].key) + "=" + v);
  }
  for (std::size_t k = 0; k < e.overrides.size(); ++k) {
    const std::size_t field = defs.size() + k;
    if (!swept[field]) continue;
    const auto choice = static_cast<std::size_t>(f[field]);
    if (!e.overrides[k].labels.empty()) {
      add(e.overrides[k].key + "=" + e.overrides[k].labels[choice]);
      continue;
    }
    const std::vector<double>& row = e.overrides[k].values[choice];
    std::string v;
    const bool same = std::all_of(row.begin(), row.end(), [&](double x) { return x == row.front(); });
    for (std::size_t p = 0; p < (same ? 1 : row.size()); ++p)
      v += (v.empty() ? "" : ",") + io::exact_number_text(row[p]);
    add(e.overrides[k].key + "=" + v);
  }
  return out;
}

std::string map_arguments(const HardwareEntry& h, std::uint64_t v) {
  std::vector<double> f = h.figures;
  for (const auto& k : h.knobs) {
    f[k.field] = k.values[v % k.values.size()];
    v /= k.values.size();
  }
  const LoopnestEntry& e = *h.loopnest;
  const lw::LoopnestChip c = build_loopnest(h.name, f, e);
  // A preset by its name (the same on every checkout), a file by the path read.
  const bool preset = io::resolve_loopnest_hardware_path(e.architecture) != e.architecture;
  std::string a = "--hw " + (preset ? e.architecture : e.file) + (e.ert.empty() ? std::string() : " --ert " + e.ert);
  const std::string& constraints = e.constraint_names[static_cast<std::size_t>(f[kConstraints])];
  if (constraints != "none") a += " --constraints " + constraints;
  for (std::size_t k = 0; k < e.overrides.size(); ++k) {
    const io::LoopnestKnob& knob = e.overrides[k];
    const std::vector<double>& row = knob.values[static_cast<std::size_t>(f[kFirstOverride + k])];
    for (std::size_t p = 0; p < knob.paths.size(); ++p)
      a += " --override " + knob.paths[p] + "=" + io::exact_number_text(row[p]);
  }
  return a + " --objective " + kObjectives[static_cast<int>(f[kObjective])] + " --evaluations " +
         std::to_string(c.mapper.heuristic_evaluations) + " --time-budget-ms 0 --seed " + std::to_string(c.mapper.seed);
}

namespace {

// model: a workload preset, a workload file or an ONNX model (by path, or by name in
// scenarios/workloads/).
void read_model(const MapReader& m, ChipWorkload& c) {
  c.model = m.string("model");
  if (wl::workload_preset(c.model)) {
    c.spec = *wl::workload_preset(c.model);
    return;
  }
  std::string file = scenario_path(c.model, m.place("model"));
  std::error_code ec;
  for (const char* ext : {".onnx", ".yaml"}) {
    const std::string shipped = io::scenarios_dir() + "/workloads/" + c.model + ext;
    if (!std::filesystem::exists(file, ec) && std::filesystem::exists(shipped, ec)) file = shipped;
  }
  if (!std::filesystem::exists(file, ec)) {
    const std::string why = io::unknown_workload(c.model);
    io::fail(m.place("model"), m.node("model"), why.empty() ? "expected a workload preset, file or ONNX model" : why,
             "\"" + c.model + "\"");
  }
  c.file = file;
  c.onnx = std::filesystem::path(file).extension() == ".onnx";
  if (c.onnx) return;
  try {
    c.spec = io::read_workload_file(file);
  } catch (const ConfigError&) {
    throw;
  } catch (const Error& err) {
    io::fail(m.place("model"), m.node("model"), "expected a workload file", "\"" + c.model + "\": " + err.what());
  }
}

}  // namespace

WorkloadEntry parse_chip_workload(const YAML::Node& node, const Place& at) {
  const MapReader m(node, at, {"name", "model", "phase", "seq", "context", "precision"});
  WorkloadEntry w;
  w.name = m.string("name");
  auto c = std::make_shared<ChipWorkload>();
  read_model(m, *c);
  c->phase_name = m.string("phase");
  const std::string& ph = c->phase_name;
  if (ph == "inference" || ph == "prefill") {
    c->phase.phase = wl::Phase::prefill;
  } else if (ph == "decode") {
    c->phase.phase = wl::Phase::decode;
  } else if (ph == "train") {
    c->phase.phase = wl::Phase::training;
  } else {
    io::fail(m.place("phase"), m.node("phase"), "expected inference, prefill, decode or train", "\"" + ph + "\"");
  }
  if (c->onnx && c->phase.phase != wl::Phase::prefill)
    io::fail(m.place("phase"), m.node("phase"),
             "expected inference or prefill for an ONNX model (its graph as exported)", "\"" + ph + "\"");
  c->phase.seq = m.positive_integer_or("seq", 1);
  c->phase.context = m.has("context") ? m.positive_integer("context") : 0;
  if (m.has("context") && c->phase.phase != wl::Phase::decode)
    io::fail(m.place("context"), m.node("context"),
             "expected context only with phase: decode (the tokens already cached)", "context");
  if (m.has("precision")) c->phase.precision = io::as_precision(m.node("precision"), m.place("precision"));
  w.chip = std::move(c);
  return w;
}

namespace {

std::shared_ptr<const wl::OperatorGraph> graph_at(const ChipWorkload& c, std::int64_t batch, const Place& at,
                                                  const YAML::Node& node) {
  const wl::PhaseSpec phase = c.phase_at(batch);
  if (c.onnx) {
    io::OnnxImportOptions o;
    o.batch = batch;
    o.seq = phase.seq;
    o.precision = phase.precision;
    try {
      return std::make_shared<const wl::OperatorGraph>(io::import_onnx(c.file, o).graph);
    } catch (const ConfigError&) {
      throw;
    } catch (const Error& err) {
      io::fail(at.child("model"), node["model"], "expected an ONNX model the importer reads", err.what());
    }
  }
  if (const std::string why = wl::check(c.spec, phase); !why.empty())
    io::fail(at.child("phase"), node["phase"], "expected a phase the model can run at batch " + std::to_string(batch),
             why);
  return std::make_shared<const wl::OperatorGraph>(wl::build_graph(c.spec, phase));
}

}  // namespace

void build_chip_graphs(Scenario& s, const YAML::Node& workloads, const Place& at) {
  for (std::size_t i = 0; i < s.workloads.size(); ++i) {
    if (!s.workloads[i].chip) continue;
    auto c = std::make_shared<ChipWorkload>(*s.workloads[i].chip);
    for (const std::int64_t b : s.batch_sizes) c->graphs[b] = graph_at(*c, b, at.item(i), workloads[i]);
    s.workloads[i].chip = std::move(c);
  }
}

void share_memo(Scenario& s) {
  auto memo = std::make_shared<lw::OperatorMemo>();
  for (auto& h : s.hardware) {
    if (!h.loopnest) continue;
    auto e = std::make_shared<LoopnestEntry>(*h.loopnest);
    e->memo = memo;
    h.loopnest = std::move(e);
  }
}

}  // namespace chips
}  // namespace dse
