#include "dse/io/loopnest_overrides.hpp"

#include <algorithm>
#include <cmath>

#include "dse/io/knob_values.hpp"

namespace dse::io {

namespace lp = costmodel::loopnest;

namespace {

// What a key takes, as read_loopnest_hardware (timeloop_writer.cpp) reads it: positive
// (MapReader::positive), non_negative (non_negative_or), whole numbers > 0
// (positive_integer_or, held in an int or an int64) and capacity_words (a whole number >= 0).
enum class Rule : std::uint8_t { positive, non_negative, whole_positive_int, whole_positive_int64, whole_non_negative };

struct Key {
  const char* name;
  Rule rule;
};

constexpr Key kChipKeys[] = {{"clock_hz", Rule::positive}};
constexpr Key kLevelKeys[] = {
    {"capacity_words", Rule::whole_non_negative},
    {"word_bits", Rule::whole_positive_int},
    {"block_words", Rule::whole_positive_int},
    {"mesh_x", Rule::whole_positive_int64},
    {"mesh_y", Rule::whole_positive_int64},
    {"read_bandwidth_words_per_cycle", Rule::non_negative},
    {"write_bandwidth_words_per_cycle", Rule::non_negative},
    {"read_energy_pj", Rule::non_negative},
    {"fill_energy_pj", Rule::non_negative},
    {"update_energy_pj", Rule::non_negative},
    {"leak_pj_per_cycle", Rule::non_negative},
};
constexpr Key kComputeKeys[] = {{"mesh_x", Rule::whole_positive_int64}, {"mesh_y", Rule::whole_positive_int64}};
constexpr Key kRateKeys[] = {
    {"bits", Rule::whole_positive_int}, {"macs_per_cycle", Rule::positive}, {"energy_pj_per_mac", Rule::non_negative}};

template <std::size_t N>
int key_index(const Key (&keys)[N], const std::string& name) {
  for (std::size_t i = 0; i < N; ++i)
    if (name == keys[i].name) return static_cast<int>(i);
  return -1;
}

const Key& key_of(const LoopnestField& f) {
  switch (f.owner) {
    case LoopnestField::Owner::chip:
      return kChipKeys[f.key];
    case LoopnestField::Owner::level:
      return kLevelKeys[f.key];
    case LoopnestField::Owner::compute:
      return kComputeKeys[f.key];
    case LoopnestField::Owner::rate:
      return kRateKeys[f.key];
  }
  return kChipKeys[0];
}

std::string closest(const std::string& path, const std::vector<std::string>& valid) {
  std::string best;
  std::size_t best_d = static_cast<std::size_t>(-1);
  for (const auto& v : valid) {
    const std::size_t d = edit_distance(path, v);
    if (d < best_d) {
      best_d = d;
      best = v;
    }
  }
  return best;
}

std::string values_text(const LoopnestKnob& k, const std::vector<double>& row) {
  std::string out;
  for (std::size_t p = 0; p < k.paths.size(); ++p)
    out += (out.empty() ? "" : " ") + k.paths[p] + "=" + exact_number_text(row[p]);
  return out;
}

}  // namespace

std::vector<std::string> loopnest_paths(const lp::Architecture& a) {
  std::vector<std::string> out;
  for (const Key& k : kChipKeys) out.emplace_back(k.name);
  for (const auto& lv : a.levels)
    for (const Key& k : kLevelKeys) out.push_back("levels." + lv.name + "." + k.name);
  for (const Key& k : kComputeKeys) out.push_back(std::string("compute.") + k.name);
  for (int r = 0; r < a.compute.num_rates; ++r)
    for (const Key& k : kRateKeys) out.push_back("compute.rates." + std::to_string(r) + "." + k.name);
  return out;
}

std::optional<LoopnestField> resolve_loopnest_path(const lp::Architecture& a, const std::string& path) {
  const std::vector<std::string> s = split_path(path);
  using O = LoopnestField::Owner;
  if (s.size() == 1 && key_index(kChipKeys, s[0]) >= 0) return LoopnestField{O::chip, 0, key_index(kChipKeys, s[0])};
  if (s.size() == 3 && s[0] == "levels" && key_index(kLevelKeys, s[2]) >= 0) {
    for (std::size_t l = 0; l < a.levels.size(); ++l)
      if (a.levels[l].name == s[1]) return LoopnestField{O::level, static_cast<int>(l), key_index(kLevelKeys, s[2])};
  }
  if (s.size() == 2 && s[0] == "compute" && key_index(kComputeKeys, s[1]) >= 0)
    return LoopnestField{O::compute, 0, key_index(kComputeKeys, s[1])};
  if (s.size() == 4 && s[0] == "compute" && s[1] == "rates" && key_index(kRateKeys, s[3]) >= 0) {
    for (int r = 0; r < a.compute.num_rates; ++r)
      if (s[2] == std::to_string(r)) return LoopnestField{O::rate, r, key_index(kRateKeys, s[3])};
  }
  return std::nullopt;
}

double loopnest_value(const lp::Architecture& a, const LoopnestField& f) {
  using O = LoopnestField::Owner;
  switch (f.owner) {
    case O::chip:
      return a.clock_hz;
    case O::compute:
      return static_cast<double>(f.key == 0 ? a.compute.mesh_x : a.compute.mesh_y);
    case O::rate: {
      const lp::PrecisionRate& r = a.compute.rates[static_cast<std::size_t>(f.index)];
      return f.key == 0 ? r.bits : f.key == 1 ? r.macs_per_cycle : r.energy_per_mac_j * 1e12;
    }
    case O::level:
      break;
  }
  const lp::StorageLevel& lv = a.levels[static_cast<std::size_t>(f.index)];
  const double values[] = {static_cast<double>(lv.capacity_words),
                           static_cast<double>(lv.word_bits),
                           static_cast<double>(lv.block_words),
                           static_cast<double>(lv.mesh_x),
                           static_cast<double>(lv.mesh_y),
                           lv.read_bandwidth_words_per_cycle,
                           lv.write_bandwidth_words_per_cycle,
                           lv.read_energy_j * 1e12,
                           lv.fill_energy_j * 1e12,
                           lv.update_energy_j * 1e12,
                           lv.leak_energy_j_per_cycle * 1e12};
  return values[f.key];
}

std::string check_loopnest_value(const LoopnestField& f, double v) {
  if (!std::isfinite(v)) return "a finite number";
  constexpr double kInt = 2147483647.0;          // an int
  constexpr double kInt64 = 9007199254740992.0;  // 2^53: whole numbers a double holds exactly
  switch (key_of(f).rule) {
    case Rule::positive:
      return v > 0.0 ? "" : "a number > 0";
    case Rule::non_negative:
      return v >= 0.0 ? "" : "a number >= 0";
    case Rule::whole_positive_int:
      return v >= 1.0 && v <= kInt && v == std::floor(v) ? "" : "a whole number from 1 to 2^31-1";
    case Rule::whole_positive_int64:
      return v >= 1.0 && v <= kInt64 && v == std::floor(v) ? "" : "a whole number from 1 to 2^53";
    case Rule::whole_non_negative:
      return v >= 0.0 && v <= kInt64 && v == std::floor(v) ? "" : "a whole number from 0 to 2^53";
  }
  return "";
}

void set_loopnest_value(lp::Architecture& a, const LoopnestField& f, double v) {
  using O = LoopnestField::Owner;
  const auto i64 = static_cast<std::int64_t>(v);
  switch (f.owner) {
    case O::chip:
      a.clock_hz = v;
      return;
    case O::compute:
      (f.key == 0 ? a.compute.mesh_x : a.compute.mesh_y) = i64;
      return;
    case O::rate: {
      lp::PrecisionRate& r = a.compute.rates[static_cast<std::size_t>(f.index)];
      if (f.key == 0) r.bits = static_cast<int>(v);
      if (f.key == 1) r.macs_per_cycle = v;
      if (f.key == 2) r.energy_per_mac_j = v * 1e-12;
      return;
    }
    case O::level:
      break;
  }
  lp::StorageLevel& lv = a.levels[static_cast<std::size_t>(f.index)];
  switch (f.key) {
    case 0:
      lv.capacity_words = i64;
      break;
    case 1:
      lv.word_bits = static_cast<int>(v);
      break;
    case 2:
      lv.block_words = static_cast<int>(v);
      break;
    case 3:
      lv.mesh_x = i64;
      break;
    case 4:
      lv.mesh_y = i64;
      break;
    case 5:
      lv.read_bandwidth_words_per_cycle = v;
      break;
    case 6:
      lv.write_bandwidth_words_per_cycle = v;
      break;
    case 7:
      lv.read_energy_j = v * 1e-12;
      break;
    case 8:
      lv.fill_energy_j = v * 1e-12;
      break;
    case 9:
      lv.update_energy_j = v * 1e-12;
      break;
    default:
      lv.leak_energy_j_per_cycle = v * 1e-12;
      break;
  }
}

lp::Architecture apply_loopnest_knobs(const lp::Architecture& base, const std::vector<LoopnestKnob>& knobs,
                                      const std::vector<std::size_t>& choices) {
  lp::Architecture a = base;
  for (std::size_t k = 0; k < knobs.size(); ++k)
    for (std::size_t p = 0; p < knobs[k].fields.size(); ++p)
      set_loopnest_value(a, knobs[k].fields[p], knobs[k].values[choices[k]][p]);
  return a;
}

namespace {

// The paths of the knob keyed `key`: the key itself, or a group's `paths:`; each resolved.
std::vector<std::string> knob_paths(const YAML::Node& key, const YAML::Node& value, const Place& at,
                                    const lp::Architecture& base, const std::string& file,
                                    std::vector<LoopnestField>& fields) {
  const auto resolve = [&](const std::string& p, const Place& where, const YAML::Node& n) {
    const auto f = resolve_loopnest_path(base, p);
    if (!f)
      fail(where, n,
           "expected a number of the architecture " + file + ", the closest valid path is '" +
               closest(p, loopnest_paths(base)) + "'",
           "\"" + p + "\"");
    fields.push_back(*f);
  };
  std::vector<std::string> paths;
  if (value.IsMap() && value["paths"]) {
    const MapReader m(value, at, {"paths", "choices", "linear", "log", "times", "labels"});
    const YAML::Node ps = m.sequence("paths");
    for (std::size_t i = 0; i < ps.size(); ++i) {
      const std::string p = as_string(ps[i], m.place("paths").item(i));
      if (std::find(paths.begin(), paths.end(), p) != paths.end())
        fail(m.place("paths").item(i), ps[i], "expected a path not listed before", "\"" + p + "\"");
      resolve(p, m.place("paths").item(i), ps[i]);
      paths.push_back(p);
    }
    return paths;
  }
  resolve(key.Scalar(), at, key);
  return {key.Scalar()};
}

// One knob's values: a number, a range, {times: ...} over the architecture's values, or a
// group's choices of one number per path.
std::vector<std::vector<double>> knob_values(const YAML::Node& n, const Place& at, const LoopnestKnob& k,
                                             const lp::Architecture& base) {
  std::vector<std::vector<double>> out;
  const bool group = n.IsMap() && n["paths"];
  const MapReader m(n.IsMap() ? n : YAML::Node(YAML::NodeType::Map), at,
                    group ? std::vector<std::string>{"paths", "choices", "linear", "log", "times", "labels"}
                          : std::vector<std::string>{"choices", "linear", "log", "times"});
  const std::size_t keys = group ? (m.has("labels") ? 3u : 2u) : 1u;
  if (n.IsMap() && n.size() != keys) fail(at, n, "expected exactly one of choices, linear, log, times", describe(n));
  if (m.has("times")) {
    for (const double f : read_knob_values(m.node("times"), m.place("times"), false)) {
      std::vector<double> row;
      for (const auto& field : k.fields) row.push_back(loopnest_value(base, field) * f);
      out.push_back(row);
    }
    return out;
  }
  if (group && m.has("choices") && m.sequence("choices")[0].IsSequence()) {  // one value per path
    const YAML::Node c = m.sequence("choices");
    for (std::size_t i = 0; i < c.size(); ++i) {
      const Place p = m.place("choices").item(i);
      if (!c[i].IsSequence() || c[i].size() != k.paths.size())
        fail(p, c[i], "expected a list of " + std::to_string(k.paths.size()) + " numbers (one per path)",
             describe(c[i]));
      std::vector<double> row;
      for (std::size_t j = 0; j < k.paths.size(); ++j) row.push_back(as_number(c[i][j], p.item(j)));
      out.push_back(row);
    }
    return out;
  }
  YAML::Node range(YAML::NodeType::Map);  // a group's range without its paths
  if (group) {
    for (const char* key : {"choices", "linear", "log"})
      if (m.has(key)) range[key] = m.node(key);
  }
  for (const double v : read_knob_values(group ? range : n, at, false)) out.emplace_back(k.paths.size(), v);
  return out;
}

// A group's `labels:`, one distinct name per choice (none when not given).
std::vector<std::string> knob_labels(const YAML::Node& n, const Place& at, std::size_t choices) {
  if (!n.IsMap() || !n["labels"]) return {};
  const MapReader m(n, at, {"paths", "choices", "linear", "log", "times", "labels"});
  const YAML::Node l = m.sequence("labels");
  if (l.size() != choices)
    fail(m.place("labels"), l, "expected one label per choice (" + std::to_string(choices) + ")",
         std::to_string(l.size()));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < l.size(); ++i) {
    const std::string s = as_string(l[i], m.place("labels").item(i));
    if (s.find_first_of(" =") != std::string::npos || std::find(out.begin(), out.end(), s) != out.end())
      fail(m.place("labels").item(i), l[i], "expected a distinct label without spaces or '='", "\"" + s + "\"");
    out.push_back(s);
  }
  return out;
}

// Each value alone on the base architecture: what the reader takes, and a valid hierarchy.
void check_each_value(const LoopnestKnob& k, const YAML::Node& n, const Place& at, const lp::Architecture& base,
                      const std::string& file) {
  for (const auto& row : k.values) {
    lp::Architecture a = base;
    for (std::size_t p = 0; p < k.paths.size(); ++p) {
      const std::string expected = check_loopnest_value(k.fields[p], row[p]);
      if (!expected.empty())
        fail(at, n, "expected " + expected + " at " + k.paths[p] + " (as " + file + " takes it)", values_text(k, row));
      set_loopnest_value(a, k.fields[p], row[p]);
    }
    const std::string why = lp::validate(a);
    if (!why.empty()) fail(at, n, "expected a valid hierarchy (" + why + ")", values_text(k, row));
  }
}

}  // namespace

std::vector<LoopnestKnob> read_loopnest_overrides(const YAML::Node& node, const Place& at, const lp::Architecture& base,
                                                  const std::string& file) {
  if (!node.IsMap() || node.size() == 0)
    fail(at, node, "expected a mapping of architecture paths to values", describe(node));
  std::vector<LoopnestKnob> knobs;
  std::uint64_t combinations = 1;
  for (const auto& kv : node) {
    LoopnestKnob k;
    k.key = as_string(kv.first, at);
    const Place kat = at.child(k.key);
    k.paths = knob_paths(kv.first, kv.second, kat, base, file, k.fields);
    k.values = knob_values(kv.second, kat, k, base);
    k.labels = knob_labels(kv.second, kat, k.values.size());
    for (const auto& other : knobs)
      for (const auto& p : k.paths)
        if (std::find(other.paths.begin(), other.paths.end(), p) != other.paths.end())
          fail(kat, kv.first, "expected a path no other override moves (" + other.key + " moves it)", "\"" + p + "\"");
    check_each_value(k, kv.second, kat, base, file);
    combinations = combinations > kMaxCheckedCombinations ? combinations : combinations * k.values.size();
    knobs.push_back(std::move(k));
  }
  if (combinations > kMaxCheckedCombinations) return knobs;
  std::vector<std::size_t> choices(knobs.size(), 0);
  for (std::uint64_t c = 0; c < combinations; ++c) {  // every combination, the first knob fastest
    std::uint64_t rest = c;
    for (std::size_t k = 0; k < knobs.size(); ++k) {
      choices[k] = static_cast<std::size_t>(rest % knobs[k].values.size());
      rest /= knobs[k].values.size();
    }
    const std::string why = lp::validate(apply_loopnest_knobs(base, knobs, choices));
    if (why.empty()) continue;
    std::string got;
    for (std::size_t k = 0; k < knobs.size(); ++k)
      got += (got.empty() ? "" : " ") + values_text(knobs[k], knobs[k].values[choices[k]]);
    fail(at, node, "expected a combination of override values that leaves a valid hierarchy (" + why + ")", got);
  }
  return knobs;
}

}  // namespace dse::io
