// Named workload presets with their published hyperparameters (the source of
// each is cited next to it in presets.cpp). Pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "costmodel/workload/spec.hpp"

namespace dse::costmodel::workload {

// gpt3-175b, llama2-7b, llama2-13b, llama2-70b, llama3-8b, llama3-70b,
// llama3-405b, mixtral-8x7b, bert-base, bert-large, vit-b16, resnet50.
std::vector<std::string> workload_preset_names();
std::optional<WorkloadSpec> workload_preset(std::string_view name);

}  // namespace dse::costmodel::workload
