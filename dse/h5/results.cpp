#include "dse/h5/results.hpp"

#include <cstring>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "dse/error.hpp"

namespace dse {

const PointRecord* ResultsFile::find(std::uint64_t index) const {
  const auto it = std::lower_bound(archive.begin(), archive.end(), index,
                                   [](const PointRecord& r, std::uint64_t i) { return r.index < i; });
  return it != archive.end() && it->index == index ? &*it : nullptr;
}

std::string record_name(const char* field, std::size_t size) {
  std::size_t n = 0;
  while (n < size && field[n] != '\0') ++n;
  return {field, n};
}

std::string point_figure_problem(const PointRecord& r) {
  const std::pair<const char*, double> figures[] = {
      {"throughput_samples_per_s", r.throughput_samples_per_s},
      {"latency_s", r.latency_s},
      {"energy_per_sample_j", r.energy_per_sample_j},
      {"engineering_risk", r.engineering_risk},
      {"flops", r.flops},
      {"dram_bytes", r.dram_bytes},
      {"memory_bytes", r.memory_bytes},
      {"p99_latency_s", r.p99_latency_s},
      {"ttft_p99_s", r.ttft_p99_s},
      {"tpot_p99_s", r.tpot_p99_s},
      {"power_w", r.power_w},
      {"area_mm2", r.area_mm2},
      {"cost_usd", r.cost_usd},
      {"cost_per_hour_usd", r.cost_per_hour_usd},
      {"ttft_p50_s", r.ttft_p50_s},
      {"ttft_p90_s", r.ttft_p90_s},
      {"tpot_p50_s", r.tpot_p50_s},
      {"tpot_p90_s", r.tpot_p90_s},
      {"e2e_p50_s", r.e2e_p50_s},
      {"accelerator_power_w", r.accelerator_power_w},
      {"mfu", r.mfu},
  };
  for (const auto& [name, v] : figures) {
    if (!std::isfinite(v) || v < 0.0) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.6g", v);
      return std::string(name) + " is " + buf;
    }
  }
  return "";
}

void check_record_layout(hid_t dataset, const std::string& where) {
  const h5::Handle file_type(h5::check(H5Dget_type(dataset), "H5Dget_type"), H5Tclose);
  if (H5Tget_class(file_type) != H5T_COMPOUND) throw IoError(where + ": not a table of points (expected a compound type)");
  const h5::Handle space(h5::check(H5Dget_space(dataset), "H5Dget_space"), H5Sclose);
  if (H5Sget_simple_extent_ndims(space) != 1) throw IoError(where + ": not one-dimensional");
  const h5::Handle mem = point_record_type();
  const int n = H5Tget_nmembers(mem);
  for (int i = 0; i < n; ++i) {
    char* raw = H5Tget_member_name(mem, static_cast<unsigned>(i));
    const std::string name = raw != nullptr ? raw : "";
    H5free_memory(raw);
    const int at = H5Tget_member_index(file_type, name.c_str());
    if (at < 0) {
      H5Eclear2(H5E_DEFAULT);
      throw IoError(where + ": no field " + name + " (not a result file of this layout)");
    }
    const H5T_class_t want = H5Tget_member_class(mem, static_cast<unsigned>(i));
    const H5T_class_t got = H5Tget_member_class(file_type, static_cast<unsigned>(at));
    if (want != got) throw IoError(where + ": field " + name + " has another type than a result file's");
  }
}

void check_records(const std::vector<PointRecord>& rows, const std::string& where) {
  for (std::size_t i = 0; i < rows.size(); ++i) {
    std::string why = point_figure_problem(rows[i]);
    if (why.empty() && rows[i].feasible > 1) why = "feasible is " + std::to_string(rows[i].feasible);
    if (!why.empty()) {
      throw IoError(where + ": row " + std::to_string(i) + " (point " + std::to_string(rows[i].index) + "): " + why +
                    " (a result file holds finite figures >= 0; this one is damaged or was not written by dse run)");
    }
  }
}

void write_run_info(hid_t file, const RunInfo& info) {
  auto set_string = [&](const char* name, const std::string& v) {
    if (h5::has_attribute(file, name)) h5::check_status(H5Adelete(file, name), std::string("H5Adelete ") + name);
    h5::write_attribute(file, name, v);
  };
  auto set_double = [&](const char* name, double v) {
    if (h5::has_attribute(file, name)) h5::check_status(H5Adelete(file, name), std::string("H5Adelete ") + name);
    h5::write_attribute(file, name, v);
  };
  set_attribute(file, "layout_version", kResultsLayoutVersion);
  set_string("scenario", info.scenario_text);
  set_string("scenario_file", info.scenario_file);
  set_attribute(file, "seed", static_cast<std::int64_t>(info.seed));
  set_string("version", info.version);
  set_string("commit", info.commit);
  set_attribute(file, "ranks", info.ranks);
  set_attribute(file, "threads", info.threads);
  set_string("start_time", info.start_time);
  set_double("wall_time_s", info.wall_time_s);
  set_string("objectives",
             "throughput_samples_per_s:max,latency_s:min,energy_per_sample_j:min,engineering_risk:min");
  set_string("metrics", "p99_latency_s,ttft_p99_s,tpot_p99_s,power_w,area_mm2,memory_bytes,cost_usd");
  set_string("input_files", info.input_files);
}

namespace {

void check_layout(hid_t file, const std::string& path) {
  if (!h5::has_attribute(file, "layout_version")) {
    throw IoError(path + ": not a DSE result file (no layout_version attribute)");
  }
  const std::int64_t layout = h5::read_int_attribute(file, "layout_version");
  if (layout != kResultsLayoutVersion) {
    throw IoError(path + ": result layout version " + std::to_string(layout) + " is not supported (this dse reads " +
                  std::to_string(kResultsLayoutVersion) + ")");
  }
}

}  // namespace

void check_results_file(const std::string& path) {
  h5::quiet_errors();
  const h5::Handle file = h5::open_file_readonly(path);
  check_layout(file, path);
}

void require_result_path(const std::string& command, const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw InputError("dse " + command + ": " + path + ": no such file");
  if (std::filesystem::is_directory(path, ec))
    throw InputError("dse " + command + ": " + path + ": a directory (expected a result file of dse run)");
}

ResultsFile read_results(const std::string& path) {
  h5::quiet_errors();
  ResultsFile r;
  const h5::Handle file = h5::open_file_readonly(path);
  check_layout(file, path);
  r.info.scenario_text = h5::read_string_attribute(file, "scenario");
  r.info.scenario_file = h5::read_string_attribute(file, "scenario_file");
  r.info.seed = static_cast<std::uint64_t>(h5::read_int_attribute(file, "seed"));
  r.info.version = h5::read_string_attribute(file, "version");
  r.info.ranks = h5::read_int_attribute(file, "ranks");
  r.info.threads = h5::read_int_attribute(file, "threads");
  r.info.start_time = h5::read_string_attribute(file, "start_time");
  r.store = h5::read_string_attribute(file, "store");
  r.complete = h5::has_attribute(file, "complete") && h5::read_int_attribute(file, "complete") == 1;
  const h5::Handle type = point_record_type();
  auto read_rows = [&](const char* name, std::vector<PointRecord>& out) {
    if (!h5::has_link(file, name)) return;
    const h5::Handle ds = h5::open_dataset(file, name);
    check_record_layout(ds, path + ": /" + name);
    out.resize(h5::dataset_rows(ds));
    if (!out.empty()) h5::read_all(ds, type, out.data());
    check_records(out, path + ": /" + name);
  };
  read_rows("points", r.points);
  read_rows("archive", r.archive);
  if (h5::has_link(file, "pareto")) {
    const h5::Handle par = h5::open_dataset(file, "pareto");
    r.pareto.resize(h5::dataset_rows(par));
    if (!r.pareto.empty()) h5::read_all(par, H5T_NATIVE_UINT64, r.pareto.data());
  }
  return r;
}

void set_attribute(hid_t loc, const std::string& name, std::int64_t value) {
  if (h5::has_attribute(loc, name)) {
    h5::Handle attr(h5::check(H5Aopen(loc, name.c_str(), H5P_DEFAULT), "opening attribute " + name), H5Aclose);
    h5::check_status(H5Awrite(attr, H5T_NATIVE_INT64, &value), "writing attribute " + name);
  } else {
    h5::write_attribute(loc, name, value);
  }
}

h5::Handle point_record_type() {
  h5::Handle t = h5::compound_type(sizeof(PointRecord));
  const h5::Handle name32 = h5::fixed_string_type(32);
  const h5::Handle name16 = h5::fixed_string_type(16);
  const auto add = [&](const char* name, std::size_t off, hid_t type) { h5::add_member(t, name, off, type); };
  add("index", offsetof(PointRecord, index), H5T_NATIVE_UINT64);
  add("hardware_id", offsetof(PointRecord, hardware_id), H5T_NATIVE_UINT32);
  add("workload_id", offsetof(PointRecord, workload_id), H5T_NATIVE_UINT32);
  add("batch", offsetof(PointRecord, batch), H5T_NATIVE_INT64);
  add("hardware", offsetof(PointRecord, hardware), name32);
  add("workload", offsetof(PointRecord, workload), name32);
  add("throughput_samples_per_s", offsetof(PointRecord, throughput_samples_per_s), H5T_NATIVE_DOUBLE);
  add("latency_s", offsetof(PointRecord, latency_s), H5T_NATIVE_DOUBLE);
  add("energy_per_sample_j", offsetof(PointRecord, energy_per_sample_j), H5T_NATIVE_DOUBLE);
  add("engineering_risk", offsetof(PointRecord, engineering_risk), H5T_NATIVE_DOUBLE);
  add("flops", offsetof(PointRecord, flops), H5T_NATIVE_DOUBLE);
  add("dram_bytes", offsetof(PointRecord, dram_bytes), H5T_NATIVE_DOUBLE);
  add("memory_bytes", offsetof(PointRecord, memory_bytes), H5T_NATIVE_DOUBLE);
  add("p99_latency_s", offsetof(PointRecord, p99_latency_s), H5T_NATIVE_DOUBLE);
  add("ttft_p99_s", offsetof(PointRecord, ttft_p99_s), H5T_NATIVE_DOUBLE);
  add("tpot_p99_s", offsetof(PointRecord, tpot_p99_s), H5T_NATIVE_DOUBLE);
  add("power_w", offsetof(PointRecord, power_w), H5T_NATIVE_DOUBLE);
  add("area_mm2", offsetof(PointRecord, area_mm2), H5T_NATIVE_DOUBLE);
  add("cost_usd", offsetof(PointRecord, cost_usd), H5T_NATIVE_DOUBLE);
  add("cost_per_hour_usd", offsetof(PointRecord, cost_per_hour_usd), H5T_NATIVE_DOUBLE);
  add("ttft_p50_s", offsetof(PointRecord, ttft_p50_s), H5T_NATIVE_DOUBLE);
  add("ttft_p90_s", offsetof(PointRecord, ttft_p90_s), H5T_NATIVE_DOUBLE);
  add("tpot_p50_s", offsetof(PointRecord, tpot_p50_s), H5T_NATIVE_DOUBLE);
  add("tpot_p90_s", offsetof(PointRecord, tpot_p90_s), H5T_NATIVE_DOUBLE);
  add("e2e_p50_s", offsetof(PointRecord, e2e_p50_s), H5T_NATIVE_DOUBLE);
  add("accelerator_power_w", offsetof(PointRecord, accelerator_power_w), H5T_NATIVE_DOUBLE);
  add("mfu", offsetof(PointRecord, mfu), H5T_NATIVE_DOUBLE);
  add("feasible", offsetof(PointRecord, feasible), H5T_NATIVE_UINT8);
  add("bottleneck", offsetof(PointRecord, bottleneck), name16);
  return t;
}

std::vector<std::size_t> text_table_widths(const TextTable& table) {
  std::vector<std::size_t> width(table.columns.size(), 1);
  for (const auto& row : table.rows)
    for (std::size_t c = 0; c < width.size(); ++c) width[c] = std::max(width[c], row[c].size() + 1);
  return width;
}

namespace {

// Dataset `name` of `total` rows with `width`'s columns, afresh; rows [offset, offset + count) from
// the first `count` rows of `table` (collective: every rank passes the same name, columns, widths
// and total).
void write_text_rows(hid_t file, const std::string& name, const TextTable& table, const std::vector<std::size_t>& width,
                     std::uint64_t offset, std::uint64_t count, std::uint64_t total, bool collective) {
  const std::size_t nc = table.columns.size();
  if (width.size() != nc) throw IoError("/" + name + ": " + std::to_string(width.size()) + " widths for " +
                                        std::to_string(nc) + " columns");
  std::vector<std::size_t> offsets(nc);
  std::size_t size = sizeof(std::uint32_t);
  for (std::size_t c = 0; c < nc; ++c) {
    offsets[c] = size;
    size += width[c];
  }
  const h5::Handle type = h5::compound_type(size);
  h5::add_member(type, "id", 0, H5T_NATIVE_UINT32);
  std::vector<h5::Handle> strings;
  for (std::size_t c = 0; c < nc; ++c) {
    strings.push_back(h5::fixed_string_type(width[c]));
    h5::add_member(type, table.columns[c], offsets[c], strings.back());
  }
  std::vector<unsigned char> buf(count * size, 0);
  for (std::size_t r = 0; r < count; ++r) {
    unsigned char* row = buf.data() + r * size;
    std::memcpy(row, &table.ids[r], sizeof(std::uint32_t));
    for (std::size_t c = 0; c < nc; ++c) {
      if (table.rows[r][c].size() >= width[c]) throw IoError("/" + name + ": a cell wider than its column");
      std::memcpy(row + offsets[c], table.rows[r][c].data(), table.rows[r][c].size());
    }
  }
  if (h5::has_link(file, name)) h5::remove_link(file, name);
  const h5::Handle ds = h5::create_dataset_1d(file, name, type, total);
  h5::write_rows(ds, type, buf.data(), offset, count, collective);
}

}  // namespace

void write_text_table(hid_t file, const std::string& name, const TextTable& table, bool collective, bool writer) {
  write_text_rows(file, name, table, text_table_widths(table), 0, writer ? table.rows.size() : 0, table.rows.size(),
                  collective);
}

void write_text_table_part(hid_t file, const std::string& name, const TextTable& part,
                           const std::vector<std::size_t>& width, std::uint64_t offset, std::uint64_t total,
                           bool collective) {
  if (offset > total || part.rows.size() > total - offset) throw IoError("/" + name + ": rows beyond the table");
  write_text_rows(file, name, part, width, offset, part.rows.size(), total, collective);
}

TextTable read_text_table(hid_t file, const std::string& name, const std::vector<std::uint32_t>* only) {
  TextTable t;
  if (!h5::has_link(file, name)) return t;
  const h5::Handle ds = h5::open_dataset(file, name);
  const h5::Handle ftype(h5::check(H5Dget_type(ds), "H5Dget_type " + name), H5Tclose);
  const int members = H5Tget_nmembers(ftype);
  if (H5Tget_class(ftype) != H5T_COMPOUND || members < 1) throw IoError("/" + name + ": not a names table");
  const std::size_t size = H5Tget_size(ftype);
  std::vector<std::size_t> offset;
  std::vector<std::size_t> width;
  for (int m = 1; m < members; ++m) {
    char* n = H5Tget_member_name(ftype, static_cast<unsigned>(m));
    t.columns.emplace_back(n == nullptr ? "" : n);
    H5free_memory(n);
    offset.push_back(H5Tget_member_offset(ftype, static_cast<unsigned>(m)));
    const h5::Handle mt(h5::check(H5Tget_member_type(ftype, static_cast<unsigned>(m)), "H5Tget_member_type"), H5Tclose);
    if (H5Tget_class(mt) != H5T_STRING || H5Tis_variable_str(mt) > 0) throw IoError("/" + name + ": not a names table");
    width.push_back(H5Tget_size(mt));
  }
  const std::uint64_t n = h5::dataset_rows(ds);
  std::vector<unsigned char> buf(n * size);
  if (n > 0) h5::read_all(ds, ftype, buf.data());
  for (std::uint64_t r = 0; r < n; ++r) {
    const unsigned char* row = buf.data() + r * size;
    std::uint32_t id = 0;
    std::memcpy(&id, row, sizeof(id));
    if (only != nullptr && !std::binary_search(only->begin(), only->end(), id)) continue;
    t.ids.push_back(id);
    std::vector<std::string> cells;
    for (std::size_t c = 0; c < offset.size(); ++c) {
      const char* p = reinterpret_cast<const char*>(row + offset[c]);
      cells.emplace_back(p, strnlen(p, width[c]));
    }
    t.rows.push_back(std::move(cells));
  }
  return t;
}

}  // namespace dse
