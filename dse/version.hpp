#pragma once

#include <string>

namespace dse {
std::string version_string();
// The commit of the sources the `dse` executable was built from (`git describe --always --dirty`),
// "unknown" outside a git checkout. Defined in the executable only (dse/CMakeLists.txt, dse_commit).
std::string build_commit();
}  // namespace dse
