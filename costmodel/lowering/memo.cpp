#include "costmodel/lowering/memo.hpp"

#include <cstring>
#include <functional>

#include "costmodel/mapper/memo.hpp"

namespace dse::costmodel::lowering {

namespace lp = loopnest;
namespace mp = mapper;

namespace {

template <class T>
void put(std::string& k, const T& v) {
  char buf[sizeof(T)];
  std::memcpy(buf, &v, sizeof(T));
  k.append(buf, sizeof(T));
}

constexpr std::size_t sz(int i) noexcept { return static_cast<std::size_t>(i); }

// Every number of the architecture the mapper or the model reads: the mapper's own key of it
// (mapper/memo.hpp), names and the keep-role lists excepted, then the latter, which enter the
// mapper's key through may_keep once bound (a native chip binds them per operator from the roles).
std::string architecture_key(const lp::Architecture& a) {
  std::string k;
  k.reserve(128 + 96 * a.levels.size());
  mp::put_architecture(k, a);
  for (const lp::StorageLevel& lv : a.levels) put(k, lv.keep_roles);
  return k;
}

}  // namespace

std::string loop_nest_text(const lp::Architecture& a, const lp::Problem& p, const lp::Mapping& m) {
  std::string out;
  for (int l = 0; l < m.num_levels && sz(l) < a.levels.size(); ++l) {
    const lp::LevelMapping& lm = m.levels[sz(l)];
    std::string temporal, order, x, y;
    for (int d = 0; d < p.num_dims; ++d) {
      const std::string f = p.dim_names[sz(d)];
      if (lm.temporal[sz(d)] > 1) temporal += (temporal.empty() ? "" : " ") + f + std::to_string(lm.temporal[sz(d)]);
      if (lm.spatial[sz(d)] > 1) {
        std::string& ax = lm.axis[sz(d)] == lp::Axis::x ? x : y;
        ax += (ax.empty() ? "" : " ") + f + std::to_string(lm.spatial[sz(d)]);
      }
    }
    int loops = 0;
    for (int i = 0; i < p.num_dims; ++i) {
      const int d = lm.order[sz(i)];
      if (d >= 0 && d < p.num_dims && lm.temporal[sz(d)] > 1) {
        order += (order.empty() ? "" : " ") + p.dim_names[sz(d)];
        ++loops;
      }
    }
    if (temporal.empty() && x.empty() && y.empty()) continue;
    std::string level = a.levels[sz(l)].name + ":";
    if (!temporal.empty()) level += " " + temporal + (loops > 1 ? " [" + order + "]" : "");
    if (!x.empty()) level += " x: " + x;
    if (!y.empty()) level += " y: " + y;
    out += (out.empty() ? "" : " | ") + level;
  }
  return out.empty() ? "(one iteration)" : out;
}

MappedOperator summarize(const lp::Architecture& a, const lp::Problem& p, const mp::MapResult& r) {
  MappedOperator m;
  m.feasible = r.feasible;
  if (!r.feasible) m.reason = lp::infeasible_name(r.reason);
  const lp::NestCost& c = r.cost;
  m.latency_s = c.latency_s;
  m.energy_j = c.energy_j;
  m.cycles = c.cycles;
  m.compute_cycles = c.compute_cycles;
  m.utilization = c.utilization;
  m.macs = c.macs;
  if (!a.levels.empty()) {
    const lp::LevelCost& top = c.levels[0];
    double words = 0.0;
    for (int t = 0; t < p.num_tensors; ++t) {
      const lp::TensorStats& s = top.tensors[sz(t)];
      words += static_cast<double>(s.reads + s.fills + s.updates);
    }
    m.dram_words = words * static_cast<double>(top.utilized_instances);
    m.dram_bytes = m.dram_words * static_cast<double>(a.levels[0].word_bits) / 8.0;
  }
  m.bottleneck = !r.feasible                   ? Bottleneck::capacity
                 : c.cycles > c.compute_cycles ? Bottleneck::memory
                                               : Bottleneck::compute;
  if (r.feasible) m.loop_nest = loop_nest_text(a, p, r.mapping);
  return m;
}

std::uint32_t OperatorMemo::architecture_id(const lp::Architecture& a) {
  std::string k = architecture_key(a);
  const std::lock_guard<std::mutex> lock(arch_mu_);
  const auto it = arch_ids_.find(k);
  if (it != arch_ids_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(arch_ids_.size());
  arch_ids_.emplace(std::move(k), id);
  return id;
}

std::string OperatorMemo::key(std::uint32_t arch_id, const lp::Problem& p, std::uint64_t constraints_id,
                              const mp::MapperOptions& o) {
  std::string k;
  k.reserve(160);
  put(k, arch_id);
  put(k, constraints_id);
  put(k, p.num_dims);
  for (int d = 0; d < p.num_dims; ++d) put(k, p.dim_sizes[sz(d)]);
  put(k, p.num_tensors);
  put(k, p.macs_per_point);
  put(k, p.flops_per_point);
  for (int t = 0; t < p.num_tensors; ++t) {
    const lp::Tensor& tn = p.tensors[sz(t)];
    put(k, tn.num_ranks);
    put(k, tn.read_write);
    put(k, tn.weights);
    put(k, tn.precision_bits);
    for (int r = 0; r < tn.num_ranks; ++r) {
      const lp::Rank& rk = tn.ranks[sz(r)];
      put(k, rk.num_terms);
      for (int q = 0; q < rk.num_terms; ++q) {
        put(k, rk.terms[sz(q)].dim);
        put(k, rk.terms[sz(q)].coef);
      }
    }
  }
  put(k, o.exhaustive_limit);
  put(k, o.heuristic_evaluations);
  put(k, o.time_budget_ms);
  put(k, o.seed);
  return k;
}

OperatorMemo::Shard& OperatorMemo::shard(const std::string& key) {
  return shards_[std::hash<std::string>{}(key) % kShards];
}

}  // namespace dse::costmodel::lowering
