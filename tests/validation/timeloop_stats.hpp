// Timeloop's own statistics file (timeloop-model.stats.txt / timeloop-mapper.stats.txt,
// as the exercises ship them in ref-output/) read back for the tests: per storage level
// and data space the scalar reads, fills, updates and utilised capacity (per instance),
// the cycles, the computes, and the fJ/Compute summary by level. The tests compare the
// loop-nest model with every one of these figures; none is typed by hand.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <utility>

namespace dse::test {

struct TimeloopCounts {
  std::int64_t reads = -1, fills = -1, updates = -1, capacity = -1;
};

struct TimeloopStats {
  std::map<std::pair<std::string, std::string>, TimeloopCounts> counts;  // (level, data space)
  std::map<std::string, double> fj_per_compute;                          // level (or "Total")
  std::int64_t cycles = -1;
  std::int64_t computes = -1;
};

// The line parsing below reads the fixed layout of Timeloop's stats.txt without std::regex (whose
// GCC 12 headers trip -Wmaybe-uninitialized under the sanitizer presets' -O1).
namespace stats_detail {

inline std::string rtrim(const std::string& s) {
  std::size_t e = s.size();
  while (e > 0 && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(0, e);
}
inline bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}
// Exactly `n` leading spaces, then a non-space character.
inline bool indented_by(const std::string& s, std::size_t n) {
  return s.size() > n && s.compare(0, n, std::string(n, ' ')) == 0 && !std::isspace(static_cast<unsigned char>(s[n]));
}
// "PREFIX<digits>" (the line right-trimmed): the digits, or "" when it does not match.
inline std::string digits_after(const std::string& t, const std::string& prefix) {
  if (t.rfind(prefix, 0) != 0) return "";
  const std::string d = t.substr(prefix.size());
  return all_digits(d) ? d : "";
}
// "<ws>+NAME<ws>+: <digits>": the digits, or "".
inline std::string indented_field(const std::string& t, const std::string& name) {
  std::size_t i = 0;
  while (i < t.size() && std::isspace(static_cast<unsigned char>(t[i]))) ++i;
  if (i == 0 || t.compare(i, name.size(), name) != 0) return "";
  i += name.size();
  const std::size_t ws = i;
  while (i < t.size() && std::isspace(static_cast<unsigned char>(t[i]))) ++i;
  if (i == ws || t.compare(i, 2, ": ") != 0) return "";
  const std::string d = t.substr(i + 2);
  return all_digits(d) ? d : "";
}

}  // namespace stats_detail

inline TimeloopStats read_timeloop_stats(const std::string& path) {
  using namespace stats_detail;
  TimeloopStats s;
  std::ifstream in(path);
  std::string lv, ds, line;
  bool summary = false;
  while (std::getline(in, line)) {
    if (line.rfind("Summary Stats", 0) == 0) summary = true;
    const std::string t = rtrim(line);
    if (summary) {
      if (const std::string d = digits_after(t, "Cycles: "); !d.empty()) s.cycles = std::stoll(d);
      if (const std::string d = digits_after(t, "Computes = "); !d.empty()) s.computes = std::stoll(d);
      // "    NAME<ws>+= <number>"
      if (indented_by(t, 4)) {
        const std::size_t name_end = t.find_first_of(" \t", 4);
        if (name_end != std::string::npos) {
          std::size_t i = name_end;
          while (i < t.size() && std::isspace(static_cast<unsigned char>(t[i]))) ++i;
          const std::string num = t.compare(i, 2, "= ") == 0 ? t.substr(i + 2) : "";
          if (!num.empty() && std::all_of(num.begin(), num.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; }))
            s.fj_per_compute[t.substr(4, name_end - 4)] = std::stod(num);
        }
      }
      continue;
    }
    if (t.size() > 8 && t.rfind("=== ", 0) == 0 && t.compare(t.size() - 4, 4, " ===") == 0 &&
        t.substr(4, t.size() - 8).find_first_of(" \t") == std::string::npos) {
      lv = t.substr(4, t.size() - 8);
      ds.clear();
    } else if (indented_by(t, 4) && t.size() > 5 && t.back() == ':' && !lv.empty() &&
               std::all_of(t.begin() + 4, t.end() - 1,
                           [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; })) {
      ds = t.substr(4, t.size() - 5);
    } else if (!ds.empty()) {
      for (const auto& [name, field] : {std::pair<const char*, std::int64_t TimeloopCounts::*>{"Scalar reads", &TimeloopCounts::reads},
                                        {"Scalar fills", &TimeloopCounts::fills},
                                        {"Scalar updates", &TimeloopCounts::updates},
                                        {"Utilized capacity", &TimeloopCounts::capacity}}) {
        const std::string label = field == &TimeloopCounts::capacity ? std::string(name) : std::string(name) + " (per-instance)";
        if (const std::string d = indented_field(t, label); !d.empty()) {
          s.counts[{lv, ds}].*field = std::stoll(d);
          break;
        }
      }
    }
  }
  return s;
}

}  // namespace dse::test
