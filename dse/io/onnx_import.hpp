// ONNX import (Debian's libonnx-dev): a model file becomes an OperatorGraph at
// a given batch and sequence length. Symbolic input dimensions are bound by
// name, ONNX shape inference fills in every tensor shape, and each node maps to
// an operator: MatMul and Gemm (gemm against an initializer, else batched_gemm),
// Conv (conv2d), Softmax, LayerNormalization, element-wise and reduction nodes.
// Constant and ConstantOfShape nodes are data (their outputs weights) and give no operator. Any other op type is an
// InputError naming the node and its op type, unless unknown_as_elementwise is
// set: then it counts as element-wise and a warning says so.
// Built only with DSE_WITH_ONNX; otherwise import_onnx throws an InputError.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "costmodel/workload/graph.hpp"

namespace dse::io {

struct OnnxImportOptions {
  std::int64_t batch = 1;
  std::int64_t seq = 1;
  // Values for named symbolic dimensions; they take precedence. Without an entry, a
  // name containing "batch" (or N, B, bs) binds to batch, one containing "seq",
  // "sequence" or "len" to seq; any other name is an error.
  std::map<std::string, std::int64_t> dims;
  bool unknown_as_elementwise = false;
  // Precision for every tensor; default: each tensor's ONNX element type.
  std::optional<costmodel::workload::Precision> precision;
};

struct OnnxImport {
  costmodel::workload::OperatorGraph graph;  // one block "onnx", repeat 1
  std::vector<std::string> warnings;         // one line each, for the caller to print
};

bool onnx_support_built() noexcept;
OnnxImport import_onnx(const std::string& path, const OnnxImportOptions& options);

}  // namespace dse::io
