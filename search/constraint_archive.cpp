#include "search/constraint_archive.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <string>

#include "search/dominance_filter.hpp"
#include "search/wire.hpp"

namespace dse::search {
namespace {

constexpr char kMagic[8] = {'D', 'S', 'E', 'C', 'A', '1', '\0', '\0'};

}  // namespace

ConstraintArchive::ConstraintArchive(std::vector<Sense> objective_senses, std::size_t metric_count)
    : senses_(std::move(objective_senses)), metric_count_(metric_count) {
  if (senses_.empty()) throw std::invalid_argument("ConstraintArchive: no objective");
}

bool ConstraintArchive::removes(const double* q, const double* p) const noexcept {
  const std::size_t m = senses_.size();
  for (std::size_t j = m; j < m + metric_count_; ++j) {
    if (q[j] > p[j]) return false;
  }
  return dominates_min(q, p, m);
}

void ConstraintArchive::make_key(std::span<const double> objectives, std::span<const double> metrics,
                                 double* k) const {
  if (objectives.size() != senses_.size() || metrics.size() != metric_count_) {
    throw std::invalid_argument("ConstraintArchive::insert: objective or metric count differs");
  }
  for (std::size_t j = 0; j < senses_.size(); ++j) {
    if (!std::isfinite(objectives[j])) throw std::invalid_argument("ConstraintArchive::insert: non-finite objective");
    k[j] = senses_[j] == Sense::minimize ? objectives[j] : -objectives[j];
  }
  for (std::size_t j = 0; j < metric_count_; ++j) {
    if (!std::isfinite(metrics[j])) throw std::invalid_argument("ConstraintArchive::insert: non-finite metric");
    k[senses_.size() + j] = metrics[j];
  }
}

void ConstraintArchive::require_flushed(const char* what) const {
  if (!pending_indices_.empty()) {
    throw std::logic_error(std::string("ConstraintArchive::") + what + ": queued points not flushed");
  }
}

template <class Keep>
void ConstraintArchive::compact(Keep keep) {
  const std::size_t s = stride();
  std::size_t out = 0;
  for (std::size_t i = 0; i < indices_.size(); ++i) {
    if (!keep(i)) continue;
    if (out != i) {
      indices_[out] = indices_[i];
      std::memmove(keys_.data() + out * s, keys_.data() + i * s, s * sizeof(double));
    }
    ++out;
  }
  indices_.resize(out);
  keys_.resize(out * s);
}

bool ConstraintArchive::insert(std::uint64_t index, std::span<const double> objectives,
                               std::span<const double> metrics) {
  if (!pending_indices_.empty()) flush();
  const std::size_t s = stride();
  double candidate[64];
  std::vector<double> heap;
  double* k = candidate;
  if (s > 64) {
    heap.resize(s);
    k = heap.data();
  }
  make_key(objectives, metrics, k);
  const std::size_t n = indices_.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (indices_[i] == index || removes(key(i), k)) return false;
  }
  compact([&](std::size_t i) { return !removes(k, key(i)); });  // drop the entries the newcomer removes
  indices_.push_back(index);
  keys_.insert(keys_.end(), k, k + s);
  return true;
}

bool ConstraintArchive::insert(const Evaluation& e) {
  if (!e.feasible) return false;
  return insert(e.index, e.objectives, e.constraints);
}

void ConstraintArchive::add(std::uint64_t index, std::span<const double> objectives,
                            std::span<const double> metrics) {
  const std::size_t at = pending_keys_.size();
  pending_keys_.resize(at + stride());
  try {
    make_key(objectives, metrics, pending_keys_.data() + at);
  } catch (...) {
    pending_keys_.resize(at);
    throw;
  }
  pending_indices_.push_back(index);
  if (pending_indices_.size() >= (deferred_ ? deferred_factor_ : 1) * due_rows()) flush();
}

void ConstraintArchive::flush() {
  if (pending_indices_.empty()) return;
  const std::size_t s = stride();
  // Filed entries first, then the queue in order: an index seen before is ignored. Everything
  // is filtered in place in indices_ and keys_, whose storage stays for the next flush (as does
  // the queue's): a fresh buffer for a large archive costs a page fault per page each time.
  indices_.insert(indices_.end(), pending_indices_.begin(), pending_indices_.end());
  keys_.insert(keys_.end(), pending_keys_.begin(), pending_keys_.end());
  pending_indices_.clear();
  pending_keys_.clear();
  // Indices in increasing order (an exhaustive sweep's, filed as evaluated) repeat none.
  if (!std::is_sorted(indices_.begin(), indices_.end(), std::less_equal<>())) {
    std::vector<std::size_t> order(indices_.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return indices_[a] != indices_[b] ? indices_[a] < indices_[b] : a < b;
    });
    std::vector<unsigned char> repeat(indices_.size(), 0);  // an index seen at an earlier position
    bool any = false;
    for (std::size_t i = 1; i < order.size(); ++i) {
      if (indices_[order[i]] != indices_[order[i - 1]]) continue;
      repeat[order[i]] = 1;
      any = true;
    }
    if (any) compact([&](std::size_t i) { return repeat[i] == 0; });
  }
  std::vector<unsigned char> kept(indices_.size(), 0);
  // Every key is finite (make_key): no NaN scan of the whole archive at each flush.
  for (const std::size_t r : nondominated_rows_no_nan(keys_, s, senses_.size())) kept[r] = 1;
  compact([&](std::size_t i) { return kept[i] != 0; });
}

void ConstraintArchive::merge(const ConstraintArchive& other) {
  if (other.senses_ != senses_ || other.metric_count_ != metric_count_) {
    throw std::invalid_argument("ConstraintArchive::merge: different objectives or metrics");
  }
  if (&other == this) {  // every index is held already
    flush();
    return;
  }
  pending_indices_.insert(pending_indices_.end(), other.indices_.begin(), other.indices_.end());
  pending_keys_.insert(pending_keys_.end(), other.keys_.begin(), other.keys_.end());
  pending_indices_.insert(pending_indices_.end(), other.pending_indices_.begin(), other.pending_indices_.end());
  pending_keys_.insert(pending_keys_.end(), other.pending_keys_.begin(), other.pending_keys_.end());
  flush();
}

ArchiveEntry ConstraintArchive::entry(std::size_t i) const {
  ArchiveEntry e;
  e.index = indices_[i];
  const double* k = key(i);
  e.objectives.resize(senses_.size());
  for (std::size_t j = 0; j < senses_.size(); ++j) e.objectives[j] = senses_[j] == Sense::minimize ? k[j] : -k[j];
  e.metrics.assign(k + senses_.size(), k + stride());
  return e;
}

std::vector<ArchiveEntry> ConstraintArchive::entries() const {
  require_flushed("entries");
  std::vector<std::size_t> order(size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return indices_[a] < indices_[b]; });
  std::vector<ArchiveEntry> out;
  out.reserve(order.size());
  for (std::size_t i : order) out.push_back(entry(i));
  return out;
}

std::vector<std::uint64_t> ConstraintArchive::sorted_indices() const {
  require_flushed("sorted_indices");
  std::vector<std::uint64_t> out(indices_.begin(), indices_.end());
  // An exhaustive sweep files its points in index order, and flush keeps that order.
  if (!std::is_sorted(out.begin(), out.end())) std::sort(out.begin(), out.end());
  return out;
}

std::vector<ArchiveEntry> ConstraintArchive::front_under(std::span<const double> budgets) const {
  require_flushed("front_under");
  if (budgets.size() != metric_count_) throw std::invalid_argument("ConstraintArchive::front_under: budget count differs");
  for (double b : budgets) {
    if (std::isnan(b)) throw std::invalid_argument("ConstraintArchive::front_under: NaN budget");
  }
  const std::size_t m = senses_.size();
  std::vector<std::size_t> within;
  for (std::size_t i = 0; i < size(); ++i) {
    const double* k = key(i);
    bool ok = true;
    for (std::size_t j = 0; j < metric_count_ && ok; ++j) ok = k[m + j] <= budgets[j];
    if (ok) within.push_back(i);
  }
  // Sorting by the first (minimised) objective lets each point be checked only
  // against the points before it and its equals: a dominator is never larger there.
  std::sort(within.begin(), within.end(), [&](std::size_t a, std::size_t b) {
    return key(a)[0] != key(b)[0] ? key(a)[0] < key(b)[0] : indices_[a] < indices_[b];
  });
  const auto dominated = [&](const double* q, const double* p) {
    bool strictly_better = false;
    for (std::size_t j = 0; j < m; ++j) {
      if (q[j] > p[j]) return false;
      if (q[j] < p[j]) strictly_better = true;
    }
    return strictly_better;
  };
  std::vector<std::size_t> front;
  for (std::size_t a = 0; a < within.size(); ++a) {
    const double* p = key(within[a]);
    bool keep = true;
    for (std::size_t b = 0; b < within.size() && keep; ++b) {
      const double* q = key(within[b]);
      if (q[0] > p[0]) break;
      keep = !dominated(q, p);
    }
    if (keep) front.push_back(within[a]);
  }
  std::sort(front.begin(), front.end(), [&](std::size_t a, std::size_t b) { return indices_[a] < indices_[b]; });
  std::vector<ArchiveEntry> out;
  out.reserve(front.size());
  for (std::size_t i : front) out.push_back(entry(i));
  return out;
}

std::vector<std::byte> ConstraintArchive::to_bytes() const {
  require_flushed("to_bytes");
  std::vector<std::byte> out;
  out.reserve(8 + 8 + senses_.size() + 8 + size() * (8 + 8 * stride()));
  for (char c : kMagic) wire::put_u8(out, static_cast<std::uint8_t>(c));
  wire::put_u32(out, static_cast<std::uint32_t>(senses_.size()));
  wire::put_u32(out, static_cast<std::uint32_t>(metric_count_));
  for (Sense s : senses_) wire::put_u8(out, s == Sense::minimize ? 0 : 1);
  wire::put_u64(out, size());
  for (const ArchiveEntry& e : entries()) {
    wire::put_u64(out, e.index);
    for (double v : e.objectives) wire::put_f64(out, v);
    for (double v : e.metrics) wire::put_f64(out, v);
  }
  return out;
}

ConstraintArchive ConstraintArchive::from_bytes(std::span<const std::byte> bytes) {
  wire::Reader in(bytes);
  for (char c : kMagic) {
    if (in.u8() != static_cast<std::uint8_t>(c)) throw std::invalid_argument("ConstraintArchive::from_bytes: bad magic or version");
  }
  const std::uint32_t objectives = in.u32();
  const std::uint32_t metrics = in.u32();
  if (objectives == 0 || objectives > 64 || metrics > 64) {
    throw std::invalid_argument("ConstraintArchive::from_bytes: implausible objective or metric count");
  }
  std::vector<Sense> senses;
  for (std::uint32_t j = 0; j < objectives; ++j) {
    const std::uint8_t s = in.u8();
    if (s > 1) throw std::invalid_argument("ConstraintArchive::from_bytes: bad sense");
    senses.push_back(s == 0 ? Sense::minimize : Sense::maximize);
  }
  ConstraintArchive a(std::move(senses), metrics);
  const std::uint64_t count = in.u64();
  const std::size_t entry_bytes = 8 + 8 * (std::size_t{objectives} + metrics);
  if (count > in.remaining() / entry_bytes) throw std::invalid_argument("ConstraintArchive::from_bytes: truncated input");
  std::vector<double> obj(objectives), met(metrics);
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t index = in.u64();
    for (double& v : obj) v = in.f64();
    for (double& v : met) v = in.f64();
    a.add(index, obj, met);
  }
  a.flush();
  if (!in.at_end()) throw std::invalid_argument("ConstraintArchive::from_bytes: trailing bytes");
  return a;
}

bool operator==(const ConstraintArchive& a, const ConstraintArchive& b) {
  return a.senses_ == b.senses_ && a.metric_count_ == b.metric_count_ && a.entries() == b.entries();
}

}  // namespace dse::search
