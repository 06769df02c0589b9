#include "viewmodel/viewinput.h"

#include "engine/attentiontrace.h"
#include "engine/outputhead.h"
#include "model/modeltokenizer.h"
#include "tokenize/tokenizer.h"
#include "trace/names.h"
#include "util/memorycheck.h"
#include "util/parallel.h"

#include <QObject>

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

namespace atlas {

class OnDemandLayers
{
public:
    std::shared_ptr<const Tensor> find(int layer, const std::string &suffix)
    {
        const std::lock_guard lock(m_mutex);
        for (const Entry &e : m_entries)
            if (e.layer == layer && e.suffix == suffix)
                return e.tensor;
        return nullptr;
    }
    void keep(int layer, const std::string &suffix, std::shared_ptr<const Tensor> tensor)
    {
        const std::lock_guard lock(m_mutex);
        // A view reads a layer or two at a time; a layer at 2048 tokens is 235 MB (Qwen2.5-0.5B's 14 heads).
        if (m_entries.size() >= 4)
            m_entries.erase(m_entries.begin());
        m_entries.push_back({layer, suffix, std::move(tensor)});
    }

private:
    struct Entry
    {
        int layer;
        std::string suffix;
        std::shared_ptr<const Tensor> tensor;
    };
    std::mutex m_mutex;
    std::vector<Entry> m_entries;
};

ViewInput makeViewInput(std::shared_ptr<const Model> model, const Input &input, std::shared_ptr<const Program> program,
    std::shared_ptr<const Trace> trace, const names::AttentionSite &site, std::shared_ptr<const Tokenizer> tokenizer)
{
    if (!tokenizer)
        tokenizer = tokenizerForModel(*model);
    const auto labels = [&](const std::vector<int> &ids) {
        QStringList out;
        for (int id : ids)
            out << QString::fromStdString(tokenizer->piece(id));
        return out;
    };
    const bool encoder = site.stack == names::kEncoderStack;
    ViewInput v;
    v.site = site;
    v.trace = std::move(trace);
    v.program = std::move(program);
    v.tokenIds = encoder ? input.source : input.tokens;
    v.sourceIds = input.source;
    v.sourcePadding = input.sourcePadding;
    v.tokens = labels(v.tokenIds);
    v.padding = encoder ? input.sourcePadding : input.padding;
    v.keyTokens = encoder || site.cross ? labels(input.source) : v.tokens;
    v.keyPadding = encoder || site.cross ? input.sourcePadding : v.padding;
    v.vocabLabel = [tokenizer](int id) { return QString::fromStdString(tokenizer->piece(id)); };
    v.tokenizer = tokenizer;
    v.layers = encoder ? model->config.encoderLayers : model->config.layers;
    v.heads = model->config.heads;
    v.causal = model->config.causal && !encoder && !site.cross;
    v.model = model;
    v.onDemandLayers = std::make_shared<OnDemandLayers>();
    return v;
}

ViewInput makeViewInput(const SpecRun &run, std::shared_ptr<const Tokenizer> tokenizer)
{
    return makeViewInput(run.model, run.input, run.program, run.trace, run.site, std::move(tokenizer));
}

AnalysisContext analysisContext(const ViewInput &input)
{
    return {input.trace, input.program, int(input.tokens.size()), input.layers, input.causal, input.padding,
        input.model, input.tokenIds, input.site, input.sourceIds, input.sourcePadding};
}

void analyzeNow(ViewInput &input, const ViewSpec &spec, bool checkOnly)
{
    std::string problem;
    input.analysis = {};
    AnalysisContext context = analysisContext(input);
    context.checkOnly = checkOnly;
    const AnalysisRequest request = analysisRequest(spec, context);
    input.analysis.settings = request.settings;
    input.analysis.result = runAnalysisNow(request, &problem);
    input.analysis.problem = QString::fromStdString(problem);
}

const Tensor *findHeadTensor(const ViewInput &input, int layer, const char *suffix, int head, QString *problem)
{
    problem->clear();
    if (layer < 0 || (input.layers > 0 && layer >= input.layers)) {
        *problem = QObject::tr("Layer %1 does not exist: the model has %2 layers").arg(layer).arg(input.layers);
        return nullptr;
    }
    const std::string name = siteTensorName(input, layer, suffix);
    const TraceEntry *entry = input.trace ? input.trace->find(name) : nullptr;
    if (entry == nullptr)
        return nullptr;
    const Tensor &t = entry->tensor;
    if (t.rank() != 3 || (t.dim(1) != t.dim(2) && !input.site.cross) || t.dim(1) < 1 || t.dim(2) < 1) {
        *problem = QObject::tr("%1 has shape %2, expected [H, T, T]")
                       .arg(QString::fromStdString(name), QString::fromStdString(t.shapeString()));
        return nullptr;
    }
    if (head < 0 || head >= t.dim(0)) {
        *problem = QObject::tr("Head %1 does not exist: layer %2 has %3 heads").arg(head).arg(layer).arg(t.dim(0));
        return nullptr;
    }
    return &t;
}

namespace {

// The stage a trace suffix names, for a readout of an on-demand trace.
bool stageOf(const char *suffix, ops::ScoreStage *stage)
{
    const std::string_view s(suffix);
    if (s == "attn.probs")
        *stage = ops::ScoreStage::Probs;
    else if (s == "attn.masked")
        *stage = ops::ScoreStage::Masked;
    else if (s == "attn.scores")
        *stage = ops::ScoreStage::Scores;
    else if (s == "attn.capped")
        *stage = ops::ScoreStage::Capped;
    else
        return false;
    return true;
}

} // namespace

std::shared_ptr<const AttentionReadout> findAttentionReadout(const ViewInput &input, int layer)
{
    if (!input.trace || !input.model || input.site != names::AttentionSite {})
        return nullptr;
    return AttentionReadout::find(*input.model, input.padding, *input.trace, layer);
}

namespace {

// Head `head` of the trace's [H, T, S] tensor layer.{layer}.{suffix}, or else `stage` of it computed from an on-demand
// trace's readout.
HeadMatrix headMatrix(
    const ViewInput &input, int layer, const char *suffix, ops::ScoreStage stage, int head, QString *problem)
{
    if (const Tensor *t = findHeadTensor(input, layer, suffix, head, problem))
        return {t->slice(head).data(), int(t->dim(1)), int(t->dim(2)), input.trace};
    const std::shared_ptr<const AttentionReadout> readout
        = problem->isEmpty() ? findAttentionReadout(input, layer) : nullptr;
    if (!readout)
        return {};
    if (head < 0 || head >= readout->heads()) {
        *problem
            = QObject::tr("Head %1 does not exist: layer %2 has %3 heads").arg(head).arg(layer).arg(readout->heads());
        return {};
    }
    auto owner = std::make_shared<const Tensor>(readout->head(stage, head));
    return {owner->data(), int(owner->dim(0)), int(owner->dim(1)), owner};
}

} // namespace

HeadMatrix findHeadMatrix(const ViewInput &input, int layer, const char *suffix, int head, QString *problem)
{
    ops::ScoreStage stage;
    if (!stageOf(suffix, &stage)) {
        const Tensor *t = findHeadTensor(input, layer, suffix, head, problem);
        return t ? HeadMatrix {t->slice(head).data(), int(t->dim(1)), int(t->dim(2)), input.trace} : HeadMatrix {};
    }
    return headMatrix(input, layer, suffix, stage, head, problem);
}

Tensor findNextTokenProbs(const ViewInput &input, const std::vector<int> &positions, QString *problem)
{
    if (input.trace)
        if (const TraceEntry *probs = input.trace->find("next_probs"))
            return rowsOf(probs->tensor, positions);
    if (!input.trace || !input.program || !input.model
        || !nextTokenReadable(input.model->config, *input.program, *input.trace)) {
        *problem = notComputedText(input, "next_probs");
        return {};
    }
    Input run;
    run.tokens = input.tokenIds;
    run.padding = input.padding;
    return nextTokenProbs(*input.model, *input.program, *input.trace, run, positions);
}

std::shared_ptr<const Tensor> findLayerTensor(const ViewInput &input, int layer, const char *suffix, QString *problem)
{
    if (const Tensor *t = findHeadTensor(input, layer, suffix, 0, problem))
        return {input.trace, t};
    ops::ScoreStage stage;
    const std::shared_ptr<const AttentionReadout> readout
        = problem->isEmpty() && stageOf(suffix, &stage) ? findAttentionReadout(input, layer) : nullptr;
    if (!readout || !input.onDemandLayers)
        return nullptr;
    if (auto kept = input.onDemandLayers->find(layer, suffix))
        return kept;
    const int64_t H = readout->heads(), T = readout->queries(), S = readout->keys();
    if (size_t(H * T * S) * sizeof(float) > kOnDemandLayerBytes) {
        *problem = QObject::tr("This view reads every head of layer %1 whole: %2 at %3 tokens, more than the %4 it may "
                               "recompute from a trace that keeps attention on demand. The Attention view shows one "
                               "head; or use fewer tokens")
                       .arg(layer)
                       .arg(QString::fromStdString(formatBytes(double(H * T * S) * sizeof(float))))
                       .arg(T)
                       .arg(QString::fromStdString(formatBytes(double(kOnDemandLayerBytes))));
        return nullptr;
    }
    auto whole = std::make_shared<Tensor>(Tensor::uninitialized({H, T, S}));
    parallelFor(H, 1, [&](int64_t begin, int64_t end) {
        for (int64_t h = begin; h < end; ++h)
            readout->tile(whole->data() + h * T * S, S, stage, h, 0, T, 0, S);
    });
    input.onDemandLayers->keep(layer, suffix, whole);
    return whole;
}

HeadMatrix findMaskedCells(const ViewInput &input, int layer, int head)
{
    QString ignored;
    return headMatrix(input, layer, "attn.masked", ops::ScoreStage::Mask, head, &ignored);
}

bool findHeadCell(const ViewInput &input, int layer, const char *suffix, int head, int row, int col, float *value)
{
    QString problem;
    if (const Tensor *t = findHeadTensor(input, layer, suffix, head, &problem)) {
        if (row < 0 || col < 0 || row >= t->dim(1) || col >= t->dim(2))
            return false;
        *value = t->slice(head)(row, col);
        return true;
    }
    ops::ScoreStage stage;
    const std::shared_ptr<const AttentionReadout> readout
        = stageOf(suffix, &stage) ? findAttentionReadout(input, layer) : nullptr;
    if (!readout || head < 0 || head >= readout->heads() || row < 0 || col < 0 || row >= readout->queries()
        || col >= readout->keys())
        return false;
    readout->tile(value, 1, stage, head, row, row + 1, col, col + 1);
    return true;
}

const Tensor *findSinkShares(const ViewInput &input, int layer, int heads, int queries)
{
    const TraceEntry *entry
        = input.trace && !input.site.cross ? input.trace->find(siteTensorName(input, layer, "attn.sink")) : nullptr;
    if (entry == nullptr || entry->tensor.rank() != 2 || entry->tensor.dim(0) != heads
        || entry->tensor.dim(1) != queries || queries < 1)
        return nullptr;
    return &entry->tensor;
}

float firstKeyShare(const HeadMatrix &probs)
{
    if (!probs || probs.rows < 2 || probs.cols < 1)
        return -1.0f;
    double sum = 0;
    for (int i = 1; i < probs.rows; ++i)
        sum += probs.at(i, 0);
    return float(sum / double(probs.rows - 1));
}

std::string siteTensorName(const ViewInput &input, int layer, std::string_view suffix)
{
    if (suffix.substr(0, 5) == "attn.")
        return names::attentionTensor(input.site, layer, suffix.substr(5));
    return names::layerTensor(input.site.stack, layer, suffix);
}

QString siteTitle(const ViewInput &input)
{
    if (input.site.cross)
        return QObject::tr("Cross-attention");
    if (input.site.stack == names::kEncoderStack)
        return QObject::tr("Encoder self-attention");
    if (input.site.stack == names::kDecoderStack)
        return QObject::tr("Decoder self-attention");
    return {};
}

QString notComputedText(const ViewInput &input, const std::string &traceName)
{
    return QString::fromStdString(atlas::notComputedText(input.program.get(), traceName));
}

QString logitsFormula(const ViewInput &input)
{
    if (input.program)
        if (const int op = input.program->producerOf("logits"); op >= 0)
            return QString::fromStdString(input.program->ops[size_t(op)].outputs.front().formula);
    return QStringLiteral("Z = LN_f(X) W_teᵀ");
}

QString tokenLabel(const ViewInput &input, int position)
{
    if (position >= 0 && position < input.tokens.size())
        return input.tokens.at(position);
    return QStringLiteral("#%1").arg(position);
}

QString vocabularyLabel(const ViewInput &input, int id)
{
    return input.vocabLabel ? input.vocabLabel(id) : QStringLiteral("#%1").arg(id);
}

QString keyLabel(const ViewInput &input, int position)
{
    if (!input.site.cross) // self-attention: the keys are the queries' tokens (a hand-made input may set no keys)
        return tokenLabel(input, position);
    if (position >= 0 && position < input.keyTokens.size())
        return input.keyTokens.at(position);
    return QStringLiteral("#%1").arg(position);
}

bool isKeyPadding(const ViewInput &input, int position)
{
    const std::vector<int> &padding = input.site.cross ? input.keyPadding : input.padding;
    return std::find(padding.begin(), padding.end(), position) != padding.end();
}

QStringList keyLabels(const ViewInput &input, int count)
{
    QStringList labels(std::max(0, count));
    for (int i = 0; i < count; ++i)
        labels[i] = keyLabel(input, i);
    return labels;
}

QStringList numberedLabels(int count)
{
    QStringList labels;
    for (int i = 0; i < count; ++i)
        labels << QString::number(i);
    return labels;
}

QString sparseNormaliserName(const ViewInput &input)
{
    if (!input.model || input.model->config.normaliser == Normaliser::Softmax || input.site.cross
        || input.model->config.isEncoderDecoder())
        return {};
    return QString::fromStdString(normaliserName(input.model->config.normaliser));
}

QStringList tokenLabels(const ViewInput &input, int count)
{
    QStringList labels(std::max(0, count));
    for (int i = 0; i < count; ++i)
        labels[i] = tokenLabel(input, i);
    return labels;
}

QString cellPrefix(const ViewInput &input, int row, int col)
{
    // One multi-argument arg() so a token that contains "%2" is not substituted again.
    return QObject::tr("query '%1' (#%2) \u2192 key '%3' (#%4)")
        .arg(tokenLabel(input, row), QString::number(row), keyLabel(input, col), QString::number(col));
}

QString attentionCellText(const ViewInput &input, int layer, int head, int row, int col, bool withScore)
{
    float p = 0, masked = 0, score = 0;
    if (!findHeadCell(input, layer, "attn.probs", head, row, col, &p))
        return {};
    if (findHeadCell(input, layer, "attn.masked", head, row, col, &masked)
        && masked == -std::numeric_limits<float>::infinity())
        return QObject::tr(" masked (\u2212\u221E before softmax)");
    if (const QString sparse = sparseNormaliserName(input); !sparse.isEmpty() && p == 0.0f)
        return QObject::tr(" probability exactly 0, not masked: its score is below %1's threshold \u03C4").arg(sparse);
    QString text;
    if (withScore && findHeadCell(input, layer, "attn.scores", head, row, col, &score))
        text += QObject::tr(" score %1,").arg(formatNumber(score));
    return text + QObject::tr(" probability %1").arg(formatNumber(p));
}

namespace {

// "0.5000" -> "0.5", "2.00" -> "2": a number shows the digits that carry information.
QString stripZeros(QString text)
{
    if (!text.contains('.'))
        return text;
    while (text.endsWith('0'))
        text.chop(1);
    if (text.endsWith('.'))
        text.chop(1);
    return text;
}

} // namespace

QString formatPercent(double fraction, int significant)
{
    return formatNumber(100.0 * fraction, significant) + QStringLiteral("\u202F%");
}

QString formatNumber(double value, int significant)
{
    static const QChar minus(0x2212);
    if (std::isnan(value))
        return QStringLiteral("NaN");
    if (std::isinf(value))
        return value < 0 ? QString(minus) + QChar(0x221E) : QString(QChar(0x221E));
    if (value == 0)
        return QStringLiteral("0");
    significant = std::max(1, significant);
    const double magnitude = std::abs(value);
    QString text;
    if (magnitude < 1e-3 || magnitude >= 1e5) {
        static const QString superscripts = QString::fromUtf8("⁰¹²³⁴⁵⁶⁷⁸⁹");
        // The decimal conversion rounds (9.996 to 1.00e+01) and reads subnormals (5e-324) that a division by
        // 10^exponent would turn into infinity.
        const QString decimal = QString::number(magnitude, 'e', significant - 1);
        const qsizetype e = decimal.indexOf(QLatin1Char('e'));
        const int exponent = decimal.mid(e + 1).toInt();
        QString power;
        for (const QChar c : QString::number(std::abs(exponent)))
            power += superscripts.at(c.digitValue());
        text = stripZeros(decimal.left(e)) + QStringLiteral("×10") + (exponent < 0 ? QStringLiteral("⁻") : QString())
            + power;
    } else {
        const int digitsBefore = magnitude >= 1 ? int(std::floor(std::log10(magnitude))) + 1 : 0;
        const int leadingZeros = magnitude < 1 ? -int(std::floor(std::log10(magnitude))) - 1 : 0;
        text = stripZeros(QString::number(magnitude, 'f', std::max(0, significant - digitsBefore + leadingZeros)));
    }
    return value < 0 ? QString(minus) + text : text;
}

int keyValueGroup(const ViewInput &input, int head)
{
    if (!input.model || input.site.cross || input.model->config.kvHeadCount() >= input.model->config.heads)
        return -1;
    return head / input.model->config.queriesPerKv();
}

QString sharedKeyValueText(const ViewInput &input, int head)
{
    const int group = keyValueGroup(input, head);
    if (group < 0)
        return {};
    const int size = input.model->config.queriesPerKv();
    return QObject::tr("K/V head %1, shared by heads %2\u2013%3")
        .arg(group)
        .arg(group * size)
        .arg(group * size + size - 1);
}

} // namespace atlas
