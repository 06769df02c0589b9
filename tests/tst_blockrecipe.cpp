// A block's recipe (model/blockrecipe.h) is the one description of its arrangement: the traced forward builds exactly
// its steps, in its order, and the memory strategies keep what its backward reads. (That the cached generator walking
// the same recipe equals the forward is tst_generator's everyBuiltInModelCachesWhatTheForwardComputes.)
#include "engine/program.h"
#include "model/blockrecipe.h"
#include "model/builtinmodels.h"
#include "model/model.h"
#include "model/parameterlist.h"
#include "model/parameternames.h"
#include "testbundle.h"
#include "util/error.h"

#include <QTest>

#include <algorithm>
#include <map>
#include <memory>
#include <set>

using namespace atlas;

namespace {

QStringList localNames(const std::vector<std::string> &names)
{
    QStringList out;
    for (const std::string &n : names)
        out << QString::fromStdString(n);
    return out;
}

// A checkpoint of every family and layout the tests hold (tests/data) and every built-in model.
std::vector<std::shared_ptr<const Model>> everyFamilyAndBuiltInModel()
{
    std::vector<std::shared_ptr<const Model>> models;
    for (const char *dir : {"gpt2_tiny", "llama_tiny", "llama_hd_tiny", "mistral_tiny", "mixtral_tiny", "qwen2_tiny",
             "qwen2_swa_tiny", "qwen3_tiny", "olmo2_tiny", "gemma2_tiny", "gemma3_tiny", "smollm3_tiny", "phi3_tiny",
             "phi3_long_tiny", "qwen3_moe_tiny", "gpt_oss_tiny", "neox_tiny", "neox_seq_tiny", "neo_tiny", "bert_tiny",
             "bert_rel_tiny", "bert_mlm_tiny", "t5_tiny", "t5v11_tiny", "seq2seq_tiny"})
        models.push_back(loadModel(std::string(ATLAS_TEST_DATA "/") + dir));
    for (const BuiltinModel &builtin : builtinModels())
        models.push_back(loadModel(builtin.name));
    return models;
}

// Every block of a model, as (stack, layer): an encoder–decoder's encoder blocks, then its decoder's.
std::vector<std::pair<names::Stack, int>> everyBlock(const ModelConfig &c)
{
    std::vector<std::pair<names::Stack, int>> all;
    for (int i = 0; c.isEncoderDecoder() && i < c.encoderLayers; ++i)
        all.push_back({names::kEncoderStack, i});
    for (int i = 0; i < c.layers; ++i)
        all.push_back({c.isEncoderDecoder() ? names::kDecoderStack : names::kOnlyStack, i});
    return all;
}

} // namespace

class TestBlockRecipe : public QObject
{
    Q_OBJECT

private slots:
    // What each arrangement's backward reads, from its recipe: the inputs of its norms and sub-layers.
    void theBackwardReadsEveryNormsAndSublayersInput_data()
    {
        QTest::addColumn<bool>("postNorm");
        QTest::addColumn<bool>("parallel");
        QTest::addColumn<bool>("reversible");
        QTest::addColumn<bool>("decoder");
        QTest::addColumn<QStringList>("read");
        QTest::addColumn<QStringList>("outputs");
        QTest::newRow("pre-norm") << false << false << false << false << QStringList {"x", "ln_1", "mid", "ln_2"}
                                  << QStringList {"out"};
        QTest::newRow("post-norm (BERT)")
            << true << false << false << false << QStringList {"x", "mid", "ln_1", "resid"} << QStringList {"out"};
        QTest::newRow("parallel (GPT-NeoX)")
            << false << true << false << false << QStringList {"x", "ln_1", "ln_2"} << QStringList {"out"};
        QTest::newRow("reversible") << false << false << true << false << QStringList {"x2", "ln_1", "out1", "ln_2"}
                                    << QStringList {"out1", "out2"};
        QTest::newRow("decoder of an encoder–decoder")
            << false << false << false << true << QStringList {"x", "ln_1", "mid", "ln_cross", "mid_cross", "ln_2"}
            << QStringList {"out"};
    }
    void theBackwardReadsEveryNormsAndSublayersInput()
    {
        QFETCH(bool, postNorm);
        QFETCH(bool, parallel);
        QFETCH(bool, reversible);
        QFETCH(bool, decoder);
        QFETCH(QStringList, read);
        QFETCH(QStringList, outputs);
        ModelConfig c;
        c.layerNorm = postNorm ? LayerNormPlacement::Post : LayerNormPlacement::Pre;
        c.parallelResidual = parallel;
        c.reversible = reversible;
        const BlockRecipe recipe = blockRecipe(c, decoder ? names::kDecoderStack : names::kOnlyStack, 1);
        QCOMPARE(localNames(recipe.readByBackward()), read);
        QCOMPARE(localNames(recipe.outputs), outputs);
    }

    // The streams entering a block are the trace's: the residual stream, or a reversible model's two (both the
    // embedding in block 0).
    void theStreamsEnteringABlockAreTheTraces()
    {
        QCOMPARE(blockTensor(names::kOnlyStack, 0, BlockStep::kInput), std::string("input"));
        QCOMPARE(blockTensor(names::kOnlyStack, 3, BlockStep::kInput), std::string("layer.2.out"));
        QCOMPARE(blockTensor(names::kDecoderStack, 1, "ln_cross"), std::string("dec.layer.1.ln_cross"));
        QCOMPARE(blockTensor(names::kOnlyStack, 0, BlockStep::kStream2), std::string("input"));
        QCOMPARE(blockTensor(names::kOnlyStack, 2, BlockStep::kStream1), std::string("layer.1.out1"));
    }

    // Every family's checkpoint (tests/data) and every built-in model: each norm its blocks' recipes use has a name in
    // the family's table (model/parameternames.cpp), and the loaded model holds that weight, the one normWeight gives.
    void everyNormOfARecipeHasItsNameAndWeight()
    {
        int norms = 0;
        for (const std::shared_ptr<const Model> &model : everyFamilyAndBuiltInModel()) {
            const ModelConfig &c = model->config;
            const std::map<std::string, const Tensor *> parameters = model->parameters();
            for (const auto &[stack, layer] : everyBlock(c)) {
                if (c.shared.enabled && layer > 0) // every layer holds block 0's weights, listed once
                    continue;
                const BlockWeights &b
                    = (stack == names::kEncoderStack ? model->encoderBlocks : model->blocks)[size_t(layer)];
                for (const BlockStep &step : blockRecipe(c, stack, layer).steps) {
                    if (step.kind != BlockStep::Kind::Norm)
                        continue;
                    const std::string name = blockParameter(c, stack, layer, step.norm) + ".weight";
                    const auto it = parameters.find(name);
                    QVERIFY2(it != parameters.end(), (c.modelType + ": " + name).c_str());
                    QCOMPARE(it->second, &b.normWeight(step.norm));
                    ++norms;
                }
            }
        }
        QVERIFY(norms > 100);
    }

    // Every family's checkpoint and every built-in model: each parameter the model's list and its blocks' lists name
    // (model/parameterlist.h) is the tensor the model or the block holds for that part, under its name, and a block
    // holds no tensor its list leaves out; an expert's likewise. The lists name every parameter once.
    void everyParameterAListNamesIsTheTensorItHolds()
    {
        int listed = 0;
        for (const std::shared_ptr<const Model> &model : everyFamilyAndBuiltInModel()) {
            const ModelConfig &c = model->config;
            const std::map<std::string, const Tensor *> parameters = model->parameters();
            size_t named = 0;
            for (const ModelParameter &p : modelParameters(c)) {
                if (p.kind != ModelParameter::Kind::Parameter)
                    continue;
                const auto it = parameters.find(modelParameterName(c, p));
                QVERIFY2(it != parameters.end() && it->second == &model->tensorOf(p.part, p.stack, p.bias),
                    (c.modelType + ": " + modelParameterName(c, p)).c_str());
                QCOMPARE(it->second->shape(), p.shape);
                ++named;
            }
            for (const auto &[stack, layer] : everyBlock(c)) {
                if (c.shared.enabled && layer > 0) // every layer holds block 0's weights, listed once
                    continue;
                const bool encoder = stack == names::kEncoderStack;
                const BlockWeights &b = (encoder ? model->encoderBlocks : model->blocks)[size_t(layer)];
                std::set<std::pair<BlockPart, bool>> seen;
                for (const BlockParameter &p : blockParameters(c, stack, layer)) {
                    const std::string name = blockParameterName(c, stack, layer, p);
                    const Tensor *held = p.part != BlockPart::RelativeBias
                        ? &(p.bias ? b.bias(p.part) : b.weight(p.part))
                        : encoder && !model->encoderRelativeBias.empty() ? &model->encoderRelativeBias
                                                                         : &model->relativeBias;
                    const auto it = parameters.find(name);
                    QVERIFY2(it != parameters.end() && it->second == held, (c.modelType + ": " + name).c_str());
                    QCOMPARE(held->shape(), p.shape);
                    seen.insert({p.part, p.bias});
                    ++listed;
                    ++named;
                }
                named += b.experts.size() * expertParameters(c).size();
                auto unlisted = [&](const PartTensors &t, const std::set<std::pair<BlockPart, bool>> &listed) {
                    for (size_t part = 0; part < kBlockPartCount; ++part)
                        for (const bool bias : {false, true})
                            if (!(bias ? t.bias(BlockPart(part)) : t.weight(BlockPart(part))).empty()
                                && !listed.contains({BlockPart(part), bias}))
                                return int(part);
                    return -1;
                };
                QCOMPARE(unlisted(b, seen), -1);
                std::set<std::pair<BlockPart, bool>> expertParts;
                for (const BlockParameter &p : expertParameters(c))
                    expertParts.insert({p.part, p.bias});
                for (const ExpertWeights &e : b.experts) {
                    QCOMPARE(unlisted(e, expertParts), -1);
                    for (const BlockParameter &p : expertParameters(c))
                        QCOMPARE((p.bias ? e.bias(p.part) : e.weight(p.part)).shape(), p.shape);
                }
            }
            QCOMPARE(named, parameters.size());
        }
        QVERIFY(listed > 1000);
    }

    // Every parameter of each family llama.cpp reads has its GGUF name, one per tensor (an expert's matrices share
    // their stack's), and the names are llama.cpp's: the pairs below are its tensor_mapping.py and the model classes
    // of its converter (gguf-py, convert_hf_to_gguf.py), for block 0 of each family's test checkpoint.
    void everyParameterHasItsGgufName()
    {
        const std::map<std::string, std::vector<std::pair<std::string, std::string>>> llamaCpp = {
            {"llama_tiny",
                {{"embed_tokens.weight", "token_embd.weight"}, {"norm.weight", "output_norm.weight"},
                    {"layers.0.input_layernorm.weight", "blk.0.attn_norm.weight"},
                    {"layers.0.post_attention_layernorm.weight", "blk.0.ffn_norm.weight"},
                    {"layers.0.self_attn.q_proj.weight", "blk.0.attn_q.weight"},
                    {"layers.0.self_attn.k_proj.weight", "blk.0.attn_k.weight"},
                    {"layers.0.self_attn.v_proj.weight", "blk.0.attn_v.weight"},
                    {"layers.0.self_attn.o_proj.weight", "blk.0.attn_output.weight"},
                    {"layers.0.mlp.gate_proj.weight", "blk.0.ffn_gate.weight"},
                    {"layers.0.mlp.up_proj.weight", "blk.0.ffn_up.weight"},
                    {"layers.0.mlp.down_proj.weight", "blk.0.ffn_down.weight"}}},
            {"qwen3_tiny",
                {{"layers.0.self_attn.q_norm.weight", "blk.0.attn_q_norm.weight"},
                    {"layers.0.self_attn.k_norm.weight", "blk.0.attn_k_norm.weight"}}},
            {"gemma2_tiny",
                {{"layers.0.input_layernorm.weight", "blk.0.attn_norm.weight"},
                    {"layers.0.post_attention_layernorm.weight", "blk.0.post_attention_norm.weight"},
                    {"layers.0.pre_feedforward_layernorm.weight", "blk.0.ffn_norm.weight"},
                    {"layers.0.post_feedforward_layernorm.weight", "blk.0.post_ffw_norm.weight"}}},
            {"gemma3_tiny", {{"layers.0.self_attn.q_norm.weight", "blk.0.attn_q_norm.weight"}}},
            {"olmo2_tiny",
                {{"layers.0.post_attention_layernorm.weight", "blk.0.post_attention_norm.weight"},
                    {"layers.0.post_feedforward_layernorm.weight", "blk.0.post_ffw_norm.weight"},
                    {"layers.0.self_attn.k_norm.weight", "blk.0.attn_k_norm.weight"}}},
            {"phi3_tiny",
                {{"layers.0.self_attn.qkv_proj.weight", "blk.0.attn_qkv.weight"},
                    {"layers.0.mlp.gate_up_proj.weight", "blk.0.ffn_up.weight"},
                    {"layers.0.post_attention_layernorm.weight", "blk.0.ffn_norm.weight"}}},
            {"mixtral_tiny",
                {{"layers.0.block_sparse_moe.gate.weight", "blk.0.ffn_gate_inp.weight"},
                    {"layers.0.block_sparse_moe.experts.1.w1.weight", "blk.0.ffn_gate_exps.weight"},
                    {"layers.0.block_sparse_moe.experts.1.w3.weight", "blk.0.ffn_up_exps.weight"},
                    {"layers.0.block_sparse_moe.experts.1.w2.weight", "blk.0.ffn_down_exps.weight"}}},
            {"qwen3_moe_tiny",
                {{"layers.0.mlp.gate.weight", "blk.0.ffn_gate_inp.weight"},
                    {"layers.0.mlp.experts.0.up_proj.weight", "blk.0.ffn_up_exps.weight"}}},
            {"gpt2_tiny",
                {{"wte.weight", "token_embd.weight"}, {"wpe.weight", "position_embd.weight"},
                    {"h.0.ln_1.weight", "blk.0.attn_norm.weight"}, {"h.0.ln_1.bias", "blk.0.attn_norm.bias"},
                    {"h.0.attn.c_attn.weight", "blk.0.attn_qkv.weight"},
                    {"h.0.attn.c_proj.weight", "blk.0.attn_output.weight"},
                    {"h.0.ln_2.weight", "blk.0.ffn_norm.weight"}, {"h.0.mlp.c_fc.weight", "blk.0.ffn_up.weight"},
                    {"h.0.mlp.c_proj.weight", "blk.0.ffn_down.weight"}, {"ln_f.weight", "output_norm.weight"}}},
            {"neox_tiny",
                {{"embed_in.weight", "token_embd.weight"},
                    {"layers.0.input_layernorm.weight", "blk.0.attn_norm.weight"},
                    {"layers.0.attention.query_key_value.weight", "blk.0.attn_qkv.weight"},
                    {"layers.0.attention.dense.weight", "blk.0.attn_output.weight"},
                    {"layers.0.post_attention_layernorm.weight", "blk.0.ffn_norm.weight"},
                    {"layers.0.mlp.dense_h_to_4h.weight", "blk.0.ffn_up.weight"},
                    {"layers.0.mlp.dense_4h_to_h.weight", "blk.0.ffn_down.weight"},
                    {"final_layer_norm.weight", "output_norm.weight"}, {"embed_out.weight", "output.weight"}}},
        };
        int checked = 0;
        for (const char *dir : {"gpt2_tiny", "llama_tiny", "llama_hd_tiny", "mistral_tiny", "mixtral_tiny",
                 "qwen2_tiny", "qwen3_tiny", "olmo2_tiny", "gemma2_tiny", "gemma3_tiny", "smollm3_tiny", "phi3_tiny",
                 "qwen3_moe_tiny", "neox_tiny"}) {
            const auto model = loadModel(std::string(ATLAS_TEST_DATA "/") + dir);
            const std::map<std::string, std::string> gguf = ggufParameterNames(model->config);
            std::map<std::string, std::string> owner; // GGUF name → the Hugging Face parameter named so
            for (const auto &[name, tensor] : model->parameters()) {
                const auto it = gguf.find(name);
                QVERIFY2(it != gguf.end(), (std::string(dir) + ": no GGUF name for " + name).c_str());
                if (it->second.find("_exps.") != std::string::npos)
                    continue; // the experts' stack
                const auto [at, first] = owner.emplace(it->second, name);
                QVERIFY2(
                    first, (std::string(dir) + ": " + name + " and " + at->second + " are both " + it->second).c_str());
                ++checked;
            }
            const auto pairs = llamaCpp.find(dir);
            for (const auto &[hf, name] : pairs == llamaCpp.end() ? decltype(pairs->second) {} : pairs->second) {
                const auto it = gguf.find(hf);
                QVERIFY2(it != gguf.end() && it->second == name,
                    (std::string(dir) + ": " + hf + " is " + (it == gguf.end() ? "unnamed" : it->second) + ", not "
                        + name)
                        .c_str());
            }
        }
        QVERIFY(checked > 200);
        ModelConfig bert;
        bert.family = Family::Bert;
        bert.modelType = "bert";
        QVERIFY_THROWS_EXCEPTION(Error, ggufParameterNames(bert));
        QCOMPARE(
            ggufArchitecture(loadModel(std::string(ATLAS_TEST_DATA "/mistral_tiny"))->config), std::string("llama"));
    }

    // Every built-in model: each step of each block's recipe is an op of the traced forward whose inputs are the
    // step's, after the ops that made them, and every residual add shows the recipe's formula.
    void theForwardBuildsEachStepOfTheRecipe()
    {
        int blocks = 0;
        for (const BuiltinModel &builtin : builtinModels()) {
            const ModelConfig c = loadModel(builtin.name)->config;
            Input input;
            input.tokens = std::vector<int>(size_t(std::min(c.context, 8)), 1);
            if (c.isEncoderDecoder())
                input.source = std::vector<int>(size_t(std::min(c.context, 6)), 1);
            const Program program = Program::build(c, input, true, 1);
            for (const auto &[stack, layer] : everyBlock(c)) {
                int previous = -1;
                for (const BlockStep &step : blockRecipe(c, stack, layer).steps) {
                    const std::string out = blockTensor(stack, layer, step.out);
                    const std::string where = builtin.name + ": " + out;
                    const int op = program.producerOf(out);
                    QVERIFY2(op > previous, where.c_str());
                    previous = op;
                    for (const std::string &local : step.in) {
                        const std::string in = blockTensor(stack, layer, local);
                        QVERIFY2(
                            program.producerOf(in) >= 0 && program.producerOf(in) < op, (where + " ← " + in).c_str());
                    }
                    if (step.kind == BlockStep::Kind::Norm || step.kind == BlockStep::Kind::Add) {
                        const Op &made = program.ops[size_t(op)];
                        QCOMPARE(made.label.substr(0, step.label.size()), step.label);
                        std::vector<std::string> inputs;
                        for (const std::string &local : step.in)
                            inputs.push_back(blockTensor(stack, layer, local));
                        QCOMPARE(made.inputs, inputs);
                    }
                    if (step.kind == BlockStep::Kind::Add) {
                        QCOMPARE(program.ops[size_t(op)].outputs.front().formula, step.formula);
                        QVERIFY(program.ops[size_t(op)].residual);
                    }
                }
                ++blocks;
            }
        }
        QVERIFY(blocks > 40);
    }
};

QTEST_APPLESS_MAIN(TestBlockRecipe)
#include "tst_blockrecipe.moc"
