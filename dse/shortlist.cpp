#include "dse/shortlist.hpp"

#include <algorithm>
#include <iomanip>
#include <ostream>
#include <sstream>

namespace dse {

namespace {

std::string fixed(double v, int precision) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(precision) << v;
  return s.str();
}

std::string sci(double v) {
  std::ostringstream s;
  s << std::scientific << std::setprecision(3) << v;
  return s.str();
}

}  // namespace

void print_shortlist(const ResultsFile& results, std::ostream& out) {
  std::vector<const PointRecord*> rows;
  for (const auto i : results.pareto) {
    if (const PointRecord* r = results.find(i)) rows.push_back(r);
  }
  std::sort(rows.begin(), rows.end(), [](const PointRecord* a, const PointRecord* b) {
    if (a->workload_id != b->workload_id) return a->workload_id < b->workload_id;
    if (a->throughput_samples_per_s != b->throughput_samples_per_s) {
      return a->throughput_samples_per_s > b->throughput_samples_per_s;
    }
    return a->index < b->index;
  });

  const std::vector<std::string> header = {"index", "workload", "hardware", "batch", "throughput_samples_per_s",
                                           "latency_ms", "energy_per_sample_mj", "risk", "bottleneck"};
  std::vector<std::vector<std::string>> table;
  for (const auto* r : rows) {
    table.push_back({std::to_string(r->index), r->workload, r->hardware, std::to_string(r->batch),
                     fixed(r->throughput_samples_per_s, 1), fixed(r->latency_s * 1e3, 4),
                     sci(r->energy_per_sample_j * 1e3), fixed(r->engineering_risk, 2), r->bottleneck});
  }
  std::vector<std::size_t> width(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) {
    width[c] = header[c].size();
    for (const auto& row : table) width[c] = std::max(width[c], row[c].size());
  }
  auto print_row = [&](const std::vector<std::string>& row) {
    for (std::size_t c = 0; c < row.size(); ++c) {
      const bool text = c == 1 || c == 2 || c == 8;
      out << (c ? "  " : "") << (text ? std::left : std::right) << std::setw(static_cast<int>(width[c])) << row[c];
    }
    out << '\n';
  };
  out << "Pareto shortlist: " << rows.size() << " points (throughput max, latency min, energy min, risk min; "
      << "per workload; archive " << results.archive.size() << ")\n";
  print_row(header);
  for (const auto& row : table) print_row(row);
}

}  // namespace dse
