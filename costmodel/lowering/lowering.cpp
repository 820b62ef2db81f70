#include "costmodel/lowering/lowering.hpp"

#include <algorithm>

namespace dse::costmodel::lowering {

namespace wl = workload;
namespace lp = loopnest;

Unit unit_of(const wl::Operator& op) noexcept {
  if (wl::is_collective(op.kind)) return Unit::unsupported;
  return wl::is_gemm_like(op.kind) ? Unit::array : Unit::vector;
}

namespace {

// The loop-nest shape of a convolution over its padded input. P (output columns) pairs
// with the input width and the filter width, Q with the height, as dse map's conv2d reads
// "W= R=" and "H= S=" (dse/io/op_spec.cpp).
lp::Conv2dShape conv_shape(const wl::ConvShape& c) {
  lp::Conv2dShape s;
  s.n = c.n;
  s.groups = c.groups;
  s.c = c.c / c.groups;
  s.m = c.k / c.groups;
  s.r = c.s;  // filter width, along P
  s.s = c.r;  // filter height, along Q
  s.p = c.out_w();
  s.q = c.out_h();
  s.stride_w = s.stride_h = c.stride;
  return s;
}

}  // namespace

lp::Problem loopnest_problem(const wl::Operator& op, int bits) {
  lp::Problem p;
  switch (op.kind) {
    case wl::OpKind::gemm:
      p = lp::make_gemm(op.batch * op.m, op.n, op.k, bits);
      break;  // a shared weight: rows fold
    case wl::OpKind::batched_gemm:
      p = lp::make_batched_gemm(op.batch, op.m, op.n, op.k, bits);
      break;
    case wl::OpKind::conv2d:
      p = lp::make_conv2d(conv_shape(op.conv), bits);
      break;
    default:
      p = lp::make_gemm(1, 1, 1, bits);
      break;  // not an array operator (unit_of)
  }
  p.name = op.name;
  return p;
}

std::string map_op_text(const wl::Operator& op, int bits) {
  const auto n = [](std::int64_t v) { return std::to_string(v); };
  std::string t;
  if (op.kind == wl::OpKind::conv2d) {
    const wl::ConvShape& c = op.conv;
    t = "conv2d N=" + n(c.n) + " C=" + n(c.c) + " H=" + n(c.h + 2 * c.pad) + " W=" + n(c.w + 2 * c.pad) +
        " K=" + n(c.k) + " R=" + n(c.s) + " S=" + n(c.r) + " stride=" + n(c.stride);
    if (c.groups > 1) t += " groups=" + n(c.groups);
  } else if (op.kind == wl::OpKind::batched_gemm) {
    t = "bmm B=" + n(op.batch) + " M=" + n(op.m) + " N=" + n(op.n) + " K=" + n(op.k);
  } else {
    t = "gemm M=" + n(op.batch * op.m) + " N=" + n(op.n) + " K=" + n(op.k);
  }
  return t + " bits=" + n(bits);
}

SystolicLowering systolic_lowering(const wl::Operator& op) {
  SystolicLowering s;
  if (op.kind == wl::OpKind::conv2d) {
    const wl::ConvShape& c = op.conv;
    s.layer.ifmap_h = c.h + 2 * c.pad;
    s.layer.ifmap_w = c.w + 2 * c.pad;
    s.layer.filter_h = c.r;
    s.layer.filter_w = c.s;
    s.layer.channels = c.c / c.groups;
    s.layer.num_filters = c.k / c.groups;
    s.layer.stride_h = s.layer.stride_w = c.stride;
    s.count = c.n * c.groups;
    return s;
  }
  const bool shared_weight = op.kind == wl::OpKind::gemm;  // a gemm's batch folds into its rows
  s.layer = gemm_as_conv(shared_weight ? op.batch * op.m : op.m, op.n, op.k);
  s.count = shared_weight ? 1 : op.batch;
  return s;
}

VectorWork vector_work(const wl::Operator& op) noexcept {
  VectorWork w;
  w.ops = wl::flops(op);
  for (const wl::Tensor& t : op.tensors) {
    const double e = static_cast<double>(t.elements);
    const bool written = t.role == wl::TensorRole::output || t.role == wl::TensorRole::kv_cache_write ||
                         t.role == wl::TensorRole::gradient;
    (written ? w.elements_written : w.elements_read) += e;
  }
  return w;
}

wl::OperatorGraph layer_list_graph(const WorkloadSpec& w, std::int64_t batch) {
  wl::OperatorGraph g;
  g.name = w.name;
  wl::Block b;
  b.name = "layers";
  for (const LayerSpec& l : w.layers) {
    const wl::Precision p = l.bytes_per_element == 1   ? wl::Precision::int8
                            : l.bytes_per_element == 4 ? wl::Precision::fp32
                                                       : wl::Precision::bf16;
    wl::Operator op = l.kind == LayerKind::gemm
                          ? wl::make_linear(l.name, wl::LayerType::ffn, l.rows_per_sample * batch, l.n, l.k, p)
                          : wl::make_elementwise(l.name, wl::LayerType::elementwise, 1, l.elements_per_sample * batch,
                                                 l.flops_per_element, std::max(1, l.tensors_touched - 1), p);
    b.nodes.push_back(wl::Node{std::move(op), {}});
  }
  g.blocks.push_back(std::move(b));
  return g;
}

}  // namespace dse::costmodel::lowering
