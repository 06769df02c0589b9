// The architecture diagram's content (analysis/architecturediagram.h): every op of the program in a column of its
// part (embedding, layers, output) in program order, with its output's shape, and the stepper's position read from
// how far the trace has got.
#include "analysis/architecturediagram.h"
#include "engine/engine.h"
#include "model/builtinmodels.h"

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
};

QTEST_GUILESS_MAIN(TestArchitectureDiagram)
#include "tst_architecturediagram.moc"
