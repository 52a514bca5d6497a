/* Flush+Reload on a shared, read-only mapping: the ``cpu-cache`` attack's timer.
 *
 * reload() times one load of a line, in cycles: a line in the shared last-level cache
 * answers in tens, one in memory in hundreds. flush() evicts a line from every cache of
 * the machine (clflush needs no privilege). Built by tests/test_sandbox_cpu_cache.py. */
#include <stdint.h>
#include <x86intrin.h>

uint64_t reload(const volatile char *line) {
    unsigned int aux;
    _mm_mfence();
    uint64_t start = __rdtscp(&aux);
    (void)*line;
    uint64_t end = __rdtscp(&aux);
    _mm_mfence();
    return end - start;
}

void flush(const volatile char *line) {
    _mm_clflush((const void *)line);
    _mm_mfence();
}
