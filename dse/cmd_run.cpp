#include <boost/program_options.hpp>

#include <iostream>

#include "dse/commands.hpp"
#include "dse/context.hpp"
#include "dse/error.hpp"
#include "dse/results.hpp"
#include "dse/run.hpp"
#include "dse/shortlist.hpp"

namespace po = boost::program_options;

namespace dse::cli {

int cmd_run(int& argc, char**& argv, const Args& args) {
  RunOptions opt;
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
    return exit_ok;
  }
  po::notify(vm);
  if (opt.threads < 0) throw InputError("dse run: --threads must be >= 0");

  MpiSession mpi(argc, argv);
  auto ctx = mpi.world();
  try {
    const RunSummary s = run(*ctx, opt);
    if (ctx->rank() == 0) {
      std::cout << "dse run: " << s.points << " points (" << s.feasible << " feasible), " << s.pareto
                << " on the Pareto front, " << ctx->size() << " rank(s), " << s.wall_time_s << " s\n"
                << "wrote " << s.output_path << "\n\n";
      print_shortlist(read_results(s.output_path), std::cout);
    }
    return exit_ok;
  } catch (const InputError& e) {
    if (ctx->rank() == 0) std::cerr << e.what() << '\n';
    return exit_bad_input;
  } catch (const Error& e) {
    if (ctx->rank() == 0) std::cerr << "dse run: " << e.what() << '\n';
    return exit_failure;
  }
}

}  // namespace dse::cli
