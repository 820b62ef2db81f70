#include "dse/error.hpp"

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

}  // namespace dse
