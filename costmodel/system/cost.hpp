// What a system costs: its price (cited list or street prices, a system file's `cost:` section),
// a build-cost model for a chip whose figures were changed (a scenario's `overrides:`), and the
// cost of running it per hour and per token. Pure: standard library only, no I/O, no globals.
//
// Prices. A system of N chips is priced N x (chip_usd + host_usd_per_chip): the accelerator
// module at its list or street price, and the rest of the system (baseboard and switches, CPUs,
// memory, NICs, storage, chassis) per chip, so that a system of twice the chips costs twice as
// much. A system sold only by the hour (Cloud TPU) instead has rental_usd_per_chip_hour, its
// list price per chip-hour, which includes power and the building; its capital-equivalent price
// is that rate over the amortisation period (below), so that perf per dollar compares like with
// like: what the chips cost over the period an owned system is written off in.
//
// A changed chip. A chip whose die area, process node, HBM capacity or HBM bandwidth differs
// from its preset's is priced from the preset's price by the difference of their build costs at
// the vendor's markup:
//     chip_usd' = chip_usd + markup x (build' - build),   build = die_usd + hbm_usd,
//     die_usd  = wafer_usd(node) / (dies per wafer x yield),
//     dies per wafer = pi (d/2)^2 / A - pi d / sqrt(2 A)   (d = 300 mm; the standard estimate,
//                      whole dies only; A the die area in mm^2),
//     yield    = exp(-A D0)   (Poisson defects, D0 per mm^2),
//     hbm_usd  = hbm_bytes x hbm_usd_per_byte x (bandwidth / the preset's bandwidth)^0.48
//                (faster stacks cost more per byte: each HBM generation's price per GB against its
//                 bandwidth per stack, cost.cpp; more bandwidth taken as faster stacks, not more),
//     markup   = 1 / (1 - gross margin).
// A chip that changes none of the four keeps its preset's price exactly (the difference is 0).
// Each constant names its source in cost.cpp; docs/hardware-guide.md ("Area and cost") lists them.
// Compute and link figures change no price here: a larger matrix engine costs what its die
// area costs, so a scenario that grows the engine moves chip.area.die_area_mm2 with it.
//
// Per hour and per token. An owned system costs price / (amortisation years x 8,766 h) per
// hour plus its wall power at the electricity price; a rented one its rate x chips. The cost
// per million tokens is the hourly cost over the tokens made in an hour at the point's
// throughput.
#pragma once

namespace dse::costmodel::system {

struct SystemPrice {
  double chip_usd = 0.0;                  // one accelerator module
  double host_usd_per_chip = 0.0;         // the rest of the system, per chip
  double rental_usd_per_chip_hour = 0.0;  // > 0: sold by the hour (power included), not owned
  [[nodiscard]] bool rented() const noexcept { return rental_usd_per_chip_hour > 0.0; }
  [[nodiscard]] bool known() const noexcept { return rented() || chip_usd > 0.0 || host_usd_per_chip > 0.0; }
};

// The economic assumptions of the cost per hour (cost.cpp cites them).
struct CostAssumptions {
  double electricity_usd_per_kwh = 0.0;
  double amortisation_years = 0.0;
};
CostAssumptions default_cost_assumptions() noexcept;

// What the chip build-cost model reads of a chip.
struct ChipBuild {
  double die_area_mm2 = 0.0;
  double process_nm = 0.0;
  double hbm_bytes = 0.0;
  double hbm_bandwidth_bytes_per_s = 0.0;
};
// The foundry's price of one 300 mm wafer at the node (5 nm and below at the 5 nm price).
double wafer_usd(double process_nm) noexcept;
double dies_per_wafer(double die_area_mm2) noexcept;
double die_yield(double die_area_mm2) noexcept;
double die_usd(double die_area_mm2, double process_nm) noexcept;  // 0 without an area
// Its build cost, HBM priced against a chip of `reference_hbm_bandwidth` (the preset's).
double chip_build_usd(const ChipBuild& c, double reference_hbm_bandwidth) noexcept;
double vendor_markup() noexcept;
// The price of `changed`, a chip derived from `preset` (priced preset_chip_usd).
double derived_chip_usd(double preset_chip_usd, const ChipBuild& preset, const ChipBuild& changed) noexcept;

struct SystemCost {
  double capital_usd = 0.0;   // the system's price (rented: the rate over the amortisation period)
  double per_hour_usd = 0.0;  // owning (amortised price + electricity at wall_w) or renting it
};
SystemCost system_cost(const SystemPrice& price, int chips, double wall_w, const CostAssumptions& a) noexcept;
// Dollars per million units (tokens) at `per_s` units a second; 0 when nothing is made.
double usd_per_million(double per_hour_usd, double per_s) noexcept;

}  // namespace dse::costmodel::system
