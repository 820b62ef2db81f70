#include "dse/io/yaml_reader.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace dse::io {

namespace {

int line_of(const YAML::Mark& m) { return m.line >= 0 ? m.line + 1 : 1; }
int column_of(const YAML::Mark& m) { return m.column >= 0 ? m.column + 1 : 1; }

}  // namespace

YAML::Node parse_yaml(const std::string& text, const std::string& file) {
  try {
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ConfigError(file, line_of(e.mark), column_of(e.mark), "(yaml)", "expected valid YAML syntax",
                      "\"" + e.msg + "\"");
  }
}

std::string read_text_file(const std::string& path, const std::string& what) {
  // A directory opens as a stream and reads as nothing ("expected a mapping (got nothing)").
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw ConfigError(path, 1, 1, what, "expected a readable file", "\"" + std::string(std::strerror(EISDIR)) + "\"");
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int err = errno;
    throw ConfigError(path, 1, 1, what, "expected a readable file",
                      "\"" + std::string(std::strerror(err)) + "\"");
  }
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i == 0 ? "" : ", ") + v[i];
  return s;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1);
  std::vector<std::size_t> cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string did_you_mean(const std::string& key, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = std::max<std::size_t>(2, key.size() / 3) + 1;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(key, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

Place Place::child(const std::string& key) const {
  return {file, path.empty() ? key : path + "." + key};
}

Place Place::item(std::size_t i) const {
  return {file, (path.empty() ? std::string("(root)") : path) + "[" + std::to_string(i) + "]"};
}

std::string format_number(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string describe(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsSequence()) return node.size() == 0 ? "an empty sequence" : "a sequence";
  if (node.IsMap()) return node.size() == 0 ? "an empty mapping" : "a mapping";
  return "\"" + node.Scalar() + "\"";
}

void fail(const Place& at, const YAML::Node& node, const std::string& expected, const std::string& got) {
  // An invalid node (a map indexed by a number, say) throws on Mark(): no position then.
  const YAML::Mark m = node.IsDefined() ? node.Mark() : YAML::Mark::null_mark();
  throw ConfigError(at.file, line_of(m), column_of(m), at.path.empty() ? "(root)" : at.path, expected,
                    got);
}

double as_number(const YAML::Node& n, const Place& at) {
  double v = 0.0;
  if (!n.IsScalar() || !YAML::convert<double>::decode(n, v)) fail(at, n, "expected a number", describe(n));
  if (!std::isfinite(v)) fail(at, n, "expected a finite number", describe(n));
  return v;
}

double as_positive(const YAML::Node& n, const Place& at) {
  const double v = as_number(n, at);
  if (!(v > 0.0)) fail(at, n, "expected a number > 0", format_number(v));
  return v;
}

std::int64_t as_positive_integer(const YAML::Node& n, const Place& at) {
  std::int64_t v = 0;
  if (!n.IsScalar() || !YAML::convert<std::int64_t>::decode(n, v)) {
    fail(at, n, "expected an integer", describe(n));
  }
  if (v <= 0) fail(at, n, "expected an integer > 0", std::to_string(v));
  return v;
}

std::string as_string(const YAML::Node& n, const Place& at) {
  if (!n.IsScalar() || n.Scalar().empty()) fail(at, n, "expected a non-empty string", describe(n));
  return n.Scalar();
}

MapReader::MapReader(const YAML::Node& node, Place place, std::initializer_list<const char*> allowed)
    : MapReader(node, std::move(place), std::vector<std::string>(allowed.begin(), allowed.end())) {}

MapReader::MapReader(const YAML::Node& node, Place place, const std::vector<std::string>& allowed)
    : node_(node), place_(std::move(place)) {
  if (!node_.IsDefined() || !node_.IsMap()) fail(place_, node_, "expected a mapping", describe(node_));
  for (const auto& kv : node_) {
    const std::string key = kv.first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    const std::string hint = did_you_mean(key, allowed);
    const YAML::Mark m = kv.first.Mark();
    throw ConfigError(place_.file, line_of(m), column_of(m), place_.child(key).path,
                      hint.empty() ? "unknown key, expected one of the documented keys"
                                   : "unknown key, did you mean '" + hint + "'?",
                      "'" + key + "'");
  }
}

bool MapReader::has(const std::string& key) const { return node_[key].IsDefined(); }

YAML::Node MapReader::node(const std::string& key, const std::string& expected) const {
  const YAML::Node n = node_[key];
  if (!n.IsDefined()) {
    const YAML::Mark m = node_.Mark();
    throw ConfigError(place_.file, line_of(m), column_of(m), place_.child(key).path,
                      "missing required key, expected " + expected, "nothing");
  }
  return n;
}

std::string MapReader::string(const std::string& key) const {
  return as_string(node(key, "a non-empty string"), place(key));
}

std::string MapReader::string_or(const std::string& key, const std::string& fallback) const {
  return has(key) ? string(key) : fallback;
}

double MapReader::number(const std::string& key) const { return as_number(node(key, "a number"), place(key)); }
double MapReader::positive(const std::string& key) const {
  return as_positive(node(key, "a number > 0"), place(key));
}

double MapReader::non_negative(const std::string& key) const {
  const YAML::Node n = node(key, "a number >= 0");
  const double v = as_number(n, place(key));
  if (v < 0.0) fail(place(key), n, "expected a number >= 0", format_number(v));
  return v;
}

bool MapReader::boolean_or(const std::string& key, bool fallback) const {
  if (!has(key)) return fallback;
  const YAML::Node n = node(key);
  bool v = false;
  if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v)) fail(place(key), n, "expected true or false", describe(n));
  return v;
}

double MapReader::number_or(const std::string& key, double fallback) const {
  return has(key) ? number(key) : fallback;
}

double MapReader::non_negative_or(const std::string& key, double fallback) const {
  return has(key) ? non_negative(key) : fallback;
}

double MapReader::fraction(const std::string& key) const {
  const YAML::Node n = node(key, "a number in [0, 1]");
  const double v = as_number(n, place(key));
  if (v < 0.0 || v > 1.0) fail(place(key), n, "expected a number in [0, 1]", format_number(v));
  return v;
}

double MapReader::positive_fraction(const std::string& key) const {
  const double v = positive(key);
  if (v > 1.0) fail(place(key), node(key), "expected a number in (0, 1]", describe(node(key)));
  return v;
}

std::int64_t MapReader::positive_integer(const std::string& key) const {
  return as_positive_integer(node(key, "an integer > 0"), place(key));
}

std::int64_t MapReader::positive_integer_or(const std::string& key, std::int64_t fallback) const {
  return has(key) ? positive_integer(key) : fallback;
}

std::uint64_t MapReader::unsigned_or(const std::string& key, std::uint64_t fallback) const {
  if (!has(key)) return fallback;
  const YAML::Node n = node(key);
  std::uint64_t v = 0;
  if (!n.IsScalar() || !YAML::convert<std::uint64_t>::decode(n, v) ||
      (!n.Scalar().empty() && n.Scalar()[0] == '-')) {
    fail(place(key), n, "expected an integer >= 0", describe(n));
  }
  return v;
}

YAML::Node MapReader::sequence(const std::string& key) const {
  const YAML::Node n = node(key, "a non-empty sequence");
  if (!n.IsSequence() || n.size() == 0) fail(place(key), n, "expected a non-empty sequence", describe(n));
  return n;
}

}  // namespace dse::io
