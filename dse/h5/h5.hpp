// One thin RAII layer over the HDF5 C API: every handle closes itself, and
// every failing call becomes an IoError carrying HDF5's own error stack.
#pragma once

#include <hdf5.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace dse::h5 {

// How a file is opened: empty for the serial driver, or a function that sets a file-access
// property list up for MPI-IO on every rank (the driver's Context::configure_hdf5_access).
using FileAccess = std::function<void(hid_t fapl)>;

// Throws IoError(what + HDF5 error stack) when id < 0; returns id otherwise.
hid_t check(hid_t id, const std::string& what);
void check_status(herr_t rc, const std::string& what);

class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& o) noexcept : id_(o.id_), closer_(o.closer_) { o.id_ = -1; }
  Handle& operator=(Handle&& o) noexcept;
  ~Handle() { reset(); }
  void reset() noexcept;
  [[nodiscard]] hid_t id() const noexcept { return id_; }
  operator hid_t() const noexcept { return id_; }  // NOLINT(google-explicit-constructor)

 private:
  hid_t id_ = -1;
  Closer closer_ = nullptr;
};

// Silence HDF5's automatic stderr printing (errors come back as exceptions).
void quiet_errors();

// A file-access property list for files the project writes: the HDF5 1.8 format, in which an
// attribute may pass 64 KiB (dense attribute storage).
Handle file_access_with_large_attributes();
// Create (truncating) a file in that format; with a distributed context every rank must call it
// (collective).
Handle create_file(const std::string& path, const FileAccess& access);
// Open read-only with the default (serial) driver.
Handle open_file_readonly(const std::string& path);
// Open read-write; with a distributed context every rank must call it (collective).
Handle open_file_readwrite(const std::string& path, const FileAccess& access);

Handle fixed_string_type(std::size_t size);

// An empty compound type of `size` bytes (a record's layout), and one member of it: `member` at
// byte `offset` under `name`.
Handle compound_type(std::size_t size);
void add_member(hid_t compound, const std::string& name, std::size_t offset, hid_t member);

void write_attribute(hid_t loc, const std::string& name, const std::string& value);
void write_attribute(hid_t loc, const std::string& name, std::int64_t value);
void write_attribute(hid_t loc, const std::string& name, double value);
[[nodiscard]] bool has_attribute(hid_t loc, const std::string& name);
[[nodiscard]] std::string read_string_attribute(hid_t loc, const std::string& name);
[[nodiscard]] std::int64_t read_int_attribute(hid_t loc, const std::string& name);

// A 1-D dataset of `rows` elements of `type`, contiguous (collective create).
Handle create_dataset_1d(hid_t file, const std::string& name, hid_t type, std::uint64_t rows);
// Write rows [offset, offset+count) of a 1-D dataset from buf; `collective` selects
// MPI-IO collective transfer (every rank must call, count may be 0).
void write_rows(hid_t dset, hid_t mem_type, const void* buf, std::uint64_t offset, std::uint64_t count,
                bool collective);
[[nodiscard]] std::uint64_t dataset_rows(hid_t dset);

// A 1-D extensible dataset (unlimited rows), chunked by `chunk_rows` and
// deflate-compressed at `deflate_level` (0: uncompressed). Collective create. Rows it is
// extended by hold whatever the file held until they are written (no fill values).
Handle create_extensible_1d(hid_t file, const std::string& name, hid_t type, std::uint64_t chunk_rows,
                            int deflate_level);
Handle open_dataset(hid_t file, const std::string& name);
// Grow or shrink a dataset made by create_extensible_1d (collective).
void set_rows(hid_t dset, std::uint64_t rows);
// A run of consecutive rows: file rows [offset, offset + count).
struct RowRun {
  std::uint64_t offset = 0;
  std::uint64_t count = 0;
};
// Write buf (the rows of all runs, in run order) to the runs, which must be
// ascending and disjoint. Collective when `collective` (every rank calls, with
// its own runs, possibly none).
void write_runs(hid_t dset, hid_t mem_type, const void* buf, const std::vector<RowRun>& runs, bool collective);
void read_all(hid_t dset, hid_t mem_type, void* buf);
// Read rows [offset, offset+count) of a 1-D dataset into buf (independent transfer).
void read_rows(hid_t dset, hid_t mem_type, std::uint64_t offset, std::uint64_t count, void* buf);
[[nodiscard]] bool has_link(hid_t loc, const std::string& name);
// Unlink `name` from loc if it is there (collective on a file open with MPI-IO).
void remove_link(hid_t loc, const std::string& name);

// Flush a file (H5Fflush, global scope).
//
// Failures of collective writes on a file open with MPI-IO (flush, set_rows,
// write_attribute, create_dataset_1d, create_extensible_1d, and write_rows / write_runs
// when collective) do not throw: the ranks could not agree on them (HDF5 returns early on
// the failing rank while the others wait inside the call), so the failing rank prints one
// line on stderr, removes the file if this process created it, and stops every rank
// (MPI_Abort, exit code 1). Serial files throw IoError as usual.
void flush(hid_t file);

}  // namespace dse::h5

namespace dse::h5 {

// Rewrite the serial file `path` with dataset `name` (one-dimensional, any row type)
// chunked by up to `chunk_rows` rows and compressed (byte shuffle + deflate `level`),
// every other object and the root attributes copied as they are. The new file is
// written beside it and renamed over it, so `path` is either the old file or the
// complete new one; on failure the new file is removed and IoError thrown. Not
// collective: parallel HDF5 1.10 cannot write filtered datasets reliably from many
// ranks, so one rank compresses the finished file.
// Links named in `leave_out` are not copied (checkpoint datasets a killed attempt left
// half written: driver.hpp, DriverResult::stale_checkpoints).
// The new file is made with O_EXCL | O_NOFOLLOW (a link or other non-regular file in its place is
// refused; a regular file left by a killed run is replaced), and only when the folder has room for
// a copy as large as `path` (IoError otherwise: a full disk crashed HDF5 inside H5Ocopy).
// `cancel` (SIGINT/SIGTERM) is checked between chunks: Interrupted, the new file removed.
void rewrite_compressed(const std::string& path, const std::string& name, std::uint64_t chunk_rows, int level,
                        const std::vector<std::string>& leave_out = {},
                        const std::atomic<bool>* cancel = nullptr);

}  // namespace dse::h5
