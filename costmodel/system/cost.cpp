#include "costmodel/system/cost.hpp"

#include <cmath>
#include <numbers>

namespace dse::costmodel::system {

namespace {

// The foundry's sale price per 300 mm wafer in 2020 by node: CSET, Khan and Mann, "AI Chips:
// What They Are and Why They Matter" (April 2020), table "Calculation of foundry sale price per
// chip in 2020 by node": 16/12 nm $3,984, 10 nm $5,992, 7 nm $9,346, 5 nm $16,988 (S: the table
// as transcribed by secondary pages; the report itself not read). Nodes past 5 nm take the 5 nm
// price (no figure in the table).
constexpr double kWafer16nmUsd = 3984.0;
constexpr double kWafer10nmUsd = 5992.0;
constexpr double kWafer7nmUsd = 9346.0;
constexpr double kWafer5nmUsd = 16988.0;
constexpr double kWaferDiameterMm = 300.0;
// Defects per mm^2 for the Poisson yield: 0.1 per cm^2 (R: the figure TSMC reported for N5 in
// volume production, 2020, as the press relayed it; not read here).
constexpr double kDefectsPerMm2 = 0.001;
// HBM at $10 per GB (S: secondary estimates of 2024-25 contract prices: HBM3E "approximately
// $8-10 per GB" (asiatechfeed.com, "What is HBM memory"), the H200's 141 GB as 35.3% of a $4,250
// bill of materials = $10.6 per GB (siliconanalysts.com, 2026-06-27)).
constexpr double kHbmUsdPerByte = 10.0 / 1e9;
// HBM's price per byte against its bandwidth per stack: HBM3E cost 20% more than HBM3 and HBM4
// costs at least 30% more than HBM3E (S: TrendForce, as cloudnews.tech relayed it, 2025), at
// 1.2 / 0.819 = 1.47x and 2.048 / 1.2 = 1.71x the bandwidth per stack (S: the JEDEC per-stack rates,
// 819 GB/s HBM3, 1.2 TB/s HBM3E, 2.048 TB/s HBM4): ln 1.2 / ln 1.465 = 0.477 and
// ln 1.3 / ln 1.707 = 0.491, so the price per byte goes as the bandwidth to the 0.48 (D).
constexpr double kHbmPriceBandwidthExponent = 0.48;
// The vendor's gross margin: 72.7% (R: NVIDIA's GAAP gross margin for fiscal 2024, its 10-K;
// not read here), so a dollar of build cost sells for 1 / (1 - 0.727) = 3.66 dollars.
constexpr double kGrossMargin = 0.727;
// Electricity at $0.08 per kWh (R: the US EIA's average retail price to industrial customers,
// 2023, about 8 cents per kWh; data centres buy at industrial rates) and systems written off
// over 4 years (R: an assumption; hyperscalers depreciate servers over 5 to 6 years in their
// filings, GPU cost-of-ownership analyses commonly take 4).
constexpr double kElectricityUsdPerKwh = 0.08;
constexpr double kAmortisationYears = 4.0;
constexpr double kHoursPerYear = 8766.0;  // 365.25 days

}  // namespace

CostAssumptions default_cost_assumptions() noexcept { return {kElectricityUsdPerKwh, kAmortisationYears}; }

double wafer_usd(double process_nm) noexcept {
  if (process_nm <= 5.0) return kWafer5nmUsd;
  if (process_nm <= 7.0) return kWafer7nmUsd;
  if (process_nm <= 10.0) return kWafer10nmUsd;
  return kWafer16nmUsd;
}

double dies_per_wafer(double die_area_mm2) noexcept {
  if (!(die_area_mm2 > 0.0)) return 0.0;
  const double r = kWaferDiameterMm / 2.0;
  const double n =
      std::numbers::pi * r * r / die_area_mm2 - std::numbers::pi * kWaferDiameterMm / std::sqrt(2.0 * die_area_mm2);
  return n > 0.0 ? std::floor(n) : 0.0;
}

double die_yield(double die_area_mm2) noexcept { return std::exp(-die_area_mm2 * kDefectsPerMm2); }

double die_usd(double die_area_mm2, double process_nm) noexcept {
  const double good = dies_per_wafer(die_area_mm2) * die_yield(die_area_mm2);
  if (!(good > 0.0)) return 0.0;  // no area, or a die larger than the wafer holds
  return wafer_usd(process_nm) / good;
}

double chip_build_usd(const ChipBuild& c, double reference_hbm_bandwidth) noexcept {
  const double speed = reference_hbm_bandwidth > 0.0 && c.hbm_bandwidth_bytes_per_s > 0.0
                           ? std::pow(c.hbm_bandwidth_bytes_per_s / reference_hbm_bandwidth, kHbmPriceBandwidthExponent)
                           : 1.0;
  return die_usd(c.die_area_mm2, c.process_nm) + c.hbm_bytes * kHbmUsdPerByte * speed;
}

double vendor_markup() noexcept { return 1.0 / (1.0 - kGrossMargin); }

double derived_chip_usd(double preset_chip_usd, const ChipBuild& preset, const ChipBuild& changed) noexcept {
  const double reference = preset.hbm_bandwidth_bytes_per_s;
  const double delta = chip_build_usd(changed, reference) - chip_build_usd(preset, reference);
  return preset_chip_usd + vendor_markup() * delta;
}

SystemCost system_cost(const SystemPrice& price, int chips, double wall_w, const CostAssumptions& a) noexcept {
  SystemCost c;
  if (!price.known()) return c;  // no price: no cost (shown as 0)
  const double n = static_cast<double>(chips);
  const double hours = a.amortisation_years * kHoursPerYear;
  if (price.rented()) {
    c.per_hour_usd = price.rental_usd_per_chip_hour * n;
    c.capital_usd = c.per_hour_usd * hours;
    return c;
  }
  c.capital_usd = n * (price.chip_usd + price.host_usd_per_chip);
  c.per_hour_usd = (hours > 0.0 ? c.capital_usd / hours : 0.0) + wall_w / 1000.0 * a.electricity_usd_per_kwh;
  return c;
}

double usd_per_million(double per_hour_usd, double per_s) noexcept {
  return per_s > 0.0 ? per_hour_usd / (per_s * 3600.0) * 1e6 : 0.0;
}

}  // namespace dse::costmodel::system
