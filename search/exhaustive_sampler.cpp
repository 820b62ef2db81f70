#include "search/exhaustive_sampler.hpp"

#include <algorithm>
#include <stdexcept>

namespace dse::search {

ExhaustiveSampler::ExhaustiveSampler(std::uint64_t begin, std::uint64_t end) : range_{begin, end}, next_(begin) {
  if (end < begin) throw std::invalid_argument("ExhaustiveSampler: end < begin");
}

IndexRange ExhaustiveSampler::ask_range(std::uint64_t n) {
  const std::uint64_t take = std::min<std::uint64_t>(n, range_.end - next_);
  const IndexRange r{next_, next_ + take};
  next_ += take;
  return r;
}

std::vector<std::uint64_t> ExhaustiveSampler::ask(std::size_t n) {
  const IndexRange r = ask_range(n);
  std::vector<std::uint64_t> ids;
  ids.reserve(static_cast<std::size_t>(r.size()));
  for (std::uint64_t i = r.begin; i < r.end; ++i) ids.push_back(i);
  return ids;
}

void ExhaustiveSampler::tell(std::span<const Evaluation> results) {
  for (const auto& e : results) {
    if (e.index < range_.begin || e.index >= next_) {
      throw std::invalid_argument("ExhaustiveSampler::tell: index was not handed out");
    }
  }
  told_ += results.size();
}

void ExhaustiveSampler::seek(std::uint64_t cursor) {
  if (cursor < range_.begin || cursor > range_.end) throw std::out_of_range("ExhaustiveSampler::seek");
  next_ = cursor;
}

IndexRange split_range(IndexRange range, std::uint64_t parts, std::uint64_t part) {
  if (parts == 0 || part >= parts) throw std::invalid_argument("split_range: part out of range");
  const std::uint64_t n = range.size();
  const std::uint64_t base = n / parts;
  const std::uint64_t extra = n % parts;
  const std::uint64_t begin = range.begin + part * base + std::min(part, extra);
  return {begin, begin + base + (part < extra ? 1 : 0)};
}

}  // namespace dse::search
