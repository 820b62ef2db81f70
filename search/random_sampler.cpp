#include "search/random_sampler.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace dse::search {

std::uint64_t CounterRng::below(std::uint64_t bound) noexcept {
  // Reject the lowest 2^64 mod bound values so that x % bound is exactly uniform.
  const std::uint64_t threshold = (0 - bound) % bound;
  for (;;) {
    const std::uint64_t x = next_u64();
    if (x >= threshold) return x % bound;
  }
}

IndexPermutation::IndexPermutation(std::uint64_t n, std::uint64_t seed) : n_(n) {
  if (n == 0) throw std::invalid_argument("IndexPermutation: empty domain");
  const unsigned bits = n <= 1 ? 1U : static_cast<unsigned>(std::bit_width(n - 1));
  half_bits_ = std::max(1U, (bits + 1) / 2);
  mask_ = half_bits_ >= 64 ? ~0ULL : (1ULL << half_bits_) - 1;
  for (std::size_t r = 0; r < keys_.size(); ++r) keys_[r] = counter_hash(seed, 0x5045524dULL, r);
}

std::uint64_t IndexPermutation::round_trip(std::uint64_t x) const noexcept {
  std::uint64_t left = x >> half_bits_;
  std::uint64_t right = x & mask_;
  for (const std::uint64_t key : keys_) {
    const std::uint64_t next = left ^ (mix64(key ^ right) & mask_);
    left = right;
    right = next;
  }
  return (left << half_bits_) | right;
}

std::uint64_t IndexPermutation::operator()(std::uint64_t k) const {
  if (k >= n_) throw std::out_of_range("IndexPermutation: k out of range");
  // Cycle-walking: the Feistel network permutes [0, 2^(2h)) with 2^(2h) < 4n, so the
  // walk leaves [0, n) at most a few times on average and lands on a bijection of [0, n).
  std::uint64_t x = k;
  do {
    x = round_trip(x);
  } while (x >= n_);
  return x;
}

RandomSampler::RandomSampler(std::uint64_t space_size, std::uint64_t count, std::uint64_t seed,
                             Replacement mode)
    : size_(space_size),
      count_(mode == Replacement::without ? std::min(count, space_size) : count),
      seed_(seed),
      mode_(mode),
      perm_(space_size == 0 ? 1 : space_size, seed) {
  if (space_size == 0) throw std::invalid_argument("RandomSampler: empty design space");
}

std::uint64_t RandomSampler::sample(std::uint64_t k) const {
  if (k >= count_) throw std::out_of_range("RandomSampler::sample: draw beyond count");
  if (mode_ == Replacement::without) return perm_(k);
  CounterRng rng(seed_, k);  // one stream per draw: its rejection sub-draws stay private
  return rng.below(size_);
}

IndexRange RandomSampler::ask_draws(std::uint64_t n) {
  const std::uint64_t take = std::min<std::uint64_t>(n, count_ - next_);
  const IndexRange r{next_, next_ + take};
  next_ += take;
  return r;
}

std::vector<std::uint64_t> RandomSampler::ask(std::size_t n) {
  const IndexRange r = ask_draws(n);
  std::vector<std::uint64_t> ids;
  ids.reserve(static_cast<std::size_t>(r.size()));
  for (std::uint64_t k = r.begin; k < r.end; ++k) ids.push_back(sample(k));
  return ids;
}

void RandomSampler::seek(std::uint64_t cursor) {
  if (cursor > count_) throw std::out_of_range("RandomSampler::seek");
  next_ = cursor;
}

}  // namespace dse::search
