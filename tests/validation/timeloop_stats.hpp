// Timeloop's own statistics file (timeloop-model.stats.txt / timeloop-mapper.stats.txt,
// as the exercises ship them in ref-output/) read back for the tests: per storage level
// and data space the scalar reads, fills, updates and utilised capacity (per instance),
// the cycles, the computes, and the fJ/Compute summary by level. The tests compare the
// loop-nest model with every one of these figures; none is typed by hand.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <regex>
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

inline TimeloopStats read_timeloop_stats(const std::string& path) {
  TimeloopStats s;
  std::ifstream in(path);
  const std::regex level(R"(^=== (\S+) ===\s*$)");
  const std::regex space(R"(^    (\w+):\s*$)");
  const std::regex field(R"(^\s+(Scalar reads|Scalar fills|Scalar updates) \(per-instance\)\s+: (\d+)\s*$)");
  const std::regex capacity(R"(^\s+Utilized capacity\s+: (\d+)\s*$)");
  const std::regex cycles(R"(^Cycles: (\d+)\s*$)");
  const std::regex computes(R"(^Computes = (\d+)\s*$)");
  const std::regex fj(R"(^    (\S+)\s+= ([0-9.]+)\s*$)");
  std::string lv, ds, line;
  bool summary = false;
  std::smatch m;
  while (std::getline(in, line)) {
    if (line.rfind("Summary Stats", 0) == 0) summary = true;
    if (summary) {
      if (std::regex_match(line, m, cycles)) s.cycles = std::stoll(m[1]);
      if (std::regex_match(line, m, computes)) s.computes = std::stoll(m[1]);
      if (std::regex_match(line, m, fj)) s.fj_per_compute[m[1]] = std::stod(m[2]);
      continue;
    }
    if (std::regex_match(line, m, level)) {
      lv = m[1];
      ds.clear();
    } else if (std::regex_match(line, m, space) && !lv.empty()) {
      ds = m[1];
    } else if (!ds.empty() && std::regex_match(line, m, field)) {
      TimeloopCounts& c = s.counts[{lv, ds}];
      const std::int64_t v = std::stoll(m[2]);
      const std::string f = m[1];
      (f == "Scalar reads" ? c.reads : f == "Scalar fills" ? c.fills : c.updates) = v;
    } else if (!ds.empty() && std::regex_match(line, m, capacity)) {
      s.counts[{lv, ds}].capacity = std::stoll(m[1]);
    }
  }
  return s;
}

}  // namespace dse::test
