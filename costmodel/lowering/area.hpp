// Die area of a custom chip (systolic or loop-nest): the sum of its parts at per-unit
// figures. Pure. The figures, their sources and confidence tags are in
// docs/hardware-guide.md ("Area of custom chips"); reference_area_figures() gives the
// documented defaults for a process node, scaled from the cited 40 nm figures.
//
//   area = MACs x mac_mm2                       (the array: one multiplier-accumulator each)
//        + SRAM KiB x sram_mm2_per_kib          (on-chip storage levels larger than
//                                                kRegisterFileMaxBits per instance)
//        + register KiB x register_mm2_per_kib  (smaller per-instance storage: flip-flops)
//        + vector lanes x vector_lane_mm2       (one operation per cycle per lane)
//        + HBM stacks x hbm_phy_mm2 + links x link_phy_mm2 + fixed_mm2
//
// The outermost storage level is off-chip memory (DRAM, HBM) and adds no die area; its
// PHYs do (hbm_phy_mm2). Control, network-on-chip and pads other than the PHYs are not
// modelled: fixed_mm2 holds whatever the user knows of them.
#pragma once

#include <cstdint>

#include "costmodel/loopnest/architecture.hpp"

namespace dse::costmodel::lowering {

// Per-instance storage of at most this many bits is built from flip-flops (Eyeriss v1's
// 24 B input and 48 B partial-sum scratchpads are registers, its 448 B filter scratchpad is
// SRAM: Chen et al., JSSC 52(1), 2017, section V).
inline constexpr std::int64_t kRegisterFileMaxBits = 1024;

struct AreaFigures {
  double mac_mm2 = 0.0;  // one MAC unit at the array's precision
  double sram_mm2_per_kib = 0.0;
  double register_mm2_per_kib = 0.0;
  double vector_lane_mm2 = 0.0;
  double hbm_phy_mm2 = 0.0;   // per HBM stack
  double link_phy_mm2 = 0.0;  // per chip-to-chip link
  double fixed_mm2 = 0.0;
  int hbm_stacks = 0;
  int links = 0;
};

struct AreaBreakdown {
  double macs_mm2 = 0.0;
  double sram_mm2 = 0.0;
  double registers_mm2 = 0.0;
  double vector_mm2 = 0.0;
  double io_mm2 = 0.0;  // HBM PHYs and links
  double fixed_mm2 = 0.0;
  [[nodiscard]] double total_mm2() const noexcept {
    return macs_mm2 + sram_mm2 + registers_mm2 + vector_mm2 + io_mm2 + fixed_mm2;
  }
};

// The documented per-unit figures at a process node for MACs of `mac_bits` operands
// (accumulating at twice that width): Aladdin's 40 nm multiplier and adder (Shao et al.,
// ISCA 2014), its register per bit, and an SRAM bit of 600 F^2 (D. J. Greaves, Cambridge
// SoC D/M lecture notes, "45nm SRAM Memory Area and Power Consumption"), scaled by
// (node / 40 nm)^2. Vector lanes and I/O are left 0 (no cited figure).
AreaFigures reference_area_figures(double process_nm, int mac_bits) noexcept;

AreaBreakdown loopnest_area(const loopnest::Architecture& a, const AreaFigures& f, double vector_lanes) noexcept;

// A systolic array: rows x cols MACs, the three SRAMs, the vector unit.
AreaBreakdown systolic_area(std::int64_t pes, double sram_kib, const AreaFigures& f, double vector_lanes) noexcept;

}  // namespace dse::costmodel::lowering
