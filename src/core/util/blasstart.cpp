// OpenBLAS's settings that it reads as it loads (util/blasthreads.h), and what the benchmarks say about them.
#include "util/blasthreads.h"
#include "util/sanitizers.h"

#include <cstdlib>
#include <set>
#include <string>

#include <unistd.h>

#ifdef ATLAS_OPENBLAS
extern "C" {
int openblas_thread_timeout(void);
char *openblas_get_corename(void);
}
#endif

namespace atlas {

const char *betterBlasKernels()
{
#if defined(ATLAS_OPENBLAS) && (defined(__x86_64__) || defined(__i386__))
    // OpenBLAS's kernels for processors without AVX2, which it also falls back to for one it does not recognise
    static const std::set<std::string> older
        = {"Prescott", "Core2", "Penryn", "Dunnington", "Nehalem", "Sandybridge", "Atom", "Katmai", "Coppermine",
            "Northwood", "Banias", "Barcelona", "Opteron", "Opteron_SSE3", "Bulldozer", "Piledriver", "Steamroller"};
    if (!older.count(blasKernels()))
        return nullptr;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")
        && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512cd"))
        return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return "Haswell";
#endif
    return nullptr;
}

void startWithShortBlasSpin(char **argv)
{
#if defined(__linux__) && defined(ATLAS_OPENBLAS) && !defined(ATLAS_ADDRESS_SANITIZER)
    static_assert(kBlasSpinExponent >= 4 && kBlasSpinExponent <= 30, "OpenBLAS clamps it to [4, 30]");
    if (std::getenv("OPENBLAS_THREAD_TIMEOUT")) // ours, after the restart, or the user's
        return;
    ::setenv("OPENBLAS_THREAD_TIMEOUT", std::to_string(kBlasSpinExponent).c_str(), 1);
    if (const char *kernels = betterBlasKernels(); kernels && !std::getenv("OPENBLAS_CORETYPE"))
        ::setenv("OPENBLAS_CORETYPE", kernels, 1);
    // By its own path, not /proc/self/exe: the process takes its name from the file it runs, and would be "exe" in
    // every process list.
    char path[4096];
    const ssize_t length = ::readlink("/proc/self/exe", path, sizeof path - 1);
    if (length <= 0)
        return;
    path[length] = '\0';
    ::execv(path, argv); // returns only if it failed: then carry on with OpenBLAS's default
#else
    (void)argv;
#endif
}

int blasSpinExponent()
{
#ifdef ATLAS_OPENBLAS
    return openblas_thread_timeout();
#else
    return -1;
#endif
}

std::string blasKernels()
{
#ifdef ATLAS_OPENBLAS
    const char *name = openblas_get_corename();
    return name ? name : "";
#else
    return {};
#endif
}

std::string matrixProductsDescription()
{
#ifdef ATLAS_OPENBLAS
    return std::string(ATLAS_MATRIX_BACKEND) + " (" + blasKernels() + " kernels, threads spin 2^"
        + std::to_string(blasSpinExponent()) + " cycles)";
#else
    return ATLAS_MATRIX_BACKEND;
#endif
}

} // namespace atlas
