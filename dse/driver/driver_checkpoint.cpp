#include "dse/driver/driver_checkpoint.hpp"

#include <algorithm>

#include "dse/error.hpp"

namespace dse::driver_detail {

namespace {

herr_t collect_checkpoint(hid_t /*group*/, const char* name, const H5L_info_t* /*info*/, void* out) {
  const std::string n = name;
  if (n.rfind("checkpoint_archive_", 0) == 0 || n.rfind("sampler_state_", 0) == 0) {
    static_cast<std::vector<std::string>*>(out)->push_back(n);
  }
  return 0;
}

}  // namespace

std::vector<std::string> delete_checkpoints(hid_t file, std::int64_t attempt, const std::vector<std::string>& committed) {
  std::vector<std::string> names;
  std::vector<std::string> stale;
  h5::check_status(H5Literate(file, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_checkpoint, &names), "H5Literate");
  const std::string mine = "_a" + std::to_string(attempt);
  for (const auto& n : names) {
    const bool ours = n.size() > mine.size() && n.compare(n.size() - mine.size(), mine.size(), mine) == 0;
    if (ours || std::find(committed.begin(), committed.end(), n) != committed.end()) {
      h5::check_status(H5Ldelete(file, n.c_str(), H5P_DEFAULT), "H5Ldelete " + n);
    } else {
      stale.push_back(n);
    }
  }
  return stale;
}

h5::Handle fresh_dataset(hid_t file, const std::string& name, hid_t type, std::uint64_t chunk_rows, int deflate) {
  h5::remove_link(file, name);
  return h5::create_extensible_1d(file, name, type, chunk_rows, deflate);
}

h5::Handle fresh_archive_checkpoint(hid_t file, const std::string& name) {
  return fresh_dataset(file, name, H5T_STD_U64LE, 8192, kDeflate);
}

void write_archive(hid_t file, Context& ctx, const ArchivePart& part) {
  const h5::Handle type = point_record_type();
  const h5::Handle ds = fresh_dataset(file, "archive", type, 1024, kDeflate);
  h5::set_rows(ds, part.total);
  std::vector<h5::RowRun> runs;
  if (!part.records.empty()) runs.push_back({part.offset, part.records.size()});
  h5::write_runs(ds, type, part.records.data(), runs, ctx.distributed());
}

ArchivePart read_archive_part(hid_t file, Context& ctx) {
  const h5::Handle ds = h5::open_dataset(file, "archive");
  ArchivePart part;
  part.total = h5::dataset_rows(ds);
  const auto p = static_cast<std::uint64_t>(ctx.size());
  const auto r = static_cast<std::uint64_t>(ctx.rank());
  part.offset = part.total * r / p;
  part.records.resize(static_cast<std::size_t>(part.total * (r + 1) / p - part.offset));
  const h5::Handle type = point_record_type();
  if (!part.records.empty()) h5::read_rows(ds, type, part.offset, part.records.size(), part.records.data());
  return part;
}

std::uint64_t write_rank_rows(hid_t ds, Context& ctx, std::span<const std::uint64_t> local, std::uint64_t base) {
  Bytes mine;
  put(mine, static_cast<std::uint64_t>(ctx.rank()));
  put(mine, static_cast<std::uint64_t>(local.size()));
  const Bytes all = all_gather_bytes(ctx, std::move(mine));
  std::vector<std::uint64_t> sizes(static_cast<std::size_t>(ctx.size()), 0);
  for (std::size_t off = 0; off < all.size();) {
    const auto r = get<std::uint64_t>(all, off);
    sizes.at(r) = get<std::uint64_t>(all, off);
  }
  std::uint64_t offset = base;
  std::uint64_t total = 0;
  for (std::size_t r = 0; r < sizes.size(); ++r) {
    if (static_cast<int>(r) < ctx.rank()) offset += sizes[r];
    total += sizes[r];
  }
  h5::set_rows(ds, base + total);
  std::vector<h5::RowRun> runs;
  if (!local.empty()) runs.push_back({offset, local.size()});
  h5::write_runs(ds, H5T_NATIVE_UINT64, local.data(), runs, ctx.distributed());
  return total;
}

void write_bytes_dataset(hid_t file, Context& ctx, const std::string& name, const std::vector<std::byte>& bytes) {
  const h5::Handle ds = fresh_dataset(file, name, H5T_STD_U8LE, 65536, 0);
  h5::set_rows(ds, bytes.size());
  std::vector<h5::RowRun> runs;
  if (ctx.rank() == 0 && !bytes.empty()) runs.push_back({0, bytes.size()});
  h5::write_runs(ds, H5T_NATIVE_UCHAR, bytes.data(), runs, ctx.distributed());
}

std::vector<std::byte> read_bytes_dataset(hid_t file, const std::string& name) {
  const h5::Handle ds = h5::open_dataset(file, name);
  std::vector<std::byte> out(h5::dataset_rows(ds));
  if (!out.empty()) h5::read_all(ds, H5T_NATIVE_UCHAR, out.data());
  return out;
}

namespace {

// This rank's share (rows i = rank mod P) of the first `rows` rows of the archive checkpoint
// `name`, as records: the indices it holds evaluated again, or, in a checkpoint written before
// checkpoints held indices, its records as stored (and `records` set: the next checkpoint must
// write the archive afresh, as indices).
std::vector<PointRecord> checkpoint_share(hid_t file, Context& ctx, const std::string& name, std::uint64_t rows,
                                          const std::function<std::vector<PointRecord>(
                                              const std::vector<std::uint64_t>&)>& evaluate,
                                          bool& records) {
  const h5::Handle ds = h5::open_dataset(file, name);
  if (h5::dataset_rows(ds) < rows) throw IoError("checkpoint archive is shorter than its committed rows");
  const auto p = static_cast<std::uint64_t>(ctx.size());
  const auto r = static_cast<std::uint64_t>(ctx.rank());
  const h5::Handle stored(h5::check(H5Dget_type(ds), "H5Dget_type " + name), H5Tclose);
  records = H5Tget_class(stored) == H5T_COMPOUND;
  if (records) {  // a checkpoint of an earlier version
    std::vector<PointRecord> all(static_cast<std::size_t>(rows));
    const h5::Handle type = point_record_type();
    if (!all.empty()) h5::read_rows(ds, type, 0, all.size(), all.data());
    std::vector<PointRecord> mine;
    for (std::uint64_t i = r; i < rows; i += p) mine.push_back(all[static_cast<std::size_t>(i)]);
    return mine;
  }
  std::vector<std::uint64_t> all(static_cast<std::size_t>(rows));
  if (!all.empty()) h5::read_rows(ds, H5T_NATIVE_UINT64, 0, all.size(), all.data());
  std::vector<std::uint64_t> mine;
  for (std::uint64_t i = r; i < rows; i += p) mine.push_back(all[static_cast<std::size_t>(i)]);
  return evaluate(mine);
}

}  // namespace

ArchiveCheckpoint restore_archive(Context& ctx, hid_t file, const DriverOptions& opt, bool store_rows,
                                  std::uint64_t rows_done, std::int64_t rounds, std::int64_t archive_attempt,
                                  const std::function<std::vector<PointRecord>(const std::vector<std::uint64_t>&)>& evaluate,
                                  const std::function<void(const PointRecord&)>& file_record) {
  ArchiveCheckpoint out;
  // A checkpoint written before the archive checkpoint became append-only has neither
  // attribute: its whole dataset of the last round is the archive.
  const bool appended = h5::has_attribute(file, kArchiveRound);
  out.round = appended ? h5::read_int_attribute(file, kArchiveRound) : rounds;
  const std::string committed_archive = checkpoint_name("checkpoint_archive", out.round, archive_attempt);
  const bool lost_archive = !h5::has_link(file, committed_archive);
  const std::string lost_what =
      "the archive checkpoint " + committed_archive + " that the file's counters name is missing (a killed run)";
  if (lost_archive && !store_rows) {
    throw IoError(lost_what + ", and the file keeps no rows to rebuild it from (--store " +
                  std::string(to_string(opt.store)) + "): the run cannot be resumed; start it again");
  }
  if (lost_archive) {
    // The counters name an archive checkpoint the file no longer links: seen once in the
    // kill -9 tests, killed right after the first checkpoint (how HDF5 lost the link is not
    // known). /points holds every row the counters commit, and the archive of those rows
    // is the archive the checkpoint held: it is rebuilt from them, and the next checkpoint
    // writes it afresh.
    // Read in blocks (rows past the committed count belong to an unfinished round).
    const h5::Handle points = h5::open_dataset(file, "points");
    if (h5::dataset_rows(points) < rows_done) throw IoError("/points is shorter than its committed rows");
    const h5::Handle record = point_record_type();
    const auto p = static_cast<std::uint64_t>(ctx.size());
    std::vector<PointRecord> block;
    for (std::uint64_t at = 0; at < rows_done;) {
      block.resize(static_cast<std::size_t>(std::min<std::uint64_t>(rows_done - at, 1u << 16)));
      h5::read_rows(points, record, at, block.size(), block.data());
      for (std::size_t i = 0; i < block.size(); ++i)
        if ((at + i) % p == static_cast<std::uint64_t>(ctx.rank())) file_record(block[i]);
      at += block.size();
    }
    out.rewrite = true;
    if (ctx.rank() == 0 && opt.warn) {
      opt.warn(lost_what + "; the archive was rebuilt from the " + std::to_string(rows_done) +
               " committed rows of /points");
    }
    return out;
  }
  std::uint64_t rows = 0;
  if (appended) {
    rows = static_cast<std::uint64_t>(h5::read_int_attribute(file, kArchiveRows));
  } else {
    rows = h5::dataset_rows(h5::open_dataset(file, committed_archive));
  }
  out.rows = rows;  // rows past the committed count belong to an unfinished checkpoint
  for (const PointRecord& r : checkpoint_share(file, ctx, committed_archive, rows, evaluate, out.rewrite))
    file_record(r);
  return out;
}

}  // namespace dse::driver_detail
