#include "dse/driver/driver_quality.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <map>

#include "dse/driver/agree.hpp"
#include "search/hypervolume.hpp"
#include "search/random_sampler.hpp"

namespace dse::driver_detail {

namespace {

constexpr double kClamp = 10.0;  // normalised values kept in [-kClamp, kClamp]

std::uint64_t workload_count(const PointModel& model) {
  for (const auto& k : model.space.knobs()) {
    if (k.name == "workload") return std::max<std::uint64_t>(1, k.radix);
  }
  return 1;
}

double transform(double v, bool log_scale) { return log_scale ? std::log10(v) : v; }

// A point's objective j in normalised units (minimised, the ideal at 0 and the nadir at 1).
double normalised(double v, const QualityBound& b, search::Sense sense) {
  const bool log_scale = b.log_scale != 0;
  double den = transform(b.nadir, log_scale) - transform(b.ideal, log_scale);
  if (den == 0.0) den = sense == search::Sense::minimize ? 1.0 : -1.0;
  const double n = (transform(v, log_scale) - transform(b.ideal, log_scale)) / den;
  return std::isnan(n) ? kClamp : std::clamp(n, -kClamp, kClamp);
}

h5::Handle bound_type() {
  h5::Handle t = h5::compound_type(sizeof(QualityBound));
  const auto add = [&](const char* name, std::size_t off, hid_t type) { h5::add_member(t, name, off, type); };
  add("workload_id", offsetof(QualityBound, workload_id), H5T_NATIVE_UINT32);
  add("objective", offsetof(QualityBound, objective), H5T_NATIVE_UINT32);
  add("ideal", offsetof(QualityBound, ideal), H5T_NATIVE_DOUBLE);
  add("nadir", offsetof(QualityBound, nadir), H5T_NATIVE_DOUBLE);
  add("log_scale", offsetof(QualityBound, log_scale), H5T_NATIVE_UINT8);
  return t;
}

h5::Handle row_type() {
  h5::Handle t = h5::compound_type(sizeof(QualityRow));
  const auto add = [&](const char* name, std::size_t off, hid_t type) { h5::add_member(t, name, off, type); };
  add("evaluations", offsetof(QualityRow, evaluations), H5T_NATIVE_UINT64);
  add("generation", offsetof(QualityRow, generation), H5T_NATIVE_UINT64);
  add("workload_id", offsetof(QualityRow, workload_id), H5T_NATIVE_UINT32);
  add("front_size", offsetof(QualityRow, front_size), H5T_NATIVE_UINT64);
  add("hypervolume", offsetof(QualityRow, hypervolume), H5T_NATIVE_DOUBLE);
  return t;
}

// The type in the file: the fields without the structs' padding (whose bytes would otherwise
// be whatever the memory held, and differ from run to run).
h5::Handle packed(const h5::Handle& memory) {
  h5::Handle t(h5::check(H5Tcopy(memory), "H5Tcopy"), H5Tclose);
  h5::check_status(H5Tpack(t), "H5Tpack");
  return t;
}

}  // namespace

std::vector<std::uint64_t> probe_ids(const PointModel& model) {
  const std::uint64_t n_space = model.space.size();
  if (n_space == 0) return {};
  const std::uint64_t w = workload_count(model);
  const std::uint64_t n = std::min({32 * w, std::max(8 * w, n_space / 16), n_space});
  const search::IndexPermutation perm(n_space, kProbeKey);
  std::vector<std::uint64_t> out;
  out.reserve(n);
  for (std::uint64_t k = 0; k < n; ++k) out.push_back(perm(k));
  return out;
}

std::vector<QualityBound> bounds_from_probes(const PointModel& model, const std::vector<PointRecord>& probes) {
  const std::size_t m = model.senses.size();
  std::map<std::uint32_t, std::vector<std::vector<double>>> values;  // workload -> objective -> values
  for (const PointRecord& r : probes) {
    if (r.feasible == 0) continue;
    const search::Evaluation e = model.to_evaluation(r);
    if (!std::all_of(e.objectives.begin(), e.objectives.end(), [](double v) { return std::isfinite(v); })) continue;
    auto& v = values[r.workload_id];
    v.resize(m);
    for (std::size_t j = 0; j < m; ++j) v[j].push_back(e.objectives[j]);
  }
  std::vector<QualityBound> out;
  for (const auto& [w, per_objective] : values) {
    for (std::size_t j = 0; j < m; ++j) {
      const auto [lo, hi] = std::minmax_element(per_objective[j].begin(), per_objective[j].end());
      const bool minimise = model.senses[j] == search::Sense::minimize;
      QualityBound b;
      b.workload_id = w;
      b.objective = static_cast<std::uint32_t>(j);
      b.ideal = minimise ? *lo : *hi;
      b.nadir = minimise ? *hi : *lo;
      b.log_scale = *lo > 0.0 ? 1 : 0;
      out.push_back(b);
    }
  }
  return out;
}

std::vector<QualityBound> probe_bounds(Context& ctx, const PointModel& model, RoundRunner& runner) {
  Bytes mine;
  agreed(ctx, [&] {
    const std::vector<std::uint64_t> all = probe_ids(model);
    std::vector<std::uint64_t> ids;
    for (std::size_t i = static_cast<std::size_t>(ctx.rank()); i < all.size(); i += static_cast<std::size_t>(ctx.size()))
      ids.push_back(all[i]);
    for (const PointRecord& r : runner.evaluate(ids)) put(mine, r);
  });
  const Bytes gathered = tree_reduce(ctx, std::move(mine), [](Bytes a, Bytes b) {
    append(a, b);
    return a;
  });
  std::vector<QualityBound> out;
  agreed(ctx, [&] {
    if (ctx.rank() != 0) return;
    std::vector<PointRecord> records;
    for (std::size_t off = 0; off < gathered.size();) records.push_back(get<PointRecord>(gathered, off));
    out = bounds_from_probes(model, records);
  });
  return out;
}

std::vector<QualityRow> hypervolume_rows(const PointModel& model, const std::vector<QualityBound>& bounds,
                                         const ObjectiveFront& front, std::uint64_t evaluations,
                                         std::uint64_t generation) {
  const std::size_t m = model.senses.size();
  std::vector<QualityRow> out;
  for (const auto& [w, entries] : front.entries()) {
    std::vector<const QualityBound*> b(m, nullptr);
    for (const QualityBound& q : bounds) {
      if (q.workload_id == w && q.objective < m) b[q.objective] = &q;
    }
    if (std::find(b.begin(), b.end(), nullptr) != b.end()) continue;  // no feasible probe of this workload
    std::vector<std::vector<double>> points;
    points.reserve(entries.size());
    for (const search::ArchiveEntry& e : entries) {
      std::vector<double> p(m);
      for (std::size_t j = 0; j < m; ++j) p[j] = normalised(e.objectives[j], *b[j], model.senses[j]);
      points.push_back(std::move(p));
    }
    QualityRow row;
    row.evaluations = evaluations;
    row.generation = generation;
    row.workload_id = w;
    row.front_size = entries.size();
    row.hypervolume = search::hypervolume(points, std::vector<double>(m, kQualityReference));
    out.push_back(row);
  }
  return out;
}

std::uint64_t next_quality_sample(std::uint64_t done) {
  std::uint64_t at = kFirstQualitySample;
  while (at <= done && at < (std::uint64_t{1} << 62)) at *= 2;
  return at;
}

void create_quality_datasets(hid_t file) {
  (void)h5::create_extensible_1d(file, "hypervolume", packed(row_type()), 1024, 0);
  (void)h5::create_extensible_1d(file, "hypervolume_bounds", packed(bound_type()), 64, 0);
}

void write_quality_bounds(hid_t file, Context& ctx, const std::vector<QualityBound>& bounds) {
  const h5::Handle type = bound_type();
  const h5::Handle ds = h5::open_dataset(file, "hypervolume_bounds");
  // Every rank sizes the dataset alike: rank 0's count, broadcast.
  Bytes n;
  put(n, static_cast<std::uint64_t>(bounds.size()));
  n = ctx.broadcast(n, 0);
  std::size_t off = 0;
  h5::set_rows(ds, get<std::uint64_t>(n, off));
  std::vector<h5::RowRun> runs;
  if (ctx.rank() == 0 && !bounds.empty()) runs.push_back({0, bounds.size()});
  h5::write_runs(ds, type, bounds.data(), runs, ctx.distributed());
  h5::write_attribute(ds, "reference_point", kQualityReference);
}

std::vector<QualityBound> read_quality_bounds(hid_t file) {
  const h5::Handle ds = h5::open_dataset(file, "hypervolume_bounds");
  std::vector<QualityBound> out(h5::dataset_rows(ds));
  const h5::Handle type = bound_type();
  if (!out.empty()) h5::read_all(ds, type, out.data());
  return out;
}

std::uint64_t append_quality_rows(hid_t file, Context& ctx, const std::vector<QualityRow>& rows,
                                  std::uint64_t committed) {
  Bytes n;
  put(n, static_cast<std::uint64_t>(rows.size()));
  n = ctx.broadcast(n, 0);
  std::size_t off = 0;
  const std::uint64_t added = get<std::uint64_t>(n, off);
  const h5::Handle type = row_type();
  const h5::Handle ds = h5::open_dataset(file, "hypervolume");
  h5::set_rows(ds, committed + added);
  std::vector<h5::RowRun> runs;
  if (ctx.rank() == 0 && !rows.empty()) runs.push_back({committed, rows.size()});
  h5::write_runs(ds, type, rows.data(), runs, ctx.distributed());
  return committed + added;
}

}  // namespace dse::driver_detail
