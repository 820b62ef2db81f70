// h5::rewrite_compressed: a finished output file with its big dataset compressed.
#include <oneapi/tbb/task_arena.h>
#include <zlib.h>

#include <algorithm>
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

void copy_compressed(hid_t src_file, hid_t dst_file, const std::string& name, std::uint64_t chunk_rows, int level) {
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

}  // namespace

void rewrite_compressed(const std::string& path, const std::string& name, std::uint64_t chunk_rows, int level,
                        const std::vector<std::string>& leave_out) {
  if (level < 0 || level > 9) throw IoError("rewrite_compressed: deflate level must be 0-9");
  const std::string tmp = path + ".compressing";
  try {
    {
      const Handle src(check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), "opening " + path), H5Fclose);
      const Handle dst(check(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), "creating " + tmp),
                       H5Fclose);
      const Handle src_root(check(H5Gopen2(src, "/", H5P_DEFAULT), "H5Gopen2"), H5Gclose);
      const Handle dst_root(check(H5Gopen2(dst, "/", H5P_DEFAULT), "H5Gopen2"), H5Gclose);
      copy_attributes(src_root, dst_root);
      std::vector<std::string> links;
      check_status(H5Literate(src, H5_INDEX_NAME, H5_ITER_INC, nullptr, collect_link, &links), "H5Literate");
      for (const auto& link : links) {
        if (std::find(leave_out.begin(), leave_out.end(), link) != leave_out.end()) continue;
        if (link == name) {
          copy_compressed(src, dst, name, chunk_rows, level);
        } else {
          check_status(H5Ocopy(src, link.c_str(), dst, link.c_str(), H5P_DEFAULT, H5P_DEFAULT), "copying " + link);
        }
      }
      check_status(H5Fflush(dst, H5F_SCOPE_GLOBAL), "flushing " + tmp);
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) throw IoError("cannot rename " + tmp + " to " + path + ": " + ec.message());
  } catch (...) {
    std::error_code ec;
    std::filesystem::remove(tmp, ec);
    throw;
  }
}

}  // namespace dse::h5
