// The subcommands of `dse`. Each lives in its own cmd_*.cpp, parses its own
// options (Boost.Program_options) and calls one library function. Add a command
// by declaring it here and listing it in kCommands in main.cpp.
#pragma once

#include <boost/program_options/positional_options.hpp>
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
