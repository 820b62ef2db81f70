#include "dse/io/timeloop_reader.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>

#include "dse/io/yaml_reader.hpp"

namespace dse::io {

namespace lp = costmodel::loopnest;

namespace {

// A Timeloop input whose document is `what` at the top. A file holding another of the
// inputs instead (the files given in another order) is refused as such, where it read as
// an unknown key.
YAML::Node load(const std::string& path, const char* what) {
  const YAML::Node root = parse_yaml(read_text_file(path, what), path);
  if (root.IsMap() && !root[what]) {
    for (const char* other : {"architecture", "problem", "mapping", "ERT", "mapspace_constraints", "mapspace"}) {
      if (root[other]) {
        fail(Place{path, other}, root[other],
             std::string("expected a Timeloop ") + what + " file (top-level key '" + what +
                 "'); are the files in the command's order?",
             "the top-level key of a Timeloop " + std::string(other) + " file");
      }
    }
  }
  return root;
}

[[noreturn]] void refuse(const Place& at, const YAML::Node& n, const std::string& feature) {
  fail(at, n, "expected a feature the loop-nest model supports", "unsupported Timeloop feature: " + feature);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Refuse sparsity anywhere in a document.
void refuse_sparse(const YAML::Node& n, const Place& at) {
  if (n.IsMap()) {
    for (const auto& kv : n) {
      const std::string key = kv.first.Scalar();
      const std::string k = lower(key);
      if (k.find("sparse") != std::string::npos || k.find("metadata") != std::string::npos ||
          k.find("compression") != std::string::npos || k == "skipping" || k == "gating") {
        refuse(at.child(key), kv.first, "sparsity ('" + key + "')");
      }
      refuse_sparse(kv.second, at.child(key));
    }
  } else if (n.IsSequence()) {
    for (std::size_t i = 0; i < n.size(); ++i) refuse_sparse(n[i], at.item(i));
  }
}

std::int64_t int_value(const YAML::Node& n, const Place& at) { return as_positive_integer(n, at); }

}  // namespace

lp::Problem read_timeloop_problem(const std::string& path) {
  const YAML::Node root = load(path, "problem");
  const Place top{path, ""};
  refuse_sparse(root, top);
  const MapReader doc(root, top, {"problem"});
  const MapReader prob(doc.node("problem"), top.child("problem"), {"version", "shape", "instance"});
  const MapReader shape(prob.node("shape"), prob.place("shape"), {"name", "dimensions", "coefficients", "data_spaces", "data-spaces"});
  const Place inst_at = prob.place("instance");
  lp::Problem p;
  p.name = shape.string_or("name", "problem");
  const std::string lname = lower(p.name);
  p.type = (lname.find("cnn") != std::string::npos || lname.find("conv") != std::string::npos) ? lp::LayerType::conv
                                                                                                : lp::LayerType::ffn;
  // Coefficients: defaults, overridden by the instance.
  std::map<std::string, std::int64_t> coef;
  if (shape.has("coefficients")) {
    const YAML::Node cs = shape.sequence("coefficients");
    for (std::size_t i = 0; i < cs.size(); ++i) {
      const MapReader c(cs[i], shape.place("coefficients").item(i), {"name", "default"});
      coef[c.string("name")] = c.has("default") ? int_value(c.node("default"), c.place("default")) : 1;
    }
  }
  const YAML::Node instance = prob.node("instance");
  if (!instance.IsNull() && !instance.IsMap()) fail(inst_at, instance, "expected a mapping of dimension sizes", describe(instance));
  for (const auto& kv : instance) {
    const std::string key = kv.first.Scalar();
    if (coef.count(key) != 0) coef[key] = int_value(kv.second, inst_at.child(key));
  }
  const YAML::Node dims = shape.sequence("dimensions");
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const std::string d = as_string(dims[i], shape.place("dimensions").item(i));
    const YAML::Node size = instance[d];
    const std::int64_t n = size.IsDefined() ? int_value(size, inst_at.child(d)) : 1;
    if (p.add_dim(d, n) < 0)
      fail(shape.place("dimensions"), dims, "expected at most 8 dimensions", std::to_string(dims.size()));
  }
  for (const auto& kv : instance) {
    const std::string key = kv.first.Scalar();
    if (coef.count(key) == 0 && p.dim_index(key) < 0) {
      fail(inst_at.child(key), kv.first, "expected a dimension or coefficient of the shape", "'" + key + "'");
    }
  }
  const std::string ds_key = shape.has("data_spaces") ? "data_spaces" : "data-spaces";
  const YAML::Node dss = shape.sequence(ds_key);
  for (std::size_t i = 0; i < dss.size(); ++i) {
    const Place at = shape.place(ds_key).item(i);
    const MapReader ds(dss[i], at, {"name", "projection", "read_write", "read-write"});
    bool rw = false;
    for (const char* k : {"read_write", "read-write"}) {
      if (ds.has(k)) rw = ds.node(k).as<bool>(false);
    }
    const int t = p.add_tensor(ds.string("name"), rw, 8);
    if (t < 0) fail(at, dss[i], "expected at most 4 data spaces", std::to_string(dss.size()));
    p.tensors[static_cast<std::size_t>(t)].weights = ds.string("name") == "Weights";  // Timeloop's CNN data space
    const YAML::Node proj = ds.sequence("projection");
    for (std::size_t r = 0; r < proj.size(); ++r) {
      const Place rp = ds.place("projection").item(r);
      const YAML::Node rank = proj[r];
      if (!rank.IsSequence() || rank.size() == 0) fail(rp, rank, "expected a sequence of terms [dim] or [dim, coefficient]", describe(rank));
      if (p.tensors[static_cast<std::size_t>(t)].num_ranks >= lp::kMaxRanks) fail(rp, rank, "expected at most 6 coordinates per data space", "more");
      lp::Rank& rk = p.tensors[static_cast<std::size_t>(t)].ranks[static_cast<std::size_t>(p.tensors[static_cast<std::size_t>(t)].num_ranks)];
      rk = lp::Rank{};
      for (std::size_t q = 0; q < rank.size(); ++q) {
        const Place tp = rp.item(q);
        const YAML::Node term = rank[q];
        if (!term.IsSequence() || term.size() < 1 || term.size() > 2) fail(tp, term, "expected a term [dim] or [dim, coefficient]", describe(term));
        const std::string dn = as_string(term[0], tp);
        const int d = p.dim_index(dn);
        if (d < 0) fail(tp, term[0], "expected a dimension of the shape", "'" + dn + "'");
        std::int64_t c = 1;
        if (term.size() == 2) {
          const std::string cn = as_string(term[1], tp);
          if (coef.count(cn) != 0) {
            c = coef[cn];
          } else {
            c = int_value(term[1], tp);
          }
        }
        if (c > std::numeric_limits<std::int32_t>::max()) {
          fail(tp, term, "expected a coefficient of at most 2^31-1", std::to_string(c));
        }
        if (rk.num_terms >= lp::kMaxTerms) fail(tp, term, "expected at most 3 terms per coordinate", "more");
        rk.terms[static_cast<std::size_t>(rk.num_terms++)] = lp::Term{static_cast<std::int8_t>(d), static_cast<std::int32_t>(c)};
      }
      p.tensors[static_cast<std::size_t>(t)].num_ranks++;
    }
  }
  const std::string why = lp::validate(p);
  if (!why.empty()) fail(top.child("problem"), root["problem"], "expected a valid problem shape", why);
  return p;
}

namespace {

struct ArchWalk {
  lp::Architecture arch;
  std::int64_t mesh_x = 1;
  std::int64_t mesh_y = 1;
  bool have_compute = false;
  std::string file;
};

std::int64_t attr_int(const YAML::Node& attrs, const char* key, std::int64_t fallback, const Place& at) {
  const YAML::Node n = attrs[key];
  if (!n.IsDefined() || n.IsNull()) return fallback;
  return as_positive_integer(n, at.child(key));
}

double attr_num(const YAML::Node& attrs, const char* key, double fallback, const Place& at) {
  const YAML::Node n = attrs[key];
  if (!n.IsDefined() || n.IsNull()) return fallback;
  return as_number(n, at.child(key));
}

void mesh_of(const YAML::Node& node, const Place& at, std::int64_t& mx, std::int64_t& my) {
  mx = 1;
  my = 1;
  const YAML::Node sp = node["spatial"];
  if (!sp.IsDefined()) return;
  const MapReader s(sp, at.child("spatial"), {"meshX", "meshY", "get_fanout", "fanout"});
  mx = s.positive_integer_or("meshX", 1);
  my = s.positive_integer_or("meshY", 1);
  constexpr std::int64_t kMaxMesh = std::int64_t{1} << 20;  // per side; keeps mesh products in int64
  if (mx > kMaxMesh || my > kMaxMesh)
    fail(at.child("spatial"), sp, "expected meshX and meshY of at most 2^20", describe(sp));
}

void walk(const YAML::Node& nodes, const Place& at, ArchWalk& w) {
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const YAML::Node n = nodes[i];
    const Place np = at.item(i);
    const std::string tag = n.Tag();
    if (w.have_compute) fail(np, n, "expected nothing after the compute component", describe(n));
    if (tag == "!Parallel") {
      const MapReader par(n, np, {"nodes", "name"});
      walk(par.sequence("nodes"), par.place("nodes"), w);
      continue;
    }
    if (tag == "!Container") {
      const MapReader c(n, np, {"name", "attributes", "spatial", "constraints"});
      if (c.has("attributes")) {
        const YAML::Node a = c.node("attributes");
        if (!a.IsNull() && !a.IsMap()) fail(c.place("attributes"), a, "expected a mapping", describe(a));
        const double gcs = attr_num(a, "global_cycle_seconds", 0.0, c.place("attributes"));
        if (gcs > 0.0) w.arch.clock_hz = 1.0 / gcs;
      }
      std::int64_t mx = 1, my = 1;
      mesh_of(n, np, mx, my);
      if (mx * my > 1) {
        lp::StorageLevel dummy;
        dummy.name = "inter_" + c.string("name") + "_spatial";
        dummy.mesh_x = w.mesh_x;
        dummy.mesh_y = w.mesh_y;
        dummy.may_keep = 0;
        w.arch.levels.push_back(dummy);
        if (w.mesh_x > (std::int64_t{1} << 40) / mx || w.mesh_y > (std::int64_t{1} << 40) / my) {
          fail(np, n, "expected a total fan-out of at most 2^40 per mesh axis", describe(n));
        }
        w.mesh_x *= mx;
        w.mesh_y *= my;
      }
      continue;
    }
    if (tag != "!Component") fail(np, n, "expected a node tagged !Container, !Component or !Parallel", tag.empty() ? "no tag" : "'" + tag + "'");
    const MapReader c(n, np, {"name", "class", "attributes", "spatial", "constraints", "required_actions", "area_share", "enabled", "subclass"});
    const std::string name = c.string("name");
    const std::string cls = c.string("class");
    const std::string lc = lower(cls);
    std::int64_t mx = 1, my = 1;
    mesh_of(n, np, mx, my);
    if (w.mesh_x > (std::int64_t{1} << 40) / mx || w.mesh_y > (std::int64_t{1} << 40) / my) {
      fail(np, n, "expected a total fan-out of at most 2^40 per mesh axis", describe(n));
    }
    w.mesh_x *= mx;
    w.mesh_y *= my;
    const YAML::Node attrs = c.has("attributes") ? c.node("attributes") : YAML::Node(YAML::NodeType::Map);
    const Place ap = c.place("attributes");
    if (!attrs.IsNull() && !attrs.IsMap()) fail(ap, attrs, "expected a mapping", describe(attrs));
    if (lc.find("mac") != std::string::npos || lc == "compute") {
      w.arch.compute.name = name;
      w.arch.compute.mesh_x = w.mesh_x;
      w.arch.compute.mesh_y = w.mesh_y;
      w.arch.compute.num_rates = 1;
      w.arch.compute.rates[0] = lp::PrecisionRate{0, 1.0, 0.0};
      w.have_compute = true;
      continue;
    }
    const bool storage = attrs["depth"].IsDefined() || lc.find("dram") != std::string::npos ||
                         lc.find("sram") != std::string::npos || lc.find("regfile") != std::string::npos ||
                         lc.find("buffer") != std::string::npos || lc == "storage";
    if (!storage) refuse(c.place("class"), c.node("class"), "compound component class '" + cls + "' (only storage and compute are modelled)");
    lp::StorageLevel lv;
    lv.name = name;
    lv.mesh_x = w.mesh_x;
    lv.mesh_y = w.mesh_y;
    const std::int64_t word_bits = attr_int(attrs, "datawidth", attr_int(attrs, "word-bits", attr_int(attrs, "word_bits", 8, ap), ap), ap);
    const std::int64_t width = attr_int(attrs, "width", word_bits * attr_int(attrs, "block_size", attr_int(attrs, "block-size", 1, ap), ap), ap);
    lv.word_bits = static_cast<int>(word_bits);
    lv.block_words = static_cast<int>(std::max<std::int64_t>(1, width / word_bits));
    const std::int64_t depth = attr_int(attrs, "depth", 0, ap);
    lv.capacity_words = depth * lv.block_words;
    lv.read_bandwidth_words_per_cycle = attr_num(attrs, "read_bandwidth", 0.0, ap);
    lv.write_bandwidth_words_per_cycle = attr_num(attrs, "write_bandwidth", 0.0, ap);
    w.arch.levels.push_back(lv);
  }
}

}  // namespace

lp::Architecture read_timeloop_arch(const std::string& path) {
  const YAML::Node root = load(path, "architecture");
  const Place top{path, ""};
  refuse_sparse(root, top);
  const MapReader doc(root, top, {"architecture"});
  const MapReader a(doc.node("architecture"), top.child("architecture"), {"version", "nodes"});
  ArchWalk w;
  w.file = path;
  w.arch.name = path;
  walk(a.sequence("nodes"), a.place("nodes"), w);
  if (!w.have_compute) fail(a.place("nodes"), a.node("nodes"), "expected a compute component (class *mac*) at the bottom", "none");
  if (w.arch.levels.empty()) fail(a.place("nodes"), a.node("nodes"), "expected at least one storage component", "none");
  if (static_cast<int>(w.arch.levels.size()) > lp::kMaxLevels) {
    fail(a.place("nodes"), a.node("nodes"), "expected at most " + std::to_string(lp::kMaxLevels) + " storage levels (fan-out levels included)", std::to_string(w.arch.levels.size()));
  }
  const std::string why = lp::validate(w.arch);
  if (!why.empty()) fail(a.place("nodes"), a.node("nodes"), "expected a valid hierarchy", why);
  return w.arch;
}

void read_timeloop_ert(const std::string& path, lp::Architecture& arch) {
  const YAML::Node root = load(path, "ERT");
  const Place top{path, ""};
  const MapReader doc(root, top, {"ERT"});
  const MapReader ert(doc.node("ERT"), top.child("ERT"), {"version", "tables"});
  const YAML::Node tables = ert.sequence("tables");
  for (std::size_t i = 0; i < tables.size(); ++i) {
    const Place tp = ert.place("tables").item(i);
    const MapReader tab(tables[i], tp, {"name", "actions"});
    std::string name = tab.string("name");
    const auto br = name.find('[');
    if (br != std::string::npos) name = name.substr(0, br);
    const auto dot = name.rfind('.');
    if (dot != std::string::npos) name = name.substr(dot + 1);
    std::map<std::string, double> e;
    const YAML::Node acts = tab.sequence("actions");
    for (std::size_t j = 0; j < acts.size(); ++j) {
      const MapReader act(acts[j], tab.place("actions").item(j), {"name", "arguments", "energy"});
      e[act.string("name")] = act.number("energy") * 1e-12;  // pJ -> J
    }
    auto get = [&e](const char* k, double fb) { return e.count(k) != 0 ? e[k] : fb; };
    if (name == arch.compute.name) {
      arch.compute.rates[0].energy_per_mac_j = get("compute", 0.0);
      continue;
    }
    for (auto& lv : arch.levels) {
      if (lv.name != name) continue;
      lv.read_energy_j = get("read", 0.0);
      lv.fill_energy_j = get("write", lv.read_energy_j);
      lv.update_energy_j = get("update", lv.fill_energy_j);
      lv.leak_energy_j_per_cycle = get("leak", 0.0);
    }
  }
}

namespace {

int dim_of(const lp::Problem& p, const std::string& name, const Place& at, const YAML::Node& n) {
  const int d = p.dim_index(name);
  if (d < 0) fail(at, n, "expected a dimension of the problem", "'" + name + "'");
  return d;
}

// "R=3 P=16" or "C1 M8" (or a sequence of such tokens).
std::array<std::int64_t, lp::kMaxDims> parse_factors(const YAML::Node& n, const Place& at, const lp::Problem& p) {
  std::array<std::int64_t, lp::kMaxDims> f;
  f.fill(1);
  std::vector<std::string> tokens;
  if (n.IsSequence()) {
    for (std::size_t i = 0; i < n.size(); ++i) tokens.push_back(as_string(n[i], at.item(i)));
  } else {
    std::string s = as_string(n, at), tok;
    for (char ch : s + " ") {
      if (std::isspace(static_cast<unsigned char>(ch)) != 0 || ch == ',') {
        if (!tok.empty()) tokens.push_back(tok);
        tok.clear();
      } else {
        tok += ch;
      }
    }
  }
  for (const auto& tok : tokens) {
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
    std::int64_t value = 0;
    const char* const end = num.data() + num.size();
    const auto [stop, ec] = std::from_chars(num.data(), end, value);  // refuses values past int64
    if (name.empty() || num.empty() || ec != std::errc() || stop != end || value < 1) {
      fail(at, n, "expected factors like 'R=3 P=16' or 'C1 M8'", "'" + tok + "'");
    }
    f[static_cast<std::size_t>(dim_of(p, name, at, n))] = value;
  }
  return f;
}

// Dimensions listed innermost first (a string of one-letter names or a sequence).
std::vector<int> parse_permutation(const YAML::Node& n, const Place& at, const lp::Problem& p) {
  std::vector<int> dims;
  if (n.IsSequence()) {
    for (std::size_t i = 0; i < n.size(); ++i) dims.push_back(dim_of(p, as_string(n[i], at.item(i)), at, n));
  } else {
    for (char ch : as_string(n, at)) {
      if (std::isspace(static_cast<unsigned char>(ch)) != 0) continue;
      dims.push_back(dim_of(p, std::string(1, ch), at, n));
    }
  }
  return dims;
}

}  // namespace

lp::Mapping read_timeloop_mapping(const std::string& path, const lp::Architecture& arch, const lp::Problem& p) {
  const YAML::Node root = load(path, "mapping");
  const Place top{path, ""};
  refuse_sparse(root, top);
  const MapReader doc(root, top, {"mapping"});
  lp::Mapping m = lp::make_empty_mapping(arch, p);
  const std::uint32_t all = (1u << p.num_tensors) - 1u;
  for (int l = 0; l < m.num_levels; ++l) m.levels[static_cast<std::size_t>(l)].keep = arch.levels[static_cast<std::size_t>(l)].may_keep & all;
  std::vector<std::string> names;
  for (const auto& lv : arch.levels) names.push_back(lv.name);
  const YAML::Node entries = doc.node("mapping");
  if (!entries.IsSequence())
    fail(top.child("mapping"), entries, "expected a sequence of mapping entries", describe(entries));
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const Place at = top.child("mapping").item(i);
    const MapReader e(entries[i], at, {"target", "type", "factors", "permutation", "split", "keep", "bypass"});
    const std::string target = e.string("target");
    const auto it = std::find(names.begin(), names.end(), target);
    if (it == names.end()) {
      const std::string hint = did_you_mean(target, names);
      fail(e.place("target"), e.node("target"), "expected " + (hint.empty() ? "a storage level of the architecture" : "a storage level (did you mean '" + hint + "'?)"), "'" + target + "'");
    }
    const auto l = static_cast<std::size_t>(it - names.begin());
    lp::LevelMapping& lm = m.levels[l];
    const std::string type = e.string("type");
    auto tensor_mask = [&](const char* key) {
      std::uint32_t mask = 0;
      if (!e.has(key)) return mask;
      const YAML::Node list = e.node(key);
      for (std::size_t j = 0; j < list.size(); ++j) {
        const std::string tn = as_string(list[j], e.place(key).item(j));
        const int t = p.tensor_index(tn);
        if (t < 0) fail(e.place(key).item(j), list[j], "expected a data space of the problem", "'" + tn + "'");
        mask |= 1u << t;
      }
      return mask;
    };
    if (type == "datatype" || type == "bypass") {
      const std::uint32_t keep = tensor_mask("keep");
      const std::uint32_t bypass = tensor_mask("bypass");
      lm.keep = (lm.keep | keep) & ~bypass;
      if ((keep & ~arch.levels[l].may_keep) != 0) fail(e.place("keep"), e.node("keep"), "expected data spaces this level can hold", "a level that stores nothing");
      continue;
    }
    if (type != "temporal" && type != "spatial") fail(e.place("type"), e.node("type"), "expected temporal, spatial or datatype", "'" + type + "'");
    const auto factors = e.has("factors") ? parse_factors(e.node("factors"), e.place("factors"), p) : std::array<std::int64_t, lp::kMaxDims>{1, 1, 1, 1, 1, 1, 1, 1};
    std::vector<int> perm = e.has("permutation") ? parse_permutation(e.node("permutation"), e.place("permutation"), p) : std::vector<int>{};
    if (type == "temporal") {
      lm.temporal = factors;
      // Outermost first: dimensions not listed, then the permutation reversed.
      std::vector<int> order;
      for (int d = 0; d < p.num_dims; ++d) {
        if (std::find(perm.begin(), perm.end(), d) == perm.end()) order.push_back(d);
      }
      for (auto r = perm.rbegin(); r != perm.rend(); ++r) order.push_back(*r);
      for (std::size_t k = 0; k < order.size() && k < lp::kMaxDims; ++k) lm.order[k] = static_cast<std::int8_t>(order[k]);
    } else {
      lm.spatial = factors;
      std::int64_t split = static_cast<std::int64_t>(p.num_dims);
      if (e.has("split")) {
        // A position in the permutation: checked before the cast (a double past int64 is UB).
        const double v = e.number("split");
        if (!(v >= 0.0 && v <= static_cast<double>(lp::kMaxDims)) || v != std::floor(v)) {
          fail(e.place("split"), e.node("split"), "expected an integer from 0 to " + std::to_string(lp::kMaxDims),
               format_number(v));
        }
        split = static_cast<std::int64_t>(v);
      }
      for (int d = 0; d < p.num_dims; ++d) {
        const auto pos = std::find(perm.begin(), perm.end(), d);
        const std::int64_t k = pos == perm.end() ? static_cast<std::int64_t>(d) : static_cast<std::int64_t>(pos - perm.begin());
        lm.axis[static_cast<std::size_t>(d)] = k < split ? lp::Axis::x : lp::Axis::y;
      }
    }
  }
  return m;
}

TimeloopCase read_timeloop_case(const std::string& arch_path, const std::string& problem_path,
                                const std::string& mapping_path, const std::string& ert_path) {
  TimeloopCase c;
  c.problem = read_timeloop_problem(problem_path);
  c.arch = read_timeloop_arch(arch_path);
  read_timeloop_ert(ert_path, c.arch);
  c.mapping = read_timeloop_mapping(mapping_path, c.arch, c.problem);
  return c;
}

}  // namespace dse::io
