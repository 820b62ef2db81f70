#include "dse/scenario.hpp"

#include <cmath>
#include <set>
#include <stdexcept>

#include "dse/yaml_reader.hpp"

namespace dse {

namespace {

using io::MapReader;
using io::Place;

// A figure that may be swept: a scalar, or one of
//   {choices: [a, b, ...]}, {linear: [from, to, steps]}, {log: [from, to, steps]}.
std::vector<double> parse_values(const YAML::Node& node, const Place& at, bool positive) {
  auto check = [&](const YAML::Node& n, const Place& p) { return positive ? io::as_positive(n, p) : io::as_number(n, p); };
  if (!node.IsMap()) return {check(node, at)};
  const MapReader m(node, at, {"choices", "linear", "log"});
  if (node.size() != 1) io::fail(at, node, "expected exactly one of choices, linear, log", io::describe(node));
  if (m.has("choices")) {
    const YAML::Node c = m.sequence("choices");
    std::vector<double> v;
    for (std::size_t i = 0; i < c.size(); ++i) v.push_back(check(c[i], m.place("choices").item(i)));
    return v;
  }
  const bool log = m.has("log");
  const char* key = log ? "log" : "linear";
  const YAML::Node r = m.node(key);
  if (!r.IsSequence() || r.size() != 3) io::fail(m.place(key), r, "expected [from, to, steps]", io::describe(r));
  const double from = check(r[0], m.place(key).item(0));
  const double to = check(r[1], m.place(key).item(1));
  const std::int64_t steps = io::as_positive_integer(r[2], m.place(key).item(2));
  if (log && (from <= 0 || to <= 0)) io::fail(m.place(key), r, "expected positive bounds for a log range", io::describe(r));
  std::vector<double> v;
  for (std::int64_t i = 0; i < steps; ++i) {
    const double t = steps == 1 ? 0.0 : static_cast<double>(i) / static_cast<double>(steps - 1);
    v.push_back(log ? from * std::pow(to / from, t) : from + (to - from) * t);
  }
  return v;
}

HardwareEntry parse_hardware(const YAML::Node& node, const Place& at) {
  const MapReader m(node, at,
                    {"name", "peak_flops_per_s", "memory_bandwidth_bytes_per_s", "memory_capacity_bytes",
                     "kernel_overhead_s", "energy_per_flop_j", "energy_per_byte_j", "static_power_w",
                     "engineering_risk", "area_mm2"});
  using H = costmodel::RooflineHardware;
  struct Field {
    const char* key;
    double H::*field;
    bool required;
    bool positive;
  };
  static const Field fields[] = {
      {"peak_flops_per_s", &H::peak_flops_per_s, true, true},
      {"memory_bandwidth_bytes_per_s", &H::memory_bandwidth_bytes_per_s, true, true},
      {"memory_capacity_bytes", &H::memory_capacity_bytes, true, true},
      {"kernel_overhead_s", &H::kernel_overhead_s, true, false},
      {"energy_per_flop_j", &H::energy_per_flop_j, true, false},
      {"energy_per_byte_j", &H::energy_per_byte_j, true, false},
      {"static_power_w", &H::static_power_w, true, false},
      {"engineering_risk", &H::engineering_risk, true, false},
      {"area_mm2", &H::area_mm2, false, false},
  };
  HardwareEntry e;
  e.base.name = m.string("name");
  for (const auto& f : fields) {
    if (!f.required && !m.has(f.key)) continue;
    const YAML::Node n = m.node(f.key, f.positive ? "a number > 0" : "a number >= 0");
    std::vector<double> values = parse_values(n, m.place(f.key), f.positive);
    for (std::size_t i = 0; i < values.size(); ++i) {
      const bool risk = std::string(f.key) == "engineering_risk";
      if (values[i] < 0.0 || (risk && values[i] > 1.0)) {
        io::fail(m.place(f.key), n, risk ? "expected a number in [0, 1]" : "expected a number >= 0",
                 std::to_string(values[i]));
      }
    }
    e.base.*f.field = values.front();
    if (values.size() > 1) e.knobs.push_back({f.key, f.field, std::move(values)});
  }
  return e;
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
    l.name = m.string("name");
    l.kind = costmodel::LayerKind::gemm;
    l.rows_per_sample = m.positive_integer("rows_per_sample");
    l.n = m.positive_integer("n");
    l.k = m.positive_integer("k");
    l.bytes_per_element = static_cast<int>(m.positive_integer_or("bytes_per_element", 2));
  } else if (kind == "elementwise") {
    const MapReader m(node, at,
                      {"name", "kind", "elements_per_sample", "flops_per_element", "tensors_touched",
                       "bytes_per_element"});
    l.name = m.string("name");
    l.kind = costmodel::LayerKind::elementwise;
    l.elements_per_sample = m.positive_integer("elements_per_sample");
    l.flops_per_element = m.has("flops_per_element") ? m.positive("flops_per_element") : 1.0;
    l.tensors_touched = static_cast<int>(m.positive_integer_or("tensors_touched", 2));
    l.bytes_per_element = static_cast<int>(m.positive_integer_or("bytes_per_element", 2));
  } else {
    io::fail(at.child("kind"), kind_node, "expected one of gemm, elementwise", "\"" + kind + "\"");
  }
  if (l.bytes_per_element > 16) {
    io::fail(at.child("bytes_per_element"), node["bytes_per_element"], "expected at most 16 bytes",
             std::to_string(l.bytes_per_element));
  }
  return l;
}

costmodel::WorkloadSpec parse_workload(const YAML::Node& node, const Place& at) {
  const MapReader m(node, at, {"name", "layers"});
  costmodel::WorkloadSpec w;
  w.name = m.string("name");
  const YAML::Node layers = m.sequence("layers");
  for (std::size_t i = 0; i < layers.size(); ++i) {
    w.layers.push_back(parse_layer(layers[i], m.place("layers").item(i)));
  }
  return w;
}

const std::string& name_of(const HardwareEntry& e) { return e.base.name; }
const std::string& name_of(const costmodel::WorkloadSpec& w) { return w.name; }

template <class T>
void require_unique_names(const std::vector<T>& items, const YAML::Node& seq, const Place& at) {
  std::set<std::string> seen;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!seen.insert(name_of(items[i])).second) {
      io::fail(at.item(i).child("name"), seq[i]["name"], "expected a name not used before",
               "\"" + name_of(items[i]) + "\"");
    }
  }
}

SearchPlan parse_search(const YAML::Node& node, const Place& at, std::uint64_t seed) {
  const MapReader m(node, at, {"sampler", "samples", "population", "generations"});
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
    p.population = static_cast<std::size_t>(m.positive_integer("population"));
    p.generations = static_cast<std::size_t>(m.positive_integer("generations"));
  } else {
    io::fail(at.child("sampler"), m.node("sampler"), "expected one of exhaustive, random, nsga2", "\"" + kind + "\"");
  }
  return p;
}

}  // namespace

std::uint64_t HardwareEntry::variants() const {
  std::uint64_t n = 1;
  for (const auto& k : knobs) n *= k.values.size();
  return n;
}

costmodel::RooflineHardware HardwareEntry::variant(std::uint64_t v) const {
  costmodel::RooflineHardware hw = base;
  if (knobs.empty()) return hw;
  hw.name += "#" + std::to_string(v);
  for (const auto& k : knobs) {
    hw.*k.field = k.values[v % k.values.size()];
    v /= k.values.size();
  }
  return hw;
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

Scenario parse_scenario(const std::string& text, const std::string& file) {
  const YAML::Node root = io::parse_yaml(text, file);
  const Place top{file, ""};
  if (!root.IsMap()) io::fail({file, "(root)"}, root, "expected a mapping", io::describe(root));
  const MapReader m(root, top, {"name", "seed", "hardware", "workloads", "batch_sizes", "search"});
  Scenario s;
  s.file = file;
  s.text = text;
  s.name = m.string("name");
  s.seed = m.unsigned_or("seed", 0);

  const YAML::Node hw = m.sequence("hardware");
  for (std::size_t i = 0; i < hw.size(); ++i) s.hardware.push_back(parse_hardware(hw[i], m.place("hardware").item(i)));
  require_unique_names(s.hardware, hw, m.place("hardware"));

  const YAML::Node wl = m.sequence("workloads");
  for (std::size_t i = 0; i < wl.size(); ++i) s.workloads.push_back(parse_workload(wl[i], m.place("workloads").item(i)));
  require_unique_names(s.workloads, wl, m.place("workloads"));

  const YAML::Node bs = m.sequence("batch_sizes");
  for (std::size_t i = 0; i < bs.size(); ++i) {
    s.batch_sizes.push_back(io::as_positive_integer(bs[i], m.place("batch_sizes").item(i)));
  }
  s.search.seed = s.seed;
  if (m.has("search")) s.search = parse_search(m.node("search"), m.place("search"), s.seed);
  return s;
}

Scenario load_scenario(const std::string& path) {
  return parse_scenario(io::read_text_file(path, "scenario"), path);
}

}  // namespace dse
