#include "search/big_pages.hpp"

#include <sys/mman.h>

#include <cstdint>

#if defined(__SANITIZE_ADDRESS__)
#define DSE_BIG_PAGES_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DSE_BIG_PAGES_ASAN 1
#endif
#endif

namespace dse {

namespace {

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

}  // namespace

bool big_pages_mapped(std::size_t bytes) noexcept {
#ifdef DSE_BIG_PAGES_ASAN
  (void)bytes;
  return false;
#else
  return bytes >= kBigPageBlock;
#endif
}

void* big_pages_allocate(std::size_t bytes) {
  if (!big_pages_mapped(bytes)) return ::operator new(bytes);
  if (bytes > static_cast<std::size_t>(-1) - 2 * kHugePage) throw std::bad_alloc();
  const std::size_t len = round_up(bytes, kHugePage);
  // One huge page more than needed, so that a 2 MiB-aligned start lies inside; the ends are unmapped.
  const std::size_t span = len + kHugePage;
  void* m = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) throw std::bad_alloc();
  const auto at = reinterpret_cast<std::uintptr_t>(m);
  const std::uintptr_t aligned = round_up(at, kHugePage);
  if (aligned > at) munmap(m, aligned - at);
  const std::uintptr_t end = at + span;
  if (end > aligned + len) munmap(reinterpret_cast<void*>(aligned + len), end - (aligned + len));
  void* p = reinterpret_cast<void*>(aligned);
  (void)madvise(p, len, MADV_HUGEPAGE);  // EINVAL without THP: an ordinary mapping then
  return p;
}

void big_pages_deallocate(void* p, std::size_t bytes) noexcept {
  if (p == nullptr) return;
  if (!big_pages_mapped(bytes)) {
    ::operator delete(p);
    return;
  }
  munmap(p, round_up(bytes, kHugePage));
}

}  // namespace dse
