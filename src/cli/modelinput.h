#pragma once

#include "analysis/activationpatching.h"
#include "engine/engine.h"
#include "engine/generator.h"

#include "engine/input.h"
#include "model/model.h"
#include "tokenize/tokenizer.h"

#include <memory>

namespace atlas {

class Arguments;

struct ModelAndInput
{
    std::shared_ptr<const Model> model;
    std::unique_ptr<Tokenizer> tokenizer;
    Input input;
};

// --model NAME|DIR, then --tokens 1,2,3 or --text "...", and --padding 5,6. For an encoder–decoder these are its
// source (the encoder's input and its padding), and --decoder-tokens or --decoder-text the decoder's input.
ModelAndInput loadModelAndInput(const Arguments &args);
// --attention KIND [--attention-param key=value ...] [--attention-layers 0,2] -> Input::attention: the kernel in
// the listed layers (every layer without --attention-layers), full attention elsewhere; empty for none.
std::vector<attention::AttentionKernelSpec> attentionArgument(const Arguments &args, int layerCount);
// --ablate-heads 0.1,1.3 [--ablation zero|mean] -> the heads switched off (none without --ablate-heads); mean
// ablation averages each head over the references of analysis/headimportance.h (the task's held-out examples).
HeadAblation ablationArgument(const Arguments &args, std::shared_ptr<const Model> model, const std::vector<int> &input);
// --temperature T --top-k K --top-p P --seed S: how a continuation samples (greedy by default).
SamplingOptions samplingArgument(const Arguments &args);
// --memory-budget GIB (default 8), above 0 and at most 2^20 GiB.
size_t memoryBudgetArgument(const Arguments &args);
// --memory-budget and --attention-trace auto|whole|on-demand|checkpoints|inputs (default auto): how the run keeps its
// attention (engine/attentiontrace.h) and its blocks' other tensors (engine/recompute.h).
EngineOptions traceOptionsArgument(const Arguments &args);
// The corrupted run of patching and circuits: --corrupted-text "..." or --corrupted-tokens 1,2 (as many tokens as the
// input), or --noise-positions 3,4 [--noise-scale X] [--seed S].
Corruption corruptionArgument(const Arguments &args, const Tokenizer &tokenizer);
// Their metric: --target TOKEN [--contrast TOKEN] [--position P].
PatchMetric metricArgument(const Arguments &args, const Tokenizer &tokenizer, int vocab);
// The metric as the commands print it: "logit('l') - logit('o')" or "p('l')".
std::string metricName(const PatchMetric &metric, const Tokenizer &tokenizer);
// The analyses' budget (util/workbudget.h) from --work-budget TFLOP and --memory-budget GIB where given, set for the
// whole run.
void setWorkBudgetArguments(const Arguments &args);

} // namespace atlas
