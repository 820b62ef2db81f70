#include "search/hypervolume.hpp"

#include <algorithm>
#include <iterator>
#include <limits>
#include <set>
#include <utility>
#include <cmath>
#include <stdexcept>

namespace dse::search {
namespace {

using Point = std::vector<double>;

// All points strictly below ref in every coordinate; minimisation; uses coordinates [0, d).
double hv2(std::vector<const Point*> pts, const double* ref) {
  std::sort(pts.begin(), pts.end(), [](const Point* a, const Point* b) {
    return (*a)[0] != (*b)[0] ? (*a)[0] < (*b)[0] : (*a)[1] < (*b)[1];
  });
  double volume = 0.0;
  double best_y = ref[1];
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const double y = (*pts[i])[1];
    if (y < best_y) {
      // Strip from this x to the next point's x (or the reference) at the current best y.
      best_y = y;
    }
    const double next_x = i + 1 < pts.size() ? (*pts[i + 1])[0] : ref[0];
    volume += (next_x - (*pts[i])[0]) * (ref[1] - best_y);
  }
  return volume;
}

// Three objectives in O(n log n) (the dimension sweep of Fonseca, Paquete and Lopez-Ibanez,
// "An improved dimension-sweep algorithm for the hypervolume indicator", CEC 2006): points in
// ascending z; the (x, y) staircase of the points seen so far is kept in a set ordered by x (y
// then falls as x grows) together with the area it dominates below (ref x, ref y); each slab
// between two z values adds that area times its height.
double hv3(std::vector<const Point*> pts, const double* ref) {
  std::sort(pts.begin(), pts.end(), [](const Point* a, const Point* b) {
    return (*a)[2] != (*b)[2] ? (*a)[2] < (*b)[2] : (*a)[0] != (*b)[0] ? (*a)[0] < (*b)[0] : (*a)[1] < (*b)[1];
  });
  std::set<std::pair<double, double>> stairs;  // (x, y), y strictly falling as x rises
  double area = 0.0;
  double volume = 0.0;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    const double x = (*pts[i])[0];
    const double y = (*pts[i])[1];
    auto next = stairs.lower_bound({x, -std::numeric_limits<double>::infinity()});
    const bool has_prev = next != stairs.begin();
    const double prev_y = has_prev ? std::prev(next)->second : ref[1];
    const bool covered = prev_y <= y || (next != stairs.end() && next->first == x && next->second <= y);
    if (!covered) {  // not dominated by the staircase (its lowest step left of x, or a step at x)
      // The old area over [x, end), then the steps that (x, y) covers removed.
      double old_area = 0.0;
      double height_y = prev_y;  // the staircase's y from x to the next step
      double at = x;
      while (next != stairs.end() && next->second >= y) {
        old_area += (next->first - at) * (ref[1] - height_y);
        at = next->first;
        height_y = next->second;
        next = stairs.erase(next);
      }
      const double end = next != stairs.end() ? next->first : ref[0];
      old_area += (end - at) * (ref[1] - height_y);
      area += (end - x) * (ref[1] - y) - old_area;
      stairs.emplace(x, y);
    }
    const double next_z = i + 1 < pts.size() ? (*pts[i + 1])[2] : ref[2];
    volume += area * (next_z - (*pts[i])[2]);
  }
  return volume;
}

double hv(std::vector<const Point*> pts, const double* ref, std::size_t d) {
  if (pts.empty()) return 0.0;
  if (d == 1) {
    double lo = ref[0];
    for (const Point* p : pts) lo = std::min(lo, (*p)[0]);
    return ref[0] - lo;
  }
  if (d == 2) return hv2(std::move(pts), ref);
  if (d == 3) return hv3(std::move(pts), ref);
  // Slices along the last coordinate (HSO: While, Hingston, Barone, Huband, IEEE TEVC 10(1),
  // 2006), each the (d - 1)-dimensional volume of the points below it.
  const std::size_t last = d - 1;
  std::sort(pts.begin(), pts.end(), [&](const Point* a, const Point* b) { return (*a)[last] < (*b)[last]; });
  double volume = 0.0;
  std::vector<const Point*> slice;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    slice.push_back(pts[i]);
    const double z = (*pts[i])[last];
    const double next_z = i + 1 < pts.size() ? (*pts[i + 1])[last] : ref[last];
    if (next_z > z) volume += hv(slice, ref, d - 1) * (next_z - z);
  }
  return volume;
}

// The coordinate with the fewest distinct values moved last (the volume does not depend on the
// order of the coordinates, and slicing costs one (d - 1)-dimensional volume per distinct value:
// an objective that takes few values, such as an engineering risk per platform, is sliced).
void fewest_values_last(std::vector<Point>& pts, std::vector<double>& ref) {
  const std::size_t d = ref.size();
  std::size_t best = d - 1;
  std::size_t best_count = std::numeric_limits<std::size_t>::max();
  for (std::size_t j = 0; j < d; ++j) {
    std::vector<double> v;
    v.reserve(pts.size());
    for (const Point& p : pts) v.push_back(p[j]);
    std::sort(v.begin(), v.end());
    const auto count = static_cast<std::size_t>(std::unique(v.begin(), v.end()) - v.begin());
    if (count < best_count || (count == best_count && j == d - 1)) {
      best = j;
      best_count = count;
    }
  }
  if (best == d - 1) return;
  for (Point& p : pts) std::swap(p[best], p[d - 1]);
  std::swap(ref[best], ref[d - 1]);
}

}  // namespace

double hypervolume(std::span<const std::vector<double>> points, std::span<const double> reference,
                   std::span<const Sense> senses) {
  const std::size_t d = reference.size();
  if (d == 0 || senses.size() != d) throw std::invalid_argument("hypervolume: reference and senses differ in size");
  std::vector<double> ref(d);
  for (std::size_t j = 0; j < d; ++j) {
    if (!std::isfinite(reference[j])) throw std::invalid_argument("hypervolume: non-finite reference");
    ref[j] = senses[j] == Sense::minimize ? reference[j] : -reference[j];
  }
  std::vector<Point> mins;
  for (const auto& p : points) {
    if (p.size() != d) throw std::invalid_argument("hypervolume: point dimension differs from reference");
    Point q(d);
    bool inside = true;
    for (std::size_t j = 0; j < d; ++j) {
      if (!std::isfinite(p[j])) throw std::invalid_argument("hypervolume: non-finite point");
      q[j] = senses[j] == Sense::minimize ? p[j] : -p[j];
      inside = inside && q[j] < ref[j];
    }
    if (inside) mins.push_back(std::move(q));
  }
  // A canonical order (the result is the same set's volume whatever order the points came in).
  std::sort(mins.begin(), mins.end());
  if (d >= 4) fewest_values_last(mins, ref);
  std::vector<const Point*> ptrs;
  ptrs.reserve(mins.size());
  for (const Point& p : mins) ptrs.push_back(&p);
  return hv(std::move(ptrs), ref.data(), d);
}

double hypervolume(std::span<const std::vector<double>> points, std::span<const double> reference) {
  const std::vector<Sense> senses(reference.size(), Sense::minimize);
  return hypervolume(points, reference, senses);
}

}  // namespace dse::search
