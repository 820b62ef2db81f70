// The calls behind fuzz_results and fuzz_run (issue 58), shared with tests/fuzz_regressions like
// fuzz_readers.hpp: each either returns or throws dse::Error; anything else escaping is a bug.
//
//  - read_result_file: a result file built from the input -- which fields of the point record the
//    tables hold and in which type, the rows' bytes, the layout version -- read back by
//    read_results and read_archive_rows, shortlisted and written in the three formats. The file is
//    made with the HDF5 API (well-formed HDF5): the target fuzzes the readers' checks of layout and
//    figures, not HDF5's own parser of file bytes.
//  - run_scenario: the input as a scenario, through the whole of `dse run` on one rank (local
//    context: parse, the output checks and lock, the evaluation, checkpoints, merge, final write,
//    compression, rename) and read back. Spaces of more than 64 points, and inputs whose work is
//    large (systolic layers past 2^22 MACs, served models past 16 requests or 4,096 tokens), are
//    skipped: the fuzzer's time goes to the paths of the run, not to sweeps.
#pragma once

#include <hdf5.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

#include "dse/driver/context.hpp"
#include "dse/driver/run.hpp"
#include "dse/error.hpp"
#include "dse/h5/h5.hpp"
#include "dse/h5/results.hpp"
#include "dse/h5/shortlist.hpp"
#include "fuzz/fuzz_readers.hpp"

namespace dse::fuzz {

class NullBuffer : public std::streambuf {
 protected:
  int overflow(int c) override { return c; }
  std::streamsize xsputn(const char* /*s*/, std::streamsize n) override { return n; }
};

// Reads a result file as `dse shortlist` and `dse report` do, and writes its shortlist.
inline void read_back(const std::string& path, const std::uint8_t* data, std::size_t size) {
  (void)dse::read_results(path);
  const std::vector<PointRecord> rows = read_archive_rows(path);
  Budgets b;
  if (size > 0 && (data[0] & 1) != 0) b.power_w = 100.0;
  if (size > 0 && (data[0] & 2) != 0) b.p99_latency_s = 1e-3;
  NullBuffer sink;
  std::ostream out(&sink);
  for (const auto format : {ShortlistFormat::table, ShortlistFormat::csv, ShortlistFormat::json}) {
    const std::size_t top = size > 1 ? data[1] % 4 : 0;
    write_shortlist(rows, shortlist(rows, b, default_objectives(), top), b, default_objectives(), format, out,
                    read_result_names(path), top);
  }
}

// The input: byte 0, 1 and 2 pick up to three fields of the record to leave out (a value past the
// field count leaves none), byte 3 a field stored as a 32-bit integer instead, byte 4 the layout
// version (2 unless it is 0xFF), byte 5 the rows (0-63); the rest fills the rows' bytes.
inline void read_result_file(const std::uint8_t* data, std::size_t size) {
  if (size < 6) return;
  static const std::string path = scratch_path("_results.h5");
  const h5::Handle record = point_record_type();
  const int fields = H5Tget_nmembers(record);
  std::vector<std::pair<std::string, h5::Handle>> members;
  std::size_t row_bytes = 0;
  for (int i = 0; i < fields; ++i) {
    if (i == data[0] || i == data[1] || i == data[2]) continue;
    char* name = H5Tget_member_name(record, static_cast<unsigned>(i));
    h5::Handle t(i == data[3] ? H5Tcopy(H5T_NATIVE_INT32) : H5Tget_member_type(record, static_cast<unsigned>(i)), H5Tclose);
    row_bytes += H5Tget_size(t);
    members.emplace_back(name, std::move(t));
    H5free_memory(name);
  }
  h5::Handle type(H5Tcreate(H5T_COMPOUND, std::max<std::size_t>(row_bytes, 1)), H5Tclose);
  std::size_t at = 0;
  for (const auto& [name, t] : members) {
    H5Tinsert(type, name.c_str(), at, t);
    at += H5Tget_size(t);
  }
  const std::size_t rows = data[5] % 64;
  std::vector<unsigned char> bytes(rows * row_bytes, 0);
  if (!bytes.empty()) std::memcpy(bytes.data(), data + 6, std::min(bytes.size(), size - 6));
  h5::quiet_errors();
  {
    const h5::Handle f = h5::create_file(path, {});
    h5::write_attribute(f, "layout_version", data[4] == 0xFF ? std::int64_t{99} : kResultsLayoutVersion);
    for (const char* s : {"scenario", "scenario_file", "version", "start_time", "store"})
      h5::write_attribute(f, s, std::string("fuzz"));
    for (const char* n : {"seed", "ranks", "threads", "complete"}) h5::write_attribute(f, n, std::int64_t{1});
    for (const char* name : {"archive", "points"}) {
      const h5::Handle ds = h5::create_dataset_1d(f, name, type, rows);
      h5::write_rows(ds, type, bytes.data(), 0, rows, false);
    }
    const h5::Handle par = h5::create_dataset_1d(f, "pareto", H5T_STD_U64LE, 0);
  }
  read_back(path, data, size);
}

// Whether `s` is small enough to run whole (see the file's comment).
inline bool tiny(const Scenario& s) {
  if (design_space(s).size() > 64) return false;
  bool systolic = false;
  for (const auto& h : s.hardware) systolic = systolic || h.kind == HardwareKind::systolic;
  std::int64_t batch = 1;
  for (const auto b : s.batch_sizes) batch = std::max(batch, b);
  for (const auto& w : s.workloads) {
    if (w.model && (w.model->requests > 16 || w.model->prompt_tokens + w.model->output_tokens > 4096)) return false;
    double macs = 0.0;
    for (const auto& l : w.layers) {
      macs += static_cast<double>(batch) *
              (l.kind == costmodel::LayerKind::gemm ? static_cast<double>(l.rows_per_sample) * static_cast<double>(l.n) *
                                                          static_cast<double>(l.k)
                                                    : static_cast<double>(l.elements_per_sample));
    }
    if (systolic && macs > 4194304.0) return false;  // 2^22
  }
  return true;
}

inline void run_scenario(const std::uint8_t* data, std::size_t size) {
  const std::string text = as_text(data, size);
  const Scenario s = parse_scenario(text, "fuzz.yaml");
  if (!tiny(s)) return;
  static const std::string dir = scratch_path("_run");
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  std::filesystem::create_directories(dir);
  const std::string scenario = dir + "/scenario.yaml";
  write_file(scenario, text);
  RunOptions o;
  o.scenario_path = scenario;
  o.output_path = dir + "/out.h5";
  o.threads = 1;
  o.progress = false;
  o.store = size % 3 == 0 ? Store::archive : Store::all;
  auto ctx = make_local_context();
  (void)run(*ctx, o);
  read_back(o.output_path, data, size);
}

}  // namespace dse::fuzz
