// The HDF5 result file: layout, writer (collective over ranks) and reader.
//
//   /points         one compound row per evaluated point, in evaluation order (row =
//                   point index for exhaustive search); only with --store all
//   /archive        the constraint-robust archive: rows of the points that are
//                   non-dominated over objectives + constraint metrics, by index
//   /pareto         uint64 indices of the Pareto points (no budgets; per workload)
//   /sampler_state  bytes of the sampler's checkpoint (NSGA-II)
//   /mapping_sheets, /risk_items, /step_breakdown, /serving_curves, /roofs: the per-point
//                   tables of dse/driver/mapping_sheets.hpp (layout version 5)
//   root attributes: layout_version, scenario, scenario_file, seed, version, commit,
//                    ranks, threads, start_time, wall_time_s, objectives, metrics,
//                    store, sampler, complete, checkpoint_* counters
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dse/h5/h5.hpp"

namespace dse {

class Context;

inline constexpr std::int64_t kResultsLayoutVersion = 5;

// One row of /points. Plain data: its HDF5 compound type mirrors it field by field.
struct PointRecord {
  std::uint64_t index = 0;
  std::uint32_t hardware_id = 0;
  std::uint32_t workload_id = 0;
  std::int64_t batch = 0;
  char hardware[32] = {};
  char workload[32] = {};
  double throughput_samples_per_s = 0.0;
  double latency_s = 0.0;
  double energy_per_sample_j = 0.0;
  double engineering_risk = 0.0;
  double flops = 0.0;
  double dram_bytes = 0.0;
  double memory_bytes = 0.0;
  // Constraint metrics (each minimised; budgets apply to them later). For a served model:
  // under Poisson load at the workload's rate (the simulation of `dse eval --rate`); for
  // other workloads the batch's latency (no queueing, no tokens: TPOT 0).
  double p99_latency_s = 0.0;   // end-to-end request latency, p99
  double ttft_p99_s = 0.0;      // time to first token, p99
  double tpot_p99_s = 0.0;      // time per output token, p99
  double power_w = 0.0;         // at the wall: accelerators, host, power-supply losses
  double area_mm2 = 0.0;        // a system: every chip's die area (its chips x die_area_mm2)
  double cost_usd = 0.0;        // a system's price (costmodel/system/cost.hpp); 0 without one
  // Further figures (not archive metrics).
  double cost_per_hour_usd = 0.0;  // owning (amortised price + electricity at power_w) or renting it
  double ttft_p50_s = 0.0;
  double ttft_p90_s = 0.0;
  double tpot_p50_s = 0.0;
  double tpot_p90_s = 0.0;
  double e2e_p50_s = 0.0;
  double accelerator_power_w = 0.0;  // the accelerators alone
  double mfu = 0.0;                  // model FLOP utilisation of the step as it runs
  std::uint8_t feasible = 0;
  char bottleneck[16] = {};
};

// Copy a name into a fixed field, truncating and NUL-terminating.
template <std::size_t N>
void set_name(char (&field)[N], const std::string& s) {
  const std::size_t n = s.size() < N - 1 ? s.size() : N - 1;
  for (std::size_t i = 0; i < n; ++i) field[i] = s[i];
  for (std::size_t i = n; i < N; ++i) field[i] = '\0';
}

// The name in a fixed field of a record (up to its first NUL).
std::string record_name(const char* field, std::size_t size);

// "" when every figure of `r` is finite and not negative, else the first that is not
// ("latency_s is inf"). A run refuses to store such a point, and the result readers refuse a
// file that holds one.
std::string point_figure_problem(const PointRecord& r);

// A dataset of records as the readers require it (IoError "WHERE: ..." otherwise): one-dimensional,
// of a compound type holding every field of PointRecord with the same class (integer, float,
// string). HDF5 leaves a field the file lacks at zero: an archive without latency_s read as
// latency 0 (issue 58 item 15).
void check_record_layout(hid_t dataset, const std::string& where);
// IoError naming the first record whose figures are not finite and non-negative
// (point_figure_problem) or whose feasible flag is not 0 or 1.
void check_records(const std::vector<PointRecord>& rows, const std::string& where);

struct RunInfo {
  std::string scenario_text;
  std::string scenario_file;
  std::uint64_t seed = 0;
  std::string version;
  std::string commit = "unknown";  // the commit of the program's sources (dse::build_commit)
  std::int64_t ranks = 1;
  std::int64_t threads = 1;
  std::string start_time;
  double wall_time_s = 0.0;
  // The files the scenario read, one per line: "HASH BYTES PATH" (16 hex digits of the content
  // hash, the size, the path as printable() writes it); `dse run --resume` compares them.
  std::string input_files;
};

struct ResultsFile {
  RunInfo info;
  std::string store;
  bool complete = false;
  std::vector<PointRecord> points;   // empty unless stored
  std::vector<PointRecord> archive;
  std::vector<std::uint64_t> pareto;
  // The archive row of point `index`, or nullptr.
  [[nodiscard]] const PointRecord* find(std::uint64_t index) const;
};

// Provenance attributes, written collectively with the same value on every rank.
void write_run_info(hid_t file, const RunInfo& info);

// Read a whole result file; refuses files of another layout with an IoError.
ResultsFile read_results(const std::string& path);
// Open a result file and check its layout version only; IoError when it is not a
// readable DSE result file of this layout (truncated, foreign, another version).
void check_results_file(const std::string& path);
// A result file named to `dse COMMAND`: a missing path or a directory is bad input (InputError:
// "dse COMMAND: PATH: no such file", "...: a directory (expected a result file of dse run)").
void require_result_path(const std::string& command, const std::string& path);

// The compound HDF5 type of PointRecord.
h5::Handle point_record_type();

// A table of an id column and text columns (the names tables /variants and /workloads):
// each text column is a fixed-length string as wide as its longest entry, so no entry is cut.
struct TextTable {
  std::vector<std::string> columns;           // the text columns' names (after "id")
  std::vector<std::uint32_t> ids;
  std::vector<std::vector<std::string>> rows;  // rows[i][c]: column c of ids[i]
};
// Writes dataset `name` of `table` (collective: every rank calls with the same table).
void write_text_table(hid_t file, const std::string& name, const TextTable& table, bool collective, bool writer);
// Each column's width in a written table: its longest cell + 1 (at least 1).
std::vector<std::size_t> text_table_widths(const TextTable& table);
// Writes dataset `name`, `total` rows, of which `part`'s rows go to [offset, offset + its rows):
// each rank its own part (collective: every rank passes the same name, columns, `width` -- the
// largest of the parts' text_table_widths -- and total). The rows written are those that
// write_text_table writes of the whole table.
void write_text_table_part(hid_t file, const std::string& name, const TextTable& part,
                           const std::vector<std::size_t>& width, std::uint64_t offset, std::uint64_t total,
                           bool collective);
// Reads a table written by write_text_table; an empty table when `name` is absent. With `only`
// (sorted ids), the rows of those ids alone.
TextTable read_text_table(hid_t file, const std::string& name, const std::vector<std::uint32_t>* only = nullptr);

// Overwrite-or-create scalar attributes (collective in parallel files).
void set_attribute(hid_t loc, const std::string& name, std::int64_t value);

}  // namespace dse
