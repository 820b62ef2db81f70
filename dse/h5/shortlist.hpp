// `dse shortlist`: the Pareto front of a result file re-derived for budgets.
//
// /archive holds, per workload, every feasible point that is non-dominated over the
// objectives AND the constraint metrics (p99 end-to-end latency, p99 TTFT, p99 TPOT, power,
// area, memory, cost). For any budgets on those metrics, and any subset of those eleven quantities taken as
// objectives, the front of all evaluated points that meet the budgets is therefore
// contained in the archive up to ties: a point left out of the archive is weakly
// dominated, in every objective and metric, by an archived point that also meets the
// budgets. So filtering the archive and taking its front needs no rerun.
#pragma once

#include <atomic>
#include <cstddef>
#include <iosfwd>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "dse/h5/results.hpp"
#include "search/pareto.hpp"

namespace dse {

// Upper bounds on the constraint metrics; an unset budget does not filter.
struct Budgets {
  std::optional<double> p99_latency_s;  // end-to-end request latency, p99 (--sla-e2e-p99-ms, --sla-p99-ms)
  std::optional<double> ttft_p99_s;     // time to first token, p99 (--sla-ttft-ms)
  std::optional<double> tpot_p99_s;     // time per output token, p99 (--sla-tpot-ms)
  std::optional<double> power_w;        // at the wall
  std::optional<double> area_mm2;
  std::optional<double> memory_bytes;
  std::optional<double> cost_usd;       // the system's price (--cost-usd)
};

// One quantity to optimise: a double field of PointRecord and its sense.
struct ObjectiveSpec {
  std::string name;             // the PointRecord / HDF5 field name
  search::Sense sense = search::Sense::minimize;
  double PointRecord::*field = nullptr;
};

// The four objectives of `dse run` (throughput max, latency, energy, risk min).
std::vector<ObjectiveSpec> default_objectives();
// A comma-separated list of the archive's eleven quantities, by field name or short
// name (throughput, latency, energy, risk, p99, ttft, tpot, power, area, memory, cost). Their senses are
// those of the archive (throughput maximised, all else minimised), the only ones for
// which the archive is guaranteed to hold the front. Throws InputError otherwise.
std::vector<ObjectiveSpec> parse_objectives(std::string_view csv);

[[nodiscard]] bool within_budgets(const PointRecord& r, const Budgets& b) noexcept;

// The positions in `rows` of the feasible rows within the budgets that are
// non-dominated over `objectives` among such rows of the same workload (equal
// objective vectors do not dominate each other, so ties are all kept). Ordered by
// workload id, then best first by the objectives in order, then by index. With
// top > 0 only the first `top` of each workload are kept.
std::vector<std::size_t> shortlist(std::span<const PointRecord> rows, const Budgets& budgets,
                                   const std::vector<ObjectiveSpec>& objectives, std::size_t top = 0);

// Only the /archive rows of a result file (not /points), ordered as stored.
std::vector<PointRecord> read_archive_rows(const std::string& path);
// The names tables of a result file (/workloads, /variants): each workload's throughput unit
// ("tokens/s" for served models, "samples/s" otherwise) and full name, each stored variant's
// full name and knob values. Empty where the file lacks them.
struct ResultNames {
  struct Variant {
    std::string name, knobs, eval_arguments;
  };
  std::vector<std::string> units;                            // by workload id
  std::vector<std::string> workloads;                        // by workload id
  std::vector<std::string> workload_eval_arguments;          // by workload id
  std::map<std::uint32_t, Variant> variants;                 // by hardware id
  [[nodiscard]] std::string unit(std::uint32_t workload) const;
  [[nodiscard]] std::string workload(const PointRecord& r) const;
  [[nodiscard]] std::string hardware(const PointRecord& r) const;
  [[nodiscard]] std::string knobs(const PointRecord& r) const;
  // The `dse eval` command that evaluates point r again (a served model on a system), or "".
  [[nodiscard]] std::string eval_command(const PointRecord& r) const;
};
// The names tables of result file `path`; with `hardware_ids`, the variants of those ids only (a
// run's /variants may hold 65,536 rows, of which a shortlist shows a few).
ResultNames read_result_names(const std::string& path);
ResultNames read_result_names(const std::string& path, std::vector<std::uint32_t> hardware_ids);

enum class ShortlistFormat { table, csv, json };
ShortlistFormat parse_shortlist_format(const std::string& s);  // throws InputError

// Writes the selected rows (positions into `rows`), streamed in blocks. `archive_rows` is the
// number of rows the shortlist was derived from. `names`: read_result_names (without them, the
// records' own names and samples/s). Beside the stored figures, perf per dollar: the throughput
// per dollar of the system's price (throughput_per_usd) and the cost of a million units of it
// (tokens for a served model: usd_per_million, costmodel/system/cost.hpp's usd_per_million of
// cost_per_hour_usd); both 0 where the point has no price. `top` (> 0) is said in the table's header. With `cancel` set
// (SIGINT/SIGTERM) the output stops within a few thousand rows: Interrupted. Names are printed
// with control bytes escaped (printable()) in the table and the CSV.
void write_shortlist(const std::vector<PointRecord>& rows, const std::vector<std::size_t>& selected,
                     const Budgets& budgets, const std::vector<ObjectiveSpec>& objectives, ShortlistFormat format,
                     std::ostream& out, const ResultNames& names = {}, std::size_t top = 0,
                     const std::atomic<bool>* cancel = nullptr);

// Prints the Pareto rows of an archive (no budgets, default objectives; the first `top` of each
// workload when top > 0), grouped by workload, best throughput first (the summary `dse run`
// ends with). True when some workload has `top` rows printed (it may have more).
bool print_shortlist(const std::vector<PointRecord>& archive, std::size_t top, std::ostream& out,
                     const ResultNames& names = {}, const std::atomic<bool>* cancel = nullptr);

}  // namespace dse
