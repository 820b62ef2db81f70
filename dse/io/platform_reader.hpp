// Readers for the platform evaluation (`dse eval`, `dse validate`):
//  * hardware files: a `kind: gpu` file (dse/io/gpu_hardware_reader.hpp) plus two
//    optional top-level sections read here, either inline (blanked before the
//    GPU reader sees the text) or in a sidecar file with the same name in a
//    `platform/` folder beside it (scenarios/hardware/platform/*.yaml, so the
//    presets stay loadable by the GPU reader alone):
//      energy:
//        matrix_flop_fp32_j, matrix_flop_fp16_j, matrix_flop_int8_j: NUMBER >= 0  # per FLOP
//        vector_flop_j, hbm_byte_j, l2_byte_j: NUMBER >= 0
//        static_power_w, tdp_w: NUMBER >= 0
//        process_nm: NUMBER > 0            # informative (the scaling rule's input)
//        confidence: {FIGURE: P|S|D|R, ...}   # each figure's source tag (keys: the names above);
//                                          # those tagged R raise a point's engineering risk
//                                          # (ChipEnergy::recalled_figures, costmodel/system/risk.hpp)
//      platform:
//        graph_kernel_overhead_s: NUMBER >= 0   # per kernel under CUDA/HPU graphs or XLA
//        stack_maturity: NUMBER in [0, 1]
//        fusions: [gemm_epilogue | norm_residual | flash_attention | conv_stage, ...]
//        links: {link_bandwidth_bytes_per_s: NUMBER > 0, link_latency_s: NUMBER >= 0, links: INT,
//                achievable_fraction: NUMBER in (0, 1]}   # sustained share in collectives, default 1
//      area:
//        die_area_mm2: NUMBER >= 0        # one chip, all of its dies (Platform::die_area_mm2)
//        confidence: {die_area_mm2: P|S|D|R}
//  * system files (scenarios/systems/*.yaml):
//      kind: system
//      name: STRING
//      chip: PRESET-OR-PATH        # a hardware preset name or file
//      chips: INT
//      interconnect: {topology: switch|ring|torus_2d|torus_3d, dims: [INT, ...],
//                     link_bandwidth_bytes_per_s, link_latency_s, links, achievable_fraction}
//      power: {tdp_w, static_power_w, dvfs: frequency_only|voltage_and_frequency,
//              min_clock_fraction}
//      host: {cpus_w, memory_w, nics_w, switches_w, storage_w, other_w: NUMBER >= 0,   # under load
//             fans_w: NUMBER >= 0,                                              # at full load
//             psu_efficiency: NUMBER in (0, 1], max_wall_w: NUMBER >= 0}   # power.hpp wall_power
//      stack: PRESET-OR-PATH       # the default serving stack (scenarios/stacks), or none
//      cost: {chip_usd: NUMBER >= 0, host_usd_per_chip: NUMBER >= 0,   # an owned system's price
//             rental_usd_per_chip_hour: NUMBER > 0,                    # or, instead, a rented one's
//             confidence: {FIGURE: P|S|D|R, ...}}                      # costmodel/system/cost.hpp
//  * serving stack files (scenarios/stacks/*.yaml):
//      kind: serving_stack
//      name: STRING
//      step_overhead_s, per_sequence_overhead_s: NUMBER >= 0   # per scheduler iteration
//      tp_all_reduce: library | custom          # the TP all-reduce kernel (default library)
//      tp_all_reduce_max_bytes: NUMBER >= 0      # the largest buffer the custom kernel takes (0: any)
// Presets are looked up in the scenarios folder: env DSE_SCENARIOS_DIR, else
// the compile definition DSE_SCENARIOS_DIR (the source tree's scenarios/).
#pragma once

#include <string>
#include <vector>

#include "costmodel/platform/evaluate.hpp"
#include "costmodel/platform/system.hpp"
#include "dse/io/yaml_reader.hpp"

namespace dse::io {

std::string scenarios_dir();
// Names (file stems) of the YAML files in scenarios/<sub>.
std::vector<std::string> preset_names(const std::string& sub);

// "" when NAME_OR_PATH is a preset of scenarios/<sub>, an existing file or a path (a missing
// path is read_text_file's to report); otherwise what was expected, with the presets it may
// have meant ("did you mean 'h100-sxm5'?"), for the caller to report at its own place.
std::string unknown_preset(const std::string& name_or_path, const std::string& sub);
// The same over the presets of several folders, looked up in order ("expected a preset of
// hardware/research or hardware ..."), the hint from all of their names.
std::string unknown_preset(const std::string& name_or_path, const std::vector<std::string>& subs);
// The string at `key` of m, a preset of scenarios/<sub> or a file; one that is neither is refused
// at the key (unknown_preset's message).
std::string preset_at(const MapReader& m, const std::string& key, const std::string& sub);

costmodel::platform::Platform parse_platform(const std::string& text, const std::string& file);
costmodel::platform::Platform load_platform(const std::string& path);
// The sidecar of a hardware file (platform/NAME.yaml beside it), or "" when it has none.
std::string platform_sidecar_path(const std::string& path);
// Reads a sidecar's sections (energy, platform, area; no other key) into p.
void read_platform_sidecar(const YAML::Node& root, const std::string& file, costmodel::platform::Platform& p);
// A preset name of scenarios/hardware or a file path.
costmodel::platform::Platform resolve_platform(const std::string& name_or_path);
// The file a hardware (resp. system) preset name or path resolves to; ConfigError as resolve_*.
std::string resolve_hardware_path(const std::string& name_or_path);
std::string resolve_system_path(const std::string& name_or_path);
// The file of a loop-nest hardware preset (`dse map --hw`): scenarios/hardware/research/NAME.yaml,
// else scenarios/hardware/NAME.yaml; a path (or a name of neither) is returned as it is.
std::string resolve_loopnest_hardware_path(const std::string& name_or_path);

struct SystemFile {
  std::string file;  // the path it was read from
  costmodel::platform::SystemSpec system;
  costmodel::platform::Platform chip;
  std::string chip_name;
};
SystemFile load_system(const std::string& path);
// A system file's parsed tree read from `path`; its chip is `chip` when given (a chip whose
// figures a scenario changed, dse/io/overrides.hpp), else the preset or file it names.
SystemFile read_system(const YAML::Node& root, const std::string& path, const costmodel::platform::Platform* chip);
// The chip (preset name or file) a system file's tree names, checked as read_system checks it.
std::string system_chip_name(const YAML::Node& root, const std::string& path);
costmodel::system::ServingStack load_stack(const std::string& path);
// A preset name of scenarios/stacks, a file path, or "none" (no overhead).
costmodel::system::ServingStack resolve_stack(const std::string& name_or_path);
// A preset name of scenarios/systems or a file path.
SystemFile resolve_system(const std::string& name_or_path);

}  // namespace dse::io
