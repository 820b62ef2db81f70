#include "dse/driver/driver_archive.hpp"

#include <algorithm>
#include <functional>
#include <queue>
#include <utility>

#include "dse/driver/agree.hpp"
#include "search/dominance_filter.hpp"

namespace dse::driver_detail {

namespace {

constexpr int kTagArchive = 7403;

// `rows` ordered by index, equal indices in their order (stable). A record is ~230 bytes:
// sorting (index, position) pairs and copying each record once is several times faster than
// sorting the records (stable_sort of 524,288 records: 0.35 s).
std::vector<PointRecord> sorted_by_index(const std::vector<PointRecord>& rows) {
  std::vector<std::pair<std::uint64_t, std::size_t>> order(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) order[i] = {rows[i].index, i};
  std::sort(order.begin(), order.end());
  std::vector<PointRecord> out;
  out.reserve(rows.size());
  for (const auto& [index, i] : order) out.push_back(rows[i]);
  return out;
}

// Key rows (objectives in minimisation form, then the metrics) of records, by workload.
std::map<std::uint32_t, std::vector<double>> keys_by_workload(const PointModel& model,
                                                              const std::vector<PointRecord>& rows) {
  std::map<std::uint32_t, std::vector<double>> out;
  for (const auto& r : rows) {
    const search::Evaluation e = model.to_evaluation(r);
    auto& k = out[r.workload_id];
    for (std::size_t j = 0; j < model.senses.size(); ++j) {
      k.push_back(model.senses[j] == search::Sense::minimize ? e.objectives[j] : -e.objectives[j]);
    }
    k.insert(k.end(), e.constraints.begin(), e.constraints.end());
  }
  return out;
}

// Every rank's bytes, concatenated in the reduction tree's order, on rank 0 (collective).
Bytes gather_bytes(Context& ctx, Bytes mine) {
  return tree_reduce(ctx, std::move(mine), [](Bytes a, Bytes b) {
    append(a, b);
    return a;
  });
}

}  // namespace

Bytes all_gather_bytes(Context& ctx, Bytes mine) {
  Bytes gathered = gather_bytes(ctx, std::move(mine));
  return ctx.broadcast(ctx.rank() == 0 ? gathered : Bytes{}, 0);
}

void Archive::insert(const PointRecord& r) {
  if (r.feasible == 0) return;
  const search::Evaluation e = model_->to_evaluation(r);
  auto it = parts_.find(r.workload_id);
  if (it == parts_.end()) {
    it = parts_.emplace(r.workload_id, Part{search::ConstraintArchive(model_->senses, model_->metric_count), {}})
             .first;
  }
  Part& p = it->second;
  p.archive.add(e.index, e.objectives, e.constraints);
  p.records.push_back(r);
  if (p.archive.pending() == 0) p.prune();  // add() flushed the queue
}

void Archive::settle() {
  for (auto& [w, p] : parts_) {
    p.archive.flush();
    p.prune();
  }
}

std::span<const PointRecord> Archive::view(std::vector<PointRecord>& scratch) const {
  if (parts_.size() == 1) return parts_.begin()->second.records;
  scratch.clear();
  for (const auto& [w, p] : parts_) scratch.insert(scratch.end(), p.records.begin(), p.records.end());
  return scratch;
}

std::vector<PointRecord> Archive::take_sorted() {
  settle();
  std::vector<PointRecord> out;
  if (parts_.size() == 1) {
    out = std::move(parts_.begin()->second.records);
  } else {
    view(out);  // the parts' records copied into `out`
  }
  parts_.clear();
  const auto by_index = [](const PointRecord& a, const PointRecord& b) { return a.index < b.index; };
  return std::is_sorted(out.begin(), out.end(), by_index) ? out : sorted_by_index(out);
}

// The records mostly arrive in index order (a rank's chunks are ranges of the sampler's ids), so
// each index is searched for from the last one found, with steps that double (a few comparisons in
// order, O(log n) out of order).
void Archive::Part::prune() {
  const std::vector<std::uint64_t> kept = archive.sorted_indices();
  std::vector<unsigned char> taken(kept.size(), 0);
  std::size_t out = 0;
  std::size_t k = 0;  // kept[k] is the last index found, or k == kept.size()
  for (std::size_t i = 0; i < records.size(); ++i) {
    const std::uint64_t index = records[i].index;
    std::size_t lo = 0;
    std::size_t hi = kept.size();
    if (k < kept.size() && kept[k] < index) {  // ahead: (k, k + step] holds it, or beyond
      std::size_t step = 1;
      lo = k + 1;
      while (k + step < kept.size() && kept[k + step] < index) {
        lo = k + step + 1;
        step *= 2;
      }
      hi = std::min(kept.size(), k + step + 1);
    } else if (k < kept.size()) {
      hi = k + 1;  // at or behind the last one found
    }
    k = static_cast<std::size_t>(std::lower_bound(kept.begin() + static_cast<std::ptrdiff_t>(lo),
                                                  kept.begin() + static_cast<std::ptrdiff_t>(hi), index) -
                                 kept.begin());
    if (k == kept.size() || kept[k] != index || taken[k] != 0) continue;
    taken[k] = 1;
    if (out != i) records[out] = records[i];
    ++out;
  }
  records.resize(out);
}

namespace {

std::vector<unsigned char> kept_records(Context& ctx, const PointModel& model, const std::vector<PointRecord>& local,
                                        const std::map<std::uint32_t, std::vector<double>>& mine_keys,
                                        const Bytes& all, std::size_t stride) {
  std::map<std::uint32_t, std::vector<double>> other_keys;
  for (std::size_t off = 0; off < all.size();) {
    const auto rank = get<std::uint64_t>(all, off);
    const auto parts = get<std::uint64_t>(all, off);
    for (std::uint64_t p = 0; p < parts; ++p) {
      const auto w = static_cast<std::uint32_t>(get<std::uint64_t>(all, off));
      const auto count = get<std::uint64_t>(all, off);
      if (count > (all.size() - off) / sizeof(double)) throw MpiError("truncated archive message");
      if (rank != static_cast<std::uint64_t>(ctx.rank())) {
        auto& k = other_keys[w];
        const std::size_t at = k.size();
        k.resize(at + count);
        std::memcpy(k.data() + at, all.data() + off, count * sizeof(double));
      }
      off += count * sizeof(double);
    }
  }
  std::map<std::uint32_t, std::vector<std::size_t>> where;  // workload -> positions in `local`
  for (std::size_t i = 0; i < local.size(); ++i) where[local[i].workload_id].push_back(i);
  std::vector<unsigned char> keep(local.size(), 1);
  for (const auto& [w, keys] : mine_keys) {
    const auto it = other_keys.find(w);
    if (it == other_keys.end()) continue;
    const auto& pos = where.at(w);
    for (const std::size_t j : pos) keep[j] = 0;
    for (const std::size_t i : search::rows_not_removed_by(keys, it->second, stride, model.senses.size())) {
      keep[pos[i]] = 1;
    }
  }
  return keep;
}

// Rank 0's own survivors and the other ranks' messages merged in index order.
std::vector<PointRecord> merge_survivors(std::vector<PointRecord> local, const std::vector<unsigned char>& keep,
                                         const std::vector<Bytes>& received) {
  // Every source's records are in index order with each index once (an archive's records), so
  // they are merged in index order, each record copied once, taking the lowest source first on
  // equal indices: an index evaluated on two ranks (NSGA-II re-asks points; both carry the same
  // record, and equal keys do not remove each other) is kept once, from the lowest rank, as an
  // archive insert does. Source 0 is rank 0's own survivors, source r its message from rank r.
  std::size_t kept = 0;  // rank 0's survivors, compacted in place
  for (std::size_t i = 0; i < local.size(); ++i) {
    if (keep[i] == 0) continue;
    if (kept != i) std::memcpy(&local[kept], &local[i], sizeof(PointRecord));
    ++kept;
  }
  struct Source {
    const char* data;
    std::size_t count;
    std::size_t at = 0;  // the next record
    [[nodiscard]] std::uint64_t index() const {
      std::uint64_t index = 0;
      std::memcpy(&index, data + at * sizeof(PointRecord) + offsetof(PointRecord, index), sizeof index);
      return index;
    }
  };
  std::vector<Source> sources{{reinterpret_cast<const char*>(local.data()), kept}};
  for (const Bytes& b : received) {
    if (b.size() % sizeof(PointRecord) != 0) throw MpiError("truncated archive message");
    sources.push_back({b.data(), b.size() / sizeof(PointRecord)});
  }
  using Head = std::pair<std::uint64_t, std::size_t>;  // (index, source), least first
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
  std::size_t total = 0;
  for (std::size_t s = 0; s < sources.size(); ++s) {
    total += sources[s].count;
    if (sources[s].count > 0) heads.emplace(sources[s].index(), s);
  }
  std::vector<PointRecord> out;
  out.reserve(total);
  while (!heads.empty()) {
    const auto [index, s] = heads.top();
    heads.pop();
    Source& src = sources[s];
    if (out.empty() || out.back().index != index) {
      out.emplace_back();
      std::memcpy(&out.back(), src.data + src.at * sizeof(PointRecord), sizeof(PointRecord));
    }
    if (++src.at == src.count) continue;
    const std::uint64_t next = src.index();
    if (next <= index) throw MpiError("archive records out of index order");
    heads.emplace(next, s);
  }
  return out;
}

// The kept records of every rank, merged on rank 0 in index order (collective; the other ranks
// get nothing).
std::vector<PointRecord> gather_survivors(Context& ctx, std::vector<PointRecord> local,
                                          const std::vector<unsigned char>& keep) {
  // The survivors go straight to rank 0, one message per rank (not along the reduction tree,
  // which would forward them), in `local`'s order, which is index order.
  std::vector<Bytes> received;
  if (ctx.rank() != 0) {
    Bytes kept;
    kept.reserve(static_cast<std::size_t>(std::count(keep.begin(), keep.end(), 1)) * sizeof(PointRecord));
    for (std::size_t i = 0; i < local.size(); ++i) {
      if (keep[i] == 0) continue;
      const std::size_t at = kept.size();
      kept.resize(at + sizeof(PointRecord));
      std::memcpy(kept.data() + at, &local[i], sizeof(PointRecord));
    }
    ctx.send(kept, 0, kTagArchive);
  } else {
    for (int r = 1; r < ctx.size(); ++r) received.push_back(ctx.receive(r, kTagArchive));
  }
  std::vector<PointRecord> out;
  agreed(ctx, [&] {
    if (ctx.rank() == 0) out = merge_survivors(std::move(local), keep, received);
  });
  return out;
}

}  // namespace

std::vector<PointRecord> global_archive(Context& ctx, const PointModel& model, std::vector<PointRecord> local) {
  if (!ctx.distributed() || ctx.size() == 1) {
    test_fault_point("merge", ctx.rank());
    return local;
  }
  const std::size_t stride = model.senses.size() + model.metric_count;
  std::map<std::uint32_t, std::vector<double>> mine_keys;
  Bytes mine;
  agreed(ctx, [&] {
    mine_keys = keys_by_workload(model, local);
    put(mine, static_cast<std::uint64_t>(ctx.rank()));
    put(mine, static_cast<std::uint64_t>(mine_keys.size()));
    for (const auto& [w, keys] : mine_keys) {
      put(mine, static_cast<std::uint64_t>(w));
      put(mine, static_cast<std::uint64_t>(keys.size()));
      const std::size_t at = mine.size();
      mine.resize(at + keys.size() * sizeof(double));
      std::memcpy(mine.data() + at, keys.data(), keys.size() * sizeof(double));
    }
  });
  const Bytes all = all_gather_bytes(ctx, std::move(mine));
  // Each rank keeps the records of `local` that no other rank's key removes.
  std::vector<unsigned char> keep(local.size(), 1);
  agreed(ctx, [&] {
    test_fault_point("merge", ctx.rank());
    keep = kept_records(ctx, model, local, mine_keys, all, stride);
  });
  return gather_survivors(ctx, std::move(local), keep);
}

}  // namespace dse::driver_detail
