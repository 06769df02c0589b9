// What a program holds as it runs: the most its trace holds at once (the memory budget's check), what each op frees,
// and whether it frees anything.
#include "engine/program.h"

#include <algorithm>
#include <unordered_map>

namespace atlas {

size_t Program::tracedBytes() const
{
    size_t all = 0;
    for (const Op &op : ops)
        for (const OpOutput &o : op.outputs)
            all += o.bytes();
    if (!checkpointed())
        return all;
    // As the engine runs to the end: each op's outputs made beside what is still to be read, a freed output dropped
    // after its last reader, and (keeping block inputs) each fused feed-forward taken whole, its own ops' outputs
    // never made.
    const std::vector<std::vector<FreedOutput>> freed = freedAfter();
    std::vector<bool> made(ops.size(), true);
    for (size_t k = 0; keeping == BlockKeeping::Input && k < ops.size(); ++k)
        if (ops[k].fused)
            for (size_t j = size_t(ops[k].fusedFrom); j < k; ++j)
                made[j] = false;
    size_t live = 0, peak = 0;
    for (size_t k = 0; k < ops.size(); ++k) {
        if (made[k]) {
            for (const OpOutput &o : ops[k].outputs)
                live += o.bytes();
            peak = std::max(peak, live);
        }
        for (const FreedOutput &f : freed[k])
            if (made[size_t(f.producer)])
                live -= f.bytes;
    }
    return peak;
}

std::vector<std::vector<Program::FreedOutput>> Program::freedAfter() const
{
    std::unordered_map<std::string, size_t> lastReader;
    for (size_t k = 0; k < ops.size(); ++k)
        for (const std::string &in : ops[k].inputs)
            lastReader[in] = k;
    std::vector<std::vector<FreedOutput>> freed(ops.size());
    for (size_t k = 0; k < ops.size(); ++k)
        for (const OpOutput &o : ops[k].outputs)
            if (!o.kept) {
                const auto reader = lastReader.find(o.name);
                freed[reader == lastReader.end() ? k : std::max(k, reader->second)].push_back(
                    {o.name, int(k), o.bytes()});
            }
    return freed;
}

bool Program::checkpointed() const
{
    for (const Op &op : ops)
        for (const OpOutput &o : op.outputs)
            if (!o.kept)
                return true;
    return false;
}

} // namespace atlas
