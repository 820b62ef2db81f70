// Memory footprint of one step of a phase on one device, at each tensor's
// precision, and whether it fits a capacity. Not fitting is a value (feasible =
// false, reason capacity), not an error. Pure.
#pragma once

#include "costmodel/workload/graph.hpp"
#include "costmodel/workload/spec.hpp"

namespace dse::costmodel::workload {

struct MemoryFootprint {
  double weight_bytes = 0.0;      // resident parameters (tied tables counted once)
  double activation_bytes = 0.0;  // inference: largest live input+output set of one operator;
                                  // training: activations saved for the backward pass
  double kv_cache_bytes = 0.0;    // prefill and decode of decoders
  double gradient_bytes = 0.0;    // training: one gradient per parameter at the weight precision
  double optimizer_bytes = 0.0;   // training, Adam: fp32 master copy (unless weights are fp32)
                                  // and two fp32 moments per parameter
  [[nodiscard]] double total_bytes() const noexcept {
    return weight_bytes + activation_bytes + kv_cache_bytes + gradient_bytes + optimizer_bytes;
  }
};

// Training activations: every forward operator keeps its input tensors for the
// backward pass (per occurrence, times the repeat count), except an addition or a
// collective (nothing) and a dropout (its 1-byte mask): for a GPT layer this is
// Korthikanti et al. 2022's sbh (34 + 5as/h) less the hidden-dropout masks the graph
// does not model (test GptLayerActivationsAreKorthikantisFormula). With recomputation, a
// checkpointed block keeps only the inputs of its first operator per occurrence,
// plus one occurrence's full set while it is being recomputed.
//
// flash_attention: the stack runs each attention core (graph.hpp AttentionCore) as one
// FlashAttention kernel. The score-shaped tensors S and P never reach memory
// (Dao et al. 2022, section 3.1), so inference counts the kernel's live set Q, K,
// V, O instead of the core's members', and training saves Q, K, V (O is the next
// operator's saved input) and the row log-sum-exp, one fp32 per query row and head
// (FlashAttention-2's backward recomputes P from it), instead of S, P and the
// dropout's input. Selective recomputation (PhaseSpec::recompute_attention) of a
// checkpointed block saves no score-shaped tensor either (Korthikanti et al. 2022,
// section 4.2: the recomputed core keeps only Q, K, V), with or without FlashAttention.
//
// sequence_parallel (training): the saved inputs of operators with input_replicas > 1
// (operator.hpp) are kept 1/input_replicas per chip: a GPT layer under tensor parallelism
// t then keeps sbh (34 / t + 5as / (ht)), Korthikanti et al.'s equation 4 (32 / t here:
// no hidden dropouts).
struct FootprintOptions {
  bool flash_attention = false;
  bool sequence_parallel = false;
};
MemoryFootprint memory_footprint(const OperatorGraph& g, const PhaseSpec& phase, const FootprintOptions& options = {});

enum class FootprintStatus { fits, exceeds_capacity };

struct CapacityCheck {
  bool feasible = true;
  FootprintStatus reason = FootprintStatus::fits;
  double required_bytes = 0.0;
  double capacity_bytes = 0.0;
  double shortfall_bytes = 0.0;  // required - capacity when it does not fit, else 0
};

CapacityCheck check_capacity(const MemoryFootprint& f, double capacity_bytes) noexcept;

}  // namespace dse::costmodel::workload
