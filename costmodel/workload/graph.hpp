// Operator graphs: a DAG of named operators in topological order. Repeated
// blocks (the layers of a transformer, the bottlenecks of a ResNet stage) are
// stored once with a repeat count; totals multiply by it. Pure.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "costmodel/workload/operator.hpp"

namespace dse::costmodel::workload {

// An operator and the operators it reads from. `inputs` name earlier nodes of
// the same block or nodes of earlier blocks; an empty list means the block's
// input (the output of the previous block). Nodes are in topological order.
struct Node {
  Operator op;
  std::vector<std::string> inputs;
};

struct Block {
  std::string name;
  std::int64_t repeat = 1;  // occurrences of this block, one after another
  // An activation-checkpointing unit (a transformer layer, a ResNet bottleneck):
  // with recomputation, training keeps only its input and reruns its forward.
  bool checkpoint = false;
  std::vector<Node> nodes;
};

struct OperatorGraph {
  std::string name;
  std::vector<Block> blocks;
  // The KV cache resident on one device at the end of the step (bytes), set by
  // the transformer builders for prefill and decode; 0 otherwise.
  double kv_cache_bytes = 0.0;
  // FP8 training (apply_fp8_training): the weight elements of the FP8 GEMMs, which the stack
  // casts to FP8 once per step (each occurrence counted); 0 otherwise.
  double fp8_weight_elements = 0.0;
};

// Sums over all operators, each multiplied by its block's repeat count.
struct GraphTotals {
  double macs = 0.0;
  double flops = 0.0;
  double bytes = 0.0;              // all tensors of all operators
  double weight_bytes_read = 0.0;  // weight and weight_tied tensors as touched
  double kv_cache_read_bytes = 0.0;
  double kv_cache_write_bytes = 0.0;
  double parameters = 0.0;         // resident weight elements of forward operators (not tied)
  double parameter_bytes = 0.0;    // the same in bytes at each tensor's precision
  std::int64_t operators = 0;      // operator occurrences (with repeats)
};

GraphTotals totals(const OperatorGraph& g) noexcept;
GraphTotals totals(const Block& b) noexcept;  // one occurrence of the block
GraphTotals totals_of_pass(const OperatorGraph& g, Pass pass) noexcept;

// "" when the graph is well formed, else the first problem: an empty or
// duplicate operator name, a repeat count below 1, an input that names no
// earlier node, a non-positive dimension.
std::string validate(const OperatorGraph& g);

// The operator with this name and the repeat count of its block.
struct FoundOp {
  const Operator* op = nullptr;
  std::int64_t repeat = 0;
};
FoundOp find_op(const OperatorGraph& g, std::string_view name) noexcept;

// The nodes of a block that read each node (indices, ascending).
std::vector<std::vector<std::size_t>> consumers(const Block& b);

// An attention core of a forward (or recompute) pass: qk = Q K^T (a batched GEMM,
// tensors Q, K, S) -> softmax [-> dropout] -> av = P V (a batched GEMM, tensors P,
// V, O), each node the only consumer of the one before. A FlashAttention kernel runs
// it whole; the score-shaped tensors S and P never reach memory.
struct AttentionCore {
  std::size_t qk = 0;
  std::size_t softmax = 0;
  std::optional<std::size_t> dropout;
  std::size_t av = 0;
};
// The core whose qk is node i of b (cons = consumers(b)), if there is one.
std::optional<AttentionCore> attention_core_at(const Block& b, const std::vector<std::vector<std::size_t>>& cons,
                                               std::size_t i);

}  // namespace dse::costmodel::workload
