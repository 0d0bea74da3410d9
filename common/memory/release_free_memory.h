// Gives the memory the allocator holds free back to the system (after a burst: a start's
// recovery, the last connection of a load), whichever allocator the program was linked with.
#pragma once

namespace bai::memory {

// gperftools' tcmalloc where the program links it (batchai-emulator, outside sanitized builds:
// MallocExtension_ReleaseFreeMemory), else glibc's malloc_trim(0). glibc keeps what threads free
// in per-thread arenas: 13 of 52 MiB after the storage bench, before the trim.
void release_free_memory();

}  // namespace bai::memory
