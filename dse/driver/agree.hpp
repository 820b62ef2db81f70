// Failures agreed across ranks (issue 58 item 7). Every rank of `dse run` goes from one
// collective call to the next; an exception raised on some ranks only between two of them would
// leave the others waiting in the next one for a rank that has thrown (2 ranks hung at 100% CPU:
// one in MPI_Allreduce, one in the HDF5 close barrier). So each stretch of local work ends with
// agree(): one MPI_Allreduce that tells every rank whether any rank failed, and, if one did, one
// broadcast of the lowest failing rank's error, which every rank then throws (same kind, same
// message), so that they all leave together and rank 0 prints it once.
//
// Collective HDF5 writes that fail inside the call are not agreed this way (HDF5 returns early on
// the failing rank while the others wait inside the same call): dse/h5/h5.hpp stops the job there.
#pragma once

#include <atomic>
#include <exception>
#include <utility>

#include "dse/driver/context.hpp"
#include "dse/error.hpp"

namespace dse {

// Collective. `local` is the exception this rank caught since the last agreement, or null. When
// any rank failed, every rank throws the error of the lowest failing rank: InputError (a
// ConfigError on the rank that raised it), IoError, Interrupted, MpiError or Error as raised; any
// other exception (std::bad_alloc, say) as Error("internal error on rank R: what"). Returns when
// no rank failed.
void agree(Context& ctx, std::exception_ptr local);

// Runs `work` (local: no collective call inside) and agrees on its outcome with every rank. With
// `cancel` set (SIGINT/SIGTERM), the stretch fails with Interrupted on this rank, and so on all:
// the places that pass it are those where the file holds a checkpoint to resume from.
template <class F>
void agreed(Context& ctx, F&& work, const std::atomic<bool>* cancel = nullptr) {
  std::exception_ptr failure;
  try {
    std::forward<F>(work)();
    if (cancel != nullptr && cancel->load()) throw Interrupted("interrupted by a signal");
  } catch (...) {
    failure = std::current_exception();
  }
  agree(ctx, failure);
}

// Test hook (documented in docs/reliability.md): with the environment variable
// DSE_TEST_FAULT=PHASE:RANK (PHASE one of evaluate, checkpoint, merge, write, compress, print),
// rank RANK throws Error("injected failure in PHASE on rank RANK (DSE_TEST_FAULT)"), exit code 1,
// when it reaches that phase of `dse run`; with DSE_TEST_FAULT=PHASE:RANK:signal it sends itself
// SIGTERM there instead, once (the run must then stop at its next safe point). Read once; does
// nothing when unset.
void test_fault_point(const char* phase, int rank);

}  // namespace dse
