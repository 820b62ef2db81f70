#include "dse/io/gpu_hardware_reader.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <sstream>
#include <vector>

#include "dse/io/yaml_reader.hpp"

namespace dse::io {

namespace {

using costmodel::GemmTile;
using costmodel::GpuHardware;
using costmodel::Precision;

constexpr Precision kPrecisions[] = {Precision::fp32, Precision::tf32, Precision::fp16,
                                     Precision::bf16, Precision::fp8,  Precision::int8};

// A sequence of exactly three positive integers.
std::array<std::int64_t, 3> triple(const YAML::Node& n, const Place& at) {
  if (!n.IsSequence() || n.size() != 3) fail(at, n, "expected a sequence of 3 integers", describe(n));
  std::array<std::int64_t, 3> v{};
  for (std::size_t i = 0; i < 3; ++i) v[i] = as_positive_integer(n[i], at.item(i));
  return v;
}

// [M, N, K] or [M, N, K, CORES]: a tile that CORES cores compute together (GemmTile::cores).
GemmTile gemm_tile_entry(const YAML::Node& n, const Place& at, std::int64_t core_count) {
  if (!n.IsSequence() || (n.size() != 3 && n.size() != 4))
    fail(at, n, "expected [M, N, K] or [M, N, K, CORES] (positive integers)", describe(n));
  GemmTile t;
  t.m = as_positive_integer(n[0], at.item(0));
  t.n = as_positive_integer(n[1], at.item(1));
  t.k = as_positive_integer(n[2], at.item(2));
  if (n.size() == 4) {
    t.cores = as_positive_integer(n[3], at.item(3));
    if (t.cores > core_count)
      fail(at.item(3), n[3], "expected at most the chip's " + std::to_string(core_count) + " cores", describe(n[3]));
  }
  return t;
}

void read_matrix_engine(const MapReader& m, GpuHardware& hw) {
  const auto s = triple(m.node("mma_shape"), m.place("mma_shape"));
  hw.mma_shape = s;
  std::vector<std::string> names;
  for (Precision p : kPrecisions) names.emplace_back(costmodel::to_string(p));
  const MapReader rates(m.node("macs_per_cycle_per_core"), m.place("macs_per_cycle_per_core"), names);
  bool any = false;
  for (Precision p : kPrecisions) {
    const std::string key(costmodel::to_string(p));
    if (!rates.has(key)) continue;
    hw.matrix_macs_per_cycle_per_core[static_cast<std::size_t>(p)] = rates.positive(key);
    any = true;
  }
  if (!any) fail(m.place("macs_per_cycle_per_core"), rates.self(), "expected at least one precision", "none");
  if (m.has("sustained_fraction")) hw.matrix_sustained_fraction = m.positive_fraction("sustained_fraction");
  if (m.has("warp_mma_fraction")) hw.warp_mma_fraction = m.positive_fraction("warp_mma_fraction");
  if (m.has("sustained_fraction_per_precision")) {
    const MapReader shares(m.node("sustained_fraction_per_precision"),
                           m.place("sustained_fraction_per_precision"), names);
    for (Precision p : kPrecisions) {
      const std::string key(costmodel::to_string(p));
      if (!shares.has(key)) continue;
      if (!rates.has(key))
        fail(shares.place(key), shares.node(key), "expected a precision listed in macs_per_cycle_per_core", key);
      hw.matrix_sustained_fraction_by_precision[static_cast<std::size_t>(p)] = shares.positive_fraction(key);
    }
  }
}

void read_memory(const MapReader& m, GpuHardware& hw) {
  hw.sram_bytes_per_core = m.positive("sram_bytes_per_core");
  if (m.has("sram_bytes_per_cycle_per_core"))
    hw.sram_bytes_per_cycle_per_core = m.positive("sram_bytes_per_cycle_per_core");
  hw.l2_bytes = m.positive("l2_bytes");
  hw.l2_bandwidth_bytes_per_s = m.positive("l2_bandwidth_bytes_per_s");
  hw.hbm_bytes = m.positive("hbm_bytes");
  hw.hbm_peak_bandwidth_bytes_per_s = m.positive("hbm_peak_bandwidth_bytes_per_s");
  hw.hbm_achievable_fraction = m.positive_fraction("hbm_achievable_fraction");
  hw.hbm_latency_s = m.non_negative("hbm_latency_s");
  if (m.has("l2_partitions")) hw.l2_partitions = m.positive_integer("l2_partitions");
}

void read_software(const MapReader& m, GpuHardware& hw) {
  hw.launch_overhead_library_s = m.non_negative("launch_overhead_library_s");
  hw.launch_overhead_eager_s = m.non_negative("launch_overhead_eager_s");
  hw.launch_overhead_compiled_s = m.non_negative("launch_overhead_compiled_s");
  hw.eager_softmax_single_pass_max_row_elements =
      m.positive_integer("eager_softmax_single_pass_max_row_elements");
  hw.eager_softmax_single_pass_max_row_bytes = m.positive("eager_softmax_single_pass_max_row_bytes");
  hw.compiled_reduction_single_pass_max_row_elements =
      m.positive_integer("compiled_reduction_single_pass_max_row_elements");
  if (m.has("compiled_reduction_threads_per_block"))
    hw.compiled_reduction_threads_per_block = m.positive_integer("compiled_reduction_threads_per_block");
  hw.gemm_pipeline_stages = m.positive_integer("gemm_pipeline_stages");
  if (hw.gemm_pipeline_stages < 2)
    fail(m.place("gemm_pipeline_stages"), m.node("gemm_pipeline_stages"), "expected an integer >= 2",
         describe(m.node("gemm_pipeline_stages")));
  if (m.has("gemm_pipeline_stages_max")) {
    hw.gemm_pipeline_stages_max = m.positive_integer("gemm_pipeline_stages_max");
    if (hw.gemm_pipeline_stages_max < hw.gemm_pipeline_stages)
      fail(m.place("gemm_pipeline_stages_max"), m.node("gemm_pipeline_stages_max"),
           "expected an integer >= gemm_pipeline_stages (" + std::to_string(hw.gemm_pipeline_stages) + ")",
           describe(m.node("gemm_pipeline_stages_max")));
    hw.gemm_stage_carveout_bytes = m.non_negative("gemm_stage_carveout_bytes");
  } else if (m.has("gemm_stage_carveout_bytes")) {
    fail(m.place("gemm_stage_carveout_bytes"), m.node("gemm_stage_carveout_bytes"),
         "a key that needs gemm_pipeline_stages_max", describe(m.node("gemm_stage_carveout_bytes")));
  }
  const YAML::Node tiles = m.sequence("gemm_tiles");
  for (std::size_t i = 0; i < tiles.size(); ++i) {
    hw.gemm_tiles.push_back(gemm_tile_entry(tiles[i], m.place("gemm_tiles").item(i), hw.core_count));
  }
  hw.gemm_tile_k_scales_with_precision = m.boolean_or("gemm_tile_k_scales_with_precision", false);
  hw.gemm_waves_pipelined = m.boolean_or("gemm_waves_pipelined", false);
}

constexpr const char* kLibraryHeader = "m,n,batch,k,tile_m,tile_n,tile_k,group_m,split_k,solution";

// The selection table of `gemm_library` (see the header): `file` is the table's path.
std::vector<costmodel::GemmLibraryEntry> read_library_table(const std::string& text, const std::string& file) {
  std::vector<costmodel::GemmLibraryEntry> out;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  bool header = false;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    if (!header) {
      if (line != kLibraryHeader) throw ConfigError(file, line_no, 1, "header", kLibraryHeader, line);
      header = true;
      continue;
    }
    std::array<std::int64_t, 10> v{};
    std::size_t at = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::size_t end = i + 1 < v.size() ? line.find(',', at) : line.size();
      const std::string cell = line.substr(at, end == std::string::npos ? std::string::npos : end - at);
      const int column = static_cast<int>(at) + 1;
      std::size_t used = 0;
      long long x = 0;
      try {
        x = std::stoll(cell, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      const std::int64_t min_value = i == 9 ? 0 : 1;
      if (end == std::string::npos || used == 0 || used != cell.size() || x < min_value || x > (1LL << 40))
        throw ConfigError(file, line_no, column, "row",
                          std::string("10 comma-separated integers (") + kLibraryHeader + "), each >= 1 (solution >= 0)",
                          line);
      v[i] = x;
      at = end + 1;
    }
    costmodel::GemmLibraryEntry e;
    e.m = v[0];
    e.n = v[1];
    e.batch = v[2];
    e.k = v[3];
    e.tile = GemmTile{v[4], v[5], v[6], v[7]};
    e.split_k = v[8];
    e.solution = v[9];
    e.order = static_cast<std::int64_t>(out.size());
    out.push_back(e);
  }
  if (out.empty()) throw ConfigError(file, line_no, 1, "rows", "at least one row after the header", "none");
  return out;
}

void read_gemm_library(const MapReader& m, const std::string& file, GpuHardware& hw) {
  const std::string precision = m.string("precision");
  bool known = false;
  for (Precision p : kPrecisions)
    if (costmodel::to_string(p) == precision) {
      hw.gemm_library_precision = p;
      known = true;
    }
  if (!known)
    fail(m.place("precision"), m.node("precision"), "expected one of fp32, tf32, fp16, bf16, fp8, int8", precision);
  const std::string table = m.string("table");
  // A plain file name beside the hardware file: no folders, so a file cannot
  // reach outside the scenarios (or a device such as /dev/zero).
  if (table.empty() || table.find('/') != std::string::npos || table.find('\\') != std::string::npos ||
      table.size() < 5 || table.substr(table.size() - 4) != ".csv")
    fail(m.place("table"), m.node("table"), "expected a file name ending in .csv in the hardware file's folder", table);
  const std::filesystem::path path = std::filesystem::path(file).parent_path() / table;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    fail(m.place("table"), m.node("table"), "expected an existing file (" + path.string() + ")", table);
  hw.gemm_library = read_library_table(read_text_file(path.string(), "GEMM library table"), path.string());
  costmodel::index_gemm_library(hw);
}

}  // namespace

costmodel::GpuHardware parse_gpu_hardware(const std::string& text, const std::string& file) {
  const YAML::Node root = parse_yaml(text, file);
  const Place top{file, ""};
  const MapReader m(root, top,
                    {"kind", "name", "cores", "max_threads_per_core", "clock_hz", "matrix_engine", "vector", "memory",
                     "software"});
  const std::string kind = m.string("kind");
  if (kind != "gpu") fail(m.place("kind"), m.node("kind"), "expected \"gpu\"", describe(m.node("kind")));
  GpuHardware hw;
  hw.name = m.string("name");
  hw.core_count = m.positive_integer("cores");
  if (m.has("max_threads_per_core")) hw.max_threads_per_core = m.positive_integer("max_threads_per_core");
  hw.clock_hz = m.positive("clock_hz");
  read_matrix_engine(MapReader(m.node("matrix_engine"), m.place("matrix_engine"),
                               {"mma_shape", "macs_per_cycle_per_core", "sustained_fraction",
                                "sustained_fraction_per_precision", "warp_mma_fraction"}),
                     hw);
  const MapReader v(m.node("vector"), m.place("vector"),
                    {"fp32_flops_per_cycle_per_core", "fp16_flops_per_cycle_per_core",
                     "special_function_ops_per_cycle_per_core"});
  hw.vector_fp32_flops_per_cycle_per_core = v.positive("fp32_flops_per_cycle_per_core");
  hw.vector_fp16_flops_per_cycle_per_core = v.positive("fp16_flops_per_cycle_per_core");
  hw.special_function_ops_per_cycle_per_core = v.positive("special_function_ops_per_cycle_per_core");
  read_memory(MapReader(m.node("memory"), m.place("memory"),
                        {"sram_bytes_per_core", "sram_bytes_per_cycle_per_core", "l2_bytes",
                         "l2_bandwidth_bytes_per_s", "hbm_bytes", "hbm_peak_bandwidth_bytes_per_s",
                         "hbm_achievable_fraction", "hbm_latency_s",
                         "l2_partitions"}),
              hw);
  read_software(MapReader(m.node("software"), m.place("software"),
                          {"launch_overhead_library_s", "launch_overhead_eager_s",
                           "launch_overhead_compiled_s", "gemm_pipeline_stages", "gemm_pipeline_stages_max",
                           "gemm_stage_carveout_bytes", "gemm_tiles",
                           "gemm_tile_k_scales_with_precision", "gemm_waves_pipelined",
                           "eager_softmax_single_pass_max_row_elements",
                           "eager_softmax_single_pass_max_row_bytes",
                           "compiled_reduction_single_pass_max_row_elements",
                           "compiled_reduction_threads_per_block", "gemm_library"}),
                hw);
  if (const YAML::Node sw = m.node("software"); sw["gemm_library"]) {
    const Place at = m.place("software").child("gemm_library");
    read_gemm_library(MapReader(sw["gemm_library"], at, {"precision", "table"}), file, hw);
  }
  return hw;
}

costmodel::GpuHardware load_gpu_hardware(const std::string& path) {
  return parse_gpu_hardware(read_text_file(path, "(file)"), path);
}

}  // namespace dse::io
