// Internals of the GPU-class platform evaluation (evaluate.cpp: the graph walk and the
// epilogue, norm and conv-stage fusions; kernel_lowering.cpp: operators to memoised
// kernels; attention_fusion.cpp: the fused attention kernels, forward and backward).
// Not part of the public API.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "costmodel/platform/evaluate.hpp"

namespace dse::costmodel::platform::detail {

// One evaluated kernel (before fusion).
struct Kernel {
  GpuKernelCost cost;
  bool matrix = false;  // FLOPs on the matrix engine
  bool collective = false;
  std::string kernel;
  Precision precision = Precision::bf16;
};

// Lowers one operator to its kernel (evaluate.hpp's table), memoised in a KernelCache.
class KernelLowering {
 public:
  KernelLowering(const Platform& p, const EvalOptions& o, KernelCache& c) : p_(p), o_(o), cache_(c) {}

  Kernel lower(const workload::Operator& op);
  // A product inside a fused attention kernel: its matrix time on the tile that wastes
  // least (the kernel is built for the head dimension, e.g. FlashAttention-2's
  // per-head-dim instances, so a head-dim-wide operand is not padded to a wider tile),
  // rather than the standalone GEMM's tile, which is chosen for its HBM traffic; at most
  // the standalone kernel's compute time.
  double fused_gemm_compute_s(const GemmShape& s, double standalone_compute_s);

 private:
  using Key = KernelCache::Key;
  // The memoised kernels. A cache key starts with its kernel's, so that equal shapes
  // of different kernels never share an entry; the row kernels (row()) dispatch on it.
  enum class Memo : int {
    gemm,
    elementwise,
    reduction,
    embedding,
    softmax,
    layernorm,
    layernorm_backward,
    cross_entropy,
    cross_entropy_backward,
    fused_gemm
  };

  GpuKernelCost memo(const Key& key, const auto& compute);
  GpuKernelCost implicit_gemm_traffic(const GemmShape& s, double input_elements, GpuKernelCost c) const;
  GpuKernelCost gemm(const GemmShape& s);
  void compulsory_floor(const GemmShape& s, double extra_bytes, GpuKernelCost& c) const;
  GpuKernelCost split_k_gemm(const GemmShape& s) const;
  static double partial_bytes(const GemmShape& s, std::int64_t parts);
  void refresh_rates(const GemmShape& s, GpuKernelCost& c) const;
  GpuKernelCost elementwise(const ElementwiseShape& s, Memo kind);
  GpuKernelCost row(const RowShape& s, Memo kind);
  Kernel collective(const workload::Operator& op);
  void apply_launch_mode(Kernel& k) const;

  const Platform& p_;
  const EvalOptions& o_;
  KernelCache& cache_;
};

double matrix_flop_energy(const ChipEnergy& e, Precision p) noexcept;
// A standalone kernel's layer: its time, traffic, bottleneck and mapping as lowered.
LayerResult layer_of(const Platform& p, const workload::Operator& op, std::int64_t repeat, const Kernel& k);
// A fused kernel (FlashAttention forward or backward): the longer of its compute time
// and its HBM traffic at `bw`, plus one launch overhead; its bottleneck, stall
// fraction and share of `peak` follow (the caller sets r.flops first).
// serial_bytes: memory-bound kernels around the fused one (after it, at HBM bandwidth).
void finish_fused(LayerResult& r, double compute_s, double traffic_bytes, double bw, double overhead_s, double peak,
                  double serial_bytes = 0.0);

// One block's walk in evaluate_graph: its operators' kernels (one per node), the nodes
// already taken by a fused group, what every fusion reads, and the fusions. Each fusion
// starts at node i, marks the nodes it takes in `done` and returns its layer; nullopt
// where node i starts no such group.
struct BlockWalk {
  const Platform& platform;
  const EvalOptions& options;
  KernelLowering& lowering;
  const workload::Block& b;
  const std::vector<std::vector<std::size_t>>& cons;  // workload::consumers(b)
  const std::vector<Kernel>& ks;
  std::vector<bool>& done;
  double bw = 0.0;        // HBM bandwidth, bytes/s
  double overhead = 0.0;  // one kernel launch under the launch mode, s
  // The attention kernel's share of the matrix rate: warp_mma_fraction for kernels written
  // for the previous warp-level MMA (AttentionKernel), else all of it.
  double attention_matrix_share = 1.0;

  // flash_attention (attention_fusion.cpp): the backward chain whose first product
  // (dP = dO V^T) is node i, or the forward qk -> softmax [-> dropout] -> av whose qk is.
  std::optional<LayerResult> fuse_flash_backward(std::size_t i);
  std::optional<LayerResult> fuse_flash_forward(std::size_t i);
  // gemm_epilogue and norm_residual (evaluate.cpp); norm_residual: whether that fusion
  // applies too (it keeps a residual add that a norm reads out of an epilogue).
  std::optional<LayerResult> fuse_gemm_epilogue(std::size_t i, bool norm_residual);
  std::optional<LayerResult> fuse_norm_residual(std::size_t i);

 private:
  // A product inside a fused attention kernel, on its least-waste tile (KernelLowering).
  double fused_matrix_s(std::size_t x) const;
};

}  // namespace dse::costmodel::platform::detail
