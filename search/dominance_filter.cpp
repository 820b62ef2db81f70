#include "search/dominance_filter.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <utility>

#include "search/big_pages.hpp"

namespace dse::search {
namespace {

constexpr std::size_t kLeafRows = 16;
constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();

void check_shape(std::span<const double> keys, std::size_t stride, std::size_t strict_columns) {
  if (stride == 0 || strict_columns == 0 || strict_columns > stride) {
    throw std::invalid_argument("nondominated_rows: need 1 <= strict_columns <= stride");
  }
  if (keys.size() % stride != 0) throw std::invalid_argument("nondominated_rows: keys not a whole number of rows");
}

void check_input(std::span<const double> keys, std::size_t stride, std::size_t strict_columns) {
  check_shape(keys, stride, strict_columns);
  for (double v : keys) {
    if (std::isnan(v)) throw std::invalid_argument("nondominated_rows: NaN value");
  }
}

// q removes p (see the header).
bool removes(const double* q, const double* p, std::size_t stride, std::size_t strict) noexcept {
  bool strictly_better = false;
  for (std::size_t j = 0; j < stride; ++j) {
    if (q[j] > p[j]) return false;
    if (j < strict && q[j] < p[j]) strictly_better = true;
  }
  return strictly_better;
}

// A k-d tree over all rows; rows are "kept" one at a time and each node tracks the
// componentwise minimum of its kept rows (+inf while it has none).
class KeptTree {
 public:
  KeptTree(const double* keys, std::size_t rows, std::size_t stride, std::size_t strict)
      : keys_(keys), stride_(stride), strict_(strict), perm_(rows), leaf_of_(rows, kNone), kept_(rows, 0) {
    std::iota(perm_.begin(), perm_.end(), std::size_t{0});
    if (rows > 0) build(0, rows, kNone);
    min_.assign(nodes_.size() * stride_, std::numeric_limits<double>::infinity());
  }

  void keep(std::size_t row) {
    kept_[row] = 1;
    const double* k = row_key(row);
    for (std::size_t n = leaf_of_[row]; n != kNone; n = nodes_[n].parent) {
      double* m = min_.data() + n * stride_;
      for (std::size_t j = 0; j < stride_; ++j) m[j] = std::min(m[j], k[j]);
    }
  }

  // Some kept row removes `row`.
  bool removed(std::size_t row) { return removes_row(row_key(row)); }

  // Some kept row removes the row `p` (stride values).
  bool removes_row(const double* p) {
    stack_.clear();
    stack_.push_back(0);
    while (!stack_.empty()) {
      const std::size_t n = stack_.back();
      stack_.pop_back();
      const double* m = min_.data() + n * stride_;
      bool reachable = true;
      for (std::size_t j = 0; j < stride_ && reachable; ++j) reachable = m[j] <= p[j];
      if (!reachable) continue;  // also skips nodes without kept rows (+inf)
      const Node& node = nodes_[n];
      if (node.left == kNone) {
        for (std::size_t i = node.begin; i < node.end; ++i) {
          const std::size_t q = perm_[i];
          if (kept_[q] != 0 && removes(row_key(q), p, stride_, strict_)) return true;
        }
      } else {
        stack_.push_back(node.right);
        stack_.push_back(node.left);
      }
    }
    return false;
  }

 private:
  struct Node {
    std::size_t begin = 0, end = 0;
    std::size_t left = kNone, right = kNone, parent = kNone;
  };

  [[nodiscard]] const double* row_key(std::size_t row) const noexcept { return keys_ + row * stride_; }

  void build(std::size_t begin, std::size_t end, std::size_t parent) {
    const std::size_t id = nodes_.size();
    nodes_.push_back({begin, end, kNone, kNone, parent});
    if (end - begin <= kLeafRows) {
      for (std::size_t i = begin; i < end; ++i) leaf_of_[perm_[i]] = id;
      return;
    }
    // Split on the widest column at the median.
    std::size_t column = 0;
    double widest = -1.0;
    // Spans measured on at most ~64 evenly spaced rows: enough to pick a column. Row by row, so
    // that each sampled row is read once.
    const std::size_t step = std::max<std::size_t>(1, (end - begin) / 64);
    lo_.assign(stride_, std::numeric_limits<double>::infinity());
    hi_.assign(stride_, -std::numeric_limits<double>::infinity());
    for (std::size_t i = begin; i < end; i += step) {
      const double* row = row_key(perm_[i]);
      for (std::size_t j = 0; j < stride_; ++j) {
        lo_[j] = std::min(lo_[j], row[j]);
        hi_[j] = std::max(hi_[j], row[j]);
      }
    }
    for (std::size_t j = 0; j < stride_; ++j) {
      const double lo = lo_[j];
      const double hi = hi_[j];
      // Compare spans in a scale-free way: columns mix seconds, watts and bytes.
      const double scale = std::max(std::abs(lo), std::abs(hi));
      const double span = scale > 0 && std::isfinite(hi - lo) ? (hi - lo) / scale : (hi > lo ? 1.0 : 0.0);
      if (span > widest) {
        widest = span;
        column = j;
      }
    }
    // The median found on (value, row) pairs copied side by side: the selection then reads one
    // array in order instead of a key row per comparison (with the row-by-row sampling above, the
    // build 18% cheaper on BM_NondominatedRows' 262,144 rows, perf samples).
    const std::size_t mid = begin + (end - begin) / 2;
    split_.resize(end - begin);
    for (std::size_t i = begin; i < end; ++i) split_[i - begin] = {row_key(perm_[i])[column], perm_[i]};
    std::nth_element(split_.begin(), split_.begin() + static_cast<std::ptrdiff_t>(mid - begin), split_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t i = begin; i < end; ++i) perm_[i] = split_[i - begin].second;
    build(begin, mid, id);
    nodes_[id].left = id + 1;
    const std::size_t right = nodes_.size();
    build(mid, end, id);
    nodes_[id].right = right;
  }

  const double* keys_;
  std::size_t stride_;
  std::size_t strict_;
  std::vector<std::size_t> perm_;
  std::vector<std::size_t> leaf_of_;
  std::vector<unsigned char> kept_;
  std::vector<Node> nodes_;
  std::vector<double> min_;
  std::vector<std::size_t> stack_;
  std::vector<std::pair<double, std::size_t>> split_;  // build's scratch
  std::vector<double> lo_, hi_;                        // build's scratch
};

// x is lexicographically below y (stride values each).
bool lexicographically_below(const double* x, const double* y, std::size_t stride) noexcept {
  for (std::size_t j = 0; j < stride; ++j) {
    if (x[j] != y[j]) return x[j] < y[j];
  }
  return false;
}

// The positions of `rows` rows in lexicographic order, equal rows by position. Sorted first by
// (first column, position) pairs in one array, where most comparisons end; each run of rows
// equal in the first column is then put in order by the other columns (the same order as
// comparing whole rows, at half the time on BM_NondominatedRows' 262,144 rows, perf samples).
std::vector<std::size_t> lexicographic_order(const double* k, std::size_t rows, std::size_t stride) {
  std::vector<std::pair<double, std::size_t>> first(rows);
  for (std::size_t i = 0; i < rows; ++i) first[i] = {k[i * stride], i};
  std::sort(first.begin(), first.end(), [](const auto& a, const auto& b) {
    return a.first < b.first || (!(b.first < a.first) && a.second < b.second);  // -0.0 equals 0.0, as below
  });
  std::vector<std::size_t> order(rows);
  for (std::size_t i = 0; i < rows; ++i) order[i] = first[i].second;
  const auto rest_below = [&](std::size_t a, std::size_t b) {
    const double* x = k + a * stride;
    const double* y = k + b * stride;
    for (std::size_t j = 1; j < stride; ++j) {
      if (x[j] != y[j]) return x[j] < y[j];
    }
    return a < b;
  };
  for (std::size_t a = 0; a < rows;) {
    std::size_t b = a + 1;
    while (b < rows && first[b].first == first[a].first) ++b;
    if (b - a > 1) std::sort(order.begin() + static_cast<std::ptrdiff_t>(a), order.begin() + static_cast<std::ptrdiff_t>(b), rest_below);
    a = b;
  }
  return order;
}

// The rows are in lexicographic order already (each row equal to or above the one before).
bool lexicographically_sorted(const double* k, std::size_t rows, std::size_t stride) noexcept {
  for (std::size_t i = 1; i < rows; ++i) {
    if (lexicographically_below(k + i * stride, k + (i - 1) * stride, stride)) return false;
  }
  return true;
}

bool equal_rows(const double* a, const double* b, std::size_t stride) noexcept { return std::equal(a, a + stride, b); }

}  // namespace

namespace {

// distinct_rows of keys that check_input has accepted (the filters check theirs first).
DistinctRows checked_distinct_rows(std::span<const double> keys, std::size_t stride) {
  const std::size_t rows = keys.size() / stride;
  const double* k = keys.data();
  DistinctRows out;
  out.of_row.resize(rows);
  // Rows in lexicographic order (copies side by side): one pass. So too, after sorting, a set too
  // large for the hash table's 32-bit entries.
  const bool sorted = lexicographically_sorted(k, rows, stride);
  if (sorted || rows >= std::numeric_limits<std::uint32_t>::max()) {
    const std::vector<std::size_t> order = sorted ? std::vector<std::size_t>{} : lexicographic_order(k, rows, stride);
    const double* last = nullptr;
    for (std::size_t i = 0; i < rows; ++i) {
      const std::size_t r = sorted ? i : order[i];
      const double* row = k + r * stride;
      if (last == nullptr || !equal_rows(row, last, stride)) {
        out.values.insert(out.values.end(), row, row + stride);
        last = row;
      }
      out.of_row[r] = out.values.size() / stride - 1;
    }
    return out;
  }
  // The copies found by hashing first (O(n)), then only the distinct rows sorted: an archive's
  // flush holds many copies of few keys (the single-operator bench: 254,170 rows, 4,204 keys), where
  // sorting every row was most of the filter's time.
  std::size_t slots = 16;
  while (slots < 2 * rows) slots *= 2;
  BigVector<std::uint32_t> table(slots, 0);  // 1 + the first row of a distinct value; 0 empty
  std::vector<std::size_t> first;              // first row of each distinct value, in order found
  for (std::size_t r = 0; r < rows; ++r) {
    const double* row = k + r * stride;
    std::uint64_t h = 0x9e3779b97f4a7c15ULL;
    for (std::size_t j = 0; j < stride; ++j) {
      const double v = row[j] == 0.0 ? 0.0 : row[j];  // -0.0 hashes as 0.0, which it equals
      std::uint64_t bits = 0;
      std::memcpy(&bits, &v, sizeof bits);
      h = (h ^ bits) * 0xff51afd7ed558ccdULL;
      h ^= h >> 32;
    }
    for (std::size_t s = h & (slots - 1);; s = (s + 1) & (slots - 1)) {
      if (table[s] == 0) {
        table[s] = static_cast<std::uint32_t>(first.size() + 1);
        out.of_row[r] = first.size();
        first.push_back(r);
        break;
      }
      const std::size_t d = table[s] - 1;
      if (equal_rows(k + first[d] * stride, row, stride)) {
        out.of_row[r] = d;
        break;
      }
    }
  }
  std::vector<double> found(first.size() * stride);
  for (std::size_t d = 0; d < first.size(); ++d) std::copy_n(k + first[d] * stride, stride, found.data() + d * stride);
  const std::vector<std::size_t> order = lexicographic_order(found.data(), first.size(), stride);
  std::vector<std::size_t> place(first.size());
  out.values.resize(found.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    place[order[i]] = i;
    std::copy_n(found.data() + order[i] * stride, stride, out.values.data() + i * stride);
  }
  for (std::size_t r = 0; r < rows; ++r) out.of_row[r] = place[out.of_row[r]];
  return out;
}

}  // namespace

DistinctRows distinct_rows(std::span<const double> keys, std::size_t stride) {
  check_input(keys, stride, stride);
  return checked_distinct_rows(keys, stride);
}

std::vector<std::size_t> nondominated_rows(std::span<const double> keys, std::size_t stride,
                                           std::size_t strict_columns) {
  check_input(keys, stride, strict_columns);
  return nondominated_rows_no_nan(keys, stride, strict_columns);
}

std::vector<std::size_t> nondominated_rows_no_nan(std::span<const double> keys, std::size_t stride,
                                                  std::size_t strict_columns) {
  check_shape(keys, stride, strict_columns);
  const std::size_t rows = keys.size() / stride;
  // Rows equal in every column remove and are removed by the same rows: one decision per
  // distinct row, and the tree holds one copy of each (the distinct rows come in lexicographic
  // order, the order of the sweep).
  const DistinctRows distinct = checked_distinct_rows(keys, stride);
  const std::size_t n = distinct.values.size() / stride;
  KeptTree tree(distinct.values.data(), n, stride, strict_columns);
  std::vector<unsigned char> kept(n, 0);
  for (std::size_t d = 0; d < n; ++d) {
    if (tree.removed(d)) continue;
    tree.keep(d);
    kept[d] = 1;
  }
  std::vector<std::size_t> out;
  for (std::size_t r = 0; r < rows; ++r) {
    if (kept[distinct.of_row[r]] != 0) out.push_back(r);
  }
  return out;
}

std::vector<std::size_t> rows_not_removed_by(std::span<const double> candidates, std::span<const double> removers,
                                             std::size_t stride, std::size_t strict_columns) {
  check_input(candidates, stride, strict_columns);
  check_input(removers, stride, strict_columns);
  const std::size_t rows = removers.size() / stride;
  const std::size_t count = candidates.size() / stride;
  if (rows == 0) {
    std::vector<std::size_t> all(count);
    std::iota(all.begin(), all.end(), std::size_t{0});
    return all;
  }
  // A remover of p is lexicographically below p (see the header), so the candidates are visited in
  // lexicographic order and each sees only the removers below it kept in the tree: its query
  // descends into fewer nodes than against all of them (most candidates of an archive merge have
  // no remover, and a query without one visits every node its row does not prune). One copy of
  // each distinct remover is in the tree, and each distinct candidate is decided once.
  const DistinctRows removing = checked_distinct_rows(removers, stride);
  const DistinctRows deciding = checked_distinct_rows(candidates, stride);
  const double* rk = removing.values.data();
  const double* ck = deciding.values.data();
  const std::size_t nr = removing.values.size() / stride;
  const std::size_t nc = deciding.values.size() / stride;
  KeptTree tree(rk, nr, stride, strict_columns);
  std::vector<unsigned char> kept(nc, 0);
  std::size_t next = 0;  // rk's row `next` is the lowest remover not yet kept
  for (std::size_t c = 0; c < nc; ++c) {
    const double* p = ck + c * stride;
    for (; next < nr && lexicographically_below(rk + next * stride, p, stride); ++next) tree.keep(next);
    kept[c] = next == 0 || !tree.removes_row(p) ? 1 : 0;
  }
  std::vector<std::size_t> out;
  for (std::size_t r = 0; r < count; ++r) {
    if (kept[deciding.of_row[r]] != 0) out.push_back(r);
  }
  return out;
}

std::vector<std::size_t> nondominated_rows_brute_force(std::span<const double> keys, std::size_t stride,
                                                       std::size_t strict_columns) {
  check_input(keys, stride, strict_columns);
  const std::size_t rows = keys.size() / stride;
  std::vector<std::size_t> out;
  for (std::size_t p = 0; p < rows; ++p) {
    bool keep = true;
    for (std::size_t q = 0; q < rows && keep; ++q) {
      keep = !removes(keys.data() + q * stride, keys.data() + p * stride, stride, strict_columns);
    }
    if (keep) out.push_back(p);
  }
  return out;
}

}  // namespace dse::search
