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

int dim_at(const lp::Problem& p, const std::string& name, const Place& at, const YAML::Node& n) {
  const int d = p.dim_index(name);
  if (d < 0) fail(at, n, "expected a dimension of the problem", "'" + name + "'");
  return d;
}

std::vector<std::string> tokens_of(const YAML::Node& n, const Place& at) {
  std::vector<std::string> out;
  if (n.IsSequence()) {
    for (std::size_t i = 0; i < n.size(); ++i) out.push_back(as_string(n[i], at.item(i)));
    return out;
  }
  std::string tok;
  for (char ch : as_string(n, at) + " ") {
    if (std::isspace(static_cast<unsigned char>(ch)) != 0 || ch == ',') {
      if (!tok.empty()) out.push_back(tok);
      tok.clear();
    } else {
      tok += ch;
    }
  }
  return out;
}

// Fixed factors ("N=1 C=4" or "N1 C4"); unlisted dimensions stay free (0).
void parse_fixed(const YAML::Node& n, const Place& at, const lp::Problem& p, std::array<std::int64_t, lp::kMaxDims>& f) {
  for (const std::string& tok : tokens_of(n, at)) {
    std::string name, num;
    const auto eq = tok.find('=');
    if (eq != std::string::npos) {
      name = tok.substr(0, eq);
      num = tok.substr(eq + 1);
    } else {
      std::size_t k = tok.size();
      while (k > 0 && std::isdigit(static_cast<unsigned char>(tok[k - 1])) != 0) --k;
      name = tok.substr(0, k);
      num = tok.substr(k);
    }
    if (name.empty() || num.empty() || num.find_first_not_of("0123456789") != std::string::npos || std::stoll(num) < 1) {
      fail(at, n, "expected fixed factors like 'N=1 C=4'", "'" + tok + "'");
    }
    f[sz(dim_at(p, name, at, n))] = std::stoll(num);
  }
}

// Innermost first: a string of one-letter names or a sequence of names.
int parse_perm(const YAML::Node& n, const Place& at, const lp::Problem& p, std::array<std::int8_t, lp::kMaxDims>& out) {
  std::vector<std::string> names;
  if (n.IsSequence()) {
    names = tokens_of(n, at);
  } else {
    for (char ch : as_string(n, at)) {
      if (std::isspace(static_cast<unsigned char>(ch)) == 0) names.emplace_back(1, ch);
    }
  }
  if (names.size() > sz(lp::kMaxDims)) fail(at, n, "expected at most 8 dimensions", std::to_string(names.size()));
  for (std::size_t i = 0; i < names.size(); ++i) out[i] = static_cast<std::int8_t>(dim_at(p, names[i], at, n));
  return static_cast<int>(names.size());
}

std::uint32_t tensor_mask(const YAML::Node& n, const Place& at, const lp::Problem& p) {
  std::uint32_t m = 0;
  if (!n.IsSequence()) fail(at, n, "expected a sequence of data space names", describe(n));
  for (std::size_t i = 0; i < n.size(); ++i) {
    const std::string name = as_string(n[i], at.item(i));
    const int t = p.tensor_index(name);
    if (t < 0) fail(at.item(i), n[i], "expected a data space of the problem", "'" + name + "'");
    m |= 1u << t;
  }
  return m;
}

void apply_dataspace(const YAML::Node& n, const Place& at, const lp::Problem& p, mp::LevelConstraint& lc) {
  const MapReader r(n, at, {"keep", "bypass"});
  if (r.has("keep")) lc.keep = tensor_mask(r.node("keep"), r.place("keep"), p);
  if (r.has("bypass")) lc.bypass = tensor_mask(r.node("bypass"), r.place("bypass"), p);
}

void apply_temporal(const YAML::Node& n, const Place& at, const lp::Problem& p, mp::LevelConstraint& lc) {
  const MapReader r(n, at, {"factors", "permutation"});
  if (r.has("factors")) parse_fixed(r.node("factors"), r.place("factors"), p, lc.temporal);
  if (r.has("permutation")) lc.num_permutation = parse_perm(r.node("permutation"), r.place("permutation"), p, lc.permutation);
}

void apply_spatial(const YAML::Node& n, const Place& at, const lp::Problem& p, mp::LevelConstraint& lc) {
  const MapReader r(n, at, {"factors", "permutation", "split"});
  if (r.has("factors")) parse_fixed(r.node("factors"), r.place("factors"), p, lc.spatial);
  if (r.has("permutation")) {
    lc.num_spatial_permutation = parse_perm(r.node("permutation"), r.place("permutation"), p, lc.spatial_permutation);
    lc.spatial_split = r.has("split") ? static_cast<int>(r.number("split")) : lc.num_spatial_permutation;
  }
}

int level_of(const lp::Architecture& a, const std::string& name) {
  for (std::size_t l = 0; l < a.levels.size(); ++l) {
    if (a.levels[l].name == name || a.levels[l].name == "inter_" + name + "_spatial") return static_cast<int>(l);
  }
  return -1;
}

void walk(const YAML::Node& nodes, const Place& at, const lp::Architecture& a, const lp::Problem& p, mp::Constraints& c) {
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const YAML::Node n = nodes[i];
    const Place np = at.item(i);
    if (n.Tag() == "!Parallel") {
      walk(n["nodes"], np.child("nodes"), a, p, c);
      continue;
    }
    const YAML::Node cons = n["constraints"];
    if (!cons.IsDefined() || cons.IsNull()) continue;
    const Place cp = np.child("constraints");
    const int l = level_of(a, as_string(n["name"], np.child("name")));
    if (l < 0) fail(cp, cons, "expected constraints on a storage level or a spatial container", "a node the model has no level for");
    mp::LevelConstraint& lc = c.levels[sz(l)];
    const MapReader r(cons, cp, {"dataspace", "temporal", "spatial"});
    if (r.has("dataspace")) apply_dataspace(r.node("dataspace"), r.place("dataspace"), p, lc);
    if (r.has("temporal")) apply_temporal(r.node("temporal"), r.place("temporal"), p, lc);
    if (r.has("spatial")) apply_spatial(r.node("spatial"), r.place("spatial"), p, lc);
  }
}

void read_targets(const YAML::Node& list, const Place& at, const lp::Architecture& a, const lp::Problem& p, mp::Constraints& c) {
  if (!list.IsSequence()) fail(at, list, "expected a sequence of constraint entries", describe(list));
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Place ep = at.item(i);
    const MapReader e(list[i], ep, {"target", "type", "factors", "permutation", "split", "keep", "bypass"});
    const std::string target = e.string("target");
    const int l = level_of(a, target);
    if (l < 0)
      fail(e.place("target"), e.node("target"), "expected a storage level of the architecture", "'" + target + "'");
    mp::LevelConstraint& lc = c.levels[sz(l)];
    const std::string type = e.string("type");
    if (type == "temporal") {
      if (e.has("factors")) parse_fixed(e.node("factors"), e.place("factors"), p, lc.temporal);
      if (e.has("permutation")) lc.num_permutation = parse_perm(e.node("permutation"), e.place("permutation"), p, lc.permutation);
    } else if (type == "spatial") {
      if (e.has("factors")) parse_fixed(e.node("factors"), e.place("factors"), p, lc.spatial);
      if (e.has("permutation")) {
        lc.num_spatial_permutation = parse_perm(e.node("permutation"), e.place("permutation"), p, lc.spatial_permutation);
        lc.spatial_split = e.has("split") ? static_cast<int>(e.number("split")) : lc.num_spatial_permutation;
      }
    } else if (type == "dataspace" || type == "bypass" || type == "datatype") {
      if (e.has("keep")) lc.keep = tensor_mask(e.node("keep"), e.place("keep"), p);
      if (e.has("bypass")) lc.bypass = tensor_mask(e.node("bypass"), e.place("bypass"), p);
    } else {
      fail(e.place("type"), e.node("type"),
           "expected temporal, spatial, dataspace, bypass or datatype", "'" + type + "'");
    }
  }
}

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

mp::Constraints read_timeloop_constraints(const std::string& arch_path, const std::string& constraints_path,
                                          const lp::Architecture& arch, const lp::Problem& problem) {
  mp::Constraints c;
  {
    const YAML::Node root = parse_yaml(read_text_file(arch_path, "architecture"), arch_path);
    const Place top{arch_path, ""};
    const YAML::Node nodes = root["architecture"]["nodes"];
    if (nodes.IsDefined() && nodes.IsSequence()) walk(nodes, top.child("architecture").child("nodes"), arch, problem, c);
  }
  if (!constraints_path.empty()) {
    const YAML::Node root = parse_yaml(read_text_file(constraints_path, "constraints"), constraints_path);
    const Place top{constraints_path, ""};
    YAML::Node cons = root["constraints"];
    Place cp = top.child("constraints");
    if (!cons.IsDefined()) {
      cons = root;
      cp = top;
    }
    if (cons.IsSequence()) {
      read_targets(cons, cp, arch, problem, c);
    } else {
      const MapReader r(cons, cp, {"targets", "version"});
      read_targets(r.node("targets", "a sequence of constraint entries"), r.place("targets"), arch, problem, c);
    }
  }
  return c;
}

void write_timeloop_mapping(std::ostream& out, const lp::Architecture& arch, const lp::Problem& p, const lp::Mapping& m) {
  out << "mapping:\n";
  const int nl = static_cast<int>(arch.levels.size());
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
