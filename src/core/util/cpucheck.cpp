#include "util/cpucheck.h"

namespace atlas {

const char *missingCpuFeature()
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
#ifdef __AVX__
    if (!__builtin_cpu_supports("avx"))
        return "AVX";
#endif
#ifdef __AVX2__
    if (!__builtin_cpu_supports("avx2"))
        return "AVX2";
#endif
#ifdef __FMA__
    if (!__builtin_cpu_supports("fma"))
        return "FMA";
#endif
#ifdef __AVX512F__
    if (!__builtin_cpu_supports("avx512f"))
        return "AVX-512F";
#endif
#ifdef __AVX512BW__
    if (!__builtin_cpu_supports("avx512bw"))
        return "AVX-512BW";
#endif
#ifdef __AVX512VL__
    if (!__builtin_cpu_supports("avx512vl"))
        return "AVX-512VL";
#endif
#ifdef __AVX512BF16__
    if (!__builtin_cpu_supports("avx512bf16"))
        return "AVX-512 BF16";
#endif
#endif
    return nullptr;
}

} // namespace atlas
