#pragma once

#include "attention/attentionresult.h"
#include "attention/bigbirdattention.h"
#include "attention/fixedattention.h"
#include "attention/linformerattention.h"
#include "attention/longformerattention.h"
#include "attention/lshattention.h"
#include "attention/performerattention.h"
#include "attention/stridedattention.h"
#include "attention/swinattention.h"

#include <map>
#include <string>
#include <vector>

// One entry point for every attention kernel: a kind and its key=value parameters, validated with errors that
// name the kind and the key, and one dispatch function that attends one head.
//
//   kind        parameters (defaults)
//   full        —
//   lsh         rounds=4 buckets=32 chunk=64 seed=0
//   bigbird     block=64 window_blocks=3 global_blocks=2 random_blocks=3 seed=0
//   longformer  window=512 dilation=1 global=0,5,9 (none by default)
//   strided     stride=128
//   fixed       stride=128 summary=1
//   swin        window=64 shift=0 grid=0   (a model shifts its odd layers' windows by `shift`)
//   linformer   k=256 seed=0 projection=random|identity   (not causal)
//   performer   features=256 seed=0
namespace atlas::attention {

struct AttentionKernelSpec
{
    std::string kind = "full";
    std::map<std::string, std::string> params; // key -> value, as typed
};

// How a kernel's parameter is written: an integer with a default and a minimum, a seed, a list of positions, or
// one of a few words.
enum class KernelParamType { Integer, Seed, Positions, Choice };

struct KernelParam
{
    std::string key;
    KernelParamType type = KernelParamType::Integer;
    int fallback = 0; // Integer: the default (the parameter struct's own)
    int minimum = 0; // Integer: the smallest value allowed
    std::vector<std::string> choices = {}; // Choice: the words, the first is the default
};

// An attention kernel, described once: its name and parameters, Tay et al.'s complexity label, what it can run
// under, and how it attends one head. The kinds' lists (the spec's values, the pattern editor's kinds, the seeded
// kernels, the kernels a causal model can compare) are read from attentionKernels(), never written again.
struct AttentionKernelKind
{
    using Check = void (*)(const AttentionKernelSpec &);
    using Forward = AttentionResult (*)(
        const AttentionKernelSpec &, ConstMatrixMap q, ConstMatrixMap k, ConstMatrixMap v, const AttentionOptions &);

    std::string kind;
    std::vector<KernelParam> params; // in the order describeAttentionKernel lists them
    // Time in N as Tay et al. ("Efficient Transformers: A Survey", 2020, Table 1) give it for the model that
    // introduced the kernel: O(N²) full, O(N log N) Reformer's LSH, O(N√N) the Sparse Transformer's, O(N) the rest.
    std::string complexity;
    bool exact = false; // softmax over every allowed pair: the reference the others approximate
    bool causal = true; // runs under a causal mask (Linformer's projection mixes future keys into every one)
    std::string notCausal; // why it cannot ("" when it can)
    bool fixedPattern = false; // the pairs it computes depend on positions alone (the Pattern view edits these)
    Check check = nullptr; // reads the typed parameters, with the rules that tie two together (buckets even …)
    Forward forward = nullptr; // attends one head with the spec's parameters
    // Its parameters for an input of T tokens, as key=value: where the app, the pattern editor and lessons start
    // (suggestedKernelSpec).
    std::vector<std::string> (*suggest)(int T) = nullptr;
    // Its parameters in the Kernels view's comparison of one head over T tokens (kernelcomparison.h): sized for the
    // short inputs a lesson compares on, where suggest's would leave nothing to see. Empty: the parameters' defaults.
    std::vector<std::string> (*compared)(int64_t T) = nullptr;
    // A fixed pattern's rule over query i and key j, with the spec's numbers, as the Pattern view prints it
    // (patternFormula adds causality).
    std::string (*rule)(const AttentionKernelSpec &, bool causal) = nullptr;
    // A low-rank or random-feature approximation of softmax attention, which the Approximation view sweeps: the
    // parameter that sets its size as written (k, features), as a symbol (k, m) and what it counts, the sizes a
    // sweep over T tokens tries, and the weights it implies, as the view's caption defines them. Empty key for the
    // other kernels.
    struct Approximation
    {
        std::string key, symbol, counts;
        std::vector<int> (*sweep)(int64_t T) = nullptr;
        std::string weights;
    } approximation = {};
    bool hashes = false; // buckets queries and keys by hashing, in rounds (the LSH view explains it; it traces them)
    bool globalPositions = false; // its "global" parameter lists global token positions (a click toggles one)
    // The spec a model's layer runs, when layers differ (Swin shifts its windows in every other layer); null: every
    // layer runs the spec as it is.
    AttentionKernelSpec (*atLayer)(const AttentionKernelSpec &, int layer) = nullptr;
    std::string title; // as its paper names it, for captions: "Linformer", "Reformer's LSH" …
};

// Every kernel, in the order above.
const std::vector<AttentionKernelKind> &attentionKernels();
// The entry of `kind`; throws atlas::Error naming the known ones for another.
const AttentionKernelKind &attentionKernel(const std::string &kind);
// The kinds' names, in the order above.
const std::vector<std::string> &attentionKernelKinds();
// Exact softmax attention: the engine's own, no kernel to run.
bool isExactAttention(const AttentionKernelSpec &spec);
// A parameter's value, validated, its default filled in (the pattern editor reads a kind's integers and positions
// through these). Throws atlas::Error naming the kind and the key.
int kernelInteger(const AttentionKernelSpec &spec, const std::string &key);
uint64_t kernelSeed(const AttentionKernelSpec &spec);
std::vector<int> kernelPositions(const AttentionKernelSpec &spec, const std::string &key);

// kind plus "key=value" strings -> a validated spec; throws atlas::Error naming the kind and the key.
AttentionKernelSpec parseAttentionKernelSpec(const std::string &kind, const std::vector<std::string> &keyValues);
// Throws atlas::Error for an unknown kind, an unknown key or a bad value (a check that needs T waits for the call).
void validateAttentionKernelSpec(const AttentionKernelSpec &spec);
// "lsh (rounds=4, buckets=32, chunk=64, seed=0)": every parameter, defaults filled in, for labels and formulas.
std::string describeAttentionKernel(const AttentionKernelSpec &spec);

// The typed parameters of a spec of that kind (validated; defaults filled in).
LshParams lshParams(const AttentionKernelSpec &spec);
BigBirdParams bigBirdParams(const AttentionKernelSpec &spec);
LongformerParams longformerParams(const AttentionKernelSpec &spec);
StridedParams stridedParams(const AttentionKernelSpec &spec);
FixedParams fixedParams(const AttentionKernelSpec &spec);
SwinParams swinParams(const AttentionKernelSpec &spec);
// The spec layer `layer` of a model runs (AttentionKernelKind::atLayer): the spec itself for most kinds.
AttentionKernelSpec kernelSpecAtLayer(const AttentionKernelSpec &spec, int layer);
LinformerParams linformerParams(const AttentionKernelSpec &spec);
PerformerParams performerParams(const AttentionKernelSpec &spec);

// Attends one head with the spec's kernel. q, k, v are (T,d); result.context is (T,d); weights and mask (T,T)
// when options.dense; extras as the kernel documents. Throws atlas::Error for a bad spec or input, and for a
// causal request to linformer.
AttentionResult attention_kernel_forward(const AttentionKernelSpec &spec, ConstMatrixMap q, ConstMatrixMap k,
    ConstMatrixMap v, const AttentionOptions &options);

} // namespace atlas::attention
