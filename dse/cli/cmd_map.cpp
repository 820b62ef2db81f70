// `dse map`: the mapper's best mapping of one operator on a loop-nest hardware
// (a native `loopnest_hardware:` YAML, or a Timeloop v0.4 architecture + ERT),
// printed as a mapping sheet (text or JSON).
#include <boost/program_options.hpp>

#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "costmodel/mapper/memo.hpp"
#include "costmodel/mapper/sheet.hpp"
#include "dse/cli/commands.hpp"
#include "dse/cli/mapper_options.hpp"
#include "dse/error.hpp"
#include "dse/io/loopnest_overrides.hpp"
#include "dse/io/op_spec.hpp"
#include "dse/io/platform_reader.hpp"
#include "dse/io/timeloop_reader.hpp"
#include "dse/io/timeloop_writer.hpp"
#include "dse/io/yaml_reader.hpp"

namespace po = boost::program_options;
namespace lp = dse::costmodel::loopnest;
namespace mp = dse::costmodel::mapper;

namespace dse::cli {

namespace {

std::string num(double v) { return io::format_number(v); }
// A JSON number that reads back to the same double (dse run's mapping sheets compare to it).
std::string exact(double v) { return io::exact_number_text(v); }

// --override PATH=VALUE, in the order given: numbers of the architecture by the native file's
// keys, as a scenario's loop-nest overrides set them (dse/io/loopnest_overrides.hpp).
void apply_overrides(const std::vector<std::string>& given, lp::Architecture& arch) {
  for (const std::string& text : given) {
    const auto eq = text.find('=');
    const std::string path = eq == std::string::npos ? text : text.substr(0, eq);
    const auto field = io::resolve_loopnest_path(arch, path);
    if (eq == std::string::npos || !field)
      throw InputError("--override " + text + ": expected PATH=VALUE with PATH a number of the architecture, e.g. "
                       "levels.shared_glb.capacity_words=65536" + (eq == std::string::npos ? std::string() : " (unknown path)"));
    double v = 0.0;
    std::size_t used = 0;
    try {
      v = std::stod(text.substr(eq + 1), &used);
    } catch (const std::exception&) {
      used = 0;
    }
    const std::string expected = used == 0 || used != text.size() - eq - 1 ? "a number" : io::check_loopnest_value(*field, v);
    if (!expected.empty()) throw InputError("--override " + text + ": expected " + expected);
    io::set_loopnest_value(arch, *field, v);
  }
  if (const std::string why = lp::validate(arch); !why.empty())
    throw InputError("--override: the overridden architecture is not a valid hierarchy (" + why + ")");
}

void print_text(const mp::MappingSheet& s, const mp::MapResult& r, std::ostream& out) {
  out << "operator: " << s.op << "\nfeasible: " << (s.feasible ? "yes" : "no");
  if (!s.feasible) out << " (" << s.reason << ")";
  out << "\nprecision: " << s.precision_bits << " bit\nobjective: " << s.objective << "\nsearch: " << s.strategy << ", "
      << s.evaluated << " mappings evaluated\noptimality: " << optimality_text(s) << "\nfusion group: " << s.fusion_group << "\n\nlevel          temporal (order outer->inner)        spatial            keeps        occupancy\n";
  for (const auto& l : s.levels) {
    char line[512];
    std::snprintf(line, sizeof line, "%-14s %-36s %-18s %-12s %s\n", l.name.c_str(),
                  (l.temporal.empty() ? std::string("-") : l.temporal + " [" + l.order + "]").c_str(),
                  l.spatial.empty() ? "-" : l.spatial.c_str(), l.keeps.empty() ? "-" : l.keeps.c_str(),
                  l.capacity_words > 0 ? (num(100.0 * l.occupancy) + " % of " + std::to_string(l.capacity_words) + " words").c_str()
                                       : (std::to_string(l.used_words) + " words (unbounded)").c_str());
    out << line;
  }
  out << "\nbottleneck: " << to_string(s.bottleneck) << (s.bottleneck_level.empty() ? "" : " (" + s.bottleneck_level + ")")
      << "\ncycles: " << num(s.cycles) << "\nlatency: " << num(s.latency_s * 1e6) << " us\nenergy: " << num(s.energy_j * 1e6)
      << " uJ (" << num(s.energy_per_mac_j * 1e15) << " fJ/MAC)\npercent of peak: " << num(s.percent_of_peak)
      << " %\nmemory-stall fraction: " << num(s.memory_stall_fraction) << "\nlower bound: " << num(s.bound_value)
      << " (compute " << num(r.bound.compute_cycles) << " cycles, memory " << num(r.bound.memory_cycles)
      << " cycles, energy " << num(r.bound.energy_j * 1e6) << " uJ + innermost keepers " << num(r.bound.keeper_energy_j * 1e6)
      << " uJ)\ngap to lower bound: " << num(100.0 * s.gap_to_bound) << " %\n";
}

std::string jstr(const std::string& s) {
  std::string o = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') o += '\\';
    o += ch;
  }
  return o + "\"";
}

void print_json(const mp::MappingSheet& s, const mp::MapResult& r, std::ostream& out) {
  out << "{\"operator\": " << jstr(s.op) << ", \"feasible\": " << (s.feasible ? "true" : "false") << ", \"reason\": " << jstr(s.reason)
      << ", \"precision_bits\": " << s.precision_bits << ", \"objective\": " << jstr(s.objective) << ", \"strategy\": "
      << jstr(s.strategy) << ", \"evaluated\": " << s.evaluated << ", \"fusion_group\": " << jstr(s.fusion_group) << ", \"levels\": [";
  for (std::size_t i = 0; i < s.levels.size(); ++i) {
    const auto& l = s.levels[i];
    out << (i ? ", " : "") << "{\"name\": " << jstr(l.name) << ", \"temporal\": " << jstr(l.temporal) << ", \"order\": " << jstr(l.order)
        << ", \"spatial\": " << jstr(l.spatial) << ", \"keeps\": " << jstr(l.keeps) << ", \"used_words\": " << l.used_words
        << ", \"capacity_words\": " << l.capacity_words << ", \"occupancy\": " << num(l.occupancy) << ", \"instances_used\": "
        << l.instances_used << ", \"instances\": " << l.instances << ", \"cycles\": " << num(l.cycles) << ", \"energy_j\": " << num(l.energy_j) << "}";
  }
  out << "], \"bottleneck\": " << jstr(std::string(to_string(s.bottleneck))) << ", \"bottleneck_level\": " << jstr(s.bottleneck_level)
      << ", \"cycles\": " << exact(s.cycles) << ", \"latency_s\": " << exact(s.latency_s) << ", \"energy_j\": " << exact(s.energy_j)
      << ", \"energy_per_mac_j\": " << exact(s.energy_per_mac_j) << ", \"percent_of_peak\": " << exact(s.percent_of_peak)
      << ", \"memory_stall_fraction\": " << exact(s.memory_stall_fraction) << ", \"bound\": " << num(s.bound_value)
      << ", \"bound_compute_cycles\": " << num(r.bound.compute_cycles) << ", \"bound_memory_cycles\": " << num(r.bound.memory_cycles)
      << ", \"gap_to_bound\": " << num(s.gap_to_bound) << ", \"proven_optimal\": " << (s.proven_optimal ? "true" : "false")
      << ", \"stopped_by\": " << jstr(s.stopped_by) << ", \"bound_keeper_energy_j\": " << num(r.bound.keeper_energy_j) << "}\n";
}

}  // namespace

int cmd_map(const Args& args) {
  std::string hw, ert, op, objective = "energy", constraints;
  std::vector<std::string> overrides;
  po::options_description named(
      "dse map --hw H --op \"gemm M=4096 N=4096 K=4096\" [--objective latency|energy|edp] [--json]\n\n"
      "Finds the best mapping of one operator on a loop-nest hardware and prints its\n"
      "mapping sheet: tiling, loop order, spatial split, keeps and occupancy per level,\n"
      "bottleneck, latency, energy, percent of peak, memory-stall fraction, the search\n"
      "used, the mappings evaluated, whether the mapping is proven optimal and the gap to\n"
      "the per-operator lower bound. The search stops when it has converged, after\n"
      "--evaluations evaluations or after --time-budget-ms, whichever comes first.\n\n"
      "Operators: gemm M= N= K=; bmm B= M= N= K=; conv2d N= C= H= W= K= R= S= stride=\n"
      "groups= (input H x W, no padding); attention_qk / attention_av B= H= L= D= (or Lq= Lk=).\n"
      "Any of them takes bits= (default: the first precision of the hardware).\n"
      "--override PATH=VALUE sets a number of the hardware first, as a scenario's loop-nest\n"
      "overrides do (e.g. levels.shared_glb.capacity_words=110592, compute.mesh_x=16).\n\noptions");
  named.add_options()("help,h", "print this help")(
      "hw", po::value<std::string>(&hw)->required(),
      "hardware: a loop-nest preset name ('dse presets': hardware/research, gpu-4level), a native YAML (top key "
      "loopnest_hardware, e.g. scenarios/hardware/gpu-4level.yaml) or a Timeloop v0.4 architecture (then --ert)")(
      "ert", po::value<std::string>(&ert), "Accelergy ERT for a Timeloop architecture")(
      "constraints", po::value<std::string>(&constraints), "Timeloop v0.4 constraints file naming the hardware's levels (native or Timeloop; a Timeloop architecture's own constraints apply too)")(
      "op", po::value<std::string>(&op)->required(), "the operator, e.g. \"gemm M=4096 N=4096 K=4096\"")(
      "objective", po::value<std::string>(&objective), "latency | energy | edp (default energy)")(
      "override", po::value<std::vector<std::string>>(&overrides)->composing(),
      "PATH=VALUE: a number of the hardware (repeatable; scenarios/README.md, loop-nest overrides)")(
      "json", "print one JSON object instead of text");
  MapperBudgetArgs budget;
  add_mapper_budget_options(named, budget);
  po::variables_map vm;
  if (!parse_options(args, named, no_positionals(), vm)) return kExitOk;
  mp::MapperOptions o;
  if (!mp::parse_objective(objective, o.objective)) throw InputError("--objective: expected latency, energy or edp (got '" + objective + "')");
  apply_mapper_budget(budget, o);
  // A name that is neither a loop-nest preset (hardware/research, then hardware) nor a file says
  // which presets it may have meant.
  const std::vector<std::string> loopnest_presets{"hardware/research", "hardware"};
  if (const std::string why = io::unknown_preset(hw, loopnest_presets); !why.empty())
    throw InputError("--hw: " + why + " (got '" + hw + "')");
  hw = io::resolve_loopnest_hardware_path(hw);
  const YAML::Node probe = io::parse_yaml(io::read_text_file(hw, "hardware"), hw);
  const bool native = probe.IsMap() && probe["loopnest_hardware"].IsDefined();
  const bool gpu_file = probe.IsMap() && probe["kind"].IsDefined() && probe["kind"].IsScalar() &&
                        probe["kind"].as<std::string>() == "gpu";
  if (gpu_file)
    throw InputError("--hw " + hw + " is a GPU-class hardware file (kind: gpu): dse map takes a loop-nest " +
                     "hardware (the presets under hardware/research and gpu-4level, 'dse presets') or a " +
                     "Timeloop architecture; dse eval evaluates GPU-class platforms");
  lp::Architecture arch;
  if (native) {
    arch = io::read_loopnest_hardware(hw);
  } else {
    if (ert.empty()) throw InputError("--hw " + hw + " is a Timeloop architecture: --ert is required");
    arch = io::read_timeloop_arch(hw);
    io::read_timeloop_ert(ert, arch);
  }
  apply_overrides(overrides, arch);
  const int bits = arch.compute.rates[0].bits > 0 ? arch.compute.rates[0].bits : 8;
  const lp::Problem p = io::parse_loopnest_op(op, bits, "--op");
  if (native) arch = lp::bind_keep_roles(arch, p);  // `keeps:` lists by role
  mp::Constraints c;
  c = io::read_timeloop_constraints(hw, constraints, arch, p);
  mp::MapperCache cache;
  const mp::MapResult r = cache.map(arch, p, c, o);
  const mp::MappingSheet s = mp::make_sheet(arch, p, r);
  if (vm.count("json") != 0) {
    print_json(s, r, std::cout);
  } else {
    print_text(s, r, std::cout);
    std::cout << "memo: " << cache.hits() << " hits, " << cache.misses() << " misses\n";
  }
  return kExitOk;
}

}  // namespace dse::cli
