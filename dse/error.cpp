#include "dse/error.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <iostream>
#include <sstream>

namespace dse {

namespace {
// The length of the valid UTF-8 character at s[i] (1-4), or 0 when the bytes there are not one.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const auto cont = [&](std::size_t k) { return i + k < s.size() && (b(k) & 0xC0) == 0x80; };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if ((c == 0xE0 && b(1) < 0xA0) || (c == 0xED && b(1) > 0x9F)) return 0;  // overlong; surrogates
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if ((c == 0xF0 && b(1) < 0x90) || (c == 0xF4 && b(1) > 0x8F)) return 0;  // overlong; past U+10FFFF
    return 4;
  }
  return 0;
}

void append_escaped(std::string& out, unsigned char c) {
  static const char kHex[] = "0123456789abcdef";
  out += "\\x";
  out += kHex[c >> 4];
  out += kHex[c & 0xF];
}

// The parts of a ConfigError, capped (the readers quote values through excerpt(); this is the net
// under the program's own longer texts): a quoted text as excerpt() gives it, anything else printable.
constexpr std::size_t kMaxPartBytes = 4 * kExcerptBytes;
constexpr std::size_t kMaxFileBytes = 512;
std::string capped(const std::string& part, std::size_t max_bytes) {
  if (part.size() >= 2 && part.front() == '"' && part.back() == '"' && part.size() - 2 > max_bytes)
    return excerpt(std::string_view(part).substr(1, part.size() - 2), max_bytes);
  return printable(part, max_bytes);
}

std::string format(const std::string& file, int line, int column, const std::string& key_path,
                   const std::string& expected, const std::string& got) {
  std::ostringstream s;
  s << capped(file, kMaxFileBytes) << ':' << line << ':' << column << ": " << capped(key_path, kMaxPartBytes) << ": "
    << expected << " (got " << capped(got, kMaxPartBytes) << ')';
  return s.str();
}
}  // namespace

ConfigError::ConfigError(std::string file_, int line_, int column_, std::string key_path_,
                         std::string expected, std::string got)
    : InputError(format(file_, line_, column_, key_path_, expected, got)),
      file(std::move(file_)),
      line(line_),
      column(column_),
      key_path(std::move(key_path_)) {}

std::string printable(std::string_view text, std::size_t max_bytes) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + 8);
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t n = utf8_length(text, i);
    if (i + std::max<std::size_t>(n, 1) > max_bytes) break;
    const auto c = static_cast<unsigned char>(text[i]);
    const bool c1 = n == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0;  // U+0080-U+009F
    if (n == 0 || c < 0x20 || c == 0x7F || c1) {
      for (std::size_t k = 0; k < std::max<std::size_t>(n, 1); ++k) append_escaped(out, static_cast<unsigned char>(text[i + k]));
      n = std::max<std::size_t>(n, 1);
    } else {
      out.append(text.substr(i, n));
    }
    i += n;
  }
  if (i < text.size()) out += "... (" + std::to_string(text.size()) + " bytes)";
  return out;
}

std::string excerpt(std::string_view value, std::size_t max_bytes) {
  if (value.size() <= max_bytes) return "\"" + printable(value) + "\"";
  std::string cut = printable(value, max_bytes);  // "...... (N bytes)"
  const std::size_t tail = cut.rfind("... (");
  return "\"" + cut.substr(0, tail) + "...\"" + cut.substr(tail + 3);
}

namespace {
std::string& file_to_remove_before_abort() {
  static std::string path;  // NOLINT: the one file an abort must not leave behind
  return path;
}
}  // namespace

void set_file_to_remove_before_abort(const std::string& path) { file_to_remove_before_abort() = path; }

void remove_file_before_abort() noexcept {
  const std::string& path = file_to_remove_before_abort();
  if (!path.empty()) (void)::unlink(path.c_str());
}

void print_error_line(const std::string& text) {
  std::cerr.flush();
  const std::string line = printable(text) + '\n';
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(STDERR_FILENO, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // standard error is gone; nothing else to tell
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace dse
