#include "costmodel/system/collectives.hpp"

#include <algorithm>
#include <cmath>

namespace dse::costmodel::system {

std::string_view to_string(Topology t) {
  switch (t) {
    case Topology::ring: return "ring";
    case Topology::torus_2d: return "torus_2d";
    case Topology::torus_3d: return "torus_3d";
    case Topology::switched: return "switch";
  }
  return "unknown";
}

std::string_view to_string(AllReduceKernel k) {
  return k == AllReduceKernel::custom ? "custom" : "library";
}

std::string_view to_string(CollectiveAlgorithm a) {
  switch (a) {
    case CollectiveAlgorithm::ring: return "ring";
    case CollectiveAlgorithm::tree: return "tree";
    case CollectiveAlgorithm::direct: return "direct";
  }
  return "unknown";
}

std::string_view to_string(CollectiveKind k) {
  switch (k) {
    case CollectiveKind::all_reduce: return "all_reduce";
    case CollectiveKind::all_gather: return "all_gather";
    case CollectiveKind::reduce_scatter: return "reduce_scatter";
    case CollectiveKind::all_to_all: return "all_to_all";
  }
  return "unknown";
}

std::string_view to_string(CollectiveStatus s) {
  switch (s) {
    case CollectiveStatus::ok: return "ok";
    case CollectiveStatus::invalid_input: return "invalid_input";
    case CollectiveStatus::needs_power_of_two: return "needs_power_of_two";
  }
  return "unknown";
}

int chip_count(const Interconnect& ic) noexcept {
  const int node = ic.dims[0] * ic.dims[1] * ic.dims[2];
  const bool torus_nodes = ic.scale_out.chips_per_node > 0 && ic.topology != Topology::switched;
  return torus_nodes ? node * ic.scale_out.nodes : node;
}

Interconnect make_ring(int chips, double link_bandwidth_bytes_per_s, double link_latency_s,
                       int links) noexcept {
  return Interconnect{Topology::ring, {chips, 1, 1}, link_bandwidth_bytes_per_s, link_latency_s,
                      links};
}

Interconnect make_switch(int chips, double port_bandwidth_bytes_per_s, double link_latency_s,
                         int ports) noexcept {
  return Interconnect{Topology::switched, {chips, 1, 1}, port_bandwidth_bytes_per_s,
                      link_latency_s, ports};
}

Interconnect make_switch(int chips, const Interconnect& links) noexcept {
  Interconnect s = links;
  s.topology = Topology::switched;
  s.dims = {chips, 1, 1};
  return s;
}

double sustained_bandwidth_bytes_per_s(const Interconnect& ic) noexcept {
  return ic.link_bandwidth_bytes_per_s * ic.links * ic.achievable_fraction;
}

Interconnect make_torus(std::array<int, 3> dims, double link_bandwidth_bytes_per_s,
                        double link_latency_s, int links) noexcept {
  const Topology t = dims[2] > 1 ? Topology::torus_3d : Topology::torus_2d;
  return Interconnect{t, dims, link_bandwidth_bytes_per_s, link_latency_s, links};
}

namespace {

int used_dims(Topology t) noexcept {
  switch (t) {
    case Topology::torus_2d: return 2;
    case Topology::torus_3d: return 3;
    case Topology::ring:
    case Topology::switched: return 1;
  }
  return 1;
}

bool is_power_of_two(int n) noexcept { return n > 0 && (n & (n - 1)) == 0; }

int log2_int(int n) noexcept {
  int l = 0;
  while ((1 << l) < n) ++l;
  return l;
}

// One phase on one ring dimension (or the switch) of n chips with S bytes.
struct Phase {
  double latency_s = 0.0;
  double bandwidth_s = 0.0;
  double link_bytes = 0.0;  // on the busiest link of this dimension
  int steps = 0;
  bool ok = true;
};

enum class Pattern { reduce_scatter_or_gather, all_to_all };

Phase ring_phase(int n, double s, CollectiveAlgorithm algo, Pattern pattern, double alpha,
                 double bw) {
  Phase p;
  if (n <= 1) return p;
  const double nd = n;
  if (pattern == Pattern::all_to_all || algo == CollectiveAlgorithm::direct) {
    p.link_bytes = (nd - 1.0) * s / 2.0;
    p.latency_s = (nd - 1.0) * alpha;
    p.steps = 1;
  } else if (algo == CollectiveAlgorithm::ring) {
    p.link_bytes = (nd - 1.0) / nd * s;
    p.latency_s = (nd - 1.0) * alpha;
    p.steps = n - 1;
  } else {  // tree: recursive halving/doubling, shift form
    if (!is_power_of_two(n)) {
      p.ok = false;
      return p;
    }
    p.link_bytes = nd * s * (1.0 - 1.0 / (nd * nd)) / 3.0;
    p.latency_s = (nd - 1.0) * alpha;
    p.steps = log2_int(n);
  }
  p.bandwidth_s = p.link_bytes / bw;
  return p;
}

Phase switch_phase(int n, double s, CollectiveAlgorithm algo, Pattern pattern, double alpha,
                   double bw) {
  Phase p;
  if (n <= 1) return p;
  const double nd = n;
  p.link_bytes = (nd - 1.0) / nd * s;  // every algorithm moves (n-1)/n S through each port
  if (pattern == Pattern::all_to_all || algo == CollectiveAlgorithm::direct) {
    p.latency_s = alpha;
    p.steps = 1;
  } else if (algo == CollectiveAlgorithm::ring) {
    p.latency_s = (nd - 1.0) * alpha;
    p.steps = n - 1;
  } else {
    if (!is_power_of_two(n)) {
      p.ok = false;
      return p;
    }
    p.steps = log2_int(n);
    p.latency_s = p.steps * alpha;
  }
  p.bandwidth_s = p.link_bytes / bw;
  return p;
}

}  // namespace

Interconnect scale_out_switch(const Interconnect& ic, int chips) noexcept {
  const ScaleOut& so = ic.scale_out;
  Interconnect out = make_switch(chips, so.link_bandwidth_bytes_per_s, so.link_latency_s, so.links);
  out.achievable_fraction = so.achievable_fraction;
  return out;
}

bool subgroup(const Interconnect& ic, int group, Interconnect& out) noexcept {
  if (group < 1 || group > chip_count(ic)) return false;
  if (ic.scale_out.chips_per_node > 0 && group > ic.scale_out.chips_per_node) {
    out = scale_out_switch(ic, group);
    return true;
  }
  out = ic;
  out.scale_out = ScaleOut{};  // a group within one node sees one level: the node's switch
  if (ic.topology == Topology::ring || ic.topology == Topology::switched) {
    out.dims = {group, 1, 1};
    return true;
  }
  int rest = group;
  std::array<int, 3> dims{1, 1, 1};
  for (int d = 0; d < used_dims(ic.topology); ++d) {
    if (rest == 1) break;
    const int take = std::min(rest, ic.dims[d]);
    if (rest % take != 0) return false;
    // A partial dimension must hold the whole remainder (contiguous packing).
    if (take < ic.dims[d] && take != rest) return false;
    dims[d] = take;
    rest /= take;
  }
  if (rest != 1) return false;
  out.dims = dims;
  return true;
}

bool outer_subgroup(const Interconnect& ic, int inner, int group, Interconnect& out) noexcept {
  if (inner < 1 || static_cast<long long>(inner) * group > chip_count(ic)) return false;
  if (ic.scale_out.chips_per_node > 0 && group > 1 &&
      static_cast<long long>(inner) * group > ic.scale_out.chips_per_node) {
    out = scale_out_switch(ic, group);
    return true;
  }
  if (ic.topology == Topology::ring || ic.topology == Topology::switched) return subgroup(ic, group, out);
  const int nd = used_dims(ic.topology);
  int rest = inner;
  int first = 0;
  while (rest > 1 && first < nd) {
    if (rest % ic.dims[first] != 0) return false;
    rest /= ic.dims[first];
    ++first;
  }
  if (rest != 1) return false;
  Interconnect outer = ic;
  outer.dims = {1, 1, 1};
  for (int d = first; d < nd; ++d) outer.dims[d - first] = ic.dims[d];
  return subgroup(outer, group, out);
}

CollectiveCost collective_cost(const Interconnect& ic, CollectiveKind kind,
                               CollectiveAlgorithm algorithm, double bytes) noexcept {
  CollectiveCost c;
  const int nd = used_dims(ic.topology);
  bool dims_ok = true;
  for (int d = 0; d < 3; ++d) {
    if (ic.dims[d] < 1 || (d >= nd && ic.dims[d] != 1)) dims_ok = false;
  }
  if (!dims_ok || !(ic.link_bandwidth_bytes_per_s > 0.0) || !(ic.link_latency_s >= 0.0) ||
      ic.links < 1 || !(ic.achievable_fraction > 0.0) || ic.achievable_fraction > 1.0 || !(bytes >= 0.0) ||
      !std::isfinite(bytes)) {
    c.feasible = false;
    c.status = CollectiveStatus::invalid_input;
    return c;
  }
  const double bw = sustained_bandwidth_bytes_per_s(ic);
  const double alpha = ic.link_latency_s;
  const bool all_to_all = kind == CollectiveKind::all_to_all;
  const Pattern pattern = all_to_all ? Pattern::all_to_all : Pattern::reduce_scatter_or_gather;
  // Passes over the dimensions: reduce-scatter and all-gather one each, all-reduce two
  // (RS then AG), all-to-all one with the full S in every dimension.
  const int passes = kind == CollectiveKind::all_reduce ? 2 : 1;
  std::array<double, 3> link_bytes{0.0, 0.0, 0.0};
  for (int pass = 0; pass < passes; ++pass) {
    double s = bytes;  // S seen by the current dimension
    for (int d = 0; d < nd; ++d) {
      const int n = ic.dims[d];
      const Phase p = ic.topology == Topology::switched
                          ? switch_phase(n, s, algorithm, pattern, alpha, bw)
                          : ring_phase(n, s, algorithm, pattern, alpha, bw);
      if (!p.ok) {
        c = CollectiveCost{};
        c.feasible = false;
        c.status = CollectiveStatus::needs_power_of_two;
        return c;
      }
      c.latency_term_s += p.latency_s;
      c.bandwidth_term_s += p.bandwidth_s;
      c.steps += p.steps;
      link_bytes[d] += p.link_bytes / ic.links;
      // RS shrinks the data by n per dimension; AG (in reverse order) grows it back,
      // which costs the same per dimension, so the same sequence of S serves both.
      if (!all_to_all) s /= n;
    }
  }
  c.time_s = c.latency_term_s + c.bandwidth_term_s;
  c.busiest_link_bytes = *std::max_element(link_bytes.begin(), link_bytes.end());
  return c;
}

CollectiveCost peer_all_reduce_cost(const Interconnect& ic, double bytes) noexcept {
  CollectiveCost c;
  const int n = ic.dims[0];
  const bool world_ok = n == 2 || n == 4 || n == 6 || n == 8;
  if (ic.topology != Topology::switched || ic.scale_out.chips_per_node > 0 || !world_ok || ic.dims[1] != 1 ||
      ic.dims[2] != 1 || !(ic.link_bandwidth_bytes_per_s > 0.0) || !(ic.link_latency_s >= 0.0) || ic.links < 1 ||
      !(ic.achievable_fraction > 0.0) || ic.achievable_fraction > 1.0 || !(bytes >= 0.0) || !std::isfinite(bytes)) {
    c.feasible = false;
    c.status = CollectiveStatus::invalid_input;
    return c;
  }
  const double nd = n;
  const bool one_shot = n == 2 || (n <= 4 && bytes < 512.0 * 1024.0) || (n <= 8 && bytes < 256.0 * 1024.0);
  const double chip_bytes = one_shot ? (nd - 1.0) * bytes : 2.0 * (nd - 1.0) / nd * bytes;
  c.steps = 2;
  c.latency_term_s = 2.0 * ic.link_latency_s;
  c.bandwidth_term_s = chip_bytes / sustained_bandwidth_bytes_per_s(ic);
  c.time_s = c.latency_term_s + c.bandwidth_term_s;
  c.busiest_link_bytes = chip_bytes / ic.links;
  return c;
}

}  // namespace dse::costmodel::system
