// SCALE-Sim v2 file formats: the .cfg configuration, conv and GEMM topology
// CSVs, and the three CSV reports (COMPUTE_REPORT, BANDWIDTH_REPORT,
// DETAILED_ACCESS_REPORT) with SCALE-Sim's own header names and column order.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "costmodel/systolic/systolic.hpp"

namespace dse::io {

// Bounds on a systolic array's figures, shared by the SCALE-Sim reader and the scenario reader's
// `kind: systolic` entries. They keep the simulator's int64 products (rows x cols x folds, offset +
// address, the three SRAMs summed) from wrapping: 2^20 PEs a side, offsets up to 2^53 words, and
// each SRAM at most 2^43 KiB (2^53 bytes, so the three sum below 2^55 and stay exact in double) are
// far beyond any real array. (SRAMs of up to int64_max / 1024 KiB each summed past 2^63: an area of
// -2.25e13 mm2, issue 58 item 9.)
inline constexpr std::int64_t kMaxArraySide = std::int64_t{1} << 20;
inline constexpr std::int64_t kMaxOffset = std::int64_t{1} << 53;
inline constexpr std::int64_t kMaxSramKib = std::int64_t{1} << 43;
// A depthwise ("DP") conv row runs as one layer per channel: at most this many.
inline constexpr std::int64_t kMaxDepthwiseChannels = 65536;
// Layers a topology may expand to, depthwise rows counting one per channel.
inline constexpr std::int64_t kMaxTopologyLayers = kMaxDepthwiseChannels * 16;

struct ScalesimConfig {
  std::string run_name;
  costmodel::SystolicArray array;
};

// Reads a SCALE-Sim v2 .cfg file. Accepted keys: [general] run_name;
// [architecture_presets] ArrayHeight, ArrayWidth, IfmapSramSzkB,
// FilterSramSzkB, OfmapSramSzkB, IfmapOffset, FilterOffset, OfmapOffset,
// Dataflow (ws|os|is), Bandwidth, MemoryBanks (1 only); [run_presets]
// InterfaceBandwidth (CALC|USER). Anything else is a ConfigError naming
// file:line and the key.
ScalesimConfig read_scalesim_config(const std::string& path);
ScalesimConfig parse_scalesim_config(const std::string& text, const std::string& file);

struct ScalesimLayer {
  std::string name;
  costmodel::ConvLayer conv;
};

enum class TopologyKind { conv, gemm };

// Conv rows: name, IFMAP H, IFMAP W, Filter H, Filter W, Channels, Num
// Filter, Strides[, Stride width]; a row whose name contains "DP" is SCALE-Sim's depthwise layer,
// one layer of one channel per channel (<name>Channel_<i>). GEMM rows: name, M, N, K (converted
// with gemm_as_conv). The first line is a header; what follows a row's last comma is not read.
std::vector<ScalesimLayer> read_scalesim_topology(const std::string& path, TopologyKind kind);
std::vector<ScalesimLayer> parse_scalesim_topology(const std::string& text, const std::string& file,
                                                   TopologyKind kind);

// Report writers: one header line then one line per layer, as SCALE-Sim writes them.
void write_compute_report(std::ostream& out, const std::vector<costmodel::SystolicResult>& layers);
void write_bandwidth_report(std::ostream& out, const std::vector<costmodel::SystolicResult>& layers);
void write_detailed_access_report(std::ostream& out, const std::vector<costmodel::SystolicResult>& layers);

// Evaluates every layer and writes OUTDIR/<run_name>/{COMPUTE,BANDWIDTH,DETAILED_ACCESS}_REPORT.csv.
// Returns the directory written.
std::string run_scalesim(const ScalesimConfig& config, const std::vector<ScalesimLayer>& layers,
                         const std::string& outdir, std::vector<costmodel::SystolicResult>* results = nullptr);

}  // namespace dse::io
