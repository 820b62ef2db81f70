// `dse timeloop-model`: evaluate one Timeloop v0.4 case with the loop-nest model.
#include <boost/program_options.hpp>

#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

#include "costmodel/loopnest/evaluate.hpp"
#include "dse/cli/commands.hpp"
#include "dse/error.hpp"
#include "dse/io/timeloop_reader.hpp"
#include "dse/io/yaml_reader.hpp"

namespace po = boost::program_options;
namespace lp = dse::costmodel::loopnest;

namespace dse::cli {

namespace {

std::string num(double v) { return io::format_number(v, 10); }

void print_json(const io::TimeloopCase& c, const lp::NestCost& r, std::ostream& out) {
  out << "{\"feasible\": " << (r.feasible ? "true" : "false") << ", \"reason\": \"" << lp::infeasible_name(r.reason)
      << "\", \"cycles\": " << num(r.cycles) << ", \"macs\": " << num(r.macs) << ", \"utilization\": "
      << num(r.utilization) << ", \"energy_pj\": " << num(r.energy_j * 1e12)
      << ", \"compute_energy_pj\": " << num(r.compute_energy_j * 1e12) << ", \"levels\": [";
  for (int l = 0; l < r.num_levels; ++l) {
    const auto& lc = r.levels[static_cast<std::size_t>(l)];
    out << (l ? ", " : "") << "{\"name\": \"" << c.arch.levels[static_cast<std::size_t>(l)].name
        << "\", \"instances\": " << lc.instances << ", \"utilized_instances\": " << lc.utilized_instances
        << ", \"energy_pj\": " << num(lc.energy_j * 1e12) << ", \"tensors\": {";
    bool first = true;
    for (int t = 0; t < c.problem.num_tensors; ++t) {
      const auto& ts = lc.tensors[static_cast<std::size_t>(t)];
      if (!ts.kept) continue;
      out << (first ? "" : ", ") << "\"" << c.problem.tensors[static_cast<std::size_t>(t)].name << "\": {\"reads\": " << ts.reads
          << ", \"fills\": " << ts.fills << ", \"updates\": " << ts.updates
          << ", \"utilized_capacity\": " << ts.utilized_capacity << "}";
      first = false;
    }
    out << "}}";
  }
  out << "]}\n";
}

void print_text(const io::TimeloopCase& c, const lp::NestCost& r, std::ostream& out) {
  out << "feasible: " << (r.feasible ? "yes" : "no");
  if (!r.feasible) {
    out << " (" << lp::infeasible_name(r.reason);
    if (r.reason_level >= 0) out << " at " << c.arch.levels[static_cast<std::size_t>(r.reason_level)].name;
    out << ")";
  }
  out << "\ncycles: " << num(r.cycles) << "\nMACs: " << num(r.macs) << "\nutilization: " << num(r.utilization * 100.0)
      << " %\ntotal energy: " << num(r.energy_j * 1e12) << " pJ (" << num(r.energy_j * 1e15 / r.macs)
      << " fJ/MAC)\n\nfJ/MAC by level:\n  " << c.arch.compute.name << ": " << num(r.compute_energy_j * 1e15 / r.macs) << '\n';
  for (int l = r.num_levels - 1; l >= 0; --l) {
    out << "  " << c.arch.levels[static_cast<std::size_t>(l)].name << ": "
        << num(r.levels[static_cast<std::size_t>(l)].energy_j * 1e15 / r.macs) << '\n';
  }
  out << "\nper level and tensor (per instance): reads / fills / updates / utilized capacity\n";
  for (int l = 0; l < r.num_levels; ++l) {
    const auto& lc = r.levels[static_cast<std::size_t>(l)];
    out << c.arch.levels[static_cast<std::size_t>(l)].name << " (instances " << lc.instances << ", used "
        << lc.utilized_instances << ")\n";
    for (int t = 0; t < c.problem.num_tensors; ++t) {
      const auto& ts = lc.tensors[static_cast<std::size_t>(t)];
      if (!ts.kept) continue;
      out << "  " << c.problem.tensors[static_cast<std::size_t>(t)].name << ": " << ts.reads << " / " << ts.fills
          << " / " << ts.updates << " / " << ts.utilized_capacity << '\n';
    }
  }
}

}  // namespace

int cmd_timeloop_model(const Args& args) {
  std::string arch, problem, mapping, ert;
  po::options_description named(
      "dse timeloop-model ARCH.yaml PROBLEM.yaml MAPPING.yaml ERT.yaml [--json]\n\n"
      "Evaluates one Timeloop v0.4 case (architecture, problem, mapping, Accelergy ERT)\n"
      "with the loop-nest cost model and prints cycles, MACs, utilisation, energy,\n"
      "fJ/MAC by level and per level / tensor reads, fills, updates and utilised\n"
      "capacity (per instance).\n\noptions");
  named.add_options()("help,h", "print this help")("json", "print one JSON object instead of text")(
      "arch", po::value<std::string>(&arch)->required(), "architecture YAML (positional 1)")(
      "problem", po::value<std::string>(&problem)->required(), "problem YAML (positional 2)")(
      "mapping", po::value<std::string>(&mapping)->required(), "mapping YAML (positional 3)")(
      "ert", po::value<std::string>(&ert)->required(), "energy reference table YAML (positional 4)");
  po::positional_options_description pos;
  pos.add("arch", 1).add("problem", 1).add("mapping", 1).add("ert", 1);
  po::variables_map vm;
  if (!parse_options(args, named, pos, vm)) return kExitOk;
  const io::TimeloopCase c = io::read_timeloop_case(arch, problem, mapping, ert);
  const lp::NestCost r = lp::evaluate(c.arch, c.problem, c.mapping);
  if (vm.count("json") != 0) {
    print_json(c, r, std::cout);
  } else {
    print_text(c, r, std::cout);
  }
  return kExitOk;
}

}  // namespace dse::cli
