#include "dse/io/scalesim_io.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <ostream>
#include <sstream>

#include "dse/error.hpp"
#include "dse/io/yaml_reader.hpp"

namespace dse::io {

namespace {

using costmodel::SystolicResult;

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// v, the whole of it, as an integer.
bool to_integer(const std::string& v, std::int64_t& x) {
  const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  return ec == std::errc() && p == v.data() + v.size() && !v.empty();
}

std::int64_t parse_int(const std::string& v, const std::string& file, int line, const std::string& key,
                       std::int64_t min_value, std::int64_t max_value = std::numeric_limits<std::int64_t>::max()) {
  std::int64_t x = 0;
  if (!to_integer(v, x)) throw ConfigError(file, line, 1, key, "expected an integer", excerpt(v));
  if (x < min_value) {
    throw ConfigError(file, line, 1, key, "expected an integer >= " + std::to_string(min_value), v);
  }
  if (x > max_value) {
    throw ConfigError(file, line, 1, key, "expected an integer <= " + std::to_string(max_value), v);
  }
  return x;
}

// A size in KiB, returned in KiB; refused past kMaxSramKib.
std::int64_t parse_kib(const std::string& v, const std::string& file, int line, const std::string& key) {
  return parse_int(v, file, line, key, 1, kMaxSramKib);
}

std::string format_count(double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}

// The simulator counts cycles, MACs and addresses in int64: refuse a layer whose counts
// (computed here in double) pass 2^53, beyond which they are neither exact nor safe from
// wrapping in the products the simulator forms (SCALE-Sim itself has no such limit).
void refuse_oversized_layer(const costmodel::ConvLayer& c, const std::string& file, int line) {
  const auto d = [](std::int64_t v) { return static_cast<double>(v); };
  const double ofmap_h = std::floor((d(c.ifmap_h) - d(c.filter_h)) / d(c.stride_h)) + 1.0;
  const double ofmap_w = std::floor((d(c.ifmap_w) - d(c.filter_w)) / d(c.stride_w)) + 1.0;
  const double window = d(c.filter_h) * d(c.filter_w) * d(c.channels);
  const double counts[] = {
      ofmap_h * ofmap_w * window * d(c.num_filters),  // MACs
      d(c.ifmap_h) * d(c.ifmap_w) * d(c.channels),    // ifmap words
      window * d(c.num_filters),                      // filter words
      ofmap_h * ofmap_w * d(c.num_filters),           // ofmap words
      d(c.ifmap_h) + d(c.stride_h), d(c.ifmap_w) + d(c.stride_w),
  };
  constexpr double kLimit = 9007199254740992.0;  // 2^53
  for (const double x : counts) {
    if (!(x <= kLimit)) {
      throw ConfigError(file, line, 1, "topology", "expected a layer whose MAC and word counts are at most 2^53",
                        format_count(x));
    }
  }
}

// Python's repr of a float: shortest round-trip, with ".0" on whole numbers.
std::string py_float(double x) {
  char buf[64];
  const auto [p, ec] = std::to_chars(buf, buf + sizeof buf, x);
  std::string s(buf, p);
  if (s.find_first_of(".einn") == std::string::npos) s += ".0";
  return s;
}

// The keys a SCALE-Sim config may give, by section (names lower-case).
struct ConfigKey {
  const char* section;
  const char* name;
};
constexpr ConfigKey kConfigKeys[] = {
    {"general", "run_name"},
    {"architecture_presets", "arrayheight"},
    {"architecture_presets", "arraywidth"},
    {"architecture_presets", "ifmapsramszkb"},
    {"architecture_presets", "filtersramszkb"},
    {"architecture_presets", "ofmapsramszkb"},
    {"architecture_presets", "ifmapoffset"},
    {"architecture_presets", "filteroffset"},
    {"architecture_presets", "ofmapoffset"},
    {"architecture_presets", "dataflow"},
    {"architecture_presets", "bandwidth"},
    {"architecture_presets", "memorybanks"},
    {"run_presets", "interfacebandwidth"},
};

// A [section] header line: its name, lower-case, one of the three SCALE-Sim sections.
std::string section_of(const std::string& l, const std::string& file, int line_no) {
  if (l.back() != ']') throw ConfigError(file, line_no, 1, l, "expected a [section] header", excerpt(l));
  const std::string section = lower(trim(l.substr(1, l.size() - 2)));
  if (section != "general" && section != "architecture_presets" && section != "run_presets") {
    throw ConfigError(file, line_no, 1, section,
                      "unsupported section; expected one of general, architecture_presets, run_presets",
                      excerpt(section));
  }
  return section;
}

// A key of `section` that the table lacks is refused, with the nearest key name it may have meant.
void check_config_key(const std::string& section, const std::string& key, const std::string& key_raw,
                      const std::string& file, int line_no) {
  const bool known = std::any_of(std::begin(kConfigKeys), std::end(kConfigKeys),
                                 [&](const ConfigKey& k) { return section == k.section && key == k.name; });
  if (known) return;
  std::vector<std::string> names;
  for (const auto& k : kConfigKeys) names.emplace_back(k.name);
  const std::string hint = did_you_mean(key, names);
  throw ConfigError(file, line_no, 1, section + "." + key_raw,
                    "unsupported key" + (hint.empty() ? std::string() : "; did you mean '" + hint + "'?"),
                    excerpt(key_raw));
}

// The array's dataflow (ws, os, is) and the DRAM interface's mode (CALC: unconstrained, USER:
// limited to the `Bandwidth` words per cycle), case-insensitive.
costmodel::Dataflow dataflow_of(const std::string& value, const std::string& file, int line_no,
                                const std::string& path) {
  const std::string d = lower(value);
  if (d == "ws") return costmodel::Dataflow::weight_stationary;
  if (d == "os") return costmodel::Dataflow::output_stationary;
  if (d == "is") return costmodel::Dataflow::input_stationary;
  throw ConfigError(file, line_no, 1, path, "expected ws, os or is", excerpt(value));
}
costmodel::DramBandwidthMode interface_mode_of(const std::string& value, const std::string& file, int line_no,
                                               const std::string& path) {
  const std::string m = lower(value);
  if (m == "calc") return costmodel::DramBandwidthMode::unconstrained;
  if (m == "user") return costmodel::DramBandwidthMode::limited;
  throw ConfigError(file, line_no, 1, path, "expected CALC or USER", excerpt(value));
}

// One known key's value read into the config (`path`: section.Key as the file spells it).
void apply_config_key(ScalesimConfig& c, const std::string& key, const std::string& value, const std::string& path,
                      const std::string& file, int line_no) {
  auto& a = c.array;
  if (key == "run_name") {
    c.run_name = value;
  } else if (key == "arrayheight") {
    a.rows = parse_int(value, file, line_no, path, 1, kMaxArraySide);
  } else if (key == "arraywidth") {
    a.cols = parse_int(value, file, line_no, path, 1, kMaxArraySide);
  } else if (key == "ifmapsramszkb") {
    a.ifmap_sram_bytes = 1024 * parse_kib(value, file, line_no, path);
  } else if (key == "filtersramszkb") {
    a.filter_sram_bytes = 1024 * parse_kib(value, file, line_no, path);
  } else if (key == "ofmapsramszkb") {
    a.ofmap_sram_bytes = 1024 * parse_kib(value, file, line_no, path);
  } else if (key == "ifmapoffset") {
    a.ifmap_offset = parse_int(value, file, line_no, path, 0, kMaxOffset);
  } else if (key == "filteroffset") {
    a.filter_offset = parse_int(value, file, line_no, path, 0, kMaxOffset);
  } else if (key == "ofmapoffset") {
    a.ofmap_offset = parse_int(value, file, line_no, path, 0, kMaxOffset);
  } else if (key == "dataflow") {
    a.dataflow = dataflow_of(value, file, line_no, path);
  } else if (key == "bandwidth") {
    // SCALE-Sim v2 reads a comma-separated list and gives its first figure to all three operands
    // (scale_config.py reads the list, single_layer_sim.py takes bws[0] for ifmap, filter and
    // ofmap); every figure must still be a words-per-cycle count.
    std::stringstream list(value);
    std::string item;
    bool first = true;
    while (std::getline(list, item, ',')) {
      const std::int64_t bw = parse_int(trim(item), file, line_no, path, 1);
      if (first) a.dram_words_per_cycle = bw;
      first = false;
    }
    if (first) a.dram_words_per_cycle = parse_int(value, file, line_no, path, 1);  // empty: the usual error
  } else if (key == "memorybanks") {
    if (parse_int(value, file, line_no, path, 1) != 1) {
      throw ConfigError(file, line_no, 1, path, "expected 1 (multi-bank SRAM layouts are unsupported)", value);
    }
  } else if (key == "interfacebandwidth") {
    a.bandwidth_mode = interface_mode_of(value, file, line_no, path);
  }
}

}  // namespace

ScalesimConfig parse_scalesim_config(const std::string& text, const std::string& file) {
  ScalesimConfig c;
  std::istringstream in(text);
  std::string raw;
  std::string section;
  int line_no = 0;
  bool have_run_name = false;
  while (std::getline(in, raw)) {
    ++line_no;
    const std::string l = trim(raw);
    if (l.empty() || l[0] == '#' || l[0] == ';') continue;
    if (l.front() == '[') {
      section = section_of(l, file, line_no);
      continue;
    }
    const auto sep = l.find_first_of(":=");
    if (sep == std::string::npos) throw ConfigError(file, line_no, 1, l, "expected 'key: value'", excerpt(l));
    const std::string key_raw = trim(l.substr(0, sep));
    const std::string key = lower(key_raw);
    const std::string value = trim(l.substr(sep + 1));
    if (section.empty()) throw ConfigError(file, line_no, 1, key_raw, "expected a [section] before the key", key_raw);
    check_config_key(section, key, key_raw, file, line_no);
    apply_config_key(c, key, value, section + "." + key_raw, file, line_no);
    if (key == "run_name") have_run_name = true;
  }
  if (!have_run_name || c.run_name.empty()) {
    throw ConfigError(file, 1, 1, "general.run_name", "expected a run name", "nothing");
  }
  if (c.run_name.find_first_of("/\\") != std::string::npos || c.run_name == "." || c.run_name == "..") {
    throw ConfigError(file, 1, 1, "general.run_name", "expected a plain directory name", excerpt(c.run_name));
  }
  return c;
}

ScalesimConfig read_scalesim_config(const std::string& path) {
  return parse_scalesim_config(read_text_file(path, "config"), path);
}

std::vector<ScalesimLayer> parse_scalesim_topology(const std::string& text, const std::string& file,
                                                   TopologyKind kind) {
  std::vector<ScalesimLayer> layers;
  std::istringstream in(text);
  std::string raw;
  int line_no = 0;
  const std::size_t needed = kind == TopologyKind::gemm ? 4 : 8;
  while (std::getline(in, raw)) {
    ++line_no;
    if (line_no == 1) continue;  // header
    if (trim(raw).empty()) continue;
    std::vector<std::string> f;
    std::stringstream row(raw);
    std::string cell;
    while (std::getline(row, cell, ',')) f.push_back(trim(cell));
    if (trim(raw).back() == ',') f.emplace_back();
    // SCALE-Sim reads the fields before the row's last comma (topology_utils.py: row.split(',')[:-1]):
    // what follows it, empty or a note such as "#dw" (its mobilnet_4k.csv), is not read. A row
    // that ends in a number with no comma after it is read whole.
    std::int64_t unused = 0;
    if (f.size() > 1 && !to_integer(f.back(), unused)) f.pop_back();
    while (!f.empty() && f.back().empty()) f.pop_back();
    if (f.size() < needed) {
      throw ConfigError(file, line_no, 1, "topology",
                        kind == TopologyKind::gemm ? "expected 'name, M, N, K'"
                                                   : "expected 'name, H, W, R, S, C, K, stride'",
                        std::to_string(f.size()) + " fields");
    }
    // A conv row may give the stride along the width as a ninth field (SCALE-Sim's "Stride height,
    // Stride width"; with eight, the one stride is both).
    const std::size_t most = kind == TopologyKind::gemm ? 4 : 9;
    if (f.size() > most) {
      throw ConfigError(file, line_no, 1, "topology",
                        kind == TopologyKind::gemm ? "expected 4 fields" : "expected 8 or 9 fields",
                        std::to_string(f.size()) + " fields");
    }
    ScalesimLayer layer;
    layer.name = f[0];
    auto num = [&](std::size_t i, const char* what) { return parse_int(f[i], file, line_no, what, 1); };
    if (kind == TopologyKind::gemm) {
      layer.conv = costmodel::gemm_as_conv(num(1, "M"), num(2, "N"), num(3, "K"));
    } else {
      auto& c = layer.conv;
      c.ifmap_h = num(1, "IFMAP Height");
      c.ifmap_w = num(2, "IFMAP Width");
      c.filter_h = num(3, "Filter Height");
      c.filter_w = num(4, "Filter Width");
      c.channels = num(5, "Channels");
      c.num_filters = num(6, "Num Filter");
      c.stride_h = num(7, "Strides");
      c.stride_w = f.size() > 8 ? num(8, "Stride width") : c.stride_h;
      if (c.filter_h > c.ifmap_h || c.filter_w > c.ifmap_w) {
        throw ConfigError(file, line_no, 1, "topology", "expected a filter no larger than the ifmap",
                          std::to_string(c.filter_h) + "x" + std::to_string(c.filter_w));
      }
    }
    refuse_oversized_layer(layer.conv, file, line_no);
    // SCALE-Sim's depthwise layers: a conv row whose name contains "DP" runs as one layer of one
    // channel per channel, named <name>Channel_<i> (topology_utils.py load_arrays_conv).
    if (kind == TopologyKind::conv && layer.name.find("DP") != std::string::npos) {
      const std::int64_t channels = layer.conv.channels;
      if (channels > kMaxDepthwiseChannels) {
        throw ConfigError(file, line_no, 1, "topology",
                          "expected at most " + std::to_string(kMaxDepthwiseChannels) +
                              " channels in a depthwise (DP) layer, each of which runs as a layer",
                          std::to_string(channels));
      }
      if (static_cast<std::int64_t>(layers.size()) + channels > kMaxTopologyLayers) {
        throw ConfigError(file, line_no, 1, "topology",
                          "expected at most " + std::to_string(kMaxTopologyLayers) +
                              " layers in all, depthwise (DP) rows counting one per channel",
                          std::to_string(static_cast<std::int64_t>(layers.size()) + channels));
      }
      layer.conv.channels = 1;
      for (std::int64_t ch = 0; ch < channels; ++ch) {
        layers.push_back({layer.name + "Channel_" + std::to_string(ch), layer.conv});
      }
      continue;
    }
    layers.push_back(layer);
  }
  if (layers.empty()) throw ConfigError(file, 1, 1, "topology", "expected at least one layer", "none");
  return layers;
}

std::vector<ScalesimLayer> read_scalesim_topology(const std::string& path, TopologyKind kind) {
  return parse_scalesim_topology(read_text_file(path, "topology"), path, kind);
}

void write_compute_report(std::ostream& out, const std::vector<SystolicResult>& layers) {
  out << "LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, Compute Util %,\n";
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const auto& r = layers[i];
    out << i << ", " << r.total_cycles << ", " << r.stall_cycles << ", " << py_float(r.overall_util_pct) << ", "
        << py_float(r.mapping_eff_pct) << ", " << py_float(r.compute_util_pct) << ",\n";
  }
}

void write_bandwidth_report(std::ostream& out, const std::vector<SystolicResult>& layers) {
  out << "LayerID, Avg IFMAP SRAM BW, Avg FILTER SRAM BW, Avg OFMAP SRAM BW, Avg IFMAP DRAM BW, "
         "Avg FILTER DRAM BW, Avg OFMAP DRAM BW,\n";
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const auto& r = layers[i];
    out << i << ", " << py_float(r.avg_sram_ifmap_bw()) << ", " << py_float(r.avg_sram_filter_bw()) << ", "
        << py_float(r.avg_sram_ofmap_bw()) << ", " << py_float(r.avg_dram_ifmap_bw()) << ", "
        << py_float(r.avg_dram_filter_bw()) << ", " << py_float(r.avg_dram_ofmap_bw()) << ",\n";
  }
}

void write_detailed_access_report(std::ostream& out, const std::vector<SystolicResult>& layers) {
  out << "LayerID, SRAM IFMAP Start Cycle, SRAM IFMAP Stop Cycle, SRAM IFMAP Reads, SRAM Filter Start Cycle, "
         "SRAM Filter Stop Cycle, SRAM Filter Reads, SRAM OFMAP Start Cycle, SRAM OFMAP Stop Cycle, SRAM OFMAP "
         "Writes, DRAM IFMAP Start Cycle, DRAM IFMAP Stop Cycle, DRAM IFMAP Reads, DRAM Filter Start Cycle, DRAM "
         "Filter Stop Cycle, DRAM Filter Reads, DRAM OFMAP Start Cycle, DRAM OFMAP Stop Cycle, DRAM OFMAP Writes,\n";
  auto cyc = [](std::int64_t c) { return std::to_string(c) + ".0"; };
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const auto& r = layers[i];
    out << i << ", " << cyc(r.sram_ifmap_start) << ", " << cyc(r.sram_ifmap_stop) << ", " << r.sram_ifmap_reads
        << ", " << cyc(r.sram_filter_start) << ", " << cyc(r.sram_filter_stop) << ", " << r.sram_filter_reads << ", "
        << cyc(r.sram_ofmap_start) << ", " << cyc(r.sram_ofmap_stop) << ", " << r.sram_ofmap_writes << ", "
        << cyc(r.dram_ifmap_start) << ", " << cyc(r.dram_ifmap_stop) << ", " << r.dram_ifmap_reads << ", "
        << cyc(r.dram_filter_start) << ", " << cyc(r.dram_filter_stop) << ", " << r.dram_filter_reads << ", "
        << cyc(r.dram_ofmap_start) << ", " << cyc(r.dram_ofmap_stop) << ", " << r.dram_ofmap_writes << ",\n";
  }
}

std::string run_scalesim(const ScalesimConfig& config, const std::vector<ScalesimLayer>& layers,
                         const std::string& outdir, std::vector<SystolicResult>* results) {
  std::vector<SystolicResult> res;
  res.reserve(layers.size());
  for (const auto& l : layers) res.push_back(costmodel::simulate_scalesim(config.array, l.conv));
  const std::filesystem::path dir = std::filesystem::path(outdir) / config.run_name;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw IoError("cannot create " + dir.string() + ": " + ec.message());
  auto write = [&](const char* name, void (*fn)(std::ostream&, const std::vector<SystolicResult>&)) {
    const auto p = dir / name;
    std::ofstream f(p);
    if (!f) throw IoError("cannot write " + p.string());
    fn(f, res);
    f.flush();
    if (!f) throw IoError("error writing " + p.string());
  };
  write("COMPUTE_REPORT.csv", write_compute_report);
  write("BANDWIDTH_REPORT.csv", write_bandwidth_report);
  write("DETAILED_ACCESS_REPORT.csv", write_detailed_access_report);
  if (results != nullptr) *results = std::move(res);
  return dir.string();
}

}  // namespace dse::io
