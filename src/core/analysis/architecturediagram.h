#pragma once

#include "engine/program.h"
#include "model/modelconfig.h"
#include "trace/trace.h"

#include <string>
#include <vector>

// The architecture diagram (view kind "architecture", in the style of Transformer Explainer): the model's forward
// pass as its parts, the embedding, each layer and the output head, side by side, each a column of its operations
// with their output shapes, and where the stepper is. Read from the program (ops, shapes, formulas) and the trace
// (which ops have run).
namespace atlas {

struct DiagramBox
{
    int op = 0; // index into the program
    std::string name, label; // "layer.0.softmax", "softmax"
    std::string shape; // of its first output, "[4, 17, 17]"
    std::string formula; // of its first output
    int column = 0, row = 0;
    bool done = false; // its outputs are in the trace
    bool residual = false; // an add back into the residual stream (Op::residual)
};

// A tensor flowing from one operation into another: the diagram's arrows.
struct DiagramEdge
{
    enum class Kind {
        Flow, // an operation's output read by a later one
        Stream, // the residual stream: the embedding's output and each residual add's, read by the next sub-layer
                // and added to by the next add (the diagram's spine)
        EncoderKeyValue, // the encoder's output Z, which every decoder block's cross-attention projects to K and V
    };
    int from = 0, to = 0; // ops (= box indices)
    std::string tensor; // the trace name that flows
    Kind kind = Kind::Flow;
};

struct ArchitectureDiagram
{
    // "embedding", "layer 0" … "layer L−1", "output"; an encoder–decoder's: "encoder embedding", "encoder layer 0" …,
    // "encoder output", "decoder embedding", "decoder layer 0" …, "output"
    std::vector<std::string> columns;
    std::vector<int> columnLayers; // per column: the layer it shows, −1 for an embedding or output column
    std::vector<std::string> columnStacks; // per column: "encoder ", "decoder " or "" (a model of one stack)
    // per column: what sets its layer apart from others of the model (layerKind), "" for none or outside the blocks
    std::vector<std::string> columnKinds;
    std::vector<DiagramBox> boxes; // in program order
    std::vector<DiagramEdge> edges; // by target op, then in the order the target reads its inputs
    int current = -1; // the last op run (the stepper's), −1 before the first
    int rows = 0; // the tallest column's boxes
};

// A column as drawn: one of the diagram's columns, or consecutive layers of one stack folded into one.
struct DiagramColumnRun
{
    int first = 0, last = 0; // the diagram's columns it stands for
    bool folded = false;
    bool operator==(const DiagramColumnRun &) const = default;
};

// How far a run has got: the leading ops of `program` whose outputs `trace` holds (the engine runs them in order).
int opsRun(const Program &program, const Trace &trace);

// What sets layer `layer` apart where a model's layers differ: "window W" (it sees the last W keys), "global" (a
// model with windows elsewhere), "NoPE" (q and k not turned in a RoPE model), joined by ", "; "" when its layers are
// all alike in these.
std::string layerKind(const ModelConfig &config, int layer);

// `config`, when given, names each layer's kind (columnKinds).
ArchitectureDiagram architectureDiagram(
    const Program &program, const Trace *trace, const ModelConfig *config = nullptr);
// The edges into op `op`: what it reads, from which operations.
std::vector<DiagramEdge> edgesInto(const ArchitectureDiagram &diagram, int op);

// The diagram's columns with `fold`: each stack's layers but its first and the one holding the current op folded,
// consecutive ones into one run, so that a deep model fits a projector's width; without, one run per column.
std::vector<DiagramColumnRun> columnRuns(const ArchitectureDiagram &diagram, bool fold);
// A run's name: its column's ("layer 0", "encoder output"), or for folded layers "layers 1–3" ("decoder layers 1–3").
std::string columnRunName(const ArchitectureDiagram &diagram, const DiagramColumnRun &run);

} // namespace atlas
