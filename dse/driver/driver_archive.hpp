// The driver's archive (internal to dse/driver/driver.cpp): one constraint-robust archive per workload
// with the records it keeps, the exact merge of the ranks' archives, and the byte packing of the
// driver's MPI messages.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "dse/driver/context.hpp"
#include "dse/driver/driver.hpp"
#include "dse/error.hpp"
#include "search/constraint_archive.hpp"

namespace dse::driver_detail {

// ---- plain byte packing of POD values ---------------------------------------------------------

template <class T>
void put(Bytes& b, const T& v) {
  const std::size_t at = b.size();
  b.resize(at + sizeof(T));
  std::memcpy(b.data() + at, &v, sizeof(T));
}

inline void append(Bytes& a, const Bytes& b) {
  const std::size_t at = a.size();
  a.resize(at + b.size());
  if (!b.empty()) std::memcpy(a.data() + at, b.data(), b.size());
}

template <class T>
T get(const Bytes& b, std::size_t& off) {
  if (off + sizeof(T) > b.size()) throw MpiError("truncated message");
  T v;
  std::memcpy(&v, b.data() + off, sizeof(T));
  off += sizeof(T);
  return v;
}

// Every rank's bytes, concatenated in the reduction tree's order, on rank 0 (collective; the
// other ranks get their subtree's part, which they drop).
Bytes gather_bytes(Context& ctx, Bytes mine);
// Every rank's bytes, concatenated in rank order, on every rank (collective: Context::all_gather).
Bytes all_gather_bytes(Context& ctx, Bytes mine);

// Every rank's part size, on every rank (collective): {the offset of this rank's part (the parts
// of the lower ranks before it), the total}.
std::pair<std::uint64_t, std::uint64_t> part_offset(Context& ctx, std::uint64_t size);

// The union of every rank's ids, sorted, on every rank (collective).
std::vector<std::uint32_t> union_of_ids(Context& ctx, const std::vector<std::uint32_t>& mine);

// ---- the archive: one constraint-robust archive per workload, with the records -------------

// Each part keeps its records in one vector whose storage is reused from flush to flush (it is
// compacted in place, never rebuilt): half a million 230-byte records are ~120 MB, and a fresh
// buffer of that size costs a page fault per 4 KiB page every time it is filled.
class Archive {
 public:
  explicit Archive(const PointModel& m) : model_(&m) {}

  // Queued: the archive files points in batches (ConstraintArchive::add).
  void insert(const PointRecord& r);

  // Files every queued point and drops the records no longer archived.
  void settle();
  // Each part's queue left to settle() (ConstraintArchive::defer_flushes), from now on; a part flushes
  // by itself at `factor` times its due size.
  void defer_flushes(std::size_t factor = search::ConstraintArchive::kDeferredFlushFactor);
  // Some part's queue is due to be filed (ConstraintArchive::flush_due).
  [[nodiscard]] bool flush_due() const;

  // The archived records (settle() first), in no set order: the one part's records in place, or
  // the parts' records copied one after another into `scratch`.
  std::span<const PointRecord> view(BigVector<PointRecord>& scratch) const;

  // The archived records, ordered by index; the archive is left empty.
  BigVector<PointRecord> take_sorted();

 private:
  struct Part {
    search::ConstraintArchive archive;
    BigVector<PointRecord> records;  // the archived points and the queued ones

    // Keep the records of archived points only (the first record of an index), in place and in
    // their order.
    void prune();
  };

  const PointModel* model_;
  std::map<std::uint32_t, Part> parts_;
  bool deferred_ = false;
  std::size_t deferred_factor_ = search::ConstraintArchive::kDeferredFlushFactor;
  search::Evaluation scratch_;  // insert's, its storage reused
};

// Per workload, the feasible points whose objectives no other point's dominate, ties kept (the
// Pareto front that /pareto lists and whose hypervolume a run reports): one
// search::ConstraintArchive without metrics per workload, so points are queued and filed in
// batches.
class ObjectiveFront {
 public:
  explicit ObjectiveFront(const PointModel& m) : model_(&m) {}

  // Queued (infeasible records are skipped).
  void insert(const PointRecord& r);
  // The same for a feasible point known by its workload, index and objectives (in the model's senses).
  void insert(std::uint32_t workload, std::uint64_t index, std::span<const double> objectives);
  // Files every queued point.
  void settle();
  // As Archive's.
  void defer_flushes(std::size_t factor = search::ConstraintArchive::kDeferredFlushFactor);
  [[nodiscard]] bool flush_due() const;
  // Settled, as bytes: per workload its id and its archive (ConstraintArchive::to_bytes).
  [[nodiscard]] Bytes pack();
  // Adds every point of a packed front and settles (throws MpiError on malformed bytes).
  void merge_packed(const Bytes& b);
  // Per workload, its points ordered by index (settle() first).
  [[nodiscard]] std::map<std::uint32_t, std::vector<search::ArchiveEntry>> entries() const;

 private:
  search::ConstraintArchive& part(std::uint32_t workload);

  const PointModel* model_;
  std::map<std::uint32_t, search::ConstraintArchive> parts_;
  bool deferred_ = false;
  std::size_t deferred_factor_ = search::ConstraintArchive::kDeferredFlushFactor;
  search::Evaluation scratch_;  // insert's, its storage reused
};

// The objective front over every rank's `local` front, on rank 0 (collective, along the
// reduction tree, each level filtering what it merges; the other ranks get an empty front).
ObjectiveFront global_front(Context& ctx, const PointModel& model, ObjectiveFront& local);

// This rank's share of the global archive: a range of point indices, ordered by index, and where it
// goes in /archive.
struct ArchivePart {
  BigVector<PointRecord> records;
  std::uint64_t offset = 0;  // the row of records[0] in /archive
  std::uint64_t total = 0;   // the rows of /archive (every rank's part)
};

// The global archive from every rank's local archive (collective). The keys of all local
// archives go to every rank; each rank keeps its own records that no other rank's key removes --
// exact, since a local archive holds no record another of its records removes -- all ranks at
// once. The survivors are then spread by index range (splitters from a sample of each rank's
// survivors, one all-to-all), so that each rank holds a contiguous, balanced part of /archive,
// merged in index order (an index evaluated on two ranks kept once, from the lower rank), and
// writes it itself.
ArchivePart global_archive(Context& ctx, const PointModel& model, BigVector<PointRecord> local);

}  // namespace dse::driver_detail
