#pragma once

#include "view/viewspec.h"

#include <string>
#include <vector>

namespace atlas {

struct AnalysisContext;
struct AnalysisRequest;
class Model;
struct ModelConfig;
struct Input;

// Why a spec cannot be drawn, and the key to change; an empty `why` when it can.
struct SpecProblem
{
    std::string key;
    std::string why;
};

// What a view cannot draw without, read from the trace of the spec's attention site: nothing in particular, the
// probabilities or the scores of the spec's layer, the first layer's probabilities (the grid of every layer), the
// next-token probabilities, or the tensor the spec names.
enum class ViewNeeds { Nothing, LayerProbs, LayerScores, FirstLayerProbs, NextProbs, SpecTensor };

// A kind of view, described once: the spec's "view" key, the tab's title and group, a line for menus and lessons,
// what it reads and what it can show. ViewSpec validates against these, the app builds its tabs and a widget for
// each (views/viewfactory.cpp), render and lesson check ask them what a spec needs. A new view describes itself in
// its own folder, src/views/NAME/ (docs/architecture.md, "Adding a view").
struct ViewKind
{
    using Request = AnalysisRequest (*)(const ViewSpec &, const AnalysisContext &);
    using InputCheck = SpecProblem (*)(const ViewSpec &, const Model &, const Input &input);
    using Reads = std::vector<std::string> (*)(const ViewSpec &, const ModelConfig &);

    std::string kind; // "attention"
    std::string title; // "Attention"
    std::string summary; // "one head's attention weights as a heat map"
    std::string group; // the app's upper row of tabs: "Attention", "Model", "Efficiency"
    ViewNeeds needs = ViewNeeds::Nothing;
    bool showsSites = false; // draws the attention the spec's "site" names: an encoder-decoder's encoder, cross …
    bool showsEncoderDecoder = false; // draws an encoder-decoder (the others show one-stack models)
    bool everyHead = false; // "head": -1 shows every head of the layer
    bool drawsDifference = false; // "compare": "difference" draws its layer and head's probabilities A − B
    // Draws an FNet block (model/fourierlayers.h), which has no attention; the other views that read a layer's
    // attention refuse one (drawProblem).
    bool drawsFourierLayers = false;
    // Reads the heads of every block (their weights or outputs) beyond what `needs` says: refused, like the views that
    // need every layer's probabilities, on a model with FNet blocks.
    bool readsEveryBlocksHeads = false;
    Request request = nullptr; // the work beyond the forward pass, run off the GUI thread (view/viewanalysis.h)
    // The spec keys `request` reads, by name. The analysis's key is made from their values (analysisSettings) and
    // the identity of what the request reads of the run, so a change to any of them runs it again and a change to
    // any other key does not; a view draws a result only when it was made for its spec's values of them.
    // views_read_their_keys checks the list against what the folder's request code reads.
    std::vector<std::string> analysisKeys;
    // The shared keys that only some views read (SpecKey::someViews) which this view reads beyond analysisKeys: what
    // its widget or its run reads (`scale`, `query`, the corruption keys). specKeys() gives each such key the views
    // that name it here or in analysisKeys.
    std::vector<std::string> alsoReads;
    InputCheck checkInput = nullptr; // what the view asks of the input beyond the model running it (view/specrun.h)
    // The trace tensors the view reads that a checkpointed trace frees (engine/recompute.h): the layer's feed-forward
    // activations, its queries before rotation. The session and `render` compute them again before the view draws
    // (recomputedForSpec). Null for a view that reads only what every trace keeps.
    Reads recomputes = nullptr;
    std::string after; // the kind whose tab this one follows; empty for the first tab of all (Attention)
    // What the view shows and the keys it reads, in Markdown: its folder's NAME.md, which the registry fills in (the
    // app's Help ▸ About This View; docs/view-spec.md's table of views is made from the same files).
    std::string help;
    // The keys this view alone reads, each field an OwnKey its folder declares: specKeys() lists them after the shared
    // ones, named by their OwnKey and with `views` set to this kind (leave both out here).
    std::vector<SpecKey> keys;
};

// Every view's descriptor, in the order of the app's tabs (each after the kind its `after` names).
const std::vector<ViewKind> &viewKinds();
// The descriptor of each view folder, src/views/NAME/ (its `atlas::views::NAME::kind()`), in the folders' order: made
// by src/views/CMakeLists.txt.
std::vector<ViewKind> viewFolderKinds();
// Where `kind` stands in viewKinds() (the app's order of tabs); −1 for an unknown one.
int viewKindIndex(const std::string &kind);
// The entry of `kind`; nullptr for an unknown one.
const ViewKind *findViewKind(const std::string &kind);

} // namespace atlas
