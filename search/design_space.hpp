// A design space addressed by a mixed-radix index: knob j has radix r_j and the
// point index i decodes to digits d_j with i = d_0 + r_0 * (d_1 + r_1 * (...)).
// Any rank decodes any point without talking to the others.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dse::search {

class DesignSpace {
 public:
  struct Knob {
    std::string name;
    std::uint64_t radix = 1;
  };

  // Throws std::overflow_error when the product of radices exceeds 2^63 - 1,
  // std::invalid_argument for a zero radix.
  explicit DesignSpace(std::vector<Knob> knobs);

  [[nodiscard]] std::uint64_t size() const noexcept { return size_; }
  [[nodiscard]] const std::vector<Knob>& knobs() const noexcept { return knobs_; }
  // Digits of point `index` (index < size()), knob 0 fastest.
  [[nodiscard]] std::vector<std::uint64_t> decode(std::uint64_t index) const;
  [[nodiscard]] std::uint64_t encode(const std::vector<std::uint64_t>& digits) const;

 private:
  std::vector<Knob> knobs_;
  std::uint64_t size_ = 1;
};

}  // namespace dse::search
