#pragma once

#include <string>

// Refusing work that cannot fit before memory is spent on it (docs/reliability.md): callers estimate the bytes a
// request implies from its shape, and a request over this machine's memory fails at once, with the figure.
namespace atlas {

// "512 B", "3.00 KiB", "12.5 MiB", "1.50 GiB", "2.00 TiB": the one byte formatter of the core and the CLI.
std::string formatBytes(double bytes);

// The machine's physical memory in bytes (sysconf), or 0 when the system does not say.
double physicalMemoryBytes();

// Throws atlas::Error "<what> needs about 96.0 GiB, more than this machine's 23.4 GiB of memory" when `bytes` is
// over the physical memory. `what` names the request and, where it helps, the option to change.
void checkFitsInMemory(double bytes, const std::string &what);

} // namespace atlas
