#pragma once

namespace atlas {

// `transformer-atlas bench-gui [--quick]`: the real main window at 1280×720 through the heavy actions of issue 13
// (opening a GPT-2-small-shaped model, an 8192-token run, every tab at 4096 tokens, starting and stopping
// training, pattern edits at 16384 tokens), printing the longest time the GUI thread's event loop was blocked
// during each. --quick runs the same actions on small inputs (a check that the benchmark works). Returns the exit
// code: 0, or 1 when an action did not finish in its time limit.
int runGuiStallBenchmark(int argc, char **argv);

} // namespace atlas
