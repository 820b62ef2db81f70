// Request-length histograms for served models: a CSV file of length bins,
//
//   tokens,prompt_requests,output_requests
//   128,412,30
//   256,1020,95
//   ...
//
// each row a length in tokens and how many requests of the source set have a prompt,
// resp. an output, of that length (either count may be 0). Lines starting with '#' are
// comments (the source of the histogram goes there). The two columns become two
// empirical distributions (costmodel/system/serving.hpp LengthDistribution::empirical)
// that the simulation draws from independently.
#pragma once

#include <optional>
#include <string>

#include "costmodel/system/serving.hpp"

namespace dse::io {

struct LengthHistogram {
  costmodel::system::LengthDistribution prompt;
  costmodel::system::LengthDistribution output;
};

// Throws InputError naming FILE:LINE for a malformed file.
LengthHistogram read_length_histogram(const std::string& path);

// A length given as a number of tokens ("1024") or a uniform range ("128-1024", both
// inclusive): the distribution, or nullopt with `why` set.
std::optional<costmodel::system::LengthDistribution> parse_length_text(const std::string& text, std::string& why);

}  // namespace dse::io
