// One fused attention kernel at the shapes FlashAttention's own benchmarks time (Dao 2023,
// arXiv 2307.08691, section 4.1; Shah et al. 2024, arXiv 2407.08608, section 4.1): batch x
// heads of head_dim, seq queries over seq keys, 16-bit, forward or backward, with or without
// the causal mask. The model's fused attention kernel of one transformer layer at that shape
// (a decoder layer when causal, an encoder layer otherwise), launched from a CUDA graph: what
// `dse validate`'s attention cases and the validation tests compare with measured kernels. Pure.
#pragma once

#include <cstdint>

#include "costmodel/platform/evaluate.hpp"

namespace dse::costmodel::platform {

struct AttentionBenchmark {
  bool backward = false;  // the backward kernel (dQ, dK, dV), else the forward
  bool causal = false;
  std::int64_t head_dim = 128;
  std::int64_t seq = 512;
  std::int64_t batch = 32;
  std::int64_t heads = 16;
  AttentionKernel kernel = AttentionKernel::flash2;
};

// The kernel's latency (s); 0 when the graph has no such fused kernel (a platform whose
// stack does not fuse attention).
double attention_benchmark_latency_s(const Platform& p, const AttentionBenchmark& b);

// FLOPs as the benchmarks count them: forward 4 x seq^2 x head_dim x heads x batch, halved
// under the causal mask; backward 2.5 x the forward.
double attention_benchmark_flops(const AttentionBenchmark& b) noexcept;

}  // namespace dse::costmodel::platform
