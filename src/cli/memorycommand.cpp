#include "arguments.h"
#include "commands.h"
#include "io/atomicfile.h"
#include "memory/inversionerror.h"
#include "memory/memorysweep.h"
#include "model/builtinmodels.h"
#include "util/error.h"
#include "util/memorycheck.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace atlas {

namespace {

struct ShapeArgument
{
    int layers = 0, heads = 0, dModel = 0; // layers 0: not given ("HxD")
};

// --shape LxHxD (or HxD where the depth comes from elsewhere): 4x4x64 is 4 layers, 4 heads, d_model 64.
ShapeArgument parseShape(const std::string &text, bool depthOptional)
{
    std::vector<int> parts;
    std::stringstream in(text);
    std::string part;
    while (std::getline(in, part, 'x')) {
        try {
            size_t used = 0;
            parts.push_back(std::stoi(part, &used));
            if (used != part.size() || parts.back() < 1)
                throw std::invalid_argument(part);
        } catch (const std::exception &) {
            throw Error(
                "--shape '" + text + "': '" + part + "' is not a positive integer (expected LxHxD, e.g. 4x4x64)");
        }
    }
    if (parts.size() == 2 && depthOptional)
        return {0, parts[0], parts[1]};
    if (parts.size() != 3)
        throw Error("--shape '" + text + "': expected LxHxD (layers x heads x d_model, e.g. 4x4x64)"
            + (depthOptional ? " or HxD" : ""));
    return {parts[0], parts[1], parts[2]};
}

// The byte-level configuration of --shape (its depth set later); d_ff = 4·d_model.
ModelConfig shapeConfig(const ShapeArgument &s, int tokens)
{
    ModelConfig c;
    c.layers = 1;
    c.heads = s.heads;
    c.dModel = s.dModel;
    c.dFF = 4 * s.dModel;
    c.vocab = 256;
    c.context = std::max(tokens, 64);
    c.tokenizer = "bytes";
    if (c.dModel % c.heads != 0)
        throw Error("--shape: d_model " + std::to_string(c.dModel) + " is not a multiple of the "
            + std::to_string(c.heads) + " heads");
    c.validate("--shape");
    return c;
}

// A byte-level model of that shape, GPT-2's initialisation from seed 1; d_ff = 4·d_model.
Model modelOfShape(const ShapeArgument &s, int layers, int tokens, bool reversible)
{
    Model m = modelAtDepth(shapeConfig(s, tokens), layers, reversible);
    m.name = std::to_string(layers) + "x" + std::to_string(s.heads) + "x" + std::to_string(s.dModel)
        + (reversible ? " reversible" : "");
    return m;
}

std::string strategyLabel(const MemoryOptions &o, int layers)
{
    std::string label = memoryStrategyName(o.strategy);
    if (o.strategy == MemoryStrategy::Checkpoint)
        label += " (k = " + std::to_string(checkpointInterval(o, layers)) + ")";
    if (o.ffnChunks > 1)
        label += ", FFN in " + std::to_string(o.ffnChunks) + " chunks";
    return label;
}

nlohmann::json recordingJson(const StepTiming &measured, const std::string &modelName)
{
    const TrainingStepMemory &m = measured.memory;
    const MemoryRecording &r = m.recording;
    nlohmann::json j = {{"model", modelName}, {"strategy", memoryStrategyName(m.options.strategy)},
        {"checkpoint_every",
            m.options.strategy == MemoryStrategy::Checkpoint ? checkpointInterval(m.options, m.layers) : 0},
        {"ffn_chunks", m.options.ffnChunks}, {"layers", m.layers}, {"tokens", m.tokens}, {"batch", m.batch},
        {"loss", m.loss}, {"peak_bytes", m.peakBytes}, {"peak_activation_bytes", m.peakActivationBytes},
        {"predicted_activation_bytes", m.predictedActivationBytes}, {"peak_rss_bytes", peakResidentBytes()},
        {"step_ms", measured.stepMs}, {"recorded_step_ms", measured.recordedStepMs},
        {"allocator_bytes", r.allocatorBytes}};
    const int peak = r.peakEvent(false);
    const CategoryBytes atPeak = r.liveAt(peak);
    nlohmann::json categories = nlohmann::json::object(), live = nlohmann::json::object();
    for (int c = 0; c < kMemoryCategories; ++c) {
        categories[categoryKey(MemoryCategory(c))]
            = {{"allocated", r.allocated[size_t(c)]}, {"freed", r.freed[size_t(c)]}};
        live[categoryKey(MemoryCategory(c))] = atPeak[size_t(c)];
    }
    j["categories"] = categories;
    j["peak"]
        = {{"event", peak}, {"op", peak >= 0 ? r.ops[size_t(r.events[size_t(peak)].op)].name : ""}, {"live", live}};
    nlohmann::json ops = nlohmann::json::array(), events = nlohmann::json::array();
    for (const MemoryOp &op : r.ops)
        ops.push_back(
            {{"name", op.name}, {"phase", phaseName(op.phase)}, {"layer", op.layer}, {"us", op.microseconds}});
    for (const MemoryEvent &e : r.events) {
        const MemoryOp &op = r.ops[size_t(e.op)];
        events.push_back({{"op", op.name}, {"op_index", e.op}, {"phase", phaseName(op.phase)},
            {"category", categoryKey(e.category)}, {"bytes", e.bytes}, {"live", e.live}});
    }
    j["ops"] = ops;
    j["events"] = events;
    return j;
}

struct Setup
{
    std::shared_ptr<const Model> loaded; // --model, or null
    ShapeArgument shape; // --shape
    int tokens = 0, batch = 1, repeat = 3;
};

// Refuses a step that cannot fit in this machine's memory, before any of it is allocated.
void checkStepFits(const Setup &s, int layers, const MemoryOptions &options)
{
    ModelConfig c = s.loaded ? s.loaded->config : shapeConfig(s.shape, s.tokens);
    if (!s.loaded)
        c.layers = layers;
    checkFitsInMemory(estimatedTrainingStepBytes(c, s.tokens, options, s.tokens),
        "one training step of " + std::to_string(c.layers) + " layers, " + std::to_string(c.heads)
            + " heads and d_model " + std::to_string(c.dModel) + " on " + std::to_string(s.tokens)
            + " tokens (--shape, --length)");
}

Model modelFor(const Setup &s, int layers, bool reversible, const MemoryOptions &options = {})
{
    checkStepFits(s, layers, options);
    if (s.loaded)
        return *s.loaded;
    return modelOfShape(s.shape, layers, s.tokens, reversible);
}

int singleStep(const Arguments &args, const Setup &setup)
{
    MemoryOptions o;
    o.strategy = parseMemoryStrategy(args.value("strategy", "plain"), "--strategy");
    o.checkpointEvery = args.intValue("checkpoint-every", 0, 0, 1 << 20);
    o.ffnChunks = args.intValue("ffn-chunks", 1, 1, 1 << 20);
    MemoryOptionFields fields;
    fields.strategy = "--strategy";
    Model model = modelFor(setup, setup.shape.layers, o.strategy == MemoryStrategy::Reversible, o);
    validateMemoryOptions(o, model.config, setup.tokens, fields);
    const std::vector<TrainingSequence> sequences = randomSequences(model.config, setup.tokens, setup.batch);
    const StepTiming m = measureStep(model, sequences, o, setup.repeat);
    const ModelConfig &c = model.config;
    const std::string layers = c.isEncoderDecoder() // the source as long as the target (randomSequences)
        ? std::to_string(c.encoderLayers) + " encoder and " + std::to_string(c.layers) + " decoder layers"
        : std::to_string(c.layers) + " layers";
    std::printf("%s: %s, %s, %d tokens x %d: peak %s, activations %s (formula %s), step %.2f ms "
                "(recorded %.2f ms), peak RSS %s\n",
        model.name.c_str(), strategyLabel(o, c.layers).c_str(), layers.c_str(), setup.tokens, setup.batch,
        formatBytes(double(m.memory.peakBytes)).c_str(), formatBytes(double(m.memory.peakActivationBytes)).c_str(),
        formatBytes(double(m.memory.predictedActivationBytes)).c_str(), m.stepMs, m.recordedStepMs,
        formatBytes(double(peakResidentBytes())).c_str());
    if (args.has("json"))
        writeFileAtomically(args.value("json"), recordingJson(m, model.name).dump(1) + "\n");
    return 0;
}

std::vector<int> parseDepths(const std::string &text)
{
    std::vector<int> depths;
    std::stringstream in(text);
    std::string part;
    while (std::getline(in, part, ',')) {
        size_t used = 0;
        int d = 0;
        try {
            d = std::stoi(part, &used);
        } catch (const std::exception &) {
            used = 0;
        }
        if (used != part.size() || d < 1)
            throw Error("--sweep-depth '" + text + "': '" + part + "' is not a depth (expected e.g. 2,4,8,16)");
        depths.push_back(d);
    }
    if (depths.empty())
        throw Error("--sweep-depth: give the depths, e.g. 2,4,8,16");
    return depths;
}

int sweepDepth(const Arguments &args, const Setup &setup)
{
    if (setup.loaded)
        throw Error("--sweep-depth needs --shape (LxHxD or HxD): a model of each depth is made with that shape");
    const std::vector<int> depths = parseDepths(args.value("sweep-depth"));
    const int chunks = args.intValue("ffn-chunks", 1, 1, 1 << 20);
    std::printf("shape %dx%d (heads x d_model), %d tokens x %d, step time median of %d; peak activation bytes\n",
        setup.shape.heads, setup.shape.dModel, setup.tokens, setup.batch, setup.repeat);
    std::printf("%6s  %-26s %-26s %-26s\n", "depth", "plain", "checkpoint (k = ceil sqrt L)", "reversible");
    nlohmann::json rows = nlohmann::json::array();
    SweepSettings settings;
    settings.tokens = setup.tokens;
    settings.batch = setup.batch;
    settings.ffnChunks = chunks;
    settings.repeat = setup.repeat;
    settings.measured = [&rows](const SweepPoint &p) {
        if (p.strategy == MemoryStrategy::Plain)
            std::printf("%6d", p.depth);
        char cell[64];
        std::snprintf(cell, sizeof cell, "%s %8.2f ms", formatBytes(double(p.peakActivationBytes)).c_str(), p.stepMs);
        std::printf("  %-26s", cell);
        if (p.strategy == MemoryStrategy::Reversible)
            std::printf("\n");
        std::fflush(stdout);
        rows.push_back(
            {{"depth", p.depth}, {"strategy", memoryStrategyName(p.strategy)}, {"checkpoint_every", p.checkpointEvery},
                {"peak_bytes", p.peakBytes}, {"peak_activation_bytes", p.peakActivationBytes},
                {"predicted_activation_bytes", p.predictedActivationBytes}, {"step_ms", p.stepMs},
                {"recorded_step_ms", p.recordedStepMs}});
    };
    checkStepFits(setup, *std::max_element(depths.begin(), depths.end()), MemoryOptions {});
    sweepDepths(shapeConfig(setup.shape, setup.tokens), depths, settings);
    if (args.has("json"))
        writeFileAtomically(args.value("json"),
            nlohmann::json({{"heads", setup.shape.heads}, {"d_model", setup.shape.dModel}, {"tokens", setup.tokens},
                               {"batch", setup.batch}, {"ffn_chunks", chunks}, {"sweep", rows}})
                    .dump(1)
                + "\n");
    return 0;
}

int inversionError(const Arguments &args, const Setup &setup)
{
    const Model model = modelFor(setup, setup.shape.layers, true);
    const TrainingSequence s = randomSequences(model.config, setup.tokens, 1).front();
    const std::vector<StreamPrecision> precisions
        = {StreamPrecision::Double, StreamPrecision::Float32, StreamPrecision::Float16, StreamPrecision::BFloat16};
    std::vector<InversionError> errors;
    for (StreamPrecision p : precisions)
        errors.push_back(measureInversionError(model, s.input, s.targets, p));
    std::printf("%s, %d tokens: max |X_rebuilt - X_stored| per block (rebuilt from the last block down)\n",
        model.name.c_str(), setup.tokens);
    std::printf("%6s %11s", "block", "max |X|");
    for (StreamPrecision p : precisions)
        std::printf(" %11s", streamPrecisionName(p));
    std::printf("\n");
    for (int i = model.config.layers - 1; i >= 0; --i) {
        std::printf("%6d %11.4g", i, errors[0].maxStream[size_t(i)]);
        for (const InversionError &e : errors)
            std::printf(" %11.3e", e.maxError[size_t(i)]);
        std::printf("\n");
    }
    std::printf("%-18s", "gradient error");
    for (const InversionError &e : errors)
        std::printf(" %11.3e", e.gradientError);
    std::printf("\n(max |g_rebuilt - g_stored| / max |g_stored| over the parameters)\n");
    if (args.has("json")) {
        nlohmann::json rows = nlohmann::json::array();
        for (const InversionError &e : errors)
            rows.push_back({{"precision", streamPrecisionName(e.precision)}, {"max_error", e.maxError},
                {"max_stream", e.maxStream}, {"gradient_error", e.gradientError}});
        writeFileAtomically(args.value("json"),
            nlohmann::json({{"model", model.name}, {"tokens", setup.tokens}, {"precisions", rows}}).dump(1) + "\n");
    }
    return 0;
}

} // namespace

int memoryCommand(const CommandArgs &argv)
{
    const Arguments args(argv, "memory");
    if (args.has("model") == args.has("shape"))
        throw Error("memory: give --model NAME|DIR or --shape LxHxD (e.g. 4x4x64), one of them");
    const bool sweep = args.has("sweep-depth"), inversion = args.flag("inversion-error");
    if (sweep && inversion)
        throw Error("memory: --sweep-depth and --inversion-error are two different measurements; give one");
    for (const char *option : {"strategy", "checkpoint-every"})
        if ((sweep || inversion) && args.has(option))
            throw Error(std::string("--") + option + " is for one step: --sweep-depth runs every strategy, "
                + "--inversion-error the reversible one");
    Setup setup;
    if (args.has("model"))
        setup.loaded = loadModel(args.value("model"));
    else
        setup.shape = parseShape(args.value("shape"), sweep);
    setup.tokens = args.intValue("length", 0, 1, 1 << 24);
    setup.batch = args.intValue("batch", 1, 1, 1 << 20);
    setup.repeat = args.intValue("repeat", 3, 0, 1 << 20);
    if (setup.tokens < 1)
        throw Error("--length: give the number of tokens per sequence (at least 1)");
    if (setup.batch < 1 || setup.repeat < 0)
        throw Error("--batch must be at least 1 and --repeat at least 0");
    if (setup.loaded && setup.tokens > setup.loaded->config.context)
        throw Error("--length " + std::to_string(setup.tokens) + ": the model's context is "
            + std::to_string(setup.loaded->config.context) + " tokens");
    if (sweep)
        return sweepDepth(args, setup);
    if (inversion)
        return inversionError(args, setup);
    return singleStep(args, setup);
}

} // namespace atlas
