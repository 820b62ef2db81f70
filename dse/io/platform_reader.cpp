#include "dse/io/platform_reader.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "dse/io/gpu_hardware_reader.hpp"
#include "dse/io/yaml_reader.hpp"

#ifndef DSE_SCENARIOS_DIR
#define DSE_SCENARIOS_DIR "scenarios"
#endif

namespace dse::io {

namespace pf = dse::costmodel::platform;
namespace sys = dse::costmodel::system;
namespace fs = std::filesystem;

std::string scenarios_dir() {
  if (const char* e = std::getenv("DSE_SCENARIOS_DIR"); e != nullptr && *e != '\0') return e;
  return DSE_SCENARIOS_DIR;
}

std::vector<std::string> preset_names(const std::string& sub) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(scenarios_dir()) / sub, ec))
    if (e.path().extension() == ".yaml") out.push_back(e.path().stem().string());
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

const std::vector<std::string> kSystemKeys = {"kind", "name",  "chip", "chips", "interconnect",
                                              "power", "host", "stack", "cost"};

bool is_top_key(const std::string& line, const std::string& key) {
  return line.rfind(key + ":", 0) == 0;
}

// The text with the top-level sections `names` blanked (line numbers kept).
std::string without_sections(const std::string& text, const std::vector<std::string>& names) {
  std::istringstream in(text);
  std::string line, out;
  bool skipping = false;
  while (std::getline(in, line)) {
    const bool top = !line.empty() && line[0] != ' ' && line[0] != '#' && line[0] != '\t';
    if (top) {
      skipping = false;
      for (const auto& n : names)
        if (is_top_key(line, n)) skipping = true;
    }
    out += skipping ? std::string() : line;
    out += '\n';
  }
  return out;
}

// The keys read_links reads, and a mapping's own keys beside them.
std::vector<std::string> link_keys(std::initializer_list<const char*> own = {}) {
  std::vector<std::string> keys(own.begin(), own.end());
  for (const char* k : {"link_bandwidth_bytes_per_s", "link_latency_s", "links", "achievable_fraction"})
    keys.emplace_back(k);
  return keys;
}

// A chip's links (bandwidth, latency, count, achievable fraction) from a mapping whose reader
// allows link_keys().
sys::Interconnect read_links(const MapReader& m) {
  sys::Interconnect ic = sys::make_switch(1, m.positive("link_bandwidth_bytes_per_s"),
                                          m.non_negative_or("link_latency_s", 0.0),
                                          m.positive_int_or("links", 1));
  if (m.has("achievable_fraction")) ic.achievable_fraction = m.positive_fraction("achievable_fraction");
  return ic;
}

sys::Interconnect read_links(const YAML::Node& n, const Place& at) {
  return read_links(MapReader(n, at, link_keys()));
}

}  // namespace

namespace {

// `confidence:` of an energy section: each figure's source tag (P primary, S secondary, D derived,
// R recalled or assumed), keys among `figures`; the names of those tagged R.
std::vector<std::string> read_confidence(const MapReader& e, const std::vector<std::string>& figures) {
  const MapReader c(e.node("confidence"), e.place("confidence"), figures);
  std::vector<std::string> recalled;
  for (const auto& f : figures) {
    if (!c.has(f)) continue;
    const std::string tag = c.string(f);
    if (tag != "P" && tag != "S" && tag != "D" && tag != "R")
      fail(c.place(f), c.node(f), "expected P, S, D or R (the figure's source tag)", tag);
    if (tag == "R") recalled.push_back(f);
  }
  return recalled;
}

// The `energy:` and `platform:` sections of `root` (a hardware file or its sidecar).
void read_sections(const YAML::Node& root, const std::string& file, pf::Platform& p) {
  const Place top{file, ""};
  if (root["energy"]) {
    const std::vector<std::string> figures{"matrix_flop_fp32_j", "matrix_flop_fp16_j", "matrix_flop_int8_j",
                                           "vector_flop_j",      "hbm_byte_j",         "l2_byte_j",
                                           "static_power_w",     "tdp_w",              "process_nm"};
    std::vector<std::string> keys = figures;
    keys.emplace_back("confidence");
    MapReader e(root["energy"], top.child("energy"), keys);
    p.energy.matrix_flop_fp32_j = e.non_negative("matrix_flop_fp32_j");
    p.energy.matrix_flop_fp16_j = e.non_negative("matrix_flop_fp16_j");
    p.energy.matrix_flop_int8_j = e.non_negative("matrix_flop_int8_j");
    p.energy.vector_flop_j = e.non_negative("vector_flop_j");
    p.energy.hbm_byte_j = e.non_negative("hbm_byte_j");
    p.energy.l2_byte_j = e.non_negative_or("l2_byte_j", 0.0);
    p.energy.static_power_w = e.non_negative("static_power_w");
    p.energy.tdp_w = e.non_negative("tdp_w");
    if (e.has("process_nm")) p.process_nm = e.positive("process_nm");
    p.energy.recalled_figures.clear();
    if (e.has("confidence")) p.energy.recalled_figures = read_confidence(e, figures);
  }
  if (root["platform"]) {
    MapReader m(root["platform"], top.child("platform"),
                {"graph_kernel_overhead_s", "stack_maturity", "fusions", "links"});
    p.graph_kernel_overhead_s = m.non_negative_or("graph_kernel_overhead_s", 0.0);
    if (m.has("stack_maturity")) p.stack_maturity = m.fraction("stack_maturity");
    if (m.has("fusions")) {
      p.supported_fusions.clear();
      const YAML::Node seq = m.sequence("fusions");
      for (std::size_t i = 0; i < seq.size(); ++i) {
        const Place at = m.place("fusions").item(i);
        const std::string s = as_string(seq[i], at);
        const auto f = pf::fusion_kind_from_string(s);
        if (!f) fail(at, seq[i], "expected " + pf::fusion_kind_names(), s);
        p.supported_fusions.push_back(*f);
      }
    }
    if (m.has("links")) p.links = read_links(m.node("links"), m.place("links"));
  }
  if (root["area"]) {  // the die area of one chip, all of its dies (docs/hardware-guide.md)
    const MapReader a(root["area"], top.child("area"), {"die_area_mm2", "confidence"});
    p.die_area_mm2 = a.non_negative("die_area_mm2");
    if (a.has("confidence")) (void)read_confidence(a, {"die_area_mm2"});
  }
}

}  // namespace

pf::Platform parse_platform(const std::string& text, const std::string& file) {
  pf::Platform p;
  p.gpu = parse_gpu_hardware(without_sections(text, {"energy", "platform", "area"}), file);
  p.links = sys::make_switch(1, 1e11, 1e-6, 1);
  read_sections(parse_yaml(text, file), file, p);
  return p;
}

pf::Platform load_platform(const std::string& path) {
  pf::Platform p = parse_platform(read_text_file(path, "hardware file"), path);
  if (const std::string file = platform_sidecar_path(path); !file.empty()) {
    read_platform_sidecar(parse_yaml(read_text_file(file, "platform file"), file), file, p);
  }
  return p;
}

std::string platform_sidecar_path(const std::string& path) {
  const fs::path side = fs::path(path).parent_path() / "platform" / fs::path(path).filename();
  std::error_code ec;
  return fs::exists(side, ec) ? side.string() : std::string();
}

void read_platform_sidecar(const YAML::Node& root, const std::string& file, pf::Platform& p) {
  const MapReader check(root, Place{file, ""}, {"energy", "platform", "area"});
  read_sections(root, file, p);
}

namespace {
// fs::exists without the exception: a name the system cannot look up (one past NAME_MAX, say)
// is one that does not exist, and the caller says what was expected.
bool exists_quietly(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

std::string resolve_path(const std::string& name_or_path, const std::string& sub) {
  const fs::path preset = fs::path(scenarios_dir()) / sub / (name_or_path + ".yaml");
  if (name_or_path.find('/') == std::string::npos && name_or_path.find(".yaml") == std::string::npos &&
      exists_quietly(preset))
    return preset.string();
  return name_or_path;
}

// The preset names a mistyped one may have meant: those it begins (a family name such as
// "h100" or "a100", at most four), else the nearest by edit distance ("h100" is one edit from
// "h200", so the prefix goes first).
std::string preset_hint(const std::string& name, const std::vector<std::string>& names) {
  std::string out;
  int n = 0;
  for (const auto& c : names)
    if (c.size() > name.size() && c.compare(0, name.size(), name) == 0 && n++ < 4)
      out += (out.empty() ? "'" : ", '") + c + "'";
  if (!out.empty()) return out;
  const std::string near = did_you_mean(name, names);
  return near.empty() ? near : "'" + near + "'";
}

std::string resolve_preset_or_file(const std::string& name_or_path, const std::string& sub,
                                   const std::string& what) {
  if (const std::string why = unknown_preset(name_or_path, sub); !why.empty())
    throw ConfigError(name_or_path, 1, 1, what, why, "\"" + name_or_path + "\"");
  return resolve_path(name_or_path, sub);
}
}  // namespace

std::string unknown_preset(const std::string& name_or_path, const std::string& sub) {
  return unknown_preset(name_or_path, std::vector<std::string>{sub});
}

std::string unknown_preset(const std::string& name_or_path, const std::vector<std::string>& subs) {
  const bool bare = name_or_path.find('/') == std::string::npos && name_or_path.find(".yaml") == std::string::npos;
  if (!bare || exists_quietly(name_or_path)) return {};
  std::vector<std::string> names;
  std::string where;
  for (const auto& sub : subs) {
    if (resolve_path(name_or_path, sub) != name_or_path) return {};
    const auto more = preset_names(sub);
    names.insert(names.end(), more.begin(), more.end());
    where += (where.empty() ? "" : " or ") + sub;
  }
  const std::string hint = name_or_path.empty() ? std::string() : preset_hint(name_or_path, names);
  return "expected a preset of " + where + " ('dse presets') or a readable file" +
         (hint.empty() ? std::string() : ", did you mean " + hint + "?");
}

std::string preset_at(const MapReader& m, const std::string& key, const std::string& sub) {
  const std::string name = m.string(key);
  if (const std::string why = unknown_preset(name, sub); !why.empty())
    fail(m.place(key), m.node(key), why, "\"" + name + "\"");
  return name;
}

std::string resolve_hardware_path(const std::string& name_or_path) {
  return resolve_preset_or_file(name_or_path, "hardware", "hardware");
}

std::string resolve_system_path(const std::string& name_or_path) {
  return resolve_preset_or_file(name_or_path, "systems", "system");
}

pf::Platform resolve_platform(const std::string& name_or_path) {
  return load_platform(resolve_hardware_path(name_or_path));
}

std::string resolve_loopnest_hardware_path(const std::string& name_or_path) {
  const std::string research = resolve_path(name_or_path, "hardware/research");
  return research != name_or_path ? research : resolve_path(name_or_path, "hardware");
}

namespace {

// A second level: nodes of chips_per_node on the switch above, or copies of the torus
// above (each `dims`, TPU slices), joined by a network in which every chip has its own
// port (collectives.hpp, ScaleOut).
void read_scale_out(const MapReader& ic, const std::string& topo, bool torus_nodes, int chips, sys::Interconnect& out) {
  MapReader so(ic.node("scale_out"), ic.place("scale_out"), link_keys({"chips_per_node"}));
  if (topo == "ring")  // a ring file's chips are its one ring (no dims of one node)
    fail(ic.place("topology"), ic.node("topology"),
         "expected switch, torus_2d or torus_3d (the nodes of a scale_out system)", topo);
  const sys::Interconnect ports = read_links(so);  // one chip's port, read as a chip's links are
  sys::ScaleOut& out_so = out.scale_out;
  out_so.chips_per_node = so.positive_int("chips_per_node");
  if (chips % out_so.chips_per_node != 0)
    fail(so.place("chips_per_node"), so.node("chips_per_node"),
         "expected a divisor of chips = " + std::to_string(chips), std::to_string(out_so.chips_per_node));
  if (torus_nodes) {
    const int node = sys::chip_count(out);  // one node's dims, before nodes is set
    if (node != out_so.chips_per_node)
      fail(so.place("chips_per_node"), so.node("chips_per_node"),
           "expected the product of dims (one node's " + topo + ") = " + std::to_string(node),
           std::to_string(out_so.chips_per_node));
    out_so.nodes = chips / out_so.chips_per_node;
  }
  out_so.link_bandwidth_bytes_per_s = ports.link_bandwidth_bytes_per_s;
  out_so.link_latency_s = ports.link_latency_s;
  out_so.links = ports.links;
  out_so.achievable_fraction = ports.achievable_fraction;
}

sys::Interconnect read_system_interconnect(const MapReader& m, int chips) {
  MapReader ic(m.node("interconnect"), m.place("interconnect"), link_keys({"topology", "dims", "scale_out"}));
  const std::string topo = ic.string("topology");
  std::array<int, 3> dims{chips, 1, 1};
  if (ic.has("dims")) {
    const YAML::Node dn = ic.sequence("dims");
    if (dn.size() > 3) fail(ic.place("dims"), dn, "expected 1 to 3 dimensions", describe(dn));
    for (std::size_t i = 0; i < dn.size(); ++i)
      dims[i] = as_positive_int(dn[i], ic.place("dims").item(i));
  }
  const double bw = ic.positive("link_bandwidth_bytes_per_s");
  const double lat = ic.non_negative_or("link_latency_s", 0.0);
  const int links = ic.positive_int_or("links", 1);
  sys::Interconnect out;
  if (topo == "switch") out = sys::make_switch(chips, bw, lat, links);
  else if (topo == "ring") out = sys::make_ring(chips, bw, lat, links);
  else if (topo == "torus_2d" || topo == "torus_3d") {
    out = sys::make_torus(dims, bw, lat, links);
    out.topology = topo == "torus_2d" ? sys::Topology::torus_2d : sys::Topology::torus_3d;
  } else {
    fail(ic.place("topology"), ic.node("topology"), "expected switch, ring, torus_2d or torus_3d", topo);
  }
  if (ic.has("achievable_fraction")) out.achievable_fraction = ic.positive_fraction("achievable_fraction");
  const bool torus_nodes = ic.has("scale_out") && topo != "switch";
  if (!torus_nodes && sys::chip_count(out) != chips)
    fail(ic.place("dims"), ic.self(), "expected dims whose product is chips = " + std::to_string(chips),
         std::to_string(sys::chip_count(out)));
  if (ic.has("scale_out")) read_scale_out(ic, topo, torus_nodes, chips, out);
  return out;
}

sys::PowerSpec read_system_power(const MapReader& m, const pf::Platform& chip) {
  sys::PowerSpec p;
  p.tdp_w = chip.energy.tdp_w;
  p.static_power_w = chip.energy.static_power_w;
  p.min_clock_fraction = 0.3;
  if (!m.has("power")) return p;
  MapReader pw(m.node("power"), m.place("power"), {"tdp_w", "static_power_w", "dvfs", "min_clock_fraction"});
  p.tdp_w = pw.non_negative_or("tdp_w", p.tdp_w);
  p.static_power_w = pw.non_negative_or("static_power_w", p.static_power_w);
  if (pw.has("min_clock_fraction")) p.min_clock_fraction = pw.fraction("min_clock_fraction");
  const std::string dv = pw.string_or("dvfs", "voltage_and_frequency");
  if (dv == "frequency_only") p.rule = sys::DvfsRule::frequency_only;
  else if (dv != "voltage_and_frequency")
    fail(pw.place("dvfs"), pw.node("dvfs"), "expected frequency_only or voltage_and_frequency", dv);
  return p;
}

// The host: everything at the wall besides the accelerators (costmodel/system/power.hpp).
sys::HostPower read_host_power(const MapReader& m) {
  sys::HostPower h;
  if (!m.has("host")) return h;
  MapReader hr(m.node("host"), m.place("host"),
               {"cpus_w", "memory_w", "nics_w", "switches_w", "storage_w", "fans_w", "other_w", "psu_efficiency",
                "max_wall_w"});
  h.cpus_w = hr.non_negative_or("cpus_w", 0.0);
  h.memory_w = hr.non_negative_or("memory_w", 0.0);
  h.nics_w = hr.non_negative_or("nics_w", 0.0);
  h.switches_w = hr.non_negative_or("switches_w", 0.0);
  h.storage_w = hr.non_negative_or("storage_w", 0.0);
  h.other_w = hr.non_negative_or("other_w", 0.0);
  h.fans_w = hr.non_negative_or("fans_w", 0.0);
  if (hr.has("psu_efficiency")) h.psu_efficiency = hr.positive_fraction("psu_efficiency");
  h.max_wall_w = hr.non_negative_or("max_wall_w", 0.0);
  return h;
}

// The price (costmodel/system/cost.hpp): an owned system's module and per-chip host prices, or
// a rented one's price per chip-hour; each figure's source tag in `confidence:`.
sys::SystemPrice read_system_price(const MapReader& m) {
  sys::SystemPrice price;
  if (!m.has("cost")) return price;
  const std::vector<std::string> figures{"chip_usd", "host_usd_per_chip", "rental_usd_per_chip_hour"};
  std::vector<std::string> keys = figures;
  keys.emplace_back("confidence");
  const MapReader c(m.node("cost"), m.place("cost"), keys);
  if (c.has("rental_usd_per_chip_hour")) {
    for (const char* k : {"chip_usd", "host_usd_per_chip"})
      if (c.has(k))
        fail(c.place(k), c.node(k), "a rented system (rental_usd_per_chip_hour) has no purchase price: leave out " +
                                        std::string(k), describe(c.node(k)));
    price.rental_usd_per_chip_hour = c.positive("rental_usd_per_chip_hour");
  } else {
    price.chip_usd = c.non_negative("chip_usd");
    price.host_usd_per_chip = c.non_negative_or("host_usd_per_chip", 0.0);
  }
  if (c.has("confidence")) (void)read_confidence(c, figures);
  return price;
}

}  // namespace

sys::ServingStack load_stack(const std::string& path) {
  const std::string text = read_text_file(path, "serving stack file");
  const YAML::Node root = parse_yaml(text, path);
  MapReader m(root, Place{path, ""},
              {"kind", "name", "step_overhead_s", "per_sequence_overhead_s", "tp_all_reduce", "tp_all_reduce_max_bytes"});
  if (m.string("kind") != "serving_stack")
    fail(m.place("kind"), m.node("kind"), "expected serving_stack", m.string("kind"));
  sys::ServingStack st;
  st.name = m.string("name");
  st.file = path;
  st.step_s = m.non_negative_or("step_overhead_s", 0.0);
  st.per_sequence_s = m.non_negative_or("per_sequence_overhead_s", 0.0);
  const std::string ar = m.string_or("tp_all_reduce", "library");
  if (ar != "library" && ar != "custom")
    fail(m.place("tp_all_reduce"), m.node("tp_all_reduce"), "expected one of library, custom", ar);
  st.tp_all_reduce = ar == "custom" ? sys::AllReduceKernel::custom : sys::AllReduceKernel::library;
  st.tp_all_reduce_max_bytes = m.non_negative_or("tp_all_reduce_max_bytes", 0.0);
  return st;
}

sys::ServingStack resolve_stack(const std::string& name_or_path) {
  if (name_or_path == "none") return sys::ServingStack{};
  return load_stack(resolve_preset_or_file(name_or_path, "stacks", "serving stack"));
}

SystemFile load_system(const std::string& path) {
  return read_system(parse_yaml(read_text_file(path, "system file"), path), path, nullptr);
}

std::string system_chip_name(const YAML::Node& root, const std::string& path) {
  const MapReader m(root, Place{path, ""}, kSystemKeys);
  return preset_at(m, "chip", "hardware");
}

SystemFile read_system(const YAML::Node& root, const std::string& path, const pf::Platform* chip) {
  const Place top{path, ""};
  MapReader m(root, top, kSystemKeys);
  if (m.string("kind") != "system") fail(m.place("kind"), m.node("kind"), "expected system", m.string("kind"));
  SystemFile out;
  out.file = path;
  out.chip_name = preset_at(m, "chip", "hardware");
  out.chip = chip != nullptr ? *chip : resolve_platform(out.chip_name);
  pf::SystemSpec& s = out.system;
  s.name = m.string("name");
  s.chips = m.positive_int("chips");
  s.interconnect = read_system_interconnect(m, s.chips);
  s.power = read_system_power(m, out.chip);
  s.host = read_host_power(m);
  s.price = read_system_price(m);
  if (m.has("stack")) {
    const std::string st = m.string("stack");
    if (st != "none") {
      if (const std::string why = unknown_preset(st, "stacks"); !why.empty()) fail(m.place("stack"), m.node("stack"), why, st);
    }
    s.default_stack = resolve_stack(st);
  }
  return out;
}

SystemFile resolve_system(const std::string& name_or_path) { return load_system(resolve_system_path(name_or_path)); }

}  // namespace dse::io
