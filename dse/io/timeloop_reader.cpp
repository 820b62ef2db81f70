#include "dse/io/timeloop_reader.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>

#include "dse/io/timeloop_directives.hpp"
#include "dse/io/yaml_reader.hpp"

namespace dse::io {

namespace lp = costmodel::loopnest;

namespace {

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

using Coefficients = std::map<std::string, std::int64_t>;

// The shape's coefficients (strides, dilations) at their defaults.
Coefficients coefficient_defaults(const MapReader& shape) {
  Coefficients coef;
  if (shape.has("coefficients")) {
    const YAML::Node cs = shape.sequence("coefficients");
    for (std::size_t i = 0; i < cs.size(); ++i) {
      const MapReader c(cs[i], shape.place("coefficients").item(i), {"name", "default"});
      coef[c.string("name")] = c.has("default") ? int_value(c.node("default"), c.place("default")) : 1;
    }
  }
  return coef;
}

// The shape's dimensions in order, each of the instance's size (1 when it gives none).
void read_dimensions(const MapReader& shape, const YAML::Node& instance, const Place& inst_at, lp::Problem& p) {
  const YAML::Node dims = shape.sequence("dimensions");
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const std::string d = as_string(dims[i], shape.place("dimensions").item(i));
    const YAML::Node size = instance[d];
    const std::int64_t n = size.IsDefined() ? int_value(size, inst_at.child(d)) : 1;
    if (p.add_dim(d, n) < 0)
      fail(shape.place("dimensions"), dims, "expected at most 8 dimensions", std::to_string(dims.size()));
  }
}

// Other instance variables (the example designs' H, W, Hpad: inputs to expressions) are
// ignored, as Timeloop does, when every dimension has its size; with a dimension left
// out, an unknown key is more likely that dimension misspelt, and is refused.
void check_instance_keys(const MapReader& shape, const YAML::Node& instance, const Place& inst_at,
                         const Coefficients& coef, const lp::Problem& p) {
  const YAML::Node dims = shape.sequence("dimensions");
  bool all_sized = true;
  for (std::size_t i = 0; i < dims.size(); ++i)
    all_sized = all_sized && instance[as_string(dims[i], shape.place("dimensions").item(i))].IsDefined();
  for (const auto& kv : instance) {
    const std::string key = kv.first.Scalar();
    if (coef.count(key) == 0 && p.dim_index(key) < 0) {
      if (all_sized) {
        (void)as_number(kv.second, inst_at.child(key));
        continue;
      }
      std::vector<std::string> names(p.dim_names.begin(), p.dim_names.begin() + p.num_dims);
      const std::string hint = did_you_mean(key, names);
      fail(inst_at.child(key), kv.first,
           "expected a dimension or coefficient of the shape" +
               (hint.empty() ? std::string() : " (did you mean '" + hint + "'?)"),
           "'" + key + "'");
    }
  }
}

// One coordinate of a data space's projection: a sum of terms [dim] or [dim, coefficient],
// the coefficient a number or a name of the shape's coefficients.
lp::Rank read_rank(const YAML::Node& rank, const Place& rp, const lp::Problem& p, const Coefficients& coef) {
  lp::Rank rk{};
  for (std::size_t q = 0; q < rank.size(); ++q) {
    const Place tp = rp.item(q);
    const YAML::Node term = rank[q];
    if (!term.IsSequence() || term.size() < 1 || term.size() > 2)
      fail(tp, term, "expected a term [dim] or [dim, coefficient]", describe(term));
    const std::string dn = as_string(term[0], tp);
    const int d = p.dim_index(dn);
    if (d < 0) fail(tp, term[0], "expected a dimension of the shape", "'" + dn + "'");
    std::int64_t c = 1;
    if (term.size() == 2) {
      const std::string cn = as_string(term[1], tp);
      if (coef.count(cn) != 0) {
        c = coef.at(cn);
      } else {
        c = int_value(term[1], tp);
      }
    }
    if (c > std::numeric_limits<std::int32_t>::max()) {
      fail(tp, term, "expected a coefficient of at most 2^31-1", std::to_string(c));
    }
    if (rk.num_terms >= lp::kMaxTerms) fail(tp, term, "expected at most 3 terms per coordinate", "more");
    rk.terms[static_cast<std::size_t>(rk.num_terms++)] =
        lp::Term{static_cast<std::int8_t>(d), static_cast<std::int32_t>(c)};
  }
  return rk;
}

// One data space: its name, whether it is read-write, and its projection.
void read_data_space(const YAML::Node& node, const Place& at, std::size_t count, const Coefficients& coef,
                     lp::Problem& p) {
  const MapReader ds(node, at, {"name", "projection", "read_write", "read-write"});
  bool rw = false;
  for (const char* k : {"read_write", "read-write"}) {
    if (ds.has(k)) rw = ds.node(k).as<bool>(false);
  }
  const int t = p.add_tensor(ds.string("name"), rw, 8);
  if (t < 0) fail(at, node, "expected at most 4 data spaces", std::to_string(count));
  lp::Tensor& tensor = p.tensors[static_cast<std::size_t>(t)];
  tensor.weights = ds.string("name") == "Weights";  // Timeloop's CNN data space
  const YAML::Node proj = ds.sequence("projection");
  for (std::size_t r = 0; r < proj.size(); ++r) {
    const Place rp = ds.place("projection").item(r);
    const YAML::Node rank = proj[r];
    if (!rank.IsSequence() || rank.size() == 0)
      fail(rp, rank, "expected a sequence of terms [dim] or [dim, coefficient]", describe(rank));
    if (tensor.num_ranks >= lp::kMaxRanks) fail(rp, rank, "expected at most 6 coordinates per data space", "more");
    tensor.ranks[static_cast<std::size_t>(tensor.num_ranks)] = read_rank(rank, rp, p, coef);
    tensor.num_ranks++;
  }
}

}  // namespace

lp::Problem read_timeloop_problem(const std::string& path) {
  const YAML::Node root = timeloop::load(path, "problem").root;
  const Place top{path, ""};
  refuse_sparse(root, top);
  const MapReader doc(root, top, {"problem"});
  const MapReader prob(doc.node("problem"), top.child("problem"), {"version", "shape", "instance"});
  const MapReader shape(prob.node("shape"), prob.place("shape"),
                        {"name", "dimensions", "coefficients", "data_spaces", "data-spaces"});
  const Place inst_at = prob.place("instance");
  lp::Problem p;
  p.name = shape.string_or("name", "problem");
  const std::string lname = lower(p.name);
  p.type = (lname.find("cnn") != std::string::npos || lname.find("conv") != std::string::npos) ? lp::LayerType::conv
                                                                                               : lp::LayerType::ffn;
  // Coefficients: defaults, overridden by the instance.
  Coefficients coef = coefficient_defaults(shape);
  const YAML::Node instance = prob.node("instance");
  if (!instance.IsNull() && !instance.IsMap())
    fail(inst_at, instance, "expected a mapping of dimension sizes", describe(instance));
  for (const auto& kv : instance) {
    const std::string key = kv.first.Scalar();
    if (coef.count(key) != 0) coef[key] = int_value(kv.second, inst_at.child(key));
  }
  read_dimensions(shape, instance, inst_at, p);
  check_instance_keys(shape, instance, inst_at, coef, p);
  const std::string ds_key = shape.has("data_spaces") ? "data_spaces" : "data-spaces";
  const YAML::Node dss = shape.sequence(ds_key);
  for (std::size_t i = 0; i < dss.size(); ++i) read_data_space(dss[i], shape.place(ds_key).item(i), dss.size(), coef, p);
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
  // Attributes of the containers walked so far, which a component inherits where it
  // does not set them (Timeloop's front end, v4_to_v3.py: arch_attrs).
  std::map<std::string, std::pair<YAML::Node, Place>> inherited;
};

// One component's attributes with the containers' as fallback.
struct Attributes {
  YAML::Node own;
  Place at;
  const ArchWalk* w;
  [[nodiscard]] std::pair<YAML::Node, Place> find(const char* key) const {
    const YAML::Node n = own.IsMap() ? own[key] : YAML::Node(YAML::NodeType::Undefined);
    if (n.IsDefined() && !n.IsNull()) return {n, at.child(key)};
    const auto it = w->inherited.find(key);
    if (it != w->inherited.end() && !it->second.first.IsNull()) return it->second;
    return {YAML::Node(YAML::NodeType::Undefined), at.child(key)};
  }
  [[nodiscard]] bool has(const char* key) const { return find(key).first.IsDefined(); }
  [[nodiscard]] std::int64_t integer(const char* key, std::int64_t fallback) const {
    const auto [n, p] = find(key);
    return n.IsDefined() ? as_positive_integer(n, p) : fallback;
  }
  [[nodiscard]] double number(const char* key, double fallback) const {
    const auto [n, p] = find(key);
    return n.IsDefined() ? as_number(n, p) : fallback;
  }
  // The first of the keys that is set (Timeloop's aliases), or fallback.
  [[nodiscard]] std::int64_t integer_of(std::initializer_list<const char*> keys, std::int64_t fallback) const {
    for (const char* k : keys) {
      if (has(k)) return integer(k, fallback);
    }
    return fallback;
  }
};

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

// A spatial fan-out of mx x my at this point of the hierarchy: Timeloop's front end
// places a level named inter_<name>_spatial that holds nothing, with the instances
// above it; everything after it is replicated.
void fan_out(ArchWalk& w, const std::string& name, std::int64_t mx, std::int64_t my, const Place& np,
             const YAML::Node& n) {
  if (mx * my == 1) return;
  lp::StorageLevel dummy;
  dummy.name = "inter_" + name + "_spatial";
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

bool enabled(const MapReader& c) { return !c.has("enabled") || c.boolean_or("enabled", true); }

void container(const YAML::Node& n, const Place& np, ArchWalk& w) {
  const MapReader c(n, np, {"name", "attributes", "spatial", "constraints", "enabled"});
  if (!enabled(c)) return;
  if (c.has("attributes")) {
    const YAML::Node a = c.node("attributes");
    if (!a.IsNull() && !a.IsMap()) fail(c.place("attributes"), a, "expected a mapping", describe(a));
    for (const auto& kv : a)
      w.inherited[kv.first.Scalar()] = {kv.second, c.place("attributes").child(kv.first.Scalar())};
    const Attributes attrs{a, c.place("attributes"), &w};
    const double gcs = attrs.number("global_cycle_seconds", 0.0);
    if (gcs > 0.0) w.arch.clock_hz = 1.0 / gcs;
  }
  std::int64_t mx = 1, my = 1;
  mesh_of(n, np, mx, my);
  if (mx * my > 1) {
    fan_out(w, c.string("name"), mx, my, np, n);
  } else {
    w.arch.plain_containers.push_back(c.string("name"));
  }
}

// A storage component's figures from its attributes, with Timeloop's aliases
// (buffer.cpp ParseSpecs): word bits, block size, width, size and buffering.
void storage_figures(const Attributes& a, lp::StorageLevel& lv) {
  const std::int64_t word_bits = a.integer_of({"word_bits", "word_width", "datawidth", "word-bits"}, 8);
  const std::int64_t block = a.integer_of({"block_size", "block-size", "n_words"}, 0);
  const std::int64_t width =
      a.integer_of({"width", "memory_width", "data_storage_width"}, word_bits * std::max<std::int64_t>(1, block));
  if (word_bits > 1024 || width > (std::int64_t{1} << 30)) {
    fail(a.at, a.own, "expected a word width of at most 1024 bits and a width of at most 2^30 bits", describe(a.own));
  }
  if (width % word_bits != 0) {
    fail(a.find("width").second, a.find("width").first,
         "expected a width that is a multiple of the word width " + std::to_string(word_bits),
         describe(a.find("width").first));
  }
  const std::int64_t cluster = a.integer("cluster_size", 1);
  if (cluster != 1 || (block > 0 && block * word_bits != width)) {
    fail(a.find("width").second, a.find("width").first,
         "expected width = datawidth x block_size (Timeloop's clusters, cluster_size > 1, are not modelled)",
         describe(a.find("width").first));
  }
  lv.word_bits = static_cast<int>(word_bits);
  lv.block_words = static_cast<int>(std::max<std::int64_t>(1, width / word_bits));
  std::int64_t size = 0;
  if (a.has("entries")) {
    size = a.integer("entries", 0);
  } else if (a.has("sizeKB")) {
    size = a.integer("sizeKB", 0) * 1024 * 8 / word_bits;
  } else {
    size = a.integer_of({"depth", "memory_depth", "data_storage_depth"}, 0) * lv.block_words;
  }
  const double buffering = a.number("multiple_buffering", 1.0);
  if (!(buffering >= 1.0))
    fail(a.find("multiple_buffering").second, a.find("multiple_buffering").first, "expected a number >= 1",
         describe(a.find("multiple_buffering").first));
  lv.capacity_words = static_cast<std::int64_t>(std::floor(static_cast<double>(size) / buffering));  // effective size
  if (a.has("has_power_gating") && a.find("has_power_gating").first.as<std::string>() != "false") {
    fail(a.find("has_power_gating").second, a.find("has_power_gating").first,
         "expected has_power_gating: false (gating shared across levels is not modelled; each instance is gated on its "
         "own)",
         describe(a.find("has_power_gating").first));
  }
  // Timeloop's buffer specs (model/buffer.cpp): `bandwidth`, deprecated, is half for reads and half
  // for writes unless read_bandwidth / write_bandwidth say otherwise; `shared_bandwidth` bounds
  // reads and writes together.
  const double both = a.number("bandwidth", 0.0);
  lv.read_bandwidth_words_per_cycle = a.number("read_bandwidth", both / 2.0);
  lv.write_bandwidth_words_per_cycle = a.number("write_bandwidth", both / 2.0);
  lv.shared_bandwidth_words_per_cycle = a.number("shared_bandwidth", 0.0);
  if (both < 0.0 || lv.read_bandwidth_words_per_cycle < 0.0 || lv.write_bandwidth_words_per_cycle < 0.0 ||
      lv.shared_bandwidth_words_per_cycle < 0.0) {
    fail(a.at, a.own, "expected bandwidths >= 0", describe(a.own));
  }
}

void component(const YAML::Node& n, const Place& np, ArchWalk& w) {
  const MapReader c(n, np,
                    {"name", "class", "attributes", "spatial", "constraints", "required_actions", "area_share",
                     "enabled", "subclass"});
  if (!enabled(c)) return;
  const std::string name = c.string("name");
  const std::string cls = c.string("class");
  const std::string lc = lower(cls);
  std::int64_t mx = 1, my = 1;
  mesh_of(n, np, mx, my);
  fan_out(w, name, mx, my, np, n);
  const YAML::Node own = c.has("attributes") ? c.node("attributes") : YAML::Node(YAML::NodeType::Map);
  if (!own.IsNull() && !own.IsMap()) fail(c.place("attributes"), own, "expected a mapping", describe(own));
  const Attributes attrs{own, c.place("attributes"), &w};
  if (lc.find("mac") != std::string::npos || lc == "compute") {
    w.arch.compute.name = name;
    w.arch.compute.mesh_x = w.mesh_x;
    w.arch.compute.mesh_y = w.mesh_y;
    w.arch.compute.num_rates = 1;
    w.arch.compute.rates[0] = lp::PrecisionRate{0, 1.0, 0.0};
    w.have_compute = true;
    return;
  }
  const bool storage = attrs.has("depth") || lc.find("dram") != std::string::npos ||
                       lc.find("sram") != std::string::npos || lc.find("regfile") != std::string::npos ||
                       lc.find("buffer") != std::string::npos || lc == "storage";
  if (!storage)
    refuse(c.place("class"), c.node("class"),
           "compound component class '" + cls + "' (only storage and compute are modelled)");
  lp::StorageLevel lv;
  lv.name = name;
  lv.mesh_x = w.mesh_x;
  lv.mesh_y = w.mesh_y;
  lv.power_gated = true;  // Timeloop's default: each instance gated on its own
  storage_figures(attrs, lv);
  w.arch.levels.push_back(lv);
}

void walk(const YAML::Node& nodes, const Place& at, ArchWalk& w) {
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const YAML::Node n = nodes[i];
    const Place np = at.item(i);
    const std::string tag = n.Tag();
    if (tag == "!Nothing") continue;  // a placeholder (its constraints are ignored, as the front end does)
    if (w.have_compute) fail(np, n, "expected nothing after the compute component", describe(n));
    if (tag == "!Parallel") {
      const MapReader par(n, np, {"nodes", "name"});
      walk(par.sequence("nodes"), par.place("nodes"), w);
    } else if (tag == "!Container") {
      container(n, np, w);
    } else if (tag == "!Component") {
      component(n, np, w);
    } else {
      fail(np, n, "expected a node tagged !Container, !Component, !Parallel or !Nothing",
           tag.empty() ? "no tag" : "'" + tag + "'");
    }
  }
}

}  // namespace

lp::Architecture read_timeloop_arch(const std::string& path) {
  const YAML::Node root = timeloop::load(path, "architecture").root;
  const Place top{path, ""};
  refuse_sparse(root, top);
  const MapReader doc(root, top, {"architecture"});
  const YAML::Node an = doc.node("architecture");
  if (an.IsMap() && an["subtree"].IsDefined()) {
    fail(top.child("architecture").child("subtree"), an["subtree"],
         "expected a v0.4 architecture (nodes: [...]); Timeloop's v0.3 subtree/local form is not read", "subtree");
  }
  const MapReader a(an, top.child("architecture"), {"version", "nodes"});
  ArchWalk w;
  w.file = path;
  w.arch.name = path;
  walk(a.sequence("nodes"), a.place("nodes"), w);
  if (!w.have_compute)
    fail(a.place("nodes"), a.node("nodes"), "expected a compute component (class *mac*) at the bottom", "none");
  if (w.arch.levels.empty()) fail(a.place("nodes"), a.node("nodes"), "expected at least one storage component", "none");
  if (static_cast<int>(w.arch.levels.size()) > lp::kMaxLevels) {
    fail(a.place("nodes"), a.node("nodes"),
         "expected at most " + std::to_string(lp::kMaxLevels) + " storage levels (fan-out levels included)",
         std::to_string(w.arch.levels.size()));
  }
  const std::string why = lp::validate(w.arch);
  if (!why.empty()) fail(a.place("nodes"), a.node("nodes"), "expected a valid hierarchy", why);
  return w.arch;
}

void read_timeloop_ert(const std::string& path, lp::Architecture& arch) {
  const YAML::Node root = timeloop::load(path, "ERT").root;
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
