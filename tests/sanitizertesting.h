#pragma once

#include <QTest>

#include "util/sanitizers.h"

// CI's second stage runs the suite built with AddressSanitizer and UndefinedBehaviorSanitizer (./atlas test
// --sanitize), about twenty times slower. There it looks for memory errors and undefined behaviour in the code; the
// numbers a built-in model is documented to reach are the same in every build and are checked by the normal one.
// A test function that only re-measures such numbers over hundreds of held-out examples skips itself there, and
// says so; the code it runs is run under the sanitizers by the tests of the same analyses on small inputs.
#if defined(ATLAS_ADDRESS_SANITIZER)
#define ATLAS_CLAIMS_IN_THE_NORMAL_BUILD_ONLY()                                                                        \
    QSKIP("a built-in model's documented numbers: checked by the normal build, not under the sanitizers")
#else
#define ATLAS_CLAIMS_IN_THE_NORMAL_BUILD_ONLY() static_cast<void>(0)
#endif

// How much longer a test waits there for work the code computes (training steps, analyses): that build runs the code
// many times slower, and CI runs two tests at once. A wait for the window (a paint, a signal) is the same in both.
// And there a test that checks layout rather than numbers may run the analyses on the least work
// (Session::setAnalysesOnLeastWork), and a layout test may leave out the rows that run the same code on other
// geometry (kUnderSanitizers).
#if defined(ATLAS_ADDRESS_SANITIZER)
constexpr bool kUnderSanitizers = true;
constexpr int kComputeWaitFactor = 4;
constexpr bool kAnalysesOnLeastWork = true;
#else
constexpr bool kUnderSanitizers = false;
constexpr int kComputeWaitFactor = 1;
constexpr bool kAnalysesOnLeastWork = false;
#endif
