#include "dse/gpu_hardware_reader.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "dse/yaml_reader.hpp"

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
  const YAML::Node tiles = m.sequence("gemm_tiles");
  for (std::size_t i = 0; i < tiles.size(); ++i) {
    const auto t = triple(tiles[i], m.place("gemm_tiles").item(i));
    hw.gemm_tiles.push_back(GemmTile{t[0], t[1], t[2]});
  }
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
                                "sustained_fraction_per_precision"}),
                     hw);
  const MapReader v(m.node("vector"), m.place("vector"),
                    {"fp32_flops_per_cycle_per_core", "fp16_flops_per_cycle_per_core",
                     "special_function_ops_per_cycle_per_core"});
  hw.vector_fp32_flops_per_cycle_per_core = v.positive("fp32_flops_per_cycle_per_core");
  hw.vector_fp16_flops_per_cycle_per_core = v.positive("fp16_flops_per_cycle_per_core");
  hw.special_function_ops_per_cycle_per_core = v.positive("special_function_ops_per_cycle_per_core");
  read_memory(MapReader(m.node("memory"), m.place("memory"),
                        {"sram_bytes_per_core", "l2_bytes", "l2_bandwidth_bytes_per_s", "hbm_bytes",
                         "hbm_peak_bandwidth_bytes_per_s", "hbm_achievable_fraction", "hbm_latency_s",
                         "l2_partitions"}),
              hw);
  read_software(MapReader(m.node("software"), m.place("software"),
                          {"launch_overhead_library_s", "launch_overhead_eager_s",
                           "launch_overhead_compiled_s", "gemm_pipeline_stages", "gemm_tiles",
                           "eager_softmax_single_pass_max_row_elements",
                           "eager_softmax_single_pass_max_row_bytes",
                           "compiled_reduction_single_pass_max_row_elements",
                           "compiled_reduction_threads_per_block"}),
                hw);
  return hw;
}

costmodel::GpuHardware load_gpu_hardware(const std::string& path) {
  return parse_gpu_hardware(read_text_file(path, "(file)"), path);
}

}  // namespace dse::io
