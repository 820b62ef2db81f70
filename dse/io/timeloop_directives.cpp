#include "dse/io/timeloop_directives.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <sstream>

namespace dse::io::timeloop {

namespace lp = costmodel::loopnest;

namespace {

constexpr std::size_t kExcerpt = 60;  // longest token quoted in a message

std::string quoted(const std::string& s) {
  return "'" + (s.size() <= kExcerpt ? s : s.substr(0, kExcerpt) + "...") + "'";
}

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
bool is_digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

// One scalar of a directive with the node it came from (for positions).
struct Piece {
  YAML::Node node;
  Place at;
  std::string text;
};

std::vector<Piece> pieces_of(const YAML::Node& n, const Place& at) {
  std::vector<Piece> out;
  // An empty string lists nothing (Timeloop reads `factors: ""` and `permutation: ""` so: every
  // factor 1, the default loop order).
  if (n.IsScalar() && n.Scalar().empty()) return out;
  if (n.IsSequence()) {
    for (std::size_t i = 0; i < n.size(); ++i) out.push_back({n[i], at.item(i), as_string(n[i], at.item(i))});
  } else {
    out.push_back({n, at, as_string(n, at)});
  }
  return out;
}

struct Scanner {
  const Document& doc;
  const Piece& piece;
  std::size_t i = 0;
  [[nodiscard]] bool done() const { return i >= piece.text.size(); }
  [[nodiscard]] char peek() const { return done() ? '\0' : piece.text[i]; }
  void skip_spaces() {
    while (!done() && is_space(peek())) ++i;
  }
  [[nodiscard]] Position at(std::size_t offset, const std::string& tok) const {
    return token_position(doc, piece.node, offset, tok);
  }
};

// The token that starts at s.i and runs to the next separator, for messages.
std::string rest_of_token(const Scanner& s, std::size_t from) {
  std::size_t e = from;
  while (e < s.piece.text.size() && !is_space(s.piece.text[e]) && s.piece.text[e] != ',') ++e;
  return s.piece.text.substr(from, std::max<std::size_t>(1, e - from));
}

[[noreturn]] void bad_factor(const Scanner& s, std::size_t from, const std::string& expected) {
  const std::string tok = rest_of_token(s, from);
  fail_at(s.piece.at, s.at(from, tok), expected, quoted(tok));
}

// One factor at s.i: NAME OP? VALUE, where without an operator the name is the
// token less its trailing digits ("C16"), as Timeloop's regular expression reads it.
Factor scan_factor(Scanner& s, const lp::Problem& p, bool allow_bounds) {
  const std::size_t start = s.i;
  const std::string form = allow_bounds ? "factors like 'R=3 P<=16' or 'C1 M8'" : "factors like 'R=3 P=16' or 'C1 M8'";
  while (!s.done() && is_name_char(s.peek())) ++s.i;
  std::string word = s.piece.text.substr(start, s.i - start);
  std::size_t name_end = s.i;
  s.skip_spaces();
  Factor f;
  if (s.peek() == '<' || s.peek() == '>' || s.peek() == '=') {
    const char c = s.peek();
    ++s.i;
    if (c != '=') {
      if (s.peek() != '=') bad_factor(s, start, "expected the operator =, <= or >=");
      ++s.i;
      if (!allow_bounds) bad_factor(s, start, "expected an exact factor (bounds <= and >= belong in constraints)");
      f.op = c == '<' ? FactorOp::le : FactorOp::ge;
    }
    s.skip_spaces();
  } else {
    std::size_t k = word.size();
    while (k > 0 && is_digit(word[k - 1])) --k;
    name_end = start + k;
    s.i = name_end;
  }
  const std::string name = s.piece.text.substr(start, name_end - start);
  if (name.empty()) bad_factor(s, start, "expected " + form);
  const std::size_t vstart = s.i;
  while (!s.done() && is_digit(s.peek())) ++s.i;
  const std::string digits = s.piece.text.substr(vstart, s.i - vstart);
  if (digits.empty() || (!s.done() && !is_space(s.peek()) && s.peek() != ',' && s.peek() != '#'))
    bad_factor(s, start, "expected " + form);
  const auto [stop, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), f.value);
  f.text = s.piece.text.substr(start, s.i - start);
  f.pos = s.at(start, f.text);
  if (ec != std::errc() || stop != digits.data() + digits.size())
    fail_at(s.piece.at, f.pos, "expected a factor of at most 2^63-1", quoted(f.text));
  if (s.peek() == ',' && s.i + 1 < s.piece.text.size() && is_digit(s.piece.text[s.i + 1])) {
    std::size_t e = s.i + 1;
    while (e < s.piece.text.size() && is_digit(s.piece.text[e])) ++e;
    fail_at(s.piece.at, f.pos,
            "expected a factor without a residual (Timeloop's 'R=3,2' imperfect factorisation is not modelled)",
            quoted(s.piece.text.substr(start, e - start)));
  }
  f.dim = p.dim_index(name);
  if (f.dim < 0) fail_at(s.piece.at, f.pos, "expected a dimension of the problem", quoted(name));
  if (f.value == 0) {
    if (f.op != FactorOp::eq) fail_at(s.piece.at, f.pos, "expected a bound > 0", quoted(f.text));
    f.value = p.dim_sizes[static_cast<std::size_t>(f.dim)];  // Timeloop: 0 means the whole dimension
  }
  return f;
}

bool is_single_char_names(const lp::Problem& p) {
  for (int d = 0; d < p.num_dims; ++d) {
    if (p.dim_names[static_cast<std::size_t>(d)].size() != 1) return false;
  }
  return true;
}

}  // namespace

Document load(const std::string& path, const char* what) {
  Document d;
  d.file = path;
  const std::string text = read_text_file(path, what);
  d.root = parse_yaml(text, path);
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) d.lines.push_back(line);
  const bool constraints = std::string(what) == "mapspace_constraints";  // also read under mapspace
  if (d.root.IsMap() && !d.root[what]) {
    for (const char* other : {"architecture", "problem", "mapping", "ERT", "mapspace_constraints", "mapspace"}) {
      if (d.root[other] && !(constraints && std::string(other) == "mapspace")) {
        fail(Place{path, other}, d.root[other],
             std::string("expected a Timeloop ") + what + " file (top-level key '" + what +
                 "'); are the files in the command's order?",
             "the top-level key of a Timeloop " + std::string(other) + " file");
      }
    }
  }
  return d;
}

Position token_position(const Document& doc, const YAML::Node& n, std::size_t offset, const std::string& token) {
  const YAML::Mark m = n.Mark();
  Position start{m.line >= 0 ? m.line + 1 : 1, m.column >= 0 ? m.column + 1 : 1};
  if (m.line < 0 || m.column < 0 || static_cast<std::size_t>(m.line) >= doc.lines.size()) return start;
  const std::string& line = doc.lines[static_cast<std::size_t>(m.line)];
  auto col = static_cast<std::size_t>(m.column);
  if (col < line.size() && (line[col] == '"' || line[col] == '\'')) ++col;
  col += offset;
  if (col + token.size() <= line.size() && line.compare(col, token.size(), token) == 0)
    return {start.line, static_cast<int>(col) + 1};
  return start;
}

void fail_at(const Place& at, Position pos, const std::string& expected, const std::string& got) {
  throw ConfigError(at.file, pos.line, pos.column, at.path.empty() ? "(root)" : at.path, expected, got);
}

std::vector<Factor> parse_factors(const Document& doc, const YAML::Node& n, const Place& at, const lp::Problem& p,
                                  bool allow_bounds) {
  std::vector<Factor> out;
  for (const Piece& piece : pieces_of(n, at)) {
    Scanner s{doc, piece};
    while (true) {
      while (!s.done() && (is_space(s.peek()) || s.peek() == ',')) ++s.i;
      if (s.done() || s.peek() == '#') break;  // Timeloop cuts a factor string at '#'
      Factor f = scan_factor(s, p, allow_bounds);
      for (const Factor& g : out) {
        if (g.dim == f.dim && (g.op == f.op || g.op == FactorOp::eq || f.op == FactorOp::eq)) {
          fail_at(piece.at, f.pos,
                  "expected each dimension once per directive (" + g.text + " at line " + std::to_string(g.pos.line) +
                      " column " + std::to_string(g.pos.column) + " already sets it)",
                  quoted(f.text));
        }
      }
      out.push_back(f);
    }
  }
  return out;
}

Permutation parse_permutation(const Document& doc, const YAML::Node& n, const Place& at, const lp::Problem& p,
                              bool allow_separator) {
  Permutation out;
  bool after_separator = false;
  std::vector<int> seen;
  auto add = [&](const std::string& name, const Piece& piece, std::size_t offset) {
    if (name == "_") {
      if (!allow_separator || after_separator) {
        fail_at(
            piece.at, token_position(doc, piece.node, offset, name),
            allow_separator ? "expected one '_' separator" : "expected dimensions only ('_' belongs in constraints)",
            quoted(name));
      }
      after_separator = true;
      return;
    }
    const int d = p.dim_index(name);
    const Position pos = token_position(doc, piece.node, offset, name);
    if (d < 0) fail_at(piece.at, pos, "expected a dimension of the problem", quoted(name));
    if (std::find(seen.begin(), seen.end(), d) != seen.end())
      fail_at(piece.at, pos, "expected each dimension once in a permutation", quoted(name));
    seen.push_back(d);
    (after_separator ? out.outer : out.inner).push_back(d);
  };
  for (const Piece& piece : pieces_of(n, at)) {
    const std::string& t = piece.text;
    const std::string text = t.substr(0, t.find('#'));
    const bool tokens = n.IsSequence() || text.find(',') != std::string::npos ||
                        (!is_single_char_names(p) && text.find_first_of(" \t") != std::string::npos);
    std::size_t i = 0;
    while (i < text.size()) {
      if (is_space(text[i]) || text[i] == ',') {
        ++i;
        continue;
      }
      std::size_t e = i + 1;
      if (tokens) {
        while (e < text.size() && !is_space(text[e]) && text[e] != ',') ++e;
      }
      add(text.substr(i, e - i), piece, i);
      i = e;
    }
  }
  return out;
}

std::uint32_t parse_dataspaces(const YAML::Node& n, const Place& at, const lp::Problem& p) {
  if (n.IsNull()) return 0;
  if (!n.IsSequence()) fail(at, n, "expected a sequence of data space names", describe(n));
  std::uint32_t m = 0;
  for (std::size_t i = 0; i < n.size(); ++i) {
    const std::string name = as_string(n[i], at.item(i));
    const int t = p.tensor_index(name);
    if (t < 0) fail(at.item(i), n[i], "expected a data space of the problem", quoted(name));
    if ((m >> t & 1u) != 0) fail(at.item(i), n[i], "expected each data space once", quoted(name));
    m |= 1u << t;
  }
  return m;
}

std::int64_t parse_count(const YAML::Node& n, const Place& at, std::int64_t max) {
  std::int64_t v = -1;
  if (!n.IsScalar() || !YAML::convert<std::int64_t>::decode(n, v) || v < 0 || v > max) {
    fail(at, n, "expected an integer from 0 to " + std::to_string(max), describe(n));
  }
  return v;
}

int resolve_target(const lp::Architecture& a, const YAML::Node& target, const Place& at, bool spatial) {
  const int nl = static_cast<int>(a.levels.size());
  std::int64_t id = -1;
  if (target.IsScalar() && YAML::convert<std::int64_t>::decode(target, id)) {
    // Timeloop's numeric target: storage levels counted from the innermost (0).
    if (id < 0 || id >= nl)
      fail(at, target, "expected a level id from 0 to " + std::to_string(nl - 1), describe(target));
    return nl - 1 - static_cast<int>(id);
  }
  const std::string name = as_string(target, at);
  auto find = [&a](const std::string& n) {
    for (std::size_t l = 0; l < a.levels.size(); ++l) {
      if (a.levels[l].name == n) return static_cast<int>(l);
    }
    return -1;
  };
  const int own = find(name);
  const int fanout = find("inter_" + name + "_spatial");
  if (own >= 0 && fanout >= 0) return spatial ? fanout : own;  // a component with a fan-out of its own
  if (own >= 0) return own;
  if (fanout >= 0) return fanout;  // a container with a fan-out
  if (std::find(a.plain_containers.begin(), a.plain_containers.end(), name) != a.plain_containers.end())
    return kNoLevel;
  std::vector<std::string> names = a.plain_containers;
  for (const auto& lv : a.levels) names.push_back(lv.name);
  const std::string hint = did_you_mean(name, names);
  fail(at, target,
       "expected " + (hint.empty() ? "a storage level or container of the architecture"
                                   : "a storage level or container (did you mean '" + hint + "'?)"),
       quoted(name));
}

const std::vector<std::string> kReuseKeys = {"no_reuse",         "no_link_transfer", "no_temporal_reuse",
                                             "rmw_first_update", "no_coalesce",      "no_multicast_no_reduction"};

void refuse_reuse_keys(const MapReader& e) {
  for (const std::string& k : kReuseKeys) {
    if (!e.has(k)) continue;
    const YAML::Node v = e.node(k);
    if (v.IsNull() || (v.IsSequence() && v.size() == 0)) continue;
    fail(e.place(k), v, "expected no " + k + " (Timeloop's reuse restrictions are not modelled)", describe(v));
  }
}

}  // namespace dse::io::timeloop
