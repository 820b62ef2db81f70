// Lowering of workload operators (costmodel/workload) to what a custom chip runs:
// matrix products and convolutions on its array (a loop nest for the mapper, or
// SCALE-Sim's convolution form for a systolic array), everything else on its vector
// unit (element-wise work, softmax, norms, reductions, embedding gathers). Pure.
//
// Conventions, shared by every chip kind:
//  - a convolution runs over its zero-padded input: the input tensor is (H + 2 pad) x
//    (W + 2 pad), the border zeros counted as words read (Timeloop's convolution
//    problem has no padding either: its input is (P - 1) stride + R wide);
//  - a grouped convolution (depthwise included) is one loop nest with a group
//    dimension G (loopnest::make_conv2d), or on a systolic array groups x batch
//    convolutions of C / groups channels and K / groups filters;
//  - a batched matrix product is one loop nest with a batch dimension, or batch
//    products on a systolic array;
//  - collectives have no meaning on one chip: unit_of says unsupported.
#pragma once

#include <cstdint>
#include <string>

#include "costmodel/layer.hpp"
#include "costmodel/loopnest/problem.hpp"
#include "costmodel/systolic/systolic.hpp"
#include "costmodel/workload/graph.hpp"
#include "costmodel/workload/operator.hpp"

namespace dse::costmodel::lowering {

enum class Unit { array, vector, unsupported };
Unit unit_of(const workload::Operator& op) noexcept;

// The loop nest of an array operator (unit_of == array), every operand at `bits` bits.
// Dimension names as loopnest's factories give them (M N K; B M N K; N [G] C M P Q R S).
loopnest::Problem loopnest_problem(const workload::Operator& op, int bits);

// The same operator as `dse map --op` takes it (dse/io/op_spec.hpp), so that one layer of
// a point can be mapped alone and found equal: "conv2d N=1 C=64 H=58 W=58 K=64 R=3 S=3
// stride=1 bits=16" (the padded input), "gemm M= N= K=", "bmm B= M= N= K=".
std::string map_op_text(const workload::Operator& op, int bits);

// An array operator on a systolic array: `count` runs of one convolution (SCALE-Sim's form,
// padded input), e.g. a GEMM M x K x N is gemm_as_conv(M, N, K) once.
struct SystolicLowering {
  ConvLayer layer;
  std::int64_t count = 1;
};
SystolicLowering systolic_lowering(const workload::Operator& op);

// The work of a vector-unit operator: operations (its FLOPs, workload/operator.hpp's
// counting), elements read (inputs, weights, KV cache) and written (outputs, gradients).
struct VectorWork {
  double ops = 0.0;
  double elements_read = 0.0;
  double elements_written = 0.0;
};
VectorWork vector_work(const workload::Operator& op) noexcept;

// A hand-written layer list (costmodel/layer.hpp) at a batch size as an operator graph: each
// gemm layer a GEMM of (rows_per_sample x batch) x n against a k x n weight, each element-wise
// layer elements x batch elements with tensors_touched - 1 inputs (at least one); elements of
// bytes_per_element bytes (1: int8, 4: fp32, else bf16).
workload::OperatorGraph layer_list_graph(const WorkloadSpec& w, std::int64_t batch);

}  // namespace dse::costmodel::lowering
