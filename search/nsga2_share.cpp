// The selections of an island-model NSGA-II shared by cooperating copies (one per rank): each copy
// selects its own islands, and the parents every island keeps reach every copy as indices with
// their rank, crowding and violation (see Nsga2Sampler::share_selections).
#include <algorithm>
#include <stdexcept>

#include "search/nsga2.hpp"
#include "search/wire.hpp"

namespace dse::search {

void Nsga2Sampler::share_selections(std::size_t part, std::size_t parts, Exchange exchange) {
  if (parts == 0 || part >= parts) throw std::invalid_argument("Nsga2Sampler::share_selections: part not below parts");
  if (!exchange) throw std::invalid_argument("Nsga2Sampler::share_selections: no exchange");
  part_ = part;
  parts_ = parts;
  exchange_ = std::move(exchange);
}

// Each part's message: u8 status (1: its work succeeded), u64 body length, the body.
std::vector<std::vector<std::byte>> Nsga2Sampler::share(std::vector<std::byte> mine,
                                                        const std::exception_ptr& failure) const {
  std::vector<std::byte> framed;
  wire::put_u8(framed, failure ? 0 : 1);
  wire::put_u64(framed, failure ? 0 : mine.size());
  if (!failure) framed.insert(framed.end(), mine.begin(), mine.end());
  const std::vector<std::byte> all = exchange_(std::move(framed));
  if (failure) std::rethrow_exception(failure);
  std::vector<std::vector<std::byte>> parts;
  bool others_failed = false;
  const std::span<const std::byte> bytes(all);
  for (std::size_t pos = 0; pos < bytes.size();) {
    if (bytes.size() - pos < 9) throw std::runtime_error("Nsga2Sampler: truncated exchange");
    wire::Reader head(bytes.subspan(pos, 9));
    const bool ok = head.u8() != 0;
    const std::uint64_t length = head.u64();
    pos += 9;
    if (length > bytes.size() - pos) throw std::runtime_error("Nsga2Sampler: truncated exchange");
    if (!ok) others_failed = true;
    parts.emplace_back(all.begin() + static_cast<std::ptrdiff_t>(pos),
                       all.begin() + static_cast<std::ptrdiff_t>(pos + length));
    pos += length;
  }
  if (others_failed) throw std::runtime_error("Nsga2Sampler: another part failed its selections");
  if (parts.size() != parts_) throw std::runtime_error("Nsga2Sampler: an exchange without every part");
  return parts;
}

// Two exchanges when migrating: first each island's emigrants (indices; every copy knows their
// results), so that each part selects its islands among their parents and the migrants from the
// island before; then every island's parents and next offspring. Without migration only the second.
void Nsga2Sampler::select_shared(bool migrating) {
  const std::size_t k_all = islands_.size();
  const std::size_t first = part_ * k_all / parts_;
  const std::size_t last = (part_ + 1) * k_all / parts_;
  std::vector<std::vector<Member>> selected(k_all);
  std::vector<std::vector<std::uint64_t>> offspring(k_all);
  {
    const Known known = known_evaluations();
    std::exception_ptr failure;
    std::vector<std::byte> mine;
    try {
      for (std::size_t k = first; k < last; ++k) selected[k] = select(pool_of(k, known), islands_[k].size);
      if (migrating) {
        for (std::size_t k = first; k < last; ++k) {
          const auto out = emigrants_of(selected[k]);
          wire::put_u64(mine, k);
          wire::put_u64(mine, out.size());
          for (const Member* m : out) wire::put_u64(mine, m->evaluation.index);
        }
      }
    } catch (...) {
      failure = std::current_exception();
    }
    if (migrating) {
      std::vector<std::vector<std::uint64_t>> emigrants(k_all);
      for (const auto& body : share(std::move(mine), failure)) {
        wire::Reader in(body);
        while (!in.at_end()) {
          const std::uint64_t k = in.u64();
          if (k >= k_all) throw std::runtime_error("Nsga2Sampler: exchange names no island");
          auto& ids = emigrants[k];
          ids.resize(static_cast<std::size_t>(std::min<std::uint64_t>(in.u64(), in.remaining() / 8)));
          for (auto& id : ids) id = in.u64();
        }
      }
      mine.clear();
      try {
        for (std::size_t k = first; k < last; ++k) {
          Pool pool;
          pool.reserve(selected[k].size() + opt_.migration_size);
          for (const Member& m : selected[k]) pool.push_back(&m.evaluation);
          for (std::uint64_t id : emigrants[(k + k_all - 1) % k_all]) pool.push_back(known.at(id));
          selected[k] = select(std::move(pool), islands_[k].size);
        }
      } catch (...) {
        failure = std::current_exception();
      }
    }
    try {
      for (std::size_t k = first; k < last && !failure; ++k) {
        if (generation_ < opt_.generations) offspring[k] = offspring_of(k, selected[k], generation_ + 1);
        wire::put_u64(mine, k);
        wire::put_u64(mine, selected[k].size());
        for (const Member& m : selected[k]) {
          wire::put_u64(mine, m.evaluation.index);
          wire::put_u64(mine, m.rank);
          wire::put_f64(mine, m.crowding);
          wire::put_f64(mine, m.violation);
        }
        wire::put_u64(mine, offspring[k].size());
        for (std::uint64_t id : offspring[k]) wire::put_u64(mine, id);
      }
    } catch (...) {
      failure = std::current_exception();
    }
    for (const auto& body : share(std::move(mine), failure)) {
      wire::Reader in(body);
      while (!in.at_end()) {
        const std::uint64_t k = in.u64();
        if (k >= k_all) throw std::runtime_error("Nsga2Sampler: exchange names no island");
        const auto count = static_cast<std::size_t>(std::min<std::uint64_t>(in.u64(), in.remaining() / 32));
        const bool own = k >= first && k < last;  // this part's own message: already in place
        if (!own) selected[k].resize(count);
        for (std::size_t i = 0; i < count; ++i) {
          const std::uint64_t id = in.u64();
          const auto rank = static_cast<std::size_t>(in.u64());
          const double crowding = in.f64();
          const double violation = in.f64();
          if (!own) selected[k][i] = {*known.at(id), rank, crowding, violation};
        }
        auto ids =
            std::vector<std::uint64_t>(static_cast<std::size_t>(std::min<std::uint64_t>(in.u64(), in.remaining() / 8)));
        for (auto& id : ids) id = in.u64();
        if (!own) offspring[k] = std::move(ids);
      }
    }
  }
  for (std::size_t k = 0; k < k_all; ++k) {
    islands_[k].parents = std::move(selected[k]);
    islands_[k].offspring = std::move(offspring[k]);
  }
}

}  // namespace dse::search
