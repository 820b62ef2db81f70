// A scenario: what to explore (hardware choices x workloads x batch sizes),
// parsed once into validated value types. See scenarios/README.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "costmodel/layer.hpp"
#include "dse/driver.hpp"
#include "costmodel/roofline.hpp"

namespace dse {

struct Scenario {
  std::string file;   // where it was read from (for messages)
  std::string text;   // the exact text, stored with the results
  std::string name;
  std::uint64_t seed = 0;
  std::vector<costmodel::RooflineHardware> hardware;
  std::vector<costmodel::WorkloadSpec> workloads;
  std::vector<std::int64_t> batch_sizes;
  SearchPlan search;  // default: exhaustive
};

// Parse scenario text; `file` names it in messages. Throws ConfigError.
Scenario parse_scenario(const std::string& text, const std::string& file);
// Read and parse a scenario file. Throws ConfigError (also for a missing file).
Scenario load_scenario(const std::string& path);

}  // namespace dse
