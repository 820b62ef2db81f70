#include "costmodel/lowering/area.hpp"

namespace dse::costmodel::lowering {

namespace {

// Aladdin's TSMC 40 nm figures at a 1 ns cycle (Shao et al., ISCA 2014, as tabulated in
// Accelergy-Project/hwcomponents-library, hwcomponents_library/library/aladdin.py @ 27728db):
// a 32 x 32-bit integer multiplier 6,350 um^2, a 32-bit adder 278 um^2, a register bit
// 5.98 um^2 (tag S). The multiplier scales with the product of its operand widths, the
// adder and the register with their width (the same file's width scaling).
constexpr double kMultiplier32Um2 = 6350.0;
constexpr double kAdder32Um2 = 278.0;
constexpr double kRegisterBitUm2 = 5.98;
constexpr double kReferenceNodeNm = 40.0;
// An SRAM bit, cell and periphery, about 600 F^2 at feature size F (D. J. Greaves, Cambridge
// Computer Laboratory, SoC D/M lecture slides, "45nm SRAM Memory Area and Power Consumption":
// "area is about 600 square lambda for an SRAM bit cell, where lambda is the feature size";
// tag S, a rule of thumb from CACTI runs).
constexpr double kSramBitF2 = 600.0;
constexpr double kUm2PerMm2 = 1e6;
constexpr double kBitsPerKib = 8192.0;

}  // namespace

AreaFigures reference_area_figures(double process_nm, int mac_bits) noexcept {
  AreaFigures f;
  if (!(process_nm > 0.0) || mac_bits <= 0) return f;
  const double scale = (process_nm / kReferenceNodeNm) * (process_nm / kReferenceNodeNm);  // D: area ~ F^2
  const double w = static_cast<double>(mac_bits) / 32.0;
  const double mac_um2 = kMultiplier32Um2 * w * w + kAdder32Um2 * (2.0 * w);  // accumulator: 2 x bits
  f.mac_mm2 = mac_um2 * scale / kUm2PerMm2;
  f.register_mm2_per_kib = kRegisterBitUm2 * kBitsPerKib * scale / kUm2PerMm2;
  const double f_um = process_nm * 1e-3;
  f.sram_mm2_per_kib = kSramBitF2 * f_um * f_um * kBitsPerKib / kUm2PerMm2;
  return f;
}

namespace {

void add_io(const AreaFigures& f, AreaBreakdown& b) noexcept {
  b.io_mm2 = static_cast<double>(f.hbm_stacks) * f.hbm_phy_mm2 + static_cast<double>(f.links) * f.link_phy_mm2;
  b.fixed_mm2 = f.fixed_mm2;
}

}  // namespace

AreaBreakdown loopnest_area(const loopnest::Architecture& a, const AreaFigures& f, double vector_lanes) noexcept {
  AreaBreakdown b;
  b.macs_mm2 = static_cast<double>(a.compute.instances()) * f.mac_mm2;
  // The outermost level is off-chip; a level of capacity 0 is unbounded (off-chip) or a
  // pure fan-out point, neither on the die.
  for (std::size_t l = 1; l < a.levels.size(); ++l) {
    const loopnest::StorageLevel& lv = a.levels[l];
    if (lv.capacity_words <= 0) continue;
    const double bits = static_cast<double>(lv.capacity_words) * static_cast<double>(lv.word_bits);
    const double kib = bits * static_cast<double>(lv.instances()) / kBitsPerKib;
    if (lv.capacity_words * lv.word_bits <= kRegisterFileMaxBits) {
      b.registers_mm2 += kib * f.register_mm2_per_kib;
    } else {
      b.sram_mm2 += kib * f.sram_mm2_per_kib;
    }
  }
  b.vector_mm2 = vector_lanes * f.vector_lane_mm2;
  add_io(f, b);
  return b;
}

AreaBreakdown systolic_area(std::int64_t pes, double sram_kib, const AreaFigures& f, double vector_lanes) noexcept {
  AreaBreakdown b;
  b.macs_mm2 = static_cast<double>(pes) * f.mac_mm2;
  b.sram_mm2 = sram_kib * f.sram_mm2_per_kib;
  b.vector_mm2 = vector_lanes * f.vector_lane_mm2;
  add_io(f, b);
  return b;
}

}  // namespace dse::costmodel::lowering
