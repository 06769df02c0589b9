#pragma once

#include <cstdint>
#include <string>
#include <vector>

// The file of measured attention times against N that `bench-attention --sweep --json FILE` writes and the
// Kernels view draws (resources/benchmarks/attention-sweep.json): one sweep per kernel (and causal or not),
// each a list of (N, median, min, max) in milliseconds, with the machine and the date of the measurement.
namespace atlas::attention {

struct SweepPoint
{
    int64_t n = 0; // sequence length
    double medianMs = 0, minMs = 0, maxMs = 0;
};

struct KernelSweep
{
    std::string kind; // attention kernel kind
    std::string description; // describeAttentionKernel of the spec that was timed
    bool causal = false;
    int repeat = 0; // timed runs per point
    double slopeUpperHalf = 0; // least-squares slope of log time against log N over the upper half of N
    std::vector<SweepPoint> points; // by increasing N
};

struct AttentionSweepFile
{
    std::string machine; // "AMD EPYC 7B13, 2 cores"
    std::string date; // "2026-11-22"
    int dHead = 0;
    std::string matrixBackend;
    std::vector<KernelSweep> kernels;

    // Adds `sweep`, replacing an earlier one of the same kind and causality.
    void put(const KernelSweep &sweep);
};

// Reads and validates a sweep file; throws atlas::Error naming the file and the field (a missing key, a wrong
// type, a negative or non-finite time, lengths not increasing).
AttentionSweepFile readAttentionSweep(const std::string &path);
AttentionSweepFile parseAttentionSweep(const std::string &json, const std::string &source);
// Writes it atomically, as readAttentionSweep reads it.
void writeAttentionSweep(const std::string &path, const AttentionSweepFile &file);

} // namespace atlas::attention
