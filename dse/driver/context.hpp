// The distributed context: MPI behind one small interface with a local twin, so
// that the driver and its tests run without mpirun. Only context_mpi.cpp
// includes <mpi.h>; TBB worker threads never call into it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "search/big_pages.hpp"

namespace dse {

using Bytes = BigVector<char>;  // messages of 4 MiB and more on huge pages (search/big_pages.hpp)

class Context {
 public:
  virtual ~Context() = default;
  [[nodiscard]] virtual int rank() const = 0;
  [[nodiscard]] virtual int size() const = 0;
  [[nodiscard]] virtual bool distributed() const = 0;  // an MPI world of any size
  virtual void barrier() = 0;
  // Root's value on every rank.
  virtual Bytes broadcast(Bytes data, int root) = 0;
  virtual void send(const Bytes& data, int dest, int tag) = 0;
  virtual Bytes receive(int source, int tag) = 0;
  // A rank with a message of `tag` waiting, or -1 (never blocks).
  virtual int poll(int tag) = 0;
  // A rank with a message of `tag` waiting; blocks until there is one.
  virtual int wait_any(int tag) = 0;
  // Sum of a value over ranks, on every rank.
  virtual std::uint64_t sum(std::uint64_t value) = 0;
  // Maximum of a value over ranks, on every rank.
  virtual std::int64_t max(std::int64_t value) = 0;
  // Every rank's bytes, concatenated in rank order, on every rank. Collective.
  virtual Bytes all_gather(Bytes mine) = 0;
  // All-to-all: out[r] goes to rank r (out.size() == size()); returns in[r], the bytes rank r
  // sent to this rank (in[rank()] is out[rank()]). Collective.
  virtual std::vector<Bytes> exchange(std::vector<Bytes> out) = 0;
  // The ranks on this rank's node (shared memory), this one included.
  [[nodiscard]] virtual int node_ranks() const = 0;
  // Set an HDF5 file-access property list for collective access (no-op locally).
  virtual void configure_hdf5_access(std::int64_t fapl) const = 0;
  // configure_hdf5_access as a function (h5::FileAccess, for h5::create_file and
  // h5::open_file_readwrite).
  [[nodiscard]] std::function<void(std::int64_t)> file_access() const {
    return [this](std::int64_t fapl) { configure_hdf5_access(fapl); };
  }
};

// A one-rank context with no MPI.
std::unique_ptr<Context> make_local_context();

// Binomial-tree reduction to rank 0: depth ceil(log2(size)). `combine(a, b)`
// must be associative; b comes from the higher-ranked subtree. Other ranks get {}.
Bytes tree_reduce(Context& ctx, Bytes local, const std::function<Bytes(Bytes, Bytes)>& combine);

// RAII start-up of MPI (MPI_THREAD_FUNNELED). On destruction: MPI_Finalize, or
// MPI_Abort when an exception is unwinding, so that no rank is left hanging.
class MpiSession {
 public:
  MpiSession(int& argc, char**& argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  // The world communicator as a Context; valid while the session lives.
  [[nodiscard]] std::unique_ptr<Context> world() const;
  // Stop every rank now with an exit code (for an error seen on one rank only).
  [[noreturn]] static void abort(int code);
};

}  // namespace dse
