// The subcommands of `dse`. Each lives in its own cmd_*.cpp, parses its own
// options (Boost.Program_options) and calls one library function. Add a command
// by declaring it here and listing it in kCommands in main.cpp.
#pragma once

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/parsers.hpp>
#include <boost/program_options/positional_options.hpp>
#include <boost/program_options/variables_map.hpp>
#include <iostream>
#include <string>
#include <vector>

namespace dse::cli {

using Args = std::vector<std::string>;

// For a command that takes no positional argument: with this description a stray word
// ("dse validate extra") is an error, which a parser without one silently drops.
inline const boost::program_options::positional_options_description& no_positionals() {
  static const boost::program_options::positional_options_description none;
  return none;
}

// Reads a command's options into `vm` (positional words as `positional` maps them). With --help it
// prints the options and returns false: the command then returns kExitOk. Otherwise it runs
// notify(), which checks required options and typed values, and returns true.
inline bool parse_options(const Args& args, const boost::program_options::options_description& named,
                          const boost::program_options::positional_options_description& positional,
                          boost::program_options::variables_map& vm) {
  namespace po = boost::program_options;
  po::store(po::command_line_parser(args).options(named).positional(positional).run(), vm);
  if (vm.count("help") != 0) {
    std::cout << named << '\n';
    return false;
  }
  po::notify(vm);
  return true;
}

// `argc/argv` are passed to commands that start MPI.
int cmd_run(int& argc, char**& argv, const Args& args);
int cmd_shortlist(const Args& args);
int cmd_timeloop_model(const Args& args);
int cmd_map(const Args& args);
int cmd_timeloop_mapper(const Args& args);
int cmd_scalesim(const Args& args);
int cmd_eval(const Args& args);
int cmd_presets(const Args& args);
int cmd_validate(const Args& args);
int cmd_report(const Args& args);

}  // namespace dse::cli
