// The files `dse run` creates, made safely (issue 58 items 1-3 and 18): OUT is written as
// OUT.partial (renamed to OUT when complete), compressed through OUT.partial.compressing, and
// guarded by OUT.lock for the whole run.
//
//  - No file the run creates is written through a symbolic link: a link (or anything but a
//    regular file) at OUT.partial, OUT.partial.compressing or OUT.lock is refused, and OUT.partial
//    is created with O_CREAT | O_EXCL | O_NOFOLLOW. (OUT itself is replaced by rename(2), which
//    replaces a link and never writes through it.)
//  - None of them may be an input of the run (the scenario, or a system, hardware or workload file
//    it reads): -o naming one replaced it with HDF5.
//  - One run at a time per output: OUT.lock is locked (flock) for the whole run, and a second run
//    on the same OUT (or --resume of it) stops at once with exit code 2, naming the holder's PID.
//  - -o must name a file: an existing folder, or a name ending in '/', is refused before the run;
//    the folder is made if missing, and must be writable (a read-only file system says so).
#pragma once

#include <string>
#include <vector>

namespace dse {

struct OutputPaths {
  explicit OutputPaths(const std::string& output);
  std::string out;
  std::string partial;      // OUT.partial
  std::string compressing;  // OUT.partial.compressing (h5::rewrite_compressed)
  std::string lock;         // OUT.lock
};

// -o as a file name: InputError for an existing folder or a name ending in '/' (checked before
// anything is read or made).
void check_output_name(const OutputPaths& paths, bool resume);

// The folder of OUT made if missing and checked writable: IoError naming the folder and the cause
// ("Read-only file system", "Permission denied").
void prepare_output_folder(const OutputPaths& paths);

// InputError when a file the run creates is a symbolic link or not a regular file, or is the same
// file as one of `inputs` (paths of files the run reads).
void check_output_files(const OutputPaths& paths, const std::vector<std::string>& inputs, bool resume);

// The exclusive lock on an output, held while the object lives (rank 0 of a run): OUT.lock,
// locked with flock and holding "PID HOST". Another holder makes the constructor throw
// InputError: "OUT is in use by another dse run (pid N on HOST, lock OUT.lock)". The lock file is
// removed when the lock is released, and before an MPI_Abort (dse/error.hpp).
class OutputLock {
 public:
  explicit OutputLock(const OutputPaths& paths);
  ~OutputLock();
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

 private:
  int fd_ = -1;
  std::string path_;
};

// OUT.partial created empty, exclusively and without following a link; a regular file left by
// an earlier run is removed first. Throws IoError.
void create_partial_file(const OutputPaths& paths);

}  // namespace dse
