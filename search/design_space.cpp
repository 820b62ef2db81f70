#include "search/design_space.hpp"

#include <limits>
#include <stdexcept>

namespace dse::search {

DesignSpace::DesignSpace(std::vector<Knob> knobs) : knobs_(std::move(knobs)) {
  constexpr std::uint64_t kLimit = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  for (const auto& k : knobs_) {
    if (k.radix == 0) throw std::invalid_argument("design space knob '" + k.name + "' has no values");
    if (size_ > kLimit / k.radix) {
      throw std::overflow_error("design space has more than 2^63-1 points (knob '" + k.name +
                                "' overflows); sample it instead of enumerating it");
    }
    size_ *= k.radix;
  }
}

std::vector<std::uint64_t> DesignSpace::decode(std::uint64_t index) const {
  if (index >= size_) throw std::out_of_range("design space index out of range");
  std::vector<std::uint64_t> digits(knobs_.size());
  for (std::size_t j = 0; j < knobs_.size(); ++j) {
    digits[j] = index % knobs_[j].radix;
    index /= knobs_[j].radix;
  }
  return digits;
}

std::uint64_t DesignSpace::encode(const std::vector<std::uint64_t>& digits) const {
  if (digits.size() != knobs_.size()) throw std::invalid_argument("digit count differs from knob count");
  std::uint64_t index = 0;
  for (std::size_t j = knobs_.size(); j-- > 0;) {
    if (digits[j] >= knobs_[j].radix) throw std::out_of_range("digit out of range for knob " + knobs_[j].name);
    index = index * knobs_[j].radix + digits[j];
  }
  return index;
}

}  // namespace dse::search
