// The rtm executable's operator new: allocations of a volume's size get transparent huge pages.
//
// A run makes several fresh volumes (the model as read, the grid's copy, the model term, the
// image's download): std::vector zero-fills each on one thread, and on fresh memory the cost is
// the page faults, one per 4 KiB. Measured on an H200's host (16 cores; transparent huge pages
// "madvise"): a 512^3 float volume took 0.31 s, and 0.09-0.11 s with MADV_HUGEPAGE on its range
// before the fill (docs/rtm.md, "Profiling a migration"). So the allocations of at least 64 MiB
// ask for huge pages; the memory still comes from malloc and goes back through free, and the
// advice is only advice (a kernel without transparent huge pages ignores it).
//
// Linked into the executable only (tests and tools keep the default operator new), and not built
// under AddressSanitizer, which brings its own.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RTM_ASAN 1
#endif
#endif
#if !defined(__SANITIZE_ADDRESS__) && !defined(RTM_ASAN)

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace {

constexpr std::size_t kLargeAllocation = std::size_t(64) << 20;
constexpr std::uintptr_t kHugePage = std::uintptr_t(2) << 20;

// The whole huge pages inside [p, p + bytes): the only part the advice can apply to.
void advise_huge_pages(void* p, std::size_t bytes) {
  const auto first = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t begin = (first + kHugePage - 1) & ~(kHugePage - 1);
  const std::uintptr_t end = (first + bytes) & ~(kHugePage - 1);
  if (end > begin) (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

} // namespace

void* operator new(std::size_t bytes) {
  void* p = std::malloc(bytes == 0 ? 1 : bytes);
  if (p == nullptr) throw std::bad_alloc();
  if (bytes >= kLargeAllocation) advise_huge_pages(p, bytes);
  return p;
}

void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

#endif
