#include "search/nondominated_sort.hpp"

#include <algorithm>

#include "search/pareto.hpp"

namespace dse::search {
namespace {

// Infeasible points: one front per distinct violation, ascending, numbered from `first`.
void infeasible_fronts(std::span<const double> violation, std::size_t first, std::vector<std::size_t>& front) {
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < violation.size(); ++i) {
    if (violation[i] != 0.0) order.push_back(i);
  }
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return violation[a] < violation[b]; });
  std::size_t r = first;
  for (std::size_t k = 0; k < order.size(); ++k) {
    if (k > 0 && violation[order[k - 1]] < violation[order[k]]) ++r;
    front[order[k]] = r;
  }
}

}  // namespace

std::vector<std::size_t> constrained_fronts(std::span<const double> objectives, std::size_t m,
                                            std::span<const double> violation) {
  const std::size_t n = violation.size();
  std::vector<std::size_t> front(n, 0);
  std::vector<std::size_t> order;
  order.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (violation[i] == 0.0) order.push_back(i);
  }
  const double* obj = objectives.data();
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::lexicographical_compare(obj + a * m, obj + a * m + m, obj + b * m, obj + b * m + m);
  });
  // A point before p in this order is no greater in objective 0: it dominates p when it is no
  // greater in the others and smaller in one.
  std::vector<std::vector<std::size_t>> fronts;
  for (std::size_t p : order) {
    const double* x = obj + p * m;
    std::size_t k = 0;
    for (; k < fronts.size(); ++k) {
      const auto& f = fronts[k];
      const bool dominated =
          std::any_of(f.rbegin(), f.rend(), [&](std::size_t q) { return dominates_min(obj + q * m, x, m); });
      if (!dominated) break;
    }
    if (k == fronts.size()) fronts.emplace_back();
    fronts[k].push_back(p);
    front[p] = k;
  }
  infeasible_fronts(violation, fronts.size(), front);
  return front;
}

std::vector<std::size_t> constrained_fronts_pairwise(std::span<const double> objectives, std::size_t m,
                                                     std::span<const double> violation) {
  const std::size_t n = violation.size();
  const auto cdom = [&](std::size_t a, std::size_t b) {
    if (violation[a] == 0.0 && violation[b] == 0.0) {
      return dominates_min(objectives.data() + a * m, objectives.data() + b * m, m);
    }
    if (violation[a] == 0.0) return true;
    if (violation[b] == 0.0) return false;
    return violation[a] < violation[b];
  };
  std::vector<std::vector<std::size_t>> dominated_by(n);
  std::vector<std::size_t> count(n, 0);
  for (std::size_t a = 0; a < n; ++a) {
    for (std::size_t b = a + 1; b < n; ++b) {
      if (cdom(a, b)) {
        dominated_by[a].push_back(b);
        ++count[b];
      } else if (cdom(b, a)) {
        dominated_by[b].push_back(a);
        ++count[a];
      }
    }
  }
  std::vector<std::size_t> front(n, 0);
  std::vector<std::size_t> current;
  for (std::size_t i = 0; i < n; ++i) {
    if (count[i] == 0) current.push_back(i);
  }
  for (std::size_t r = 0; !current.empty(); ++r) {
    std::vector<std::size_t> next;
    for (std::size_t i : current) {
      front[i] = r;
      for (std::size_t b : dominated_by[i]) {
        if (--count[b] == 0) next.push_back(b);
      }
    }
    current = std::move(next);
  }
  return front;
}

}  // namespace dse::search
