#include <boost/program_options.hpp>

#include <iostream>

#include "dse/cli/commands.hpp"
#include "dse/error.hpp"
#include "dse/io/scalesim_io.hpp"

namespace po = boost::program_options;

namespace dse::cli {

int cmd_scalesim(const Args& args) {
  std::string config, topology, input_type = "conv", outdir = ".";
  po::options_description named(
      "dse scalesim -c CONFIG.cfg -t TOPOLOGY.csv [-i gemm|conv] -p OUTDIR\n\n"
      "Evaluates a SCALE-Sim v2 run (config + topology) with the SCALE-Sim compatible systolic\n"
      "model and writes OUTDIR/<run_name>/COMPUTE_REPORT.csv, BANDWIDTH_REPORT.csv and\n"
      "DETAILED_ACCESS_REPORT.csv in SCALE-Sim's format.\n\noptions");
  named.add_options()("help,h", "print this help")(
      "config,c", po::value<std::string>(&config)->required(),
      "SCALE-Sim .cfg file ([general] run_name; [architecture_presets] ArrayHeight, ArrayWidth, "
      "IfmapSramSzkB, FilterSramSzkB, OfmapSramSzkB, IfmapOffset, FilterOffset, OfmapOffset, Dataflow, "
      "Bandwidth (a list: its first figure, as SCALE-Sim v2 takes it), MemoryBanks; [run_presets] "
      "InterfaceBandwidth CALC|USER)")(
      "topology,t", po::value<std::string>(&topology)->required(),
      "topology CSV: conv rows (name, H, W, R, S, C, K, stride[, stride width]; a name containing DP is a "
      "depthwise layer, run per channel as SCALE-Sim does) or GEMM rows (name, M, N, K)")(
      "input-type,i", po::value<std::string>(&input_type)->default_value("conv"),
      "topology kind: conv or gemm")("path,p", po::value<std::string>(&outdir)->default_value("."),
                                     "output folder; reports go to PATH/<run_name>/");
  po::variables_map vm;
  if (!parse_options(args, named, no_positionals(), vm)) return kExitOk;
  io::TopologyKind kind = io::TopologyKind::conv;
  if (input_type == "gemm") {
    kind = io::TopologyKind::gemm;
  } else if (input_type != "conv") {
    throw InputError("dse scalesim: -i expects conv or gemm (got '" + input_type + "')");
  }
  const auto cfg = io::read_scalesim_config(config);
  const auto layers = io::read_scalesim_topology(topology, kind);
  std::vector<costmodel::SystolicResult> results;
  const std::string dir = io::run_scalesim(cfg, layers, outdir, &results);
  for (std::size_t i = 0; i < layers.size(); ++i) {
    std::cout << layers[i].name << ": " << results[i].total_cycles << " cycles, " << results[i].stall_cycles
              << " stall cycles\n";
  }
  std::cout << "reports written to " << printable(dir) << '\n';
  return kExitOk;
}

}  // namespace dse::cli
