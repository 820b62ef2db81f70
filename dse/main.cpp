// The `dse` command line: options -> options struct -> one library call ->
// summary. The only place that catches errors and picks the exit code.
#include <boost/program_options.hpp>

#include <iostream>
#include <string>
#include <vector>

#include "dse/context.hpp"
#include "dse/error.hpp"
#include "dse/results.hpp"
#include "dse/run.hpp"
#include "dse/shortlist.hpp"
#include "dse/version.hpp"

namespace po = boost::program_options;

namespace {

const char* const kUsage =
    "usage: dse <command> [options]\n"
    "\n"
    "Design-space exploration of AI accelerator platforms.\n"
    "\n"
    "commands:\n"
    "  run SCENARIO.yaml -o OUT.h5   evaluate a scenario's design space (under mpirun for many ranks)\n"
    "  shortlist OUT.h5              print the Pareto points of a result file\n"
    "\n"
    "Run 'dse <command> --help' for the options of a command.\n";

struct Usage {
  std::string message;
};

int cmd_run(int& argc, char**& argv, const std::vector<std::string>& args) {
  dse::RunOptions opt;
  po::options_description named("dse run SCENARIO.yaml -o OUT.h5 [options]\n\n"
                                "Evaluates every point of the scenario's design space (hardware x workload x\n"
                                "batch), spread over MPI ranks and TBB threads, and writes the points and the\n"
                                "Pareto front to HDF5. Run under 'mpirun -np N' for N ranks.\n\noptions");
  named.add_options()("help,h", "print this help")(
      "scenario", po::value<std::string>(&opt.scenario_path)->required(), "scenario YAML file (positional)")(
      "output,o", po::value<std::string>(&opt.output_path)->required(), "HDF5 file to write (replaced if it exists)")(
      "threads,t", po::value<int>(&opt.threads)->default_value(0),
      "TBB threads per rank (0: all cores of the node)");
  po::positional_options_description pos;
  pos.add("scenario", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(named).positional(pos).run(), vm);
  if (vm.count("help") != 0) {
    std::cout << named << '\n';
    return dse::exit_ok;
  }
  po::notify(vm);
  if (opt.threads < 0) throw Usage{"--threads must be >= 0"};

  dse::MpiSession mpi(argc, argv);
  auto ctx = mpi.world();
  try {
    const dse::RunSummary s = dse::run(*ctx, opt);
    if (ctx->rank() == 0) {
      std::cout << "dse run: " << s.points << " points (" << s.feasible << " feasible), " << s.pareto
                << " on the Pareto front, " << ctx->size() << " rank(s), " << s.wall_time_s << " s\n"
                << "wrote " << s.output_path << "\n\n";
      dse::print_shortlist(dse::read_results(s.output_path), std::cout);
    }
    return dse::exit_ok;
  } catch (const dse::InputError& e) {
    if (ctx->rank() == 0) std::cerr << e.what() << '\n';
    return dse::exit_bad_input;
  } catch (const dse::Error& e) {
    if (ctx->rank() == 0) std::cerr << "dse run: " << e.what() << '\n';
    return dse::exit_failure;
  }
}

int cmd_shortlist(const std::vector<std::string>& args) {
  std::string input;
  po::options_description named("dse shortlist OUT.h5\n\nPrints the Pareto points stored in a result file.\n\noptions");
  named.add_options()("help,h", "print this help")("input", po::value<std::string>(&input)->required(),
                                                   "result file written by 'dse run' (positional)");
  po::positional_options_description pos;
  pos.add("input", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(named).positional(pos).run(), vm);
  if (vm.count("help") != 0) {
    std::cout << named << '\n';
    return dse::exit_ok;
  }
  po::notify(vm);
  dse::print_shortlist(dse::read_results(input), std::cout);
  return dse::exit_ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> all(argv + 1, argv + argc);
  if (all.empty() || all[0] == "--help" || all[0] == "-h" || all[0] == "help") {
    std::cout << kUsage;
    return all.empty() ? dse::exit_bad_input : dse::exit_ok;
  }
  if (all[0] == "--version") {
    std::cout << "dse " << dse::version_string() << '\n';
    return dse::exit_ok;
  }
  const std::string command = all[0];
  const std::vector<std::string> args(all.begin() + 1, all.end());
  try {
    if (command == "run") return cmd_run(argc, argv, args);
    if (command == "shortlist") return cmd_shortlist(args);
    std::cerr << "dse: unknown command '" << command << "'\n" << kUsage;
    return dse::exit_bad_input;
  } catch (const Usage& u) {
    std::cerr << "dse " << command << ": " << u.message << '\n';
    return dse::exit_bad_input;
  } catch (const po::error& e) {
    std::cerr << "dse " << command << ": " << e.what() << " (see 'dse " << command << " --help')\n";
    return dse::exit_bad_input;
  } catch (const dse::InputError& e) {
    std::cerr << e.what() << '\n';
    return dse::exit_bad_input;
  } catch (const dse::Error& e) {
    std::cerr << "dse " << command << ": " << e.what() << '\n';
    return dse::exit_failure;
  }
}
