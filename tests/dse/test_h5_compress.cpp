// h5::rewrite_compressed: the rewritten file reads back the same rows (including a last
// chunk that is only partly filled), keeps the other datasets and the root attributes,
// and declares the shuffle and deflate filters that decode the raw chunks it wrote.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <numeric>
#include <vector>

#include "dse/driver/context.hpp"
#include "dse/error.hpp"
#include "dse/h5/h5.hpp"
#include "tests/scratch.hpp"

namespace dse {
namespace {

struct Row {
  std::uint64_t index;
  double value;
  char name[12];
};

h5::Handle row_type() {
  h5::Handle t(H5Tcreate(H5T_COMPOUND, sizeof(Row)), H5Tclose);
  H5Tinsert(t, "index", offsetof(Row, index), H5T_NATIVE_UINT64);
  H5Tinsert(t, "value", offsetof(Row, value), H5T_NATIVE_DOUBLE);
  const h5::Handle s = h5::fixed_string_type(12);
  H5Tinsert(t, "name", offsetof(Row, name), s);
  return t;
}

TEST(H5Compress, RowsAttributesAndOtherDatasetsSurviveWithAPartialLastChunk) {
  const auto dir = dse::test::scratch_dir("h5_compress");
  const std::string path = (dir / "f.h5").string();
  h5::quiet_errors();
  const std::size_t n = 40000;  // 2 full chunks of 16,384 rows and one of 7,232
  std::vector<Row> rows(n);
  for (std::size_t i = 0; i < n; ++i) {
    rows[i].index = i * 3;
    rows[i].value = 0.5 * static_cast<double>(i) - 7.0;
    std::snprintf(rows[i].name, sizeof(rows[i].name), "r%zu", i % 1000);
  }
  std::vector<std::uint64_t> other(100);
  std::iota(other.begin(), other.end(), 1000);
  {
    auto ctx = make_local_context();
    const h5::Handle f = h5::create_file(path, ctx->file_access());
    const h5::Handle type = row_type();
    const h5::Handle ds = h5::create_extensible_1d(f, "points", type, 4096, 0);
    h5::set_rows(ds, n);
    h5::write_runs(ds, type, rows.data(), {{0, n}}, false);
    const h5::Handle o = h5::create_dataset_1d(f, "other", H5T_STD_U64LE, other.size());
    h5::write_rows(o, H5T_NATIVE_UINT64, other.data(), 0, other.size(), false);
    h5::write_attribute(f, "scenario", std::string("name: test"));
    h5::write_attribute(f, "seed", std::int64_t{42});
    h5::write_attribute(f, "wall_time_s", 1.25);
  }
  h5::rewrite_compressed(path, "points", 16384, 1);
  EXPECT_FALSE(std::filesystem::exists(path + ".compressing"));

  const h5::Handle f = h5::open_file_readonly(path);
  EXPECT_EQ(h5::read_string_attribute(f, "scenario"), "name: test");
  EXPECT_EQ(h5::read_int_attribute(f, "seed"), 42);
  const h5::Handle ds = h5::open_dataset(f, "points");
  ASSERT_EQ(h5::dataset_rows(ds), n);
  std::vector<Row> back(n);
  const h5::Handle type = row_type();
  h5::read_all(ds, type, back.data());
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(back[i].index, rows[i].index) << i;
    ASSERT_EQ(back[i].value, rows[i].value) << i;
    ASSERT_STREQ(back[i].name, rows[i].name) << i;
  }
  const h5::Handle dcpl(H5Dget_create_plist(ds), H5Pclose);
  EXPECT_EQ(H5Pget_nfilters(dcpl), 2);
  hsize_t chunk = 0;
  EXPECT_EQ(H5Pget_chunk(dcpl, 1, &chunk), 1);
  EXPECT_EQ(chunk, 16384u);
  const h5::Handle o = h5::open_dataset(f, "other");
  std::vector<std::uint64_t> other_back(h5::dataset_rows(o));
  h5::read_all(o, H5T_NATIVE_UINT64, other_back.data());
  EXPECT_EQ(other_back, other);
  std::filesystem::remove_all(dir);
}

TEST(H5Compress, MissingFileThrowsAndLeavesNothing) {
  const std::string path = dse::test::scratch_file("no_such_file.h5");
  h5::quiet_errors();
  EXPECT_THROW(h5::rewrite_compressed(path, "points", 16384, 1), IoError);
  EXPECT_FALSE(std::filesystem::exists(path + ".compressing"));
}

}  // namespace
}  // namespace dse
