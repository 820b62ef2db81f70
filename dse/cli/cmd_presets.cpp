// `dse presets`: the hardware, system, stack and workload presets.
#include <boost/program_options.hpp>

#include <iostream>

#include "costmodel/workload/presets.hpp"
#include "dse/cli/commands.hpp"
#include "dse/error.hpp"
#include "dse/io/platform_reader.hpp"

namespace po = boost::program_options;

namespace dse::cli {

namespace wl = dse::costmodel::workload;

int cmd_presets(const Args& args) {
  po::options_description named("dse presets\n\nLists the hardware, system and workload presets.\n\noptions");
  named.add_options()("help,h", "print this help");
  po::variables_map vm;
  if (!parse_options(args, named, no_positionals(), vm)) return kExitOk;
  std::cout << "scenarios folder: " << printable(io::scenarios_dir()) << '\n';
  for (const char* sub : {"hardware", "systems", "stacks"}) {
    std::cout << sub << ":";
    for (const auto& n : io::preset_names(sub)) std::cout << ' ' << n;
    std::cout << '\n';
  }
  // Research designs: loop-nest hierarchies (`dse map --hw`) and kind: systolic scenarios.
  for (const char* sub : {"hardware/research", "hardware/research/systolic"}) {
    std::cout << sub << ":";
    for (const auto& n : io::preset_names(sub)) std::cout << ' ' << n;
    std::cout << '\n';
  }
  std::cout << "workloads (built in):";
  for (const auto& n : wl::workload_preset_names()) std::cout << ' ' << n;
  std::cout << "\nworkloads (files in scenarios/workloads):";
  for (const auto& n : io::preset_names("workloads")) std::cout << ' ' << n;
  std::cout << '\n';
  return kExitOk;
}

}  // namespace dse::cli
