#include "dse/io/timeloop_writer.hpp"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <vector>

#include "dse/io/yaml_reader.hpp"

namespace dse::io {

namespace lp = costmodel::loopnest;
namespace mp = costmodel::mapper;

namespace {

constexpr std::size_t sz(int i) noexcept { return static_cast<std::size_t>(i); }

std::string perm_text(const lp::Problem& p, const std::vector<int>& dims) {
  bool single = true;
  for (int d = 0; d < p.num_dims; ++d) single = single && p.dim_names[sz(d)].size() == 1;
  std::string s;
  if (single) {
    for (int d : dims) s += p.dim_names[sz(d)];
    return s;
  }
  s = "[";
  for (std::size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + p.dim_names[sz(dims[i])];
  return s + "]";
}

}  // namespace

// Native description: loopnest_hardware: {name, clock_hz, levels: [...], compute: {...}}.
lp::Architecture read_loopnest_hardware(const std::string& path) {
  const YAML::Node root = parse_yaml(read_text_file(path, "hardware"), path);
  const Place top{path, ""};
  const MapReader doc(root, top, {"loopnest_hardware"});
  const MapReader h(doc.node("loopnest_hardware"), top.child("loopnest_hardware"), {"name", "clock_hz", "levels", "compute"});
  lp::Architecture a;
  a.name = h.string_or("name", path);
  a.clock_hz = h.has("clock_hz") ? h.positive("clock_hz") : 1e9;
  const YAML::Node levels = h.sequence("levels");
  for (std::size_t i = 0; i < levels.size(); ++i) {
    const MapReader l(levels[i], h.place("levels").item(i),
                          {"name", "capacity_words", "word_bits", "block_words", "mesh_x", "mesh_y",
                           "read_bandwidth_words_per_cycle", "write_bandwidth_words_per_cycle", "read_energy_pj",
                           "fill_energy_pj", "update_energy_pj", "leak_pj_per_cycle", "fanout_only", "keeps"});
    lp::StorageLevel lv;
    lv.name = l.string("name");
    lv.capacity_words = static_cast<std::int64_t>(l.non_negative_or("capacity_words", 0.0));
    lv.word_bits = l.positive_int_or("word_bits", 8);
    lv.block_words = l.positive_int_or("block_words", 1);
    lv.mesh_x = l.positive_integer_or("mesh_x", 1);
    lv.mesh_y = l.positive_integer_or("mesh_y", 1);
    lv.read_bandwidth_words_per_cycle = l.non_negative_or("read_bandwidth_words_per_cycle", 0.0);
    lv.write_bandwidth_words_per_cycle = l.non_negative_or("write_bandwidth_words_per_cycle", 0.0);
    lv.read_energy_j = l.non_negative_or("read_energy_pj", 0.0) * 1e-12;
    lv.fill_energy_j = l.non_negative_or("fill_energy_pj", 0.0) * 1e-12;
    lv.update_energy_j = l.non_negative_or("update_energy_pj", 0.0) * 1e-12;
    lv.leak_energy_j_per_cycle = l.non_negative_or("leak_pj_per_cycle", 0.0) * 1e-12;
    if (l.has("fanout_only") && l.node("fanout_only").as<bool>()) lv.may_keep = 0;
    if (l.has("keeps")) {
      // Which kinds of tensor may live here (Timeloop's keep/bypass, by role).
      const YAML::Node keeps = l.sequence("keeps");
      if (lv.may_keep == 0) fail(l.place("keeps"), keeps, "expected no keeps on a fanout_only level", "keeps");
      lv.keep_roles = 0;
      for (std::size_t k = 0; k < keeps.size(); ++k) {
        const std::string role = keeps[k].IsScalar() ? keeps[k].as<std::string>() : std::string("a non-scalar");
        if (role == "weights") {
          lv.keep_roles |= lp::StorageLevel::kKeepWeights;
        } else if (role == "inputs") {
          lv.keep_roles |= lp::StorageLevel::kKeepInputs;
        } else if (role == "outputs") {
          lv.keep_roles |= lp::StorageLevel::kKeepOutputs;
        } else {
          fail(l.place("keeps").item(k), keeps[k], "expected weights, inputs or outputs", role);
        }
      }
      if (lv.keep_roles == 0) fail(l.place("keeps"), keeps, "expected at least one of weights, inputs, outputs", "an empty list");
    }
    a.levels.push_back(lv);
  }
  const MapReader c(h.node("compute"), h.place("compute"), {"name", "mesh_x", "mesh_y", "rates"});
  a.compute.name = c.string_or("name", "compute");
  a.compute.mesh_x = c.positive_integer_or("mesh_x", 1);
  a.compute.mesh_y = c.positive_integer_or("mesh_y", 1);
  const YAML::Node rates = c.sequence("rates");
  if (rates.size() > 4)
    fail(c.place("rates"), rates, "expected at most 4 precision rates", std::to_string(rates.size()));
  a.compute.num_rates = static_cast<int>(rates.size());
  for (std::size_t i = 0; i < rates.size(); ++i) {
    const MapReader r(rates[i], c.place("rates").item(i), {"bits", "macs_per_cycle", "energy_pj_per_mac"});
    a.compute.rates[i] = lp::PrecisionRate{r.positive_int("bits"), r.positive("macs_per_cycle"),
                                           r.non_negative_or("energy_pj_per_mac", 0.0) * 1e-12};
  }
  const std::string why = lp::validate(a);
  if (!why.empty()) fail(h.place("levels"), levels, "expected a valid hierarchy", why);
  return a;
}

void write_timeloop_mapping(std::ostream& out, const lp::Architecture& arch, const lp::Problem& p, const lp::Mapping& m) {
  const int nl = static_cast<int>(arch.levels.size());
  bool padded = false;
  for (int d = 0; d < p.num_dims; ++d) {
    std::int64_t prod = 1;
    for (int l = 0; l < nl; ++l) prod *= m.levels[sz(l)].temporal[sz(d)] * m.levels[sz(l)].spatial[sz(d)];
    padded = padded || prod != p.dim_sizes[sz(d)];
  }
  if (padded) {
    // Timeloop refuses factors that do not multiply to the dimension; read_timeloop_mapping
    // accepts them (the nest is padded, the padding is paid) only under this key.
    out << "# Some factors over-cover their dimension: the loop nest is padded.\nimperfect_factors: padded\n";
  }
  out << "mapping:\n";
  for (int l = nl - 1; l >= 0; --l) {
    const lp::LevelMapping& lm = m.levels[sz(l)];
    const std::string& name = arch.levels[sz(l)].name;
    std::string keep, bypass;
    for (int t = 0; t < p.num_tensors; ++t) {
      std::string& s = ((lm.keep >> t) & 1u) ? keep : bypass;
      s += (s.empty() ? "" : ", ") + p.tensors[sz(t)].name;
    }
    out << "  - target: " << name << "\n    type: datatype\n    keep: [" << keep << "]\n    bypass: [" << bypass << "]\n";
  }
  for (int l = nl - 1; l >= 0; --l) {
    const lp::LevelMapping& lm = m.levels[sz(l)];
    const std::string& name = arch.levels[sz(l)].name;
    bool any_spatial = false;
    std::string tf, sf;
    for (int d = 0; d < p.num_dims; ++d) {
      tf += (d ? " " : "") + p.dim_names[sz(d)] + "=" + std::to_string(lm.temporal[sz(d)]);
      sf += (d ? " " : "") + p.dim_names[sz(d)] + "=" + std::to_string(lm.spatial[sz(d)]);
      any_spatial = any_spatial || lm.spatial[sz(d)] > 1;
    }
    if (any_spatial) {
      std::vector<int> xs, ys;
      for (int d = 0; d < p.num_dims; ++d) (lm.spatial[sz(d)] > 1 && lm.axis[sz(d)] == lp::Axis::y ? ys : xs).push_back(d);
      const int split = static_cast<int>(xs.size());
      xs.insert(xs.end(), ys.begin(), ys.end());
      out << "  - target: " << name << "\n    type: spatial\n    factors: " << sf << "\n    permutation: " << perm_text(p, xs)
          << "\n    split: " << split << "\n";
    }
    std::vector<int> inner_first;
    for (int i = p.num_dims - 1; i >= 0; --i) inner_first.push_back(lm.order[sz(i)]);
    out << "  - target: " << name << "\n    type: temporal\n    factors: " << tf << "\n    permutation: " << perm_text(p, inner_first)
        << "\n";
  }
}

}  // namespace dse::io
