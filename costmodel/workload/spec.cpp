// Phases, checks, the explicit-operator builder and the dispatch of build_graph.
#include "costmodel/workload/spec.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <utility>

#include "costmodel/workload/transformer_parts.hpp"

namespace dse::costmodel::workload {

namespace {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

std::string check_phase(const PhaseSpec& ph) {
  if (ph.batch < 1) return "batch must be >= 1";
  if (ph.seq < 1) return "seq must be >= 1";
  if (ph.context < 0) return "context must be >= 0";
  const std::int64_t cp = ph.context_parallel;
  if (cp < 1) return "context parallelism must be >= 1";
  if (cp > 1) {
    if (ph.phase == Phase::decode) return "context parallelism applies to training and prefill, not decode";
    const std::int64_t chunk = ph.context_parallel_comm == ContextParallel::ring ? 2 * cp : cp;
    if (ph.seq % chunk != 0)
      return "seq (" + std::to_string(ph.seq) + ") must be a multiple of " +
             (ph.context_parallel_comm == ContextParallel::ring ? "2 x cp (" : "cp (") + std::to_string(chunk) +
             ") under " + std::string(to_string(ph.context_parallel_comm)) + " context parallelism";
  }
  return "";
}

// The builders count tensor elements in int64 (tokens x width, batch x heads x seq x kv_len,
// hidden x ffn x experts): refuse phases and shapes whose largest such count, bounded here
// in double with a factor 8 of headroom (fused QKV, gated FFN, grads), would pass 2^63.
std::string check_transformer_counts(const TransformerSpec& s, const PhaseSpec& ph) {
  const auto d = [](std::int64_t v) { return static_cast<double>(v); };
  const double kv_len = d(ph.context) + d(ph.seq);
  const double tokens = d(ph.batch) * kv_len;
  const double head_dim = s.head_dim > 0 ? d(s.head_dim) : d(s.hidden) / std::max(1.0, d(s.heads));
  const double width = std::max({d(s.hidden), d(s.ffn_hidden), d(s.vocab), d(s.max_positions),
                                 (d(s.heads) + 2.0 * d(std::max(s.kv_heads, s.heads))) * head_dim,
                                 d(s.heads) * kv_len});
  const double experts = std::max(1.0, d(s.experts));
  const double largest = std::max({tokens * width * experts, d(s.hidden) * d(s.ffn_hidden) * experts,
                                   d(s.vocab) * d(s.hidden)});
  if (!(largest * 8.0 < 9223372036854775807.0)) {
    return "transformer '" + s.name + "': batch x (context + seq) x width passes 2^63 elements (64-bit counts)";
  }
  return "";
}

std::string check_vit(const VitSpec& s) {
  if (s.image_size <= 0 || s.patch <= 0 || s.channels <= 0 || s.classes <= 0) {
    return "vit '" + s.name + "': image_size, patch, channels and classes must be > 0";
  }
  if (s.image_size % s.patch != 0) return "vit '" + s.name + "': image_size must be a multiple of patch";
  if (s.encoder.arch != Arch::encoder) return "vit '" + s.name + "': the transformer must be an encoder";
  return check_transformer(s.encoder);
}

std::string check_resnet(const ResNetSpec& s) {
  if (s.image_size < 32 || s.classes <= 0 || s.base_width <= 0 || s.stage_blocks.empty()) {
    return "resnet '" + s.name + "': image_size >= 32, classes > 0, base_width > 0 and stages needed";
  }
  for (const std::int64_t b : s.stage_blocks) {
    if (b < 1) return "resnet '" + s.name + "': every stage needs at least one block";
  }
  return "";
}

std::string check_explicit(const ExplicitSpec& s) {
  if (s.blocks.empty()) return "workload '" + s.name + "' has no operators";
  return "";
}

}  // namespace

std::string_view to_string(Phase p) noexcept {
  switch (p) {
    case Phase::training: return "training";
    case Phase::prefill: return "prefill";
    case Phase::decode: return "decode";
  }
  return "?";
}

std::optional<Phase> phase_from_string(std::string_view s) noexcept {
  if (s == "training" || s == "train") return Phase::training;
  if (s == "prefill") return Phase::prefill;
  if (s == "decode") return Phase::decode;
  return std::nullopt;
}

std::optional<bool> kv_read_per_query_head_from_string(std::string_view s) noexcept {
  if (s == "per_kv_head") return false;
  if (s == "per_query_head") return true;
  return std::nullopt;
}

std::optional<bool> vocab_parallel_from_string(std::string_view s) noexcept {
  if (s == "parallel") return true;
  if (s == "replicated") return false;
  return std::nullopt;
}

std::optional<LossKernel> loss_kernel_from_string(std::string_view s) noexcept {
  if (s == "softmax") return LossKernel::softmax;
  if (s == "fused") return LossKernel::fused;
  return std::nullopt;
}

std::string_view to_string(LossKernel k) noexcept { return k == LossKernel::fused ? "fused" : "softmax"; }

std::optional<ContextParallel> context_parallel_from_string(std::string_view s) noexcept {
  if (s == "ring") return ContextParallel::ring;
  if (s == "all_to_all") return ContextParallel::all_to_all;
  return std::nullopt;
}

std::string_view to_string(ContextParallel k) noexcept { return k == ContextParallel::ring ? "ring" : "all_to_all"; }

bool apply_recompute(std::string_view s, PhaseSpec& phase) noexcept {
  if (s != "none" && s != "selective" && s != "minimal" && s != "full") return false;
  phase.recompute = s == "full";
  phase.recompute_attention = s == "selective";
  phase.recompute_non_matmul = s == "minimal";
  return true;
}

bool kept_by_dots_policy(const Operator& op) noexcept {
  return op.kind == OpKind::gemm || op.kind == OpKind::conv2d || op.kind == OpKind::all_reduce ||
         op.kind == OpKind::all_to_all;
}

bool is_symbol(std::string_view s) noexcept {
  return s == "batch" || s == "seq" || s == "context" || s == "kv_len" || s == "tokens";
}

std::int64_t evaluate(const SymbolicDim& d, const PhaseSpec& phase) noexcept {
  std::int64_t v = d.coefficient;
  for (const std::string& s : d.symbols) {
    if (s == "batch") v *= phase.batch;
    else if (s == "seq") v *= phase.seq;
    else if (s == "context") v *= phase.context;
    else if (s == "kv_len") v *= phase.context + phase.seq;
    else if (s == "tokens") v *= phase.batch * phase.seq;
  }
  return v;
}

std::string workload_name(const WorkloadSpec& spec) {
  return std::visit([](const auto& s) { return s.name; }, spec);
}

std::string check(const WorkloadSpec& spec, const PhaseSpec& phase) {
  std::string problem = check_phase(phase);
  if (!problem.empty()) return problem;
  const bool decode = phase.phase == Phase::decode;
  return std::visit(Overloaded{
                        [&](const TransformerSpec& s) -> std::string {
                          if (decode && s.arch != Arch::decoder) {
                            return "transformer '" + s.name + "' is an encoder: it has no decode phase";
                          }
                          std::string why = check_transformer(s);
                          if (!why.empty()) return why;
                          const std::int64_t cp = phase.context_parallel;
                          if (cp > 1 && phase.context_parallel_comm == ContextParallel::all_to_all &&
                              ((s.heads / s.tensor_parallel) % cp != 0 || local_kv_heads(s) % cp != 0))
                            return "transformer '" + s.name + "': all_to_all context parallelism needs the heads (" +
                                   std::to_string(s.heads / s.tensor_parallel) + ") and KV heads (" +
                                   std::to_string(local_kv_heads(s)) + ") of a tensor-parallel chip divisible by cp (" +
                                   std::to_string(cp) + ")";
                          // A learned position table has a row per position: no token lies past it.
                          if (s.position == PositionEncoding::learned &&
                              static_cast<double>(phase.context) + static_cast<double>(phase.seq) >
                                  static_cast<double>(s.max_positions)) {
                            return "transformer '" + s.name + "': context + seq (" +
                                   std::to_string(phase.context + phase.seq) +
                                   " tokens) passes its learned position table (max_positions " +
                                   std::to_string(s.max_positions) + ")";
                          }
                          return check_transformer_counts(s, phase);
                        },
                        [&](const VitSpec& s) -> std::string {
                          if (decode) return "vit '" + s.name + "' has no decode phase";
                          if (phase.context_parallel > 1) return "vit '" + s.name + "': context parallelism applies to transformer workloads";
                          return check_vit(s);
                        },
                        [&](const ResNetSpec& s) -> std::string {
                          if (decode) return "resnet '" + s.name + "' has no decode phase";
                          if (phase.context_parallel > 1) return "resnet '" + s.name + "': context parallelism applies to transformer workloads";
                          return check_resnet(s);
                        },
                        [&](const ExplicitSpec& s) {
                          if (phase.context_parallel > 1)
                            return "workload '" + s.name + "': context parallelism applies to transformer workloads";
                          return check_explicit(s);
                        },
                    },
                    spec);
}

OperatorGraph build_explicit(const ExplicitSpec& s, const PhaseSpec& phase) {
  const std::string problem = check(WorkloadSpec{s}, phase);
  if (!problem.empty()) throw std::invalid_argument(problem);
  OperatorGraph g;
  g.name = s.name;
  for (const ExplicitBlock& eb : s.blocks) {
    Block b;
    b.name = eb.name;
    b.repeat = eb.repeat;
    for (const ExplicitOp& e : eb.ops) {
      const Precision p = e.precision.value_or(phase.precision);
      const std::int64_t rows = evaluate(e.rows, phase);
      const std::int64_t cols = evaluate(e.cols, phase);
      Operator op;
      switch (e.kind) {
        case OpKind::gemm:
          if (e.weight) {
            op = make_linear(e.name, e.layer, evaluate(e.m, phase), evaluate(e.n, phase), evaluate(e.k, phase), p,
                             e.bias);
            break;
          }
          [[fallthrough]];
        case OpKind::batched_gemm:
          op = make_batched_gemm(e.name, e.layer, evaluate(e.batch, phase), evaluate(e.m, phase),
                                 evaluate(e.n, phase), evaluate(e.k, phase), p);
          op.kind = e.kind;
          break;
        case OpKind::conv2d: {
          ConvShape c = e.conv;
          c.n = evaluate(e.batch, phase);
          op = make_conv2d(e.name, e.layer, c, p, e.bias);
          break;
        }
        case OpKind::elementwise:
          op = make_elementwise(e.name, e.layer, rows, cols, e.flops_per_element, e.inputs, p);
          break;
        case OpKind::softmax: op = make_softmax(e.name, e.layer, rows, cols, p); break;
        case OpKind::layernorm:
        case OpKind::rmsnorm: op = make_norm(e.name, e.kind, rows, cols, p); break;
        case OpKind::reduction: op = make_reduction(e.name, e.layer, rows, cols, p); break;
        case OpKind::cross_entropy:
          op = make_cross_entropy(e.name, rows, cols, p);
          break;
        case OpKind::embedding: op = make_embedding(e.name, rows, cols, e.table_rows, p); break;
        case OpKind::all_reduce:
        case OpKind::all_to_all: op = make_collective(e.name, e.kind, rows, cols, e.participants, p); break;
      }
      op.layer = e.layer;
      b.nodes.push_back(Node{std::move(op), e.after});
    }
    g.blocks.push_back(std::move(b));
  }
  const std::string invalid = validate(g);
  if (!invalid.empty()) throw std::invalid_argument("workload '" + s.name + "': " + invalid);
  if (phase.phase == Phase::training) append_backward(g, phase);
  return g;
}

OperatorGraph build_graph(const WorkloadSpec& spec, const PhaseSpec& phase) {
  return std::visit(Overloaded{
                        [&](const TransformerSpec& s) { return build_transformer(s, phase); },
                        [&](const VitSpec& s) { return build_vit(s, phase); },
                        [&](const ResNetSpec& s) { return build_resnet(s, phase); },
                        [&](const ExplicitSpec& s) { return build_explicit(s, phase); },
                    },
                    spec);
}

}  // namespace dse::costmodel::workload
