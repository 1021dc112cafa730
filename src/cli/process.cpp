#include "process.hpp"

#include <cstdlib>  // defines __GLIBC__ where glibc is the C library

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace memsnap::cli {

void configure_process() {
#if defined(__GLIBC__)
    // Blocks of 128 KiB and more always come from their own mapping and go back to the system
    // when freed. glibc would otherwise raise this threshold after the first large free, and
    // the large buffers of reading a capture would then stay in the heap: the peak grew by
    // 10 MB in a diff of 100 000 sites, and by a varying amount, with the threads' timing.
    mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
}

}  // namespace memsnap::cli
