#include "costmodel/workload/graph.hpp"

#include <set>

namespace dse::costmodel::workload {

namespace {

void add_op(GraphTotals& t, const Operator& op, double repeat) {
  t.macs += repeat * macs(op);
  t.flops += repeat * flops(op);
  t.bytes += repeat * bytes(op);
  t.operators += static_cast<std::int64_t>(repeat);
  for (const Tensor& x : op.tensors) {
    switch (x.role) {
      case TensorRole::weight:
        t.weight_bytes_read += repeat * bytes(x);
        if (op.pass == Pass::forward) {
          t.parameters += repeat * static_cast<double>(resident_elements(x));
          t.parameter_bytes += repeat * resident_bytes(x);
        }
        break;
      case TensorRole::weight_tied: t.weight_bytes_read += repeat * bytes(x); break;
      case TensorRole::kv_cache_read: t.kv_cache_read_bytes += repeat * bytes(x); break;
      case TensorRole::kv_cache_write: t.kv_cache_write_bytes += repeat * bytes(x); break;
      default: break;
    }
  }
}

bool positive_shape(const Operator& op) {
  switch (op.kind) {
    case OpKind::gemm:
    case OpKind::batched_gemm: return op.batch > 0 && op.m > 0 && op.n > 0 && op.k > 0;
    case OpKind::conv2d: {
      const ConvShape& c = op.conv;
      return c.n > 0 && c.c > 0 && c.h > 0 && c.w > 0 && c.k > 0 && c.r > 0 && c.s > 0 && c.stride > 0 &&
             c.pad >= 0 && c.groups > 0 && c.c % c.groups == 0 && c.out_h() > 0 && c.out_w() > 0;
    }
    default: return op.rows > 0 && op.cols > 0;
  }
}

}  // namespace

GraphTotals totals(const Block& b) noexcept {
  GraphTotals t;
  for (const Node& n : b.nodes) add_op(t, n.op, 1.0);
  return t;
}

GraphTotals totals(const OperatorGraph& g) noexcept {
  GraphTotals t;
  for (const Block& b : g.blocks) {
    for (const Node& n : b.nodes) add_op(t, n.op, static_cast<double>(b.repeat));
  }
  return t;
}

GraphTotals totals_of_pass(const OperatorGraph& g, Pass pass) noexcept {
  GraphTotals t;
  for (const Block& b : g.blocks) {
    for (const Node& n : b.nodes) {
      if (n.op.pass == pass) add_op(t, n.op, static_cast<double>(b.repeat));
    }
  }
  return t;
}

std::string validate(const OperatorGraph& g) {
  std::set<std::string, std::less<>> seen;
  for (const Block& b : g.blocks) {
    if (b.repeat < 1) return "block '" + b.name + "' has repeat " + std::to_string(b.repeat) + " (expected >= 1)";
    for (const Node& n : b.nodes) {
      if (n.op.name.empty()) return "block '" + b.name + "' has an operator without a name";
      for (const std::string& in : n.inputs) {
        if (seen.find(in) == seen.end()) {
          return "operator '" + n.op.name + "' reads '" + in + "', which is not an earlier operator";
        }
      }
      if (!seen.insert(n.op.name).second) return "operator name '" + n.op.name + "' is used twice";
      if (!positive_shape(n.op)) return "operator '" + n.op.name + "' has a non-positive dimension";
    }
  }
  return "";
}

FoundOp find_op(const OperatorGraph& g, std::string_view name) noexcept {
  for (const Block& b : g.blocks) {
    for (const Node& n : b.nodes) {
      if (n.op.name == name) return {&n.op, b.repeat};
    }
  }
  return {};
}

std::vector<std::vector<std::size_t>> consumers(const Block& b) {
  std::vector<std::vector<std::size_t>> out(b.nodes.size());
  for (std::size_t i = 0; i < b.nodes.size(); ++i)
    for (const auto& in : b.nodes[i].inputs)
      for (std::size_t j = 0; j < i; ++j)
        if (b.nodes[j].op.name == in) out[j].push_back(i);
  return out;
}

std::optional<AttentionCore> attention_core_at(const Block& b, const std::vector<std::vector<std::size_t>>& cons,
                                               std::size_t i) {
  const std::size_t none = b.nodes.size();
  const auto only = [&](std::size_t x) { return x < none && cons[x].size() == 1 ? cons[x][0] : none; };
  const Operator& qk = b.nodes[i].op;
  if (qk.kind != OpKind::batched_gemm || qk.tensors.size() != 3 ||
      (qk.pass != Pass::forward && qk.pass != Pass::recompute))
    return std::nullopt;
  AttentionCore c;
  c.qk = i;
  c.softmax = only(i);
  if (c.softmax == none || b.nodes[c.softmax].op.kind != OpKind::softmax) return std::nullopt;
  std::size_t after = only(c.softmax);
  if (after < none && is_dropout(b.nodes[after].op) && cons[after].size() == 1) {
    c.dropout = after;
    after = cons[after][0];
  }
  if (after == none || b.nodes[after].op.kind != OpKind::batched_gemm || b.nodes[after].op.tensors.size() != 3)
    return std::nullopt;
  c.av = after;
  return c;
}

}  // namespace dse::costmodel::workload
