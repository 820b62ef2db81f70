// `dse timeloop-mapper`: the mapper on Timeloop v0.4 inputs. Prints the best
// mapping as Timeloop mapping YAML, then its figures exactly as
// `dse timeloop-model` prints them (the written mapping is read back and
// evaluated by that command, so the YAML and the figures cannot disagree).
#include <boost/program_options.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "costmodel/mapper/mapper.hpp"
#include "costmodel/mapper/sheet.hpp"
#include "dse/cli/commands.hpp"
#include "dse/cli/mapper_options.hpp"
#include "dse/error.hpp"
#include "dse/io/timeloop_reader.hpp"
#include "dse/io/timeloop_writer.hpp"

namespace po = boost::program_options;
namespace lp = dse::costmodel::loopnest;
namespace mp = dse::costmodel::mapper;

namespace dse::cli {

namespace {

// YAML comment lines naming every dimension whose factors do not multiply to its size
// ("" when all do: the mapping is one Timeloop loads).
std::string imperfect_note(const lp::Problem& p, const lp::Mapping& m, int levels) {
  std::string note;
  for (int d = 0; d < p.num_dims; ++d) {
    const auto du = static_cast<std::size_t>(d);
    std::int64_t prod = 1;
    for (int l = 0; l < levels; ++l) prod *= m.levels[static_cast<std::size_t>(l)].temporal[du] * m.levels[static_cast<std::size_t>(l)].spatial[du];
    if (prod != p.dim_sizes[du]) {
      note += "# --imperfect: the factors of " + p.dim_names[du] + " multiply to " + std::to_string(prod) + ", the problem has " +
              std::to_string(p.dim_sizes[du]) + " (padded): Timeloop v3.0.3 does not load this mapping\n";
    }
  }
  return note;
}

}  // namespace

int cmd_timeloop_mapper(const Args& args) {
  std::string arch_path, problem_path, ert_path, constraints_path, objective = "energy", out_path;
  po::options_description named(
      "dse timeloop-mapper ARCH.yaml PROBLEM.yaml ERT.yaml [CONSTRAINTS.yaml] [--objective O] [--json] [-o MAP.yaml]\n\n"
      "Runs the mapper on Timeloop v0.4 inputs under the architecture's own constraints\n"
      "(and those of CONSTRAINTS.yaml), prints the best mapping in Timeloop's mapping\n"
      "YAML, the search used, the mappings evaluated, whether the mapping is proven\n"
      "optimal or its gap to the lower bound, then the figures in the form of\n"
      "`dse timeloop-model`. Factors divide their dimensions (Timeloop loads the mapping)\n"
      "unless --imperfect.\n\noptions");
  named.add_options()("help,h", "print this help")("json", "figures as one JSON object (as timeloop-model --json)")(
      "objective", po::value<std::string>(&objective), "latency | energy | edp (default energy)")(
      "output,o", po::value<std::string>(&out_path), "also write the mapping YAML to this file")(
      "arch", po::value<std::string>(&arch_path)->required(), "architecture YAML (positional 1)")(
      "problem", po::value<std::string>(&problem_path)->required(), "problem YAML (positional 2)")(
      "ert", po::value<std::string>(&ert_path)->required(), "energy reference table YAML (positional 3)")(
      "constraints", po::value<std::string>(&constraints_path), "constraints YAML (positional 4, optional)")(
      "imperfect",
      "also try factors that do not divide their dimension (padded; the padding is paid in the cost). No Timeloop "
      "release loads such a mapping as written: v3.0.3's timeloop-model refuses a factor product other than the "
      "dimension ('product of all factors of dimension M is 260'), and so does its parser to date (NVlabs/timeloop "
      "issue 300, 2025); Timeloop writes imperfect factors only as residuals ('C=10,8', Ruby mapspace), whose "
      "loop bounds are not this padding");
  MapperBudgetArgs budget;
  add_mapper_budget_options(named, budget);
  po::positional_options_description pos;
  pos.add("arch", 1).add("problem", 1).add("ert", 1).add("constraints", 1);
  po::variables_map vm;
  if (!parse_options(args, named, pos, vm)) return kExitOk;
  mp::MapperOptions o;
  if (!mp::parse_objective(objective, o.objective)) throw InputError("--objective: expected latency, energy or edp (got '" + objective + "')");
  apply_mapper_budget(budget, o);
  lp::Architecture arch = io::read_timeloop_arch(arch_path);
  io::read_timeloop_ert(ert_path, arch);
  const lp::Problem p = io::read_timeloop_problem(problem_path);
  mp::Constraints c = io::read_timeloop_constraints(arch_path, constraints_path, arch, p);
  c.imperfect = vm.count("imperfect") != 0;
  const mp::MapResult r = mp::map_operator(arch, p, c, o);
  if (!r.feasible) {
    std::cout << "no feasible mapping (" << lp::infeasible_name(r.reason) << "); " << r.evaluated << " mappings evaluated\n";
    return kExitFailure;
  }
  const std::string note = imperfect_note(p, r.mapping, static_cast<int>(arch.levels.size()));
  namespace fs = std::filesystem;
  const fs::path tmp = out_path.empty() ? fs::temp_directory_path() / ("dse-timeloop-mapper-" + std::to_string(::getpid()) + ".map.yaml")
                                        : fs::path(out_path);
  {
    std::ofstream f(tmp);
    if (!f) throw IoError("cannot write " + tmp.string());
    f << note;
    io::write_timeloop_mapping(f, arch, p, r.mapping);
  }
  const bool json = vm.count("json") != 0;
  if (!json) {
    std::cout << note;
    io::write_timeloop_mapping(std::cout, arch, p, r.mapping);
    std::cout << "\n# search: " << mp::strategy_name(r.strategy) << ", " << r.evaluated << " mappings evaluated, objective "
              << mp::objective_name(o.objective) << ", " << optimality_text(mp::make_sheet(arch, p, r)) << "\n\n";
  }
  Args model_args = {arch_path, problem_path, tmp.string(), ert_path};
  if (json) model_args.push_back("--json");
  const int rc = cmd_timeloop_model(model_args);
  if (out_path.empty()) fs::remove(tmp);
  return rc;
}

}  // namespace dse::cli
