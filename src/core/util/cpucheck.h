#pragma once

namespace atlas {

// The first instruction-set extension this binary was compiled for (`-march`: the build tree's is this machine's,
// the Debian package's x86-64-v3) that the CPU running it lacks, e.g. "AVX2"; nullptr when it has them all. main()
// asks before anything else, so a package on too old a CPU says so instead of dying of an illegal instruction.
const char *missingCpuFeature();

} // namespace atlas
