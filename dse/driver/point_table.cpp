#include "dse/driver/point_table.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <utility>

#include "dse/driver/driver_archive.hpp"
#include "dse/error.hpp"

namespace dse {

PointTable::PointTable(std::string key, std::vector<PointTableColumn> columns)
    : key_(std::move(key)), columns_(std::move(columns)) {}

std::size_t PointTable::count(CellKind k) const {
  return static_cast<std::size_t>(
      std::count_if(columns_.begin(), columns_.end(), [k](const PointTableColumn& c) { return c.kind == k; }));
}

void PointTable::row(std::uint64_t key) { keys_.push_back(key); }
void PointTable::add(double v) { numbers_.push_back(v); }
void PointTable::add(std::int64_t v) { integers_.push_back(v); }
void PointTable::add(const std::string& v) { texts_.push_back(v); }

void PointTable::check(const std::string& name) const {
  if (numbers_.size() != keys_.size() * count(CellKind::number) ||
      integers_.size() != keys_.size() * count(CellKind::integer) ||
      texts_.size() != keys_.size() * count(CellKind::text)) {
    throw Error("/" + name + ": a row without every column (internal error)");
  }
  // Every figure finite and non-negative, as point_figure_problem asks of a record.
  const std::size_t n_num = count(CellKind::number);
  for (std::size_t i = 0; i < numbers_.size(); ++i) {
    if (std::isfinite(numbers_[i]) && numbers_[i] >= 0.0) continue;
    std::size_t c = 0;
    for (std::size_t seen = 0; c < columns_.size(); ++c)
      if (columns_[c].kind == CellKind::number && seen++ == i % n_num) break;
    throw Error("/" + name + ": " + columns_[c].name + " of " + key_ + " " + std::to_string(keys_[i / n_num]) + " is " +
                std::to_string(numbers_[i]) + " (expected a finite figure >= 0; internal error)");
  }
}

void PointTable::write(hid_t file, Context& ctx, const std::string& name) const {
  const std::size_t n_num = count(CellKind::number);
  const std::size_t n_int = count(CellKind::integer);
  const std::size_t n_text = count(CellKind::text);
  // Where this rank's rows go (after those of the lower ranks), the total, and each text column's
  // width over every rank: what each rank needs to make the dataset and place its rows.
  const auto [first_row, total] = driver_detail::part_offset(ctx, keys_.size());
  std::vector<std::uint64_t> shape(1 + n_text, 1);  // [total rows, widths...]
  shape[0] = total;
  for (std::size_t c = 0; c < n_text; ++c) {
    std::size_t width = 1;
    for (std::size_t r = 0; r < keys_.size(); ++r) width = std::max(width, texts_[r * n_text + c].size() + 1);
    shape[1 + c] = static_cast<std::uint64_t>(ctx.max(static_cast<std::int64_t>(width)));
  }

  // The row layout: the key, then every column in declared order.
  std::vector<std::size_t> offset(columns_.size());
  std::vector<h5::Handle> strings;
  std::size_t size = sizeof(std::uint64_t);
  for (std::size_t c = 0, t = 0; c < columns_.size(); ++c) {
    offset[c] = size;
    if (columns_[c].kind == CellKind::text) {
      size += static_cast<std::size_t>(shape[1 + t++]);
    } else {
      size += 8;
    }
  }
  const h5::Handle type = h5::compound_type(size);
  h5::add_member(type, key_, 0, H5T_NATIVE_UINT64);
  for (std::size_t c = 0, t = 0; c < columns_.size(); ++c) {
    hid_t member = H5T_NATIVE_DOUBLE;
    if (columns_[c].kind == CellKind::integer) member = H5T_NATIVE_INT64;
    if (columns_[c].kind == CellKind::text) {
      strings.push_back(h5::fixed_string_type(static_cast<std::size_t>(shape[1 + t++])));
      member = strings.back();
    }
    h5::add_member(type, columns_[c].name, offset[c], member);
  }

  std::vector<char> buf(keys_.size() * size, 0);
  for (std::size_t r = 0; r < keys_.size(); ++r) {
    char* row = buf.data() + r * size;
    std::memcpy(row, &keys_[r], sizeof(std::uint64_t));
    std::size_t in = 0, ii = 0, it = 0;
    for (std::size_t c = 0; c < columns_.size(); ++c) {
      switch (columns_[c].kind) {
        case CellKind::number:
          std::memcpy(row + offset[c], &numbers_[r * n_num + in++], 8);
          break;
        case CellKind::integer:
          std::memcpy(row + offset[c], &integers_[r * n_int + ii++], 8);
          break;
        case CellKind::text: {
          const std::string& s = texts_[r * n_text + it++];
          std::memcpy(row + offset[c], s.data(), s.size());
          break;
        }
      }
    }
  }
  const h5::Handle ds = h5::create_extensible_1d(file, name, type, 4096, 0);
  h5::set_rows(ds, shape[0]);
  std::vector<h5::RowRun> runs;
  if (!keys_.empty()) runs.push_back({first_row, keys_.size()});
  h5::write_runs(ds, type, buf.data(), runs, ctx.distributed());
}

}  // namespace dse
