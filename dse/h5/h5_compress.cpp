// h5::rewrite_compressed: a finished output file with its big dataset compressed.
#include <fcntl.h>
#include <oneapi/tbb/task_arena.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "dse/error.hpp"
#include "dse/h5/h5.hpp"
#include "dse/parallel.hpp"

namespace dse::h5 {

namespace {

// Copy every attribute of `from` to `to` byte for byte in its file type (the outputs
// carry fixed-size strings and numbers only; variable-length data is refused).
void copy_attributes(hid_t from, hid_t to) {
  H5O_info_t info;
  check_status(H5Oget_info2(from, &info, H5O_INFO_NUM_ATTRS), "H5Oget_info2");
  for (hsize_t i = 0; i < info.num_attrs; ++i) {
    const Handle a(check(H5Aopen_by_idx(from, ".", H5_INDEX_NAME, H5_ITER_INC, i, H5P_DEFAULT, H5P_DEFAULT),
                         "H5Aopen_by_idx"),
                   H5Aclose);
    const Handle type(check(H5Aget_type(a), "H5Aget_type"), H5Tclose);
    if (H5Tdetect_class(type, H5T_VLEN) > 0 || H5Tis_variable_str(type) > 0) {
      throw IoError("rewrite_compressed: variable-length attribute not supported");
    }
    const Handle space(check(H5Aget_space(a), "H5Aget_space"), H5Sclose);
    const ssize_t name_len = H5Aget_name(a, 0, nullptr);
    if (name_len < 0) throw IoError("H5Aget_name failed");
    std::string name(static_cast<std::size_t>(name_len) + 1, '\0');
    (void)H5Aget_name(a, name.size(), name.data());
    name.resize(static_cast<std::size_t>(name_len));
    const auto points = H5Sget_simple_extent_npoints(space);
    if (points < 0) throw IoError("H5Sget_simple_extent_npoints failed");
    std::vector<unsigned char> buf(static_cast<std::size_t>(points) * H5Tget_size(type));
    if (!buf.empty()) check_status(H5Aread(a, type, buf.data()), "reading attribute " + name);
    const Handle b(check(H5Acreate2(to, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT), "creating attribute " + name),
                   H5Aclose);
    if (!buf.empty()) check_status(H5Awrite(b, type, buf.data()), "writing attribute " + name);
  }
}

herr_t collect_link(hid_t /*group*/, const char* name, const H5L_info_t* /*info*/, void* out) {
  static_cast<std::vector<std::string>*>(out)->emplace_back(name);
  return 0;
}

void stop_if_cancelled(const std::atomic<bool>* cancel) {
  if (cancel != nullptr && cancel->load()) throw Interrupted("interrupted while compressing /points");
}

void copy_compressed(hid_t src_file, hid_t dst_file, const std::string& name, std::uint64_t chunk_rows, int level,
                     const std::atomic<bool>* cancel) {
  const Handle src(check(H5Dopen2(src_file, name.c_str(), H5P_DEFAULT), "opening " + name), H5Dclose);
  const Handle type(check(H5Dget_type(src), "H5Dget_type"), H5Tclose);
  const Handle src_space(check(H5Dget_space(src), "H5Dget_space"), H5Sclose);
  if (H5Sget_simple_extent_ndims(src_space) != 1) throw IoError("rewrite_compressed: " + name + " is not 1-D");
  hsize_t rows = 0;
  check_status(H5Sget_simple_extent_dims(src_space, &rows, nullptr), "H5Sget_simple_extent_dims");

  const hsize_t max_rows = H5S_UNLIMITED;
  const Handle dst_space(check(H5Screate_simple(1, &rows, &max_rows), "H5Screate_simple"), H5Sclose);
  const Handle dcpl(check(H5Pcreate(H5P_DATASET_CREATE), "H5Pcreate"), H5Pclose);
  const hsize_t chunk = std::max<hsize_t>(1, std::min<hsize_t>(rows, chunk_rows));
  check_status(H5Pset_chunk(dcpl, 1, &chunk), "H5Pset_chunk");
  check_status(H5Pset_shuffle(dcpl), "H5Pset_shuffle");
  check_status(H5Pset_deflate(dcpl, static_cast<unsigned>(level)), "H5Pset_deflate");
  const Handle dst(check(H5Dcreate2(dst_file, name.c_str(), type, dst_space, H5P_DEFAULT, dcpl, H5P_DEFAULT),
                         "creating " + name),
                   H5Dclose);
  copy_attributes(src, dst);

  // Chunks are shuffled and deflated in parallel (TBB) and written as they are
  // (H5Dwrite_chunk); the filters declared above decode them on read. A batch of
  // chunks is read, compressed and written at a time, so memory stays a few chunks
  // per thread.
  const std::size_t row_bytes = H5Tget_size(type);
  const std::size_t chunk_bytes = static_cast<std::size_t>(chunk) * row_bytes;
  const auto threads = static_cast<hsize_t>(std::max(1, tbb::this_task_arena::max_concurrency()));
  const hsize_t batch = std::min<hsize_t>(64, 4 * threads);
  std::vector<unsigned char> rows_buf(static_cast<std::size_t>(batch) * chunk_bytes);
  std::vector<std::vector<unsigned char>> packed(static_cast<std::size_t>(batch));
  std::vector<int> status(static_cast<std::size_t>(batch), Z_OK);
  for (hsize_t first = 0; first < rows; first += batch * chunk) {
    stop_if_cancelled(cancel);
    const hsize_t count = std::min(batch * chunk, rows - first);
    const Handle mem(check(H5Screate_simple(1, &count, nullptr), "H5Screate_simple"), H5Sclose);
    check_status(H5Sselect_hyperslab(src_space, H5S_SELECT_SET, &first, nullptr, &count, nullptr),
                 "H5Sselect_hyperslab");
    check_status(H5Dread(src, type, mem, src_space, H5P_DEFAULT, rows_buf.data()), "reading " + name);
    const auto chunks = static_cast<std::size_t>((count + chunk - 1) / chunk);
    dse::parallel_for(std::size_t{0}, chunks, [&](std::size_t c) {
      // A chunk is stored whole, the rows past the end zero.
      const std::size_t begin = c * chunk_bytes;
      const std::size_t valid = std::min(chunk_bytes, static_cast<std::size_t>(count) * row_bytes - begin);
      const auto n = static_cast<std::size_t>(chunk);
      std::vector<unsigned char> shuffled(chunk_bytes, 0);
      // Byte b of row i goes to b * n + i (HDF5's shuffle filter), 64 rows at a time so
      // that the source rows stay in cache and each write fills one cache line.
      const std::size_t valid_rows = valid / row_bytes;
      for (std::size_t i0 = 0; i0 < valid_rows; i0 += 64) {
        const std::size_t i1 = std::min(valid_rows, i0 + 64);
        const unsigned char* from = rows_buf.data() + begin;
        for (std::size_t b = 0; b < row_bytes; ++b) {
          unsigned char* to = shuffled.data() + b * n;
          for (std::size_t i = i0; i < i1; ++i) to[i] = from[i * row_bytes + b];
        }
      }
      auto& out = packed[c];
      uLongf size = compressBound(static_cast<uLong>(shuffled.size()));
      out.resize(size);
      status[c] = compress2(out.data(), &size, shuffled.data(), static_cast<uLong>(shuffled.size()), level);
      out.resize(size);
    });
    for (std::size_t c = 0; c < chunks; ++c) {
      if (status[c] != Z_OK) throw IoError("compressing " + name + ": zlib error " + std::to_string(status[c]));
      const hsize_t offset = first + static_cast<hsize_t>(c) * chunk;
      check_status(H5Dwrite_chunk(dst, H5P_DEFAULT, 0, &offset, packed[c].size(), packed[c].data()),
                   "writing " + name);
    }
  }
}

// A one-dimensional dataset copied as it is (type, creation properties, attributes), rows read and
// written in blocks. H5Ocopy is not used: when a write failed during the copy (a full disk), HDF5
// 1.10.8 crashed in its clean-up (SIGSEGV in H5T_close_real, issue 58 item 4); H5Dwrite returns
// the error.
void copy_rows(hid_t src_file, hid_t dst_file, const std::string& name, const std::atomic<bool>* cancel) {
  H5O_info_t info;
  check_status(H5Oget_info_by_name2(src_file, name.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT), "H5Oget_info " + name);
  if (info.type != H5O_TYPE_DATASET) throw IoError("rewrite_compressed: " + name + " is not a dataset");
  const Handle src(check(H5Dopen2(src_file, name.c_str(), H5P_DEFAULT), "opening " + name), H5Dclose);
  const Handle type(check(H5Dget_type(src), "H5Dget_type"), H5Tclose);
  const Handle space(check(H5Dget_space(src), "H5Dget_space"), H5Sclose);
  if (H5Sget_simple_extent_ndims(space) != 1) throw IoError("rewrite_compressed: " + name + " is not 1-D");
  if (H5Tdetect_class(type, H5T_VLEN) > 0 || H5Tis_variable_str(type) > 0) {
    throw IoError("rewrite_compressed: " + name + " has variable-length data");
  }
  hsize_t rows = 0;
  check_status(H5Sget_simple_extent_dims(space, &rows, nullptr), "H5Sget_simple_extent_dims");
  const Handle dcpl(check(H5Dget_create_plist(src), "H5Dget_create_plist"), H5Pclose);
  const Handle dst(check(H5Dcreate2(dst_file, name.c_str(), type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT),
                         "creating " + name),
                   H5Dclose);
  copy_attributes(src, dst);
  const std::size_t row_bytes = H5Tget_size(type);
  // An unfiltered chunked dataset (the archive, the mapping sheets) is written chunk by chunk with
  // H5Dwrite_chunk: H5Dwrite of a chunk that fails to reach the disk leaked its chunk buffer in
  // HDF5 1.10.8 (196 kB under LSan). Whole chunks are read at a time, the last one zero-padded.
  hsize_t chunk = 0;
  const bool direct = H5Pget_layout(dcpl) == H5D_CHUNKED && H5Pget_nfilters(dcpl) == 0 &&
                      H5Pget_chunk(dcpl, 1, &chunk) == 1 && chunk > 0;
  const hsize_t block = direct ? chunk * std::max<hsize_t>(1, (std::size_t{8} << 20) / (chunk * std::max<std::size_t>(1, row_bytes)))
                               : std::max<hsize_t>(1, (std::size_t{8} << 20) / std::max<std::size_t>(1, row_bytes));
  std::vector<unsigned char> buf;
  for (hsize_t first = 0; first < rows; first += block) {
    stop_if_cancelled(cancel);
    const hsize_t count = std::min(block, rows - first);
    buf.assign(static_cast<std::size_t>(direct ? (count + chunk - 1) / chunk * chunk : count) * row_bytes, 0);
    const Handle mem(check(H5Screate_simple(1, &count, nullptr), "H5Screate_simple"), H5Sclose);
    const Handle from(check(H5Scopy(space), "H5Scopy"), H5Sclose);
    check_status(H5Sselect_hyperslab(from, H5S_SELECT_SET, &first, nullptr, &count, nullptr), "H5Sselect_hyperslab");
    check_status(H5Dread(src, type, mem, from, H5P_DEFAULT, buf.data()), "reading " + name);
    if (!direct) {
      check_status(H5Dwrite(dst, type, mem, from, H5P_DEFAULT, buf.data()), "writing " + name);
      continue;
    }
    const std::size_t chunk_bytes = static_cast<std::size_t>(chunk) * row_bytes;
    for (hsize_t at = 0; at < count; at += chunk) {
      const hsize_t offset = first + at;
      check_status(H5Dwrite_chunk(dst, H5P_DEFAULT, 0, &offset, chunk_bytes, buf.data() + at * row_bytes),
                   "writing " + name);
    }
  }
}

// The new file, made empty without following a link and only if no other process made it.
void create_exclusively(const std::string& tmp) {
  struct stat st {};
  if (::lstat(tmp.c_str(), &st) == 0) {
    if (!S_ISREG(st.st_mode)) {
      throw IoError(tmp + (S_ISLNK(st.st_mode) ? " is a symbolic link" : " is not a regular file") +
                    " (not written through)");
    }
    if (::unlink(tmp.c_str()) != 0) throw IoError("cannot replace " + tmp + ": " + std::strerror(errno));
  }
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) throw IoError("cannot create " + tmp + ": " + std::strerror(errno));
  ::close(fd);
}

// IoError when the folder of `path` has less free space than the file takes: the compressed copy
// may take as much (HDF5 1.10.8 crashed in H5Ocopy when the disk filled during the copy).
void require_room_for_a_copy(const std::string& path) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) throw IoError("cannot read the size of " + path + ": " + ec.message());
  const std::filesystem::path dir = std::filesystem::path(path).has_parent_path()
                                        ? std::filesystem::path(path).parent_path()
                                        : std::filesystem::path(".");
  struct statvfs fs {};
  if (::statvfs(dir.c_str(), &fs) != 0) return;  // unknown: try, and let a full disk fail as it fails
  const auto free_bytes = static_cast<std::uintmax_t>(fs.f_bavail) * fs.f_frsize;
  if (free_bytes < size) {
    throw IoError("not enough free space in " + dir.string() + " to compress (" + std::to_string(free_bytes) +
                  " bytes free, up to " + std::to_string(size) + " needed)");
  }
}

// Closes a file this process writes alone (sec2 driver) that must be abandoned after a failed write.
// HDF5 1.10.8 keeps the ID of a file whose H5Fclose fails (its flush writes again, and fails again
// on a full disk) and crashes on it when the library shuts down (SIGSEGV in H5F__close_cb, inside
// MPI_Finalize). The file's descriptor is first pointed at an anonymous memory file, so that the
// close flushes into memory and succeeds; the file on disk is removed by the caller.
void abandon_file(hid_t file) {
  void* handle = nullptr;
  if (H5Fget_vfd_handle(file, H5P_DEFAULT, &handle) >= 0 && handle != nullptr) {
    const int fd = *static_cast<int*>(handle);
    const int mem = ::memfd_create("dse-abandoned-hdf5", MFD_CLOEXEC);
    if (mem >= 0) {
      (void)::dup3(mem, fd, O_CLOEXEC);
      ::close(mem);
    }
  }
  // A file-size limit (ulimit -f) holds for the memory file too: lifted to the hard limit while
  // the abandoned file closes (its data goes to memory, not to the disk).
  rlimit old{};
  const bool limited = ::getrlimit(RLIMIT_FSIZE, &old) == 0 && old.rlim_cur != old.rlim_max;
  if (limited) {
    rlimit raised = old;
    raised.rlim_cur = old.rlim_max;
    (void)::setrlimit(RLIMIT_FSIZE, &raised);
  }
  if (H5Fclose(file) < 0) H5Eclear2(H5E_DEFAULT);
  if (limited) (void)::setrlimit(RLIMIT_FSIZE, &old);
}

// The copy into `dst`: the root attributes, every link but `leave_out`, dataset `name` compressed.
void copy_file(hid_t src, hid_t dst, const std::string& name, std::uint64_t chunk_rows, int level,
               const std::vector<std::string>& leave_out, const std::atomic<bool>* cancel) {
  const Handle src_root(check(H5Gopen2(src, "/", H5P_DEFAULT), "H5Gopen2"), H5Gclose);
  const Handle dst_root(check(H5Gopen2(dst, "/", H5P_DEFAULT), "H5Gopen2"), H5Gclose);
  copy_attributes(src_root, dst_root);
  std::vector<std::string> links;
  check_status(H5Literate(src, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_link, &links), "H5Literate");
  for (const auto& link : links) {
    stop_if_cancelled(cancel);
    if (std::find(leave_out.begin(), leave_out.end(), link) != leave_out.end()) continue;
    if (link == name) {
      copy_compressed(src, dst, name, chunk_rows, level, cancel);
    } else {
      copy_rows(src, dst, link, cancel);
    }
  }
}

}  // namespace

void rewrite_compressed(const std::string& path, const std::string& name, std::uint64_t chunk_rows, int level,
                        const std::vector<std::string>& leave_out, const std::atomic<bool>* cancel) {
  if (level < 0 || level > 9) throw IoError("rewrite_compressed: deflate level must be 0-9");
  const std::string tmp = path + ".compressing";
  require_room_for_a_copy(path);
  create_exclusively(tmp);
  const auto remove_tmp = [&] {
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
  };
  hid_t dst = -1;
  try {
    const Handle src(check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "opening " + path), H5Fclose);
    const Handle fapl = file_access_with_large_attributes();
    // No chunk cache and no sieve buffer: rows go to the file in the H5Dwrite that writes them
    // (blocks of 8 MB here), so that a full disk fails that call. A buffer left to flush when a
    // dataset closes leaked in HDF5 1.10.8 when the flush failed (1.2 MB under LSan).
    check_status(H5Pset_cache(fapl, 0, 0, 0, 0.75), "H5Pset_cache");
    check_status(H5Pset_sieve_buf_size(fapl, 0), "H5Pset_sieve_buf_size");
    dst = check(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), "creating " + tmp);
    copy_file(src, dst, name, chunk_rows, level, leave_out, cancel);
    check_status(H5Fflush(dst, H5F_SCOPE_GLOBAL), "flushing " + tmp);
    const hid_t done = dst;
    dst = -1;
    check_status(H5Fclose(done), "closing " + tmp);
  } catch (...) {
    if (dst >= 0) abandon_file(dst);
    remove_tmp();
    throw;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    remove_tmp();
    throw IoError("cannot rename " + tmp + " to " + path + ": " + ec.message());
  }
}

}  // namespace dse::h5
