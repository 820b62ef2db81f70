// h5::rewrite_compressed: a finished output file with its big dataset compressed.
#include <algorithm>
#include <filesystem>
#include <vector>

#include "dse/error.hpp"
#include "dse/h5.hpp"

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

  const std::size_t row_bytes = H5Tget_size(type);
  std::vector<unsigned char> buf(static_cast<std::size_t>(chunk) * row_bytes);
  for (hsize_t at = 0; at < rows; at += chunk) {
    const hsize_t count = std::min(chunk, rows - at);
    const Handle mem(check(H5Screate_simple(1, &count, nullptr), "H5Screate_simple"), H5Sclose);
    check_status(H5Sselect_hyperslab(src_space, H5S_SELECT_SET, &at, nullptr, &count, nullptr), "H5Sselect_hyperslab");
    check_status(H5Dread(src, type, mem, src_space, H5P_DEFAULT, buf.data()), "reading " + name);
    check_status(H5Sselect_hyperslab(dst_space, H5S_SELECT_SET, &at, nullptr, &count, nullptr), "H5Sselect_hyperslab");
    check_status(H5Dwrite(dst, type, mem, dst_space, H5P_DEFAULT, buf.data()), "writing " + name);
  }
}

}  // namespace

void rewrite_compressed(const std::string& path, const std::string& name, std::uint64_t chunk_rows, int level) {
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
