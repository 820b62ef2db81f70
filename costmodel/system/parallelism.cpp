#include "costmodel/system/parallelism.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace dse::costmodel::system {

std::string_view to_string(ParallelStatus s) {
  switch (s) {
    case ParallelStatus::ok: return "ok";
    case ParallelStatus::invalid_degrees: return "invalid_degrees";
    case ParallelStatus::too_many_chips: return "too_many_chips";
    case ParallelStatus::expert_groups_do_not_fit: return "expert_groups_do_not_fit";
    case ParallelStatus::group_does_not_map: return "group_does_not_map";
    case ParallelStatus::collective_infeasible: return "collective_infeasible";
    case ParallelStatus::too_few_blocks: return "too_few_blocks";
  }
  return "unknown";
}

double tp_all_reduce_bytes(double tokens, double hidden, double bytes_per_element) noexcept {
  return tokens * hidden * bytes_per_element;
}

double moe_all_to_all_bytes(double tokens, double hidden, int top_k,
                            double bytes_per_element) noexcept {
  return tokens * static_cast<double>(top_k) * hidden * bytes_per_element;
}

double pipeline_bubble_fraction(int stages, int micro_batches) noexcept {
  if (stages < 1 || micro_batches < 1) return 0.0;
  return static_cast<double>(stages - 1) / static_cast<double>(micro_batches + stages - 1);
}

std::vector<int> partition_stages(const std::vector<double>& block_times_s, int stages) {
  const int n = static_cast<int>(block_times_s.size());
  if (stages < 1 || stages > n) return {};
  std::vector<double> prefix(static_cast<std::size_t>(n) + 1, 0.0);
  for (int i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + block_times_s[i];
  const double inf = std::numeric_limits<double>::infinity();
  // best[s][i]: the slowest stage when the first i blocks form s stages; cut[s][i]: where
  // the last of them starts.
  const auto width = static_cast<std::size_t>(n) + 1;
  std::vector<double> best((static_cast<std::size_t>(stages) + 1) * width, inf);
  std::vector<int> cut(best.size(), 0);
  auto at = [width](int s, int i) { return static_cast<std::size_t>(s) * width + i; };
  best[at(0, 0)] = 0.0;
  for (int s = 1; s <= stages; ++s) {
    for (int i = s; i <= n - (stages - s); ++i) {
      for (int j = s - 1; j < i; ++j) {
        const double v = std::max(best[at(s - 1, j)], prefix[i] - prefix[j]);
        if (v < best[at(s, i)]) {
          best[at(s, i)] = v;
          cut[at(s, i)] = j;
        }
      }
    }
  }
  std::vector<int> counts(static_cast<std::size_t>(stages), 0);
  int i = n;
  for (int s = stages; s >= 1; --s) {
    const int j = cut[at(s, i)];
    counts[s - 1] = i - j;
    i = j;
  }
  return counts;
}

namespace {

ParallelStepCost fail(ParallelStatus s) {
  ParallelStepCost c;
  c.feasible = false;
  c.status = s;
  return c;
}

bool in_unit(double f) { return f >= 0.0 && f <= 1.0; }

}  // namespace

double exposed_after_hiding(double stream_s, double fraction, double window_s) noexcept {
  if (!(stream_s > 0.0)) return 0.0;
  const double hidden = std::min(std::clamp(fraction, 0.0, 1.0) * stream_s, std::max(0.0, window_s));
  return stream_s - hidden;
}

namespace {

// The degrees, overlap fractions, micro-batches and virtual stages a step may have on `system`
// (ok, or the first reason it may not, in the order they are checked).
ParallelStatus check_degrees(const Interconnect& system, const ParallelismDegrees& d, const StepWork& work,
                             const OverlapFractions& overlap) {
  if (d.tp < 1 || d.pp < 1 || d.dp < 1 || d.ep < 1 || d.cp < 1 || work.micro_batches < 1 ||
      !in_unit(overlap.tensor) || !in_unit(overlap.expert) || !in_unit(overlap.pipeline) ||
      !in_unit(overlap.data)) {
    return ParallelStatus::invalid_degrees;
  }
  if (d.tp * d.cp * d.pp * d.dp > chip_count(system)) return ParallelStatus::too_many_chips;
  if ((d.tp * d.dp) % d.ep != 0) return ParallelStatus::expert_groups_do_not_fit;
  const int v = work.virtual_stages;
  if (v < 1 || (v > 1 && d.pp == 1)) return ParallelStatus::invalid_degrees;
  if (static_cast<int>(work.blocks.size()) < d.pp * v) return ParallelStatus::too_few_blocks;
  return ParallelStatus::ok;
}

// Where each group's collectives run: the TP, EP, CP and DP (or shard) groups, and the
// all-reduce across the copies of a sharded state (hybrid sharding).
struct GroupLinks {
  Interconnect tp, ep, dp, replica, cp;
  int shard = 1;     // the chips the data-parallel collectives run over (dp x cp, or a shard group)
  int replicas = 1;  // copies of the sharded states ((dp x cp) / shard)
};

// Maps the step's groups onto the system. DP packs innermost where it factors that way
// (optimistic, the rule in parallelism.hpp), else as the outer group beside the tp x pp chips of
// a replica. On a two-level system of switched nodes (a GPU cluster) the ranks go in
// Megatron-LM's order, tensor-parallel innermost and data-parallel next: the DP group is the
// outer group beside each TP group, inside a node only when both fit one. Hybrid sharding: the
// states' collectives run over a shard group of s chips (mapped as the DP group is), and an
// all-reduce over the dp / s replicas of each shard (the outer group beside the chips of a
// sharded replica). The CP group is the outer group beside a TP group (on a single-level
// system, packed innermost where it factors that way, as the DP group).
ParallelStatus map_groups(const Interconnect& system, const ParallelismDegrees& d, const StepWork& work, int dpc,
                          GroupLinks& g) {
  g.shard = work.shard_states ? states_shard_degree(work.shard_group, dpc) : dpc;
  if (g.shard < 1 || g.shard > dpc || dpc % g.shard != 0) return ParallelStatus::invalid_degrees;
  g.replicas = dpc / g.shard;
  const bool node_switch = system.scale_out.chips_per_node > 0 && system.topology == Topology::switched;
  const int replica_chips = node_switch ? d.tp : d.tp * d.pp;  // what a DP group is the outer group beside
  const auto map_dp = [&](int group, Interconnect& out) {
    return node_switch ? outer_subgroup(system, replica_chips, group, out)
                       : subgroup(system, group, out) || outer_subgroup(system, replica_chips, group, out);
  };
  const bool replicas_map =
      g.replicas == 1 || outer_subgroup(system, replica_chips * g.shard, g.replicas, g.replica);
  const bool cp_maps = d.cp == 1 || (node_switch ? outer_subgroup(system, d.tp, d.cp, g.cp)
                                                 : subgroup(system, d.cp, g.cp) ||
                                                       outer_subgroup(system, d.tp, d.cp, g.cp));
  if (!subgroup(system, d.tp, g.tp) || !subgroup(system, d.ep, g.ep) || !map_dp(g.shard, g.dp) || !replicas_map ||
      !cp_maps) {
    return ParallelStatus::group_does_not_map;
  }
  return ParallelStatus::ok;
}

// Per block, per micro-batch: its time (compute plus exposed TP, EP and CP communication), the
// exposed part, and the whole model's TP, EP and CP communication per micro-batch.
struct BlockTimes {
  std::vector<double> block_s, comm_exposed_s;
  double tp_total = 0.0, ep_total = 0.0, cp_total = 0.0;
};

ParallelStatus block_times(const ParallelismDegrees& d, const StepWork& work, const OverlapFractions& overlap,
                           CollectiveAlgorithm algorithm, const GroupLinks& g, BlockTimes& out) {
  const double cp_send_s = d.cp > 1 ? g.cp.link_latency_s : 0.0;
  const double cp_bw = d.cp > 1 ? sustained_bandwidth_bytes_per_s(g.cp) : 0.0;
  const std::size_t nb = work.blocks.size();
  out.block_s.assign(nb, 0.0);
  out.comm_exposed_s.assign(nb, 0.0);
  for (std::size_t b = 0; b < nb; ++b) {
    const BlockWork& w = work.blocks[b];
    double tp_s = 0.0;
    double ep_s = 0.0;
    if (d.tp > 1 && w.activation_bytes > 0.0) {
      const CollectiveCost ar = collective_cost(g.tp, CollectiveKind::all_reduce, algorithm, w.activation_bytes);
      if (!ar.feasible) return ParallelStatus::collective_infeasible;
      tp_s = 2.0 * ar.time_s;
    }
    if (d.ep > 1 && w.expert_all_to_all_bytes > 0.0) {
      const CollectiveCost a2a =
          collective_cost(g.ep, CollectiveKind::all_to_all, algorithm, w.expert_all_to_all_bytes);
      if (!a2a.feasible) return ParallelStatus::collective_infeasible;
      ep_s = 2.0 * a2a.time_s;
    }
    const double cp_s = d.cp > 1 && w.cp_sends > 0.0 && cp_bw > 0.0
                            ? w.cp_sends * (cp_send_s + w.cp_send_bytes / cp_bw)
                            : 0.0;
    out.tp_total += tp_s;
    out.ep_total += ep_s;
    out.cp_total += cp_s;
    // Each kind runs on its own stream beside the block's compute: what is hidden fits under
    // the compute, so the block is never shorter than either stream (exposed_after_hiding).
    out.comm_exposed_s[b] = exposed_after_hiding(tp_s, overlap.tensor, w.compute_s) +
                            exposed_after_hiding(ep_s, overlap.expert, w.compute_s) +
                            exposed_after_hiding(cp_s, 1.0, w.attention_s);
    out.block_s[b] = w.compute_s + out.comm_exposed_s[b];
  }
  return ParallelStatus::ok;
}

// Chunk-to-chunk send over one link (only between chips, so p > 1). On a two-level system whose
// tp x pp chips of a replica outgrow one node, some stage boundaries cross nodes: the send goes
// through the chips' scale-out ports, and the slowest stage, which sets the pipeline's pace, is
// taken to be one that has such a send.
double stage_send_s(const Interconnect& system, const ParallelismDegrees& d, const StepWork& work) {
  if (d.pp <= 1 || !(work.stage_boundary_bytes > 0.0)) return 0.0;
  const bool crosses_nodes =
      system.scale_out.chips_per_node > 0 && d.tp * d.cp * d.pp > system.scale_out.chips_per_node;
  const Interconnect link = crosses_nodes ? scale_out_switch(system, 2) : system;
  return link.link_latency_s + work.stage_boundary_bytes / sustained_bandwidth_bytes_per_s(link);
}

// The pipeline's slowest chip per micro-batch: its time, compute and exposed communication.
struct SlowestStage {
  double time_s = -1.0, compute_s = 0.0, comm_s = 0.0;
};

// The p x v contiguous chunks of blocks (chip s holds chunks s, s + p, ..., s + (v - 1) p) and
// each chip's time per micro-batch; sets c's blocks_per_stage, stage_time_s and stage_imbalance.
SlowestStage pipeline_stages(const StepWork& work, const BlockTimes& bt, double send_s, double pipeline_overlap,
                             int p, int v, ParallelStepCost& c) {
  const std::vector<int> chunk_blocks = partition_stages(bt.block_s, p * v);
  c.blocks_per_stage.assign(static_cast<std::size_t>(p), 0);
  std::vector<double> chip_compute(static_cast<std::size_t>(p), 0.0);
  std::vector<double> chip_comm(static_cast<std::size_t>(p), 0.0);
  std::size_t first = 0;
  for (int k = 0; k < p * v; ++k) {
    const auto chip = static_cast<std::size_t>(k % p);
    const auto count = static_cast<std::size_t>(chunk_blocks[static_cast<std::size_t>(k)]);
    for (std::size_t b = first; b < first + count; ++b) {
      chip_compute[chip] += work.blocks[b].compute_s;
      chip_comm[chip] += bt.comm_exposed_s[b];
    }
    first += count;
    c.blocks_per_stage[chip] += static_cast<int>(count);
    // The last chunk sends nothing on (its output leaves the pipeline). A send hides under the
    // chunk's own compute at most (the next micro-batch's work on this chip).
    if (k + 1 < p * v) {
      double chunk_compute = 0.0;
      for (std::size_t b = first - count; b < first; ++b) chunk_compute += work.blocks[b].compute_s;
      chip_comm[chip] += exposed_after_hiding(send_s, pipeline_overlap, chunk_compute);
    }
  }
  SlowestStage slowest;
  double sum_stages = 0.0;
  for (std::size_t s_ = 0; s_ < static_cast<std::size_t>(p); ++s_) {
    const double t = chip_compute[s_] + chip_comm[s_];
    c.stage_time_s.push_back(t);
    sum_stages += t;
    if (t > slowest.time_s) slowest = {t, chip_compute[s_], chip_comm[s_]};
  }
  const double mean_stage = sum_stages / p;
  c.stage_imbalance = mean_stage > 0.0 ? slowest.time_s / mean_stage : 1.0;
  return slowest;
}

// The data-parallel collectives of a step of m micro-batches: with sharded states two all-gathers
// and a reduce-scatter per micro-batch over the shard group, and an all-reduce of each shard
// across the replicas (replica_s); else one gradient all-reduce per step.
ParallelStatus data_parallel_s(const StepWork& work, const GroupLinks& g, int dpc, CollectiveAlgorithm algorithm,
                               double& dp_s, double& replica_s) {
  const int m = work.micro_batches;
  const double reduce_bytes = work.gradient_reduce_bytes > 0.0 ? work.gradient_reduce_bytes : work.gradient_bytes;
  if (dpc > 1 && work.gradient_bytes > 0.0 && work.shard_states) {
    const CollectiveCost ag = collective_cost(g.dp, CollectiveKind::all_gather, algorithm, work.gradient_bytes);
    const CollectiveCost rs = collective_cost(g.dp, CollectiveKind::reduce_scatter, algorithm, reduce_bytes);
    if (!ag.feasible || !rs.feasible) return ParallelStatus::collective_infeasible;
    dp_s = m * (2.0 * ag.time_s + rs.time_s);
    if (g.replicas > 1) {
      const CollectiveCost ar =
          collective_cost(g.replica, CollectiveKind::all_reduce, algorithm, reduce_bytes / g.shard);
      if (!ar.feasible) return ParallelStatus::collective_infeasible;
      replica_s = m * ar.time_s;
      dp_s += replica_s;
    }
  } else if (dpc > 1 && work.gradient_bytes > 0.0) {
    const CollectiveCost ar = collective_cost(g.dp, CollectiveKind::all_reduce, algorithm, reduce_bytes);
    if (!ar.feasible) return ParallelStatus::collective_infeasible;
    dp_s = ar.time_s;
  }
  return ParallelStatus::ok;
}

// The step's time and its breakdown from the slowest stage, the data-parallel stream and the
// per-step work. The data-parallel stream (the collectives and, under sharded states, the copies
// beside them) hides under the chip's compute stream (its micro-batches' blocks and the copies on
// it) at most, so the step is never shorter than this stream (exposed_after_hiding). Interleaved
// 1F1B (Narayanan et al. 2021): the fill and drain take (p - 1) / v of a chip's per-micro-batch
// time; v = 1 is the plain schedule, (m + p - 1) t.
void step_totals(const StepWork& work, const OverlapFractions& overlap, const SlowestStage& slowest, int dpc,
                 double dp_s, int p, int v, ParallelStepCost& c) {
  const int m = work.micro_batches;
  const double compute_copies_s = work.shard_states && dpc > 1 ? std::max(0.0, work.shard_copies_s) : 0.0;
  const double side_copies_s = work.shard_states && dpc > 1 ? std::max(0.0, work.shard_side_copies_s) : 0.0;
  const double dp_stream_s = dp_s + side_copies_s;
  const double window_s = static_cast<double>(m) * slowest.compute_s + compute_copies_s;
  const double stream_exposed_s = exposed_after_hiding(dp_stream_s, overlap.data, window_s);
  const double side_exposed_s = dp_stream_s > 0.0 ? stream_exposed_s * side_copies_s / dp_stream_s : 0.0;
  const double dp_exposed_s = stream_exposed_s - side_exposed_s;
  c.shard_copies_s = compute_copies_s + side_exposed_s;
  const double fill_drain = static_cast<double>(p - 1) / static_cast<double>(v);
  const double pipeline_s = (static_cast<double>(m) + fill_drain) * slowest.time_s;
  c.optimizer_s = std::max(0.0, work.optimizer_s);
  c.weight_cast_s = std::max(0.0, work.weight_cast_s);
  c.step_time_s = pipeline_s + dp_exposed_s + c.shard_copies_s + c.optimizer_s + c.weight_cast_s;
  c.compute_s = m * slowest.compute_s;
  c.exposed_comm_s = m * slowest.comm_s + dp_exposed_s;
  c.bubble_s = fill_drain * slowest.time_s;
  c.bubble_fraction = pipeline_s > 0.0 ? c.bubble_s / pipeline_s : 0.0;
  c.ideal_bubble_fraction = v == 1 ? pipeline_bubble_fraction(p, m) : fill_drain / (m + fill_drain);
}

}  // namespace

ParallelStepCost evaluate_parallel_step(const Interconnect& system,
                                        const ParallelismDegrees& degrees, const StepWork& work,
                                        const OverlapFractions& overlap,
                                        CollectiveAlgorithm algorithm) {
  const ParallelismDegrees& d = degrees;
  if (const ParallelStatus s = check_degrees(system, d, work, overlap); s != ParallelStatus::ok) return fail(s);
  const int dpc = d.dp * d.cp;  // the data-parallel collectives' chips (ParallelismDegrees::cp)
  GroupLinks links;
  if (const ParallelStatus s = map_groups(system, d, work, dpc, links); s != ParallelStatus::ok) return fail(s);
  BlockTimes bt;
  if (const ParallelStatus s = block_times(d, work, overlap, algorithm, links, bt); s != ParallelStatus::ok)
    return fail(s);

  ParallelStepCost c;
  c.chips = d.tp * d.cp * d.pp * d.dp;
  const int m = work.micro_batches;
  const int p = d.pp;
  const int v = work.virtual_stages;
  const double send_s = stage_send_s(system, d, work);
  const SlowestStage slowest = pipeline_stages(work, bt, send_s, overlap.pipeline, p, v, c);
  double dp_s = 0.0;
  double replica_s = 0.0;
  if (const ParallelStatus s = data_parallel_s(work, links, dpc, algorithm, dp_s, replica_s);
      s != ParallelStatus::ok)
    return fail(s);
  step_totals(work, overlap, slowest, dpc, dp_s, p, v, c);
  // Each chip holds one stage: its share of the whole step's communication.
  c.tp_comm_s = m * bt.tp_total / p;
  c.ep_comm_s = m * bt.ep_total / p;
  c.cp_comm_s = m * bt.cp_total / p;
  c.pp_comm_s = p > 1 ? m * v * send_s : 0.0;
  c.dp_comm_s = dp_s;
  c.dp_replica_comm_s = replica_s;
  c.bottleneck = c.exposed_comm_s > c.compute_s ? Bottleneck::interconnect
                                                : work.compute_bottleneck;
  return c;
}

}  // namespace dse::costmodel::system
