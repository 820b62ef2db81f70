#include "dse/io/lengths_reader.hpp"

#include <charconv>
#include <sstream>
#include <vector>

#include "dse/error.hpp"
#include "dse/io/yaml_reader.hpp"

namespace dse::io {

namespace cs = costmodel::system;

namespace {

constexpr long long kMaxTokens = 1LL << 30;

bool parse_count(const std::string& s, long long& v) {
  const auto* end = s.data() + s.size();
  const auto r = std::from_chars(s.data(), end, v);
  return r.ec == std::errc() && r.ptr == end;
}

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string cell;
  while (std::getline(ss, cell, ',')) {
    while (!cell.empty() && (cell.back() == ' ' || cell.back() == '\r')) cell.pop_back();
    while (!cell.empty() && cell.front() == ' ') cell.erase(cell.begin());
    out.push_back(cell);
  }
  return out;
}

}  // namespace

LengthHistogram read_length_histogram(const std::string& path) {
  const std::string text = read_text_file(path, "request-length histogram");
  std::stringstream in(text);
  std::string line;
  int line_no = 0;
  bool header = false;
  std::vector<int> lengths;
  std::vector<double> prompt, output;
  auto bad = [&](const std::string& what) {
    throw InputError(path + ":" + std::to_string(line_no) + ": " + what);
  };
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line[0] == '#' || line == "\r") continue;
    const std::vector<std::string> cells = split_csv(line);
    if (!header) {
      if (cells != std::vector<std::string>{"tokens", "prompt_requests", "output_requests"})
        bad("expected the header tokens,prompt_requests,output_requests");
      header = true;
      continue;
    }
    long long t = 0, p = 0, o = 0;
    if (cells.size() != 3 || !parse_count(cells[0], t) || !parse_count(cells[1], p) || !parse_count(cells[2], o))
      bad("expected three whole numbers: tokens,prompt_requests,output_requests");
    if (t < 1 || t > kMaxTokens) bad("expected tokens from 1 to " + std::to_string(kMaxTokens));
    if (p < 0 || o < 0) bad("expected request counts >= 0");
    lengths.push_back(static_cast<int>(t));
    prompt.push_back(static_cast<double>(p));
    output.push_back(static_cast<double>(o));
  }
  if (!header) throw InputError(path + ": expected the header tokens,prompt_requests,output_requests");
  LengthHistogram h;
  h.prompt = cs::LengthDistribution::empirical(lengths, prompt);
  h.output = cs::LengthDistribution::empirical(lengths, output);
  if (h.prompt.kind != cs::LengthDistribution::Kind::empirical)
    throw InputError(path + ": expected at least one request in prompt_requests");
  if (h.output.kind != cs::LengthDistribution::Kind::empirical)
    throw InputError(path + ": expected at least one request in output_requests");
  return h;
}

std::optional<cs::LengthDistribution> parse_length_text(const std::string& text, std::string& why) {
  const auto dash = text.find('-');
  long long lo = 0, hi = 0;
  if (dash == std::string::npos) {
    if (!parse_count(text, lo) || lo < 1 || lo > kMaxTokens) {
      why = "expected a number of tokens from 1 to " + std::to_string(kMaxTokens) + " or a range LOW-HIGH";
      return std::nullopt;
    }
    return cs::LengthDistribution::fixed(static_cast<int>(lo));
  }
  if (!parse_count(text.substr(0, dash), lo) || !parse_count(text.substr(dash + 1), hi) || lo < 1 || hi < lo ||
      hi > kMaxTokens) {
    why = "expected a range LOW-HIGH of tokens, 1 <= LOW <= HIGH <= " + std::to_string(kMaxTokens);
    return std::nullopt;
  }
  return cs::LengthDistribution::uniform(static_cast<int>(lo), static_cast<int>(hi));
}

}  // namespace dse::io
