// The project's small exception hierarchy. Library code throws; only the
// command line (dse/cli/main.cpp) catches and picks the exit code.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

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

// TEXT made safe to print on a terminal: control bytes (C0, DEL and the C1 controls U+0080-U+009F)
// and bytes that are not part of valid UTF-8 are written as \xNN; with `max_bytes`, at most that
// many bytes of TEXT are kept (cut between characters), followed by "..." and TEXT's length.
std::string printable(std::string_view text, std::size_t max_bytes = std::string_view::npos);

// What an error message quotes of a value: at most this many bytes of it (issue 58: a message once
// echoed whole files, a password hash among them).
inline constexpr std::size_t kExcerptBytes = 60;
// "VALUE" in quotes, printable, at most `max_bytes` of it: `"abc"`, `"abcd..." (5000 bytes)`.
std::string excerpt(std::string_view value, std::size_t max_bytes = kExcerptBytes);

// Writes TEXT (printable(): one line, no control byte) and a newline to standard error in one
// write(2) call. Under mpirun every
// rank's standard error is merged into one stream, and the MPI library prints notes of its
// own there (OMPIO on a failed write); a line sent in pieces (std::cerr << a << b) can have
// such a note spliced into its middle.
void print_error_line(const std::string& text);

// A file to remove before the job is stopped with MPI_Abort (the output lock of `dse run`,
// dse/driver/output_file.hpp), or "" for none; remove_file_before_abort() removes it. Called on the
// paths that end the process without unwinding (MpiSession::abort, a failed collective HDF5 write).
void set_file_to_remove_before_abort(const std::string& path);
void remove_file_before_abort() noexcept;

// Exit codes of the command line.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitInterrupted = 130;

}  // namespace dse
