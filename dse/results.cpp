#include "dse/results.hpp"

#include <cstddef>

#include "dse/context.hpp"
#include "dse/error.hpp"

namespace dse {

namespace {

h5::Handle point_type() {
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
  add("feasible", offsetof(PointRecord, feasible), H5T_NATIVE_UINT8);
  add("bottleneck", offsetof(PointRecord, bottleneck), name16);
  return t;
}

}  // namespace

void write_results(const std::string& path, Context& ctx, std::span<const PointRecord> rows,
                   std::uint64_t offset, std::uint64_t total, const std::vector<std::uint64_t>& pareto,
                   const RunInfo& info) {
  h5::quiet_errors();
  const h5::Handle file = h5::create_file(path, ctx);
  const h5::Handle type = point_type();
  {
    const h5::Handle points = h5::create_dataset_1d(file, "points", type, total);
    h5::write_rows(points, type, rows.data(), offset, rows.size(), ctx.distributed());
  }
  {
    const h5::Handle par = h5::create_dataset_1d(file, "pareto", H5T_STD_U64LE, pareto.size());
    const bool writer = ctx.rank() == 0;
    h5::write_rows(par, H5T_NATIVE_UINT64, pareto.data(), 0, writer ? pareto.size() : 0, ctx.distributed());
  }
  // Attribute writes are collective metadata operations: every rank writes the same value.
  h5::write_attribute(file, "layout_version", results_layout_version);
  h5::write_attribute(file, "scenario", info.scenario_text);
  h5::write_attribute(file, "scenario_file", info.scenario_file);
  h5::write_attribute(file, "seed", static_cast<std::int64_t>(info.seed));
  h5::write_attribute(file, "version", info.version);
  h5::write_attribute(file, "ranks", info.ranks);
  h5::write_attribute(file, "threads", info.threads);
  h5::write_attribute(file, "start_time", info.start_time);
  h5::write_attribute(file, "wall_time_s", info.wall_time_s);
  h5::write_attribute(file, "objectives",
                      std::string("throughput_samples_per_s:max,latency_s:min,energy_per_sample_j:min,"
                                  "engineering_risk:min"));
  h5::check_status(H5Fflush(file, H5F_SCOPE_GLOBAL), "H5Fflush");
}

ResultsFile read_results(const std::string& path) {
  h5::quiet_errors();
  ResultsFile r;
  const h5::Handle file = h5::open_file_readonly(path);
  if (!h5::has_attribute(file, "layout_version")) {
    throw IoError(path + ": not a DSE result file (no layout_version attribute)");
  }
  const std::int64_t layout = h5::read_int_attribute(file, "layout_version");
  if (layout != results_layout_version) {
    throw IoError(path + ": result layout version " + std::to_string(layout) + " is not supported (this dse reads " +
                  std::to_string(results_layout_version) + ")");
  }
  r.info.scenario_text = h5::read_string_attribute(file, "scenario");
  r.info.scenario_file = h5::read_string_attribute(file, "scenario_file");
  r.info.seed = static_cast<std::uint64_t>(h5::read_int_attribute(file, "seed"));
  r.info.version = h5::read_string_attribute(file, "version");
  r.info.ranks = h5::read_int_attribute(file, "ranks");
  r.info.threads = h5::read_int_attribute(file, "threads");
  r.info.start_time = h5::read_string_attribute(file, "start_time");
  const h5::Handle type = point_type();
  {
    const h5::Handle points(h5::check(H5Dopen2(file, "points", H5P_DEFAULT), path + ": /points"), H5Dclose);
    r.points.resize(h5::dataset_rows(points));
    if (!r.points.empty()) h5::read_all(points, type, r.points.data());
  }
  {
    const h5::Handle par(h5::check(H5Dopen2(file, "pareto", H5P_DEFAULT), path + ": /pareto"), H5Dclose);
    r.pareto.resize(h5::dataset_rows(par));
    if (!r.pareto.empty()) h5::read_all(par, H5T_NATIVE_UINT64, r.pareto.data());
  }
  return r;
}

}  // namespace dse
