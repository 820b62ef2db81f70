// The driver's datasets (internal to dse/driver/driver.cpp): the checkpoint datasets and counters
// (driver.hpp says what each holds), /archive written by every rank for its part, and the
// checkpoint's archive restored on resume.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "dse/driver/context.hpp"
#include "dse/driver/driver.hpp"
#include "dse/driver/driver_archive.hpp"

namespace dse::driver_detail {

// Datasets are chunked but not compressed: with HDF5 1.10.8, collective writes to
// deflate-filtered datasets corrupted the heap in the kill/resume tests (a malloc
// assertion inside H5D__chunk_collective_write, about one run in ten with 4 ranks).
// /points is compressed after the run, serially by rank 0 (h5::rewrite_compressed in run.cpp).
inline constexpr int kDeflate = 0;

// Remove the checkpoint datasets of this attempt and the committed ones (collective: every rank
// lists the same names in the same order); return the others, which killed attempts left behind
// and which are not touched (driver.hpp, kAttempt).
std::vector<std::string> delete_checkpoints(hid_t file, std::int64_t attempt, const std::vector<std::string>& committed);

// A new dataset in place of any old one of that name (collective). Checkpoint data is written
// into fresh datasets rather than rewritten in place: rewriting a filtered chunk that other ranks
// wrote before left stale rows with parallel HDF5 1.10.
h5::Handle fresh_dataset(hid_t file, const std::string& name, hid_t type, std::uint64_t chunk_rows, int deflate);

// /archive afresh, each rank writing its part at its offset (collective).
void write_archive(hid_t file, Context& ctx, const ArchivePart& part);
// This rank's share of /archive as written (collective read of a finished run): rows
// [r total / P, (r + 1) total / P).
ArchivePart read_archive_part(hid_t file, Context& ctx);

// A fresh archive checkpoint dataset `name` (collective): the archived points' indices, u64 rows.
h5::Handle fresh_archive_checkpoint(hid_t file, const std::string& name);

// Each rank's `local` point indices at `base` + the rows of lower ranks in dataset `ds` (of u64),
// which is resized to hold them (collective); returns the rows written over all ranks.
std::uint64_t write_rank_rows(hid_t ds, Context& ctx, std::span<const std::uint64_t> local, std::uint64_t base);

// Rank 0's bytes as a fresh dataset `name` (collective), and read back (every rank).
void write_bytes_dataset(hid_t file, Context& ctx, const std::string& name, const std::vector<std::byte>& bytes);
std::vector<std::byte> read_bytes_dataset(hid_t file, const std::string& name);

// The committed archive checkpoint: where it is, how many rows of it count, and whether the next
// checkpoint must write it afresh.
struct ArchiveCheckpoint {
  std::int64_t round = 0;
  std::uint64_t rows = 0;
  bool rewrite = false;
};

// This rank's share of the committed archive checkpoint of `file`, each record given to
// `file_record` (the local archive and objective front). The checkpoint holds the archived points'
// indices (8 bytes a point where a record is 280): their records are `evaluate`d again, which
// gives them bit for bit (the model is a pure function of the index). A checkpoint of an earlier
// version holds the records themselves, read as they are.
ArchiveCheckpoint restore_archive(
    Context& ctx, hid_t file, const DriverOptions& opt, bool store_rows, std::uint64_t rows_done,
    std::int64_t rounds, std::int64_t archive_attempt,
    const std::function<std::vector<PointRecord>(const std::vector<std::uint64_t>&)>& evaluate,
    const std::function<void(const PointRecord&)>& file_record);

}  // namespace dse::driver_detail
