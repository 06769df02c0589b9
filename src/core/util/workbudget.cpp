#include "util/workbudget.h"

#include "util/memorycheck.h"
#include "util/text.h"

#include <cmath>
#include <cstdio>

namespace atlas {

WorkBudget &WorkBudget::process()
{
    static WorkBudget budget;
    return budget;
}

std::string formatFlops(double flops)
{
    static const char *const units[] = {"", "k", "M", "G", "T", "P", "E"};
    const auto [value, unit] = scaledToUnit(flops, 1000, 7);
    flops = value;
    char text[48];
    std::snprintf(text, sizeof text, flops >= 100 || unit == 0 ? "%.0f %sFLOP" : "%.1f %sFLOP", flops, units[unit]);
    return text;
}

std::string overBudget(const std::string &what, double flops, double bytes, const WorkBudget &budget)
{
    if (budget.flops > 0 && !(flops <= budget.flops)) // a NaN estimate is over too
        return what + " is about " + formatFlops(flops) + " of work, over the work budget of "
            + formatFlops(budget.flops)
            + "; shorten the input, or lift the budget (--work-budget TFLOP on the command "
              "line, Run anyway in the app)";
    if (budget.bytes > 0 && !(bytes <= budget.bytes))
        return what + " holds about " + formatBytes(bytes) + " at once, over the memory budget of "
            + formatBytes(budget.bytes)
            + "; shorten the input, or lift the budget (--memory-budget GIB on the command line, Run anyway in the "
              "app)";
    if (const std::string over = overMachineMemory(bytes); !over.empty())
        return what + " holds about " + formatBytes(bytes) + " at once, " + over + "; shorten the input";
    return {};
}

} // namespace atlas
