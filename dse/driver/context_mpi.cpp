// The only file that includes <mpi.h>. Every MPI return code is checked.
#include <hdf5.h>
#include <mpi.h>

#include <cstring>
#include <exception>
#include <limits>
#include <string>

#include "dse/driver/context.hpp"
#include "dse/error.hpp"

namespace dse {

namespace {

void check(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw MpiError(std::string(what) + " failed: " + std::string(text, static_cast<std::size_t>(len)));
}

// exchange()'s messages (the driver's rounds use 7401 and 7402, context.cpp 7301).
constexpr int kTagExchange = 7501;

int to_count(std::size_t n) {
  if (n > static_cast<std::size_t>(std::numeric_limits<int>::max())) {
    throw MpiError("message larger than 2 GiB");
  }
  return static_cast<int>(n);
}

class MpiContext final : public Context {
 public:
  MpiContext() {
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
    // The ranks sharing this node's memory (collective, once, as the context is made).
    MPI_Comm node = MPI_COMM_NULL;
    check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node),
          "MPI_Comm_split_type");
    check(MPI_Comm_size(node, &node_ranks_), "MPI_Comm_size");
    check(MPI_Comm_free(&node), "MPI_Comm_free");
  }
  [[nodiscard]] int rank() const override { return rank_; }
  [[nodiscard]] int size() const override { return size_; }
  [[nodiscard]] bool distributed() const override { return true; }
  void barrier() override { check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

  Bytes broadcast(Bytes data, int root) override {
    unsigned long long n = data.size();
    check(MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG_LONG, root, MPI_COMM_WORLD), "MPI_Bcast");
    data.resize(static_cast<std::size_t>(n));
    if (n > 0) check(MPI_Bcast(data.data(), to_count(data.size()), MPI_CHAR, root, MPI_COMM_WORLD), "MPI_Bcast");
    return data;
  }

  void send(const Bytes& data, int dest, int tag) override {
    check(MPI_Send(data.data(), to_count(data.size()), MPI_CHAR, dest, tag, MPI_COMM_WORLD), "MPI_Send");
  }

  Bytes receive(int source, int tag) override {
    MPI_Status status;
    check(MPI_Probe(source, tag, MPI_COMM_WORLD, &status), "MPI_Probe");
    int count = 0;
    check(MPI_Get_count(&status, MPI_CHAR, &count), "MPI_Get_count");
    Bytes data(static_cast<std::size_t>(count));
    check(MPI_Recv(data.data(), count, MPI_CHAR, source, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE), "MPI_Recv");
    return data;
  }

  int poll(int tag) override {
    int flag = 0;
    MPI_Status status;
    check(MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &status), "MPI_Iprobe");
    return flag != 0 ? status.MPI_SOURCE : -1;
  }

  int wait_any(int tag) override {
    MPI_Status status;
    check(MPI_Probe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &status), "MPI_Probe");
    return status.MPI_SOURCE;
  }

  std::uint64_t sum(std::uint64_t value) override {
    unsigned long long in = value;
    unsigned long long out = 0;
    check(MPI_Allreduce(&in, &out, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
    return out;
  }

  std::int64_t max(std::int64_t value) override {
    long long in = value;
    long long out = 0;
    check(MPI_Allreduce(&in, &out, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
    return out;
  }

  // The sizes in one all-gather, then the bytes in one MPI_Allgatherv (one step where a gather to
  // rank 0 and its broadcast took two, each rank's bytes copied once to every other rank).
  Bytes all_gather(Bytes mine) override {
    const unsigned long long n = mine.size();
    std::vector<unsigned long long> sizes(static_cast<std::size_t>(size_));
    check(MPI_Allgather(&n, 1, MPI_UNSIGNED_LONG_LONG, sizes.data(), 1, MPI_UNSIGNED_LONG_LONG, MPI_COMM_WORLD),
          "MPI_Allgather");
    std::vector<int> counts(sizes.size());
    std::vector<int> displacements(sizes.size());
    std::size_t total = 0;
    for (std::size_t r = 0; r < sizes.size(); ++r) {
      counts[r] = to_count(static_cast<std::size_t>(sizes[r]));
      displacements[r] = to_count(total);
      total += static_cast<std::size_t>(sizes[r]);
    }
    (void)to_count(total);
    Bytes all(total);
    if (total > 0) {
      check(MPI_Allgatherv(mine.data(), counts[static_cast<std::size_t>(rank_)], MPI_CHAR, all.data(), counts.data(),
                           displacements.data(), MPI_CHAR, MPI_COMM_WORLD),
            "MPI_Allgatherv");
    }
    return all;
  }

  // The counts in one all-to-all, then each peer's bytes sent from and received into their own
  // buffers (no concatenated copy either side; this rank's own share stays where it is).
  std::vector<Bytes> exchange(std::vector<Bytes> out) override {
    if (out.size() != static_cast<std::size_t>(size_)) throw MpiError("exchange: one buffer per rank expected");
    std::vector<unsigned long long> send_counts(out.size());
    std::vector<unsigned long long> receive_counts(out.size());
    for (std::size_t r = 0; r < out.size(); ++r) send_counts[r] = out[r].size();
    check(MPI_Alltoall(send_counts.data(), 1, MPI_UNSIGNED_LONG_LONG, receive_counts.data(), 1,
                       MPI_UNSIGNED_LONG_LONG, MPI_COMM_WORLD),
          "MPI_Alltoall");
    std::vector<Bytes> in(out.size());
    const auto me = static_cast<std::size_t>(rank_);
    in[me] = std::move(out[me]);
    std::vector<MPI_Request> requests;
    for (std::size_t r = 0; r < out.size(); ++r) {
      if (r == me || receive_counts[r] == 0) continue;
      in[r].resize(static_cast<std::size_t>(receive_counts[r]));
      requests.emplace_back();
      check(MPI_Irecv(in[r].data(), to_count(in[r].size()), MPI_CHAR, static_cast<int>(r), kTagExchange,
                      MPI_COMM_WORLD, &requests.back()),
            "MPI_Irecv");
    }
    for (std::size_t r = 0; r < out.size(); ++r) {
      if (r == me || out[r].empty()) continue;
      requests.emplace_back();
      check(MPI_Isend(out[r].data(), to_count(out[r].size()), MPI_CHAR, static_cast<int>(r), kTagExchange,
                      MPI_COMM_WORLD, &requests.back()),
            "MPI_Isend");
    }
    check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    return in;
  }

  [[nodiscard]] int node_ranks() const override { return node_ranks_; }

  void configure_hdf5_access(std::int64_t fapl) const override {
    if (H5Pset_fapl_mpio(static_cast<hid_t>(fapl), MPI_COMM_WORLD, MPI_INFO_NULL) < 0) {
      throw IoError("H5Pset_fapl_mpio failed");
    }
  }

 private:
  int rank_ = 0;
  int size_ = 1;
  int node_ranks_ = 1;
};

}  // namespace

MpiSession::MpiSession(int& argc, char**& argv) {
  int provided = 0;
  check(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  if (provided < MPI_THREAD_FUNNELED) throw MpiError("MPI does not provide MPI_THREAD_FUNNELED");
}

MpiSession::~MpiSession() {
  if (std::uncaught_exceptions() > 0) {
    remove_file_before_abort();
    MPI_Abort(MPI_COMM_WORLD, kExitFailure);
  }
  MPI_Finalize();
}

std::unique_ptr<Context> MpiSession::world() const { return std::make_unique<MpiContext>(); }

void MpiSession::abort(int code) {
  remove_file_before_abort();
  MPI_Abort(MPI_COMM_WORLD, code);
  std::terminate();
}

}  // namespace dse
