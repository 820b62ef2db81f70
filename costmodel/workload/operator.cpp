#include "costmodel/workload/operator.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace dse::costmodel::workload {

namespace {

template <class E, std::size_t N>
std::optional<E> lookup(const std::array<std::pair<std::string_view, E>, N>& table, std::string_view s) {
  for (const auto& [name, value] : table) {
    if (name == s) return value;
  }
  return std::nullopt;
}

template <class E, std::size_t N>
std::string_view name_of(const std::array<std::pair<std::string_view, E>, N>& table, E e) {
  for (const auto& [name, value] : table) {
    if (value == e) return name;
  }
  return "?";
}

constexpr std::array<std::pair<std::string_view, Precision>, 7> precision_names{{
    {"fp32", Precision::fp32},
    {"bf16", Precision::bf16},
    {"fp16", Precision::fp16},
    {"fp8", Precision::fp8},
    {"int8", Precision::int8},
    {"int4", Precision::int4},
    {"int32", Precision::int32},
}};

constexpr std::array<std::pair<std::string_view, OpKind>, 12> kind_names{{
    {"gemm", OpKind::gemm},
    {"batched_gemm", OpKind::batched_gemm},
    {"conv2d", OpKind::conv2d},
    {"elementwise", OpKind::elementwise},
    {"softmax", OpKind::softmax},
    {"layernorm", OpKind::layernorm},
    {"rmsnorm", OpKind::rmsnorm},
    {"reduction", OpKind::reduction},
    {"cross_entropy", OpKind::cross_entropy},
    {"embedding", OpKind::embedding},
    {"all_reduce", OpKind::all_reduce},
    {"all_to_all", OpKind::all_to_all},
}};

constexpr std::array<std::pair<std::string_view, LayerType>, 7> layer_names{{
    {"attention", LayerType::attention},
    {"ffn", LayerType::ffn},
    {"conv", LayerType::conv},
    {"norm", LayerType::norm},
    {"elementwise", LayerType::elementwise},
    {"embedding", LayerType::embedding},
    {"collective", LayerType::collective},
}};

Tensor tensor(std::string name, TensorRole role, std::int64_t elements, Precision p) {
  return Tensor{std::move(name), role, elements, p, -1};
}

// An operator over rows x cols elements (element-wise, softmax, norms, reductions, the loss),
// its tensors left to the caller.
Operator row_operator(std::string name, OpKind kind, LayerType layer, std::int64_t rows, std::int64_t cols,
                      Precision p) {
  Operator op;
  op.name = std::move(name);
  op.kind = kind;
  op.layer = layer;
  op.precision = p;
  op.rows = rows;
  op.cols = cols;
  return op;
}

}  // namespace

double bytes_per_element(Precision p) noexcept {
  switch (p) {
    case Precision::fp32: return 4.0;
    case Precision::bf16: return 2.0;
    case Precision::fp16: return 2.0;
    case Precision::fp8: return 1.0;
    case Precision::int8: return 1.0;
    case Precision::int4: return 0.5;
    case Precision::int32: return 4.0;
  }
  return 0.0;
}

std::string_view to_string(Precision p) noexcept { return name_of(precision_names, p); }
std::optional<Precision> precision_from_string(std::string_view s) noexcept {
  return lookup(precision_names, s);
}
std::string_view to_string(OpKind k) noexcept { return name_of(kind_names, k); }
std::optional<OpKind> op_kind_from_string(std::string_view s) noexcept { return lookup(kind_names, s); }
std::string_view to_string(LayerType t) noexcept { return name_of(layer_names, t); }
std::optional<LayerType> layer_type_from_string(std::string_view s) noexcept {
  return lookup(layer_names, s);
}

std::string_view to_string(Pass p) noexcept {
  switch (p) {
    case Pass::forward: return "forward";
    case Pass::backward_data: return "backward_data";
    case Pass::backward_weight: return "backward_weight";
    case Pass::recompute: return "recompute";
  }
  return "?";
}

std::string_view to_string(TensorRole r) noexcept {
  switch (r) {
    case TensorRole::input: return "input";
    case TensorRole::output: return "output";
    case TensorRole::weight: return "weight";
    case TensorRole::weight_tied: return "weight_tied";
    case TensorRole::kv_cache_read: return "kv_cache_read";
    case TensorRole::kv_cache_write: return "kv_cache_write";
    case TensorRole::gradient: return "gradient";
  }
  return "?";
}

LayerType default_layer_type(OpKind k) noexcept {
  switch (k) {
    case OpKind::gemm: return LayerType::ffn;
    case OpKind::batched_gemm: return LayerType::attention;
    case OpKind::conv2d: return LayerType::conv;
    case OpKind::softmax: return LayerType::attention;
    case OpKind::layernorm:
    case OpKind::rmsnorm: return LayerType::norm;
    case OpKind::embedding: return LayerType::embedding;
    case OpKind::all_reduce:
    case OpKind::all_to_all: return LayerType::collective;
    case OpKind::elementwise:
    case OpKind::reduction:
    case OpKind::cross_entropy:
      return LayerType::elementwise;
  }
  return LayerType::elementwise;
}

std::int64_t resident_elements(const Tensor& t) noexcept {
  return t.resident_elements >= 0 ? t.resident_elements : t.elements;
}
double bytes(const Tensor& t) noexcept { return static_cast<double>(t.elements) * bytes_per_element(t.precision); }
double resident_bytes(const Tensor& t) noexcept {
  return static_cast<double>(resident_elements(t)) * bytes_per_element(t.precision);
}

bool is_gemm_like(OpKind k) noexcept {
  return k == OpKind::gemm || k == OpKind::batched_gemm || k == OpKind::conv2d;
}
bool is_collective(OpKind k) noexcept { return k == OpKind::all_reduce || k == OpKind::all_to_all; }

double macs(const Operator& op) noexcept {
  switch (op.kind) {
    case OpKind::gemm:
    case OpKind::batched_gemm:
      return static_cast<double>(op.batch) * static_cast<double>(op.m) * static_cast<double>(op.n) *
             static_cast<double>(op.k);
    case OpKind::conv2d: {
      const ConvShape& c = op.conv;
      return static_cast<double>(c.n) * static_cast<double>(c.out_h()) * static_cast<double>(c.out_w()) *
             static_cast<double>(c.k) * static_cast<double>(c.c / c.groups) * static_cast<double>(c.r) *
             static_cast<double>(c.s);
    }
    default: return 0.0;
  }
}

double flops(const Operator& op) noexcept {
  const double elements = static_cast<double>(op.rows) * static_cast<double>(op.cols);
  const double backward = op.pass == Pass::backward_data ? 2.0 : 1.0;
  switch (op.kind) {
    case OpKind::gemm:
    case OpKind::batched_gemm:
    case OpKind::conv2d: return 2.0 * macs(op);
    case OpKind::elementwise: return elements * op.flops_per_element;
    case OpKind::softmax: return 5.0 * elements * backward;
    case OpKind::layernorm: return 7.0 * elements * backward;
    case OpKind::rmsnorm: return 4.0 * elements * backward;
    case OpKind::reduction: return elements;
    case OpKind::cross_entropy:
      return 5.0 * elements * backward;
    case OpKind::embedding: return 0.0;
    case OpKind::all_reduce:
      return op.participants > 1
                 ? elements * static_cast<double>(op.participants - 1) / static_cast<double>(op.participants)
                 : 0.0;
    case OpKind::all_to_all: return 0.0;
  }
  return 0.0;
}

double bytes(const Operator& op) noexcept {
  double sum = 0.0;
  for (const Tensor& t : op.tensors) sum += bytes(t);
  return sum;
}

double bytes_of_role(const Operator& op, TensorRole role) noexcept {
  double sum = 0.0;
  for (const Tensor& t : op.tensors) {
    if (t.role == role) sum += bytes(t);
  }
  return sum;
}

Operator make_linear(std::string name, LayerType layer, std::int64_t m, std::int64_t n, std::int64_t k,
                     Precision p, bool bias) {
  Operator op;
  op.name = std::move(name);
  op.kind = OpKind::gemm;
  op.layer = layer;
  op.precision = p;
  op.m = m;
  op.n = n;
  op.k = k;
  op.tensors = {tensor("x", TensorRole::input, m * k, p), tensor("w", TensorRole::weight, k * n, p)};
  if (bias) op.tensors.push_back(tensor("bias", TensorRole::weight, n, p));
  op.tensors.push_back(tensor("y", TensorRole::output, m * n, p));
  return op;
}

Operator make_batched_gemm(std::string name, LayerType layer, std::int64_t batch, std::int64_t m,
                           std::int64_t n, std::int64_t k, Precision p) {
  Operator op;
  op.name = std::move(name);
  op.kind = OpKind::batched_gemm;
  op.layer = layer;
  op.precision = p;
  op.batch = batch;
  op.m = m;
  op.n = n;
  op.k = k;
  op.tensors = {tensor("a", TensorRole::input, batch * m * k, p), tensor("b", TensorRole::input, batch * k * n, p),
                tensor("c", TensorRole::output, batch * m * n, p)};
  return op;
}

Operator make_conv2d(std::string name, LayerType layer, const ConvShape& shape, Precision p, bool bias) {
  Operator op;
  op.name = std::move(name);
  op.kind = OpKind::conv2d;
  op.layer = layer;
  op.precision = p;
  op.conv = shape;
  const ConvShape& c = shape;
  op.tensors = {tensor("x", TensorRole::input, c.n * c.c * c.h * c.w, p),
                tensor("w", TensorRole::weight, c.k * (c.c / c.groups) * c.r * c.s, p)};
  if (bias) op.tensors.push_back(tensor("bias", TensorRole::weight, c.k, p));
  op.tensors.push_back(tensor("y", TensorRole::output, c.n * c.k * c.out_h() * c.out_w(), p));
  return op;
}

Operator make_elementwise(std::string name, LayerType layer, std::int64_t rows, std::int64_t cols,
                          double flops_per_element, int inputs, Precision p) {
  Operator op = row_operator(std::move(name), OpKind::elementwise, layer, rows, cols, p);
  op.flops_per_element = flops_per_element;
  for (int i = 0; i < inputs; ++i) {
    op.tensors.push_back(tensor("x" + std::to_string(i), TensorRole::input, rows * cols, p));
  }
  op.tensors.push_back(tensor("y", TensorRole::output, rows * cols, p));
  return op;
}

Operator make_add(std::string name, LayerType layer, std::int64_t rows, std::int64_t cols, int inputs, Precision p) {
  Operator op = make_elementwise(std::move(name), layer, rows, cols, 1.0, inputs, p);
  op.saves_inputs = false;
  return op;
}

Operator make_dropout(std::string name, LayerType layer, std::int64_t rows, std::int64_t cols, Precision p) {
  Operator op = make_elementwise(std::move(name), layer, rows, cols, 2.0, 1, p);
  op.tensors.push_back(tensor("mask", TensorRole::output, rows * cols, Precision::int8));
  return op;
}

bool is_dropout(const Operator& op) noexcept {
  if (op.kind != OpKind::elementwise) return false;
  for (const Tensor& t : op.tensors)
    if (t.role == TensorRole::output && t.name == "mask") return true;
  return false;
}

Operator make_softmax(std::string name, LayerType layer, std::int64_t rows, std::int64_t cols, Precision p) {
  Operator op = row_operator(std::move(name), OpKind::softmax, layer, rows, cols, p);
  op.tensors = {tensor("x", TensorRole::input, rows * cols, p), tensor("y", TensorRole::output, rows * cols, p)};
  return op;
}

Operator make_norm(std::string name, OpKind kind, std::int64_t rows, std::int64_t cols, Precision p) {
  Operator op = row_operator(std::move(name), kind, LayerType::norm, rows, cols, p);
  op.tensors = {tensor("x", TensorRole::input, rows * cols, p), tensor("gamma", TensorRole::weight, cols, p)};
  if (kind == OpKind::layernorm) op.tensors.push_back(tensor("beta", TensorRole::weight, cols, p));
  op.tensors.push_back(tensor("y", TensorRole::output, rows * cols, p));
  return op;
}

Operator make_reduction(std::string name, LayerType layer, std::int64_t rows, std::int64_t cols, Precision p) {
  Operator op = row_operator(std::move(name), OpKind::reduction, layer, rows, cols, p);
  op.tensors = {tensor("x", TensorRole::input, rows * cols, p), tensor("y", TensorRole::output, rows, p)};
  return op;
}

Operator make_cross_entropy(std::string name, std::int64_t rows, std::int64_t cols, Precision p) {
  Operator op = row_operator(std::move(name), OpKind::cross_entropy, LayerType::elementwise, rows, cols, p);
  op.tensors = {tensor("logits", TensorRole::input, rows * cols, p),
                tensor("loss", TensorRole::output, rows, Precision::fp32),
                tensor("lse", TensorRole::output, rows, Precision::fp32)};
  return op;
}

Operator make_embedding(std::string name, std::int64_t rows, std::int64_t cols, std::int64_t table_rows,
                        Precision p) {
  Operator op;
  op.name = std::move(name);
  op.kind = OpKind::embedding;
  op.layer = LayerType::embedding;
  op.precision = p;
  op.rows = rows;
  op.cols = cols;
  // Distinct rows touched: at most the whole table.
  Tensor table = tensor("table", TensorRole::weight, std::min(rows, table_rows) * cols, p);
  table.resident_elements = table_rows * cols;
  op.tensors = {tensor("ids", TensorRole::input, rows, Precision::int32), std::move(table),
                tensor("y", TensorRole::output, rows * cols, p)};
  return op;
}

Operator make_collective(std::string name, OpKind kind, std::int64_t rows, std::int64_t cols,
                         int participants, Precision p) {
  Operator op;
  op.name = std::move(name);
  op.kind = kind;
  op.layer = LayerType::collective;
  op.precision = p;
  op.rows = rows;
  op.cols = cols;
  op.participants = participants;
  op.tensors = {tensor("x", TensorRole::input, rows * cols, p), tensor("y", TensorRole::output, rows * cols, p)};
  // Its backward is the conjugate collective of the gradient (Megatron-LM's f and g
  // operators, Shoeybi et al. 2019): nothing of the forward is kept.
  op.saves_inputs = false;
  return op;
}

}  // namespace dse::costmodel::workload
