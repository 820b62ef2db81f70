// Operators of a workload: what one kernel computes, on which tensors, at which
// precision. A descriptor is a plain value: its MACs, FLOPs and bytes follow
// from the shape fields and the tensor list by the conventions written below,
// so a mapper and a report count the same way. Pure: standard library only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dse::costmodel::workload {

// Element precisions. int32 is for index tensors (token ids) only.
enum class Precision { fp32, bf16, fp16, fp8, int8, int4, int32 };
double bytes_per_element(Precision p) noexcept;  // int4: 0.5
std::string_view to_string(Precision p) noexcept;
std::optional<Precision> precision_from_string(std::string_view s) noexcept;

enum class OpKind {
  gemm,           // (m x k) * (k x n), usually against a weight
  batched_gemm,   // batch independent (m x k) * (k x n), e.g. attention scores
  conv2d,         // NCHW convolution, see ConvShape
  elementwise,    // rows * cols elements, flops_per_element each
  softmax,        // rows of cols elements
  layernorm,      // rows normalised over cols
  rmsnorm,        // rows normalised over cols
  reduction,      // rows outputs, each reducing cols inputs
  cross_entropy,  // rows of cols logits, each reduced to its loss (a fused softmax cross-entropy)
  embedding,      // gather of rows (tokens) x cols (hidden) from a table
  all_reduce,     // rows * cols elements summed across `participants` devices
  all_to_all,     // rows * cols elements exchanged among `participants` devices
};
std::string_view to_string(OpKind k) noexcept;
std::optional<OpKind> op_kind_from_string(std::string_view s) noexcept;

enum class LayerType { attention, ffn, conv, norm, elementwise, embedding, collective };
std::string_view to_string(LayerType t) noexcept;
std::optional<LayerType> layer_type_from_string(std::string_view s) noexcept;
LayerType default_layer_type(OpKind k) noexcept;

// Which pass of a training step an operator belongs to.
enum class Pass { forward, backward_data, backward_weight, recompute };
std::string_view to_string(Pass p) noexcept;

// What a tensor is to its operator. Weights and the KV cache are resident;
// inputs and outputs are activations (or gradients, in a backward pass).
enum class TensorRole {
  input,
  output,
  weight,          // parameters, counted once in parameter counts and footprints
  weight_tied,     // read like a weight but stored elsewhere (tied embeddings)
  kv_cache_read,   // keys or values read from the KV cache
  kv_cache_write,  // keys or values appended to the KV cache
  gradient,        // weight gradient written by a backward_weight operator
};
std::string_view to_string(TensorRole r) noexcept;

struct Tensor {
  std::string name;
  TensorRole role = TensorRole::input;
  std::int64_t elements = 0;   // elements the operator touches
  Precision precision = Precision::bf16;
  // Elements stored for a weight when the operator touches only part of it
  // (embedding gathers, MoE experts not routed to); -1: same as `elements`.
  std::int64_t resident_elements = -1;
};
double bytes(const Tensor& t) noexcept;           // elements * bytes per element
double resident_bytes(const Tensor& t) noexcept;  // resident elements * bytes per element
std::int64_t resident_elements(const Tensor& t) noexcept;

struct ConvShape {
  std::int64_t n = 1, c = 1, h = 1, w = 1;  // input batch, channels, height, width
  std::int64_t k = 1, r = 1, s = 1;         // output channels, filter height, width
  std::int64_t stride = 1, pad = 0, groups = 1;
  [[nodiscard]] std::int64_t out_h() const noexcept { return (h + 2 * pad - r) / stride + 1; }
  [[nodiscard]] std::int64_t out_w() const noexcept { return (w + 2 * pad - s) / stride + 1; }
};

// One operator. The shape fields that apply depend on `kind`:
//   gemm / batched_gemm: batch x (m x k) * (k x n)        (batch = 1 for gemm)
//   conv2d:              conv
//   everything else:     rows x cols (see OpKind), flops_per_element for elementwise,
//                        participants for collectives
struct Operator {
  std::string name;
  OpKind kind = OpKind::elementwise;
  LayerType layer = LayerType::elementwise;
  Pass pass = Pass::forward;
  Precision precision = Precision::bf16;  // compute precision
  std::int64_t batch = 1, m = 1, n = 1, k = 1;
  ConvShape conv;
  std::int64_t rows = 1, cols = 1;
  double flops_per_element = 1.0;
  int participants = 1;
  std::vector<Tensor> tensors;
  // Attention under a causal mask (decoder prefill and training: token i attends to
  // tokens 0..i). Counting conventions stay those of the full product; a fused
  // attention kernel skips the blocks wholly above the diagonal (platform/attention_fusion.cpp).
  bool causal = false;
  // Training: the backward pass reads this operator's inputs, so the forward keeps them
  // (an addition's gradient passes through unchanged and a collective's backward is the
  // conjugate collective: they keep nothing; a dropout keeps only its mask, a rule of
  // workload/footprint.cpp).
  bool saves_inputs = true;
  // Under tensor parallelism, the chips of the TP group holding a copy of this operator's
  // (full-width) inputs: a layer's norms and the GEMMs that read them. Sequence
  // parallelism (Korthikanti et al. 2022, section 4.2.2) shards those along the sequence,
  // so each keeps 1/input_replicas of them for the backward pass. 1: sharded or no TP.
  int input_replicas = 1;
};

// Counting conventions (per occurrence of the operator):
//   MACs:  gemm/batched_gemm batch*m*n*k; conv2d n*P*Q*K*(C/groups)*R*S; others 0.
//   FLOPs: 2*MACs for the GEMM-like kinds; elementwise rows*cols*flops_per_element;
//          softmax 5/element (max, subtract, exp, sum, divide); layernorm 7/element
//          (mean, subtract, square, sum, scale by rsqrt, gamma, beta); rmsnorm 4/element
//          (square, sum, scale by rsqrt, gamma); reduction 1/element reduced;
//          cross_entropy 5/element (max, subtract, exp, sum; the log per row);
//          embedding 0 (a gather); all_reduce (p-1)/p adds per element (ring);
//          all_to_all 0. The backward_data pass of softmax, cross_entropy and the norms counts 2x.
//   bytes: sum over the tensor list of elements * bytes per element (every tensor
//          read or written once; caches and fusion are the mapper's business).
double macs(const Operator& op) noexcept;
double flops(const Operator& op) noexcept;
double bytes(const Operator& op) noexcept;
double bytes_of_role(const Operator& op, TensorRole role) noexcept;
bool is_gemm_like(OpKind k) noexcept;  // gemm, batched_gemm, conv2d
bool is_collective(OpKind k) noexcept;

// Factories that fill in the tensor list from the shape.
// A GEMM against a weight: input m x k, weight k x n (+ bias n), output m x n.
Operator make_linear(std::string name, LayerType layer, std::int64_t m, std::int64_t n, std::int64_t k,
                     Precision p, bool bias = false);
// A batched GEMM of two activations: a = batch*m*k, b = batch*k*n, c = batch*m*n.
Operator make_batched_gemm(std::string name, LayerType layer, std::int64_t batch, std::int64_t m,
                           std::int64_t n, std::int64_t k, Precision p);
Operator make_conv2d(std::string name, LayerType layer, const ConvShape& shape, Precision p, bool bias = false);
// inputs input tensors of rows*cols elements each and one output.
Operator make_elementwise(std::string name, LayerType layer, std::int64_t rows, std::int64_t cols,
                          double flops_per_element, int inputs, Precision p);
// An element-wise addition of `inputs` tensors (residual adds): saves_inputs false.
Operator make_add(std::string name, LayerType layer, std::int64_t rows, std::int64_t cols, int inputs, Precision p);
Operator make_softmax(std::string name, LayerType layer, std::int64_t rows, std::int64_t cols, Precision p);
// Dropout (training): element-wise, 2 flops per element (compare with a random
// threshold, scale by 1 / (1 - p)); reads x, writes y and a 1-byte keep mask
// (tensor "mask", int8) that its backward reads instead of x.
Operator make_dropout(std::string name, LayerType layer, std::int64_t rows, std::int64_t cols, Precision p);
bool is_dropout(const Operator& op) noexcept;
// layernorm: gamma and beta of cols; rmsnorm: gamma of cols.
Operator make_norm(std::string name, OpKind kind, std::int64_t rows, std::int64_t cols, Precision p);
Operator make_reduction(std::string name, LayerType layer, std::int64_t rows, std::int64_t cols, Precision p);
// A fused softmax cross-entropy over rows of cols logits: reads the logits, writes one loss
// and one log-sum-exp (fp32) per row.
Operator make_cross_entropy(std::string name, std::int64_t rows, std::int64_t cols, Precision p);
// Gathers rows (tokens) of a table_rows x cols table: ids (int32), touched rows, output.
Operator make_embedding(std::string name, std::int64_t rows, std::int64_t cols, std::int64_t table_rows,
                        Precision p);
Operator make_collective(std::string name, OpKind kind, std::int64_t rows, std::int64_t cols,
                         int participants, Precision p);

}  // namespace dse::costmodel::workload
