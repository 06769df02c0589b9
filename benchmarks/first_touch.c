/* What a page costs the first time it is written, in 4 kB pages and with MADV_HUGEPAGE (docs/benchmarks.md, issue
 * 34): three rounds of a 311 MB buffer (Qwen2.5-0.5B's logits at 512 tokens).
 *   cc -O2 benchmarks/first_touch.c -o /tmp/first_touch && /tmp/first_touch 0 && /tmp/first_touch 1 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    const size_t bytes = (size_t)311 << 20, huge = (size_t)2 << 20;
    const int advise = argc > 1 && atoi(argv[1]) != 0;
    for (int round = 0; round < 3; ++round) {
        char *p = mmap(NULL, bytes + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return 1;
        char *q = (char *)(((size_t)p + huge - 1) & ~(huge - 1));
        if (advise)
            madvise(q, bytes, MADV_HUGEPAGE);
        const double t0 = now();
        for (size_t i = 0; i < bytes; i += 4096)
            q[i] = 1;
        printf("%s: %.1f ms\n", advise ? "MADV_HUGEPAGE" : "4 kB pages", (now() - t0) * 1e3);
        munmap(p, bytes + huge);
    }
    return 0;
}
