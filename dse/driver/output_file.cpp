#include "dse/driver/output_file.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string_view>

#include "dse/error.hpp"

namespace dse {

namespace fs = std::filesystem;

namespace {

std::string errno_text(int err) { return std::strerror(err); }

// What is at `path` without following a link: 0 when nothing is there.
mode_t kind_at(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0 ? st.st_mode : 0;
}

std::string folder_of(const std::string& out) {
  const fs::path p(out);
  return p.has_parent_path() ? p.parent_path().string() : std::string(".");
}

}  // namespace

OutputPaths::OutputPaths(const std::string& output)
    : out(output), partial(output + ".partial"), compressing(output + ".partial.compressing"), lock(output + ".lock") {}

void check_output_name(const OutputPaths& paths, bool resume) {
  const std::string option = resume ? "--resume" : "-o";
  if (!paths.out.empty() && paths.out.back() == '/') {
    throw InputError("dse run: " + option + " " + paths.out +
                     ": expected the name of the result file, not a folder (a name ending in '/')");
  }
  std::error_code ec;
  if (fs::is_directory(paths.out, ec)) {
    throw InputError("dse run: " + option + " " + paths.out + ": a folder (expected the name of the result file)");
  }
}

void prepare_output_folder(const OutputPaths& paths) {
  const std::string dir = folder_of(paths.out);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw IoError("cannot create directory " + dir + ": " + ec.message());
  // access() answers for the caller's identity and the mount: EROFS on a read-only file system
  // even for root, which ignores permissions.
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    throw IoError("cannot write " + paths.partial + " (directory " + dir + ": " + errno_text(errno) + ")");
  }
}

void check_output_files(const OutputPaths& paths, const std::vector<std::string>& inputs, bool resume) {
  for (const std::string* made : {&paths.partial, &paths.compressing, &paths.lock}) {
    const mode_t m = kind_at(*made);
    if (m == 0 || (S_ISREG(m) && !(resume && made == &paths.partial))) continue;
    if (S_ISLNK(m)) {
      throw InputError("dse run: " + *made +
                       " is a symbolic link; dse run does not write through links (remove it, or choose another -o)");
    }
    if (!S_ISREG(m)) throw InputError("dse run: " + *made + " exists and is not a regular file (remove it)");
  }
  for (const std::string* made : {&paths.out, &paths.partial, &paths.compressing, &paths.lock}) {
    for (const std::string& input : inputs) {
      std::error_code ec;
      if (fs::equivalent(*made, input, ec) && !ec) {
        throw InputError("dse run: " + std::string(resume ? "--resume " : "-o ") + paths.out + ": writing it would replace " +
                         input + ", an input of this run (the scenario or a file it reads); choose another output");
      }
    }
  }
}

OutputLock::OutputLock(const OutputPaths& paths) : path_(paths.lock) {
  // The lock file may be removed by the holder that releases it between our open and our flock:
  // the lock then protects a name no longer there, so the open is tried again.
  for (int attempt = 0; attempt < 16; ++attempt) {
    const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
      const int err = errno;
      if (err == ELOOP) {
        throw InputError("dse run: " + path_ +
                         " is a symbolic link; dse run does not write through links (remove it, or choose another -o)");
      }
      throw IoError("cannot create the lock file " + path_ + ": " + errno_text(err));
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      char buf[256] = {};
      const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
      ::close(fd);
      if (err != EWOULDBLOCK) throw IoError("cannot lock " + path_ + ": " + errno_text(err));
      std::string holder(buf, n > 0 ? static_cast<std::size_t>(n) : 0);
      while (!holder.empty() && (holder.back() == '\n' || holder.back() == '\0')) holder.pop_back();
      const auto space = holder.find(' ');
      const std::string who = holder.empty() ? "pid unknown"
                              : space == std::string::npos
                                  ? "pid " + holder
                                  : "pid " + holder.substr(0, space) + " on " + holder.substr(space + 1);
      throw InputError("dse run: " + paths.out + " is in use by another dse run (" + printable(who, 100) + ", lock " +
                       path_ + "); wait for it to end, or choose another output");
    }
    struct stat held {};
    struct stat named {};
    if (::fstat(fd, &held) == 0 && ::lstat(path_.c_str(), &named) == 0 && held.st_dev == named.st_dev &&
        held.st_ino == named.st_ino) {
      fd_ = fd;
      break;
    }
    ::close(fd);
  }
  if (fd_ < 0) throw IoError("cannot lock " + path_ + ": the lock file keeps being replaced");
  char host[256] = {};
  (void)::gethostname(host, sizeof host - 1);
  const std::string me = std::to_string(::getpid()) + " " + host + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, me.data(), me.size(), 0) != static_cast<ssize_t>(me.size())) {
    const int err = errno;
    (void)::unlink(path_.c_str());
    ::close(fd_);
    throw IoError("cannot write the lock file " + path_ + ": " + errno_text(err));
  }
  set_file_to_remove_before_abort(path_);
}

OutputLock::~OutputLock() {
  // Unlinked while still locked: a run that opened the old file finds it replaced and tries again.
  set_file_to_remove_before_abort("");
  (void)::unlink(path_.c_str());
  ::close(fd_);
}

void create_partial_file(const OutputPaths& paths) {
  const mode_t m = kind_at(paths.partial);
  if (m != 0 && S_ISREG(m) && ::unlink(paths.partial.c_str()) != 0) {
    throw IoError("cannot replace " + paths.partial + ": " + errno_text(errno));
  }
  const int fd = ::open(paths.partial.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) {
    const int err = errno;
    if (err == EEXIST || err == ELOOP) {
      throw InputError("dse run: " + paths.partial + " appeared while the run started (a link or another process); remove it");
    }
    throw IoError("cannot write " + paths.partial + " (" + errno_text(err) + ")");
  }
  ::close(fd);
}

}  // namespace dse
