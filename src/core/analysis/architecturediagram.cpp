#include "analysis/architecturediagram.h"

#include <algorithm>

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

ArchitectureDiagram architectureDiagram(const Program &program, const Trace *trace)
{
    ArchitectureDiagram d;
    int layers = 0;
    for (const Op &op : program.ops)
        layers = std::max(layers, op.layer + 1);
    d.columns.push_back("embedding");
    for (int l = 0; l < layers; ++l)
        d.columns.push_back("layer " + std::to_string(l));
    d.columns.push_back("output");
    const int run = trace ? opsRun(program, *trace) : 0;
    d.current = run - 1;
    std::vector<int> filled(d.columns.size(), 0);
    bool pastBlocks = false;
    for (int i = 0; i < int(program.ops.size()); ++i) {
        const Op &op = program.ops[size_t(i)];
        pastBlocks = pastBlocks || (op.layer < 0 && i > 0 && program.ops[size_t(i - 1)].layer >= 0);
        DiagramBox box;
        box.op = i;
        box.name = op.name;
        box.label = op.label;
        if (!op.outputs.empty()) {
            box.shape = Tensor::shapeString(op.outputs.front().shape);
            box.formula = op.outputs.front().formula;
        }
        box.column = op.layer >= 0 ? op.layer + 1 : pastBlocks ? int(d.columns.size()) - 1 : 0;
        box.row = filled[size_t(box.column)]++;
        box.done = i < run;
        d.boxes.push_back(std::move(box));
    }
    d.rows = filled.empty() ? 0 : *std::max_element(filled.begin(), filled.end());
    return d;
}

} // namespace atlas
