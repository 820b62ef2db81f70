// The backward pass of a training step, derived operator by operator from the
// forward graph, and activation recomputation.
#include <cstddef>
#include <map>
#include <set>
#include <utility>

#include "costmodel/workload/spec.hpp"

namespace dse::costmodel::workload {

namespace {

Tensor t(std::string name, TensorRole role, std::int64_t elements, Precision p) {
  return Tensor{std::move(name), role, elements, p, -1};
}

const Tensor* first_of(const Operator& op, TensorRole role) {
  for (const Tensor& x : op.tensors) {
    if (x.role == role) return &x;
  }
  return nullptr;
}

Operator derived(const Operator& fwd, std::string suffix, Pass pass) {
  Operator op = fwd;
  op.name = fwd.name + std::move(suffix);
  op.pass = pass;
  op.tensors.clear();
  return op;
}

// y = x W (m x k times k x n): dx = dy W^T (m x n times n x k), dW = x^T dy (k x m times m x n).
// For two activations a b = c the same two products give da and db.
void gemm_backward(const Operator& f, std::vector<Operator>& out) {
  const Precision p = f.precision;
  const std::int64_t a_el = f.batch * f.m * f.k;
  const std::int64_t b_el = f.batch * f.k * f.n;
  const std::int64_t c_el = f.batch * f.m * f.n;
  const Tensor* w = first_of(f, TensorRole::weight);
  if (w == nullptr) w = first_of(f, TensorRole::weight_tied);
  const bool has_weight = w != nullptr;

  // An output the graph splits into views (the fused QKV projection's q and new keys and
  // values): the framework assembles dy from the parts' gradients with a copy, PyTorch's
  // split_with_sizes_backward "auto ret = at::cat(grads_all_defined, dim)"
  // (torch/csrc/autograd/FunctionsManual.cpp; derivatives.yaml: split_with_sizes' "self:
  // split_with_sizes_backward(...)"): dy read in parts and written whole.
  int outputs = 0;
  for (const Tensor& x : f.tensors)
    if (x.role == TensorRole::output || x.role == TensorRole::kv_cache_write) ++outputs;
  if (outputs > 1) {
    Operator cat = make_elementwise(f.name + ".bwd_concat", f.layer, f.batch * f.m, f.n, 0.0, 1, p);
    cat.pass = Pass::backward_data;
    cat.tensors = {t("dparts", TensorRole::input, c_el, p), t("dy", TensorRole::output, c_el, p)};
    out.push_back(std::move(cat));
  }

  Operator da = derived(f, has_weight ? ".bwd_data" : ".bwd_a", Pass::backward_data);
  da.n = f.k;
  da.k = f.n;
  da.tensors = {t("dy", TensorRole::input, c_el, p)};
  if (has_weight) {
    Tensor wt = *w;
    wt.resident_elements = -1;
    da.tensors.push_back(std::move(wt));
  } else {
    da.tensors.push_back(t("b", TensorRole::input, b_el, p));
  }
  da.tensors.push_back(t("dx", TensorRole::output, a_el, p));
  out.push_back(std::move(da));

  Operator db = derived(f, has_weight ? ".bwd_weight" : ".bwd_b", has_weight ? Pass::backward_weight
                                                                             : Pass::backward_data);
  db.m = f.k;
  db.n = f.n;
  db.k = f.m;
  db.tensors = {t("x", TensorRole::input, a_el, p), t("dy", TensorRole::input, c_el, p)};
  const Tensor* bias = nullptr;
  if (has_weight) {
    for (const Tensor& x : f.tensors) {
      if (x.role == TensorRole::weight && x.name == "bias") {
        bias = &x;
      } else if (x.role == TensorRole::weight || x.role == TensorRole::weight_tied) {
        db.tensors.push_back(t("d" + x.name, TensorRole::gradient, x.elements, x.precision));
      }
    }
  } else {
    db.tensors.push_back(t("db", TensorRole::output, b_el, p));
  }
  out.push_back(std::move(db));
  // A bias's gradient is dy summed over its rows, a reduction kernel of its own that reads
  // dy again: PyTorch's addmm derivative returns dy whole ("self: maybe_multiply(grad,
  // beta)", tools/autograd/derivatives.yaml) and the autograd engine reduces it to the
  // bias's shape ("grad = at::sum_to(std::move(grad), metadata.shape())", engine.cpp
  // validate_outputs); Megatron-LM's linear layers: "grad_bias = grad_output.sum(dim=0)".
  if (bias != nullptr) {
    Operator r = make_reduction(f.name + ".bwd_bias", f.layer, f.n, f.batch * f.m, p);
    r.pass = Pass::backward_weight;
    r.tensors = {t("dy", TensorRole::input, c_el, p),
                 t("dbias", TensorRole::gradient, bias->elements, bias->precision)};
    out.push_back(std::move(r));
  }
}

// A convolution's input and weight gradients cost one convolution of the same MACs each.
void conv_backward(const Operator& f, std::vector<Operator>& out) {
  const Precision p = f.precision;
  const ConvShape& c = f.conv;
  const std::int64_t x_el = c.n * c.c * c.h * c.w;
  const std::int64_t y_el = c.n * c.k * c.out_h() * c.out_w();
  Operator dx = derived(f, ".bwd_data", Pass::backward_data);
  dx.tensors = {t("dy", TensorRole::input, y_el, p)};
  for (const Tensor& x : f.tensors) {
    if (x.role == TensorRole::weight && x.name == "w") dx.tensors.push_back(x);
  }
  dx.tensors.push_back(t("dx", TensorRole::output, x_el, p));
  out.push_back(std::move(dx));
  Operator dw = derived(f, ".bwd_weight", Pass::backward_weight);
  dw.tensors = {t("x", TensorRole::input, x_el, p), t("dy", TensorRole::input, y_el, p)};
  for (const Tensor& x : f.tensors) {
    if (x.role == TensorRole::weight) dw.tensors.push_back(t("d" + x.name, TensorRole::gradient, x.elements, p));
  }
  out.push_back(std::move(dw));
}

// Element-wise-like operators: the gradient reads what the forward read plus dy
// and writes one gradient per input (and per weight, for norms).
void pointwise_backward(const Operator& f, std::vector<Operator>& out) {
  const Precision p = f.precision;
  const std::int64_t elements = f.rows * f.cols;
  Operator b = derived(f, ".bwd", Pass::backward_data);
  if (is_dropout(f)) {
    // dx = dy x mask / (1 - p): reads dy and the saved 1-byte mask, writes dx.
    b.flops_per_element = 1.0;
    for (const Tensor& x : f.tensors)
      if (x.name == "mask") {
        b.tensors = {t("dy", TensorRole::input, elements, p), t("mask", TensorRole::input, x.elements, x.precision),
                     t("dx", TensorRole::output, elements, p)};
      }
    out.push_back(std::move(b));
    return;
  }
  if (f.kind == OpKind::elementwise && !f.saves_inputs && f.tensors.size() > 2) {
    // An addition of several tensors (a residual add) passes dy to each input unchanged,
    // no kernel; what runs is autograd's accumulation where the residual stream's two
    // gradients meet (the block input feeds the norm and the add): read dy and the other
    // branch's gradient, write their sum.
    b.flops_per_element = 1.0;
    b.tensors = {t("dy", TensorRole::input, elements, p), t("dbranch", TensorRole::input, elements, p),
                 t("dx", TensorRole::output, elements, p)};
    out.push_back(std::move(b));
    return;
  }
  if (f.kind == OpKind::elementwise || f.kind == OpKind::reduction) {
    b.kind = OpKind::elementwise;
    b.flops_per_element = f.kind == OpKind::elementwise ? 2.0 * f.flops_per_element : 1.0;
  }
  b.tensors.push_back(t("dy", TensorRole::input, f.kind == OpKind::reduction ? f.rows : elements, p));
  for (const Tensor& x : f.tensors) {
    if (x.role == TensorRole::input) {
      b.tensors.push_back(x);
      b.tensors.push_back(t("d" + x.name, TensorRole::output, x.elements, x.precision));
    } else if (x.role == TensorRole::weight) {
      b.tensors.push_back(t("d" + x.name, TensorRole::gradient, x.elements, x.precision));
    }
  }
  out.push_back(std::move(b));
}

void op_backward(const Operator& f, std::vector<Operator>& out) {
  switch (f.kind) {
    case OpKind::gemm:
    case OpKind::batched_gemm: gemm_backward(f, out); break;
    case OpKind::conv2d: conv_backward(f, out); break;
    case OpKind::embedding: {
      // Scatter-add of dy into the rows of the table that were gathered.
      Operator b = derived(f, ".bwd_weight", Pass::backward_weight);
      b.kind = OpKind::elementwise;
      b.flops_per_element = 1.0;
      b.tensors = {t("dy", TensorRole::input, f.rows * f.cols, f.precision)};
      for (const Tensor& x : f.tensors) {
        if (x.role == TensorRole::weight) {
          b.tensors.push_back(t("d" + x.name, TensorRole::gradient, x.elements, x.precision));
        }
      }
      out.push_back(std::move(b));
      break;
    }
    case OpKind::cross_entropy: {
      // The fused loss's gradient, softmax(logits) - onehot scaled by the loss's gradient, in
      // one kernel: reads the logits and the row's log-sum-exp, writes the logits' gradient.
      Operator b = derived(f, ".bwd", Pass::backward_data);
      b.tensors = {t("logits", TensorRole::input, f.rows * f.cols, f.precision),
                   t("lse", TensorRole::input, f.rows, Precision::fp32),
                   t("dlogits", TensorRole::output, f.rows * f.cols, f.precision)};
      out.push_back(std::move(b));
      break;
    }
    case OpKind::all_reduce:
    case OpKind::all_to_all: {
      Operator b = f;
      b.name = f.name + ".bwd";
      b.pass = Pass::backward_data;
      out.push_back(std::move(b));
      break;
    }
    default: pointwise_backward(f, out); break;
  }
}

// --- FP8 training (apply_fp8_training, spec.hpp) ---

bool has_role(const Operator& op, TensorRole role) {
  return first_of(op, role) != nullptr;
}

// A GEMM Transformer Engine runs in FP8: against a weight, inside a transformer layer (a
// checkpointed block), not the MoE router (a plain Linear in Megatron-LM).
bool te_fp8_gemm(const Block& b, const Operator& op) {
  return b.checkpoint && op.pass == Pass::forward && (op.kind == OpKind::gemm || op.kind == OpKind::batched_gemm) &&
         op.name != "moe_router" && has_role(op, TensorRole::weight);
}

// An operator whose kernel TE fuses the FP8 quantization of its output into: a norm
// (LayerNormLinear, LayerNormMLP) or an activation of the MLP (LayerNormMLP), an element-wise
// op of 5 FLOPs or more per element (the lowering's special-function rule, evaluate.hpp).
bool writes_quantized(const Operator& op) {
  return op.kind == OpKind::layernorm || op.kind == OpKind::rmsnorm ||
         (op.kind == OpKind::elementwise && op.flops_per_element >= 5.0 && op.saves_inputs);
}

// The forward operator a derived operator comes from ("ffn_up.bwd_data" -> "ffn_up").
std::string forward_name(const std::string& name) {
  for (const char* suffix : {".recompute", ".bwd_data", ".bwd_weight", ".bwd_bias", ".bwd_concat"}) {
    const std::string sfx(suffix);
    if (name.size() > sfx.size() && name.compare(name.size() - sfx.size(), sfx.size(), sfx) == 0)
      return name.substr(0, name.size() - sfx.size());
  }
  return name;
}

// Where an FP8 GEMM needs a kernel of its own to quantize its forward input and its output
// gradient (apply_fp8_training's rules).
struct Fp8Gemm {
  bool forward_cast = true;
  bool backward_cast = true;
};

Operator fp8_cast(std::string name, LayerType layer, Pass pass, std::int64_t rows, std::int64_t cols) {
  // Scale, clamp and convert (amax kept on the fly): about 3 FLOPs per element; reads the bf16
  // tensor once, writes it row-wise and column-wise in FP8.
  Operator c = make_elementwise(std::move(name), layer, rows, cols, 3.0, 1, Precision::bf16);
  c.pass = pass;
  c.saves_inputs = false;
  const std::int64_t n = rows * cols;
  c.tensors = {t("x", TensorRole::input, n, Precision::bf16), t("x_fp8", TensorRole::output, n, Precision::fp8),
               t("x_fp8_t", TensorRole::output, n, Precision::fp8)};
  return c;
}

void to_bf16(Operator& op) {
  if (op.precision == Precision::fp8) op.precision = Precision::bf16;
  for (Tensor& x : op.tensors)
    if (x.precision == Precision::fp8) x.precision = Precision::bf16;
}

// An FP8 GEMM: FP8 operands, bf16 outputs and gradients, its weight the bf16 parameter.
void to_fp8_gemm(Operator& op) {
  op.precision = Precision::fp8;
  for (Tensor& x : op.tensors)
    x.precision = x.role == TensorRole::input ? Precision::fp8 : Precision::bf16;
}

}  // namespace

void apply_fp8_training(OperatorGraph& g) {
  std::map<std::string, Fp8Gemm, std::less<>> gemms;
  for (const Block& b : g.blocks) {
    const auto cons = consumers(b);
    for (std::size_t i = 0; i < b.nodes.size(); ++i) {
      const Operator& op = b.nodes[i].op;
      if (!te_fp8_gemm(b, op)) continue;
      Fp8Gemm f;
      if (!b.nodes[i].inputs.empty())
        for (const Node& n : b.nodes)
          if (n.op.name == b.nodes[i].inputs.front()) f.forward_cast = !writes_quantized(n.op);
      f.backward_cast = !(cons[i].size() == 1 && writes_quantized(b.nodes[cons[i].front()].op) &&
                          b.nodes[cons[i].front()].op.kind == OpKind::elementwise);
      gemms[op.name] = f;
      const Tensor* w = first_of(op, TensorRole::weight);
      g.fp8_weight_elements += static_cast<double>(b.repeat) * static_cast<double>(resident_elements(*w));
    }
  }
  for (Block& b : g.blocks) {
    std::vector<Node> out;
    std::map<std::string, std::string, std::less<>> alias;  // a dropped node -> the node it passes on
    for (Node& n : b.nodes) {
      for (std::string& in : n.inputs)
        if (const auto a = alias.find(in); a != alias.end()) in = a->second;
      Operator& op = n.op;
      const auto it = gemms.find(forward_name(op.name));
      const bool gemm = op.kind == OpKind::gemm || op.kind == OpKind::batched_gemm;
      if (it == gemms.end() || (!gemm && op.kind != OpKind::reduction)) {
        to_bf16(op);
        out.push_back(std::move(n));
        continue;
      }
      if (op.kind == OpKind::reduction) {  // <gemm>.bwd_bias: fused into the gradient's quantization
        alias[op.name] = n.inputs.empty() ? std::string() : n.inputs.front();
        continue;
      }
      const bool forward = op.pass == Pass::forward || op.pass == Pass::recompute;
      const bool data_grad = op.pass == Pass::backward_data && has_role(op, TensorRole::weight);
      if ((forward && it->second.forward_cast) || (data_grad && it->second.backward_cast)) {
        const std::string name = forward ? op.name + ".fp8_cast" : it->first + ".bwd_fp8_cast";
        out.push_back(Node{fp8_cast(name, op.layer, op.pass, op.batch * op.m, op.k), n.inputs});
        n.inputs = {name};
      }
      to_fp8_gemm(op);
      out.push_back(std::move(n));
    }
    b.nodes = std::move(out);
  }
}

void append_backward(OperatorGraph& g, const PhaseSpec& phase) {
  const bool recompute = phase.recompute;
  const bool recompute_attention = phase.recompute_attention;
  const bool recompute_non_matmul = phase.recompute_non_matmul;
  const auto recomputed = [&](const Operator& op) {
    return recompute ||
           (recompute_attention && (op.kind == OpKind::batched_gemm || op.kind == OpKind::softmax ||
                                    (is_dropout(op) && op.layer == LayerType::attention))) ||
           (recompute_non_matmul && !kept_by_dots_policy(op));
  };
  std::vector<Block> backward;
  for (auto it = g.blocks.rbegin(); it != g.blocks.rend(); ++it) {
    const Block& fwd = *it;
    Block b;
    b.name = fwd.name + ".bwd";
    b.repeat = fwd.repeat;
    if ((recompute || recompute_attention || recompute_non_matmul) && fwd.checkpoint) {
      // Under the dots policy only what the backward pass reads reruns (JAX recomputes the
      // residuals it needs): not an operator whose output only leaves the block (a layer's
      // last residual add, the next layer's saved input).
      const bool dots_only = recompute_non_matmul && !recompute;
      const auto cons = dots_only ? consumers(fwd) : std::vector<std::vector<std::size_t>>{};
      std::set<std::string, std::less<>> local;
      for (const Node& n : fwd.nodes)
        if (recomputed(n.op)) local.insert(n.op.name);
      for (std::size_t i = 0; i < fwd.nodes.size(); ++i) {
        const Node& n = fwd.nodes[i];
        if (!recomputed(n.op) || (dots_only && cons[i].empty())) continue;
        Node r{n.op, {}};
        r.op.name += ".recompute";
        r.op.pass = Pass::recompute;
        for (const std::string& in : n.inputs) {
          if (local.count(in) != 0) r.inputs.push_back(in + ".recompute");
        }
        b.nodes.push_back(std::move(r));
      }
    }
    std::vector<Operator> ops;
    for (auto n = fwd.nodes.rbegin(); n != fwd.nodes.rend(); ++n) {
      if (n->op.pass == Pass::forward) op_backward(n->op, ops);
    }
    for (Operator& op : ops) {
      std::vector<std::string> inputs;
      if (!b.nodes.empty()) inputs.push_back(b.nodes.back().op.name);
      b.nodes.push_back(Node{std::move(op), std::move(inputs)});
    }
    if (!b.nodes.empty()) backward.push_back(std::move(b));
  }
  for (Block& b : backward) g.blocks.push_back(std::move(b));
  if (phase.precision == Precision::fp8) apply_fp8_training(g);
}

}  // namespace dse::costmodel::workload
