// tbb::parallel_for with its fork and join made visible to ThreadSanitizer. libtbb is not
// instrumented, so TSan cannot see that a body's tasks start after the caller's writes and
// end before parallel_for returns; it then reports the caller's later use of memory a body
// read (its own stack frames reused, for one) as a race. Under TSan the wrapper releases a
// sync object before the loop that every task acquires, and every task releases one that
// the caller acquires after the loop. Without TSan it is tbb::parallel_for. tsan_release and
// tsan_acquire do the same for other hand-offs (a task_group's task).
#pragma once

#include <oneapi/tbb/parallel_for.h>

#if defined(__SANITIZE_THREAD__)
#define DSE_TSAN_SYNC 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define DSE_TSAN_SYNC 1
#endif
#endif

#ifdef DSE_TSAN_SYNC
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace dse {

// A hand-off through libtbb made visible to ThreadSanitizer (no-ops without it): the side that
// hands memory over calls tsan_release(&sync), the side that takes it calls tsan_acquire(&sync)
// with the same sync object. For a task_group: release before run(), acquire first thing in the
// task; release last thing in the task, acquire after wait().
inline void tsan_release([[maybe_unused]] void* sync) {
#ifdef DSE_TSAN_SYNC
  __tsan_release(sync);
#endif
}
inline void tsan_acquire([[maybe_unused]] void* sync) {
#ifdef DSE_TSAN_SYNC
  __tsan_acquire(sync);
#endif
}

template <class Index, class Body>
void parallel_for(Index first, Index last, const Body& body) {
#ifdef DSE_TSAN_SYNC
  int fork = 0;
  int join = 0;
  tsan_release(&fork);
  tbb::parallel_for(first, last, [&](Index i) {
    tsan_acquire(&fork);
    body(i);
    tsan_release(&join);
  });
  tsan_acquire(&join);
#else
  tbb::parallel_for(first, last, body);
#endif
}

}  // namespace dse
