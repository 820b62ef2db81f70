// Text and JSON reports of a platform evaluation (`dse eval`), shared by the
// commands that print them. JSON is written by hand (numbers with 17
// significant digits, strings escaped).
#pragma once

#include <ostream>
#include <string>

#include "costmodel/platform/system.hpp"

namespace dse::io {

std::string json_string(const std::string& s);
std::string json_number(double v);

void print_eval_text(const costmodel::platform::SystemEval& e, std::ostream& os);
void print_eval_json(const costmodel::platform::SystemEval& e, std::ostream& os);

}  // namespace dse::io
