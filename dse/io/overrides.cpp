#include "dse/io/overrides.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <filesystem>
#include <map>
#include <optional>

#include "costmodel/system/cost.hpp"
#include "dse/error.hpp"
#include "dse/io/knob_values.hpp"
#include "dse/parallel.hpp"

namespace dse::io {

namespace pf = costmodel::platform;
namespace sys = costmodel::system;

namespace {

// The texts of the three files a system is read from; each build parses its own trees (yaml-cpp
// trees are not shared between threads).
struct SystemTexts {
  std::string system_file, system_text;
  std::string chip_file, chip_text;
  std::string sidecar_file, sidecar_text;  // "" when the chip has no platform/ sidecar
  sys::ChipBuild preset;                   // what the unchanged chip's price is built from
};

sys::ChipBuild build_of(const pf::Platform& p) {
  return {p.die_area_mm2, p.process_nm, p.gpu.hbm_bytes, p.gpu.hbm_peak_bandwidth_bytes_per_s};
}

SystemTexts read_texts(const std::string& system_file) {
  SystemTexts t;
  t.system_file = system_file;
  t.system_text = read_text_file(system_file, "system file");
  t.chip_file = resolve_hardware_path(system_chip_name(parse_yaml(t.system_text, system_file), system_file));
  t.chip_text = read_text_file(t.chip_file, "hardware file");
  t.sidecar_file = platform_sidecar_path(t.chip_file);
  if (!t.sidecar_file.empty()) t.sidecar_text = read_text_file(t.sidecar_file, "platform file");
  t.preset = build_of(load_platform(t.chip_file));
  return t;
}

struct Trees {
  YAML::Node system, chip, sidecar;
};

Trees parse_trees(const SystemTexts& t) {
  Trees r;
  r.system = parse_yaml(t.system_text, t.system_file);
  r.chip = parse_yaml(t.chip_text, t.chip_file);
  if (!t.sidecar_file.empty()) r.sidecar = parse_yaml(t.sidecar_text, t.sidecar_file);
  return r;
}

// The tree a path's keys live in, and the keys (without chip./system.).
struct Target {
  YAML::Node root;
  std::vector<std::string> keys;
};

std::optional<Target> target_of(const Trees& trees, const std::string& path) {
  std::vector<std::string> segs = split_path(path);
  if (segs.size() < 2 || (segs[0] != "chip" && segs[0] != "system")) return std::nullopt;
  const bool chip = segs[0] == "chip";
  segs.erase(segs.begin());
  const bool in_sidecar = chip && trees.sidecar.IsDefined() && trees.sidecar.IsMap() && trees.sidecar[segs[0]];
  return Target{!chip ? trees.system : in_sidecar ? trees.sidecar : trees.chip, segs};
}

// The element of a sequence a key names: the map whose `name` is the key, else the position.
std::optional<std::size_t> element(const YAML::Node& seq, const std::string& key) {
  for (std::size_t i = 0; i < seq.size(); ++i)
    if (seq[i].IsMap() && seq[i]["name"] && seq[i]["name"].IsScalar() && seq[i]["name"].Scalar() == key) return i;
  if (!key.empty() && std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
      key.size() < 9) {
    const std::size_t i = std::stoul(key);
    if (i < seq.size()) return i;
  }
  return std::nullopt;
}

// The number `keys` name in a tree (its node, to be set), or nothing when they name none.
std::optional<YAML::Node> number_node(const YAML::Node& root, const std::vector<std::string>& keys) {
  // reset() rebinds the handle; assigning one node to another would change the tree.
  YAML::Node n;
  n.reset(root);
  for (const auto& k : keys) {
    if (n.IsMap()) {
      if (!n[k]) return std::nullopt;
      n.reset(n[k]);
    } else if (n.IsSequence()) {
      const auto i = element(n, k);
      if (!i) return std::nullopt;
      n.reset(n[*i]);
    } else {
      return std::nullopt;
    }
  }
  double v = 0.0;
  if (!n.IsScalar() || !YAML::convert<double>::decode(n, v)) return std::nullopt;
  return n;
}

// The number a path names in the trees, or nothing.
std::optional<YAML::Node> number_node(const Trees& trees, const std::string& path) {
  const auto t = target_of(trees, path);
  if (!t) return std::nullopt;
  return number_node(t->root, t->keys);
}

// Every path to a number of the trees (for the did-you-mean of an unknown path).
void number_paths(const YAML::Node& n, const std::string& prefix, std::vector<std::string>& out) {
  if (n.IsMap()) {
    for (const auto& kv : n)
      if (kv.first.IsScalar()) number_paths(kv.second, prefix + "." + kv.first.Scalar(), out);
  } else if (n.IsSequence()) {
    for (std::size_t i = 0; i < n.size(); ++i) {
      const bool named = n[i].IsMap() && n[i]["name"] && n[i]["name"].IsScalar();
      number_paths(n[i], prefix + "." + (named ? n[i]["name"].Scalar() : std::to_string(i)), out);
    }
  } else if (double v = 0.0; n.IsScalar() && YAML::convert<double>::decode(n, v)) {
    out.push_back(prefix);
  }
}

std::vector<std::string> number_paths(const Trees& trees) {
  std::vector<std::string> out;
  number_paths(trees.chip, "chip", out);
  if (trees.sidecar.IsDefined()) number_paths(trees.sidecar, "chip", out);
  number_paths(trees.system, "system", out);
  return out;
}

// The path a mistyped one most likely meant: among those with the same parent keys, the last key
// by edit distance less the length of the prefix they share (keys begin with their subject:
// hbm_bandwith_bytes_per_s is hbm_peak_bandwidth_bytes_per_s, not l2_bandwidth_bytes_per_s),
// else the whole path by edit distance.
std::string closest_path(const std::string& path, const std::vector<std::string>& candidates) {
  const auto dot = path.rfind('.');
  const std::string parent = path.substr(0, dot + 1);
  const std::string key = path.substr(dot + 1);
  std::string best;
  long best_score = static_cast<long>(std::max<std::size_t>(2, key.size() / 3)) + 1;
  for (const auto& c : candidates) {
    if (c.size() <= parent.size() || c.compare(0, parent.size(), parent) != 0 ||
        c.find('.', parent.size()) != std::string::npos)
      continue;
    const std::string other = c.substr(parent.size());
    std::size_t prefix = 0;
    while (prefix < key.size() && prefix < other.size() && key[prefix] == other[prefix]) ++prefix;
    const long score = static_cast<long>(edit_distance(key, other)) - static_cast<long>(prefix);
    if (score < best_score) {
      best_score = score;
      best = c;
    }
  }
  return best.empty() ? did_you_mean(path, candidates) : best;
}

// "" when `path` names a number of the files, else what was expected (with the closest path).
std::string unknown_path(const SystemTexts& texts, const std::string& path) {
  const Trees trees = parse_trees(texts);
  if (number_node(trees, path)) return {};
  const std::string near = closest_path(path, number_paths(trees));
  const std::string files = std::filesystem::path(texts.chip_file).filename().string() + ", its platform sidecar or " +
                            std::filesystem::path(texts.system_file).filename().string();
  return "expected chip.<keys> or system.<keys>, a number of " + files +
         (near.empty() ? std::string() : ", did you mean '" + near + "'?");
}

// The system read from the files with `values` set (paths checked before).
SystemFile build_system(const SystemTexts& texts, const std::vector<OverrideValue>& values) {
  const Trees t = parse_trees(texts);
  bool chip_price_set = false;
  for (const auto& [path, v] : values) {
    YAML::Node n = *number_node(t, path);
    n = exact_number_text(v);
    chip_price_set = chip_price_set || path == "system.cost.chip_usd";
  }
  YAML::Emitter chip_text;
  chip_text << t.chip;
  pf::Platform chip = parse_platform(chip_text.c_str(), texts.chip_file);
  if (!texts.sidecar_file.empty()) read_platform_sidecar(t.sidecar, texts.sidecar_file, chip);
  SystemFile out = read_system(t.system, texts.system_file, &chip);
  if (!chip_price_set && !out.system.price.rented() && out.system.price.chip_usd > 0.0)
    out.system.price.chip_usd = sys::derived_chip_usd(out.system.price.chip_usd, texts.preset, build_of(out.chip));
  return out;
}

// What a reader said, without its own place and value: "KEY: expected ...".
std::string reader_message(const Error& e) {
  std::string what = e.what();
  if (const auto* c = dynamic_cast<const ConfigError*>(&e)) {
    const std::string head = c->file + ":" + std::to_string(c->line) + ":" + std::to_string(c->column) + ": ";
    if (what.rfind(head, 0) == 0) what = what.substr(head.size());
    if (const auto got = what.rfind(" (got "); got != std::string::npos) what = what.substr(0, got);
    return std::filesystem::path(c->file).filename().string() + " refuses it: " + what;
  }
  return "the files refuse it: " + what;
}

std::string values_text(const std::vector<OverrideValue>& values, const char* lead) {
  std::string out;
  for (const auto& [path, v] : values)
    out += (out.empty() ? "" : " ") + std::string(lead) + path + "=" + exact_number_text(v);
  return out;
}

// One knob's values: a number, a range, or {times: ...} over each path's value in the files.
std::vector<std::vector<double>> knob_values(const YAML::Node& n, const Place& at,
                                             const std::vector<std::string>& paths, const SystemTexts& texts) {
  std::vector<std::vector<double>> out;
  const bool group = n.IsMap() && n["paths"];
  const MapReader m(n.IsMap() ? n : YAML::Node(YAML::NodeType::Map), at,
                    group ? std::vector<std::string>{"paths", "choices", "linear", "log", "times"}
                          : std::vector<std::string>{"choices", "linear", "log", "times"});
  if (n.IsMap() && n.size() != (group ? 2u : 1u))
    fail(at, n, "expected exactly one of choices, linear, log, times", describe(n));
  if (m.has("times")) {
    const Trees trees = parse_trees(texts);
    for (const double f : read_knob_values(m.node("times"), m.place("times"), false)) {
      std::vector<double> row;
      for (const auto& p : paths) row.push_back(number_node(trees, p)->as<double>() * f);
      out.push_back(row);
    }
    return out;
  }
  if (group && m.has("choices") && m.sequence("choices")[0].IsSequence()) {  // one value per path
    const YAML::Node c = m.sequence("choices");
    for (std::size_t i = 0; i < c.size(); ++i) {
      const Place p = m.place("choices").item(i);
      if (!c[i].IsSequence() || c[i].size() != paths.size())
        fail(p, c[i], "expected a list of " + std::to_string(paths.size()) + " numbers (one per path)", describe(c[i]));
      std::vector<double> row;
      for (std::size_t j = 0; j < paths.size(); ++j) row.push_back(as_number(c[i][j], p.item(j)));
      out.push_back(row);
    }
    return out;
  }
  YAML::Node range(YAML::NodeType::Map);  // a group's range without its paths
  if (group) {
    for (const char* k : {"choices", "linear", "log"})
      if (m.has(k)) range[k] = m.node(k);
  }
  for (const double v : read_knob_values(group ? range : n, at, false)) out.emplace_back(paths.size(), v);
  return out;
}

// The paths of a knob keyed `key`: the key itself, or a group's `paths:`; each checked.
std::vector<std::string> knob_paths(const YAML::Node& key, const YAML::Node& value, const Place& at,
                                    const SystemTexts& texts) {
  std::vector<std::string> paths;
  if (value.IsMap() && value["paths"]) {
    const MapReader m(value, at, {"paths", "choices", "linear", "log", "times"});
    const YAML::Node ps = m.sequence("paths");
    for (std::size_t i = 0; i < ps.size(); ++i) {
      const std::string p = as_string(ps[i], m.place("paths").item(i));
      if (const std::string why = unknown_path(texts, p); !why.empty())
        fail(m.place("paths").item(i), ps[i], why, "\"" + p + "\"");
      if (std::find(paths.begin(), paths.end(), p) != paths.end())
        fail(m.place("paths").item(i), ps[i], "expected a path not listed before", "\"" + p + "\"");
      paths.push_back(p);
    }
    return paths;
  }
  const std::string p = key.Scalar();
  if (const std::string why = unknown_path(texts, p); !why.empty()) fail(at, key, why, "\"" + p + "\"");
  return {p};
}

std::vector<OverrideValue> values_of(const std::vector<OverrideKnob>& knobs, const std::vector<std::size_t>& choices) {
  std::vector<OverrideValue> out;
  for (std::size_t k = 0; k < knobs.size(); ++k)
    for (std::size_t p = 0; p < knobs[k].paths.size(); ++p)
      out.emplace_back(knobs[k].paths[p], knobs[k].values[choices[k]][p]);
  return out;
}

std::vector<std::size_t> choices_of(const std::vector<OverrideKnob>& knobs, std::uint64_t c) {
  std::vector<std::size_t> choices;
  for (const auto& k : knobs) {
    choices.push_back(static_cast<std::size_t>(c % k.values.size()));
    c /= k.values.size();
  }
  return choices;
}

// Every combination's system, built in parallel; the first (lowest) combination the files
// refuse is reported at `at`, the same on every run.
std::vector<std::shared_ptr<const SystemFile>> build_all(const SystemTexts& texts,
                                                         const std::vector<OverrideKnob>& knobs, std::uint64_t count,
                                                         const YAML::Node& node, const Place& at) {
  std::vector<std::shared_ptr<const SystemFile>> systems(count);
  std::vector<std::string> errors(count);
  dse::parallel_for(std::uint64_t{0}, count, [&](std::uint64_t c) {
    try {
      systems[c] = std::make_shared<const SystemFile>(build_system(texts, values_of(knobs, choices_of(knobs, c))));
    } catch (const Error& e) {
      errors[c] = reader_message(e);
    }
  });
  for (std::uint64_t c = 0; c < count; ++c)
    if (!errors[c].empty())
      fail(at, node, "a combination the files accept: " + errors[c],
           values_text(values_of(knobs, choices_of(knobs, c)), ""));
  return systems;
}

}  // namespace

std::optional<double> number_at(const YAML::Node& root, const std::string& keys) {
  const auto n = number_node(root, split_path(keys));
  if (!n) return std::nullopt;
  return n->as<double>();
}

SystemOverrides::SystemOverrides(std::vector<OverrideKnob> knobs,
                                 std::vector<std::shared_ptr<const SystemFile>> systems)
    : knobs_(std::move(knobs)), systems_(std::move(systems)) {}

const std::shared_ptr<const SystemFile>& SystemOverrides::system(const std::vector<std::size_t>& choices) const {
  std::uint64_t c = 0;
  std::uint64_t radix = 1;
  for (std::size_t k = 0; k < knobs_.size(); ++k) {
    c += choices[k] * radix;
    radix *= knobs_[k].values.size();
  }
  return systems_[c];
}

std::vector<OverrideValue> SystemOverrides::values(const std::vector<std::size_t>& choices) const {
  return values_of(knobs_, choices);
}

std::string SystemOverrides::describe(const std::vector<std::size_t>& choices) const {
  return values_text(values(choices), "");
}

std::string SystemOverrides::eval_arguments(const std::vector<std::size_t>& choices) const {
  return values_text(values(choices), "--override ");
}

std::shared_ptr<const SystemOverrides> read_overrides(const YAML::Node& node, const Place& at, const SystemFile& base) {
  if (!node.IsMap() || node.size() == 0)
    fail(at, node, "expected a mapping of chip./system. paths to values", describe(node));
  const SystemTexts texts = read_texts(base.file);
  std::vector<OverrideKnob> knobs;
  std::vector<YAML::Node> value_nodes;
  std::uint64_t count = 1;
  for (const auto& kv : node) {
    const std::string key = as_string(kv.first, at);
    const Place kat = at.child(key);
    OverrideKnob k{key, knob_paths(kv.first, kv.second, kat, texts), {}};
    k.values = knob_values(kv.second, kat, k.paths, texts);
    for (const auto& other : knobs)
      for (const auto& p : k.paths)
        if (std::find(other.paths.begin(), other.paths.end(), p) != other.paths.end())
          fail(kat, kv.first, "expected a path no other override moves (" + other.key + " moves it)", "\"" + p + "\"");
    for (const auto& row : k.values) {  // each value alone, so that a refusal names its knob
      std::vector<OverrideValue> one;
      for (std::size_t p = 0; p < k.paths.size(); ++p) one.emplace_back(k.paths[p], row[p]);
      try {
        (void)build_system(texts, one);
      } catch (const Error& e) {
        fail(kat, kv.second, reader_message(e), values_text(one, ""));
      }
    }
    if (count > kMaxOverrideCombinations / k.values.size())
      fail(kat, kv.second,
           "expected at most " + std::to_string(kMaxOverrideCombinations) +
               " combinations of override values in one entry (each a chip and system read once)",
           "more");
    count *= k.values.size();
    knobs.push_back(std::move(k));
  }
  auto systems = build_all(texts, knobs, count, node, at);
  return std::make_shared<const SystemOverrides>(std::move(knobs), std::move(systems));
}

SystemFile load_system_with_overrides(const std::string& path, const std::vector<OverrideValue>& values) {
  const SystemTexts texts = read_texts(path);
  for (const OverrideValue& value : values) {
    const std::string& p = value.first;  // a plain reference: clang 15 refuses a lambda capturing a structured binding
    if (const std::string why = unknown_path(texts, p); !why.empty()) throw InputError("--override " + p + ": " + why);
    if (std::count_if(values.begin(), values.end(), [&](const OverrideValue& o) { return o.first == p; }) > 1)
      throw InputError("--override " + p + ": given twice");
  }
  try {
    return build_system(texts, values);
  } catch (const Error& e) {
    throw InputError("--override " + values_text(values, "") + ": " + reader_message(e));
  }
}

OverrideValue parse_override_option(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError("--override: expected PATH=VALUE, e.g. chip.memory.hbm_bytes=1.5e11 (got '" + text + "')");
  const std::string value = text.substr(eq + 1);
  std::size_t used = 0;
  double v = 0.0;
  try {
    v = std::stod(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != value.size() || !std::isfinite(v))
    throw InputError("--override " + text.substr(0, eq) + ": expected a finite number after '=' (got '" + value + "')");
  return {text.substr(0, eq), v};
}

}  // namespace dse::io
