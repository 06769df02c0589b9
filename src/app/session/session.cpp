#include "session/session.h"

#include "engine/inputbuilder.h"
#include "model/builtinmodels.h"
#include "model/modeltokenizer.h"
#include "util/commalist.h"
#include "util/error.h"
#include "util/memorycheck.h"
#include "util/threadpriority.h"
#include "view/specrun.h"
#include "view/viewsettings.h"

#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

namespace atlas {

Session::Session(QObject *parent)
    : QObject(parent)
{
    connect(&m_analyses, &ViewAnalyses::changed, this, &Session::analysisChanged);
    m_worker.setMaxThreadCount(1); // jobs run in order, one at a time
    connect(&m_watcher, &QFutureWatcher<void>::finished, this, &Session::finishJob);
}

Session::~Session()
{
    m_cancel = true;
    m_watcher.waitForFinished();
}

void Session::runJob(Job job, bool quiet)
{
    if (m_busy) {
        if (m_quietJob && !quiet) // unasked work under way, which the window does not show: this one runs next
            m_afterQuiet = std::move(job);
        return;
    }
    m_busy = true;
    m_quietJob = quiet;
    m_cancel = false;
    m_error.clear();
    m_commit = nullptr;
    if (!quiet)
        emit busyChanged(true);
    m_watcher.setFuture(QtConcurrent::run(&m_worker, [this, job = std::move(job)] {
        runAtBackgroundPriority();
        try {
            m_commit = job();
        } catch (const std::exception &e) { // atlas::Error, or std::bad_alloc on a request that cannot fit
            m_error = QString::fromStdString(e.what());
        }
    }));
}

void Session::finishJob()
{
    m_busy = false;
    if (m_commit)
        m_commit();
    m_commit = nullptr;
    emit busyChanged(false);
    if (!m_error.isEmpty())
        emit errorOccurred(m_error);
    if (m_afterQuiet) // asked during unasked work: first
        runJob(std::exchange(m_afterQuiet, nullptr));
    else if (m_startWhenFree) { // a text to read and tokenize, asked for last
        const std::function<void()> start = std::exchange(m_startWhenFree, nullptr);
        m_rerunWhenFree = false;
        m_runWhenFree.reset();
        start();
    } else if (m_applyWhenFree) {
        auto [spec, source] = *std::exchange(m_applyWhenFree, std::nullopt);
        m_rerunWhenFree = false;
        m_runWhenFree.reset();
        applySpec(spec, source);
    } else if (m_runWhenFree) {
        auto [input, ran] = *std::exchange(m_runWhenFree, std::nullopt);
        m_rerunWhenFree = false;
        runInput(std::move(input), std::move(ran));
    } else if (m_rerunWhenFree) {
        m_rerunWhenFree = false;
        runInput(m_input);
    }
    recomputeForView(); // when nothing else was started
    prefetchNeighbours(); // when nothing at all was
}

Session::Commit Session::snapshot()
{
    auto trace = std::make_shared<const Trace>(m_engine->trace());
    auto program = std::make_shared<const Program>(m_engine->program());
    const int cursor = m_engine->cursor();
    const QString notice = m_engine->wholeTraceBytes() == 0 ? QString()
        : m_engine->blockKeeping() == BlockKeeping::Input
        ? tr("%1 tokens: attention on demand and only each block's input kept (whole: %2, over the %3 budget; Run ▸ "
             "Trace Memory Budget). Views compute what they show, a layer's q and k first.")
        : m_engine->checkpointed()
        ? tr(
            "%1 tokens: attention on demand and only each block's checkpoints kept (whole: %2, over the %3 budget; Run "
            "▸ Trace Memory Budget). Views compute what they show.")
        : tr("%1 tokens: attention and logits kept on demand (whole, the trace would take %2, over its %3 budget: Run "
             "▸ Trace Memory Budget). Views compute the head or position they show.");
    const QString noticeText = notice.isEmpty()
        ? notice
        : notice.arg(m_engine->input().tokens.size())
              .arg(QString::fromStdString(formatBytes(double(m_engine->wholeTraceBytes()))),
                  QString::fromStdString(formatBytes(double(m_memoryBudget))));
    return [this, trace, program, cursor, notice = noticeText] {
        if (!notice.isEmpty())
            emit noticed(notice);
        m_trace = trace;
        m_keptTrace = trace;
        m_recomputed.clear();
        m_recomputeAsked.clear();
        m_prefetched.reset();
        m_prefetchAsked.clear();
        m_program = program;
        m_cursor = cursor;
        // The tensor view follows the stepper: it shows what the operation just run produced.
        if (cursor > 0)
            m_spec.tensor = program->ops[size_t(cursor - 1)].outputs.front().name;
        const bool layerMoved = followStepperLayer();
        updateAnalysis();
        emit traceChanged();
        if (layerMoved)
            emit specChanged();
    };
}

namespace {

QString pastTrainingLength(const Model &model, size_t tokens)
{
    return Session::tr("The input has %1 tokens, past the %2 positions %3 was trained for: its %4 positions are "
                       "computed for every one of them, so this shows how it extrapolates.")
        .arg(tokens)
        .arg(model.config.context)
        .arg(QString::fromStdString(model.name), QString::fromStdString(positionKindName(model.config.positions)));
}

} // namespace

void Session::openModel(const QString &nameOrDirectory, bool sampleInput)
{
    const std::string name = nameOrDirectory.toStdString();
    const std::string text = m_spec.text, decoderText = m_spec.decoderText;
    const std::vector<int> tokens = m_spec.model == name ? m_spec.tokens : std::vector<int> {};
    runJob([this, name, text, decoderText, tokens, sampleInput]() -> Commit {
        auto model = loadModel(name);
        std::shared_ptr<const Tokenizer> tokenizer = tokenizerForModel(*model);
        const bool useSample = sampleInput && !model->config.sample.empty();
        const std::string shown = useSample ? model->config.sample : text;
        Input input;
        ViewSpec wanted; // an encoder-decoder's two inputs, as a spec names them
        wanted.text = shown;
        wanted.tokens = useSample ? std::vector<int> {} : tokens;
        wanted.decoderText = useSample || decoderText.empty() ? model->config.decoderSample : decoderText;
        // Without a tokenizer the boxes hold ids: one token, or the decoder's start, until the user types others.
        const bool idsOnly = !tokenizer->canEncode();
        if (idsOnly && wanted.tokens.empty())
            wanted.tokens = {0};
        // Without a sample of its own (a Hugging Face or GGUF T5), the decoder starts from its start token alone.
        if (idsOnly || wanted.decoderText.empty()) {
            wanted.decoderText.clear();
            wanted.decoderTokens = {std::max(0, model->config.decoderStart)};
        }
        if (model->config.isEncoderDecoder())
            input = specInput(wanted, *model, *tokenizer, name);
        else
            input.tokens = wanted.tokens.empty() ? tokenizer->encodeWithSpecialTokens(shown) : wanted.tokens;
        QString notice; // a learned table stops at the context: cut the input (other kinds run past it, runInput)
        if (int(input.tokens.size()) > model->config.context && model->config.positions == PositionKind::Learned) {
            notice = tr("The input has %1 tokens, more than the %2 of %3's context: it was cut to the first %2.")
                         .arg(input.tokens.size())
                         .arg(model->config.context)
                         .arg(QString::fromStdString(model->name));
            input.tokens.resize(size_t(model->config.context));
        }
        const bool cut = !notice.isEmpty();
        const std::string newText = idsOnly ? std::string() : cut ? tokenizer->decode(input.tokens) : shown;
        const bool encoded = !idsOnly && (useSample || tokens.empty());
        if (idsOnly)
            notice += (notice.isEmpty() ? "" : " ")
                + tr("%1 has no tokenizer this program reads (%2): the Input box takes token ids, as #0,1,2.")
                      .arg(QString::fromStdString(model->name), QString::fromStdString(tokenizer->noTextReason()));
        return [this, model, tokenizer, input, name, newText, encoded, cut, notice, wanted, idsOnly] {
            m_model = model;
            m_tokenizer = tokenizer;
            if (m_spec.model != name) { // another model: no token, head or expert count of the last one
                resetModelSettings(m_spec);
                for (auto &[view, settings] : m_viewSettings)
                    resetModelSettings(settings);
            }
            m_spec.model = name;
            m_spec.positions.clear(); // a model opened afresh runs with its own encoding
            QString kernelNotice; // and with exact attention: a kernel chosen for the last model is not carried over
            if (m_spec.attention != ViewSpec().attention) {
                kernelNotice = tr("%1 runs with exact softmax attention: the %2 kernel chosen for the last model "
                                  "was switched off (Attention in the toolbar turns it on again).")
                                   .arg(QString::fromStdString(model->name), QString::fromStdString(m_spec.attention));
                m_spec.attention = ViewSpec().attention;
                m_spec.attentionParams.clear();
                m_spec.attentionLayers.clear();
            }
            const bool twoStacks = model->config.isEncoderDecoder();
            m_spec.decoderText = twoStacks ? wanted.decoderText : std::string();
            m_spec.decoderTokens = twoStacks ? wanted.decoderTokens : std::vector<int> {};
            if (!twoStacks)
                m_spec.site = "self";
            m_spec.text = newText;
            if (encoded || cut) { // the input was encoded from text
                m_spec.tokens.clear();
                m_spec.padding.clear();
            }
            if (idsOnly) // the boxes show the ids the model runs
                m_spec.tokens = twoStacks ? input.source : input.tokens;
            m_spec.layer = std::min(m_spec.layer,
                (twoStacks ? std::min(model->config.layers, model->config.encoderLayers) : model->config.layers) - 1);
            m_spec.head = std::min(m_spec.head, model->config.heads - 1);
            m_trace.reset();
            m_keptTrace.reset();
            m_recomputed.clear();
            m_recomputeAsked.clear();
            m_prefetched.reset();
            m_prefetchAsked.clear();
            m_program.reset();
            updateAnalysis();
            emit modelChanged();
            emit specChanged();
            if (!notice.isEmpty())
                emit noticed(notice);
            if (!kernelNotice.isEmpty())
                emit noticed(kernelNotice);
            QMetaObject::invokeMethod(
                this, [this, input] { runInput(input); }, Qt::QueuedConnection);
        };
    });
}

void Session::applySpec(const ViewSpec &spec, const QString &source)
{
    if (m_busy) {
        m_applyWhenFree = {spec, source};
        m_cancel = true;
        return;
    }
    const std::shared_ptr<const Model> current
        = spec.model == m_spec.model && spec.positions == m_spec.positions ? m_model : nullptr;
    const std::shared_ptr<const Tokenizer> currentTokenizer = current ? m_tokenizer : nullptr;
    const size_t budget = m_memoryBudget;
    runJob([this, spec, source, current, currentTokenizer, budget]() -> Commit {
        const std::string where = source.toStdString();
        auto model = current ? current : loadSpecModel(spec);
        auto tokenizer = currentTokenizer ? currentTokenizer : tokenizerForModel(*model);
        ViewSpec shown = spec;
        shown.layer
            = std::clamp(spec.layer, 0, siteLayers(attentionSiteOf(spec, model->config, where), model->config) - 1);
        shown.head = std::clamp(spec.head, -1, model->config.heads - 1);
        Input input = specInput(spec, *model, *tokenizer, where);
        if (int(input.tokens.size()) > model->config.context && model->config.positions == PositionKind::Learned)
            throw Error(where + ": the input has " + std::to_string(input.tokens.size()) + " tokens, more than the "
                + std::to_string(model->config.context) + " of " + model->name + "'s context");
        input.attention = attentionOfSpec(spec, model->config.layers);
        auto engine = std::make_unique<Engine>(
            stretchedForLength(model, input.tokens.size()), input, EngineOptions {true, budget});
        engine->runToEnd([this](int done, int total) {
            QMetaObject::invokeMethod(this, [this, done, total] { emit progressChanged(done, total); });
            return !m_cancel.load();
        });
        if (m_cancel)
            throw Error(where + ": cancelled");
        engine->runTo(stepperPosition(spec, engine->program(), where));
        m_engine = std::move(engine);
        const Commit publish = snapshot();
        const bool newModel = !current;
        return [this, model, tokenizer, input, shown, publish, newModel] {
            m_model = model;
            m_tokenizer = tokenizer;
            m_input = input;
            m_spec = shown;
            m_spec.op.clear(); // applied: the stepper's position is the cursor from now on (setSpec steps on an op)
            m_layerPinned = true; // the spec chose its layer, wherever its stepper stands
            m_viewSettings.clear(); // the spec is whole: what it does not set is at its default in every view
            if (newModel)
                emit modelChanged();
            emit inputChanged();
            publish();
            if (!shown.tensor.empty()) // the spec's tensor, not the one the stepper last wrote
                m_spec.tensor = shown.tensor;
            updateAnalysis();
            emit specChanged();
        };
    });
}

void Session::setAttention(
    const std::string &kind, const std::vector<std::string> &params, const std::vector<int> &layers)
{
    m_spec.attention = kind;
    m_spec.attentionParams = params;
    m_spec.attentionLayers = layers;
    emit specChanged();
    rerun();
}

void Session::runInput(Input input, std::function<void(ViewSpec &)> ran)
{
    if (!m_model)
        return;
    if (m_busy) { // after the job under way: the latest input wins, none is dropped
        m_runWhenFree = {std::move(input), std::move(ran)};
        return;
    }
    try {
        input.attention = attentionOfSpec(m_spec, m_model->config.layers);
    } catch (const std::exception &e) {
        emit errorOccurred(QString::fromStdString(e.what()));
        return;
    }
    const size_t length = std::max(input.tokens.size(), input.source.size());
    auto model = stretchedForLength(m_model, length); // past the context: positions permitting
    if (model != m_model)
        emit noticed(pastTrainingLength(*m_model, length));
    const size_t budget = m_memoryBudget;
    runJob([this, model, input, budget, ran]() -> Commit {
        auto engine = std::make_unique<Engine>(model, input, EngineOptions {true, budget});
        engine->runToEnd([this](int done, int total) {
            QMetaObject::invokeMethod(this, [this, done, total] { emit progressChanged(done, total); });
            return !m_cancel.load();
        });
        m_engine = std::move(engine);
        Commit publish = snapshot();
        return [this, input, publish, ran] {
            m_input = input;
            m_layerPinned = false;
            m_analyses.cancelOtherViews(m_spec.view); // what the other tabs were computing was of the last input
            if (ran)
                ran(m_spec);
            emit inputChanged();
            publish();
            if (ran) // the spec names the new input: the boxes show it, whatever happened to the spec meanwhile
                emit specChanged();
        };
    });
}

void Session::step()
{
    if (m_engine)
        runJob([this] {
            m_engine->step();
            return snapshot();
        });
}

void Session::back()
{
    if (m_engine)
        runJob([this] {
            m_engine->back();
            return snapshot();
        });
}

void Session::runTo(int cursor)
{
    if (m_engine)
        runJob([this, cursor] {
            m_engine->runTo(cursor);
            return snapshot();
        });
}

void Session::runToEnd()
{
    if (!m_engine)
        return;
    runJob([this] {
        m_engine->runToEnd([this](int done, int total) {
            QMetaObject::invokeMethod(this, [this, done, total] { emit progressChanged(done, total); });
            return !m_cancel.load();
        });
        return snapshot();
    });
}

void Session::rewind()
{
    m_layerPinned = false; // from the start, the views follow the stepper again
    runTo(0);
}

void Session::cancel()
{
    m_cancel = true;
}

void Session::generate(int count, SamplingOptions options, SteeringSource steering)
{
    if (!m_model)
        return;
    if (!attention::isExactAttention({m_spec.attention, {}})) {
        emit errorOccurred(tr("Generation with the KV cache uses exact attention: set Attention to 'full' first"));
        return;
    }
    auto model = m_model;
    auto tokenizer = m_tokenizer;
    const Input start = m_input; // an encoder-decoder's source too: the generator runs its encoder once
    runJob([this, model, tokenizer, start, count, options, steering]() -> Commit {
        const bool fromSource = model->config.isEncoderDecoder();
        GenerationReport report;
        report.prompt = QString::fromStdString(tokenizer->decode(start.tokens));
        const auto continuationOf = [&](const std::vector<int> &tokens) {
            return QString::fromStdString(
                tokenizer->decode(std::vector<int>(tokens.begin() + int64_t(start.tokens.size()), tokens.end())));
        };
        NamedSteering named;
        if (steering) {
            named = steering(model, start.tokens);
            report.steering = QString::fromStdString(named.description);
        }
        Generator generator = steering ? steeredGenerator(model, start.tokens, named.steering, options)
                                       : Generator(model, start, options);
        const int steps = steering ? 2 * count : count; // the model's own continuation after the steered one
        for (int i = 0; i < count && !m_cancel; ++i) {
            if (int(generator.tokens().size()) >= model->config.context) { // keep what was generated
                report.stopped = tr("Stopped: the model's context of %1 tokens is full.").arg(model->config.context);
                break;
            }
            const int id = generator.generate();
            report.tokens.push_back({id, QString::fromStdString(tokenizer->piece(id)), generator.lastProbability(),
                generator.cachedPositions(), double(generator.cacheBytes() + generator.crossCacheBytes()) / 1024.0});
            QMetaObject::invokeMethod(this, [this, i, steps] { emit progressChanged(i + 1, steps); });
            if (fromSource && tokenizer->piece(id) == ".") // the end of an answer (seq2seq-sort's)
                break;
        }
        if (steering) {
            Generator plain(model, start, options);
            const int made = int(report.tokens.size());
            for (int i = 0; i < made && !m_cancel; ++i) {
                plain.generate();
                QMetaObject::invokeMethod(
                    this, [this, i, count, steps] { emit progressChanged(count + i + 1, steps); });
            }
            report.unsteered = continuationOf(plain.tokens());
        }
        const std::vector<int> tokens = generator.tokens();
        report.continuation = continuationOf(tokens);
        const std::string text = tokenizer->decode(tokens);
        // An encoder-decoder keeps its source and padding and writes into the Decoder box; a decoder starts afresh.
        Input next = fromSource ? start : Input {};
        next.tokens = tokens;
        return [this, next, report, text, fromSource] {
            if (fromSource) {
                m_spec.decoderText = text;
                m_spec.decoderTokens.clear();
            } else {
                m_spec.tokens = next.tokens;
                m_spec.text = text;
                m_spec.padding.clear();
            }
            emit generationFinished(report);
            emit specChanged();
            QMetaObject::invokeMethod(
                this, [this, next] { runInput(next); }, Qt::QueuedConnection);
        };
    });
}

bool Session::followStepperLayer()
{
    if (m_layerPinned || !m_program || m_cursor <= 0 || m_cursor >= int(m_program->ops.size()))
        return false;
    const Op &op = m_program->ops[size_t(m_cursor - 1)];
    if (op.layer < 0 || op.layer == m_spec.layer || op.stack != viewSite().stack)
        return false;
    m_spec.layer = op.layer;
    return true;
}

void Session::setSpec(const ViewSpec &asked)
{
    ViewSpec spec = asked;
    if (asked.view != m_spec.view) { // each view keeps its own settings (view/viewsettings.h)
        m_viewSettings[m_spec.view] = m_spec;
        const auto saved = m_viewSettings.find(asked.view);
        spec = withViewSettings(asked, m_spec, saved == m_viewSettings.end() ? nullptr : &saved->second);
    }
    if (spec == m_spec)
        return;
    // A layer chosen while the stepper is inside the blocks is kept as the stepper moves on (until Home, a new input
    // or a new model); otherwise the views follow the stepper into the layer it runs.
    if (spec.layer != m_spec.layer && m_program && m_cursor < int(m_program->ops.size()))
        m_layerPinned = true;
    if (spec.positions != m_spec.positions && m_model) // the same weights under another encoding: load it again
        return applySpec(spec, tr("positions"));
    const bool attentionChanged = spec.attention != m_spec.attention || spec.attentionParams != m_spec.attentionParams
        || spec.attentionLayers != m_spec.attentionLayers;
    // A view asked to step to an op (the architecture diagram): step there; the spec keeps no op, so that asking
    // for the same op again after other steps is a change again.
    const int stepTo = !spec.op.empty() && m_program ? m_program->indexOf(spec.op) : -1;
    m_spec = spec;
    m_spec.op.clear();
    updateAnalysis();
    emit specChanged();
    if (attentionChanged && m_engine)
        rerun();
    else if (stepTo >= 0)
        runTo(stepTo + 1);
    else
        recomputeForView();
}

// Runs the current input again with the spec's attention, once the job in progress (if any) is done: while a
// slider is dragged only the last setting is computed, and the trace never lags behind the spec.
void Session::rerun()
{
    if (m_busy) {
        m_rerunWhenFree = true;
        return;
    }
    runInput(m_input);
}

ViewInput Session::viewInput() const
{
    if (!m_model)
        return {};
    ViewInput input = makeViewInput(m_model, m_input, m_program, m_trace, viewSite());
    input.analysis = m_analyses.state();
    return input;
}

int Session::layersShown() const
{
    if (!m_model)
        return 0;
    try {
        return siteLayers(attentionSiteOf(m_spec, m_model->config, "view spec"), m_model->config);
    } catch (const Error &) {
        return m_model->config.layers;
    }
}

names::AttentionSite Session::viewSite() const
{
    try {
        return viewSiteOf(m_spec, m_model->config, "view spec");
    } catch (const Error &) { // kept valid by openModel and applySpec; a one-stack model's own attention else
        return {};
    }
}

void Session::cancelAnalysis()
{
    m_analyses.cancel();
}

void Session::runAnalysisAnyway()
{
    m_budgetLifted = {m_spec.view, m_trace.get()};
    updateAnalysis();
}

void Session::updateAnalysis()
{
    AnalysisRequest request;
    if (m_model) {
        AnalysisContext context = analysisContext(makeViewInput(m_model, m_input, m_program, m_trace, viewSite()));
        context.checkOnly = m_analysesOnLeastWork;
        context.budget.bytes = double(m_memoryBudget);
        if (m_budgetLifted == std::pair<std::string, const Trace *>(m_spec.view, m_trace.get()))
            context.budget = WorkBudget::unbounded();
        request = analysisRequest(m_spec, context);
        if (awaitsRecompute()) { // its result would be made without them, and kept
            const std::vector<std::string> names = recomputedForView();
            const bool inputs = m_program->keeping == BlockKeeping::Input;
            const std::string what = names.size() <= 4
                ? joinedCommaList(names)
                : std::to_string(names.size()) + " tensors (" + names.front() + " … " + names.back() + ")";
            request = {.problem = (names == m_recomputeAsked && !m_busy ? "Not computed (stopped): " : "Computing ")
                    + what
                    + (inputs ? " again from each block's input (this long run keeps only each block's input; the rest "
                                "is recomputed when a view reads it)"
                              : " again from the block's checkpoints (this long run keeps each block's residual "
                                "stream, queries and keys; the rest is recomputed when a view reads it)")
                    + (m_busy ? "…" : ".")};
            if (std::string refusal = recomputeRefusal(names); !refusal.empty())
                request = {.problem = std::move(refusal)};
        }
    }
    m_analyses.show(m_spec.view, std::move(request), m_memoryBudget / 4);
}

} // namespace atlas
