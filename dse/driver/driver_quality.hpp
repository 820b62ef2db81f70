// Search quality per round (issue 59 item 5; internal to dse/driver/driver.cpp): the hypervolume of
// the run's objective front, per workload, at fixed points of the run, so that samplers and
// settings compare by quality per evaluation.
//
// When: NSGA-II at the end of every generation; exhaustive and random search after 1,024 x 2^k
// points (k = 0, 1, ...) and at the end, the rounds being cut there. Both are points of the run
// itself, not of the rounds' timing, so the table is the same for any rank count and thread count
// and after a resume.
//
// What: per workload, the front of every point evaluated so far (ObjectiveFront: feasible points
// whose objectives no other point's dominate), each objective normalised by reference bounds:
// n = (t(v) - t(ideal)) / (t(nadir) - t(ideal)), with t = log10 for an objective whose probe values
// are all > 0 (throughput, latency, energy span decades) and t(v) = v otherwise, n clamped to
// [-10, 10]; the hypervolume of the normalised front against the reference point 1.1 in every
// objective (a point beyond it adds nothing). Ideal and nadir are the best and worst feasible
// values among probe points: the first min(32 W, max(8 W, N / 16)) draws (W workloads, N points in
// the space) of a keyed permutation of the design space with the fixed key kProbeKey, the same for
// every sampler, seed and setting of a scenario, so runs of one scenario compare. Probes are
// evaluated once, spread over the ranks, and not counted as evaluations; a workload none of whose
// probes is feasible gets no row. An objective whose probes all agree (an engineering risk per
// platform) is measured in its own units from that value.
#pragma once

#include <cstdint>
#include <vector>

#include "dse/driver/context.hpp"
#include "dse/driver/driver.hpp"
#include "dse/driver/driver_archive.hpp"
#include "dse/driver/driver_round.hpp"

namespace dse::driver_detail {

inline constexpr double kQualityReference = 1.1;  // the reference point, in normalised units
inline constexpr std::uint64_t kProbeKey = 0x5eed0059;
inline constexpr std::uint64_t kFirstQualitySample = 1024;

// One objective's normalisation for one workload (a row of /hypervolume_bounds).
struct QualityBound {
  std::uint32_t workload_id = 0;
  std::uint32_t objective = 0;  // position in the file's `objectives` attribute
  double ideal = 0.0;           // best probe value
  double nadir = 0.0;           // worst probe value
  std::uint8_t log_scale = 0;   // 1: normalised in log10
};

// One row of /hypervolume.
struct QualityRow {
  std::uint64_t evaluations = 0;  // points evaluated when it was taken
  std::uint64_t generation = 0;   // NSGA-II generations selected (0 for the other samplers)
  std::uint32_t workload_id = 0;
  std::uint64_t front_size = 0;
  double hypervolume = 0.0;
};

// The probe points of a model's space.
std::vector<std::uint64_t> probe_ids(const PointModel& model);
// The bounds from the probes' records.
std::vector<QualityBound> bounds_from_probes(const PointModel& model, const std::vector<PointRecord>& probes);
// The probes evaluated over the ranks, rank r taking every P-th (collective); the bounds on rank 0.
std::vector<QualityBound> probe_bounds(Context& ctx, const PointModel& model, RoundRunner& runner);
// The hypervolume rows of a front (ascending workload id).
std::vector<QualityRow> hypervolume_rows(const PointModel& model, const std::vector<QualityBound>& bounds,
                                         const ObjectiveFront& front, std::uint64_t evaluations,
                                         std::uint64_t generation);
// The sample points of exhaustive and random search: the first after `done` points.
std::uint64_t next_quality_sample(std::uint64_t done);

// /hypervolume and /hypervolume_bounds (collective; rank 0's rows are written).
void create_quality_datasets(hid_t file);
void write_quality_bounds(hid_t file, Context& ctx, const std::vector<QualityBound>& bounds);
std::vector<QualityBound> read_quality_bounds(hid_t file);
// /hypervolume cut to `committed` rows and rank 0's `rows` appended; returns the new row count.
std::uint64_t append_quality_rows(hid_t file, Context& ctx, const std::vector<QualityRow>& rows,
                                  std::uint64_t committed);

}  // namespace dse::driver_detail
