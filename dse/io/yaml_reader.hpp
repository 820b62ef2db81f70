// Validated access to YAML for every reader of the project: values come out
// converted and checked, and every problem becomes a ConfigError that names the
// file, line, column, key path and what was expected. Nothing past the readers
// sees a YAML::Node.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dse/error.hpp"

namespace dse::io {

// Parse YAML text; a syntax error becomes a ConfigError at the error's place, and so do a key
// given twice in one mapping and a second document (yaml-cpp would keep the first silently).
YAML::Node parse_yaml(const std::string& text, const std::string& file);
// The largest text file read (scenarios, hardware, workload, SCALE-Sim and Timeloop files).
inline constexpr std::uint64_t kMaxTextFileBytes = std::uint64_t{16} << 20;
// Read a whole text file; a ConfigError at 1:1 for a missing or unreadable file, a directory, a
// FIFO, device or socket (refused without waiting on it), a file past kMaxTextFileBytes, and an
// HDF5 file or other binary data (a NUL byte), before any parser sees the bytes.
std::string read_text_file(const std::string& path, const std::string& what);

// A file read by read_text_file: its path as given, size and content hash (content_hash).
struct InputFile {
  std::string path;
  std::uint64_t bytes = 0;
  std::uint64_t hash = 0;
};
// 64-bit FNV-1a of the bytes (Fowler, Noll, Vo; offset basis 14695981039346656037, prime
// 1099511628211): a change detector for input files, not a cryptographic hash.
std::uint64_t content_hash(std::string_view bytes);

// Records the files read_text_file reads on this thread while it lives (scopes nest: the
// innermost records), each path once: the inputs of a scenario, for `dse run` to refuse an
// output that is one of them and to notice on --resume that one has changed.
class RecordedReads {
 public:
  RecordedReads();
  ~RecordedReads();
  RecordedReads(const RecordedReads&) = delete;
  RecordedReads& operator=(const RecordedReads&) = delete;
  void add(InputFile f);
  [[nodiscard]] const std::vector<InputFile>& files() const { return files_; }

 private:
  std::vector<InputFile> files_;
  RecordedReads* outer_;
};

// The strings separated by ", " (for "expected one of ..." messages).
std::string join(const std::vector<std::string>& v);
// Levenshtein distance (insertions, deletions, substitutions).
std::size_t edit_distance(const std::string& a, const std::string& b);
// The closest candidate by edit distance, or "" when none is close.
std::string did_you_mean(const std::string& key, const std::vector<std::string>& candidates);

// Where a node sits: the file and the key path that led to it.
struct Place {
  std::string file;
  std::string path;
  [[nodiscard]] Place child(const std::string& key) const;
  [[nodiscard]] Place item(std::size_t i) const;
};

[[noreturn]] void fail(const Place& at, const YAML::Node& node, const std::string& expected,
                       const std::string& got);
std::string describe(const YAML::Node& node);  // how a value reads in a message (an excerpt)
// A mapping key as a message shows it: itself when it is a word (letters, digits, _ - .; at most
// kExcerptBytes), else "a key of N bytes, not shown" (a file that is not what it was named as --
// a password file given as a system file -- reads as keys of its lines).
std::string key_text(const std::string& key);
// Whether S is valid UTF-8 without control characters (tabs and newlines allowed with `newlines`).
bool is_text(std::string_view s, bool newlines);
std::string format_number(double v, int digits = 6);  // as printf's %.<digits>g: "0", "1.5e+19", "inf"

// A mapping whose keys are checked against the allowed set when it is opened.
class MapReader {
 public:
  MapReader(const YAML::Node& node, Place place, std::initializer_list<const char*> allowed);
  MapReader(const YAML::Node& node, Place place, const std::vector<std::string>& allowed);

  [[nodiscard]] bool has(const std::string& key) const;
  // A required key; `expected` says what its value should be, for the message when it is missing.
  [[nodiscard]] YAML::Node node(const std::string& key, const std::string& expected = "a value") const;
  [[nodiscard]] Place place(const std::string& key) const { return place_.child(key); }
  [[nodiscard]] const Place& place() const { return place_; }
  [[nodiscard]] const YAML::Node& self() const { return node_; }

  [[nodiscard]] std::string string(const std::string& key) const;
  [[nodiscard]] std::string string_or(const std::string& key, const std::string& fallback) const;
  [[nodiscard]] double number(const std::string& key) const;
  [[nodiscard]] double positive(const std::string& key) const;  // > 0
  [[nodiscard]] double non_negative(const std::string& key) const;
  [[nodiscard]] double number_or(const std::string& key, double fallback) const;
  [[nodiscard]] double non_negative_or(const std::string& key, double fallback) const;
  [[nodiscard]] double fraction(const std::string& key) const;  // in [0, 1]
  [[nodiscard]] double positive_fraction(const std::string& key) const;  // in (0, 1]: a sustained share
  [[nodiscard]] std::int64_t positive_integer(const std::string& key) const;
  [[nodiscard]] std::int64_t positive_integer_or(const std::string& key, std::int64_t fallback) const;
  [[nodiscard]] std::uint64_t unsigned_or(const std::string& key, std::uint64_t fallback) const;
  // An integer > 0 held in an int by the model: refused past `most` (default INT_MAX), where the
  // cast would wrap (a bytes_per_element of 2^32 + 1 read as 1).
  [[nodiscard]] int positive_int(const std::string& key, int most = std::numeric_limits<int>::max()) const;
  [[nodiscard]] int positive_int_or(const std::string& key, int fallback,
                                    int most = std::numeric_limits<int>::max()) const;
  [[nodiscard]] YAML::Node sequence(const std::string& key) const;  // non-empty sequence
  [[nodiscard]] bool boolean_or(const std::string& key, bool fallback) const;  // true / false

 private:
  YAML::Node node_;
  Place place_;
};

// Scalar conversions with the same messages, for sequence items.
double as_number(const YAML::Node& n, const Place& at);
double as_positive(const YAML::Node& n, const Place& at);
std::int64_t as_positive_integer(const YAML::Node& n, const Place& at);
int as_positive_int(const YAML::Node& n, const Place& at, int most = std::numeric_limits<int>::max());
// A non-empty string of UTF-8 text (newlines and tabs allowed, no other control character).
std::string as_string(const YAML::Node& n, const Place& at);
// A name: as_string, on one line, without tabs.
std::string as_name(const YAML::Node& n, const Place& at);

}  // namespace dse::io
