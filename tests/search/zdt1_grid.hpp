// ZDT1 (Zitzler, Deb, Thiele 2000) on a mixed-radix grid, for the NSGA-II tests: kVars variables of
// kRadix levels each (x = digit / 1024); 1025^6 ~ 1.2e18 points fits the 2^63 index limit (30
// variables would not). f1 = x0, g = 1 + 9 sum(x1..x5) / 5, f2 = g (1 - sqrt(f1 / g)).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "search/design_space.hpp"

namespace dse::search::zdt1_grid {

inline constexpr std::size_t kVars = 6;
inline constexpr std::uint64_t kRadix = 1025;

inline DesignSpace space() {
  std::vector<DesignSpace::Knob> knobs;
  for (std::size_t i = 0; i < kVars; ++i) knobs.push_back({"x" + std::to_string(i), kRadix});
  return DesignSpace(knobs);
}

struct Point {
  double f1 = 0.0;
  double g = 0.0;
  double f2 = 0.0;
  std::vector<std::uint64_t> digits;
};

inline Point point(const DesignSpace& s, std::uint64_t id) {
  Point p;
  p.digits = s.decode(id);
  p.f1 = static_cast<double>(p.digits[0]) / static_cast<double>(kRadix - 1);
  double sum = 0;
  for (std::size_t i = 1; i < kVars; ++i) sum += static_cast<double>(p.digits[i]) / static_cast<double>(kRadix - 1);
  p.g = 1.0 + 9.0 * sum / static_cast<double>(kVars - 1);
  p.f2 = p.g * (1.0 - std::sqrt(p.f1 / p.g));
  return p;
}

}  // namespace dse::search::zdt1_grid
