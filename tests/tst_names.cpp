// Trace names are built in one place (trace/names.h); the program, the backward pass and the views all use it.
#include "engine/program.h"
#include "testbundle.h"
#include "trace/names.h"
#include "util/commalist.h"

#include <QTest>

using namespace atlas;

class TestNames : public QObject
{
    Q_OBJECT

private slots:
    // Lists of names and numbers as options and fields give them (util/commalist.h).
    void listsSplitAndJoin()
    {
        using V = std::vector<std::string>;
        QCOMPARE(splitCommaList(" 0.1 ,1.3,,x "), (V {"0.1", "1.3", "", "x"})); // an empty item is kept, to name it
        QCOMPARE(splitCommaList(""), V {});
        QCOMPARE(splitTypedList(" 0, 2 5,\t7\n"), (V {"0", "2", "5", "7"}));
        QCOMPARE(splitTypedList(" , "), V {});
        QCOMPARE(joinedCommaList({"a", "b", "c"}), std::string("a, b, c"));
        QCOMPARE(joinedCommaList({}), std::string());
    }

    void buildAndSplit()
    {
        QCOMPARE(names::layerTensor(3, "attn.probs"), std::string("layer.3.attn.probs"));
        QCOMPARE(names::layerPrefix(12), std::string("layer.12."));
        QCOMPARE(names::parameterPrefix(0), std::string("h.0."));
        QCOMPARE(names::gradientOf("wte.weight"), std::string("grad.wte.weight"));
        int layer = -1;
        std::string suffix;
        QVERIFY(names::splitLayerTensor("layer.10.mlp.up", &layer, &suffix));
        QCOMPARE(layer, 10);
        QCOMPARE(suffix, std::string("mlp.up"));
        QVERIFY(!names::splitLayerTensor("logits", &layer, &suffix));
        QVERIFY(!names::splitLayerTensor("layer.x.attn", &layer, &suffix));
        QVERIFY(!names::splitLayerTensor("layer.3", &layer, &suffix));
    }

    // The last op reads as what the head computes: a decoder's next token, an encoder's token at each position.
    void theHeadIsNamedForWhatItPredicts()
    {
        ModelConfig config;
        const Input input {{1, 2, 3}, {}, {}};
        const auto last = [&](const ModelConfig &c) {
            const Program program = Program::build(c, input);
            return program.ops[size_t(program.producerOf("next_probs"))];
        };
        QCOMPARE(last(config).label, std::string("next-token softmax"));
        QVERIFY(last(config).outputs.front().formula.find("p(next = v | x≤t)") == 0);
        config.causal = false;
        QCOMPARE(last(config).label, std::string("masked-LM softmax"));
        QVERIFY(last(config).outputs.front().formula.find("p(x_t = v | x₁ … x_T)") == 0);
    }

    // Every tensor the program writes inside a block is named by the module, and carries its layer's kernel.
    void theProgramNamesItsTensorsThroughTheModule()
    {
        ModelConfig config;
        config.layers = 3;
        Input input {{1, 2, 3, 4}, {}, {}};
        input.attention = {attention::parseAttentionKernelSpec("full", {}),
            attention::parseAttentionKernelSpec("longformer", {"window=2"}),
            attention::parseAttentionKernelSpec("full", {})};
        const Program program = Program::build(config, input);
        int inBlocks = 0;
        for (const Op &op : program.ops)
            for (const OpOutput &out : op.outputs) {
                int layer = -1;
                std::string suffix;
                if (!names::splitLayerTensor(out.name, &layer, &suffix))
                    continue;
                QCOMPARE(layer, op.layer);
                QCOMPARE(out.name, names::layerTensor(layer, suffix));
                QCOMPARE(op.attention.kind, std::string(layer == 1 ? "longformer" : "full"));
                ++inBlocks;
            }
        QVERIFY(inBlocks > 30);
        QCOMPARE(program.attentionOf(1).params.at("window"), std::string("2"));
        QCOMPARE(program.attentionOf(7).kind, std::string("full")); // a layer not built
    }
};

QTEST_GUILESS_MAIN(TestNames)
#include "tst_names.moc"
