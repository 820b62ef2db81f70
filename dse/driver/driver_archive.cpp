#include "dse/driver/driver_archive.hpp"

#include <algorithm>
#include <functional>
#include <queue>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "dse/driver/agree.hpp"
#include "search/dominance_filter.hpp"

namespace dse::driver_detail {

namespace {

// `rows` ordered by index, equal indices in their order (stable). A record is ~230 bytes:
// sorting (index, position) pairs and copying each record once is several times faster than
// sorting the records (stable_sort of 524,288 records: 0.35 s).
BigVector<PointRecord> sorted_by_index(const BigVector<PointRecord>& rows) {
  std::vector<std::pair<std::uint64_t, std::size_t>> order(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) order[i] = {rows[i].index, i};
  std::sort(order.begin(), order.end());
  BigVector<PointRecord> out;
  out.reserve(rows.size());
  for (const auto& [index, i] : order) out.push_back(rows[i]);
  return out;
}

// Key rows (objectives in minimisation form, then the metrics) of records, by workload. Each
// workload's rows are sized up front: grown row by row, the copies of a 354,577-record part's 31 MB
// were two thirds of this function's time (perf, a 2-rank single-op run).
std::map<std::uint32_t, BigVector<double>> keys_by_workload(const PointModel& model,
                                                            std::span<const PointRecord> rows) {
  const std::size_t stride = model.senses.size() + model.metric_count;
  std::map<std::uint32_t, std::size_t> count;
  for (const auto& r : rows) ++count[r.workload_id];
  std::map<std::uint32_t, BigVector<double>> out;
  for (const auto& [w, n] : count) out[w].reserve(n * stride);
  search::Evaluation e;
  for (const auto& r : rows) {
    model.fill_evaluation(r, e);
    auto& k = out[r.workload_id];
    for (std::size_t j = 0; j < model.senses.size(); ++j) {
      k.push_back(model.senses[j] == search::Sense::minimize ? e.objectives[j] : -e.objectives[j]);
    }
    k.insert(k.end(), e.constraints.begin(), e.constraints.end());
  }
  return out;
}

}  // namespace

Bytes gather_bytes(Context& ctx, Bytes mine) {
  return tree_reduce(ctx, std::move(mine), [](Bytes a, Bytes b) {
    append(a, b);
    return a;
  });
}

Bytes all_gather_bytes(Context& ctx, Bytes mine) { return ctx.all_gather(std::move(mine)); }

void Archive::insert(const PointRecord& r) {
  if (r.feasible == 0) return;
  search::Evaluation& e = scratch_;
  model_->fill_evaluation(r, e);
  auto it = parts_.find(r.workload_id);
  if (it == parts_.end()) {
    it = parts_.emplace(r.workload_id, Part{search::ConstraintArchive(model_->senses, model_->metric_count), {}})
             .first;
    it->second.archive.defer_flushes(deferred_, deferred_factor_);
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

void Archive::defer_flushes(std::size_t factor) {
  deferred_ = true;
  deferred_factor_ = factor;
  for (auto& [w, p] : parts_) p.archive.defer_flushes(true, factor);
}

bool Archive::flush_due() const {
  return std::any_of(parts_.begin(), parts_.end(), [](const auto& wp) { return wp.second.archive.flush_due(); });
}

std::span<const PointRecord> Archive::view(BigVector<PointRecord>& scratch) const {
  if (parts_.size() == 1) return parts_.begin()->second.records;
  scratch.clear();
  for (const auto& [w, p] : parts_) scratch.insert(scratch.end(), p.records.begin(), p.records.end());
  return scratch;
}

BigVector<PointRecord> Archive::take_sorted() {
  settle();
  BigVector<PointRecord> out;
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

// Which records of `local` no other rank's key removes. `mine` holds, per workload, the distinct
// key rows of this rank's records of that workload (in `local` order: of_row) that every rank
// sent; `all` is the all-gather of every rank's distinct rows.
std::vector<unsigned char> kept_records(Context& ctx, const PointModel& model, std::span<const PointRecord> local,
                                        const std::map<std::uint32_t, search::DistinctRows>& mine, const Bytes& all,
                                        std::size_t stride) {
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
  for (const auto& [w, rows] : mine) {
    const auto it = other_keys.find(w);
    if (it == other_keys.end()) continue;
    // One decision per distinct row, then each record takes its row's.
    std::vector<unsigned char> row_kept(rows.values.size() / stride, 0);
    for (const std::size_t i : search::rows_not_removed_by(rows.values, it->second, stride, model.senses.size())) {
      row_kept[i] = 1;
    }
    const auto& pos = where.at(w);
    for (std::size_t j = 0; j < pos.size(); ++j) keep[pos[j]] = row_kept[rows.of_row.at(j)];
  }
  return keep;
}

// One rank's records for the merge, in index order: `count` records at `data`, or, with `pick`,
// those at the positions pick[0..count) of `data`.
struct Source {
  const char* data = nullptr;
  std::size_t count = 0;
  const std::size_t* pick = nullptr;
  std::size_t at = 0;  // the next record
  [[nodiscard]] const char* record() const { return data + (pick != nullptr ? pick[at] : at) * sizeof(PointRecord); }
  [[nodiscard]] std::uint64_t index() const {
    std::uint64_t index = 0;
    std::memcpy(&index, record() + offsetof(PointRecord, index), sizeof index);
    return index;
  }
};

// The records of `in` (each in index order, each index once) merged in index order, each
// record copied once, the lowest source first on equal indices: an index evaluated on two ranks
// (NSGA-II re-asks points; both carry the same record, and equal keys do not remove each other)
// is kept once, from the lowest rank, as an archive insert does. Source r is rank r's records.
BigVector<PointRecord> merge_by_index(std::vector<Source> in) {
  using Head = std::pair<std::uint64_t, std::size_t>;  // (index, source), least first
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
  std::size_t total = 0;
  for (std::size_t s = 0; s < in.size(); ++s) {
    total += in[s].count;
    if (in[s].count > 0) heads.emplace(in[s].index(), s);
  }
  BigVector<PointRecord> out;
  out.reserve(total);
  while (!heads.empty()) {
    const auto [index, s] = heads.top();
    heads.pop();
    Source& src = in[s];
    if (out.empty() || out.back().index != index) {
      out.emplace_back();
      std::memcpy(&out.back(), src.record(), sizeof(PointRecord));
    }
    if (++src.at == src.count) continue;
    const std::uint64_t next = src.index();
    if (next <= index) throw MpiError("archive records out of index order");
    heads.emplace(next, s);
  }
  return out;
}

// Samples of each rank's survivors per splitter: enough that the parts differ from equal
// shares by about 1 / (2 kSamples) of the archive at worst.
constexpr std::size_t kSamples = 64;

// P - 1 index boundaries that cut the survivors of all ranks into P parts of about equal size
// (collective; every rank gets the same): each rank's kSamples evenly spaced survivor indices,
// each standing for its share of that rank's survivors.
std::vector<std::uint64_t> splitters(Context& ctx, const std::vector<std::uint64_t>& survivors) {
  Bytes mine;
  agreed(ctx, [&] {
    const std::size_t n = survivors.size();
    const std::size_t s = std::min(n, kSamples);
    put(mine, static_cast<std::uint64_t>(n));
    put(mine, static_cast<std::uint64_t>(s));
    for (std::size_t i = 0; i < s; ++i) put(mine, survivors[(2 * i + 1) * n / (2 * s)]);
  });
  const Bytes all = all_gather_bytes(ctx, std::move(mine));
  std::vector<std::uint64_t> out;
  agreed(ctx, [&] {
    std::vector<std::pair<std::uint64_t, double>> weighted;  // (index, survivors it stands for)
    double total = 0.0;
    for (std::size_t off = 0; off < all.size();) {
      const auto n = get<std::uint64_t>(all, off);
      const auto s = get<std::uint64_t>(all, off);
      for (std::uint64_t i = 0; i < s; ++i) {
        weighted.emplace_back(get<std::uint64_t>(all, off), static_cast<double>(n) / static_cast<double>(s));
      }
      total += static_cast<double>(n);
    }
    std::sort(weighted.begin(), weighted.end());
    const auto p = static_cast<std::size_t>(ctx.size());
    double seen = 0.0;
    std::size_t at = 0;
    for (std::size_t k = 1; k < p; ++k) {
      const double want = total * static_cast<double>(k) / static_cast<double>(p);
      while (at < weighted.size() && seen + weighted[at].second <= want) seen += weighted[at++].second;
      out.push_back(at < weighted.size() ? weighted[at].first : ~std::uint64_t{0});
    }
  });
  return out;
}

// The survivors of every rank spread by index range: rank r gets those in [split[r-1], split[r])
// (collective, one all-to-all of the records that change rank; a rank's own share is read where it
// is), merged in index order.
BigVector<PointRecord> spread_by_index(Context& ctx, std::span<const PointRecord> local,
                                         const std::vector<unsigned char>& keep) {
  std::vector<std::uint64_t> survivors;
  agreed(ctx, [&] {
    for (std::size_t i = 0; i < local.size(); ++i)
      if (keep[i] != 0) survivors.push_back(local[i].index);
  });
  const std::vector<std::uint64_t> split = splitters(ctx, survivors);
  const auto me = static_cast<std::size_t>(ctx.rank());
  std::vector<Bytes> out(static_cast<std::size_t>(ctx.size()));
  std::vector<std::size_t> mine;  // positions in `local` of the survivors this rank keeps
  agreed(ctx, [&] {
    // `local` is in index order: each rank's share is one range of it.
    std::size_t begin = 0;
    for (std::size_t to = 0; to < out.size(); ++to) {
      std::size_t end = begin;
      while (end < local.size() && (to == split.size() || local[end].index < split[to])) ++end;
      if (to == me) {
        for (std::size_t i = begin; i < end; ++i)
          if (keep[i] != 0) mine.push_back(i);
      } else {
        std::size_t n = 0;
        for (std::size_t i = begin; i < end; ++i) n += keep[i] != 0 ? 1 : 0;
        Bytes& b = out[to];
        b.resize(n * sizeof(PointRecord));
        char* at = b.data();
        for (std::size_t i = begin; i < end; ++i) {
          if (keep[i] == 0) continue;
          std::memcpy(at, &local[i], sizeof(PointRecord));
          at += sizeof(PointRecord);
        }
      }
      begin = end;
    }
  });
  const std::vector<Bytes> in = ctx.exchange(std::move(out));
  BigVector<PointRecord> part;
  agreed(ctx, [&] {
    std::vector<Source> sources(in.size());
    for (std::size_t r = 0; r < in.size(); ++r) {
      if (r == me) {
        sources[r] = {reinterpret_cast<const char*>(local.data()), mine.size(), mine.data()};
        continue;
      }
      if (in[r].size() % sizeof(PointRecord) != 0) throw MpiError("truncated archive message");
      sources[r] = {in[r].data(), in[r].size() / sizeof(PointRecord)};
    }
    part = merge_by_index(std::move(sources));
  });
  return part;
}

}  // namespace

// Every rank's part sizes, on every rank (collective): the offset of this rank's part and the total.
std::pair<std::uint64_t, std::uint64_t> part_offset(Context& ctx, std::uint64_t size) {
  Bytes mine;
  put(mine, static_cast<std::uint64_t>(ctx.rank()));
  put(mine, size);
  const Bytes all = all_gather_bytes(ctx, std::move(mine));
  std::uint64_t offset = 0;
  std::uint64_t total = 0;
  for (std::size_t off = 0; off < all.size();) {
    const auto r = get<std::uint64_t>(all, off);
    const auto n = get<std::uint64_t>(all, off);
    if (r < static_cast<std::uint64_t>(ctx.rank())) offset += n;
    total += n;
  }
  return {offset, total};
}

std::vector<std::uint32_t> union_of_ids(Context& ctx, const std::vector<std::uint32_t>& mine) {
  Bytes b(mine.size() * sizeof(std::uint32_t));
  if (!b.empty()) std::memcpy(b.data(), mine.data(), b.size());
  b = all_gather_bytes(ctx, std::move(b));
  std::vector<std::uint32_t> ids(b.size() / sizeof(std::uint32_t));
  if (!ids.empty()) std::memcpy(ids.data(), b.data(), ids.size() * sizeof(std::uint32_t));
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

ArchivePart global_archive(Context& ctx, const PointModel& model, BigVector<PointRecord> local) {
  ArchivePart out;
  if (!ctx.distributed() || ctx.size() == 1) {
    test_fault_point("merge", ctx.rank());
    out.total = local.size();
    out.records = std::move(local);
    return out;
  }
  const std::size_t stride = model.senses.size() + model.metric_count;
  // Each rank sends the distinct key rows of its records (per workload, in lexicographic order):
  // copies of a key decide alike and remove alike (search::distinct_rows), and a design space
  // often maps many points to one key (the single-operator bench: 254,170 records, 4,204 keys).
  std::map<std::uint32_t, search::DistinctRows> mine_keys;
  Bytes mine;
  agreed(ctx, [&] {
    for (auto& [w, keys] : keys_by_workload(model, local)) mine_keys[w] = search::distinct_rows(keys, stride);
    put(mine, static_cast<std::uint64_t>(ctx.rank()));
    put(mine, static_cast<std::uint64_t>(mine_keys.size()));
    for (const auto& [w, rows] : mine_keys) {
      put(mine, static_cast<std::uint64_t>(w));
      put(mine, static_cast<std::uint64_t>(rows.values.size()));
      const std::size_t at = mine.size();
      mine.resize(at + rows.values.size() * sizeof(double));
      std::memcpy(mine.data() + at, rows.values.data(), rows.values.size() * sizeof(double));
    }
  });
  const Bytes all = all_gather_bytes(ctx, std::move(mine));
  // Each rank keeps the records of `local` that no other rank's key removes.
  std::vector<unsigned char> keep(local.size(), 1);
  agreed(ctx, [&] {
    test_fault_point("merge", ctx.rank());
    keep = kept_records(ctx, model, local, mine_keys, all, stride);
  });
  out.records = spread_by_index(ctx, local, keep);
  std::tie(out.offset, out.total) = part_offset(ctx, out.records.size());
  return out;
}

// ---- the objective front ---------------------------------------------------------------------------

search::ConstraintArchive& ObjectiveFront::part(std::uint32_t workload) {
  auto it = parts_.find(workload);
  if (it == parts_.end()) {
    it = parts_.emplace(workload, search::ConstraintArchive(model_->senses, 0)).first;
    it->second.defer_flushes(deferred_, deferred_factor_);
  }
  return it->second;
}

void ObjectiveFront::insert(const PointRecord& r) {
  if (r.feasible == 0) return;
  model_->fill_evaluation(r, scratch_);
  insert(r.workload_id, scratch_.index, scratch_.objectives);
}

void ObjectiveFront::insert(std::uint32_t workload, std::uint64_t index, std::span<const double> objectives) {
  part(workload).add(index, objectives, {});
}

void ObjectiveFront::settle() {
  for (auto& [w, a] : parts_) a.flush();
}

void ObjectiveFront::defer_flushes(std::size_t factor) {
  deferred_ = true;
  deferred_factor_ = factor;
  for (auto& [w, a] : parts_) a.defer_flushes(true, factor);
}

bool ObjectiveFront::flush_due() const {
  return std::any_of(parts_.begin(), parts_.end(), [](const auto& wa) { return wa.second.flush_due(); });
}

Bytes ObjectiveFront::pack() {
  settle();
  Bytes out;
  for (const auto& [w, a] : parts_) {
    const std::vector<std::byte> b = a.to_bytes();
    put(out, static_cast<std::uint64_t>(w));
    put(out, static_cast<std::uint64_t>(b.size()));
    const std::size_t at = out.size();
    out.resize(at + b.size());
    std::memcpy(out.data() + at, b.data(), b.size());
  }
  return out;
}

void ObjectiveFront::merge_packed(const Bytes& b) {
  for (std::size_t off = 0; off < b.size();) {
    const auto w = static_cast<std::uint32_t>(get<std::uint64_t>(b, off));
    const auto n = get<std::uint64_t>(b, off);
    if (n > b.size() - off) throw MpiError("truncated front message");
    try {
      const auto* at = reinterpret_cast<const std::byte*>(b.data() + off);
      part(w).merge(search::ConstraintArchive::from_bytes(std::span<const std::byte>(at, static_cast<std::size_t>(n))));
    } catch (const std::invalid_argument& e) {
      throw MpiError(std::string("malformed front message: ") + e.what());
    }
    off += static_cast<std::size_t>(n);
  }
  settle();
}

std::map<std::uint32_t, std::vector<search::ArchiveEntry>> ObjectiveFront::entries() const {
  std::map<std::uint32_t, std::vector<search::ArchiveEntry>> out;
  for (const auto& [w, a] : parts_) out[w] = a.entries();
  return out;
}

ObjectiveFront global_front(Context& ctx, const PointModel& model, ObjectiveFront& local) {
  Bytes mine;
  agreed(ctx, [&] { mine = local.pack(); });
  Bytes all = tree_reduce(ctx, std::move(mine), [&model](Bytes a, Bytes b) {
    ObjectiveFront f(model);
    f.merge_packed(a);
    f.merge_packed(b);
    return f.pack();
  });
  ObjectiveFront out(model);
  agreed(ctx, [&] {
    if (ctx.rank() == 0) out.merge_packed(all);
  });
  return out;
}

}  // namespace dse::driver_detail
