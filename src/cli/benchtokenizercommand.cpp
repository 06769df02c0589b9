#include "arguments.h"
#include "commands.h"
#include "io/atomicfile.h"
#include "model/builtinmodels.h"
#include "model/modeltokenizer.h"
#include "tokenize/tokenizer.h"
#include "util/error.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>

namespace atlas {

namespace {

// The default text: plain English prose written for this benchmark (no copyright), repeated to about 1 MiB.
const char *kDefaultText = R"(The river that runs past the old mill is slow in summer and loud in spring. Children
used to race paper boats from the bridge to the weir, and the winner was whoever's boat did not sink first. Most
years that was nobody's; the current pulled them under the lip of the weir and they came up, soaked and folded,
a hundred yards downstream. The miller's daughter kept a notebook of every race: the date, the names, the boats'
colours and how far each one got. She said it was the only honest sport in the valley.

When the mill closed, in the winter of 1961, the wheel was left to rot. Nobody wanted to pay for the timber, and
the council argued for eleven years about whether it was a monument or a hazard. In the end a storm decided it.
The wheel broke loose one night in March, rolled twenty feet along the bank and lay down in the reeds, where it
still is. Herons stand on it now. If you sit on the bridge at dusk you can watch them fish, perfectly still, as if
they had been carved there with the rest of the machinery.

People ask why anyone would write down the history of a mill that made nothing for sixty years. The answer is that
places remember things differently from people. A person remembers the day the wheel stopped; the river remembers
every day it turned. Walk along the bank with a little patience and you can read it: the worn steps where the
carts came down, the iron rings where boats were tied, the square holes in the wall where the beams of a second
floor once rested. None of it is labelled. All of it is there.

)";

std::string defaultText()
{
    std::string text;
    while (text.size() < (size_t(1) << 20))
        text += kDefaultText;
    return text;
}

// Wall-clock and this thread's CPU time: on a shared machine the CPU time is what stays comparable.
struct Stopwatch
{
    std::chrono::steady_clock::time_point wall = std::chrono::steady_clock::now();
    double cpu = cpuSeconds();

    static double cpuSeconds()
    {
        timespec ts {};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
    }
    double wallSeconds() const
    {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
    }
    double cpuSecondsSince() const { return cpuSeconds() - cpu; }
};

struct Spread
{
    double median, min, max;
};

Spread spread(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return {v[v.size() / 2], v.front(), v.back()};
}

} // namespace

// The directory's own tokenizer (tokenizer.json, GPT-2's vocab.json + merges.txt or vocab.txt): its loading time,
// and its throughput, the first pass with an empty word cache, the repeats with it filled.
int benchTokenizerCommand(const CommandArgs &argv)
{
    const Arguments args(argv, "bench-tokenizer");
    const std::string directory = resolveTokenizer(args.required("model"));
    const int repeat = args.intValue("repeat", 10, 1, 1 << 20);
    if (repeat < 1)
        throw Error("--repeat must be at least 1");
    const std::string text = args.has("file") ? readFile(args.value("file")) : defaultText();
    if (text.empty())
        throw Error(args.value("file") + ": empty file");
    const Stopwatch load;
    const auto tokenizer = tokenizerForDirectory(directory);
    const double loadSeconds = load.wallSeconds();
    if (!tokenizer->canEncode())
        throw Error(directory + ": no tokenizer to benchmark");
    const Stopwatch cold; // a fresh tokenizer's word cache is empty
    const size_t tokens = tokenizer->encode(text).size();
    const double mb = double(text.size()) / 1e6, coldWall = cold.wallSeconds(), coldCpu = cold.cpuSecondsSince();
    std::vector<double> wall, cpu; // MB/s per pass
    for (int r = 0; r < repeat; ++r) {
        const Stopwatch pass;
        if (tokenizer->encode(text).size() != tokens)
            throw Error("bench-tokenizer: a repeat gave a different number of tokens");
        wall.push_back(mb / pass.wallSeconds());
        cpu.push_back(mb / pass.cpuSecondsSince());
    }
    const Spread w = spread(wall), c = spread(cpu);
    std::printf("%s tokenizer; %s: %.2f MB of text, %zu tokens (%.2f bytes/token); loaded in %.0f ms\n",
        tokenizer->kind().c_str(), args.has("file") ? args.value("file").c_str() : "built-in English text", mb, tokens,
        double(text.size()) / double(tokens), loadSeconds * 1e3);
    std::printf("first pass (empty word cache): %.1f MB/s wall, %.1f MB/s CPU time\n", mb / coldWall, mb / coldCpu);
    std::printf("%d cached passes: wall median %.1f MB/s (min %.1f, max %.1f); CPU time median %.1f MB/s "
                "(min %.1f, max %.1f)\n",
        repeat, w.median, w.min, w.max, c.median, c.min, c.max);
    return 0;
}

} // namespace atlas
