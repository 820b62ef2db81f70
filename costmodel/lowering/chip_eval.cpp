#include "costmodel/lowering/chip_eval.hpp"

#include <algorithm>

#include "costmodel/lowering/lowering.hpp"
#include "costmodel/workload/footprint.hpp"

namespace dse::costmodel::lowering {

namespace wl = workload;
namespace lp = loopnest;
namespace mp = mapper;

int LoopnestChip::bits() const noexcept {
  if (operand_bits > 0) return operand_bits;
  return arch.compute.num_rates > 0 && arch.compute.rates[0].bits > 0 ? arch.compute.rates[0].bits : 8;
}

double LoopnestChip::vector_ops_per_cycle() const noexcept {
  return vector.ops_per_cycle > 0.0 ? vector.ops_per_cycle : static_cast<double>(arch.compute.instances());
}

double LoopnestChip::area_mm2() const noexcept { return loopnest_area(arch, area, vector_ops_per_cycle()).total_mm2(); }

double LoopnestChip::peak_flops_per_s() const noexcept {
  const int b = bits();
  for (int i = 0; i < arch.compute.num_rates && i < 4; ++i) {
    const lp::PrecisionRate& r = arch.compute.rates[static_cast<std::size_t>(i)];
    if (r.bits == 0 || r.bits == b)
      return 2.0 * r.macs_per_cycle * static_cast<double>(arch.compute.instances()) * arch.clock_hz;
  }
  return 0.0;
}

namespace {

// Which nodes of b run fused into their producer's output (LoopnestChip::fuse_epilogues).
std::vector<bool> epilogues(const wl::Block& b) {
  const auto cons = wl::consumers(b);
  std::vector<bool> fused(b.nodes.size(), false);
  for (std::size_t i = 0; i < b.nodes.size(); ++i) {
    const wl::Node& n = b.nodes[i];
    const int activations = static_cast<int>(std::count_if(
        n.op.tensors.begin(), n.op.tensors.end(), [](const wl::Tensor& t) { return t.role == wl::TensorRole::input; }));
    if (n.op.kind != wl::OpKind::elementwise || activations != 1 || n.inputs.size() != 1) continue;
    for (std::size_t j = 0; j < i; ++j) {
      if (b.nodes[j].op.name != n.inputs[0]) continue;
      fused[i] = (unit_of(b.nodes[j].op) == Unit::array || fused[j]) && cons[j].size() == 1;
      break;
    }
  }
  return fused;
}

// Sums the operators of g, each costed by `cost` (or by `fused` where fuse says so), into a
// GraphCost (static power charged on each operator's time by the callbacks themselves).
template <class Cost, class Fused>
GraphCost sum_graph(const wl::OperatorGraph& g, const wl::PhaseSpec& phase, double capacity_bytes, bool fuse, Cost cost,
                    Fused fused) {
  GraphCost out;
  ClassTimes by_class;
  for (const wl::Block& b : g.blocks) {
    const std::vector<bool> epilogue = fuse ? epilogues(b) : std::vector<bool>(b.nodes.size(), false);
    for (std::size_t i = 0; i < b.nodes.size(); ++i) {
      const wl::Node& n = b.nodes[i];
      OperatorCost c;
      c.name = n.op.name;
      c.type = std::string(wl::to_string(n.op.kind));
      c.repeat = b.repeat;
      c.flops = wl::flops(n.op);
      if (unit_of(n.op) == Unit::unsupported) {
        c.feasible = false;
        c.reason = "unsupported";
        c.mapping = "collective: not on one chip";
      } else if (epilogue[i]) {
        fused(n.op, c);
        c.mapping = "vector unit, fused into " + n.inputs[0] + "'s output";
        c.fused_into = n.inputs[0];
      } else {
        cost(n.op, c);
      }
      const double r = static_cast<double>(b.repeat);
      out.latency_s += r * c.latency_s;
      out.energy_j += r * c.energy_j;
      out.flops += r * c.flops;
      out.dram_bytes += r * c.dram_bytes;
      by_class.add(c.bottleneck, r * c.latency_s);
      if (!c.feasible && out.feasible) {
        out.feasible = false;
        out.reason = c.reason;
      }
      out.ops.push_back(std::move(c));
    }
  }
  out.bottleneck = by_class.dominant();
  out.memory_bytes = wl::memory_footprint(g, phase).total_bytes();
  if (capacity_bytes > 0.0 && out.memory_bytes > capacity_bytes) {
    if (out.feasible) out.reason = "capacity";
    out.feasible = false;
    out.bottleneck = Bottleneck::capacity;
  }
  if (!out.feasible && out.reason == "unsupported") out.bottleneck = Bottleneck::capacity;
  return out;
}

template <class Cost>
GraphCost sum_graph(const wl::OperatorGraph& g, const wl::PhaseSpec& phase, double capacity_bytes, Cost cost) {
  return sum_graph(g, phase, capacity_bytes, false, cost, [](const wl::Operator&, OperatorCost&) {});
}

void set_vector_figures(OperatorCost& c, double ops_cycles, double mem_cycles, double clock_hz) {
  const double cycles = std::max(ops_cycles, mem_cycles);
  c.latency_s = cycles / clock_hz;
  c.bottleneck = mem_cycles > ops_cycles ? Bottleneck::memory : Bottleneck::compute;
  c.stall_fraction = cycles > 0.0 ? (cycles - ops_cycles) / cycles : 0.0;
  c.pct_of_peak = cycles > 0.0 ? 100.0 * ops_cycles / cycles : 0.0;
}

}  // namespace

GraphCost evaluate_graph(const RooflineHardware& hw, const wl::OperatorGraph& g, const wl::PhaseSpec& phase) {
  return sum_graph(g, phase, hw.memory_capacity_bytes, [&](const wl::Operator& op, OperatorCost& c) {
    const KernelWork work{wl::flops(op), wl::bytes(op)};
    const KernelCost k = evaluate_roofline(hw, work);
    c.latency_s = k.latency_s;
    c.energy_j = k.energy_j;  // static power included (roofline.hpp)
    c.dram_bytes = work.bytes;
    c.bottleneck = k.bottleneck;
    c.stall_fraction = k.latency_s > 0.0 ? (k.latency_s - k.compute_time_s) / k.latency_s : 0.0;
    c.pct_of_peak =
        k.latency_s > 0.0 && hw.peak_flops_per_s > 0.0 ? 100.0 * work.flops / (k.latency_s * hw.peak_flops_per_s) : 0.0;
    c.mapping = "roofline";
  });
}

GraphCost evaluate_graph(const SystolicHardware& hw, const wl::OperatorGraph& g, const wl::PhaseSpec& phase) {
  const double word = static_cast<double>(hw.array.word_bytes);
  return sum_graph(g, phase, hw.memory_capacity_bytes, [&](const wl::Operator& op, OperatorCost& c) {
    if (unit_of(op) == Unit::array) {
      const SystolicLowering s = systolic_lowering(op);
      const SystolicResult r = estimate_systolic(hw.array, s.layer);
      const double n = static_cast<double>(s.count);
      const double cycles = n * static_cast<double>(r.total_cycles);
      const double sram = static_cast<double>(r.sram_ifmap_reads + r.sram_filter_reads + r.sram_ofmap_writes);
      const double dram = static_cast<double>(r.dram_ifmap_reads + r.dram_filter_reads + r.dram_ofmap_writes);
      c.latency_s = cycles / hw.clock_hz;
      c.energy_j = n * (static_cast<double>(r.macs) * hw.energy_per_mac_j + sram * hw.energy_per_sram_word_j +
                        dram * hw.energy_per_dram_word_j) +
                   hw.static_power_w * c.latency_s;
      c.dram_bytes = n * dram * word;
      c.stall_fraction =
          r.total_cycles > 0 ? static_cast<double>(r.stall_cycles) / static_cast<double>(r.total_cycles) : 0.0;
      c.bottleneck = r.stall_cycles * 2 > r.total_cycles ? Bottleneck::memory : Bottleneck::compute;
      c.pct_of_peak = r.overall_util_pct;
      // The convolution as a SCALE-Sim topology row gives it (name, H, W, R, S, C, K, stride), then
      // how it ran.
      const ConvLayer& l = s.layer;
      c.mapping = "H=" + std::to_string(l.ifmap_h) + " W=" + std::to_string(l.ifmap_w) +
                  " R=" + std::to_string(l.filter_h) + " S=" + std::to_string(l.filter_w) +
                  " C=" + std::to_string(l.channels) + " K=" + std::to_string(l.num_filters) +
                  " stride=" + std::to_string(l.stride_h) + (s.count > 1 ? " x" + std::to_string(s.count) : "") +
                  " => " + std::string(to_string(hw.array.dataflow)) + ", " + std::to_string(r.folds) +
                  " folds, mapping efficiency " + std::to_string(static_cast<int>(r.mapping_eff_pct + 0.5)) + "%";
      return;
    }
    // The vector path of systolic_platform.cpp's element-wise layers: words over the DRAM
    // interface (3 x words per cycle) or operations at the vector rate, whichever is slower.
    const VectorWork w = vector_work(op);
    const double words = w.elements_read + w.elements_written;
    const double rate = hw.vector_ops_per_cycle > 0 ? hw.vector_ops_per_cycle : static_cast<double>(hw.array.cols);
    set_vector_figures(c, w.ops / rate, words / (3.0 * static_cast<double>(hw.array.dram_words_per_cycle)),
                       hw.clock_hz);
    c.energy_j = words * hw.energy_per_dram_word_j + hw.static_power_w * c.latency_s;
    c.dram_bytes = words * word;
    c.mapping = "vector unit";
  });
}

MappedOperator map_on_chip(const LoopnestChip& chip, const lp::Problem& p, OperatorMemo& memo) {
  const std::uint32_t id = memo.architecture_id(chip.arch);
  const OperatorMemo::Answers answers = memo.get(OperatorMemo::key(id, p, chip.constraints_id, chip.mapper), [&] {
    const lp::Architecture a = chip.keeps_by_role ? lp::bind_keep_roles(chip.arch, p) : chip.arch;
    const mp::Constraints c = chip.constraints ? chip.constraints(a, p) : mp::Constraints{};
    const std::array<mp::MapResult, 3> all = mp::map_all_objectives(a, p, c, chip.mapper);
    OperatorMemo::Answers out;
    for (std::size_t k = 0; k < 3; ++k) out[k] = summarize(a, p, all[k]);
    return out;
  });
  return answers[static_cast<std::size_t>(chip.mapper.objective)];
}

namespace {

// An operator on the loop-nest chip's vector unit: its operands read from and its results
// written to the outermost level at that level's bandwidth and energy per access vector.
void vector_on_loopnest(const LoopnestChip& chip, const wl::Operator& op, OperatorCost& c) {
  const VectorWork w = vector_work(op);
  const lp::StorageLevel& top = chip.arch.levels.front();
  const double per_word = static_cast<double>(chip.bits()) / static_cast<double>(top.word_bits);
  const double read = w.elements_read * per_word, written = w.elements_written * per_word;
  double mem = 0.0;
  if (top.read_bandwidth_words_per_cycle > 0.0) mem = std::max(mem, read / top.read_bandwidth_words_per_cycle);
  if (top.write_bandwidth_words_per_cycle > 0.0) mem = std::max(mem, written / top.write_bandwidth_words_per_cycle);
  set_vector_figures(c, w.ops / chip.vector_ops_per_cycle(), mem, chip.arch.clock_hz);
  const double block = static_cast<double>(top.block_words);
  c.energy_j = read / block * top.read_energy_j + written / block * top.update_energy_j +
               w.ops * chip.vector.energy_per_op_j + chip.static_power_w * c.latency_s;
  c.dram_bytes = (read + written) * static_cast<double>(top.word_bits) / 8.0;
  c.mapping = "vector unit";
}

}  // namespace

GraphCost evaluate_graph(const LoopnestChip& chip, const wl::OperatorGraph& g, const wl::PhaseSpec& phase,
                         OperatorMemo& memo) {
  const int bits = chip.bits();
  const auto fused = [&](const wl::Operator& op, OperatorCost& c) {
    const double ops = vector_work(op).ops;
    set_vector_figures(c, ops / chip.vector_ops_per_cycle(), 0.0, chip.arch.clock_hz);
    c.energy_j = ops * chip.vector.energy_per_op_j + chip.static_power_w * c.latency_s;
  };
  return sum_graph(
      g, phase, chip.memory_capacity_bytes, chip.fuse_epilogues,
      [&](const wl::Operator& op, OperatorCost& c) {
        if (unit_of(op) == Unit::vector) {
          vector_on_loopnest(chip, op, c);
          return;
        }
        const MappedOperator m = map_on_chip(chip, loopnest_problem(op, bits), memo);
        c.feasible = m.feasible;
        c.reason = m.reason;
        c.latency_s = m.latency_s;
        c.energy_j = m.energy_j + chip.static_power_w * m.latency_s;
        c.dram_bytes = m.dram_bytes;
        c.stall_fraction = m.cycles > 0.0 ? (m.cycles - m.compute_cycles) / m.cycles : 0.0;
        c.pct_of_peak = 100.0 * m.utilization;
        c.bottleneck = m.bottleneck;
        // The operator as `dse map --op` takes it, then its loop nest.
        c.mapping = map_op_text(op, bits) + " => " + (m.feasible ? m.loop_nest : "no mapping: " + m.reason);
      },
      fused);
}

}  // namespace dse::costmodel::lowering
