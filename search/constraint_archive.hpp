// A constraint-robust Pareto archive: it keeps every point that could be on the
// objective front for *some* later budget on the constraint metrics, so that
// front_under(budgets) answers a new SLA / power / area / memory budget exactly
// without re-running the search.
//
// Rule (a strict partial order, hence insertion-order independent):
//   q removes p  <=>  metrics(q) <= metrics(p) in every metric (all minimised)
//                     and objectives(q) Pareto-dominate objectives(p).
// The archive holds exactly the points no other point removes. Claim: for any budget
// vector b, front_under(b) == Pareto front over objectives of {all points inserted with
// metrics <= b} (ties -- equal objective vectors -- all kept, as in ParetoArchive).
// Proof sketch: a point p on the brute-force front is never removed, since a remover q
// would satisfy metrics(q) <= metrics(p) <= b and dominate p. Conversely, if an archived
// p under b were dominated by some inserted q under b, the minimal remover m of q (chains
// are finite, the relation transitive) is archived, under b, and dominates p.
// Note the rule is slightly weaker than dominance over (objectives ++ metrics): a point
// whose objectives *equal* another's is kept even with worse metrics, because the
// brute-force front keeps ties. tests/search/test_constraint_archive.cpp checks the claim.
//
// Each point index is assumed to carry one evaluation: inserting an index already held
// is ignored. Only feasible evaluations are archived.
//
// Two ways in: insert() files one point at once (O(archive) per point, tells whether it
// joined); add() only queues it, and flush() files every queued point in one pass of
// nondominated_rows (search/dominance_filter.hpp), about O(n log n) on sweep data. The
// result is the same set either way. add() flushes by itself when the queue grows as
// large as the archive (and at least kFlushRows), so memory stays bounded (with defer_flushes,
// at a factor of that, kDeferredFlushFactor by default, the owner flushing when flush_due()); merge()
// queues the other archive and flushes. The read accessors (entries, sorted_indices,
// front_under, to_bytes, ==) need an empty queue: they throw std::logic_error otherwise.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "search/big_pages.hpp"
#include "search/pareto.hpp"
#include "search/sampler.hpp"

namespace dse::search {

struct ArchiveEntry {
  std::uint64_t index = 0;
  std::vector<double> objectives;
  std::vector<double> metrics;
  friend bool operator==(const ArchiveEntry&, const ArchiveEntry&) = default;
};

class ConstraintArchive {
 public:
  // Throws std::invalid_argument when there is no objective.
  ConstraintArchive(std::vector<Sense> objective_senses, std::size_t metric_count);

  // True when the point joined the archive. Values must be finite and of the right
  // counts (std::invalid_argument otherwise).
  bool insert(std::uint64_t index, std::span<const double> objectives, std::span<const double> metrics);
  // Skips infeasible evaluations (returns false).
  bool insert(const Evaluation& e);
  // Queues a point (checked like insert()); visible after flush().
  void add(std::uint64_t index, std::span<const double> objectives, std::span<const double> metrics);
  // Files every queued point: the archive becomes exactly what inserting them would give.
  void flush();
  [[nodiscard]] std::size_t pending() const noexcept { return pending_indices_.size(); }
  static constexpr std::size_t kFlushRows = 65536;
  // The queue is as large as the archive (and at least kFlushRows): add() flushes here by itself.
  [[nodiscard]] bool flush_due() const noexcept { return pending_indices_.size() >= due_rows(); }
  // Deferred flushes: add() leaves a due queue to the owner, who flushes when flush_due() at points of
  // its choosing (cooperating ranks all together, so that none waits on another's flush), and flushes
  // by itself only at `factor` (default kDeferredFlushFactor, at least 1) times the due size, which
  // bounds the queue between them.
  static constexpr std::size_t kDeferredFlushFactor = 2;
  void defer_flushes(bool on, std::size_t factor = kDeferredFlushFactor) noexcept {
    deferred_ = on;
    deferred_factor_ = std::max<std::size_t>(1, factor);
  }
  // Order-independent: merging A into B holds the same set as merging B into A,
  // or inserting every point of both one by one in any order.
  void merge(const ConstraintArchive& other);

  // Filed points (queued ones not counted).
  [[nodiscard]] std::size_t size() const noexcept { return indices_.size(); }
  [[nodiscard]] bool empty() const noexcept { return indices_.empty() && pending_indices_.empty(); }
  [[nodiscard]] const std::vector<Sense>& senses() const noexcept { return senses_; }
  [[nodiscard]] std::size_t objective_count() const noexcept { return senses_.size(); }
  [[nodiscard]] std::size_t metric_count() const noexcept { return metric_count_; }

  // All archived entries, ordered by index (canonical).
  [[nodiscard]] std::vector<ArchiveEntry> entries() const;
  [[nodiscard]] std::vector<std::uint64_t> sorted_indices() const;
  // The Pareto front over the objectives of the archived points with every metric
  // <= its budget (use +infinity for "no bound"), ordered by index. Throws
  // std::invalid_argument when budgets.size() != metric_count() or a budget is NaN.
  [[nodiscard]] std::vector<ArchiveEntry> front_under(std::span<const double> budgets) const;

  // Little-endian wire format (version 1):
  //   "DSECA1\0\0" | u32 objective count | u32 metric count | u8 sense per objective
  //   (0 minimize, 1 maximize) | u64 entry count | per entry (by index): u64 index,
  //   f64 objectives, f64 metrics.
  [[nodiscard]] std::vector<std::byte> to_bytes() const;
  // Throws std::invalid_argument on a malformed buffer.
  static ConstraintArchive from_bytes(std::span<const std::byte> bytes);

  friend bool operator==(const ConstraintArchive& a, const ConstraintArchive& b);

 private:
  [[nodiscard]] std::size_t stride() const noexcept { return senses_.size() + metric_count_; }
  // Key of entry i: objectives in minimisation form (negated when maximised) then metrics.
  [[nodiscard]] const double* key(std::size_t i) const noexcept { return keys_.data() + i * stride(); }
  [[nodiscard]] bool removes(const double* q, const double* p) const noexcept;
  [[nodiscard]] ArchiveEntry entry(std::size_t i) const;
  // The key in minimisation form, checked (std::invalid_argument on bad values).
  void make_key(std::span<const double> objectives, std::span<const double> metrics, double* out) const;
  void require_flushed(const char* what) const;
  // The queue's length at which it is due: the archive's size, at least kFlushRows.
  [[nodiscard]] std::size_t due_rows() const noexcept { return std::max(kFlushRows, indices_.size()); }
  // Keeps the entries i for which keep(i) holds, in order, in place.
  template <class Keep>
  void compact(Keep keep);

  std::vector<Sense> senses_;
  std::size_t metric_count_;
  // The keys grow row by row to tens of megabytes (BigVector: huge pages, search/big_pages.hpp).
  BigVector<std::uint64_t> indices_;
  BigVector<double> keys_;
  BigVector<std::uint64_t> pending_indices_;
  BigVector<double> pending_keys_;
  bool deferred_ = false;
  std::size_t deferred_factor_ = kDeferredFlushFactor;
};

}  // namespace dse::search
