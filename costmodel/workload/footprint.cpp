#include "costmodel/workload/footprint.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

namespace dse::costmodel::workload {

namespace {

double activation_inputs(const Operator& op) {
  return bytes_of_role(op, TensorRole::input);
}

// What the forward keeps of an operator for the backward pass: its inputs, nothing for an
// addition or a collective (Operator::saves_inputs), a dropout's 1-byte mask (Korthikanti
// et al. 2022, section 4.1: "dropout mask", 1 byte per element).
double saved_for_backward(const Operator& op) {
  if (!op.saves_inputs) return 0.0;
  if (is_dropout(op)) {
    double mask = 0.0;
    for (const Tensor& t : op.tensors)
      if (t.role == TensorRole::output && t.name == "mask") mask += bytes(t);
    return mask;
  }
  return activation_inputs(op);
}

// The chips one copy of an operator's saved inputs is spread over: under sequence
// parallelism, the TP group's input_replicas for the inputs every chip holds whole
// (Operator::input_replicas), else 1.
double saved_input_shards(const Operator& op, const FootprintOptions& options) {
  return options.sequence_parallel && op.input_replicas > 1 ? static_cast<double>(op.input_replicas) : 1.0;
}

// A tensor's bytes when it is an activation (an operator's input or output), else 0.
double activation(const Tensor& t) {
  return t.role == TensorRole::input || t.role == TensorRole::output ? bytes(t) : 0.0;
}

// What PhaseSpec::recompute_non_matmul keeps of a checkpointed block besides its input: the
// outputs of its matrix products without a batch dimension (gemm, conv2d). A product whose
// output only feeds a collective (a row-parallel projection's partial sums) is kept as the
// collective leaves it: under sequence parallelism reduce-scattered, 1/participants per chip.
double dots_policy_saved(const Block& b, const std::vector<std::vector<std::size_t>>& cons,
                         const FootprintOptions& options) {
  double kept = 0.0;
  for (std::size_t i = 0; i < b.nodes.size(); ++i) {
    const Operator& op = b.nodes[i].op;
    if (op.pass != Pass::forward || (op.kind != OpKind::gemm && op.kind != OpKind::conv2d)) continue;
    double shards = 1.0;
    if (options.sequence_parallel && !cons[i].empty()) {
      int p = 0;  // the participants of the all-reduces it feeds; 1 if any consumer is another kind
      for (const std::size_t c : cons[i]) {
        const Operator& next = b.nodes[c].op;
        if (next.kind != OpKind::all_reduce || (p != 0 && next.participants != p)) {
          p = 1;
          break;
        }
        p = next.participants;
      }
      shards = static_cast<double>(std::max(p, 1));
    }
    kept += bytes_of_role(op, TensorRole::output) / shards;
  }
  return kept;
}

}  // namespace

MemoryFootprint memory_footprint(const OperatorGraph& g, const PhaseSpec& phase, const FootprintOptions& options) {
  const bool flash_attention = options.flash_attention;
  MemoryFootprint f;
  const GraphTotals t = totals(g);
  f.weight_bytes = t.parameter_bytes;
  f.kv_cache_bytes = g.kv_cache_bytes;
  const bool training = phase.phase == Phase::training;
  for (const Block& b : g.blocks) {
    // Per node, the bytes it holds: training, the inputs it saves for the backward
    // pass (forward nodes only); inference, its live inputs and outputs.
    std::vector<double> held(b.nodes.size(), 0.0);
    for (std::size_t i = 0; i < b.nodes.size(); ++i) {
      const Operator& op = b.nodes[i].op;
      if (training && op.pass != Pass::forward) continue;
      held[i] = training ? saved_for_backward(op) / saved_input_shards(op, options)
                         : activation_inputs(op) + bytes_of_role(op, TensorRole::output);
    }
    const bool selective = training && phase.recompute_attention && !phase.recompute && b.checkpoint;
    const bool dots_policy = training && phase.recompute_non_matmul && !phase.recompute && b.checkpoint;
    // Who reads each node, for the attention cores and the dots policy's products (only when needed).
    const auto cons =
        flash_attention || selective || dots_policy ? consumers(b) : std::vector<std::vector<std::size_t>>{};
    if (flash_attention || selective) {
      for (std::size_t i = 0; i < b.nodes.size(); ++i) {
        const auto core = attention_core_at(b, cons, i);
        if (!core || b.nodes[i].op.pass != Pass::forward) continue;
        const Operator& qk = b.nodes[core->qk].op;
        const Operator& av = b.nodes[core->av].op;
        held[core->softmax] = 0.0;
        if (core->dropout) held[*core->dropout] = 0.0;
        if (training) {
          if (!av.saves_inputs) continue;  // a context-parallel ring core keeps nothing (transformer.cpp)
          held[core->av] -= bytes(av.tensors.at(0));  // P; V stays
          if (!selective) held[core->qk] += 4.0 * static_cast<double>(qk.batch * qk.m);  // log-sum-exp
        } else {
          // Q, K, V, O; a K or V read from the KV cache is in kv_cache_bytes already.
          held[core->qk] = activation(qk.tensors.at(0)) + activation(qk.tensors.at(1)) +
                           activation(av.tensors.at(1)) + activation(av.tensors.at(2));
          held[core->av] = 0.0;
        }
      }
    }
    if (!training) {
      for (const double h : held) f.activation_bytes = std::max(f.activation_bytes, h);
      continue;
    }
    double saved = 0.0;
    for (const double h : held) saved += h;
    if (saved == 0.0) continue;  // a backward block
    const double repeat = static_cast<double>(b.repeat);
    if ((phase.recompute || dots_policy) && b.checkpoint && !b.nodes.empty()) {
      // The checkpoint keeps the block's input (sharded too under sequence parallelism), and
      // under the dots policy its products' outputs; one occurrence's whole set is live while
      // it reruns.
      const Operator& first = b.nodes.front().op;
      const double kept = dots_policy ? dots_policy_saved(b, cons, options) : 0.0;
      f.activation_bytes += repeat * (activation_inputs(first) / saved_input_shards(first, options) + kept) + saved;
    } else {
      f.activation_bytes += repeat * saved;
    }
  }
  if (training) {
    // FP8 training keeps each FP8 GEMM's weight cast both ways beside its bf16 parameter
    // (Transformer Engine's cached weight workspace: apply_fp8_training, spec.hpp), 2 x 1 B.
    f.weight_bytes += 2.0 * g.fp8_weight_elements;
    f.gradient_bytes = t.parameter_bytes;
    const double master = phase.precision == Precision::fp32 ? 0.0 : 4.0;
    f.optimizer_bytes = t.parameters * (master + 4.0 + 4.0);
  }
  return f;
}

CapacityCheck check_capacity(const MemoryFootprint& f, double capacity_bytes) noexcept {
  CapacityCheck c;
  c.required_bytes = f.total_bytes();
  c.capacity_bytes = capacity_bytes;
  if (c.required_bytes > capacity_bytes) {
    c.feasible = false;
    c.reason = FootprintStatus::exceeds_capacity;
    c.shortfall_bytes = c.required_bytes - capacity_bytes;
  }
  return c;
}

}  // namespace dse::costmodel::workload
