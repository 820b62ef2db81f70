#include "dse/io/platform_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <optional>
#include <sstream>

namespace dse::io {

namespace pf = dse::costmodel::platform;

std::string json_string(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      o += '\\';
      o += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      o += buf;
    } else {
      o += c;
    }
  }
  return o + "\"";
}

std::string json_number(double v) {
  if (!std::isfinite(v)) return "null";
  std::ostringstream os;
  os << std::setprecision(17) << v;
  return os.str();
}

namespace {

std::string eng(double v, int prec = 4) {
  std::ostringstream os;
  os << std::setprecision(prec) << v;
  return os.str();
}

void stats_json(std::ostream& os, const costmodel::system::LatencyStats& s) {
  os << "{\"mean_s\": " << json_number(s.mean_s) << ", \"p50_s\": " << json_number(s.p50_s)
     << ", \"p90_s\": " << json_number(s.p90_s) << ", \"p95_s\": " << json_number(s.p95_s)
     << ", \"p99_s\": " << json_number(s.p99_s) << "}";
}

// The SLA bounds a search ran with, as "ttft_p99 <= 2000 ms, tpot_p99 <= 200 ms" (text) or
// "ttft_p99+tpot_p99" (the JSON metric).
std::string sla_text(const costmodel::system::SlaBounds& b, bool json) {
  std::string out;
  auto add = [&](const char* name, const std::optional<double>& v) {
    if (!v) return;
    out += (out.empty() ? "" : json ? "+" : ", ") + std::string(name) + (json ? "" : " <= " + eng(*v * 1e3) + " ms");
  };
  add("ttft_p99", b.ttft_p99_s);
  add("tpot_p99", b.tpot_p99_s);
  add("e2e_p99", b.e2e_p99_s);
  return out;
}

void print_power_text(const pf::SystemEval& e, std::ostream& os) {
  os << "power at the wall " << eng(e.wall.wall_w) << " W (accelerators " << eng(e.wall.accelerators_w) << " W"
     << (e.wall.idle_chips_w > 0 ? ", idle chips " + eng(e.wall.idle_chips_w) + " W" : std::string())
     << (e.wall.host_w > 0 ? ", host " + eng(e.wall.host_w) + " W of which fans " + eng(e.wall.fans_w) + " W"
                           : std::string())
     << (e.wall.psu_loss_w > 0 ? ", power-supply losses " + eng(e.wall.psu_loss_w) + " W" : std::string()) << ")"
     << (e.power.throttled ? "; accelerators throttled to " + eng(100 * e.power.throttle_factor, 3) +
                                 " % of the nominal clock by the TDP (" + eng(e.unthrottled_step_latency_s * 1e3) +
                                 " ms per step unthrottled, " + eng(e.power.unthrottled_power_per_chip_w) +
                                 " W per chip)"
                           : std::string())
     << "\nenergy/token " << eng(e.wall_energy_per_token_j) << " J at the wall (" << eng(e.power.energy_per_token_j)
     << " J accelerators), perf/W " << eng(e.wall.wall_w > 0 ? e.tokens_per_s / e.wall.wall_w : 0.0)
     << " tokens/J, risk " << eng(e.risk.score, 3) << '\n';
  if (e.cost.capital_usd > 0.0)
    os << "cost: system " << eng(e.cost.capital_usd) << " USD, " << eng(e.cost.per_hour_usd) << " USD/h at this power, "
       << eng(e.tokens_per_s / e.cost.capital_usd) << " tokens/s per USD, "
       << eng(costmodel::system::usd_per_million(e.cost.per_hour_usd, e.tokens_per_s))
       << " USD per million tokens of this step (docs/hardware-guide.md, \"Area and cost\")\n";
}

void print_serving_text(const pf::SystemEval& e, std::ostream& os) {
  const auto& sv = e.serving;
  // A batch fits when its weights, activations and KV cache of prompt + output tokens fit in
  // memory (max_batch_fitting); the simulation and the SLA search admit at most max_batch.
  os << "\nserving sweep (batch, TTFT ms, TPOT ms, tokens/s system, fits memory); stack " << sv.stack.name;
  if (sv.stack.step_s > 0 || sv.stack.per_sequence_s > 0)
    os << " (" << eng(sv.stack.step_s * 1e3) << " ms + " << eng(sv.stack.per_sequence_s * 1e3)
       << " ms per sequence each iteration)";
  os << '\n';
  for (const auto& p : sv.sweep)
    os << "  " << std::right << std::setw(5) << p.batch << std::setw(12) << eng(p.ttft_s * 1e3) << std::setw(12)
       << eng(p.tpot_s * 1e3) << std::setw(14) << eng(p.tokens_per_s_system)
       << (p.batch <= sv.max_batch_fitting ? "  yes" : "  no") << '\n';
  if (sv.max_batch_fitting < 1)
    os << "no batch fits in memory: one sequence of prompt + output tokens already does not"
       << (sv.at_rate || sv.sla ? " (the simulation runs batch 1)" : "") << '\n';
  if (sv.at_rate) {
    const auto& r = *sv.at_rate;
    os << "at rate (at most " << sv.max_batch << " requests in flight per replica): TTFT p50/p90/p99 "
       << eng(r.ttft.p50_s * 1e3) << " / " << eng(r.ttft.p90_s * 1e3) << " / " << eng(r.ttft.p99_s * 1e3)
       << " ms, TPOT p50/p90/p99 " << eng(r.tpot.p50_s * 1e3) << " / " << eng(r.tpot.p90_s * 1e3) << " / "
       << eng(r.tpot.p99_s * 1e3) << " ms, e2e p50/p99 " << eng(r.e2e.p50_s) << " / " << eng(r.e2e.p99_s)
       << " s, " << eng(r.tokens_per_s_system) << " tokens/s\n";
  }
  if (sv.sla)
    os << "max rate meeting " << sla_text(e.serving.sla_bounds, false) << ": " << eng(sv.sla->max_rate_per_s)
       << " req/s" << (sv.sla->found ? "" : " (not found)") << '\n';
}

}  // namespace

void print_eval_text(const pf::SystemEval& e, std::ostream& os) {
  if (!e.feasible) {
    os << "infeasible: " << e.reason << '\n';
    return;
  }
  // Name and type columns as wide as their longest entry (at least 16), so long
  // layer names (ResNet's layer1.0.downsample, fused stages) keep the columns apart.
  std::size_t name_w = 16, type_w = 16;
  for (const auto& l : e.chip.layers) {
    name_w = std::max(name_w, l.name.size() + 1);
    type_w = std::max(type_w, l.type.size() + 1);
  }
  const int nw = static_cast<int>(name_w), tw = static_cast<int>(type_w);
  os << std::left << std::setw(nw) << "layer" << std::setw(tw) << "type" << std::setw(5) << "rep" << std::right
     << std::setw(12) << "latency_us" << std::setw(12) << "GFLOP" << std::setw(12) << "DRAM_MB" << std::setw(8)
     << "peak%" << std::setw(7) << "stall" << "  " << std::left << std::setw(13) << "bottleneck"
     << "mapping\n";
  for (const auto& l : e.chip.layers) {
    os << std::left << std::setw(nw) << l.name << std::setw(tw) << l.type << std::setw(5) << l.repeat << std::right
       << std::setw(12) << eng(l.latency_s * 1e6) << std::setw(12) << eng(l.flops * 1e-9) << std::setw(12)
       << eng(l.dram_bytes * 1e-6) << std::setw(8) << eng(100 * l.pct_of_peak, 3) << std::setw(7)
       << eng(l.stall_fraction, 2) << "  " << std::left << std::setw(13)
       << std::string(costmodel::to_string(l.bottleneck)) << l.mapping.kernel << ' ' << l.mapping.precision;
    if (!l.mapping.tile.empty()) os << " [" << l.mapping.tile << "]";
    if (!l.mapping.fusion_group.empty()) os << " {" << l.mapping.fusion_group << "}";
    os << '\n';
  }
  const auto& t = e.chip.totals;
  os << "\nchip (one of " << e.chips << "): latency " << eng(t.latency_s * 1e3) << " ms, "
     << eng(t.flops * 1e-12) << " TFLOP, MFU " << eng(100 * t.mfu, 3) << " %, energy " << eng(t.energy_j)
     << " J, memory " << eng(t.memory_bytes / 1e9) << " GB of " << eng(t.hbm_bytes_capacity / 1e9) << " GB"
     << (e.chip.fits_memory ? "" : " (DOES NOT FIT)") << '\n';
  const auto& f = e.chip.footprint;
  os << "memory (GB): weights " << eng(f.weight_bytes / 1e9) << ", activations " << eng(f.activation_bytes / 1e9);
  if (f.gradient_bytes > 0 || f.optimizer_bytes > 0)
    os << ", gradients " << eng(f.gradient_bytes / 1e9) << ", optimizer " << eng(f.optimizer_bytes / 1e9);
  if (f.kv_cache_bytes > 0) os << ", KV cache " << eng(f.kv_cache_bytes / 1e9);
  os << '\n';
  os << "step: " << eng(e.step_latency_s * 1e3) << " ms (bubble " << eng(e.step.bubble_s * 1e3)
     << " ms, exposed comm " << eng(e.step.exposed_comm_s * 1e3) << " ms"
     << (e.step.dp_comm_s > 0 ? ", data-parallel collectives " + eng(e.step.dp_comm_s * 1e3) + " ms before overlap" +
                                    (e.step.dp_replica_comm_s > 0
                                         ? " (all-reduce across the sharded copies " +
                                               eng(e.step.dp_replica_comm_s * 1e3) + " ms)"
                                         : std::string())
                              : std::string())
     << (e.step.cp_comm_s > 0 ? ", context-parallel ring sends " + eng(e.step.cp_comm_s * 1e3) + " ms before overlap"
                               : std::string())
     << (e.step.shard_copies_s > 0 ? ", shard copies " + eng(e.step.shard_copies_s * 1e3) + " ms" : std::string())
     << (e.step.optimizer_s > 0 ? ", optimizer " + eng(e.step.optimizer_s * 1e3) + " ms" : std::string())
     << (e.step.weight_cast_s > 0 ? ", FP8 weight casts " + eng(e.step.weight_cast_s * 1e3) + " ms" : std::string())
     << "), tokens/s " << eng(e.tokens_per_s) << ", MFU " << eng(100 * e.step_mfu, 3) << " %, bottleneck "
     << costmodel::to_string(e.bottleneck) << '\n';
  print_power_text(e, os);
  if (!e.precision_note.empty()) os << "precision: " << e.precision_note << '\n';
  os << "fusion groups " << e.chip.fusion_groups << " (" << e.chip.unsupported_fusion_groups
     << " not in the stack's list); kernel cache " << e.cache_hits << " hits / " << e.cache_misses << " misses\n";
  if (e.serving.evaluated) {
    print_serving_text(e, os);
  } else if (!e.serving.reason.empty()) {
    os << "\nserving sweep not run: " << e.serving.reason << '\n';
  }
}

namespace {

void totals_json(const pf::SystemEval& e, std::ostream& os) {
  const auto& t = e.chip.totals;
  os << ", \"totals\": {\"latency_s\": " << json_number(e.feasible ? e.step_latency_s : t.latency_s)
     << ", \"unthrottled_latency_s\": " << json_number(e.feasible ? e.unthrottled_step_latency_s : t.latency_s)
     << ", \"chip_latency_s\": " << json_number(t.latency_s) << ", \"flops\": " << json_number(t.flops)
     << ", \"mfu\": " << json_number(t.mfu) << ", \"step_mfu\": " << json_number(e.step_mfu)
     << ", \"bottleneck\": " << json_string(std::string(costmodel::to_string(e.bottleneck)))
     << ", \"energy_j\": " << json_number(t.energy_j)
     << ", \"dynamic_energy_j\": " << json_number(t.dynamic_energy_j) << ", \"memory_bytes\": "
     << json_number(t.memory_bytes) << ", \"fits_memory\": " << (e.chip.fits_memory ? "true" : "false")
     << ", \"memory\": {\"weight_bytes\": " << json_number(e.chip.footprint.weight_bytes)
     << ", \"activation_bytes\": " << json_number(e.chip.footprint.activation_bytes)
     << ", \"gradient_bytes\": " << json_number(e.chip.footprint.gradient_bytes)
     << ", \"optimizer_bytes\": " << json_number(e.chip.footprint.optimizer_bytes)
     << ", \"kv_cache_bytes\": " << json_number(e.chip.footprint.kv_cache_bytes) << "}"
     << ", \"dram_bytes\": " << json_number(t.dram_bytes);
  if (t.tokens > 0) os << ", \"tokens_per_s\": " << json_number(e.tokens_per_s);
  os << "}";
}

void layers_json(const pf::SystemEval& e, std::ostream& os) {
  os << ", \"layers\": [";
  for (std::size_t i = 0; i < e.chip.layers.size(); ++i) {
    const auto& l = e.chip.layers[i];
    os << (i ? ", " : "") << "{\"name\": " << json_string(l.name) << ", \"type\": " << json_string(l.type)
       << ", \"layer\": " << json_string(l.layer) << ", \"repeat\": " << l.repeat
       << ", \"latency_s\": " << json_number(l.latency_s) << ", \"flops\": " << json_number(l.flops)
       << ", \"dram_bytes\": " << json_number(l.dram_bytes) << ", \"bottleneck\": "
       << json_string(std::string(costmodel::to_string(l.bottleneck))) << ", \"stall_fraction\": "
       << json_number(l.stall_fraction) << ", \"pct_of_peak\": " << json_number(l.pct_of_peak)
       << ", \"mapping\": {\"kernel\": " << json_string(l.mapping.kernel) << ", \"tile\": "
       << json_string(l.mapping.tile) << ", \"fusion_group\": " << json_string(l.mapping.fusion_group)
       << ", \"precision\": " << json_string(l.mapping.precision) << "}}";
  }
  os << "]";
}

void parallel_json(const pf::SystemEval& e, std::ostream& os) {
  os << ", \"parallel\": {\"step_time_s\": " << json_number(e.step.step_time_s) << ", \"bubble_s\": "
     << json_number(e.step.bubble_s) << ", \"exposed_comm_s\": " << json_number(e.step.exposed_comm_s)
     << ", \"shard_copies_s\": " << json_number(e.step.shard_copies_s)
     << ", \"dp_comm_s\": " << json_number(e.step.dp_comm_s)
     << ", \"cp_comm_s\": " << json_number(e.step.cp_comm_s)
     << ", \"dp_replica_comm_s\": " << json_number(e.step.dp_replica_comm_s)
     << ", \"optimizer_s\": " << json_number(e.step.optimizer_s)
     << ", \"weight_cast_s\": " << json_number(e.step.weight_cast_s)
     << ", \"bottleneck\": " << json_string(std::string(costmodel::to_string(e.step.bottleneck))) << "}";
}

void serving_json(const pf::SystemEval& e, std::ostream& os) {
  const auto& sv = e.serving;
  os << ", \"serving\": {\"evaluated\": " << (sv.evaluated ? "true" : "false") << ", \"stack\": {\"name\": "
     << json_string(sv.stack.name) << ", \"step_overhead_s\": " << json_number(sv.stack.step_s)
     << ", \"per_sequence_overhead_s\": " << json_number(sv.stack.per_sequence_s) << "}, \"sweep\": [";
  for (std::size_t i = 0; i < sv.sweep.size(); ++i) {
    const auto& p = sv.sweep[i];
    os << (i ? ", " : "") << "{\"batch\": " << p.batch << ", \"ttft_s\": " << json_number(p.ttft_s)
       << ", \"tpot_s\": " << json_number(p.tpot_s) << ", \"e2e_s\": " << json_number(p.e2e_s)
       << ", \"tokens_per_s\": " << json_number(p.tokens_per_s_system)
       << ", \"fits_memory\": " << (p.batch <= sv.max_batch_fitting ? "true" : "false") << "}";
  }
  os << "], \"max_batch_fitting\": " << sv.max_batch_fitting << ", \"max_batch\": " << sv.max_batch
     << ", \"reason\": " << json_string(sv.reason);
  if (sv.at_rate) {
    const auto& r = *sv.at_rate;
    os << ", \"at_rate\": {\"ttft\": ";
    stats_json(os, r.ttft);
    os << ", \"tpot\": ";
    stats_json(os, r.tpot);
    os << ", \"e2e\": ";
    stats_json(os, r.e2e);
    os << ", \"p50_s\": " << json_number(r.e2e.p50_s) << ", \"p95_s\": " << json_number(r.e2e.p95_s)
       << ", \"p99_s\": " << json_number(r.e2e.p99_s) << ", \"tokens_per_s\": " << json_number(r.tokens_per_s_system)
       << ", \"mean_batch\": " << json_number(r.mean_batch) << ", \"utilisation\": " << json_number(r.utilisation)
       << "}";
  }
  if (sv.sla) {
    auto bound = [](const std::optional<double>& v) { return v ? json_number(*v) : std::string("null"); };
    os << ", \"max_rate_at_sla\": {\"found\": " << (sv.sla->found ? "true" : "false")
       << ", \"rate_per_s\": " << json_number(sv.sla->max_rate_per_s)
       << ", \"metric\": " << json_string(sla_text(sv.sla_bounds, true))
       << ", \"ttft_p99_s\": " << bound(sv.sla_bounds.ttft_p99_s)
       << ", \"tpot_p99_s\": " << bound(sv.sla_bounds.tpot_p99_s)
       << ", \"e2e_p99_s\": " << bound(sv.sla_bounds.e2e_p99_s) << "}";
  }
  os << "}";
}

// Power at the wall (power_w) and its parts; energy per token and perf/W at the wall.
void power_json(const pf::SystemEval& e, std::ostream& os) {
  os << ", \"power_w\": " << json_number(e.wall.wall_w)
     << ", \"accelerator_power_w\": " << json_number(e.wall.accelerators_w)
     << ", \"idle_chips_power_w\": " << json_number(e.wall.idle_chips_w)
     << ", \"host_power_w\": " << json_number(e.wall.host_w) << ", \"fans_power_w\": " << json_number(e.wall.fans_w)
     << ", \"psu_loss_w\": " << json_number(e.wall.psu_loss_w) << ", \"throttled\": "
     << (e.power.throttled ? "true" : "false") << ", \"throttle_factor\": " << json_number(e.power.throttle_factor)
     << ", \"energy_per_token_j\": " << json_number(e.wall_energy_per_token_j)
     << ", \"accelerator_energy_per_token_j\": " << json_number(e.power.energy_per_token_j)
     << ", \"perf_per_w\": " << json_number(e.wall.wall_w > 0 ? e.tokens_per_s / e.wall.wall_w : 0.0)
     << ", \"area_mm2\": " << json_number(e.area_mm2) << ", \"cost_usd\": " << json_number(e.cost.capital_usd)
     << ", \"cost_per_hour_usd\": " << json_number(e.cost.per_hour_usd) << ", \"usd_per_million_tokens\": "
     << json_number(costmodel::system::usd_per_million(e.cost.per_hour_usd, e.tokens_per_s));
}

void risk_json(const pf::SystemEval& e, std::ostream& os) {
  os << ", \"risk\": {\"score\": " << json_number(e.risk.score) << ", \"items\": [";
  for (std::size_t i = 0; i < e.risk.items.size(); ++i) {
    const auto& r = e.risk.items[i];
    os << (i ? ", " : "") << "{\"kind\": " << json_string(std::string(costmodel::system::to_string(r.kind)))
       << ", \"owner\": " << json_string(std::string(costmodel::system::to_string(r.owner)))
       << ", \"weight\": " << json_number(r.weight) << ", \"detail\": " << json_string(r.detail) << "}";
  }
  os << "]}";
}

}  // namespace

void print_eval_json(const pf::SystemEval& e, std::ostream& os) {
  os << "{\"feasible\": " << (e.feasible ? "true" : "false") << ", \"reason\": " << json_string(e.reason);
  totals_json(e, os);
  os << ", \"chips\": " << e.chips << ", \"kernel_precision\": " << json_string(e.kernel_precision)
     << ", \"precision_note\": " << json_string(e.precision_note);
  layers_json(e, os);
  parallel_json(e, os);
  serving_json(e, os);
  power_json(e, os);
  risk_json(e, os);
  os << ", \"cache\": {\"hits\": " << e.cache_hits << ", \"misses\": " << e.cache_misses << "}}\n";
}

}  // namespace dse::io
