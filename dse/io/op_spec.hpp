// One operator on a loop-nest hardware, written as `dse map --op` takes it:
// "gemm M=4096 N=4096 K=4096 [bits=16]"; bmm B M N K; conv2d N C H W K R S stride groups
// (input H x W, no padding; C and K all groups' channels, groups dividing both); attention_qk / attention_av B H L D (or Lq Lk).
// Read by `dse map` and by the validation suite's loopnest_network cases.
#pragma once

#include <string>

#include "costmodel/loopnest/problem.hpp"

namespace dse::io {

// `what` names the text in error messages ("--op", or a suite entry's place).
costmodel::loopnest::Problem parse_loopnest_op(const std::string& text, int default_bits, const std::string& what);

}  // namespace dse::io
