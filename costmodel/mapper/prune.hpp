// Pruning rules of the mapper's branch and bound, each one provably safe for
// loopnest::evaluate() under ReusePolicy::timeloop (the mapper's policy):
//
// 1. Equivalent loop orders. The order of level l's temporal loops changes only
//    the fills of tensors kept at levels below l (a level's own loops span its
//    tile; the MACs pull `iterations` per instance whatever the order). Let the
//    loops relevant to tensor t be those of dimensions indexing it.
//    - t simple (every coordinate one dimension, positive coefficient):
//      evaluate() gives fills = tile * (product of the factors of the loops down
//      to the innermost relevant loop J above the keeper), i.e. the product of
//      all loops above divided by the loops inside J. When J is at level l the
//      loops inside J are (level l's loops inside J) + (all loops of the levels
//      between, each a full product): only the SET of level l's loops inside
//      its innermost relevant loop matters; when J is elsewhere, only level l's
//      product (order-free) does.
//    - t otherwise (sliding windows, e.g. conv inputs): the general walk. A run
//      of consecutive loops irrelevant to t leaves the tile's offset unchanged;
//      its loops are all skipped (nothing moved yet) or all refetch the whole
//      tile, and those refetches telescope to outer_prod(outermost of the run) *
//      (product of the run - 1): order-free inside the run. So level l's order
//      matters only through its run-compressed form: relevant loops in order,
//      each maximal run of irrelevant loops as a set.
//    Orders of one level with equal signatures over every tensor kept below l
//    give identical NestCosts; one representative (the first) is evaluated.
//    The innermost storage level keeps nothing below it: one order.
// 2. Lower bounds of a partial tiling (levels l..nl-1 decided, r_d iterations of
//    dimension d left for the levels above):
//    - cycles >= iterations / MACs per cycle, with iterations = product of all
//      temporal factors >= (decided temporal product) * ceil(prod_d r_d / F),
//      F = product of the fan-outs of levels above l (their spatial factors
//      cover at most F of the remaining work);
//    - energy >= padded MACs * energy per MAC + the outermost level's
//      compulsory traffic + for every tensor whose innermost keeper k >= max(l,1)
//      is decided: the words that keeper sends to (or, for the output, takes
//      back from) the MACs. Over all instances that is padded points / (the
//      spatial factors below k that do not index the tensor: multicast or
//      reduction) for simple tensors, padded points / (all spatial factors
//      below k) for others; each word costs access energy / block_words at least.
//    A branch whose bound is not below the incumbent holds no better mapping.
// Pure: standard library only.
#pragma once

#include <array>
#include <cstdint>

#include "costmodel/loopnest/mapping.hpp"
#include "costmodel/loopnest/problem.hpp"

namespace dse::costmodel::mapper {

// Per tensor: dimensions that index it (bit d) and whether every coordinate is
// a single dimension with a positive coefficient (evaluate()'s "simple").
struct TensorShape {
  std::uint32_t relevant = 0;
  bool simple = true;
};

inline TensorShape tensor_shape(const loopnest::Tensor& t) noexcept {
  TensorShape s;
  for (int r = 0; r < t.num_ranks; ++r) {
    const loopnest::Rank& rk = t.ranks[static_cast<std::size_t>(r)];
    s.simple = s.simple && rk.num_terms == 1 && rk.terms[0].coef > 0;
    for (int q = 0; q < rk.num_terms; ++q) s.relevant |= 1u << rk.terms[static_cast<std::size_t>(q)].dim;
  }
  return s;
}

// Signature of one level's loop order: tokens per tensor that is kept below the
// level (see rule 1). Equal signatures => equal cost.
struct OrderSignature {
  std::array<std::uint16_t, loopnest::kMaxTensors*(loopnest::kMaxDims + 2)> tokens{};
  bool operator==(const OrderSignature&) const = default;
};

// `order`: dims outermost first (LevelMapping::order); `temporal`: the level's
// factors; `below`: bit t set when tensor t is kept at some level below this one.
inline OrderSignature order_signature(const std::array<std::int8_t, loopnest::kMaxDims>& order,
                                      const std::array<std::int64_t, loopnest::kMaxDims>& temporal, int num_dims,
                                      const std::array<TensorShape, loopnest::kMaxTensors>& shapes, int num_tensors,
                                      std::uint32_t below) noexcept {
  OrderSignature sig;
  std::size_t n = 0;
  for (int t = 0; t < num_tensors; ++t) {
    if (((below >> t) & 1u) == 0) continue;
    const TensorShape& ts = shapes[static_cast<std::size_t>(t)];
    sig.tokens[n++] = static_cast<std::uint16_t>(0x8000u | static_cast<unsigned>(t));  // tensor marker
    if (ts.simple) {
      std::uint32_t inside = 0;  // non-unit loops inside the innermost relevant one
      bool found = false;
      for (int i = num_dims - 1; i >= 0 && !found; --i) {
        const int d = order[static_cast<std::size_t>(i)];
        if (temporal[static_cast<std::size_t>(d)] <= 1) continue;
        if ((ts.relevant >> d) & 1u) found = true;
        else inside |= 1u << d;
      }
      sig.tokens[n++] = static_cast<std::uint16_t>(found ? (0x100u | inside) : 0x200u);
    } else {
      std::uint32_t run = 0;  // current run of irrelevant loops
      for (int i = 0; i < num_dims; ++i) {
        const int d = order[static_cast<std::size_t>(i)];
        if (temporal[static_cast<std::size_t>(d)] <= 1) continue;
        if ((ts.relevant >> d) & 1u) {
          if (run != 0) sig.tokens[n++] = static_cast<std::uint16_t>(0x100u | run);
          run = 0;
          sig.tokens[n++] = static_cast<std::uint16_t>(1u + static_cast<unsigned>(d));
        } else {
          run |= 1u << d;
        }
      }
      if (run != 0) sig.tokens[n++] = static_cast<std::uint16_t>(0x100u | run);
    }
  }
  return sig;
}

}  // namespace dse::costmodel::mapper
