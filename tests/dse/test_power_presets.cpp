// The shipped systems' power at the wall and the platform files' power confidence tags:
// every system with a published maximum stays within it with all its chips at their TDP, the
// DGX H100's wall at full load is the measured maximum its fan figure was derived from, and a
// `confidence:` map is read (its R figures) or refused with its place.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "dse/error.hpp"
#include "dse/io/platform_reader.hpp"
#include "dse/io/yaml_reader.hpp"
#include "tests/scratch.hpp"

namespace dse {
namespace {

namespace sys = costmodel::system;

double full_load_wall_w(const io::SystemFile& s) {
  const double full = s.system.chips * s.system.power.tdp_w;
  return sys::wall_power(s.system.host, full, 0.0, full).wall_w;
}

// Every system preset with a host: its wall with every chip at the TDP stays within the published
// maximum (where one is given), and its parts are there (a host without a power-supply efficiency
// below 1 or without fans is a host that was not filled in).
TEST(PowerPresets, SystemsStayWithinTheirPublishedMaximum) {
  int with_max = 0;
  for (const auto& name : io::preset_names("systems")) {
    const io::SystemFile s = io::resolve_system(name);
    const sys::HostPower& h = s.system.host;
    if (h.parts_w() == 0.0) continue;  // no host section (the TPU systems: nothing published)
    EXPECT_GT(h.fans_w, 0.0) << name;
    EXPECT_LT(h.psu_efficiency, 1.0) << name;
    if (h.max_wall_w > 0.0) {
      ++with_max;
      EXPECT_LE(full_load_wall_w(s), h.max_wall_w) << name;
    }
  }
  // dgx-h100-8, hgx-h200-8, hgx-h200-8-maxq, dgx-a100-8, dgx-a100-40gb-8, dgx-a100-pod
  EXPECT_EQ(with_max, 6);
}

// dgx-h100-8.yaml derives fans_w from the measured maximum of an 8x H100 node (~8.4 kW, Latif et al.
// 2024) taken as the wall at full load: (8 x 700 + 1,780 + 600) / 0.95 = 8,400 W, below the 10.2 kW rating.
// The MaxQ variant (500 W caps, fans scaled by the cube of the heat): (8 x 500 + 1,780 + 288) / 0.95 = 6,387 W.
TEST(PowerPresets, DgxH100FullLoadIsTheMeasuredMaximum) {
  EXPECT_NEAR(full_load_wall_w(io::resolve_system("dgx-h100-8")), 8400.0, 1e-6);
  EXPECT_NEAR(full_load_wall_w(io::resolve_system("hgx-h200-8-maxq")), (8 * 500.0 + 1780.0 + 288.0) / 0.95, 1e-6);
}

// The platform files' tags: the R figures are read, the others not kept.
TEST(PowerPresets, ConfidenceTagsNameTheRecalledFigures) {
  using V = std::vector<std::string>;
  EXPECT_EQ(io::resolve_platform("h200").energy.recalled_figures, V{});
  EXPECT_EQ(io::resolve_platform("gaudi2").energy.recalled_figures, (V{"matrix_flop_fp16_j", "matrix_flop_int8_j"}));
  EXPECT_EQ(io::resolve_platform("tpu-v5e").energy.recalled_figures,
            (V{"matrix_flop_fp16_j", "matrix_flop_int8_j", "hbm_byte_j", "static_power_w", "tdp_w"}));
}

// The H200's hardware file with an inline energy section whose `confidence:` is the given map (its
// line is the file's last); the one-line error loading it gives, from LINE:COL on.
std::string platform_error(const std::string& confidence, int* line) {
  std::string text = io::read_text_file(std::string(DSE_SOURCE_DIR) + "/scenarios/hardware/h200.yaml", "hardware");
  if (!text.empty() && text.back() != '\n') text += '\n';
  text +=
      "energy:\n  matrix_flop_fp32_j: 1e-12\n  matrix_flop_fp16_j: 1e-12\n  matrix_flop_int8_j: 1e-12\n"
      "  vector_flop_j: 1e-12\n  hbm_byte_j: 1e-11\n  static_power_w: 10\n  tdp_w: 100\n  confidence: " +
      confidence + "\n";
  *line = static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  const std::string path = test::write_scratch_file("conf.yaml", text);
  try {
    (void)io::load_platform(path);
  } catch (const Error& e) {
    const std::string m = e.what();
    return m.substr(m.find(".yaml:") + 6);  // without the scratch folder's path
  }
  return "(no error)";
}

TEST(PowerPresets, BadConfidenceIsRefusedAtItsKey) {
  int line = 0;
  const std::string got = platform_error("{tdp_w: X}", &line);
  // "  confidence: {tdp_w: X}": the value X is column 23.
  EXPECT_EQ(got, std::to_string(line) +
                     ":23: energy.confidence.tdp_w: expected P, S, D or R (the figure's source tag) (got X)");
  EXPECT_NE(platform_error("{watts: R}", &line).find("energy.confidence.watts"), std::string::npos);
  EXPECT_EQ(platform_error("{tdp_w: R, hbm_byte_j: D}", &line), "(no error)");
}

}  // namespace
}  // namespace dse
