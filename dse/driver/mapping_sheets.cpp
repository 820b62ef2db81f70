#include "dse/driver/mapping_sheets.hpp"

#include "dse/driver/agree.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "dse/driver/run.hpp"

namespace dse {

namespace {

// The columns: point_index, then these texts and numbers in this order.
constexpr std::array<const char*, 4> kTexts = {"layer", "type", "bottleneck", "mapping"};
constexpr std::array<const char*, 6> kNumbers = {"latency_s",  "energy_j",       "flops",
                                                 "dram_bytes", "stall_fraction", "pct_of_peak"};

struct Layout {
  std::array<std::uint64_t, kTexts.size()> width{};  // each text's bytes, its NUL included
  std::array<std::size_t, kTexts.size()> text_at{};
  std::array<std::size_t, kNumbers.size()> number_at{};
  std::size_t size = 0;
};

Layout layout_of(const std::array<std::uint64_t, kTexts.size()>& width) {
  Layout l;
  l.width = width;
  l.size = sizeof(std::uint64_t);
  for (std::size_t c = 0; c < kNumbers.size(); ++c, l.size += sizeof(double)) l.number_at[c] = l.size;
  for (std::size_t c = 0; c < kTexts.size(); ++c) {
    l.text_at[c] = l.size;
    l.size += static_cast<std::size_t>(width[c]);
  }
  return l;
}

h5::Handle row_type(const Layout& l) {
  h5::Handle t(h5::check(H5Tcreate(H5T_COMPOUND, l.size), "H5Tcreate"), H5Tclose);
  const auto add = [&](const char* name, std::size_t off, hid_t type) {
    h5::check_status(H5Tinsert(t, name, off, type), std::string("H5Tinsert ") + name);
  };
  add("point_index", 0, H5T_NATIVE_UINT64);
  // The columns in the order they always had (layer and type first), energy_j after latency_s.
  std::vector<h5::Handle> strings;
  for (std::size_t c = 0; c < kTexts.size(); ++c) strings.push_back(h5::fixed_string_type(l.width[c]));
  add("layer", l.text_at[0], strings[0]);
  add("type", l.text_at[1], strings[1]);
  for (std::size_t c = 0; c < kNumbers.size(); ++c) add(kNumbers[c], l.number_at[c], H5T_NATIVE_DOUBLE);
  add("bottleneck", l.text_at[2], strings[2]);
  add("mapping", l.text_at[3], strings[3]);
  return t;
}

struct Row {
  std::uint64_t point = 0;
  costmodel::LayerBreakdown b;
};

std::array<std::string, kTexts.size()> texts_of(const Row& r) {
  return {r.b.name, r.b.type, std::string(costmodel::to_string(r.b.bottleneck)), r.b.mapping};
}

std::vector<char> pack(const std::vector<Row>& rows, const Layout& l) {
  std::vector<char> buf(rows.size() * l.size, 0);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    char* row = buf.data() + i * l.size;
    std::memcpy(row, &rows[i].point, sizeof(std::uint64_t));
    const costmodel::LayerBreakdown& b = rows[i].b;
    const std::array<double, kNumbers.size()> numbers = {b.latency_s,  b.energy_j,       b.flops,
                                                         b.dram_bytes, b.stall_fraction, b.pct_of_peak};
    for (std::size_t c = 0; c < kNumbers.size(); ++c) std::memcpy(row + l.number_at[c], &numbers[c], sizeof(double));
    const auto texts = texts_of(rows[i]);
    for (std::size_t c = 0; c < kTexts.size(); ++c) std::memcpy(row + l.text_at[c], texts[c].data(), texts[c].size());
  }
  return buf;
}

}  // namespace

void write_mapping_sheets(hid_t file, Context& ctx, const Scenario& scenario, const search::DesignSpace& space,
                          const std::vector<PointRecord>& archive, std::uint64_t archive_size,
                          const std::vector<std::uint64_t>& pareto) {
  const bool all = archive_size <= kSheetArchiveLimit;
  std::vector<Row> rows;
  // [count, widths...]: what every rank needs to make the dataset.
  std::array<std::uint64_t, 1 + kTexts.size()> shape{};
  shape.fill(1);
  shape[0] = 0;
  agreed(ctx, [&] {
    if (ctx.rank() != 0) return;
    std::vector<std::uint64_t> points;
    if (all) {
      for (const auto& r : archive) points.push_back(r.index);
    } else {
      points = pareto;
    }
    for (const auto i : points)
      for (auto& b : layer_breakdown(scenario, space, i)) rows.push_back({i, std::move(b)});
    shape[0] = rows.size();
    for (const Row& r : rows) {
      const auto texts = texts_of(r);
      for (std::size_t c = 0; c < kTexts.size(); ++c)
        shape[1 + c] = std::max<std::uint64_t>(shape[1 + c], texts[c].size() + 1);
    }
  });
  Bytes b(sizeof(shape));
  std::memcpy(b.data(), shape.data(), sizeof(shape));
  b = ctx.broadcast(b, 0);
  std::memcpy(shape.data(), b.data(), sizeof(shape));
  std::array<std::uint64_t, kTexts.size()> width{};
  std::copy(shape.begin() + 1, shape.end(), width.begin());
  const Layout l = layout_of(width);
  const h5::Handle type = row_type(l);
  const std::vector<char> buf = pack(rows, l);
  // Uncompressed, like every dataset written collectively (see kDeflate in driver.cpp).
  const h5::Handle ds = h5::create_extensible_1d(file, "mapping_sheets", type, 4096, 0);
  h5::set_rows(ds, shape[0]);
  std::vector<h5::RowRun> runs;
  if (ctx.rank() == 0 && shape[0] > 0) runs.push_back({0, shape[0]});
  h5::write_runs(ds, type, buf.data(), runs, ctx.distributed());
  h5::write_attribute(ds, "points", std::string(all ? "archive" : "pareto"));
}

}  // namespace dse
