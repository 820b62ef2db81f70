// The project's small exception hierarchy. Library code throws; only the
// command line (dse/cli/main.cpp) catches and picks the exit code.
#pragma once

#include <stdexcept>
#include <string>

namespace dse {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Bad input from the user (exit code 2). Ranks that learn of an error found on
// another rank rethrow it as a plain InputError with the same message.
struct InputError : Error {
  using Error::Error;
};

// A bad input file: what() is one line, FILE:LINE:COL: key.path: expected (got X).
struct ConfigError : InputError {
  ConfigError(std::string file, int line, int column, std::string key_path, std::string expected,
              std::string got);
  std::string file;
  int line;
  int column;
  std::string key_path;
};

struct IoError : Error {
  using Error::Error;
};

struct MpiError : Error {
  using Error::Error;
};

// A run stopped by SIGINT/SIGTERM after its checkpoint (exit code 130).
struct Interrupted : Error {
  using Error::Error;
};

// Writes TEXT and a newline to standard error in one write(2) call. Under mpirun every
// rank's standard error is merged into one stream, and the MPI library prints notes of its
// own there (OMPIO on a failed write); a line sent in pieces (std::cerr << a << b) can have
// such a note spliced into its middle.
void print_error_line(const std::string& text);

// Exit codes of the command line.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitInterrupted = 130;

}  // namespace dse
