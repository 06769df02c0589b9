#include "analysis/architecturediagram.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace atlas {

int opsRun(const Program &program, const Trace &trace)
{
    int run = 0;
    for (const Op &op : program.ops) {
        if (op.outputs.empty() || !trace.contains(op.outputs.front().name))
            break;
        ++run;
    }
    return run;
}

namespace {

// The column of an op: its stack's embedding, one of its blocks, or what follows them ("encoder output" for the
// encoder's final norm, "output" for the head).
std::string stackWord(const names::Stack &stack)
{
    return stack == names::kEncoderStack ? "encoder " : stack == names::kDecoderStack ? "decoder " : "";
}

std::string columnOf(const Op &op, bool afterBlocks)
{
    const std::string stack = stackWord(op.stack);
    if (op.layer >= 0)
        return stack + "layer " + std::to_string(op.layer);
    if (!afterBlocks)
        return stack + "embedding";
    return op.stack == names::kEncoderStack ? "encoder output" : "output";
}

// Every input of every op that an earlier op wrote (weights and the token ids have no producer). The stream's
// tensors are what each residual add adds to (its first input, the embedding's sum X₀ for the first) and what it
// writes.
std::vector<DiagramEdge> dataFlow(const Program &program)
{
    std::unordered_map<std::string, int> producer;
    std::unordered_set<std::string> stream;
    for (int i = 0; i < int(program.ops.size()); ++i) {
        const Op &op = program.ops[size_t(i)];
        for (const OpOutput &out : op.outputs)
            producer.emplace(out.name, i);
        if (op.residual && !op.inputs.empty()) {
            stream.insert(op.inputs.front());
            for (const OpOutput &out : op.outputs)
                stream.insert(out.name);
        }
    }
    std::vector<DiagramEdge> edges;
    for (int i = 0; i < int(program.ops.size()); ++i) {
        const Op &op = program.ops[size_t(i)];
        for (const std::string &input : op.inputs) {
            const auto from = producer.find(input);
            if (from == producer.end() || from->second >= i)
                continue;
            const DiagramEdge::Kind kind = input == names::encoderOutput() && op.stack == names::kDecoderStack
                ? DiagramEdge::Kind::EncoderKeyValue
                : stream.contains(input) ? DiagramEdge::Kind::Stream
                                         : DiagramEdge::Kind::Flow;
            edges.push_back({from->second, i, input, kind});
        }
    }
    return edges;
}

} // namespace

std::string layerKind(const ModelConfig &c, int layer)
{
    std::vector<std::string> parts;
    if (c.slidingWindow > 0)
        parts.push_back(c.windowed(layer) ? "window " + std::to_string(c.slidingWindow) : "global");
    if (c.rotatesQueriesAndKeys() && !c.rotates(layer))
        parts.push_back("NoPE");
    std::string kind;
    for (const std::string &part : parts)
        kind += (kind.empty() ? "" : ", ") + part;
    return kind;
}

ArchitectureDiagram architectureDiagram(const Program &program, const Trace *trace, const ModelConfig *config)
{
    ArchitectureDiagram d;
    const int run = trace ? opsRun(program, *trace) : 0;
    d.current = run - 1;
    std::vector<int> filled;
    std::vector<names::Stack> stacksWithBlocks;
    for (int i = 0; i < int(program.ops.size()); ++i) {
        const Op &op = program.ops[size_t(i)];
        if (op.layer >= 0
            && std::find(stacksWithBlocks.begin(), stacksWithBlocks.end(), op.stack) == stacksWithBlocks.end())
            stacksWithBlocks.push_back(op.stack);
        const bool afterBlocks = op.layer < 0
            && std::find(stacksWithBlocks.begin(), stacksWithBlocks.end(), op.stack) != stacksWithBlocks.end();
        const std::string column = columnOf(op, afterBlocks);
        auto it = std::find(d.columns.begin(), d.columns.end(), column);
        if (it == d.columns.end()) {
            d.columns.push_back(column);
            d.columnLayers.push_back(op.layer);
            d.columnStacks.push_back(stackWord(op.stack));
            // An encoder–decoder's stacks share the layer settings these describe (windows and NoPE are decoder-only
            // families').
            d.columnKinds.push_back(
                config && op.layer >= 0 && !config->isEncoderDecoder() ? layerKind(*config, op.layer) : std::string());
            filled.push_back(0);
            it = d.columns.end() - 1;
        }
        DiagramBox box;
        box.op = i;
        box.name = op.name;
        box.label = op.label;
        box.residual = op.residual;
        if (!op.outputs.empty()) {
            box.shape = Tensor::shapeString(op.outputs.front().shape);
            box.formula = op.outputs.front().formula;
        }
        box.column = int(it - d.columns.begin());
        box.row = filled[size_t(box.column)]++;
        box.done = i < run;
        d.boxes.push_back(std::move(box));
    }
    d.rows = filled.empty() ? 0 : *std::max_element(filled.begin(), filled.end());
    d.edges = dataFlow(program);
    return d;
}

std::vector<DiagramEdge> edgesInto(const ArchitectureDiagram &diagram, int op)
{
    std::vector<DiagramEdge> into;
    for (const DiagramEdge &e : diagram.edges)
        if (e.to == op)
            into.push_back(e);
    return into;
}

std::vector<DiagramColumnRun> columnRuns(const ArchitectureDiagram &diagram, bool fold)
{
    const int currentColumn = diagram.current >= 0 ? diagram.boxes[size_t(diagram.current)].column : -1;
    std::vector<DiagramColumnRun> runs;
    for (int c = 0; c < int(diagram.columns.size()); ++c) {
        const int layer = diagram.columnLayers[size_t(c)];
        const bool folds = fold && layer > 0 && c != currentColumn;
        // A layer after another folded one of the same stack joins its run (a stack's layers are consecutive).
        if (folds && !runs.empty() && runs.back().folded && runs.back().last == c - 1) {
            runs.back().last = c;
            continue;
        }
        runs.push_back({c, c, folds});
    }
    return runs;
}

std::string columnRunName(const ArchitectureDiagram &diagram, const DiagramColumnRun &run)
{
    if (!run.folded || run.last == run.first)
        return diagram.columns.at(size_t(run.first));
    return diagram.columnStacks.at(size_t(run.first)) + "layers "
        + std::to_string(diagram.columnLayers.at(size_t(run.first))) + "\u2013"
        + std::to_string(diagram.columnLayers.at(size_t(run.last)));
}

} // namespace atlas
