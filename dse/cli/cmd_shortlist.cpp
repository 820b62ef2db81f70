#include <boost/program_options.hpp>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <iostream>

#include "dse/cli/budget_options.hpp"
#include "dse/cli/commands.hpp"
#include "dse/error.hpp"
#include "dse/h5/results.hpp"
#include "dse/h5/shortlist.hpp"
#include "dse/io/yaml_reader.hpp"

namespace po = boost::program_options;

namespace dse::cli {

namespace {

// The rows per workload printed to a terminal when --top is not given.
constexpr long long kTerminalTop = 20;

std::atomic<bool> g_stop{false};  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

// The first signal stops the printing at the next block; a second ends the process at once.
extern "C" void on_stop_signal(int sig) {
  if (g_stop.exchange(true)) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);
  }
}

}  // namespace

int cmd_shortlist(const Args& args) {
  std::string input;
  std::string objectives = "throughput,latency,energy,risk";
  std::string format = "table";
  long long top = 0;
  BudgetArgs budget_args;
  po::options_description named(
      "dse shortlist OUT.h5 [options]\n\n"
      "Re-derives the Pareto shortlist from the archive stored in a result file for the\n"
      "given budgets, without rerunning: archived points that meet every budget, then the\n"
      "front over the objectives, per workload (best first by the first objective).\n\noptions");
  named.add_options()("help,h", "print this help")(
      "input", po::value<std::string>(&input)->required(), "result file written by 'dse run' (positional)");
  add_budget_options(named, budget_args);
  named.add_options()(
      "objectives", po::value<std::string>(&objectives)->default_value(objectives),
      "comma-separated objectives among throughput (max), latency, energy, risk, p99, ttft, tpot, power, area, "
      "memory (min); "
      "field names such as latency_s are accepted too, and a :max or :min that matches (latency_s:min)")(
      "top", po::value<long long>(&top),
      "keep the first N points of each workload (0: all; default: all, or 20 when the output is a terminal)")(
      "format", po::value<std::string>(&format)->default_value(format), "table, csv or json")(
      "timing", "print the time taken to read and to shortlist on stderr");
  po::positional_options_description pos;
  pos.add("input", 1);
  po::variables_map vm;
  if (!parse_options(args, named, pos, vm)) return kExitOk;
  const Budgets budgets = budgets_from(vm, budget_args);
  // Read signed: a negative count is refused, not wrapped to "all".
  if (top < 0) throw InputError("--top: expected a count >= 0 (got " + std::to_string(top) + ")");
  // A terminal gets the first kTerminalTop of each workload unless --top says otherwise: a front of
  // a million rows is for a file or a pipe, not a screen.
  const bool terminal = isatty(STDOUT_FILENO) != 0;
  if (vm.count("top") == 0 && terminal) top = kTerminalTop;
  const auto specs = parse_objectives(objectives);
  const ShortlistFormat fmt = parse_shortlist_format(format);

  require_result_path("shortlist", input);
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const std::vector<PointRecord> rows = read_archive_rows(input);
  const auto t1 = Clock::now();
  const std::vector<std::size_t> selected = shortlist(rows, budgets, specs, static_cast<std::size_t>(top));
  const auto t2 = Clock::now();
  // SIGINT/SIGTERM stop the printing within a few thousand rows (exit code 130).
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  std::vector<std::uint32_t> shown;  // the hardware ids of the rows listed, whose names are read
  shown.reserve(selected.size());
  for (const std::size_t i : selected) shown.push_back(rows[i].hardware_id);
  try {
    write_shortlist(rows, selected, budgets, specs, fmt, std::cout, read_result_names(input, std::move(shown)),
                    static_cast<std::size_t>(top), &g_stop);
  } catch (const Interrupted&) {
    std::cout.flush();
    print_error_line("dse shortlist: interrupted");
    return kExitInterrupted;
  }
  if (vm.count("top") == 0 && terminal) {
    std::cerr << "dse shortlist: the first " << kTerminalTop << " of each workload (--top 0 prints all)\n";
  }
  if (vm.count("timing") != 0) {
    std::cerr << "dse shortlist: " << rows.size() << " archived rows read in "
              << std::chrono::duration<double>(t1 - t0).count() << " s, shortlisted (" << selected.size()
              << " points) in " << std::chrono::duration<double>(t2 - t1).count() << " s\n";
  }
  return kExitOk;
}

}  // namespace dse::cli
