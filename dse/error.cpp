#include "dse/error.hpp"

#include <unistd.h>

#include <cerrno>
#include <iostream>
#include <sstream>

namespace dse {

namespace {
std::string format(const std::string& file, int line, int column, const std::string& key_path,
                   const std::string& expected, const std::string& got) {
  std::ostringstream s;
  s << file << ':' << line << ':' << column << ": " << key_path << ": " << expected << " (got " << got << ')';
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

void print_error_line(const std::string& text) {
  std::cerr.flush();
  const std::string line = text + '\n';
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(STDERR_FILENO, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // standard error is gone; nothing else to tell
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace dse
