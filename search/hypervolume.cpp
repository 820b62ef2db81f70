#include "search/hypervolume.hpp"

#include <algorithm>
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

double hv(std::vector<const Point*> pts, const double* ref, std::size_t d) {
  if (pts.empty()) return 0.0;
  if (d == 1) {
    double lo = ref[0];
    for (const Point* p : pts) lo = std::min(lo, (*p)[0]);
    return ref[0] - lo;
  }
  if (d == 2) return hv2(std::move(pts), ref);
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
