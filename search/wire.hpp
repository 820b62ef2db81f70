// Plain little-endian byte encoding for values that cross ranks (MPI) or go
// into checkpoints: the same bytes on every host, whatever its endianness.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <stdexcept>
#include <vector>

namespace dse::search::wire {

inline void put_u64(std::vector<std::byte>& out, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xffU));
}
inline void put_u32(std::vector<std::byte>& out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xffU));
}
inline void put_u8(std::vector<std::byte>& out, std::uint8_t v) { out.push_back(static_cast<std::byte>(v)); }
inline void put_f64(std::vector<std::byte>& out, double v) { put_u64(out, std::bit_cast<std::uint64_t>(v)); }

// Reads what the put_* functions wrote; throws std::invalid_argument on truncated input.
class Reader {
 public:
  explicit Reader(std::span<const std::byte> bytes) : bytes_(bytes) {}

  std::uint64_t u64() { return take(8); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(take(4)); }
  std::uint8_t u8() { return static_cast<std::uint8_t>(take(1)); }
  double f64() { return std::bit_cast<double>(take(8)); }
  [[nodiscard]] bool at_end() const noexcept { return pos_ == bytes_.size(); }
  [[nodiscard]] std::size_t remaining() const noexcept { return bytes_.size() - pos_; }

 private:
  std::uint64_t take(std::size_t n) {
    if (bytes_.size() - pos_ < n) throw std::invalid_argument("wire::Reader: truncated input");
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v |= std::to_integer<std::uint64_t>(bytes_[pos_ + i]) << (8 * i);
    pos_ += n;
    return v;
  }

  std::span<const std::byte> bytes_;
  std::size_t pos_ = 0;
};

}  // namespace dse::search::wire
