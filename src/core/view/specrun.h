#pragma once

#include "engine/input.h"
#include "engine/program.h"
#include "model/model.h"
#include "trace/names.h"
#include "trace/trace.h"
#include "train/objectives.h"
#include "view/viewkinds.h"
#include "view/viewspec.h"

#include <memory>
#include <vector>

namespace atlas {

// What drawing a spec needs: its model run to the end on its input, as `render`, lessons and tests draw it.
struct SpecRun
{
    std::shared_ptr<const Model> model;
    Input input;
    std::shared_ptr<const Program> program;
    std::shared_ptr<const Trace> trace;
    names::AttentionSite site; // the attention the spec's view draws from (viewSiteOf)
};

class Tokenizer;

// The spec's model as loaded, with the spec's "positions" applied (Model::withPositions). Throws atlas::Error.
std::shared_ptr<const Model> loadSpecModel(const ViewSpec &spec);

// The engine input the spec names for `model`: text or tokens and padding; for an encoder-decoder those are the
// source and decoder_text or decoder_tokens the decoder's input (its sample decoder input when the spec gives none
// and the text is the model's sample). Throws atlas::Error naming `source` and the key.
Input specInput(const ViewSpec &spec, const Model &model, const Tokenizer &tokenizer, const std::string &source);

// The attention the spec's "site" names in `model`; throws atlas::Error naming `source` and the key when the model
// has no such attention (cross-attention in a decoder-only model).
names::AttentionSite attentionSiteOf(const ViewSpec &spec, const ModelConfig &model, const std::string &source);
// The blocks of that site's stack.
int siteLayers(const names::AttentionSite &site, const ModelConfig &model);
// The attention the spec's view draws from: the site for the views of attention (attention, heads, lines, mask),
// else the one the model's next token comes from (an encoder-decoder's decoder self-attention).
names::AttentionSite viewSiteOf(const ViewSpec &spec, const ModelConfig &model, const std::string &source);
// Why the spec's view cannot show an encoder-decoder (views of one stack: kernels, memory …), naming the
// views that can; empty when it can, or the model has one stack.
std::string encoderDecoderProblem(const std::string &view, const ModelConfig &model, const std::string &modelName);

// The objective the spec's "objective" names ("" = the model's own: ownObjective, analysis/objectiveexample.h).
Objective objectiveOf(const ViewSpec &spec, const ModelConfig &model);

// Why the objective view cannot apply the spec's objective to `tokens`, and why the fills view has nothing to fill
// (a model without [MASK], an objective that hides nothing, an input without [MASK]): the descriptors' input checks.
SpecProblem objectiveInputProblem(const ViewSpec &spec, const Model &model, const Input &input);
SpecProblem fillsInputProblem(const ViewSpec &spec, const Model &model, const Input &input);

// Loads the spec's model (or takes `loaded`, the spec's model already loaded), encodes its input, runs the engine to
// the spec's op; a checkpointed trace gets the tensors the spec's view reads computed again (recomputedForSpec).
// Throws atlas::Error.
SpecRun runSpec(
    const ViewSpec &spec, size_t memoryBudget = size_t(8) << 30, std::shared_ptr<const Model> loaded = nullptr);

// Why the spec's view cannot be drawn from `run` (a layer, head, position or query the model or input does not
// have; a tensor the view reads missing from the trace), naming the key; empty when it can. The app draws the
// message instead; `render` refuses with it. `source` names the spec ("spec.json").
std::string drawProblem(const ViewSpec &spec, const SpecRun &run, const std::string &source);

// What the spec's view reads that `trace`, checkpointed, has freed (ViewKind::recomputes, and the tensor view's
// tensor): the names to compute again (engine/recompute.h) before the view draws. Empty for a trace that keeps them.
std::vector<std::string> recomputedForSpec(
    const ViewSpec &spec, const ModelConfig &config, const Program &program, const Trace &trace);

// The engine's cursor the spec asks for: after its "op" (an op's name, or a tensor's, meaning the op that writes
// it), or the end when it names none. Throws atlas::Error naming `source` and the key for an op the program does not
// have.
int stepperPosition(const ViewSpec &spec, const Program &program, const std::string &source);

// Input::attention for the spec's "attention", "attention_params" and "attention_layers" on a model of
// `layerCount` layers. Throws atlas::Error for a bad kernel, parameter or layer.
std::vector<attention::AttentionKernelSpec> attentionOfSpec(const ViewSpec &spec, int layerCount);

} // namespace atlas
