// The `dse` command line: options -> options struct -> one library call ->
// summary. The only place that catches errors and picks the exit code.
#include <boost/program_options.hpp>

#include <functional>
#include <iostream>
#include <string>
#include <vector>

#include "dse/cli/commands.hpp"
#include "dse/error.hpp"
#include "dse/version.hpp"

namespace po = boost::program_options;
using dse::cli::Args;

namespace {

struct Command {
  const char* name;
  const char* synopsis;
  std::function<int(int&, char**&, const Args&)> run;
};

// One line per command; keep in step with dse/cli/commands.hpp.
const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"run", "run SCENARIO.yaml -o OUT.h5   evaluate a scenario's design space (under mpirun for many ranks)",
       [](int& c, char**& v, const Args& a) { return dse::cli::cmd_run(c, v, a); }},
      {"shortlist", "shortlist OUT.h5 [--sla-p99-ms X] [--power-w Y] ...   the Pareto shortlist under budgets, from the stored archive",
       [](int&, char**&, const Args& a) { return dse::cli::cmd_shortlist(a); }},
      {"timeloop-model", "timeloop-model ARCH PROB MAP ERT [--json]  evaluate a Timeloop v0.4 case with the loop-nest model",
       [](int&, char**&, const Args& a) { return dse::cli::cmd_timeloop_model(a); }},
      {"timeloop-mapper", "timeloop-mapper ARCH PROB ERT [CONSTRAINTS]  best mapping of a Timeloop v0.4 case (mapping YAML + figures)",
       [](int&, char**&, const Args& a) { return dse::cli::cmd_timeloop_mapper(a); }},
      {"map", "map --hw H --op \"gemm M=.. N=.. K=..\" [--objective latency|energy|edp] [--json]  mapping sheet of one operator",
       [](int&, char**&, const Args& a) { return dse::cli::cmd_map(a); }},
      {"scalesim", "scalesim -c CFG -t TOPO [-i gemm] -p DIR   SCALE-Sim v2 compatible systolic-array reports",
       [](int&, char**&, const Args& a) { return dse::cli::cmd_scalesim(a); }},
      {"eval", "eval --hardware H --workload W [--system S --tp N ...] [--json]  evaluate a workload on a GPU-class platform",
       [](int&, char**&, const Args& a) { return dse::cli::cmd_eval(a); }},
      {"presets", "presets                       list hardware, system and workload presets",
       [](int&, char**&, const Args& a) { return dse::cli::cmd_presets(a); }},
      {"validate", "validate [--json]             compare predictions with published measurements",
       [](int&, char**&, const Args& a) { return dse::cli::cmd_validate(a); }},
      {"report", "report OUT.h5 -o DIR [--sla-p99-ms X] [--power-w Y]   HTML/Markdown report with figures (scripts/report.py)",
       [](int&, char**&, const Args& a) { return dse::cli::cmd_report(a); }},
  };
  return table;
}

void usage(std::ostream& out) {
  out << "usage: dse <command> [options]\n\nDesign-space exploration of AI accelerator platforms.\n\ncommands:\n";
  for (const auto& c : commands()) out << "  " << c.synopsis << '\n';
  out << "\nRun 'dse <command> --help' for the options of a command.\n";
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> all(argv + 1, argv + argc);
  if (all.empty()) {
    usage(std::cerr);
    return dse::kExitBadInput;
  }
  if (all[0] == "--help" || all[0] == "-h" || all[0] == "help") {
    usage(std::cout);
    return dse::kExitOk;
  }
  if (all[0] == "--version") {
    std::cout << "dse " << dse::version_string() << '\n';
    return dse::kExitOk;
  }
  const std::string name = all[0];
  const Args args(all.begin() + 1, all.end());
  try {
    for (const auto& c : commands()) {
      if (name == c.name) return c.run(argc, argv, args);
    }
    std::cerr << "dse: unknown command '" << name << "'\n";
    usage(std::cerr);
    return dse::kExitBadInput;
  } catch (const po::error& e) {
    dse::print_error_line("dse " + name + ": " + e.what() + " (see 'dse " + name + " --help')");
    return dse::kExitBadInput;
  } catch (const dse::InputError& e) {
    dse::print_error_line(e.what());
    return dse::kExitBadInput;
  } catch (const dse::Error& e) {
    dse::print_error_line("dse " + name + ": " + e.what());
    return dse::kExitFailure;
  } catch (const std::exception& e) {
    // A library exception that no reader turned into one of the above (a std::filesystem or
    // allocation failure): one line and exit 1, not std::terminate's abort.
    dse::print_error_line("dse " + name + ": internal error: " + e.what());
    return dse::kExitFailure;
  }
}
