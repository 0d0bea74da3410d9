#include "common/memory/release_free_memory.h"

#include <malloc.h>

// Declared weak: defined only where libtcmalloc is linked in (a library linked into programs
// with and without it cannot know which at compile time).
extern "C" void MallocExtension_ReleaseFreeMemory(void) __attribute__((weak));

namespace bai::memory {

void release_free_memory() {
    if (MallocExtension_ReleaseFreeMemory != nullptr) {
        MallocExtension_ReleaseFreeMemory();
    } else {
        ::malloc_trim(0);
    }
}

}  // namespace bai::memory
