#include "dse/h5/h5.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <thread>

#include "dse/error.hpp"

namespace dse::h5 {

namespace {

herr_t collect(unsigned n, const H5E_error2_t* e, void* client) {
  auto* out = static_cast<std::string*>(client);
  if (n > 3) return 0;  // the innermost few frames say what went wrong
  std::string desc = e->desc != nullptr ? e->desc : "?";
  // Some HDF5 descriptions span lines ("unable to open file: time = ...\n, name = ...");
  // an error is one line on stderr.
  std::replace(desc.begin(), desc.end(), '\n', ' ');
  *out += "; ";
  *out += desc;
  if (e->func_name != nullptr) *out += std::string(" [") + e->func_name + "]";
  return 0;
}

// Why `path` cannot be created or opened for writing, in the words of the OS (root
// ignores permissions, so a permission problem shows only for other users).
std::string write_access_problem(const std::string& path, bool exists) {
  const std::filesystem::path p(path);
  const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
  const std::string target = exists ? path : dir.string();
  if (access(target.c_str(), W_OK) != 0) {
    const int err = errno;
    return (exists ? "" : "directory ") + target + ": " + std::strerror(err);
  }
  return "";
}

hid_t check_writable(hid_t id, const std::string& path, bool exists, const std::string& what) {
  if (id >= 0) return id;
  const std::string problem = write_access_problem(path, exists);
  if (problem.empty()) return check(id, what);
  H5Eclear2(H5E_DEFAULT);
  throw IoError("cannot write " + path + " (" + problem + ")");
}

std::string error_stack() {
  std::string s;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect, &s);
  H5Eclear2(H5E_DEFAULT);
  return s;
}

// Whether `file` is open with the MPI-IO driver and, if so, whether this process created it
// (H5Fcreate opens it with MPI_MODE_CREATE) rather than opened an existing one (a checkpoint
// being resumed). Local calls only: H5Fget_access_plist would duplicate the communicator,
// a collective call that hangs when the other ranks are elsewhere.
struct MpioFile {
  bool mpio = false;
  bool created = false;
};

MpioFile mpio_file(hid_t file) {
  MpioFile out;
  hbool_t atomic = false;
  if (H5Fget_mpi_atomicity(file, &atomic) < 0) {  // fails for any other driver
    H5Eclear2(H5E_DEFAULT);
    return out;
  }
  out.mpio = true;
  void* handle = nullptr;
  int amode = 0;
  if (H5Fget_vfd_handle(file, H5P_DEFAULT, &handle) >= 0 && handle != nullptr &&
      MPI_File_get_amode(*static_cast<MPI_File*>(handle), &amode) == MPI_SUCCESS) {
    out.created = (amode & MPI_MODE_CREATE) != 0;
  }
  return out;
}

// A collective operation on loc's file returned rc on this rank. With MPI-IO a write can
// fail on some ranks only (a full disk hits the rank that writes past the end), and HDF5
// then returns early on those ranks while the others wait inside the same call (seen in
// H5Dset_extent: a barrier in H5D__chunk_allocate), so the ranks cannot agree afterwards
// and closing the file would hang. The failing rank therefore reports the error on one
// line, removes the file if this run created it, and stops every rank (MPI_Abort, exit
// code 1). Without MPI-IO a failure throws IoError as usual.
void check_collective(hid_t loc, herr_t rc, const std::string& what) {
  if (rc >= 0) return;
  const std::string error = what + " failed" + error_stack();
  const hid_t file = H5Iget_file_id(loc);
  const MpioFile mpio = file >= 0 ? mpio_file(file) : MpioFile{};
  if (!mpio.mpio) {
    if (file >= 0) H5Fclose(file);  // drops the reference H5Iget_file_id added
    throw IoError(error);
  }
  std::string name(4096, '\0');
  const ssize_t n = H5Fget_name(file, name.data(), name.size());
  name.resize(n > 0 ? static_cast<std::size_t>(std::min<ssize_t>(n, 4095)) : 0);
  // Several ranks may fail at once; the one that takes an exclusive lock on the file
  // reports (and removes it); the others stop silently. The lock ends with the process,
  // so the reporter holds it a moment before stopping the job: a rank that fails a few
  // milliseconds later must still find it taken (when the file is kept, a rank that came
  // after the reporter's exit took the lock too and reported a second line; CI, 2 ranks).
  const int fd = name.empty() ? -1 : open(name.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::string line = "dse: writing " + name + " failed on rank " + std::to_string(rank) + ": " + error;
    if (mpio.created) {
      std::error_code ec;
      std::filesystem::remove(name, ec);
      line += ec ? "; could not remove it (" + ec.message() + ")" : "; removed it";
    } else {
      line += "; the file is kept";
    }
    print_error_line(line + "; stopping all ranks");
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  remove_file_before_abort();                // the output lock (dse/driver/output_file.hpp)
  MPI_Abort(MPI_COMM_WORLD, kExitFailure);  // as MpiSession::abort (dse/driver/context.hpp)
  std::terminate();
}

// check_collective for a call that makes a dataset (parallel HDF5 allocates, and may write,
// its space when it is made).
Handle check_collective_dataset(hid_t loc, hid_t id, const std::string& what) {
  Handle h(id, H5Dclose);
  check_collective(loc, id < 0 ? -1 : 0, what);
  return h;
}

}  // namespace

hid_t check(hid_t id, const std::string& what) {
  if (id < 0) throw IoError(what + " failed" + error_stack());
  return id;
}

void check_status(herr_t rc, const std::string& what) {
  if (rc < 0) throw IoError(what + " failed" + error_stack());
}

Handle& Handle::operator=(Handle&& o) noexcept {
  if (this != &o) {
    reset();
    id_ = o.id_;
    closer_ = o.closer_;
    o.id_ = -1;
  }
  return *this;
}

void Handle::reset() noexcept {
  if (id_ >= 0 && closer_ != nullptr) closer_(id_);
  id_ = -1;
}

void quiet_errors() { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); }

Handle file_access_with_large_attributes() {
  Handle fapl(check(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate"), H5Pclose);
  // The HDF5 1.8 file format (not the 1.6 default): attributes past 64 KiB go to dense storage
  // instead of failing ("object header message is too large"). The scenario text is one
  // (issue 58 item 16); 1.8 objects are read by every HDF5 since 2008 and by h5py.
  check_status(H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_V18), "H5Pset_libver_bounds");
  return fapl;
}

Handle create_file(const std::string& path, const FileAccess& access) {
  Handle fapl = file_access_with_large_attributes();
  if (access) access(fapl.id());
  return {check_writable(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), path, false, "creating " + path),
          H5Fclose};
}

Handle open_file_readwrite(const std::string& path, const FileAccess& access) {
  Handle fapl(check(H5Pcreate(H5P_FILE_ACCESS), "H5Pcreate"), H5Pclose);
  if (access) access(fapl.id());
  return {check_writable(H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl), path, true, "opening " + path), H5Fclose};
}

Handle open_file_readonly(const std::string& path) {
  return {check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "opening " + path), H5Fclose};
}

Handle fixed_string_type(std::size_t size) {
  Handle t(check(H5Tcopy(H5T_C_S1), "H5Tcopy"), H5Tclose);
  check_status(H5Tset_size(t, size), "H5Tset_size");
  check_status(H5Tset_strpad(t, H5T_STR_NULLTERM), "H5Tset_strpad");
  return t;
}

Handle compound_type(std::size_t size) {
  return {check(H5Tcreate(H5T_COMPOUND, size), "H5Tcreate"), H5Tclose};
}

void add_member(hid_t compound, const std::string& name, std::size_t offset, hid_t member) {
  check_status(H5Tinsert(compound, name.c_str(), offset, member), "H5Tinsert " + name);
}

void write_attribute(hid_t loc, const std::string& name, const std::string& value) {
  Handle type(check(H5Tcopy(H5T_C_S1), "H5Tcopy"), H5Tclose);
  check_status(H5Tset_size(type, value.empty() ? 1 : value.size()), "H5Tset_size");
  check_status(H5Tset_cset(type, H5T_CSET_UTF8), "H5Tset_cset");
  Handle space(check(H5Screate(H5S_SCALAR), "H5Screate"), H5Sclose);
  Handle attr(check(H5Acreate2(loc, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), "creating attribute " + name),
              H5Aclose);
  const std::string padded = value.empty() ? std::string(1, '\0') : value;
  check_collective(loc, H5Awrite(attr, type, padded.data()), "writing attribute " + name);
}

void write_attribute(hid_t loc, const std::string& name, std::int64_t value) {
  Handle space(check(H5Screate(H5S_SCALAR), "H5Screate"), H5Sclose);
  Handle attr(check(H5Acreate2(loc, name.c_str(), H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT),
                    "creating attribute " + name),
              H5Aclose);
  check_collective(loc, H5Awrite(attr, H5T_NATIVE_INT64, &value), "writing attribute " + name);
}

void write_attribute(hid_t loc, const std::string& name, double value) {
  Handle space(check(H5Screate(H5S_SCALAR), "H5Screate"), H5Sclose);
  Handle attr(check(H5Acreate2(loc, name.c_str(), H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT),
                    "creating attribute " + name),
              H5Aclose);
  check_collective(loc, H5Awrite(attr, H5T_NATIVE_DOUBLE, &value), "writing attribute " + name);
}

bool has_attribute(hid_t loc, const std::string& name) {
  const htri_t r = H5Aexists(loc, name.c_str());
  check_status(r < 0 ? -1 : 0, "H5Aexists " + name);
  return r > 0;
}

std::string read_string_attribute(hid_t loc, const std::string& name) {
  Handle attr(check(H5Aopen(loc, name.c_str(), H5P_DEFAULT), "opening attribute " + name), H5Aclose);
  Handle type(check(H5Aget_type(attr), "H5Aget_type"), H5Tclose);
  if (H5Tget_class(type) != H5T_STRING) throw IoError("attribute " + name + " is not a string");
  if (H5Tis_variable_str(type) > 0) {
    char* p = nullptr;
    Handle mem(check(H5Tcopy(H5T_C_S1), "H5Tcopy"), H5Tclose);
    check_status(H5Tset_size(mem, H5T_VARIABLE), "H5Tset_size");
    check_status(H5Aread(attr, mem, &p), "reading attribute " + name);
    std::string s = p != nullptr ? p : "";
    H5free_memory(p);
    return s;
  }
  const std::size_t n = H5Tget_size(type);
  std::string s(n, '\0');
  check_status(H5Aread(attr, type, s.data()), "reading attribute " + name);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

std::int64_t read_int_attribute(hid_t loc, const std::string& name) {
  Handle attr(check(H5Aopen(loc, name.c_str(), H5P_DEFAULT), "opening attribute " + name), H5Aclose);
  std::int64_t v = 0;
  check_status(H5Aread(attr, H5T_NATIVE_INT64, &v), "reading attribute " + name);
  return v;
}

Handle create_dataset_1d(hid_t file, const std::string& name, hid_t type, std::uint64_t rows) {
  const hsize_t dims[1] = {rows};
  Handle space(check(H5Screate_simple(1, dims, nullptr), "H5Screate_simple"), H5Sclose);
  return check_collective_dataset(file, H5Dcreate2(file, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                                  "creating dataset " + name);
}

void write_rows(hid_t dset, hid_t mem_type, const void* buf, std::uint64_t offset, std::uint64_t count,
                bool collective) {
  // A dataset of no rows has no storage to write to: H5Dwrite of nothing into an empty contiguous
  // dataset failed with "addr overflow" (every point infeasible: an empty /pareto, issue 58 item
  // 14). Every rank sees the same extent, so every rank skips the collective call.
  if (dataset_rows(dset) == 0) return;
  Handle file_space(check(H5Dget_space(dset), "H5Dget_space"), H5Sclose);
  const hsize_t start[1] = {offset};
  const hsize_t cnt[1] = {count};
  Handle mem_space(check(H5Screate_simple(1, cnt, nullptr), "H5Screate_simple"), H5Sclose);
  if (count == 0) {
    check_status(H5Sselect_none(file_space), "H5Sselect_none");
    check_status(H5Sselect_none(mem_space), "H5Sselect_none");
  } else {
    check_status(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, cnt, nullptr),
                 "H5Sselect_hyperslab");
  }
  Handle xfer(check(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate"), H5Pclose);
  if (collective) check_status(H5Pset_dxpl_mpio(xfer, H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio");
  const herr_t rc = H5Dwrite(dset, mem_type, mem_space, file_space, xfer, buf);
  if (collective) {
    check_collective(dset, rc, "H5Dwrite");
  } else {
    check_status(rc, "H5Dwrite");
  }
}

std::uint64_t dataset_rows(hid_t dset) {
  Handle space(check(H5Dget_space(dset), "H5Dget_space"), H5Sclose);
  if (H5Sget_simple_extent_ndims(space) != 1) throw IoError("dataset is not one-dimensional");
  hsize_t dims[1] = {0};
  H5Sget_simple_extent_dims(space, dims, nullptr);
  return dims[0];
}

void read_all(hid_t dset, hid_t mem_type, void* buf) {
  check_status(H5Dread(dset, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), "H5Dread");
}

void read_rows(hid_t dset, hid_t mem_type, std::uint64_t offset, std::uint64_t count, void* buf) {
  if (count == 0) return;
  Handle file_space(check(H5Dget_space(dset), "H5Dget_space"), H5Sclose);
  const hsize_t start[1] = {offset};
  const hsize_t cnt[1] = {count};
  check_status(H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, nullptr, cnt, nullptr), "H5Sselect_hyperslab");
  Handle mem_space(check(H5Screate_simple(1, cnt, nullptr), "H5Screate_simple"), H5Sclose);
  check_status(H5Dread(dset, mem_type, mem_space, file_space, H5P_DEFAULT, buf), "H5Dread");
}

Handle create_extensible_1d(hid_t file, const std::string& name, hid_t type, std::uint64_t chunk_rows,
                            int deflate_level) {
  const hsize_t dims[1] = {0};
  const hsize_t maxdims[1] = {H5S_UNLIMITED};
  const hsize_t chunk[1] = {chunk_rows};
  Handle space(check(H5Screate_simple(1, dims, maxdims), "H5Screate_simple"), H5Sclose);
  Handle dcpl(check(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate"), H5Pclose);
  check_status(H5Pset_chunk(dcpl, 1, chunk), "H5Pset_chunk");
  // Every writer extends a dataset by rows it then writes (the committed row counts say which
  // rows count on resume), so chunks are not filled first: under MPI-IO HDF5 allocates a
  // dataset's chunks when it is extended and would write each chunk twice, zeros then rows
  // (the single-op bench's 1-rank run wrote 316.7 MB for 163.3 MB of rows, strace of pwritev).
  check_status(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER), "H5Pset_fill_time");
  if (deflate_level > 0) {
    check_status(H5Pset_shuffle(dcpl), "H5Pset_shuffle");
    check_status(H5Pset_deflate(dcpl, static_cast<unsigned>(deflate_level)), "H5Pset_deflate");
  }
  return check_collective_dataset(file, H5Dcreate2(file, name.c_str(), type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT),
                                  "creating dataset " + name);
}

Handle open_dataset(hid_t file, const std::string& name) {
  return {check(H5Dopen2(file, name.c_str(), H5P_DEFAULT), "opening dataset " + name), H5Dclose};
}

void set_rows(hid_t dset, std::uint64_t rows) {
  const hsize_t dims[1] = {rows};
  check_collective(dset, H5Dset_extent(dset, dims), "H5Dset_extent");
}

void write_runs(hid_t dset, hid_t mem_type, const void* buf, const std::vector<RowRun>& runs, bool collective) {
  if (dataset_rows(dset) == 0) return;  // as write_rows
  Handle file_space(check(H5Dget_space(dset), "H5Dget_space"), H5Sclose);
  std::uint64_t total = 0;
  for (const auto& r : runs) total += r.count;
  const hsize_t mem_dims[1] = {total > 0 ? total : 1};
  Handle mem_space(check(H5Screate_simple(1, mem_dims, nullptr), "H5Screate_simple"), H5Sclose);
  if (total == 0) {
    check_status(H5Sselect_none(file_space), "H5Sselect_none");
    check_status(H5Sselect_none(mem_space), "H5Sselect_none");
  } else {
    bool first = true;
    for (const auto& r : runs) {
      if (r.count == 0) continue;
      const hsize_t start[1] = {r.offset};
      const hsize_t cnt[1] = {r.count};
      check_status(H5Sselect_hyperslab(file_space, first ? H5S_SELECT_SET : H5S_SELECT_OR, start, nullptr, cnt,
                                       nullptr),
                   "H5Sselect_hyperslab");
      first = false;
    }
  }
  Handle xfer(check(H5Pcreate(H5P_DATASET_XFER), "H5Pcreate"), H5Pclose);
  if (collective) check_status(H5Pset_dxpl_mpio(xfer, H5FD_MPIO_COLLECTIVE), "H5Pset_dxpl_mpio");
  const herr_t rc = H5Dwrite(dset, mem_type, mem_space, file_space, xfer, total > 0 ? buf : nullptr);
  if (collective) {
    check_collective(dset, rc, "H5Dwrite");
  } else {
    check_status(rc, "H5Dwrite");
  }
}

bool has_link(hid_t loc, const std::string& name) { return H5Lexists(loc, name.c_str(), H5P_DEFAULT) > 0; }

void remove_link(hid_t loc, const std::string& name) {
  if (has_link(loc, name)) check_status(H5Ldelete(loc, name.c_str(), H5P_DEFAULT), "H5Ldelete " + name);
}

void flush(hid_t file) { check_collective(file, H5Fflush(file, H5F_SCOPE_GLOBAL), "H5Fflush"); }

}  // namespace dse::h5
