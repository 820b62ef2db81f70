#pragma once

#include <string>

namespace dse {
std::string version_string();
}  // namespace dse
