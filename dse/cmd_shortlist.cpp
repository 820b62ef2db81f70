#include <boost/program_options.hpp>

#include <iostream>

#include "dse/commands.hpp"
#include "dse/error.hpp"
#include "dse/results.hpp"
#include "dse/shortlist.hpp"

namespace po = boost::program_options;

namespace dse::cli {

int cmd_shortlist(const Args& args) {
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
    return exit_ok;
  }
  po::notify(vm);
  print_shortlist(read_results(input), std::cout);
  return exit_ok;
}

}  // namespace dse::cli
