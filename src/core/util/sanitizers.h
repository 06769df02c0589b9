#pragma once

// ATLAS_ADDRESS_SANITIZER is defined in builds with AddressSanitizer (GCC says so by __SANITIZE_ADDRESS__, clang by
// __has_feature): ./atlas test --sanitize and the fuzz harnesses.
#if defined(__SANITIZE_ADDRESS__)
#define ATLAS_ADDRESS_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATLAS_ADDRESS_SANITIZER 1
#endif
#endif
