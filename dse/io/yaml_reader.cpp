#include "dse/io/yaml_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <cerrno>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <sstream>

namespace dse::io {

namespace {

int line_of(const YAML::Mark& m) { return m.line >= 0 ? m.line + 1 : 1; }
int column_of(const YAML::Mark& m) { return m.column >= 0 ? m.column + 1 : 1; }

}  // namespace

namespace {

// Walks a document's parse events (aliases are events, never expanded) and refuses a mapping
// that holds a key twice: yaml-cpp keeps the first value and drops the second silently.
class DuplicateKeyCheck final : public YAML::EventHandler {
 public:
  explicit DuplicateKeyCheck(std::string file) : file_(std::move(file)) {}
  // Where the last document read began.
  [[nodiscard]] const YAML::Mark& last_document() const { return last_document_; }

  void OnDocumentStart(const YAML::Mark& mark) override { last_document_ = mark; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t /*anchor*/) override { leaf(mark, nullptr); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t /*anchor*/) override { leaf(mark, nullptr); }
  void OnScalar(const YAML::Mark& mark, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                const std::string& value) override {
    leaf(mark, &value);
  }
  void OnSequenceStart(const YAML::Mark& /*mark*/, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                       YAML::EmitterStyle::value /*style*/) override {
    open();
    frames_.push_back({false, {}, State::key, "", 0});
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& /*mark*/, const std::string& /*tag*/, YAML::anchor_t /*anchor*/,
                  YAML::EmitterStyle::value /*style*/) override {
    open();
    frames_.push_back({true, {}, State::key, "", 0});
  }
  void OnMapEnd() override { close(); }

 private:
  // A mapping frame reads a key, then its value; either may be a container still open.
  enum class State { key, key_open, value, value_open };
  struct Frame {
    bool map;
    std::map<std::string, int> keys;  // key -> line it was first given on
    State state;
    std::string key;                  // the key of the value being read
    std::size_t item;                 // sequence: the index of the item being read
  };

  // The key path of the node being read (as Place writes it).
  [[nodiscard]] std::string path() const {
    std::string p;
    for (const Frame& f : frames_) {
      if (f.map) {
        if (f.state == State::value || f.state == State::value_open) p += (p.empty() ? "" : ".") + f.key;
      } else {
        p = (p.empty() ? std::string("(root)") : p) + "[" + std::to_string(f.item) + "]";
      }
    }
    return p;
  }

  // A container begins in the innermost frame.
  void open() {
    if (frames_.empty()) return;
    Frame& f = frames_.back();
    if (!f.map) return;
    if (f.state == State::key) {
      f.state = State::key_open;  // a complex key: not compared
      f.key = "?";
    } else {
      f.state = State::value_open;
    }
  }

  // A container ends: its frame goes, and the node it was is read in the frame around it.
  void close() {
    frames_.pop_back();
    if (frames_.empty()) return;
    Frame& f = frames_.back();
    if (!f.map) {
      ++f.item;
    } else {
      f.state = f.state == State::key_open ? State::value : State::key;
    }
  }

  // A scalar, null or alias node. `scalar` is its text when it is a scalar.
  void leaf(const YAML::Mark& mark, const std::string* scalar) {
    if (frames_.empty()) return;
    Frame& f = frames_.back();
    if (!f.map) {
      ++f.item;
      return;
    }
    if (f.state != State::key) {  // a value: the next node is a key again
      f.state = State::key;
      return;
    }
    f.state = State::value;
    f.key = scalar != nullptr ? *scalar : "?";
    if (scalar == nullptr) return;
    const auto [it, fresh] = f.keys.emplace(*scalar, line_of(mark));
    if (!fresh) {
      f.key = key_text(*scalar);
      const std::string where = path();
      throw ConfigError(file_, line_of(mark), column_of(mark), where.empty() ? "(root)" : where,
                        "expected each key once in a mapping (the first is on line " + std::to_string(it->second) +
                            ")",
                        (f.key == *scalar ? "\"" + f.key + "\"" : f.key) + " again");
    }
  }

  std::string file_;
  std::vector<Frame> frames_;
  YAML::Mark last_document_ = YAML::Mark::null_mark();
};

}  // namespace

YAML::Node parse_yaml(const std::string& text, const std::string& file) {
  try {
    // First the events: a duplicate key or a second document is refused before the tree is built.
    std::istringstream in(text);
    YAML::Parser parser(in);
    DuplicateKeyCheck check(file);
    if (parser.HandleNextDocument(check) && parser.HandleNextDocument(check)) {
      // yaml-cpp's Load reads the first document and ignores the rest.
      const YAML::Mark m = check.last_document();
      throw ConfigError(file, line_of(m), column_of(m), "(yaml)", "expected one YAML document", "a second document");
    }
    return YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw ConfigError(file, line_of(e.mark), column_of(e.mark), "(yaml)", "expected valid YAML syntax",
                      excerpt(e.msg));
  }
}

namespace {

// Closes a file descriptor when it goes out of scope.
struct FdCloser {
  explicit FdCloser(int f) : fd(f) {}
  int fd;
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  ~FdCloser() { ::close(fd); }
};

const char* kind_of(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

namespace {
thread_local RecordedReads* t_recorded_reads = nullptr;  // the innermost live RecordedReads
}  // namespace

std::uint64_t content_hash(std::string_view bytes) {
  std::uint64_t h = 14695981039346656037ULL;
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

RecordedReads::RecordedReads() : outer_(t_recorded_reads) { t_recorded_reads = this; }
RecordedReads::~RecordedReads() { t_recorded_reads = outer_; }

void RecordedReads::add(InputFile f) {
  for (const auto& g : files_)
    if (g.path == f.path) return;
  files_.push_back(std::move(f));
}

std::string read_text_file(const std::string& path, const std::string& what) {
  const auto refuse = [&](const std::string& expected, const std::string& got) {
    throw ConfigError(path, 1, 1, what, expected, got);
  };
  // O_NONBLOCK: a FIFO opens at once (a blocking open waits for a writer forever) and is refused
  // below; it changes nothing for a regular file.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    refuse("expected a readable file", "\"" + std::string(std::strerror(err)) + "\"");
  }
  const FdCloser closer(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    refuse("expected a readable file", "\"" + std::string(std::strerror(err)) + "\"");
  }
  // A directory opens and reads as nothing ("expected a mapping (got nothing)").
  if (S_ISDIR(st.st_mode)) refuse("expected a readable file", "\"" + std::string(std::strerror(EISDIR)) + "\"");
  if (!S_ISREG(st.st_mode)) refuse("expected a regular file", kind_of(st.st_mode));
  const auto limit_text = [] { return "expected a file of at most " + std::to_string(kMaxTextFileBytes >> 20) + " MiB"; };
  if (static_cast<std::uint64_t>(st.st_size) > kMaxTextFileBytes)
    refuse(limit_text(), std::to_string(st.st_size) + " bytes");
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      refuse("expected a readable file", "\"" + std::string(std::strerror(err)) + "\"");
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > kMaxTextFileBytes) refuse(limit_text(), "more bytes (the file grew while read)");
  }
  // The file's kind before any parser sees its bytes.
  if (text.rfind("\x89HDF\r\n\x1a\n", 0) == 0) refuse("expected a text file", "an HDF5 file");
  if (text.find('\0') != std::string::npos) refuse("expected a text file", "binary data (an ONNX model?)");
  if (t_recorded_reads != nullptr) t_recorded_reads->add({path, text.size(), content_hash(text)});
  return text;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (std::size_t i = 0; i < v.size(); ++i) s += (i == 0 ? "" : ", ") + v[i];
  return s;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1);
  std::vector<std::size_t> cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string did_you_mean(const std::string& key, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = std::max<std::size_t>(2, key.size() / 3) + 1;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(key, c);
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

Place Place::child(const std::string& key) const {
  return {file, path.empty() ? key : path + "." + key};
}

Place Place::item(std::size_t i) const {
  return {file, (path.empty() ? std::string("(root)") : path) + "[" + std::to_string(i) + "]"};
}

std::string format_number(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string describe(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsSequence()) return node.size() == 0 ? "an empty sequence" : "a sequence";
  if (node.IsMap()) return node.size() == 0 ? "an empty mapping" : "a mapping";
  return excerpt(node.Scalar());
}

std::string key_text(const std::string& key) {
  const bool word = !key.empty() && key.size() <= kExcerptBytes && std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-' || c == '.';
  });
  return word ? key : "a key of " + std::to_string(key.size()) + " bytes, not shown";
}

bool is_text(std::string_view s, bool newlines) {
  std::string without;
  for (const char c : s) {
    if (!(newlines && (c == '\n' || c == '\t'))) without += c;
  }
  return printable(without) == without;
}

void fail(const Place& at, const YAML::Node& node, const std::string& expected, const std::string& got) {
  // An invalid node (a map indexed by a number, say) throws on Mark(): no position then.
  const YAML::Mark m = node.IsDefined() ? node.Mark() : YAML::Mark::null_mark();
  const bool root = at.path.empty() || at.path == "(root)";
  // A document that is one scalar is a file that is not YAML mappings at all (a password file
  // named as a system file, say): none of its text is quoted.
  const std::string said = root && node.IsDefined() && node.IsScalar()
                               ? "text of " + std::to_string(node.Scalar().size()) + " bytes, not shown"
                               : got;
  throw ConfigError(at.file, line_of(m), column_of(m), root ? "(root)" : at.path, expected, said);
}

double as_number(const YAML::Node& n, const Place& at) {
  double v = 0.0;
  if (!n.IsScalar() || !YAML::convert<double>::decode(n, v)) fail(at, n, "expected a number", describe(n));
  if (!std::isfinite(v)) fail(at, n, "expected a finite number", describe(n));
  return v;
}

double as_positive(const YAML::Node& n, const Place& at) {
  const double v = as_number(n, at);
  if (!(v > 0.0)) fail(at, n, "expected a number > 0", format_number(v));
  return v;
}

std::int64_t as_positive_integer(const YAML::Node& n, const Place& at) {
  std::int64_t v = 0;
  if (!n.IsScalar() || !YAML::convert<std::int64_t>::decode(n, v)) {
    fail(at, n, "expected an integer", describe(n));
  }
  if (v <= 0) fail(at, n, "expected an integer > 0", std::to_string(v));
  return v;
}

int as_positive_int(const YAML::Node& n, const Place& at, int most) {
  const std::int64_t v = as_positive_integer(n, at);
  if (v > most) fail(at, n, "expected an integer from 1 to " + std::to_string(most), std::to_string(v));
  return static_cast<int>(v);
}

std::string as_string(const YAML::Node& n, const Place& at) {
  if (!n.IsScalar() || n.Scalar().empty()) fail(at, n, "expected a non-empty string", describe(n));
  // No control byte (an escape sequence would reach the terminal in a report) and valid UTF-8.
  if (!is_text(n.Scalar(), true)) fail(at, n, "expected UTF-8 text without control characters", describe(n));
  return n.Scalar();
}

std::string as_name(const YAML::Node& n, const Place& at) {
  const std::string s = as_string(n, at);
  if (!is_text(s, false)) fail(at, n, "expected a name on one line, without tabs or control characters", describe(n));
  return s;
}

MapReader::MapReader(const YAML::Node& node, Place place, std::initializer_list<const char*> allowed)
    : MapReader(node, std::move(place), std::vector<std::string>(allowed.begin(), allowed.end())) {}

MapReader::MapReader(const YAML::Node& node, Place place, const std::vector<std::string>& allowed)
    : node_(node), place_(std::move(place)) {
  if (!node_.IsDefined() || !node_.IsMap()) fail(place_, node_, "expected a mapping", describe(node_));
  for (const auto& kv : node_) {
    const std::string key = kv.first.Scalar();
    if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
    const std::string hint = did_you_mean(key, allowed);
    const YAML::Mark m = kv.first.Mark();
    const std::string shown = key_text(key);
    const std::string where = shown == key ? place_.child(key).path : place_.path.empty() ? "(root)" : place_.path;
    throw ConfigError(place_.file, line_of(m), column_of(m), where,
                      hint.empty() ? "unknown key, expected one of the documented keys"
                                   : "unknown key, did you mean '" + hint + "'?",
                      shown == key ? "'" + key + "'" : shown);
  }
}

bool MapReader::has(const std::string& key) const { return node_[key].IsDefined(); }

YAML::Node MapReader::node(const std::string& key, const std::string& expected) const {
  const YAML::Node n = node_[key];
  if (!n.IsDefined()) {
    const YAML::Mark m = node_.Mark();
    throw ConfigError(place_.file, line_of(m), column_of(m), place_.child(key).path,
                      "missing required key, expected " + expected, "nothing");
  }
  return n;
}

std::string MapReader::string(const std::string& key) const {
  return as_string(node(key, "a non-empty string"), place(key));
}

std::string MapReader::string_or(const std::string& key, const std::string& fallback) const {
  return has(key) ? string(key) : fallback;
}

double MapReader::number(const std::string& key) const { return as_number(node(key, "a number"), place(key)); }
double MapReader::positive(const std::string& key) const {
  return as_positive(node(key, "a number > 0"), place(key));
}

double MapReader::non_negative(const std::string& key) const {
  const YAML::Node n = node(key, "a number >= 0");
  const double v = as_number(n, place(key));
  if (v < 0.0) fail(place(key), n, "expected a number >= 0", format_number(v));
  return v;
}

bool MapReader::boolean_or(const std::string& key, bool fallback) const {
  if (!has(key)) return fallback;
  const YAML::Node n = node(key);
  bool v = false;
  if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v)) fail(place(key), n, "expected true or false", describe(n));
  return v;
}

double MapReader::number_or(const std::string& key, double fallback) const {
  return has(key) ? number(key) : fallback;
}

double MapReader::non_negative_or(const std::string& key, double fallback) const {
  return has(key) ? non_negative(key) : fallback;
}

double MapReader::fraction(const std::string& key) const {
  const YAML::Node n = node(key, "a number in [0, 1]");
  const double v = as_number(n, place(key));
  if (v < 0.0 || v > 1.0) fail(place(key), n, "expected a number in [0, 1]", format_number(v));
  return v;
}

double MapReader::positive_fraction(const std::string& key) const {
  const double v = positive(key);
  if (v > 1.0) fail(place(key), node(key), "expected a number in (0, 1]", describe(node(key)));
  return v;
}

std::int64_t MapReader::positive_integer(const std::string& key) const {
  return as_positive_integer(node(key, "an integer > 0"), place(key));
}

int MapReader::positive_int(const std::string& key, int most) const {
  return as_positive_int(node(key, "an integer > 0"), place(key), most);
}

int MapReader::positive_int_or(const std::string& key, int fallback, int most) const {
  return has(key) ? positive_int(key, most) : fallback;
}

std::int64_t MapReader::positive_integer_or(const std::string& key, std::int64_t fallback) const {
  return has(key) ? positive_integer(key) : fallback;
}

std::uint64_t MapReader::unsigned_or(const std::string& key, std::uint64_t fallback) const {
  if (!has(key)) return fallback;
  const YAML::Node n = node(key);
  std::uint64_t v = 0;
  if (!n.IsScalar() || !YAML::convert<std::uint64_t>::decode(n, v) ||
      (!n.Scalar().empty() && n.Scalar()[0] == '-')) {
    fail(place(key), n, "expected an integer >= 0", describe(n));
  }
  return v;
}

YAML::Node MapReader::sequence(const std::string& key) const {
  const YAML::Node n = node(key, "a non-empty sequence");
  if (!n.IsSequence() || n.size() == 0) fail(place(key), n, "expected a non-empty sequence", describe(n));
  return n;
}

}  // namespace dse::io
