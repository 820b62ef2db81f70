// read_timeloop_constraints: Timeloop's mapspace constraints (src/mapping/constraints.cpp,
// and the v0.4 front end's forms) from an architecture's nodes and a constraints file into
// mapper::Constraints. Re-specifying a factor, bound, permutation, split or keep/bypass of
// one level is refused, as Timeloop refuses it.
#include <algorithm>
#include <array>
#include <bit>
#include <optional>

#include "dse/io/timeloop_directives.hpp"
#include "dse/io/timeloop_writer.hpp"

namespace dse::io {

namespace lp = costmodel::loopnest;
namespace mp = costmodel::mapper;
namespace tl = timeloop;

namespace {

constexpr std::size_t sz(int i) noexcept { return static_cast<std::size_t>(i); }

// The front end's constraint macros (timeloopfe v4/processors/constraint_macro.py).
const std::vector<std::string> kMacroKeys = {"factors_only",
                                             "keep_only",
                                             "bypass_only",
                                             "no_iteration_over_dataspaces",
                                             "must_iterate_over_dataspaces",
                                             "maximize_dims",
                                             "maximize_dims_capacity"};

bool is_dataspace_type(const std::string& t) {
  return t == "dataspace" || t == "datatype" || t == "bypass" || t == "bypassing";
}

bool known_type(const std::string& t) {
  return t == "temporal" || t == "spatial" || is_dataspace_type(t) || t == "max_overbooked_proportion" ||
         t == "utilization" || t == "parallelism";
}

// The type of constraint n, refused unless Timeloop knows it.
std::string type_of(const YAML::Node& n, const Place& at) {
  if (!n.IsMap() || !n["type"].IsDefined())
    fail(at, n, "expected a constraint with a type (temporal, spatial, dataspace, ...)", describe(n));
  const std::string type = as_string(n["type"], at.child("type"));
  if (!known_type(type)) {
    fail(at.child("type"), n["type"], "expected temporal, spatial, dataspace, max_overbooked_proportion or utilization",
         describe(n["type"]));
  }
  return type;
}

std::vector<std::string> fields_of(const std::string& type) {
  std::vector<std::string> f;
  if (type == "temporal" || type == "spatial") {
    f = {"factors", "permutation", "default_max_factor", "default_min_factor", "remainders"};
    if (type == "spatial") f.emplace_back("split");
  } else if (is_dataspace_type(type)) {
    f = {"keep", "bypass"};
  } else if (type == "max_overbooked_proportion") {
    f = {"proportion"};
  } else if (type == "utilization" || type == "parallelism") {
    f = {"min"};
  }
  f.insert(f.end(), tl::kReuseKeys.begin(), tl::kReuseKeys.end());
  f.insert(f.end(), kMacroKeys.begin(), kMacroKeys.end());
  return f;
}

struct Seen {                                         // what the constraints already say about one level
  std::array<std::uint8_t, lp::kMaxDims> temporal{};  // bit 0: =, bit 1: <=, bit 2: >=
  std::array<std::uint8_t, lp::kMaxDims> spatial{};
  bool temporal_permutation = false;
  bool spatial_permutation = false;
  bool split = false;
  bool overbooked = false;
  std::uint32_t dataspaces = 0;
};

class ConstraintsBuilder {
 public:
  ConstraintsBuilder(const lp::Architecture& a, const lp::Problem& p, mp::Constraints& c) : a_(a), p_(p), c_(c) {
    fixed_product_.fill(1);
  }
  // One constraint of the given type on `target`; its fields are the keys of e.
  void apply(const tl::Document& doc, const MapReader& e, const std::string& type, const YAML::Node& target,
             const Place& target_at);

 private:
  void iteration(const tl::Document& doc, const MapReader& e, int l, bool spatial, const std::string& target);
  void factors(const tl::Document& doc, const MapReader& e, int l, bool spatial, bool fans_out);
  void permutation(const tl::Document& doc, const MapReader& e, int l, bool spatial);
  void dataspace(const MapReader& e, int l, const std::string& target);
  void respecified(const MapReader& e, const std::string& key, const std::string& what, int l) const {
    fail(
        e.place(key), e.node(key),
        "expected " + what + " of " + a_.levels[sz(l)].name + " to be given once (Timeloop refuses a re-specification)",
        describe(e.node(key)));
  }
  [[nodiscard]] bool fans_out(int l) const { return mp::fanout_x(a_, l) * mp::fanout_y(a_, l) > 1; }

  const lp::Architecture& a_;
  const lp::Problem& p_;
  mp::Constraints& c_;
  std::array<Seen, lp::kMaxLevels> seen_{};
  std::array<std::int64_t, lp::kMaxDims> fixed_product_{};
  bool utilization_seen_ = false;
};

void ConstraintsBuilder::apply(const tl::Document& doc, const MapReader& e, const std::string& type,
                               const YAML::Node& target, const Place& target_at) {
  for (const std::string& k : kMacroKeys) {
    if (e.has(k))
      fail(e.place(k), e.node(k),
           "expected factors, permutation, keep and bypass written out (the front end's constraint macro '" + k +
               "' is not supported)",
           describe(e.node(k)));
  }
  tl::refuse_reuse_keys(e);
  if (e.has("remainders"))
    fail(e.place("remainders"), e.node("remainders"),
         "expected no remainders (imperfect factorisation with remainders is not modelled)",
         describe(e.node("remainders")));
  const int l = tl::resolve_target(a_, target, target_at, type == "spatial");
  const std::string name = as_string(target, target_at);
  if (type == "temporal" || type == "spatial") {
    iteration(doc, e, l, type == "spatial", name);
  } else if (is_dataspace_type(type)) {
    dataspace(e, l, name);
  } else if (type == "max_overbooked_proportion") {
    // Overbooking only matters for a tile whose occupancy is uncertain (a sparse one):
    // a dense tile fits or it does not (Timeloop, buffer.cpp: confidence 0 or 1).
    const double v = as_number(e.node("proportion", "a number from 0 to 1"), e.place("proportion"));
    if (!(v >= 0.0 && v <= 1.0))
      fail(e.place("proportion"), e.node("proportion"), "expected a number from 0 to 1",
           describe(e.node("proportion")));
    if (l >= 0 && seen_[sz(l)].overbooked) respecified(e, "proportion", "the overbooked proportion", l);
    if (l >= 0) seen_[sz(l)].overbooked = true;
  } else if (type == "utilization" || type == "parallelism") {
    const double v = as_number(e.node("min", "a number from 0 to 1"), e.place("min"));
    if (!(v >= 0.0 && v <= 1.0))
      fail(e.place("min"), e.node("min"), "expected a number from 0 to 1", describe(e.node("min")));
    if (l != static_cast<int>(a_.levels.size()) - 1) {
      fail(target_at, target, "expected the innermost storage level (Timeloop constrains utilisation there only)",
           describe(target));
    }
    if (utilization_seen_)
      fail(e.place("min"), e.node("min"), "expected the least utilisation given once", describe(e.node("min")));
    utilization_seen_ = true;
    c_.min_utilization = v;
  }
}

void ConstraintsBuilder::iteration(const tl::Document& doc, const MapReader& e, int l, bool spatial,
                                   const std::string& target) {
  if (l == tl::kNoLevel || (!spatial && a_.levels[sz(l)].may_keep == 0 && a_.levels[sz(l)].capacity_words == 0)) {
    // No loops of its own: a container without a fan-out, or a fan-out level's temporal loops
    // (fixed at 1 by the front end's dummy constraints).
    if (e.has("factors")) {
      for (const tl::Factor& f : tl::parse_factors(doc, e.node("factors"), e.place("factors"), p_, true)) {
        if (f.op != tl::FactorOp::eq || f.value != 1)
          tl::fail_at(e.place("factors"), f.pos, "expected factors of 1 (" + target + " has no loops of its own here)",
                      "'" + f.text + "'");
      }
    }
    if (e.has("permutation")) (void)tl::parse_permutation(doc, e.node("permutation"), e.place("permutation"), p_, true);
    return;
  }
  factors(doc, e, l, spatial, fans_out(l));
  permutation(doc, e, l, spatial);
}

void ConstraintsBuilder::factors(const tl::Document& doc, const MapReader& e, int l, bool spatial, bool fans) {
  mp::LevelConstraint& lc = c_.levels[sz(l)];
  auto& seen = spatial ? seen_[sz(l)].spatial : seen_[sz(l)].temporal;
  auto& fixed = spatial ? lc.spatial : lc.temporal;
  auto& most = spatial ? lc.spatial_max : lc.temporal_max;
  auto& least = spatial ? lc.spatial_min : lc.temporal_min;
  const std::vector<tl::Factor> fs = e.has("factors")
                                         ? tl::parse_factors(doc, e.node("factors"), e.place("factors"), p_, true)
                                         : std::vector<tl::Factor>{};
  for (const tl::Factor& f : fs) {
    const auto d = sz(f.dim);
    const std::uint8_t bit = f.op == tl::FactorOp::eq ? 1 : f.op == tl::FactorOp::le ? 2 : 4;
    if ((seen[d] & bit) != 0)
      tl::fail_at(e.place("factors"), f.pos,
                  "expected one factor per dimension and level (Timeloop refuses a re-specification)",
                  "'" + f.text + "'");
    seen[d] |= bit;
    const std::int64_t size = p_.dim_sizes[d];
    if (f.value > size)
      tl::fail_at(e.place("factors"), f.pos,
                  "expected a factor of at most the size of " + p_.dim_names[d] + ", " + std::to_string(size),
                  "'" + f.text + "'");
    if (f.op == tl::FactorOp::le) {
      most[d] = f.value;
    } else if (f.op == tl::FactorOp::ge) {
      least[d] = f.value;
    } else {
      if (spatial && f.value > 1 && !fans) {
        tl::fail_at(e.place("factors"), f.pos,
                    "expected spatial factors of 1 (" + a_.levels[sz(l)].name + " does not fan out)",
                    "'" + f.text + "'");
      }
      fixed[d] = f.value;
      if (__builtin_mul_overflow(fixed_product_[d], f.value, &fixed_product_[d]) || fixed_product_[d] > size) {
        tl::fail_at(e.place("factors"), f.pos,
                    "expected the fixed factors of " + p_.dim_names[d] + " to multiply to at most its size " +
                        std::to_string(size),
                    "'" + f.text + "'");
      }
    }
  }
  for (const char* key : {"default_max_factor", "default_min_factor"}) {
    if (!e.has(key)) continue;
    const std::int64_t v = tl::parse_count(e.node(key), e.place(key), std::int64_t{1} << 62);
    if (v < 1) fail(e.place(key), e.node(key), "expected an integer >= 1", describe(e.node(key)));
    const bool max = std::string(key) == "default_max_factor";
    auto& bound = max ? most : least;
    for (int d = 0; d < p_.num_dims; ++d) {
      if ((seen[sz(d)] & (max ? 2 : 4)) == 0 && bound[sz(d)] == 0) bound[sz(d)] = v;
    }
  }
}

void ConstraintsBuilder::permutation(const tl::Document& doc, const MapReader& e, int l, bool spatial) {
  mp::LevelConstraint& lc = c_.levels[sz(l)];
  Seen& seen = seen_[sz(l)];
  const int nd = p_.num_dims;
  std::vector<int> listed;
  if (e.has("permutation")) {
    if (spatial ? seen.spatial_permutation : seen.temporal_permutation)
      respecified(e, "permutation", "the permutation", l);
    (spatial ? seen.spatial_permutation : seen.temporal_permutation) = true;
    const tl::Permutation perm =
        tl::parse_permutation(doc, e.node("permutation"), e.place("permutation"), p_, !spatial);
    if (!spatial) {
      lc.num_permutation = static_cast<int>(perm.inner.size());
      for (std::size_t i = 0; i < perm.inner.size(); ++i) lc.permutation[i] = static_cast<std::int8_t>(perm.inner[i]);
      lc.num_outer_permutation = static_cast<int>(perm.outer.size());
      for (std::size_t i = 0; i < perm.outer.size(); ++i)
        lc.outer_permutation[i] = static_cast<std::int8_t>(perm.outer[i]);
      return;
    }
    listed = perm.inner;
  }
  if (!spatial || !e.has("split")) {
    if (spatial) {
      lc.num_spatial_permutation = static_cast<int>(listed.size());
      for (std::size_t i = 0; i < listed.size(); ++i) lc.spatial_permutation[i] = static_cast<std::int8_t>(listed[i]);
    }
    return;  // no split: the mapper chooses the axes
  }
  if (seen.split) respecified(e, "split", "the split", l);
  seen.split = true;
  const std::int64_t split =
      std::min<std::int64_t>(tl::parse_count(e.node("split"), e.place("split"), std::int64_t{1} << 31), nd);
  // Timeloop pads the permutation with the dimensions it leaves out (in an order of its
  // choosing): their axis is fixed only when the split falls outside them.
  const auto n = static_cast<std::int64_t>(listed.size());
  if (split <= n || split >= nd) {
    for (int d = 0; d < nd; ++d) {
      if (std::find(listed.begin(), listed.end(), d) == listed.end()) listed.push_back(d);
    }
  }
  lc.num_spatial_permutation = static_cast<int>(listed.size());
  for (std::size_t i = 0; i < listed.size(); ++i) lc.spatial_permutation[i] = static_cast<std::int8_t>(listed[i]);
  lc.spatial_split = static_cast<int>(split);
}

void ConstraintsBuilder::dataspace(const MapReader& e, int l, const std::string& target) {
  const std::uint32_t keep = e.has("keep") ? tl::parse_dataspaces(e.node("keep"), e.place("keep"), p_) : 0;
  const std::uint32_t bypass = e.has("bypass") ? tl::parse_dataspaces(e.node("bypass"), e.place("bypass"), p_) : 0;
  if ((keep & bypass) != 0) {
    fail(e.place("bypass"), e.node("bypass"), "expected a data space either kept or bypassed, not both",
         "'" + p_.tensors[sz(std::countr_zero(keep & bypass))].name + "' in keep and bypass");
  }
  if (l == tl::kNoLevel || a_.levels[sz(l)].may_keep == 0) {
    if (keep != 0)
      fail(e.place("keep"), e.node("keep"), "expected no kept data spaces (" + target + " holds no data)",
           describe(e.node("keep")));
    return;
  }
  Seen& seen = seen_[sz(l)];
  const std::uint32_t again = (keep | bypass) & seen.dataspaces;
  if (again != 0) {
    fail(e.place(e.has("keep") && (keep & again) != 0 ? "keep" : "bypass"),
         e.node(e.has("keep") && (keep & again) != 0 ? "keep" : "bypass"),
         "expected each data space kept or bypassed once per level (Timeloop refuses a re-specification)",
         "'" + p_.tensors[sz(std::countr_zero(again))].name + "' again for " + a_.levels[sz(l)].name);
  }
  seen.dataspaces |= keep | bypass;
  if ((keep & ~a_.levels[sz(l)].may_keep) != 0)
    fail(e.place("keep"), e.node("keep"), "expected data spaces this level can hold", describe(e.node("keep")));
  if (l == 0 && bypass != 0) {
    fail(e.place("bypass"), e.node("bypass"),
         "expected no bypass at the outermost level (every data space starts in " + a_.levels[0].name + ")",
         describe(e.node("bypass")));
  }
  mp::LevelConstraint& lc = c_.levels[sz(l)];
  lc.keep |= keep;
  lc.bypass |= bypass;
}

// The constraints written on the architecture's nodes: {spatial, temporal, dataspace,
// max_overbooked_proportion} maps, their target the node.
void walk_nodes(const tl::Document& doc, const YAML::Node& nodes, const Place& at, ConstraintsBuilder& b) {
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const YAML::Node n = nodes[i];
    const Place np = at.item(i);
    if (!n.IsMap() || n.Tag() == "!Nothing") continue;
    if (n.Tag() == "!Parallel") {
      walk_nodes(doc, n["nodes"], np.child("nodes"), b);
      continue;
    }
    const YAML::Node cons = n["constraints"];
    if (!cons.IsDefined() || cons.IsNull()) continue;
    const YAML::Node en = n["enabled"];
    if (en.IsDefined() && en.IsScalar() && en.Scalar() == "false") continue;
    const MapReader group(cons, np.child("constraints"),
                          {"spatial", "temporal", "dataspace", "max_overbooked_proportion"});
    for (const char* type : {"dataspace", "temporal", "spatial", "max_overbooked_proportion"}) {
      if (!group.has(type)) continue;
      const YAML::Node g = group.node(type);
      if (g.IsNull()) continue;
      b.apply(doc, MapReader(g, group.place(type), fields_of(type)), type, n["name"], np.child("name"));
    }
  }
}

// One entry of a constraints file: {target, type, ...}, or Timeloop's older
// {target, constraints: [{type, ...}, ...]}.
void file_entry(const tl::Document& doc, const YAML::Node& n, const Place& at, ConstraintsBuilder& b) {
  if (!n.IsMap()) fail(at, n, "expected a constraint (target, type, ...)", describe(n));
  const char* tkey = n["target"].IsDefined() ? "target" : "name";
  if (n["constraints"].IsDefined()) {
    const MapReader e(n, at, {"target", "name", "constraints"});
    const YAML::Node list = e.node("constraints");
    if (!list.IsSequence()) fail(e.place("constraints"), list, "expected a sequence of constraints", describe(list));
    for (std::size_t i = 0; i < list.size(); ++i) {
      const Place cp = e.place("constraints").item(i);
      const std::string type = type_of(list[i], cp);
      std::vector<std::string> keys = fields_of(type);
      keys.emplace_back("type");
      b.apply(doc, MapReader(list[i], cp, keys), type, e.node(tkey, "a storage level or container"), e.place(tkey));
    }
    return;
  }
  const std::string type = type_of(n, at);
  std::vector<std::string> keys = fields_of(type);
  keys.insert(keys.end(), {"target", "name", "type"});
  const MapReader e(n, at, keys);
  b.apply(doc, e, e.string("type"), e.node(tkey, "a storage level or container"), e.place(tkey));
}

// The list of constraint entries of a constraints file, in any of Timeloop's layouts.
std::pair<YAML::Node, Place> entries_of(const tl::Document& doc) {
  const Place top{doc.file, ""};
  YAML::Node node = doc.root;
  Place at = top;
  for (int depth = 0; depth < 3; ++depth) {
    if (node.IsSequence() || node.IsNull()) return {node, at};
    if (!node.IsMap()) break;
    std::string key;
    for (const auto& kv : node) {
      const std::string k = kv.first.Scalar();
      if (k == "version") continue;
      if (k == "targets" || k == "mapspace" || k.find("constraints") != std::string::npos) {
        if (!key.empty())
          fail(at.child(k), kv.first, "expected one list of constraints", "'" + key + "' and '" + k + "'");
        key = k;
      } else {
        fail(at.child(k), kv.first,
             "expected mapspace_constraints, constraints or targets (a Timeloop constraints file)", "'" + k + "'");
      }
    }
    if (key.empty()) return {YAML::Node(YAML::NodeType::Null), at};
    node = node[key];
    at = at.child(key);
  }
  fail(at, node, "expected a sequence of constraints", describe(node));
}

}  // namespace

namespace {

// The constraints of the architecture document's own nodes and of a constraints document.
mp::Constraints bind_documents(const tl::Document& arch_doc, const tl::Document* constraints_doc, const lp::Architecture& arch,
                               const lp::Problem& problem) {
  mp::Constraints c;
  ConstraintsBuilder b(arch, problem, c);
  {
    // A native loop-nest hardware file has no `architecture` (its constraints come from the file alone).
    const YAML::Node& root = arch_doc.root;
    const YAML::Node arch_node = root.IsMap() && root["architecture"].IsDefined() ? root["architecture"] : YAML::Node();
    const YAML::Node nodes = arch_node.IsMap() && arch_node["nodes"].IsDefined() ? arch_node["nodes"] : YAML::Node();
    const Place at = Place{arch_doc.file, ""}.child("architecture").child("nodes");
    if (nodes.IsDefined() && nodes.IsSequence()) walk_nodes(arch_doc, nodes, at, b);
  }
  if (constraints_doc != nullptr) {
    const auto [list, at] = entries_of(*constraints_doc);
    for (std::size_t i = 0; list.IsSequence() && i < list.size(); ++i) file_entry(*constraints_doc, list[i], at.item(i), b);
  }
  return c;
}

}  // namespace

mp::Constraints read_timeloop_constraints(const std::string& arch_path, const std::string& constraints_path,
                                          const lp::Architecture& arch, const lp::Problem& problem) {
  const tl::Document arch_doc = tl::load(arch_path, "architecture");
  if (constraints_path.empty()) return bind_documents(arch_doc, nullptr, arch, problem);
  const tl::Document constraints_doc = tl::load(constraints_path, "mapspace_constraints");
  return bind_documents(arch_doc, &constraints_doc, arch, problem);
}

struct TimeloopConstraintSource::Documents {
  tl::Document arch;
  std::optional<tl::Document> constraints;
};

TimeloopConstraintSource::TimeloopConstraintSource(const std::string& arch_path, const std::string& constraints_path)
    : docs_(std::make_shared<Documents>()) {
  docs_->arch = tl::load(arch_path, "architecture");
  if (!constraints_path.empty()) docs_->constraints = tl::load(constraints_path, "mapspace_constraints");
}

mp::Constraints TimeloopConstraintSource::bind(const lp::Architecture& arch, const lp::Problem& problem) const {
  const std::lock_guard<std::mutex> lock(*mu_);
  return bind_documents(docs_->arch, docs_->constraints ? &*docs_->constraints : nullptr, arch, problem);
}

}  // namespace dse::io
