// The architecture diagram's content (analysis/architecturediagram.h): every op of the program in a column of its
// part (embedding, layers, output) in program order, with its output's shape, and the stepper's position read from
// how far the trace has got.
#include "analysis/architecturediagram.h"
#include "engine/engine.h"
#include "model/builtinmodels.h"
#include "testbundle.h"

#include <QTest>

#include <regex>

using namespace atlas;

class TestArchitectureDiagram : public QObject
{
    Q_OBJECT

private slots:
    // An encoder-decoder's columns name each stack: the encoder's embedding, blocks and final norm, then the
    // decoder's, whose blocks hold their cross-attention, then the head.
    void anEncoderDecoderHasAColumnPerStackPart()
    {
        const auto model = loadModel("seq2seq-sort");
        Input input;
        input.source = {100, 98, 99, 97};
        input.tokens = {62, 97};
        Engine engine(model, input);
        const ArchitectureDiagram d = architectureDiagram(engine.program(), &engine.trace());
        QCOMPARE(d.columns,
            (std::vector<std::string> {"encoder embedding", "encoder layer 0", "encoder layer 1", "encoder output",
                "decoder embedding", "decoder layer 0", "decoder layer 1", "output"}));
        for (const DiagramBox &b : d.boxes) {
            const Op &op = engine.program().ops[size_t(b.op)];
            if (op.name.find(".cross.") != std::string::npos)
                QVERIFY(d.columns[size_t(b.column)].starts_with("decoder layer"));
            if (op.name == "enc.ln_f")
                QCOMPARE(d.columns[size_t(b.column)], std::string("encoder output"));
            if (op.name == "next_probs")
                QCOMPARE(d.columns[size_t(b.column)], std::string("output"));
            // ⊕ marks exactly the adds back into a stack's residual stream: after attention, cross-attention,
            // feed-forward
            const bool residual = std::regex_search(op.name, std::regex(R"(layer\.\d+\.(mid|mid_cross|out)$)"));
            QVERIFY2(b.residual == residual, op.name.c_str());
        }
        QCOMPARE(columnRunName(d, {5, 6, true}), std::string("decoder layers 0\u20131"));
        QCOMPARE(columnRunName(d, {3, 3, false}), std::string("encoder output"));
    }

    void columnsFollowTheProgram()
    {
        const auto model = loadModel("reverse");
        Engine engine(model, Input {{97, 98, 99, 62}, {}, {}});
        const Program &program = engine.program();
        const ArchitectureDiagram before = architectureDiagram(program, &engine.trace());
        QCOMPARE(before.current, -1);
        QCOMPARE(before.columns, (std::vector<std::string> {"embedding", "layer 0", "layer 1", "output"}));
        QCOMPARE(before.boxes.size(), program.ops.size());
        int previousRow[4] = {-1, -1, -1, -1};
        for (const DiagramBox &b : before.boxes) {
            const Op &op = program.ops[size_t(b.op)];
            QCOMPARE(b.name, op.name);
            QCOMPARE(b.column, op.layer >= 0 ? op.layer + 1 : (b.op < 5 ? 0 : 3));
            QCOMPARE(b.row, previousRow[b.column] + 1); // in program order within a column
            previousRow[b.column] = b.row;
            QCOMPARE(b.shape, Tensor::shapeString(op.outputs.front().shape));
            QVERIFY(!b.done);
        }
        QCOMPARE(before.boxes.back().column, 3);
        QCOMPARE(before.rows, *std::max_element(previousRow, previousRow + 4) + 1);
        engine.runTo(7);
        const ArchitectureDiagram stepped = architectureDiagram(program, &engine.trace());
        QCOMPARE(stepped.current, 6);
        QCOMPARE(opsRun(program, engine.trace()), 7);
        for (const DiagramBox &b : stepped.boxes)
            QCOMPARE(b.done, b.op < 7);
        engine.runToEnd();
        QCOMPARE(architectureDiagram(program, &engine.trace()).current, int(program.ops.size()) - 1);
    }

    // To fit a projector, each stack keeps its first layer and the one the stepper is in; its other layers fold, a
    // run of consecutive ones into one column. Unfolded, a run per column.
    void foldingKeepsEachStacksFirstLayerAndTheCurrentOne()
    {
        const auto model = loadModel("austen"); // 4 layers
        Engine engine(model, Input {{72, 101, 108, 108, 111}, {}, {}});
        const Program &program = engine.program();
        const ArchitectureDiagram before = architectureDiagram(program, &engine.trace());
        QCOMPARE(before.columnLayers, (std::vector<int> {-1, 0, 1, 2, 3, -1}));
        QCOMPARE(columnRuns(before, false),
            (std::vector<DiagramColumnRun> {{0, 0}, {1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 5}}));
        QCOMPARE(columnRuns(before, true), (std::vector<DiagramColumnRun> {{0, 0}, {1, 1}, {2, 4, true}, {5, 5}}));
        engine.runTo(program.indexOf("layer.2.attn.probs") + 1);
        const ArchitectureDiagram stepped = architectureDiagram(program, &engine.trace());
        QCOMPARE(columnRuns(stepped, true),
            (std::vector<DiagramColumnRun> {{0, 0}, {1, 1}, {2, 2, true}, {3, 3}, {4, 4, true}, {5, 5}}));

        const auto seq2seq = loadModel("seq2seq-sort"); // two stacks of 2 layers
        Input input;
        input.source = {100, 98, 99, 97};
        input.tokens = {62, 97};
        Engine encoderDecoder(seq2seq, input);
        const ArchitectureDiagram both = architectureDiagram(encoderDecoder.program(), &encoderDecoder.trace());
        QCOMPARE(columnRuns(both, true),
            (std::vector<DiagramColumnRun> {
                {0, 0}, {1, 1}, {2, 2, true}, {3, 3}, {4, 4}, {5, 5}, {6, 6, true}, {7, 7}}));
    }

    // The arrows: every input an earlier op wrote, by kind. On a pre-LN GPT the stream runs X₀ → mid → out → mid …:
    // each add reads the stream and its sub-layer's output, each ln reads the stream, and nothing reads a weight.
    void edgesFollowTheDataAndTheStreamIsTheSpine()
    {
        const auto model = loadModel("reverse");
        Engine engine(model, Input {{97, 98, 99, 62}, {}, {}});
        const Program &program = engine.program();
        const ArchitectureDiagram d = architectureDiagram(program, &engine.trace());
        const auto op = [&program](const std::string &name) { return program.indexOf(name); };
        const auto edge = [&](const std::string &from, const std::string &to) -> const DiagramEdge * {
            for (const DiagramEdge &e : d.edges)
                if (e.from == op(from) && e.to == op(to))
                    return &e;
            return nullptr;
        };
        for (const DiagramEdge &e : d.edges) {
            QVERIFY(e.from < e.to);
            const Op &target = program.ops[size_t(e.to)];
            QVERIFY2(std::find(target.inputs.begin(), target.inputs.end(), e.tensor) != target.inputs.end(),
                e.tensor.c_str());
            QCOMPARE(program.producerOf(e.tensor), e.from);
            QVERIFY(e.kind != DiagramEdge::Kind::EncoderKeyValue); // one stack
        }
        // The spine: X₀ into layer 0's ln_1 and its first add; each add's output into the next add.
        const std::string x0 = program.ops[size_t(program.producerOf("input"))].name;
        for (const auto &[from, to] : std::vector<std::pair<std::string, std::string>> {{x0, "layer.0.ln_1"},
                 {x0, "layer.0.mid"}, {"layer.0.mid", "layer.0.ln_2"}, {"layer.0.mid", "layer.0.out"},
                 {"layer.0.out", "layer.1.ln_1"}, {"layer.0.out", "layer.1.mid"}, {"layer.1.out", "ln_f"}}) {
            const DiagramEdge *e = edge(from, to);
            QVERIFY2(e && e->kind == DiagramEdge::Kind::Stream, (from + " -> " + to).c_str());
        }
        // A sub-layer's own chain is plain flow: its output into its add.
        const DiagramEdge *e = edge("layer.0.attn.out", "layer.0.mid");
        QVERIFY(e && e->kind == DiagramEdge::Kind::Flow && e->tensor == "layer.0.attn.out");
        QCOMPARE(edgesInto(d, op("layer.0.mid")).size(), size_t(2));
        QVERIFY(edgesInto(d, 0).empty()); // the embedding reads the ids and a weight
    }

    // An encoder-decoder: the encoder's output Z flows into each decoder block's cross K/V projection, and into
    // nothing else; the decoder's stream is its own.
    void theEncodersOutputIsEachCrossAttentionsKeysAndValues()
    {
        const auto model = loadModel("seq2seq-sort");
        Input input;
        input.source = {100, 98, 99, 97};
        input.tokens = {62, 97};
        Engine engine(model, input);
        const Program &program = engine.program();
        const ArchitectureDiagram d = architectureDiagram(program, &engine.trace());
        std::vector<std::string> readers;
        for (const DiagramEdge &e : d.edges)
            if (e.kind == DiagramEdge::Kind::EncoderKeyValue) {
                QCOMPARE(program.ops[size_t(e.from)].name, std::string("enc.ln_f"));
                readers.push_back(program.ops[size_t(e.to)].label);
            }
        QCOMPARE(readers, (std::vector<std::string> {"cross K/V projection", "cross K/V projection"}));
        for (const DiagramEdge &e : d.edges)
            if (e.kind == DiagramEdge::Kind::Stream)
                QCOMPARE(program.ops[size_t(e.from)].stack, program.ops[size_t(e.to)].stack);
    }
};

QTEST_GUILESS_MAIN(TestArchitectureDiagram)
#include "tst_architecturediagram.moc"
