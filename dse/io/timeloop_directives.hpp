// The pieces of Timeloop's v0.4 mapping and constraint directives that the
// mapping reader (timeloop_mapping.cpp) and the constraints reader
// (timeloop_writer.cpp) share: the document loader, factor lists, permutations,
// data-space lists and directive targets. Every refusal is a ConfigError at the
// offending token (FILE:LINE:COL), not only at the start of its scalar.
//
// The forms accepted are those of Timeloop's parsers (src/mapping/parser.cpp,
// src/mapping/constraints.cpp) and of its v0.4 front end (timeloopfe
// v4/constraints.py): factors as one string ("R=3 P=16", "R3 P16", "R = 3",
// "R=3,P=16", a '#' ends it) or a sequence of such strings ([R=3, P=16]);
// permutations as a string of one-letter names ("PRK", "P R K", "P,R,K") or a
// sequence of names; data spaces as a sequence of names.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "costmodel/loopnest/architecture.hpp"
#include "costmodel/loopnest/problem.hpp"
#include "dse/io/yaml_reader.hpp"

namespace dse::io::timeloop {

// A parsed Timeloop document and the text it came from (to place tokens).
struct Document {
  std::string file;
  std::vector<std::string> lines;
  YAML::Node root;
};

// Loads a Timeloop input whose top-level key is `what`; a file holding another of
// the inputs (the files given in another order) is refused as such.
Document load(const std::string& path, const char* what);

// The position of `token`, found at `offset` in the scalar `n`: checked against the
// source line, so a folded or escaped scalar falls back to the scalar's start.
struct Position {
  int line = 1;
  int column = 1;
};
Position token_position(const Document& doc, const YAML::Node& n, std::size_t offset, const std::string& token);
[[noreturn]] void fail_at(const Place& at, Position pos, const std::string& expected, const std::string& got);

enum class FactorOp : std::uint8_t { eq, le, ge };

struct Factor {
  int dim = 0;
  FactorOp op = FactorOp::eq;
  std::int64_t value = 0;  // "=0": Timeloop's whole dimension, already resolved to its size
  std::string text;        // the token as written
  Position pos;
};

// The factors of one directive. Refused: an unknown dimension, a dimension given twice,
// a value that is not a decimal integer or is past 2^63-1, Timeloop's residual form
// ("R=3,2", imperfect factorisation with a remainder) and, unless allow_bounds, the
// constraint-only bounds "<=" and ">=".
std::vector<Factor> parse_factors(const Document& doc, const YAML::Node& n, const Place& at,
                                  const costmodel::loopnest::Problem& p, bool allow_bounds);

// Dimensions innermost first; `outer` holds those after Timeloop's '_' separator
// (constraints only: the outermost loops, innermost first). A dimension listed
// twice is refused.
struct Permutation {
  std::vector<int> inner;
  std::vector<int> outer;
};
Permutation parse_permutation(const Document& doc, const YAML::Node& n, const Place& at,
                              const costmodel::loopnest::Problem& p, bool allow_separator);

// Bit t set for every data space named (a name twice, or an unknown one, is refused).
std::uint32_t parse_dataspaces(const YAML::Node& n, const Place& at, const costmodel::loopnest::Problem& p);

// A non-negative integer (a spatial split, a level id).
std::int64_t parse_count(const YAML::Node& n, const Place& at, std::int64_t max);

// The level a directive of the given kind targets, by name or by Timeloop's level id
// (0 = the innermost storage level). A container with a spatial fan-out (or a
// component with one of its own, for spatial directives) is its inter_<name>_spatial
// level, as Timeloop's front end places it. kNoLevel: a container without a fan-out,
// which is no tiling level (its directives are refused unless they change nothing).
inline constexpr int kNoLevel = -2;
int resolve_target(const costmodel::loopnest::Architecture& a, const YAML::Node& target, const Place& at, bool spatial);

// Keys of Timeloop's directives that the loop-nest model does not have: refused when given
// with a non-empty value (no_reuse, no_link_transfer, no_temporal_reuse, rmw_first_update,
// no_coalesce, no_multicast_no_reduction).
void refuse_reuse_keys(const MapReader& e);
extern const std::vector<std::string> kReuseKeys;

}  // namespace dse::io::timeloop
