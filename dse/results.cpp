#include "dse/results.hpp"

#include <algorithm>
#include <filesystem>

#include "dse/driver.hpp"
#include "dse/error.hpp"

namespace dse {

const PointRecord* ResultsFile::find(std::uint64_t index) const {
  const auto it = std::lower_bound(archive.begin(), archive.end(), index,
                                   [](const PointRecord& r, std::uint64_t i) { return r.index < i; });
  return it != archive.end() && it->index == index ? &*it : nullptr;
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
    out.resize(h5::dataset_rows(ds));
    if (!out.empty()) h5::read_all(ds, type, out.data());
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

}  // namespace dse
