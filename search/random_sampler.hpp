// Random search with a counter-based generator: the k-th sample is a pure function
// of (seed, k), so any rank computes any draw without talking to the others and the
// sample is the same for any rank count.
//
// Two modes:
//  * Replacement::without (default): draw k is perm(k) for a keyed pseudo-random
//    permutation of [0, space size) (a balanced Feistel network over the next even
//    power of two, with cycle-walking). Draws are distinct; count <= space size.
//  * Replacement::with: draw k is uniform in [0, size) from splitmix64 of (seed, k)
//    (unbiased by rejection with a sub-counter); duplicates may occur.
#pragma once

#include <array>
#include <cstdint>

#include "search/exhaustive_sampler.hpp"
#include "search/sampler.hpp"

namespace dse::search {

// splitmix64's finaliser: a bijective 64-bit mixer.
[[nodiscard]] constexpr std::uint64_t mix64(std::uint64_t z) noexcept {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
// A hash of (seed, stream, counter): the counter-based generator's output.
[[nodiscard]] constexpr std::uint64_t counter_hash(std::uint64_t seed, std::uint64_t stream,
                                                   std::uint64_t counter) noexcept {
  return mix64(mix64(mix64(seed) ^ stream) ^ counter);
}

// Sequential draws from one (seed, stream): deterministic, no hidden state besides the counter.
class CounterRng {
 public:
  CounterRng(std::uint64_t seed, std::uint64_t stream) noexcept : seed_(seed), stream_(stream) {}
  std::uint64_t next_u64() noexcept { return counter_hash(seed_, stream_, counter_++); }
  // Uniform in [0, bound), unbiased (bound > 0).
  std::uint64_t below(std::uint64_t bound) noexcept;
  // Uniform in [0, 1) with 53 random bits.
  double unit() noexcept { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

 private:
  std::uint64_t seed_;
  std::uint64_t stream_;
  std::uint64_t counter_ = 0;
};

// A keyed pseudo-random bijection of [0, n).
class IndexPermutation {
 public:
  IndexPermutation(std::uint64_t n, std::uint64_t seed);
  // k < n -> a distinct value in [0, n). Throws std::out_of_range for k >= n.
  [[nodiscard]] std::uint64_t operator()(std::uint64_t k) const;
  [[nodiscard]] std::uint64_t size() const noexcept { return n_; }

 private:
  [[nodiscard]] std::uint64_t round_trip(std::uint64_t x) const noexcept;
  std::uint64_t n_;
  unsigned half_bits_ = 0;
  std::uint64_t mask_ = 0;
  std::array<std::uint64_t, 6> keys_{};
};

enum class Replacement { without, with };

class RandomSampler final : public Sampler {
 public:
  // `count` draws from a space of `space_size` points. Without replacement, count is
  // clamped to space_size. Throws std::invalid_argument for an empty space.
  RandomSampler(std::uint64_t space_size, std::uint64_t count, std::uint64_t seed,
                Replacement mode = Replacement::without);

  // The k-th draw (k < count()): the same on every rank.
  [[nodiscard]] std::uint64_t sample(std::uint64_t k) const;

  std::vector<std::uint64_t> ask(std::size_t n) override;
  // The next up to n draw numbers [k0, k1): a driver can hand these out and let
  // each rank call sample(k) itself.
  IndexRange ask_draws(std::uint64_t n);
  void tell(std::span<const Evaluation> results) override { told_ += results.size(); }
  [[nodiscard]] bool done() const override { return next_ == count_; }

  [[nodiscard]] std::uint64_t count() const noexcept { return count_; }
  [[nodiscard]] Replacement mode() const noexcept { return mode_; }
  [[nodiscard]] std::uint64_t cursor() const noexcept { return next_; }
  void seek(std::uint64_t cursor);
  [[nodiscard]] std::uint64_t told() const noexcept { return told_; }

 private:
  std::uint64_t size_;
  std::uint64_t count_;
  std::uint64_t seed_;
  Replacement mode_;
  IndexPermutation perm_;
  std::uint64_t next_ = 0;
  std::uint64_t told_ = 0;
};

}  // namespace dse::search
