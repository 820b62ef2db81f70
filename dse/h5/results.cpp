#include "dse/h5/results.hpp"

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
      {"power_w", r.power_w},
      {"area_mm2", r.area_mm2},
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
  set_attribute(file, "ranks", info.ranks);
  set_attribute(file, "threads", info.threads);
  set_string("start_time", info.start_time);
  set_double("wall_time_s", info.wall_time_s);
  set_string("objectives",
             "throughput_samples_per_s:max,latency_s:min,energy_per_sample_j:min,engineering_risk:min");
  set_string("metrics", "p99_latency_s,power_w,area_mm2,memory_bytes");
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
  h5::Handle t(h5::check(H5Tcreate(H5T_COMPOUND, sizeof(PointRecord)), "H5Tcreate"), H5Tclose);
  const h5::Handle name32 = h5::fixed_string_type(32);
  const h5::Handle name16 = h5::fixed_string_type(16);
  auto add = [&](const char* name, std::size_t off, hid_t type) {
    h5::check_status(H5Tinsert(t, name, off, type), std::string("H5Tinsert ") + name);
  };
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
  add("power_w", offsetof(PointRecord, power_w), H5T_NATIVE_DOUBLE);
  add("area_mm2", offsetof(PointRecord, area_mm2), H5T_NATIVE_DOUBLE);
  add("feasible", offsetof(PointRecord, feasible), H5T_NATIVE_UINT8);
  add("bottleneck", offsetof(PointRecord, bottleneck), name16);
  return t;
}

}  // namespace dse
