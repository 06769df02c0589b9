#include "lesson/lessoncheck.h"
#include "attentionmap/attentionmap.h"

#include "engine/engine.h"
#include "engine/generator.h"
#include "engine/inputbuilder.h"
#include "model/builtinmodels.h"
#include "model/modeltokenizer.h"
#include "tokenize/tokenizer.h"
#include "trace/names.h"
#include "train/task.h"
#include "train/trainingsetup.h"
#include "util/error.h"
#include "util/text.h"
#include "view/specrun.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>

namespace atlas {

namespace {

namespace fs = std::filesystem;

// Checks one lesson, collecting problems instead of stopping at the first.
class Checker
{
public:
    explicit Checker(const Lesson &lesson)
        : m_lesson(lesson)
    {
    }

    std::vector<std::string> run()
    {
        for (const std::string &model : m_lesson.models)
            loaded(model, 1);
        for (const LessonStep &step : m_lesson.steps)
            checkStep(step);
        return m_problems;
    }

private:
    void problem(int line, const std::string &what)
    {
        m_problems.push_back(m_lesson.path + ":" + std::to_string(line) + ": " + what);
    }

    // The model, loaded once per name; nullptr (and a problem at `line`) when it does not load.
    std::shared_ptr<const Model> loaded(const std::string &name, int line)
    {
        const auto it = m_models.find(name);
        if (it != m_models.end())
            return it->second;
        std::shared_ptr<const Model> model;
        try {
            model = loadModel(lessonModelPath(m_lesson, name));
        } catch (const std::exception &e) {
            problem(line, "model '" + name + "': " + e.what());
        }
        m_models[name] = model;
        return model;
    }

    void checkStep(const LessonStep &step);
    void checkActions(const LessonStep &step, const Model &model, const Input &input, const Program &program);
    void checkQuestion(const LessonStep &step, const LessonQuestion &q, const std::shared_ptr<const Model> &model);

    const Lesson &m_lesson;
    std::map<std::string, std::shared_ptr<const Model>> m_models;
    std::vector<std::string> m_problems;
};

void Checker::checkStep(const LessonStep &step)
{
    const ViewSpec &spec = step.spec;
    const int line = step.specLine;
    if (std::find(m_lesson.models.begin(), m_lesson.models.end(), spec.model) == m_lesson.models.end())
        problem(line, "the step uses model '" + spec.model + "', which the front matter's models do not list");
    for (const std::string &key : unreadKeys(spec))
        problem(line, "key '" + key + "' is not read by the " + spec.view + " view (docs/view-spec.md: who reads it)");
    const std::shared_ptr<const Model> model = loaded(spec.model, line);
    if (!model)
        return;
    const ModelConfig &c = model->config;
    Input input;
    int layers = c.layers; // of the stack the step's attention is in
    try {
        input = specInput(spec, *model, *tokenizerForModel(*model), "view spec");
        input.attention = attentionOfSpec(spec, c.layers);
        layers = siteLayers(attentionSiteOf(spec, c, "view spec"), c);
        Engine check(model, input, {true, size_t(1) << 40}); // validates ids, length, padding, kernels
    } catch (const std::exception &e) {
        problem(line, e.what());
        return;
    }
    if (const std::string why = encoderDecoderProblem(spec.view, c, spec.model); !why.empty())
        problem(line, why);
    if (spec.layer >= layers)
        problem(line,
            "layer " + std::to_string(spec.layer) + " does not exist: model '" + spec.model + "' has "
                + std::to_string(layers) + " layers");
    if (spec.head >= c.heads)
        problem(line,
            "head " + std::to_string(spec.head) + " does not exist: model '" + spec.model + "' has "
                + std::to_string(c.heads) + " heads");
    if (spec.query >= int(input.tokens.size()))
        problem(line,
            "query " + std::to_string(spec.query) + " is outside the input's " + countOf(input.tokens.size(), "token"));
    const Program program = Program::build(c, input);
    if (!spec.tensor.empty() && program.producerOf(spec.tensor) < 0)
        problem(line, "tensor '" + spec.tensor + "' is not in the trace of this model and input (docs/trace-names.md)");
    try {
        stepperPosition(spec, program, "view spec");
    } catch (const Error &e) {
        problem(line, e.what());
    }
    checkActions(step, *model, input, program);
    for (const LessonQuestion &q : step.questions)
        checkQuestion(step, q, model);
}

void Checker::checkActions(const LessonStep &step, const Model &model, const Input &input, const Program &program)
{
    const std::vector<std::string> tasks = Task::names();
    for (const LessonAction &a : step.actions) {
        switch (a.kind) {
        case LessonAction::Kind::RunTo:
            if (program.indexOf(a.target) < 0 && program.producerOf(a.target) < 0)
                problem(a.line, "run-to: no operation or tensor '" + a.target + "' in this model's program");
            break;
        case LessonAction::Kind::Pad:
            for (int p : a.positions)
                if (p >= int(input.tokens.size()))
                    problem(a.line,
                        "pad: position " + std::to_string(p) + " is outside the input's "
                            + countOf(input.tokens.size(), "token"));
            break;
        case LessonAction::Kind::Param:
            try {
                // Sets the key, replacing the spec's value as stepViewSpec does, rather than giving it twice.
                std::vector<std::string> params = step.spec.attentionParams;
                const std::string key = a.target.substr(0, a.target.find('=') + 1);
                std::erase_if(params, [&](const std::string &p) { return p.starts_with(key); });
                params.push_back(a.target);
                attention::parseAttentionKernelSpec(step.spec.attention, params);
            } catch (const Error &e) {
                problem(a.line, std::string("param: ") + e.what());
            }
            break;
        case LessonAction::Kind::Generate:
            if (int(input.tokens.size()) + a.count > model.config.context)
                problem(a.line,
                    "generate: " + std::to_string(a.count) + " more tokens exceed the model's context of "
                        + std::to_string(model.config.context));
            break;
        case LessonAction::Kind::Train:
            if (std::find(tasks.begin(), tasks.end(), a.target) == tasks.end()) {
                problem(a.line, "train: unknown task '" + a.target + "'");
            } else {
                try { // the model the Train panel would make: the options' combination, its size
                    trainingModelConfig(lessonTrainingRun(a));
                } catch (const Error &e) {
                    problem(a.line, std::string("train: ") + e.what());
                }
            }
            break;
        }
    }
}

void Checker::checkQuestion(const LessonStep &step, const LessonQuestion &q, const std::shared_ptr<const Model> &model)
{
    if (q.kind != LessonQuestion::Kind::Predict)
        return;
    // The question is about the step as it opens: its pad, param and generate actions applied, as they are shown.
    Input shown;
    ViewSpec spec;
    int queries = 0, keys = 0; // of the attention the question is about (an encoder-decoder's site)
    try {
        spec = stepViewSpec(m_lesson, step);
        spec.op.clear();
        shown = specInput(spec, *model, *tokenizerForModel(*model), "the step's view");
        shown.attention = attentionOfSpec(spec, model->config.layers);
        const names::AttentionSite site = attentionSiteOf(spec, model->config, "the step's view");
        const bool encoder = site.stack == names::kEncoderStack;
        queries = int(encoder ? shown.source.size() : shown.tokens.size());
        keys = int(encoder || site.cross ? shown.source.size() : shown.tokens.size());
    } catch (const std::exception &e) {
        problem(q.line, e.what());
        return;
    }
    if (q.query >= queries || q.answer >= keys) {
        problem(q.line,
            "the question's query or answer lies outside the input: " + std::to_string(queries) + " queries, "
                + std::to_string(keys) + " keys");
        return;
    }
    try {
        Engine engine(model, shown);
        engine.runToEnd();
        const PredictAnswer answer = predictAnswer(engine.trace(), q, spec, model->config);
        if (q.answer >= 0 && q.answer != answer.key)
            problem(q.line,
                "the lesson says the answer is key " + std::to_string(q.answer) + ", but the model's "
                    + "strongest key from query " + std::to_string(q.query) + " is " + std::to_string(answer.key));
    } catch (const std::exception &e) {
        problem(q.line, e.what());
    }
}

} // namespace

PredictAnswer predictAnswer(
    const Trace &trace, const LessonQuestion &question, const ViewSpec &spec, const ModelConfig &model)
{
    const int layer = question.layer >= 0 ? question.layer : spec.layer;
    const int head = question.head >= 0 ? question.head : std::max(0, spec.head);
    const std::string name
        = names::attentionTensor(attentionSiteOf(spec, model, "the question's view"), layer, "probs");
    const TraceEntry *probs = trace.find(name);
    if (probs == nullptr)
        throw Error("the question needs " + name + ", which the trace does not hold (a layer outside the model?)");
    const Tensor &t = probs->tensor;
    if (head < 0 || head >= t.dim(0) || question.query < 0 || question.query >= t.dim(1))
        throw Error("the question's head " + std::to_string(head) + " or query " + std::to_string(question.query)
            + " is outside " + name + " " + t.shapeString());
    PredictAnswer answer;
    const auto row = t.slice(head).row(question.query);
    answer.row.assign(row.data(), row.data() + row.size());
    const auto best = std::max_element(answer.row.begin(), answer.row.end());
    answer.key = int(best - answer.row.begin());
    answer.weight = *best;
    return answer;
}

ViewSpec beforeReveal(ViewSpec spec, const LessonStep &step)
{
    const auto predict = std::find_if(step.questions.begin(), step.questions.end(),
        [](const LessonQuestion &q) { return q.kind == LessonQuestion::Kind::Predict; });
    if (predict == step.questions.end())
        return spec;
    spec.query = predict->query;
    spec.set(views::attentionmap::kVeilQuery, true);
    if (predict->layer >= 0)
        spec.layer = predict->layer;
    if (predict->head >= 0)
        spec.head = predict->head;
    return spec;
}

ViewSpec stepViewSpec(const Lesson &lesson, const LessonStep &step)
{
    ViewSpec spec = step.spec;
    spec.model = lessonModelPath(lesson, spec.model);
    for (const LessonAction &a : step.actions) {
        if (a.kind == LessonAction::Kind::RunTo) {
            spec.op = a.target;
        } else if (a.kind == LessonAction::Kind::Pad) {
            for (int p : a.positions) {
                const auto it = std::find(spec.padding.begin(), spec.padding.end(), p);
                it == spec.padding.end() ? spec.padding.push_back(p) : void(spec.padding.erase(it));
            }
            std::sort(spec.padding.begin(), spec.padding.end());
        } else if (a.kind == LessonAction::Kind::Param) {
            const std::string key = a.target.substr(0, a.target.find('=') + 1);
            std::erase_if(spec.attentionParams, [&](const std::string &p) { return p.starts_with(key); });
            spec.attentionParams.push_back(a.target);
        } else if (a.kind == LessonAction::Kind::Generate) {
            const auto model = loadModel(lessonModelPath(lesson, spec.model));
            const Input input = makeInput(*tokenizerForModel(*model), spec.text, spec.tokens, spec.padding);
            Generator generator(
                model, input.tokens, {float(a.temperature), a.topK, uint64_t(std::max<long long>(0, a.seed)), a.topP});
            for (int i = 0; i < a.count && int(generator.tokens().size()) < model->config.context; ++i)
                generator.generate();
            spec.tokens = generator.tokens();
            spec.padding.clear();
        }
    }
    return spec;
}

std::string lessonModelPath(const Lesson &lesson, const std::string &model)
{
    for (const BuiltinModel &b : builtinModels())
        if (b.name == model)
            return model;
    const fs::path path(model);
    return path.is_relative() ? (fs::path(lesson.path).parent_path() / path).string() : model;
}

std::vector<std::string> checkLesson(const Lesson &lesson)
{
    return Checker(lesson).run();
}

} // namespace atlas
