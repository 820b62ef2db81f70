#include "dse/io/knob_values.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>

namespace dse::io {

// A figure that may be swept: a scalar, or one of
//   {choices: [a, b, ...]}, {linear: [from, to, steps]}, {log: [from, to, steps]}.
std::vector<double> read_knob_values(const YAML::Node& node, const Place& at, bool positive) {
  auto check = [&](const YAML::Node& n, const Place& p) { return positive ? as_positive(n, p) : as_number(n, p); };
  if (!node.IsMap()) return {check(node, at)};
  const MapReader m(node, at, {"choices", "linear", "log"});
  if (node.size() != 1) fail(at, node, "expected exactly one of choices, linear, log", describe(node));
  if (m.has("choices")) {
    const YAML::Node c = m.sequence("choices");
    std::vector<double> v;
    for (std::size_t i = 0; i < c.size(); ++i) v.push_back(check(c[i], m.place("choices").item(i)));
    return v;
  }
  const bool log = m.has("log");
  const char* key = log ? "log" : "linear";
  const YAML::Node r = m.node(key);
  if (!r.IsSequence() || r.size() != 3) fail(m.place(key), r, "expected [from, to, steps]", describe(r));
  const double from = check(r[0], m.place(key).item(0));
  const double to = check(r[1], m.place(key).item(1));
  const std::int64_t steps = as_positive_integer(r[2], m.place(key).item(2));
  // Every step is held in memory: a range of 10^12 steps would exhaust it, not sweep it.
  constexpr std::int64_t kMaxSteps = 1'000'000;
  if (steps > kMaxSteps) {
    fail(m.place(key).item(2), r[2], "expected at most " + std::to_string(kMaxSteps) + " steps", std::to_string(steps));
  }
  if (log && (from <= 0 || to <= 0)) fail(m.place(key), r, "expected positive bounds for a log range", describe(r));
  std::vector<double> v;
  for (std::int64_t i = 0; i < steps; ++i) {
    const double t = steps == 1 ? 0.0 : static_cast<double>(i) / static_cast<double>(steps - 1);
    const double x = log ? from * std::pow(to / from, t) : from + (to - from) * t;
    // Finite bounds can still give an infinite span (1e308 to -1e308) and NaN points.
    if (!std::isfinite(x) || (positive && !(x > 0.0))) {
      fail(m.place(key), r, "expected a range whose points are finite", describe(r));
    }
    v.push_back(x);
  }
  return v;
}

// No text of fewer significant digits than the shortest round trip (std::to_chars) reads back to
// v, so the search starts there: one or two printf calls a number where it took up to twelve
// (perf: 10% of a 1-rank single-op run, whose /variants holds 65,536 variants x 5 numbers).
std::string exact_number_text(double v) {
  int first = 6;
  if (std::isfinite(v)) {
    char buf[64];
    const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
    if (ec == std::errc{}) {  // on an error `end` is the buffer's end and nothing was written
      int shortest = 0;
      for (const char* c = buf; c != end && *c != 'e'; ++c) shortest += (*c >= '0' && *c <= '9') ? 1 : 0;
      first = std::max(first, shortest);
    }
  }
  for (int digits = first; digits <= 17; ++digits) {
    const std::string t = format_number(v, digits);
    if (std::stod(t) == v) return t;
  }
  return format_number(v, 17);
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> segs;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    segs.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) return segs;
    start = dot + 1;
  }
}

}  // namespace dse::io
