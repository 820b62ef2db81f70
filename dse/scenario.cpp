#include "dse/scenario.hpp"

#include <set>

#include "dse/yaml_reader.hpp"

namespace dse {

namespace {

using io::MapReader;
using io::Place;

costmodel::RooflineHardware parse_hardware(const YAML::Node& node, const Place& at) {
  const MapReader m(node, at,
                    {"name", "peak_flops_per_s", "memory_bandwidth_bytes_per_s", "memory_capacity_bytes",
                     "kernel_overhead_s", "energy_per_flop_j", "energy_per_byte_j", "static_power_w",
                     "engineering_risk", "area_mm2"});
  costmodel::RooflineHardware hw;
  hw.name = m.string("name");
  hw.peak_flops_per_s = m.positive("peak_flops_per_s");
  hw.memory_bandwidth_bytes_per_s = m.positive("memory_bandwidth_bytes_per_s");
  hw.memory_capacity_bytes = m.positive("memory_capacity_bytes");
  hw.kernel_overhead_s = m.non_negative("kernel_overhead_s");
  hw.energy_per_flop_j = m.non_negative("energy_per_flop_j");
  hw.energy_per_byte_j = m.non_negative("energy_per_byte_j");
  hw.static_power_w = m.non_negative("static_power_w");
  hw.engineering_risk = m.fraction("engineering_risk");
  hw.area_mm2 = m.non_negative_or("area_mm2", 0.0);
  return hw;
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

template <class T>
void require_unique_names(const std::vector<T>& items, const YAML::Node& seq, const Place& at) {
  std::set<std::string> seen;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (!seen.insert(items[i].name).second) {
      io::fail(at.item(i).child("name"), seq[i]["name"], "expected a name not used before",
               "\"" + items[i].name + "\"");
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
