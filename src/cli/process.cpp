#include "process.hpp"

#include <cstdlib>  // defines __GLIBC__ where glibc is the C library

#if defined(__GLIBC__)
#include <climits>
#include <cstdio>
#include <fstream>
#include <gnu/libc-version.h>
#include <optional>
#include <string>
#include <string_view>

#include <malloc.h>
#include <unistd.h>
#endif

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MEMSNAP_OWN_MALLOC 1  // a sanitizer's allocator: glibc's tunables do not apply
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define MEMSNAP_OWN_MALLOC 1
#endif
#endif

namespace memsnap::cli {

#if defined(__GLIBC__) && !defined(MEMSNAP_OWN_MALLOC)
namespace {

constexpr std::string_view kTunable = "glibc.malloc.hugetlb";

// glibc reads the tunable from 2.35 on.
bool glibc_has_tunable() {
    int major = 0, minor = 0;
    if (std::sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) != 2) return false;
    return major > 2 || (major == 2 && minor >= 35);
}

// "always" or "madvise": huge pages for memory that asks for them.
bool system_has_huge_pages() {
    std::ifstream mode("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string line;
    return std::getline(mode, line) &&
           (line.find("[always]") != std::string::npos || line.find("[madvise]") != std::string::npos);
}

}  // namespace
#endif

void relaunch_on_huge_pages(char** argv) {
#if defined(__GLIBC__) && !defined(MEMSNAP_OWN_MALLOC)
    // A diff of a large capture faults in a fresh 4 KiB page for most of what it allocates:
    // every block of 128 KiB and more has its own mapping (configure_process). On huge pages
    // a fault maps 2 MiB, and the page faults that took a third of a diff's time mostly go.
    // glibc reads GLIBC_TUNABLES only when a program starts, hence the relaunch; a tunable
    // already set (=0 to keep small pages) is left as it is, and so no relaunch repeats.
    const char* tunables = std::getenv("GLIBC_TUNABLES");
    const std::optional<std::string> before = tunables ? std::optional<std::string>(tunables) : std::nullopt;
    if ((before && before->find(kTunable) != std::string::npos) || !glibc_has_tunable() || !system_has_huge_pages())
        return;
    char self[PATH_MAX];
    const ssize_t length = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (length <= 0) return;
    self[length] = '\0';
    const std::string value = (before ? *before + ":" : std::string()) + std::string(kTunable) + "=1";
    if (::setenv("GLIBC_TUNABLES", value.c_str(), 1) != 0) return;
    ::execv(self, argv);
    // Not relaunched: go on with small pages, the environment as it was.
    if (before)
        ::setenv("GLIBC_TUNABLES", before->c_str(), 1);
    else
        ::unsetenv("GLIBC_TUNABLES");
#else
    (void)argv;
#endif
}

void configure_process() {
#if defined(__GLIBC__)
    // Blocks of 128 KiB and more always come from their own mapping and go back to the system
    // when freed. glibc would otherwise raise this threshold after the first large free, and
    // the large buffers of reading a capture would then stay in the heap: the peak grew by
    // 10 MB in a diff of 100 000 sites, and by a varying amount, with the threads' timing.
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
    // One heap for every thread. A thread's own heap grows by a page or a few at a time, each an
    // mprotect that holds up the other threads' page faults: in a diff, where each side is read
    // on its own thread, 366 of them, against 22 with one heap, which grows 2 MiB at a time
    // (huge pages). The readers' small allocations are few (their tables are large vectors), so
    // the one heap's lock is rarely waited for.
#if defined(M_ARENA_MAX)
    mallopt(M_ARENA_MAX, 1);
#endif
#endif
}

}  // namespace memsnap::cli
