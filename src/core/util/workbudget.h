#pragma once

#include <cstddef>
#include <string>

// How much one analysis may do before it is refused (docs/reliability.md). A heavy analysis (patching's L·T forward
// passes, the memory sweeps' training steps, rollout's T × T products) estimates its floating-point operations and
// the bytes it holds at once before it starts; past the budget it is refused with both figures, and the command line's
// --work-budget and --memory-budget, or the app's "Run anyway", lift it.
namespace atlas {

struct WorkBudget
{
    static constexpr double kDefaultFlops = 2e12; // a quarter of a 143-s sweep's estimate (docs/reliability.md)
    static constexpr double kDefaultBytes = double(size_t(8) << 30);
    double flops = kDefaultFlops; // 0: no bound
    double bytes = kDefaultBytes; // 0: no bound (the machine's memory still is: checkFitsInMemory)

    // The budget analyses start from: the defaults, or the command line's --work-budget and --memory-budget (set
    // once, before any work).
    static WorkBudget &process();
    static WorkBudget unbounded() { return {0, 0}; }
    // The bytes an engine's trace may hold: this budget's, or the default where it sets no bound (an engine run
    // off the GUI thread always has one).
    size_t traceBytes() const { return bytes > 0 ? size_t(bytes) : size_t(kDefaultBytes); }
};

// Why work of `flops` operations holding `bytes` at once is over `budget` ("" when it is not): "<what> is about
// 9.6 TFLOP (…), over the work budget of 2.0 TFLOP; …". `what` names the work and what it is made of.
std::string overBudget(const std::string &what, double flops, double bytes, const WorkBudget &budget);

// "950 MFLOP", "2.0 TFLOP".
std::string formatFlops(double flops);

} // namespace atlas
