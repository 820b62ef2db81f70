#include "dse/driver/mapping_sheets.hpp"

#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <string>

#include "dse/driver/agree.hpp"
#include "dse/driver/driver_archive.hpp"
#include "dse/driver/point_details.hpp"
#include "dse/driver/point_table.hpp"
#include "dse/driver/run.hpp"

namespace dse {

namespace {

using C = PointTableColumn;
constexpr CellKind kNum = CellKind::number;
constexpr CellKind kInt = CellKind::integer;
constexpr CellKind kText = CellKind::text;

struct Tables {
  PointTable sheets{"point_index",
                    {{"layer", kText},
                     {"type", kText},
                     {"repeat", kInt},
                     {"latency_s", kNum},
                     {"energy_j", kNum},
                     {"flops", kNum},
                     {"dram_bytes", kNum},
                     {"stall_fraction", kNum},
                     {"pct_of_peak", kNum},
                     {"bottleneck", kText},
                     {"fusion_group", kText},
                     {"mapping", kText}}};
  PointTable risk{"point_index",
                  {{"name", kText}, {"owner", kText}, {"weight", kNum}, {"detail", kText}, {"evidence", kText}}};
  PointTable step{"point_index",
                  {{"type", kText},
                   {"layers", kInt},
                   {"time_s", kNum},
                   {"share", kNum},
                   {"flops", kNum},
                   {"mfu", kNum},
                   {"stall_fraction", kNum}}};
  PointTable curves{"point_index",
                    {{"load", kNum},
                     {"rate_per_s", kNum},
                     {"at_workload_rate", kInt},
                     {"feasible", kInt},
                     {"tokens_per_s", kNum},
                     {"requests_per_s", kNum},
                     {"utilisation", kNum},
                     {"mean_batch", kNum},
                     {"ttft_p50_s", kNum},
                     {"ttft_p90_s", kNum},
                     {"ttft_p99_s", kNum},
                     {"tpot_p50_s", kNum},
                     {"tpot_p90_s", kNum},
                     {"tpot_p99_s", kNum},
                     {"e2e_p50_s", kNum},
                     {"e2e_p90_s", kNum},
                     {"e2e_p99_s", kNum}}};
  PointTable roofs{"hardware_id",
                   {{"roof", kText}, {"precision", kText}, {"flops_per_s", kNum}, {"bytes_per_s", kNum}}};
};

void add_details(Tables& t, std::uint64_t i, const PointDetails& d) {
  for (const auto& b : d.layers) {
    t.sheets.row(i);
    t.sheets.add(b.name);
    t.sheets.add(b.type);
    t.sheets.add(static_cast<std::int64_t>(b.repeat));
    for (const double v : {b.latency_s, b.energy_j, b.flops, b.dram_bytes, b.stall_fraction, b.pct_of_peak})
      t.sheets.add(v);
    t.sheets.add(std::string(costmodel::to_string(b.bottleneck)));
    t.sheets.add(b.fusion_group);
    t.sheets.add(b.mapping);
  }
  for (const auto& r : d.risk) {
    t.risk.row(i);
    t.risk.add(r.name);
    t.risk.add(r.owner);
    t.risk.add(r.weight);
    t.risk.add(r.detail);
    t.risk.add(r.evidence);
  }
  for (const auto& s : d.step) {
    t.step.row(i);
    t.step.add(s.type);
    t.step.add(s.layers);
    for (const double v : {s.time_s, s.share, s.flops, s.mfu, s.stall_fraction}) t.step.add(v);
  }
  for (const auto& c : d.curve) {
    const auto& r = c.result;
    t.curves.row(i);
    t.curves.add(c.load);
    t.curves.add(c.rate_per_s);
    t.curves.add(static_cast<std::int64_t>(c.at_workload_rate ? 1 : 0));
    t.curves.add(static_cast<std::int64_t>(r.feasible ? 1 : 0));
    for (const double v :
         {r.tokens_per_s_system, r.requests_per_s_system, r.utilisation, r.mean_batch, r.ttft.p50_s, r.ttft.p90_s,
          r.ttft.p99_s, r.tpot.p50_s, r.tpot.p90_s, r.tpot.p99_s, r.e2e.p50_s, r.e2e.p90_s, r.e2e.p99_s})
      t.curves.add(v);
  }
}

// This rank's points' details, computed by its threads, added in point order; returns the hardware
// variants of those points. Serving curves for the Pareto points only (13 simulations each:
// llm-serving's 186 archived points took 2.1 s, its 72 Pareto points take a third of it; the
// evaluation of all 444 points takes 1.0 s).
std::vector<std::uint32_t> fill(Tables& t, const Scenario& scenario, const search::DesignSpace& space,
                             const std::vector<std::uint64_t>& points, const std::vector<std::uint64_t>& pareto,
                             int threads) {
  std::vector<PointDetails> details(points.size());
  tbb::task_arena arena(std::max(1, threads));
  arena.execute([&] {
    tbb::parallel_for(std::size_t{0}, points.size(), [&](std::size_t k) {
      const bool curve = std::binary_search(pareto.begin(), pareto.end(), points[k]);
      details[k] = point_details(scenario, space, points[k], curve);
    });
  });
  std::vector<std::uint32_t> hardware;
  for (std::size_t k = 0; k < points.size(); ++k) {
    add_details(t, points[k], details[k]);
    hardware.push_back(static_cast<std::uint32_t>(space.decode(points[k])[0]));
  }
  return hardware;
}

// The roofs of the hardware variants `hardware` (sorted ids), in id order.
void fill_roofs(Tables& t, const Scenario& scenario, const std::vector<std::uint32_t>& hardware) {
  for (const std::uint32_t h : hardware) {
    const auto [entry, variant] = locate_hardware(scenario, h);
    for (const auto& r : hardware_roofs(scenario.hardware[entry].variant(variant))) {
      t.roofs.row(h);
      t.roofs.add(r.roof);
      t.roofs.add(r.precision);
      t.roofs.add(r.flops_per_s);
      t.roofs.add(r.bytes_per_s);
    }
  }
}

}  // namespace

void write_point_details(hid_t file, Context& ctx, const Scenario& scenario, const search::DesignSpace& space,
                         std::span<const PointRecord> archive, std::uint64_t archive_size,
                         const std::vector<std::uint64_t>& pareto, int threads) {
  const bool all = archive_size <= kSheetArchiveLimit;
  Tables t;
  std::vector<std::uint32_t> hardware;
  agreed(ctx, [&] {
    std::vector<std::uint64_t> front = pareto;
    std::sort(front.begin(), front.end());
    // This rank's points: those of its part of the archive (all of them, or the Pareto ones).
    std::vector<std::uint64_t> points;
    for (const auto& r : archive)
      if (all || std::binary_search(front.begin(), front.end(), r.index)) points.push_back(r.index);
    hardware = fill(t, scenario, space, points, front, threads);
  });
  hardware = driver_detail::union_of_ids(ctx, hardware);  // sorted
  agreed(ctx, [&] {
    if (ctx.rank() == 0) fill_roofs(t, scenario, hardware);
    for (const auto& [table, name] : {std::pair{&t.sheets, "mapping_sheets"},
                                      {&t.risk, "risk_items"},
                                      {&t.step, "step_breakdown"},
                                      {&t.curves, "serving_curves"},
                                      {&t.roofs, "roofs"}})
      table->check(name);
  });
  for (const auto& [table, name] : {std::pair{&t.sheets, "mapping_sheets"},
                                    {&t.risk, "risk_items"},
                                    {&t.step, "step_breakdown"},
                                    {&t.curves, "serving_curves"},
                                    {&t.roofs, "roofs"}}) {
    table->write(file, ctx, name);
    h5::write_attribute(h5::open_dataset(file, name), "points", std::string(all ? "archive" : "pareto"));
  }
}

}  // namespace dse
