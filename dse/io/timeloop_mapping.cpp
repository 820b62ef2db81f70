// read_timeloop_mapping: Timeloop v0.4 mapping directives (src/mapping/parser.cpp and the
// front end's v4 forms) into a loopnest::Mapping, every figure range-checked where it is
// read. See timeloop_reader.hpp for the rules.
#include <algorithm>
#include <array>
#include <bit>

#include "dse/io/timeloop_directives.hpp"
#include "dse/io/timeloop_reader.hpp"

namespace dse::io {

namespace lp = costmodel::loopnest;
namespace tl = timeloop;

namespace {

constexpr std::size_t sz(int i) noexcept { return static_cast<std::size_t>(i); }

std::string where(tl::Position p) { return "line " + std::to_string(p.line) + " column " + std::to_string(p.column); }

bool is_loop_type(const std::string& t) { return t == "temporal" || t == "spatial"; }
bool is_dataspace_type(const std::string& t) {
  return t == "datatype" || t == "bypass" || t == "dataspace" || t == "bypassing";
}

struct LevelSeen {
  tl::Position temporal{0, 0};  // line 0: no directive yet
  tl::Position spatial{0, 0};
  std::uint32_t specified = 0;  // data spaces a dataspace directive named here
};

class MappingBuilder {
 public:
  MappingBuilder(const tl::Document& doc, const lp::Architecture& a, const lp::Problem& p, bool imperfect)
      : doc_(doc), a_(a), p_(p), imperfect_(imperfect) {
    m_ = lp::make_empty_mapping(a, p);
    product_.fill(1);
  }

  void directive(const YAML::Node& n, const Place& at);
  lp::Mapping finish(const YAML::Node& entries, const Place& at) const;

 private:
  void loops(const MapReader& e, int l, bool spatial);
  void dataspaces(const MapReader& e, int l);
  void multiply(const tl::Factor& f, const Place& at);
  [[nodiscard]] tl::Position start(const MapReader& e) const { return tl::token_position(doc_, e.self(), 0, ""); }

  const tl::Document& doc_;
  const lp::Architecture& a_;
  const lp::Problem& p_;
  bool imperfect_;
  lp::Mapping m_;
  std::array<LevelSeen, lp::kMaxLevels> seen_{};
  std::array<std::int64_t, lp::kMaxDims> product_{};
};

void MappingBuilder::directive(const YAML::Node& n, const Place& at) {
  if (!n.IsMap()) fail(at, n, "expected a mapping directive (target, type, ...)", describe(n));
  if (!n["type"].IsDefined())
    fail(at, n, "expected a directive with a type (temporal, spatial or dataspace)", describe(n));
  const std::string type = as_string(n["type"], at.child("type"));
  if (type == "skew")
    fail(at.child("type"), n["type"], "expected temporal, spatial or dataspace (skew directives are not modelled)",
         "'skew'");
  if (!is_loop_type(type) && !is_dataspace_type(type)) {
    fail(at.child("type"), n["type"], "expected temporal, spatial, dataspace, datatype or bypass", describe(n["type"]));
  }
  std::vector<std::string> keys = {"target", "type"};
  if (is_loop_type(type)) {
    keys.insert(keys.end(), {"factors", "permutation"});
    if (type == "spatial") keys.emplace_back("split");
  } else if (is_dataspace_type(type)) {
    keys.insert(keys.end(), {"keep", "bypass"});
  }
  keys.insert(keys.end(), tl::kReuseKeys.begin(), tl::kReuseKeys.end());
  const MapReader e(n, at, keys);
  tl::refuse_reuse_keys(e);
  const int l =
      tl::resolve_target(a_, e.node("target", "a storage level or container"), e.place("target"), type == "spatial");
  if (is_loop_type(type)) {
    loops(e, l, type == "spatial");
  } else {
    dataspaces(e, l);
  }
}

void MappingBuilder::multiply(const tl::Factor& f, const Place& at) {
  std::int64_t& prod = product_[sz(f.dim)];
  const std::string& dn = p_.dim_names[sz(f.dim)];
  const std::int64_t size = p_.dim_sizes[sz(f.dim)];
  if (__builtin_mul_overflow(prod, f.value, &prod)) {
    tl::fail_at(at, f.pos, "expected factors of " + dn + " whose product fits in 64 bits", "'" + f.text + "'");
  }
  if (prod > size && !imperfect_) {
    tl::fail_at(at, f.pos,
                "expected the factors of " + dn + " to multiply to its size " + std::to_string(size) + " (they reach " +
                    std::to_string(prod) + " here; only a mapping marked 'imperfect_factors: padded' may pad)",
                "'" + f.text + "'");
  }
}

void MappingBuilder::loops(const MapReader& e, int l, bool spatial) {
  const std::vector<tl::Factor> fs = e.has("factors")
                                         ? tl::parse_factors(doc_, e.node("factors"), e.place("factors"), p_, false)
                                         : std::vector<tl::Factor>{};
  const tl::Permutation perm =
      e.has("permutation") ? tl::parse_permutation(doc_, e.node("permutation"), e.place("permutation"), p_, false)
                           : tl::Permutation{};
  const std::int64_t split =
      e.has("split") ? tl::parse_count(e.node("split"), e.place("split"), std::int64_t{1} << 31) : p_.num_dims;
  if (l == tl::kNoLevel) {
    // A container without a fan-out: Timeloop's front end drops its directives.
    for (const tl::Factor& f : fs) {
      if (f.value != 1) {
        tl::fail_at(e.place("factors"), f.pos,
                    "expected factors of 1 (" + e.string("target") +
                        " is a container without a spatial fan-out, so no tiling level)",
                    "'" + f.text + "'");
      }
    }
    return;
  }
  LevelSeen& seen = seen_[sz(l)];
  tl::Position& first = spatial ? seen.spatial : seen.temporal;
  if (first.line != 0) {
    fail(e.place("type"), e.node("type"),
         std::string("expected one ") + (spatial ? "spatial" : "temporal") + " directive per level (" +
             a_.levels[sz(l)].name + " has one at " + where(first) + ")",
         "a second one");
  }
  first = start(e);
  const lp::StorageLevel& lv = a_.levels[sz(l)];
  const std::int64_t below_x = sz(l) + 1 < a_.levels.size() ? a_.levels[sz(l) + 1].mesh_x : a_.compute.mesh_x;
  const std::int64_t below_y = sz(l) + 1 < a_.levels.size() ? a_.levels[sz(l) + 1].mesh_y : a_.compute.mesh_y;
  const bool fans_out = below_x * below_y > lv.instances();
  lp::LevelMapping& lm = m_.levels[sz(l)];
  const bool fanout_only = lv.may_keep == 0 && lv.capacity_words == 0;
  for (const tl::Factor& f : fs) {
    if (!spatial && f.value != 1 && fanout_only) {
      tl::fail_at(
          e.place("factors"), f.pos,
          "expected temporal factors of 1 (" + lv.name + " holds no data; Timeloop fixes its temporal loops at 1)",
          "'" + f.text + "'");
    }
    if (spatial && f.value != 1 && !fans_out) {
      tl::fail_at(e.place("factors"), f.pos,
                  "expected spatial factors of 1 (" + lv.name +
                      " does not fan out; spatial factors go on the container or component that does)",
                  "'" + f.text + "'");
    }
    multiply(f, e.place("factors"));
    (spatial ? lm.spatial : lm.temporal)[sz(f.dim)] = f.value;
  }
  // Timeloop's nest: the permutation innermost first, then the dimensions it leaves out
  // in their order (parser.cpp pads the permutation so).
  std::vector<int> full = perm.inner;
  for (int d = 0; d < p_.num_dims; ++d) {
    if (std::find(full.begin(), full.end(), d) == full.end()) full.push_back(d);
  }
  if (spatial) {
    for (std::size_t k = 0; k < full.size(); ++k) {
      lm.axis[sz(full[k])] = static_cast<std::int64_t>(k) < split ? lp::Axis::x : lp::Axis::y;
    }
  } else {
    for (std::size_t k = 0; k < full.size(); ++k) lm.order[k] = static_cast<std::int8_t>(full[full.size() - 1 - k]);
  }
}

void MappingBuilder::dataspaces(const MapReader& e, int l) {
  const std::uint32_t keep = e.has("keep") ? tl::parse_dataspaces(e.node("keep"), e.place("keep"), p_) : 0;
  const std::uint32_t bypass = e.has("bypass") ? tl::parse_dataspaces(e.node("bypass"), e.place("bypass"), p_) : 0;
  const std::string target = as_string(e.node("target"), e.place("target"));
  if ((keep & bypass) != 0) {
    fail(e.place("bypass"), e.node("bypass"), "expected a data space either kept or bypassed, not both",
         "'" + p_.tensors[sz(std::countr_zero(keep & bypass))].name + "' in keep and bypass");
  }
  if (l == tl::kNoLevel || a_.levels[sz(l)].may_keep == 0) {
    if (keep != 0) {
      fail(e.place("keep"), e.node("keep"),
           "expected no kept data spaces (" + target + " is a container, which holds no data)",
           describe(e.node("keep")));
    }
    return;
  }
  LevelSeen& seen = seen_[sz(l)];
  const std::uint32_t again = (keep | bypass) & seen.specified;
  if (again != 0) {
    fail(e.place("target"), e.node("target"), "expected each data space kept or bypassed once per level",
         "'" + p_.tensors[sz(std::countr_zero(again))].name + "' set again for " + a_.levels[sz(l)].name);
  }
  seen.specified |= keep | bypass;
  if ((keep & ~a_.levels[sz(l)].may_keep) != 0) {
    fail(e.place("keep"), e.node("keep"), "expected data spaces this level can hold", describe(e.node("keep")));
  }
  if (l == 0 && bypass != 0) {
    fail(e.place("bypass"), e.node("bypass"),
         "expected no bypass at the outermost level (every data space starts in " + a_.levels[0].name + ")",
         describe(e.node("bypass")));
  }
  lp::LevelMapping& lm = m_.levels[sz(l)];
  lm.keep = (lm.keep | keep) & ~bypass;
}

lp::Mapping MappingBuilder::finish(const YAML::Node& entries, const Place& at) const {
  for (int d = 0; d < p_.num_dims; ++d) {
    if (product_[sz(d)] < p_.dim_sizes[sz(d)]) {
      fail(at, entries,
           "expected the factors of " + p_.dim_names[sz(d)] + " to multiply to its size " +
               std::to_string(p_.dim_sizes[sz(d)]),
           "a product of " + std::to_string(product_[sz(d)]));
    }
  }
  return m_;
}

}  // namespace

lp::Mapping read_timeloop_mapping(const std::string& path, const lp::Architecture& arch, const lp::Problem& p) {
  const tl::Document doc = tl::load(path, "mapping");
  const Place top{path, ""};
  const MapReader root(doc.root, top, {"mapping", "imperfect_factors"});
  bool imperfect = false;
  if (root.has("imperfect_factors")) {
    if (root.string("imperfect_factors") != "padded") {
      fail(root.place("imperfect_factors"), root.node("imperfect_factors"), "expected 'padded'",
           describe(root.node("imperfect_factors")));
    }
    imperfect = true;
  }
  const YAML::Node entries = root.node("mapping", "a sequence of mapping directives");
  if (!entries.IsSequence())
    fail(root.place("mapping"), entries, "expected a sequence of mapping directives", describe(entries));
  MappingBuilder b(doc, arch, p, imperfect);
  for (std::size_t i = 0; i < entries.size(); ++i) b.directive(entries[i], root.place("mapping").item(i));
  return b.finish(entries, root.place("mapping"));
}

}  // namespace dse::io
