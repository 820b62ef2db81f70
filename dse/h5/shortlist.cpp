#include "dse/h5/shortlist.hpp"

#include <oneapi/tbb/parallel_sort.h>
#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <map>
#include <numeric>
#include <optional>
#include <ostream>
#include <sstream>

#include "costmodel/system/cost.hpp"
#include "dse/error.hpp"
#include "dse/parallel.hpp"
#include "search/dominance_filter.hpp"

namespace dse {

namespace {

struct Quantity {
  const char* field;
  const char* short_name;
  search::Sense sense;
  double PointRecord::*member;
};

// The archive's objectives and constraint metrics, with the senses it was built with.
const std::vector<Quantity>& archive_quantities() {
  static const std::vector<Quantity> q = {
      {"throughput_samples_per_s", "throughput", search::Sense::maximize, &PointRecord::throughput_samples_per_s},
      {"latency_s", "latency", search::Sense::minimize, &PointRecord::latency_s},
      {"energy_per_sample_j", "energy", search::Sense::minimize, &PointRecord::energy_per_sample_j},
      {"engineering_risk", "risk", search::Sense::minimize, &PointRecord::engineering_risk},
      {"p99_latency_s", "p99", search::Sense::minimize, &PointRecord::p99_latency_s},
      {"ttft_p99_s", "ttft", search::Sense::minimize, &PointRecord::ttft_p99_s},
      {"tpot_p99_s", "tpot", search::Sense::minimize, &PointRecord::tpot_p99_s},
      {"power_w", "power", search::Sense::minimize, &PointRecord::power_w},
      {"area_mm2", "area", search::Sense::minimize, &PointRecord::area_mm2},
      {"memory_bytes", "memory", search::Sense::minimize, &PointRecord::memory_bytes},
      {"cost_usd", "cost", search::Sense::minimize, &PointRecord::cost_usd},
  };
  return q;
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return std::string(s);
}

// Numbers as iostream writes them (std::fixed / std::scientific / precision 17), with snprintf:
// ostringstream per cell cost seconds on a 10^6-row shortlist.
std::string fixed(double v, int precision) {
  char buf[400];
  std::snprintf(buf, sizeof buf, "%.*f", precision, v);
  return buf;
}

std::string sci(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3e", v);
  return buf;
}

std::string exact(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string json_number(double v) { return std::isfinite(v) ? exact(v) : "null"; }

// Perf per dollar of a row (0 without a price): throughput per dollar of the system's price,
// and the dollars a million units of throughput cost at the row's cost per hour.
double per_usd(const PointRecord& r) { return r.cost_usd > 0.0 ? r.throughput_samples_per_s / r.cost_usd : 0.0; }
double usd_per_million(const PointRecord& r) {
  return costmodel::system::usd_per_million(r.cost_per_hour_usd, r.throughput_samples_per_s);
}

// A CSV field, quoted (RFC 4180) when it holds a comma, a quote or a line break.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (const char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// A name as a record holds it (up to its first NUL).
std::string name_of(const char* field, std::size_t n) { return record_name(field, n); }

std::string budgets_text(const Budgets& b) {
  std::ostringstream s;
  bool any = false;
  auto add = [&](const char* what, const std::optional<double>& v, double scale, const char* unit) {
    if (!v) return;
    s << (any ? ", " : "") << what << " <= " << *v * scale << ' ' << unit;
    any = true;
  };
  add("end-to-end p99", b.p99_latency_s, 1e3, "ms");
  add("TTFT p99", b.ttft_p99_s, 1e3, "ms");
  add("TPOT p99", b.tpot_p99_s, 1e3, "ms");
  add("wall power", b.power_w, 1.0, "W");
  add("area", b.area_mm2, 1.0, "mm2");
  add("memory", b.memory_bytes, 1e-9, "GB");
  add("cost", b.cost_usd, 1.0, "USD");
  return any ? s.str() : "none";
}

// The archive as written by `dse run` (chunked, shuffle then deflate, the file type
// equal to PointRecord's): raw chunks read serially (HDF5 is not thread-safe), then
// inflated and unshuffled in parallel. Returns false, reading nothing, for any other
// layout, which read_archive_rows then reads with plain H5Dread.
bool read_deflated_chunks(hid_t ds, hid_t mem_type, std::vector<PointRecord>& rows) {
  const h5::Handle file_type(H5Dget_type(ds), H5Tclose);
  if (file_type.id() < 0 || H5Tequal(file_type, mem_type) <= 0) return false;
  const h5::Handle dcpl(H5Dget_create_plist(ds), H5Pclose);
  if (dcpl.id() < 0 || H5Pget_layout(dcpl) != H5D_CHUNKED || H5Pget_nfilters(dcpl) != 2) return false;
  unsigned flags = 0;
  std::size_t nelem = 0;
  unsigned cd[8];
  if (H5Pget_filter2(dcpl, 0, &flags, &nelem, cd, 0, nullptr, nullptr) != H5Z_FILTER_SHUFFLE) return false;
  nelem = 8;
  if (H5Pget_filter2(dcpl, 1, &flags, &nelem, cd, 0, nullptr, nullptr) != H5Z_FILTER_DEFLATE) return false;
  hsize_t chunk[1] = {0};
  if (H5Pget_chunk(dcpl, 1, chunk) != 1 || chunk[0] == 0) return false;
  const std::size_t chunk_rows = chunk[0];
  const std::size_t n_chunks = (rows.size() + chunk_rows - 1) / chunk_rows;
  std::vector<std::vector<unsigned char>> raw(n_chunks);
  for (std::size_t c = 0; c < n_chunks; ++c) {
    const hsize_t offset[1] = {c * chunk_rows};
    hsize_t bytes = 0;
    if (H5Dget_chunk_storage_size(ds, offset, &bytes) < 0 || bytes == 0) return false;
    raw[c].resize(bytes);
    std::uint32_t mask = 0;
    if (H5Dread_chunk(ds, H5P_DEFAULT, offset, &mask, raw[c].data()) < 0 || mask != 0) return false;
  }
  constexpr std::size_t kRecordSize = sizeof(PointRecord);
  std::atomic<bool> ok{true};
  dse::parallel_for(std::size_t{0}, n_chunks, [&](std::size_t c) {
    std::vector<unsigned char> shuffled(chunk_rows * kRecordSize);
    uLongf got = static_cast<uLongf>(shuffled.size());
    if (uncompress(shuffled.data(), &got, raw[c].data(), static_cast<uLong>(raw[c].size())) != Z_OK ||
        got != shuffled.size()) {
      ok = false;
      return;
    }
    const std::size_t first = c * chunk_rows;
    const std::size_t count = std::min(chunk_rows, rows.size() - first);
    auto* out = reinterpret_cast<unsigned char*>(rows.data() + first);
    for (std::size_t b = 0; b < kRecordSize; ++b) {  // byte b of element i sits at b * chunk_rows + i
      const unsigned char* plane = shuffled.data() + b * chunk_rows;
      for (std::size_t i = 0; i < count; ++i) out[i * kRecordSize + b] = plane[i];
    }
  });
  return ok;
}

// With a small --top, the first `top` front points of a group in lexicographic order are found
// by a scan that stops there: each candidate is checked against the points kept so far (at most
// `top`), O(n x top). Past kScanTop the whole front is computed instead.
constexpr std::size_t kScanTop = 1024;

std::vector<std::size_t> scan_front(const std::vector<std::uint32_t>& order, const std::vector<double>& keys,
                                    const std::vector<std::size_t>& cand, std::size_t k, std::size_t begin,
                                    std::size_t end, std::size_t top) {
  std::vector<std::size_t> kept;
  std::vector<double> front;       // keys of the front so far, k per point
  std::vector<std::size_t> hits;   // front members, most recent dominator first
  for (std::size_t n = begin; n < end && kept.size() < top; ++n) {
    const std::uint32_t c = order[n];
    const double* kc = &keys[std::size_t{c} * k];
    bool dominated = false;
    for (std::size_t h = 0; h < hits.size() && !dominated; ++h) {
      const double* kf = &front[hits[h] * k];
      bool no_worse = true;
      bool better = false;
      for (std::size_t j = 0; j < k && no_worse; ++j) {
        no_worse = kf[j] <= kc[j];
        better = better || kf[j] < kc[j];
      }
      if (no_worse && better) {
        dominated = true;
        // Move the dominator forward: it is likely to dominate the next points too.
        if (h > 0) std::swap(hits[h], hits[h / 2]);
      }
    }
    if (dominated) continue;
    hits.push_back(front.size() / k);
    front.insert(front.end(), kc, kc + k);
    kept.push_back(cand[c]);
  }
  return kept;
}

}  // namespace

std::vector<ObjectiveSpec> default_objectives() { return parse_objectives("throughput,latency,energy,risk"); }

std::vector<ObjectiveSpec> parse_objectives(std::string_view csv) {
  std::vector<ObjectiveSpec> out;
  std::size_t start = 0;
  while (start <= csv.size()) {
    const std::size_t comma = std::min(csv.find(',', start), csv.size());
    const std::string item = trim(csv.substr(start, comma - start));
    start = comma + 1;
    // An optional :max or :min, as the shortlist's header writes each objective; it must be the
    // quantity's own sense (the archive was built with it).
    std::string name = item;
    std::optional<search::Sense> asked;
    if (const auto colon = item.rfind(':'); colon != std::string::npos) {
      const std::string sense = item.substr(colon + 1);
      if (sense != "max" && sense != "min")
        throw InputError("--objectives: '" + item + "': expected :max or :min after the name");
      asked = sense == "max" ? search::Sense::maximize : search::Sense::minimize;
      name = trim(item.substr(0, colon));
    }
    const auto& qs = archive_quantities();
    const auto it = std::find_if(qs.begin(), qs.end(), [&](const Quantity& q) {
      return name == q.field || name == q.short_name;
    });
    if (it == qs.end()) {
      std::string allowed;
      for (const auto& q : qs) allowed += std::string(allowed.empty() ? "" : ", ") + q.short_name;
      throw InputError("--objectives: '" + name + "' is not an archived quantity (expected some of: " + allowed +
                       ")");
    }
    if (asked && *asked != it->sense) {
      throw InputError("--objectives: '" + item + "': " + it->short_name + " is " +
                       (it->sense == search::Sense::maximize ? "maximised" : "minimised") +
                       " (the archive keeps the front in that sense)");
    }
    if (std::any_of(out.begin(), out.end(), [&](const ObjectiveSpec& o) { return o.name == it->field; })) {
      throw InputError("--objectives: '" + name + "' is listed twice");
    }
    out.push_back({it->field, it->sense, it->member});
  }
  return out;
}

bool within_budgets(const PointRecord& r, const Budgets& b) noexcept {
  return (!b.p99_latency_s || r.p99_latency_s <= *b.p99_latency_s) &&
         (!b.ttft_p99_s || r.ttft_p99_s <= *b.ttft_p99_s) && (!b.tpot_p99_s || r.tpot_p99_s <= *b.tpot_p99_s) &&
         (!b.power_w || r.power_w <= *b.power_w) &&
         (!b.area_mm2 || r.area_mm2 <= *b.area_mm2) && (!b.memory_bytes || r.memory_bytes <= *b.memory_bytes) &&
         (!b.cost_usd || r.cost_usd <= *b.cost_usd);
}

std::vector<std::size_t> shortlist(std::span<const PointRecord> rows, const Budgets& budgets,
                                   const std::vector<ObjectiveSpec>& objectives, std::size_t top) {
  const std::size_t k = objectives.size();
  if (k == 0) throw InputError("shortlist: at least one objective is needed");
  // Candidates and their objective keys, all turned into minimisation.
  std::vector<std::size_t> cand;
  std::vector<std::uint32_t> workload;
  std::vector<double> keys;
  cand.reserve(rows.size());
  workload.reserve(rows.size());
  keys.reserve(rows.size() * k);
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const PointRecord& r = rows[i];
    if (r.feasible == 0 || !within_budgets(r, budgets)) continue;
    bool finite = true;
    for (const auto& o : objectives) finite = finite && std::isfinite(r.*o.field);
    if (!finite) continue;  // the readers refuse such files; rows built in memory may hold them
    cand.push_back(i);
    workload.push_back(r.workload_id);
    for (const auto& o : objectives) keys.push_back(o.sense == search::Sense::maximize ? -(r.*o.field) : r.*o.field);
  }
  // Best first by the keys in order, then by index.
  const auto best_first = [&](std::uint32_t a, std::uint32_t b) {
    const double* ka = &keys[std::size_t{a} * k];
    const double* kb = &keys[std::size_t{b} * k];
    for (std::size_t j = 0; j < k; ++j) {
      if (ka[j] != kb[j]) return ka[j] < kb[j];
    }
    return rows[cand[a]].index < rows[cand[b]].index;
  };
  std::vector<std::vector<std::size_t>> kept;
  if (top > 0 && top <= kScanTop) {
    // Lexicographic order (workload, keys, index): a point can be dominated only by one before it.
    std::vector<std::uint32_t> order(cand.size());
    std::iota(order.begin(), order.end(), 0u);
    tbb::parallel_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
      return workload[a] != workload[b] ? workload[a] < workload[b] : best_first(a, b);
    });
    // One run of `order` per workload, filtered independently.
    std::vector<std::size_t> starts;
    for (std::size_t n = 0; n < order.size(); ++n) {
      if (n == 0 || workload[order[n]] != workload[order[n - 1]]) starts.push_back(n);
    }
    starts.push_back(order.size());
    kept.resize(starts.size() - 1);
    dse::parallel_for(std::size_t{0}, kept.size(), [&](std::size_t g) {
      kept[g] = scan_front(order, keys, cand, k, starts[g], starts[g + 1], top);
    });
  } else {
    // Each workload's whole front (search::nondominated_rows, about O(n log n), O(n) for the copies
    // of a key that design spaces hold many of), then only the front put in order: sorting every
    // candidate first took most of the time (1,000,000 synthetic rows: 0.72-0.88 s -> 0.54-0.63 s
    // for the shortlist; `dse run`'s summary of the single-operator bench's 524,288 rows).
    std::map<std::uint32_t, std::vector<std::uint32_t>> by_workload;  // workload -> positions in cand
    for (std::size_t n = 0; n < cand.size(); ++n) by_workload[workload[n]].push_back(static_cast<std::uint32_t>(n));
    std::vector<const std::vector<std::uint32_t>*> groups;
    for (const auto& [w, members] : by_workload) groups.push_back(&members);
    kept.resize(groups.size());
    dse::parallel_for(std::size_t{0}, kept.size(), [&](std::size_t g) {
      const std::vector<std::uint32_t>& members = *groups[g];
      std::vector<double> group;
      group.reserve(members.size() * k);
      for (const std::uint32_t c : members) {
        const double* kc = &keys[std::size_t{c} * k];
        group.insert(group.end(), kc, kc + k);
      }
      std::vector<std::uint32_t> front;
      for (const std::size_t pos : search::nondominated_rows(group, k, k)) front.push_back(members[pos]);
      std::sort(front.begin(), front.end(), best_first);
      if (top > 0 && front.size() > top) front.resize(top);
      for (const std::uint32_t c : front) kept[g].push_back(cand[c]);
    });
  }
  std::vector<std::size_t> out;
  for (const auto& v : kept) out.insert(out.end(), v.begin(), v.end());
  return out;
}

std::vector<PointRecord> read_archive_rows(const std::string& path) {
  h5::quiet_errors();
  const h5::Handle file = h5::open_file_readonly(path);
  if (!h5::has_attribute(file, "layout_version")) {
    throw IoError(path + ": not a DSE result file (no layout_version attribute)");
  }
  const std::int64_t layout = h5::read_int_attribute(file, "layout_version");
  if (layout != kResultsLayoutVersion) {
    throw IoError(path + ": result layout version " + std::to_string(layout) + " is not supported (this dse reads " +
                  std::to_string(kResultsLayoutVersion) + ")");
  }
  if (!h5::has_link(file, "archive")) throw IoError(path + ": no /archive dataset");
  const h5::Handle type = point_record_type();
  const h5::Handle ds = h5::open_dataset(file, "archive");
  check_record_layout(ds, path + ": /archive");
  std::vector<PointRecord> rows(h5::dataset_rows(ds));
  if (!rows.empty() && !read_deflated_chunks(ds, type, rows)) h5::read_all(ds, type, rows.data());
  check_records(rows, path + ": /archive");
  return rows;
}

namespace {

ResultNames read_names(const std::string& path, const std::vector<std::uint32_t>* hardware_ids) {
  h5::quiet_errors();
  const h5::Handle file = h5::open_file_readonly(path);
  ResultNames n;
  const TextTable w = read_text_table(file, "workloads");
  for (std::size_t i = 0; i < w.ids.size(); ++i) {
    if (w.rows[i].size() < 2) break;
    if (w.ids[i] >= n.units.size()) {
      n.units.resize(w.ids[i] + 1, "samples/s");
      n.workloads.resize(w.ids[i] + 1);
      n.workload_eval_arguments.resize(w.ids[i] + 1);
    }
    n.workloads[w.ids[i]] = w.rows[i][0];
    n.units[w.ids[i]] = w.rows[i][1];
    if (w.rows[i].size() > 2) n.workload_eval_arguments[w.ids[i]] = w.rows[i][2];
  }
  const TextTable v = read_text_table(file, "variants", hardware_ids);
  for (std::size_t i = 0; i < v.ids.size(); ++i)
    if (v.rows[i].size() >= 3)
      n.variants[v.ids[i]] = {v.rows[i][1], v.rows[i][2], v.rows[i].size() > 3 ? v.rows[i][3] : std::string()};
  return n;
}

}  // namespace

ResultNames read_result_names(const std::string& path) { return read_names(path, nullptr); }

ResultNames read_result_names(const std::string& path, std::vector<std::uint32_t> ids) {
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return read_names(path, &ids);
}

std::string ResultNames::unit(std::uint32_t w) const { return w < units.size() ? units[w] : std::string("samples/s"); }

std::string ResultNames::workload(const PointRecord& r) const {
  return r.workload_id < workloads.size() && !workloads[r.workload_id].empty() ? workloads[r.workload_id]
                                                                               : name_of(r.workload, sizeof(r.workload));
}

std::string ResultNames::hardware(const PointRecord& r) const {
  const auto it = variants.find(r.hardware_id);
  return it != variants.end() ? it->second.name : name_of(r.hardware, sizeof(r.hardware));
}

std::string ResultNames::knobs(const PointRecord& r) const {
  const auto it = variants.find(r.hardware_id);
  return it != variants.end() ? it->second.knobs : std::string();
}

std::string ResultNames::eval_command(const PointRecord& r) const {
  const auto it = variants.find(r.hardware_id);
  if (it == variants.end() || it->second.eval_arguments.empty() || r.workload_id >= workload_eval_arguments.size() ||
      workload_eval_arguments[r.workload_id].empty())
    return {};
  const std::string b = std::to_string(r.batch);
  return "dse eval " + it->second.eval_arguments + " " + workload_eval_arguments[r.workload_id] + " --batch " + b +
         " --max-batch " + b;
}

ShortlistFormat parse_shortlist_format(const std::string& s) {
  if (s == "table") return ShortlistFormat::table;
  if (s == "csv") return ShortlistFormat::csv;
  if (s == "json") return ShortlistFormat::json;
  throw InputError("--format: expected table, csv or json (got '" + s + "')");
}

namespace {

// Text written in blocks, with a check of the cancel token every kCheckRows rows.
class Sink {
 public:
  Sink(std::ostream& out, const std::atomic<bool>* cancel) : out_(out), cancel_(cancel) {}
  ~Sink() { flush(); }
  Sink(const Sink&) = delete;
  Sink& operator=(const Sink&) = delete;
  std::string& text() { return buf_; }
  void row_done() {
    if (buf_.size() >= (1u << 16)) flush();
    if (++rows_ % kCheckRows == 0 && cancel_ != nullptr && cancel_->load()) {
      flush();
      throw Interrupted("interrupted while printing the shortlist");
    }
  }
  void flush() {
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
  }

 private:
  static constexpr std::size_t kCheckRows = 4096;
  std::ostream& out_;
  const std::atomic<bool>* cancel_;
  std::string buf_;
  std::size_t rows_ = 0;
};

// A cell for the terminal: control bytes and invalid UTF-8 escaped (printable()).
std::vector<std::string> table_cells(const PointRecord& r, const ResultNames& names) {
  return {std::to_string(r.index),          printable(names.workload(r)),      printable(names.hardware(r)),
          std::to_string(r.batch),          fixed(r.throughput_samples_per_s, 1), printable(names.unit(r.workload_id)),
          fixed(r.latency_s * 1e3, 4),      fixed(r.ttft_p99_s * 1e3, 4),      fixed(r.tpot_p99_s * 1e3, 4),
          fixed(r.p99_latency_s * 1e3, 4),  sci(r.energy_per_sample_j * 1e3),  fixed(r.power_w, 1),
          fixed(r.area_mm2, 1),             fixed(r.cost_usd, 0),              sci(per_usd(r)),
          fixed(usd_per_million(r), 4),     fixed(r.memory_bytes * 1e-9, 3),   fixed(r.mfu, 3),
          fixed(r.engineering_risk, 2),     printable(name_of(r.bottleneck, sizeof(r.bottleneck))),
          printable(names.knobs(r))};
}

void append_row(std::string& out, const std::vector<std::string>& row, const std::vector<std::size_t>& width) {
  for (std::size_t c = 0; c < row.size(); ++c) {
    const bool text = c == 1 || c == 2 || c == 5 || c >= 19;
    if (c + 1 == row.size() && text) {  // the last column unpadded (no trailing blanks)
      out += "  " + row[c];
      continue;
    }
    // Widths count bytes, as std::setw did.
    const std::string pad(width[c] > row[c].size() ? width[c] - row[c].size() : 0, ' ');
    if (c != 0) out += "  ";
    out += text ? row[c] + pad : pad + row[c];
  }
  out += '\n';
}

// CSV: a header line, then one line per selected row, every figure exact.
void write_csv(const std::vector<PointRecord>& rows, const std::vector<std::size_t>& selected, Sink& sink,
               const ResultNames& names) {
  std::string& t = sink.text();
  t += "index,workload,hardware,batch,throughput_samples_per_s,throughput_unit,latency_s,energy_per_sample_j,"
       "engineering_risk,p99_latency_s,ttft_p99_s,tpot_p99_s,power_w,area_mm2,memory_bytes,flops,dram_bytes,"
       "bottleneck,ttft_p50_s,ttft_p90_s,tpot_p50_s,tpot_p90_s,e2e_p50_s,accelerator_power_w,mfu,cost_usd,"
       "cost_per_hour_usd,throughput_per_usd,usd_per_million,knobs\n";
  for (const auto i : selected) {
    const PointRecord& r = rows[i];
    t += std::to_string(r.index) + ',' + csv_field(printable(names.workload(r))) + ',' +
         csv_field(printable(names.hardware(r))) + ',' + std::to_string(r.batch) + ',' +
         exact(r.throughput_samples_per_s) + ',' + printable(names.unit(r.workload_id)) + ',' + exact(r.latency_s) +
         ',' + exact(r.energy_per_sample_j) + ',' + exact(r.engineering_risk) + ',' + exact(r.p99_latency_s) + ',' +
         exact(r.ttft_p99_s) + ',' + exact(r.tpot_p99_s) + ',' + exact(r.power_w) + ',' + exact(r.area_mm2) + ',' +
         exact(r.memory_bytes) + ',' + exact(r.flops) + ',' + exact(r.dram_bytes) + ',' +
         printable(name_of(r.bottleneck, sizeof(r.bottleneck))) + ',' + exact(r.ttft_p50_s) + ',' +
         exact(r.ttft_p90_s) + ',' + exact(r.tpot_p50_s) + ',' + exact(r.tpot_p90_s) + ',' + exact(r.e2e_p50_s) +
         ',' + exact(r.accelerator_power_w) + ',' + exact(r.mfu) + ',' + exact(r.cost_usd) + ',' +
         exact(r.cost_per_hour_usd) + ',' + exact(per_usd(r)) + ',' + exact(usd_per_million(r)) + ',' +
         csv_field(printable(names.knobs(r))) + '\n';
    sink.row_done();
  }
}

// JSON: the objectives, the budgets, the archive's row count and the shortlist's rows.
void write_json(const std::vector<PointRecord>& rows, const std::vector<std::size_t>& selected,
                const Budgets& budgets, const std::string& objective_list, Sink& sink, const ResultNames& names) {
  std::string& t = sink.text();
  auto opt = [](const std::optional<double>& v) { return v ? json_number(*v) : std::string("null"); };
  t += "{\"objectives\": " + json_string(objective_list) + ", \"budgets\": {\"p99_latency_s\": " +
       opt(budgets.p99_latency_s) + ", \"ttft_p99_s\": " + opt(budgets.ttft_p99_s) +
       ", \"tpot_p99_s\": " + opt(budgets.tpot_p99_s) + ", \"power_w\": " + opt(budgets.power_w) +
       ", \"area_mm2\": " + opt(budgets.area_mm2) + ", \"memory_bytes\": " + opt(budgets.memory_bytes) +
       ", \"cost_usd\": " + opt(budgets.cost_usd) + "}, \"archive_rows\": " + std::to_string(rows.size()) + ", \"shortlist\": [";
  bool first = true;
  for (const auto i : selected) {
    const PointRecord& r = rows[i];
    t += std::string(first ? "\n  " : ",\n  ") + "{\"index\": " + std::to_string(r.index) +
         ", \"workload\": " + json_string(names.workload(r)) + ", \"hardware\": " + json_string(names.hardware(r)) +
         ", \"knobs\": " + json_string(names.knobs(r)) + ", \"eval_command\": " + json_string(names.eval_command(r)) +
         ", \"batch\": " + std::to_string(r.batch) +
         ", \"throughput_samples_per_s\": " + json_number(r.throughput_samples_per_s) +
         ", \"throughput_unit\": " + json_string(names.unit(r.workload_id)) +
         ", \"latency_s\": " + json_number(r.latency_s) +
         ", \"energy_per_sample_j\": " + json_number(r.energy_per_sample_j) +
         ", \"engineering_risk\": " + json_number(r.engineering_risk) +
         ", \"p99_latency_s\": " + json_number(r.p99_latency_s) + ", \"e2e_p50_s\": " + json_number(r.e2e_p50_s) +
         ", \"ttft_p50_s\": " + json_number(r.ttft_p50_s) + ", \"ttft_p90_s\": " + json_number(r.ttft_p90_s) +
         ", \"ttft_p99_s\": " + json_number(r.ttft_p99_s) + ", \"tpot_p50_s\": " + json_number(r.tpot_p50_s) +
         ", \"tpot_p90_s\": " + json_number(r.tpot_p90_s) + ", \"tpot_p99_s\": " + json_number(r.tpot_p99_s) +
         ", \"power_w\": " + json_number(r.power_w) +
         ", \"accelerator_power_w\": " + json_number(r.accelerator_power_w) + ", \"mfu\": " + json_number(r.mfu) +
         ", \"area_mm2\": " + json_number(r.area_mm2) + ", \"memory_bytes\": " + json_number(r.memory_bytes) +
         ", \"cost_usd\": " + json_number(r.cost_usd) + ", \"cost_per_hour_usd\": " + json_number(r.cost_per_hour_usd) +
         ", \"throughput_per_usd\": " + json_number(per_usd(r)) +
         ", \"usd_per_million\": " + json_number(usd_per_million(r)) +
         ", \"bottleneck\": " + json_string(name_of(r.bottleneck, sizeof(r.bottleneck))) + "}";
    first = false;
    sink.row_done();
  }
  t += std::string(first ? "" : "\n") + "]}\n";
}

// The terminal table: a title line, the header, the rows, columns padded to their widest cell.
void write_table(const std::vector<PointRecord>& rows, const std::vector<std::size_t>& selected,
                 const Budgets& budgets, const std::string& objective_list, std::size_t top, Sink& sink,
                 const ResultNames& names) {
  std::string& t = sink.text();
  const std::vector<std::string> header = {"index",     "workload",   "hardware",  "batch",      "throughput", "unit",
                                           "latency_ms", "ttft_p99_ms", "tpot_p99_ms", "p99_ms", "energy_mj", "power_w",
                                           "area_mm2",  "cost_usd",   "per_usd",   "usd_per_m",  "memory_gb",  "mfu",
                                           "risk",      "bottleneck", "knobs"};
  // Two passes over the rows (the widths, then the lines), so that the table streams.
  std::vector<std::size_t> width(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) width[c] = header[c].size();
  for (const auto i : selected) {
    const auto cells = table_cells(rows[i], names);
    for (std::size_t c = 0; c < cells.size(); ++c) width[c] = std::max(width[c], cells[c].size());
    sink.row_done();
  }
  t += "Pareto shortlist: " + std::to_string(selected.size()) + " points (objectives " + objective_list +
       "; budgets " + budgets_text(budgets) + "; per workload" +
       (top > 0 ? "; the first " + std::to_string(top) + " of each" : std::string()) + "; from " +
       std::to_string(rows.size()) + " archived rows)\n";
  append_row(t, header, width);
  for (const auto i : selected) {
    append_row(t, table_cells(rows[i], names), width);
    sink.row_done();
  }
}

}  // namespace

void write_shortlist(const std::vector<PointRecord>& rows, const std::vector<std::size_t>& selected,
                     const Budgets& budgets, const std::vector<ObjectiveSpec>& objectives, ShortlistFormat format,
                     std::ostream& out, const ResultNames& names, std::size_t top, const std::atomic<bool>* cancel) {
  std::string objective_list;
  for (const auto& o : objectives) {
    objective_list += (objective_list.empty() ? "" : ",") + o.name +
                      (o.sense == search::Sense::maximize ? ":max" : ":min");
  }
  Sink sink(out, cancel);
  if (format == ShortlistFormat::csv) {
    write_csv(rows, selected, sink, names);
  } else if (format == ShortlistFormat::json) {
    write_json(rows, selected, budgets, objective_list, sink, names);
  } else {
    write_table(rows, selected, budgets, objective_list, top, sink, names);
  }
}

bool print_shortlist(const std::vector<PointRecord>& archive, std::size_t top, std::ostream& out,
                     const ResultNames& names, const std::atomic<bool>* cancel) {
  const auto objectives = default_objectives();
  const Budgets none;
  const std::vector<std::size_t> selected = shortlist(archive, none, objectives, top);
  write_shortlist(archive, selected, none, objectives, ShortlistFormat::table, out, names, top, cancel);
  if (top == 0) return false;
  std::map<std::uint32_t, std::size_t> per_workload;
  for (const auto i : selected) ++per_workload[archive[i].workload_id];
  return std::any_of(per_workload.begin(), per_workload.end(), [&](const auto& w) { return w.second >= top; });
}

}  // namespace dse
