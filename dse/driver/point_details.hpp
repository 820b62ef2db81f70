// What the review report shows of a point besides its record (docs/results-format.md): its
// mapping sheet (one row per layer), the risk items behind its engineering risk, its step by
// layer type, its serving curve (a served point under rising load) and the roofs of its
// hardware. Computed again from the scenario for the points whose sheets a run stores
// (mapping_sheets.cpp writes them); the same for any rank count, as every figure of a point is.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "costmodel/breakdown.hpp"
#include "costmodel/system/serving.hpp"
#include "dse/io/scenario.hpp"
#include "search/design_space.hpp"

namespace dse {

// One item of a point's engineering risk: for a served point an item of the risk model
// (costmodel/system/risk.hpp: its kind, owner, weight, what triggered it and the evidence that
// would retire it); for a layer list or a custom chip, whose risk is the scenario's own
// `engineering_risk` figure, one item `scenario_figure` (owner `scenario`) carrying it, and none
// when it is 0. The point's engineering_risk is 1 - prod(1 - weight) over its items.
struct RiskRow {
  std::string name;
  std::string owner;
  double weight = 0.0;
  std::string detail;
  std::string evidence;
};

// The step by layer type (the mapping sheet's `type`, in order of first appearance): the time
// of its layers (each latency x its repeats), their share of the sheet's time, FLOPs, MFU
// (FLOPs / (time x the chip's matrix peak); 0 when the peak is not known) and memory-stall
// fraction (time-weighted). At the clock the sheet's layers run at (the nominal clock).
struct StepRow {
  std::string type;
  std::int64_t layers = 0;
  double time_s = 0.0;
  double share = 0.0;
  double flops = 0.0;
  double mfu = 0.0;
  double stall_fraction = 0.0;
};
std::vector<StepRow> step_breakdown(const std::vector<costmodel::LayerBreakdown>& layers,
                                    double matrix_peak_flops_per_s);

// The serving curve of a served point: the simulation of `dse eval --rate R` (the point's
// batching, cap, lengths, requests and seed) at R = load x capacity for each load of kCurveLoads,
// and at the workload's own rate (at_workload_rate). Capacity: the requests per second of full
// static batches at the cap with nominal lengths (the serving sweep's point at the cap), the rate
// a replica set saturates near.
inline constexpr std::array<double, 12> kCurveLoads = {0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.2};
struct CurveRow {
  double load = 0.0;        // rate / capacity
  double rate_per_s = 0.0;  // requests per second to the system
  bool at_workload_rate = false;
  costmodel::system::SimulationResult result;
};

// A roof of a point's hardware (one chip of a system): a compute roof (`matrix` per precision,
// `vector`, or a roofline chip's `compute`) in FLOP/s, or the memory roof (`memory`, the outermost
// memory) in bytes per second.
struct RoofRow {
  std::string roof;
  std::string precision;  // "" when the roof has none
  double flops_per_s = 0.0;
  double bytes_per_s = 0.0;
};
std::vector<RoofRow> hardware_roofs(const HardwareVariant& hw);

struct PointDetails {
  std::vector<costmodel::LayerBreakdown> layers;
  std::vector<RiskRow> risk;
  std::vector<StepRow> step;
  std::vector<CurveRow> curve;  // served points only, ascending rate
};
// curve: whether to simulate the serving curve (a served point's 13 simulations; mapping_sheets.cpp
// asks for it on the Pareto points only); the other tables do not depend on it.
PointDetails point_details(const Scenario& s, const search::DesignSpace& space, std::uint64_t index, bool curve);

}  // namespace dse
