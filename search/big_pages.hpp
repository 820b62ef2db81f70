// Storage for the large buffers of `dse run` that grow point by point: the archive's records and
// the archives' key rows.
//
// A local archive of half a million 280-byte records is ~150 MB, and a std::vector that grows to it
// by doubling touches ~300 MB of fresh pages on the way. Linux maps fresh anonymous memory 4 KiB at a
// time, one page fault each: the single-operator bench took 132,569 faults on one rank, 20% of its
// perf samples in the fault path (docs/speed.md, "Huge pages for the archive's records"). Blocks of
// kBigPageBlock bytes or more therefore come straight from mmap, aligned to 2 MiB and advised as
// transparent huge pages (MADV_HUGEPAGE, which Debian's default `madvise` THP mode honours), so a
// fault maps 2 MiB; smaller blocks come from operator new. Where the kernel has no transparent huge
// pages the advice fails and the block is an ordinary mapping (nothing changes but the fault count).
// Builds with AddressSanitizer take every block from operator new, so that it checks them.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace dse {

inline constexpr std::size_t kBigPageBlock = std::size_t{4} << 20;  // 4 MiB
inline constexpr std::size_t kHugePage = std::size_t{2} << 20;      // x86-64 and arm64 (4 KiB base pages)

// `bytes` of storage: from mmap, 2 MiB-aligned and advised as huge pages, when bytes >=
// kBigPageBlock (and the build has no AddressSanitizer); from operator new otherwise. Throws
// std::bad_alloc when the memory is not there.
void* big_pages_allocate(std::size_t bytes);
// Frees what big_pages_allocate(bytes) returned (the same `bytes`).
void big_pages_deallocate(void* p, std::size_t bytes) noexcept;
// Whether big_pages_allocate(bytes) maps the block itself (for tests).
bool big_pages_mapped(std::size_t bytes) noexcept;

// The allocator of vectors that may grow to many megabytes (stateless: any two compare equal).
template <class T>
struct BigPageAllocator {
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "over-aligned types are not supported");
  using value_type = T;
  BigPageAllocator() noexcept = default;
  template <class U>
  BigPageAllocator(const BigPageAllocator<U>& /*other*/) noexcept {}  // NOLINT(google-explicit-constructor)
  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(big_pages_allocate(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { big_pages_deallocate(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const BigPageAllocator<U>& /*other*/) const noexcept {
    return true;
  }
};

// A vector on that allocator.
template <class T>
using BigVector = std::vector<T, BigPageAllocator<T>>;

}  // namespace dse
