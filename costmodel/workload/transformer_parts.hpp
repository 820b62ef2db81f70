// Internal to the workload builders: the shared transformer layer stack.
#pragma once

#include <cstdint>
#include <string>

#include "costmodel/workload/graph.hpp"
#include "costmodel/workload/spec.hpp"

namespace dse::costmodel::workload {

// The bound dimensions of one transformer layer stack.
struct LayerDims {
  std::int64_t batch = 1;
  std::int64_t seq = 1;     // new tokens per sequence
  std::int64_t kv_len = 1;  // tokens attended to (context + seq in decode)
  Precision precision = Precision::bf16;
  Precision kv_precision = Precision::bf16;
  bool write_cache = false;  // new keys and values go to the KV cache
  bool read_cache = false;   // attention reads keys and values from the KV cache
  bool kv_read_per_query_head = false;  // PhaseSpec::kv_read_per_query_head (with read_cache)
  bool training = false;     // training step (dropout applies)
  bool causal = false;       // decoder prefill/training: the scores are causally masked
  // Context parallelism (PhaseSpec::context_parallel): seq and kv_len are one chip's share
  // of the sequence (seq / cp); the attention runs as `cp_comm` says.
  std::int64_t cp = 1;
  ContextParallel cp_comm = ContextParallel::ring;
};

std::string check_transformer(const TransformerSpec& s);
std::int64_t local_kv_heads(const TransformerSpec& s) noexcept;
std::int64_t head_dim_of(const TransformerSpec& s) noexcept;
// The element type of the tensor-parallel all-reduces under a GEMM precision p.
// Under an 8-bit precision the row-parallel GEMM quantizes its input only and
// writes its output in the 16-bit model type, which the all-reduce then sums
// (TensorRT-LLM FP8RowLinear.forward: quantize(x, .., 'fp8'), dequantize(..,
// self.dtype), multiply_reduce): bf16; otherwise p.
Precision reduce_precision(Precision p) noexcept;
// The layers of `s` as one block repeated s.layers times.
Block transformer_layers(const TransformerSpec& s, const LayerDims& d, std::string block_name);

}  // namespace dse::costmodel::workload
