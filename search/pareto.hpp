// A Pareto archive: the non-dominated subset of the points inserted so far.
// Equal objective vectors do not dominate each other, so duplicates are all
// kept; the archive content is therefore the same for any insertion order,
// which is what makes merged results independent of rank and thread counts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace dse::search {

enum class Sense { minimize, maximize };

// a dominates b: no worse in every objective and strictly better in one.
bool dominates(std::span<const double> a, std::span<const double> b,
               std::span<const Sense> senses) noexcept;

// The same for two rows of m values already in minimisation form (maximised objectives negated):
// a no greater in every value and smaller in one. Inline: the inner loop of the archives' and the
// non-dominated sort's comparisons.
inline bool dominates_min(const double* a, const double* b, std::size_t m) noexcept {
  bool strictly_better = false;
  for (std::size_t j = 0; j < m; ++j) {
    if (a[j] > b[j]) return false;
    if (a[j] < b[j]) strictly_better = true;
  }
  return strictly_better;
}

struct ArchivePoint {
  std::uint64_t index = 0;
  std::vector<double> objectives;
};

class ParetoArchive {
 public:
  explicit ParetoArchive(std::vector<Sense> senses);

  // Returns true when the point joined the archive. Objectives must be finite.
  bool insert(std::uint64_t index, std::span<const double> objectives);
  void merge(const ParetoArchive& other);

  [[nodiscard]] std::size_t size() const noexcept { return points_.size(); }
  [[nodiscard]] const std::vector<Sense>& senses() const noexcept { return senses_; }
  // The archived points, ordered by index (a canonical order).
  [[nodiscard]] std::vector<ArchivePoint> sorted_points() const;
  [[nodiscard]] std::vector<std::uint64_t> sorted_indices() const;

 private:
  std::vector<Sense> senses_;
  std::vector<ArchivePoint> points_;
};

}  // namespace dse::search
