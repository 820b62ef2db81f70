#include "search/pareto.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dse::search {

bool dominates(std::span<const double> a, std::span<const double> b,
               std::span<const Sense> senses) noexcept {
  bool strictly_better = false;
  for (std::size_t i = 0; i < senses.size(); ++i) {
    const double x = senses[i] == Sense::minimize ? a[i] : -a[i];
    const double y = senses[i] == Sense::minimize ? b[i] : -b[i];
    if (x > y) return false;
    if (x < y) strictly_better = true;
  }
  return strictly_better;
}

ParetoArchive::ParetoArchive(std::vector<Sense> senses) : senses_(std::move(senses)) {}

bool ParetoArchive::insert(std::uint64_t index, std::span<const double> objectives) {
  if (objectives.size() != senses_.size()) {
    throw std::invalid_argument("ParetoArchive::insert: objective count differs from senses");
  }
  for (double v : objectives) {
    if (!std::isfinite(v)) throw std::invalid_argument("ParetoArchive::insert: non-finite objective");
  }
  for (const auto& p : points_) {
    if (dominates(p.objectives, objectives, senses_)) return false;
  }
  std::erase_if(points_, [&](const ArchivePoint& p) {
    return dominates(objectives, p.objectives, senses_);
  });
  points_.push_back({index, std::vector<double>(objectives.begin(), objectives.end())});
  return true;
}

void ParetoArchive::merge(const ParetoArchive& other) {
  for (const auto& p : other.points_) insert(p.index, p.objectives);
}

std::vector<ArchivePoint> ParetoArchive::sorted_points() const {
  std::vector<ArchivePoint> out = points_;
  std::sort(out.begin(), out.end(),
            [](const ArchivePoint& a, const ArchivePoint& b) { return a.index < b.index; });
  return out;
}

std::vector<std::uint64_t> ParetoArchive::sorted_indices() const {
  std::vector<std::uint64_t> out;
  out.reserve(points_.size());
  for (const auto& p : points_) out.push_back(p.index);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace dse::search
