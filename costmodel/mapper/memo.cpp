#include "costmodel/mapper/memo.hpp"

#include <cstring>
#include <functional>

namespace dse::costmodel::mapper {

namespace lp = loopnest;

namespace {

template <class T>
void put(std::string& k, const T& v) {
  char buf[sizeof(T)];
  std::memcpy(buf, &v, sizeof(T));
  k.append(buf, sizeof(T));
}

}  // namespace

namespace {


// The problem: dimension sizes, then each tensor's ranks and their terms.
void put_problem(std::string& k, const lp::Problem& p) {
  put(k, p.num_dims);
  for (int d = 0; d < p.num_dims; ++d) put(k, p.dim_sizes[static_cast<std::size_t>(d)]);
  put(k, p.num_tensors);
  put(k, p.macs_per_point);
  for (int t = 0; t < p.num_tensors; ++t) {
    const lp::Tensor& tn = p.tensors[static_cast<std::size_t>(t)];
    put(k, tn.num_ranks);
    put(k, tn.read_write);
    put(k, tn.precision_bits);
    for (int r = 0; r < tn.num_ranks; ++r) {
      const lp::Rank& rk = tn.ranks[static_cast<std::size_t>(r)];
      put(k, rk.num_terms);
      for (int q = 0; q < rk.num_terms; ++q) {
        put(k, rk.terms[static_cast<std::size_t>(q)].dim);
        put(k, rk.terms[static_cast<std::size_t>(q)].coef);
      }
    }
  }
}

// One level's constraints over the problem's dimensions: factors, orders, keeps and bounds.
void put_level_constraint(std::string& k, const LevelConstraint& lc, int num_dims) {
  for (int d = 0; d < num_dims; ++d) {
    put(k, lc.temporal[static_cast<std::size_t>(d)]);
    put(k, lc.spatial[static_cast<std::size_t>(d)]);
  }
  put(k, lc.num_permutation);
  for (int i = 0; i < lc.num_permutation; ++i) put(k, lc.permutation[static_cast<std::size_t>(i)]);
  put(k, lc.spatial_split);
  for (int i = 0; lc.spatial_split >= 0 && i < lc.num_spatial_permutation; ++i) {
    put(k, lc.spatial_permutation[static_cast<std::size_t>(i)]);
  }
  put(k, lc.keep);
  put(k, lc.bypass);
  put(k, lc.double_buffer);
  for (int d = 0; d < num_dims; ++d) {
    const auto du = static_cast<std::size_t>(d);
    put(k, lc.temporal_max[du]);
    put(k, lc.temporal_min[du]);
    put(k, lc.spatial_max[du]);
    put(k, lc.spatial_min[du]);
  }
  put(k, lc.num_outer_permutation);
  for (int i = 0; i < lc.num_outer_permutation; ++i) put(k, lc.outer_permutation[static_cast<std::size_t>(i)]);
}

}  // namespace

// The architecture: every storage level's figures, then the compute mesh and its rates.
void put_architecture(std::string& k, const lp::Architecture& a) {
  const int nl = static_cast<int>(a.levels.size());
  put(k, nl);
  put(k, a.clock_hz);
  for (const lp::StorageLevel& lv : a.levels) {
    put(k, lv.capacity_words);
    put(k, lv.word_bits);
    put(k, lv.block_words);
    put(k, lv.mesh_x);
    put(k, lv.mesh_y);
    put(k, lv.read_bandwidth_words_per_cycle);
    put(k, lv.write_bandwidth_words_per_cycle);
    put(k, lv.read_energy_j);
    put(k, lv.fill_energy_j);
    put(k, lv.update_energy_j);
    put(k, lv.leak_energy_j_per_cycle);
    put(k, lv.power_gated);
    put(k, lv.may_keep);
  }
  put(k, a.compute.mesh_x);
  put(k, a.compute.mesh_y);
  put(k, a.compute.num_rates);
  for (int i = 0; i < a.compute.num_rates && i < 4; ++i) {
    const lp::PrecisionRate& r = a.compute.rates[static_cast<std::size_t>(i)];
    put(k, r.bits);
    put(k, r.macs_per_cycle);
    put(k, r.energy_per_mac_j);
  }
}

std::string canonical_key(const lp::Architecture& a, const lp::Problem& p, const Constraints& c, const MapperOptions& o) {
  std::string k;
  k.reserve(1024);
  put_architecture(k, a);
  put_problem(k, p);
  for (std::size_t l = 0; l < a.levels.size(); ++l) put_level_constraint(k, c.levels[l], p.num_dims);
  put(k, c.min_utilization);
  put(k, c.num_precisions);
  for (int i = 0; i < c.num_precisions && i < 4; ++i) put(k, c.precisions[static_cast<std::size_t>(i)]);
  put(k, c.imperfect);
  put(k, o.objective);
  put(k, o.exhaustive_limit);
  put(k, o.heuristic_evaluations);
  put(k, o.time_budget_ms);
  put(k, o.seed);
  return k;
}

MapResult MapperCache::map(const lp::Architecture& a, const lp::Problem& p, const Constraints& c, const MapperOptions& o,
                           bool* hit) {
  std::string key = canonical_key(a, p, c, o);
  Shard& sh = shards_[std::hash<std::string>{}(key) % kShards];
  {
    const std::lock_guard<std::mutex> lock(sh.mu);
    const auto it = sh.table.find(key);
    if (it != sh.table.end()) {
      hits_.fetch_add(1, std::memory_order_relaxed);
      if (hit != nullptr) *hit = true;
      return it->second;
    }
  }
  misses_.fetch_add(1, std::memory_order_relaxed);
  if (hit != nullptr) *hit = false;
  MapResult r = map_operator(a, p, c, o);
  const std::lock_guard<std::mutex> lock(sh.mu);
  sh.table.emplace(std::move(key), r);
  return r;
}

std::size_t MapperCache::size() const {
  std::size_t n = 0;
  for (const Shard& s : shards_) {
    const std::lock_guard<std::mutex> lock(s.mu);
    n += s.table.size();
  }
  return n;
}

}  // namespace dse::costmodel::mapper
