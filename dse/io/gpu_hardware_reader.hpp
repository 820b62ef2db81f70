// Reader for `kind: gpu` hardware files (scenarios/hardware/*.yaml): every
// GPU-class preset (A100, H100, MI210, MI300X, ...) uses this one schema.
//
//   kind: gpu
//   name: STRING
//   cores: INT                      # SMs / CUs
//   max_threads_per_core: INT       # optional: resident threads per SM / CU
//   clock_hz: NUMBER
//   matrix_engine:
//     mma_shape: [M, N, K]          # one MMA instruction
//     macs_per_cycle_per_core: {fp32|tf32|fp16|bf16|fp8|int8: NUMBER, ...}
//     sustained_fraction: NUMBER    # optional, in (0, 1], default 1
//     sustained_fraction_per_precision: {fp8: NUMBER, ...}  # optional, each in (0, 1]:
//                                   # a precision with its own measured ceiling
//     warp_mma_fraction: NUMBER     # optional, in (0, 1], default 1: the share of the matrix rate
//                                   # kernels written for the previous warp-level MMA reach (Hopper's mma.sync)
//   vector:
//     fp32_flops_per_cycle_per_core: NUMBER
//     fp16_flops_per_cycle_per_core: NUMBER
//     special_function_ops_per_cycle_per_core: NUMBER
//   memory:
//     sram_bytes_per_core, l2_bytes, l2_bandwidth_bytes_per_s, hbm_bytes,
//     hbm_peak_bandwidth_bytes_per_s: NUMBER > 0
//     hbm_achievable_fraction: NUMBER in (0, 1]
//     hbm_latency_s: NUMBER >= 0
//     l2_partitions: INT > 0         # optional, default 1 (A100 / H100: 2)
//   software:
//     launch_overhead_library_s: NUMBER >= 0    # cuBLAS / rocBLAS call via the framework
//     launch_overhead_eager_s: NUMBER >= 0      # framework-native eager kernel
//     launch_overhead_compiled_s: NUMBER >= 0   # torch.compile / Triton kernel
//     gemm_pipeline_stages: INT >= 2
//     gemm_pipeline_stages_max: INT >= gemm_pipeline_stages  # optional: stages fill the shared memory
//     gemm_stage_carveout_bytes: NUMBER >= 0    # with _max: shared memory kept for the epilogue
//     gemm_tiles: [[M, N, K], ...]    # or [M, N, K, CORES]: a tile CORES cores compute together
//                                   # (Blackwell's 2-SM MMA; a wave holds cores / CORES such tiles)
//     gemm_tile_k_scales_with_precision: BOOL  # optional, default false: K is for 16-bit operands and
//                                              # FP8 / INT8 kernels take 2 K, FP32 K / 2 (preset_tile)
//     gemm_waves_pipelined: BOOL    # optional, default false: the engine streams a GEMM's tiles (the
//                                   # next tile's loads and this tile's C write overlap its k-steps)
//     eager_softmax_single_pass_max_row_elements: INT > 0
//     eager_softmax_single_pass_max_row_bytes: NUMBER > 0
//     compiled_reduction_single_pass_max_row_elements: INT > 0
//     compiled_reduction_threads_per_block: INT > 0   # optional (Inductor num_warps x 32)
//     gemm_library:                 # optional: the GEMM library's own kernel selection
//       precision: fp16|bf16|...    #   GEMMs of this precision use the table
//       table: FILE.csv             #   a file name in this file's folder (no path)
//
// The table (CSV, '#' lines are comments) has the header line
//   m,n,batch,k,tile_m,tile_n,tile_k,group_m,split_k,solution
// and one row per tuned size: the size, the kernel's tile (m x n x k-step), its
// tile order (group_m >= 1, costmodel::GemmTile), its k split (>= 1) and the
// library's index of the kernel (>= 0). Every value is an integer > 0 except
// solution; a bad row is refused with the table's file:line.
// Unknown keys are refused with file:line:col and a did-you-mean.
#pragma once

#include <string>

#include "costmodel/gpu/gpu.hpp"

namespace dse::io {

// Parse the text of a `kind: gpu` file; `file` names it in messages. Throws ConfigError.
costmodel::GpuHardware parse_gpu_hardware(const std::string& text, const std::string& file);
// Read and parse a file. Throws ConfigError (also for a missing file).
costmodel::GpuHardware load_gpu_hardware(const std::string& path);

}  // namespace dse::io
