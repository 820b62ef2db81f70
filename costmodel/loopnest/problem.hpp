// Tensor operators as loop nests (Timeloop's "problem shape"): named loop
// dimensions with sizes, and data spaces (tensors) whose coordinates are affine
// projections of the dimensions, e.g. a conv input column = stride*P + dilation*R.
// Fixed small arrays so that copies are cheap and evaluate() never allocates.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>

namespace dse::costmodel::loopnest {

inline constexpr int kMaxDims = 8;      // loop dimensions of one operator
inline constexpr int kMaxTensors = 4;   // data spaces of one operator
inline constexpr int kMaxRanks = 6;     // coordinates of one tensor
inline constexpr int kMaxTerms = 3;     // dimensions summed into one coordinate

enum class LayerType { attention, ffn, conv, norm, elementwise, embedding, collective };
const char* layer_type_name(LayerType t) noexcept;

// coef * dimension; a tensor coordinate is the sum of its terms.
struct Term {
  std::int8_t dim = 0;
  std::int32_t coef = 1;
};

struct Rank {
  std::array<Term, kMaxTerms> terms{};
  std::int8_t num_terms = 0;
};

struct Tensor {
  std::string name;
  std::array<Rank, kMaxRanks> ranks{};
  std::int8_t num_ranks = 0;
  bool read_write = false;  // the output: read-modify-write partial sums
  bool weights = false;     // a parameter operand (conv Weights, a linear layer's K x N matrix)
  int precision_bits = 8;
};

struct Problem {
  std::string name;
  LayerType type = LayerType::ffn;
  std::array<std::string, kMaxDims> dim_names{};
  std::array<std::int64_t, kMaxDims> dim_sizes{};
  std::int8_t num_dims = 0;
  std::array<Tensor, kMaxTensors> tensors{};
  std::int8_t num_tensors = 0;
  // Work per point of the iteration space: MACs (0 for element-wise operators)
  // and FLOPs (2 per MAC for matrix products; e.g. 1 for an add, ~5 for softmax).
  double macs_per_point = 1.0;
  double flops_per_point = 2.0;

  // Builders used by the factories and the readers.
  int add_dim(const std::string& name, std::int64_t size);
  int add_tensor(const std::string& name, bool read_write = false, int precision_bits = 8);
  // Append a coordinate to tensor t: sum of (coef, dim) terms.
  void add_rank(int t, std::initializer_list<Term> terms);
  [[nodiscard]] int dim_index(const std::string& name) const noexcept;     // -1 when absent
  [[nodiscard]] int tensor_index(const std::string& name) const noexcept;  // -1 when absent
};

// Iteration points (product of the dimension sizes).
std::int64_t points(const Problem& p) noexcept;
double macs(const Problem& p) noexcept;
double flops(const Problem& p) noexcept;
// Distinct elements of tensor t over the whole iteration space (exact for the
// projections built here: each dimension feeds at most one coordinate).
std::int64_t tensor_elements(const Problem& p, int t) noexcept;
double tensor_bytes(const Problem& p, int t) noexcept;

// Why a problem is malformed ("" when it is fine): sizes < 1, a dimension used
// by two coordinates of one tensor, no or several read-write tensors.
std::string validate(const Problem& p);

// Instances. Dimension names follow Timeloop's conventions.
Problem make_gemm(std::int64_t m, std::int64_t n, std::int64_t k, int precision_bits = 8);
Problem make_batched_gemm(std::int64_t b, std::int64_t m, std::int64_t n, std::int64_t k,
                          int precision_bits = 8);
struct Conv2dShape {
  std::int64_t n = 1, c = 1, m = 1, p = 1, q = 1, r = 1, s = 1;  // c, m: channels per group
  std::int64_t groups = 1;
  std::int64_t stride_w = 1, stride_h = 1, dilation_w = 1, dilation_h = 1;
};
Problem make_conv2d(const Conv2dShape& s, int precision_bits = 8);
// Depthwise: groups = channels, one input and one output channel per group.
Problem make_depthwise_conv2d(std::int64_t n, std::int64_t channels, std::int64_t p, std::int64_t q,
                              std::int64_t r, std::int64_t s, std::int64_t stride = 1,
                              int precision_bits = 8);
// Attention scores S[b,h,i,j] = sum_d Q[b,h,i,d] K[b,h,j,d] and output
// O[b,h,i,d] = sum_j A[b,h,i,j] V[b,h,j,d].
Problem make_attention_qk(std::int64_t batch, std::int64_t heads, std::int64_t len_q,
                          std::int64_t len_k, std::int64_t head_dim, int precision_bits = 8);
Problem make_attention_av(std::int64_t batch, std::int64_t heads, std::int64_t len_q,
                          std::int64_t len_k, std::int64_t head_dim, int precision_bits = 8);
// Element-wise over n elements with `inputs` input tensors (1 or 2) and one output.
Problem make_elementwise(std::int64_t rows, std::int64_t cols, int inputs, double flops_per_element,
                         LayerType type = LayerType::elementwise, int precision_bits = 16);
// Row-wise operators that read a [rows, cols] tensor and write it back (softmax,
// layer/RMS normalisation) or reduce it to [rows] (reduction).
Problem make_softmax(std::int64_t rows, std::int64_t cols, int precision_bits = 16);
Problem make_normalization(std::int64_t rows, std::int64_t cols, int precision_bits = 16);
Problem make_reduction(std::int64_t rows, std::int64_t cols, int precision_bits = 16);

}  // namespace dse::costmodel::loopnest
