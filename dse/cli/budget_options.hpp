// The budgets `dse shortlist` and `dse report` take, read the same way by both: SLAs on the
// p99 latencies under load, and the power, area and memory budgets. --sla-p99-ms is the
// documented alias of --sla-e2e-p99-ms (end-to-end request latency), as in `dse eval`.
#pragma once

#include <boost/program_options.hpp>

#include <string>
#include <vector>

#include "dse/error.hpp"
#include "dse/h5/shortlist.hpp"
#include "dse/io/yaml_reader.hpp"

namespace dse::cli {

struct BudgetArgs {
  double sla_ttft_ms = 0.0;
  double sla_tpot_ms = 0.0;
  double sla_e2e_p99_ms = 0.0;
  double sla_p99_ms = 0.0;
  double power_w = 0.0;
  double area_mm2 = 0.0;
  double memory_gb = 0.0;
  double cost_usd = 0.0;
};

inline void add_budget_options(boost::program_options::options_description& named, BudgetArgs& a) {
  namespace po = boost::program_options;
  named.add_options()(
      "sla-ttft-ms", po::value<double>(&a.sla_ttft_ms), "SLA on the p99 time to first token under load, ms")(
      "sla-tpot-ms", po::value<double>(&a.sla_tpot_ms), "SLA on the p99 time per output token under load, ms")(
      "sla-e2e-p99-ms", po::value<double>(&a.sla_e2e_p99_ms),
      "SLA on the p99 end-to-end request latency under load (arrival to last token), ms")(
      "sla-p99-ms", po::value<double>(&a.sla_p99_ms), "the same as --sla-e2e-p99-ms")(
      "power-w", po::value<double>(&a.power_w), "budget on the power at the wall (accelerators, host, PSU losses), W")(
      "area-mm2", po::value<double>(&a.area_mm2), "budget on the area, mm^2")(
      "memory-gb", po::value<double>(&a.memory_gb), "budget on the memory footprint per chip, GB (1e9 bytes)")(
      "cost-usd", po::value<double>(&a.cost_usd), "budget on the system's price, USD (docs/hardware-guide.md)");
}

// The budgets given; a value that is not a finite positive number is refused, and so are
// --sla-p99-ms and --sla-e2e-p99-ms with different values.
inline Budgets budgets_from(const boost::program_options::variables_map& vm, const BudgetArgs& a) {
  auto positive = [&](const char* name, double v) {
    if (!(v > 0.0) || !(v < 1e300))
      throw InputError(std::string("--") + name + ": expected a positive number (got " + io::format_number(v) + ")");
    return v;
  };
  Budgets b;
  if (vm.count("sla-ttft-ms") != 0) b.ttft_p99_s = positive("sla-ttft-ms", a.sla_ttft_ms) * 1e-3;
  if (vm.count("sla-tpot-ms") != 0) b.tpot_p99_s = positive("sla-tpot-ms", a.sla_tpot_ms) * 1e-3;
  if (vm.count("sla-e2e-p99-ms") != 0) b.p99_latency_s = positive("sla-e2e-p99-ms", a.sla_e2e_p99_ms) * 1e-3;
  if (vm.count("sla-p99-ms") != 0) {
    const double v = positive("sla-p99-ms", a.sla_p99_ms) * 1e-3;
    if (b.p99_latency_s && *b.p99_latency_s != v)
      throw InputError("--sla-p99-ms is --sla-e2e-p99-ms: give one of them, or the same value");
    b.p99_latency_s = v;
  }
  if (vm.count("power-w") != 0) b.power_w = positive("power-w", a.power_w);
  if (vm.count("area-mm2") != 0) b.area_mm2 = positive("area-mm2", a.area_mm2);
  if (vm.count("memory-gb") != 0) b.memory_bytes = positive("memory-gb", a.memory_gb) * 1e9;
  if (vm.count("cost-usd") != 0) b.cost_usd = positive("cost-usd", a.cost_usd);
  return b;
}

}  // namespace dse::cli
