#include "panels/modelinfopanel.h"

#include "views/byteunits.h"

#include "model/modelconfig.h"
#include "session/session.h"
#include "tokenize/tokenizer.h"

#include <QLabel>
#include <QLocale>
#include <QTextDocument>
#include <QVBoxLayout>

namespace atlas {

namespace {

std::string joinedLayers(const std::vector<int> &layers)
{
    std::string text;
    for (const int layer : layers)
        text += (text.empty() ? "" : ", ") + std::to_string(layer);
    return text;
}

} // namespace

QString modelShapeText(const ModelConfig &c)
{
    if (c.isEncoderDecoder())
        return QObject::tr("%1 encoder + %2 decoder layers × %3 heads").arg(c.encoderLayers).arg(c.layers).arg(c.heads);
    const int fourier = int(c.fourier.layers.size());
    if (fourier == c.layers)
        return QObject::tr("%1 layers mixing by a Fourier transform (FNet, no heads)").arg(c.layers);
    const QString shape = c.shared.enabled
        ? QObject::tr("%1 layers of one shared block × %2 heads").arg(c.layers).arg(c.heads)
        : QObject::tr("%1 layers × %2 heads").arg(c.layers).arg(c.heads);
    return fourier == 0 ? shape
                        : QObject::tr("%1, %2 layers mixing by a Fourier transform (FNet)").arg(shape).arg(fourier);
}

ModelInfoPanel::ModelInfoPanel(Session *session, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_label(new QLabel(this))
{
    m_label->setWordWrap(true);
    m_label->setTextFormat(Qt::RichText);
    m_label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_label->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_label);
    layout->addStretch(1);
    connect(m_session, &Session::modelChanged, this, &ModelInfoPanel::showModel);
}

QString ModelInfoPanel::text() const
{
    QTextDocument doc;
    doc.setHtml(m_label->text());
    return doc.toPlainText();
}

void ModelInfoPanel::showModel()
{
    const Model *model = m_session->model();
    if (model == nullptr)
        return;
    const ModelConfig &c = model->config;
    const auto row = [](const QString &key, const QString &value) {
        return QStringLiteral("<tr><td style='padding-right:10px'>%1</td><td>%2</td></tr>").arg(key, value);
    };
    QString html = QStringLiteral("<h3>%1</h3><p>%2</p><table>")
                       .arg(QString::fromStdString(model->name).toHtmlEscaped(),
                           QString::fromStdString(c.description).toHtmlEscaped());
    const QString type = QString::fromStdString(c.modelType);
    html += row(tr("family"),
        c.family == Family::Llama         ? tr("%1 (Hugging Face's Llama layout: RMSNorm, RoPE, SwiGLU)").arg(type)
            : c.family == Family::GptNeoX ? tr("%1 (Pythia's layout: parallel residual, partial rotary)").arg(type)
            : c.family == Family::GptNeo  ? tr("%1 (global and local attention layers, unscaled scores)").arg(type)
            : c.family == Family::Bert    ? tr("%1 (post-LN encoder, segment embeddings, masked-LM head%2)")
                                             .arg(type, c.nspHead ? tr(" and next-sentence head") : QString())
            : c.family == Family::T5 ? tr("%1 (encoder–decoder: RMS norms, learned relative position buckets, %2)")
                                           .arg(type,
                                               c.gatedFfn ? tr("gated-GELU feed-forward, untied head")
                                                          : tr("ReLU feed-forward, head tied and scaled by d_model^−½"))
                                     : tr("GPT-2 layout"));
    if (c.isEncoderDecoder())
        html += row(tr("encoder + decoder layers × heads"),
            QStringLiteral("(%1 + %2) × %3").arg(c.encoderLayers).arg(c.layers).arg(c.heads));
    else
        html += row(tr("layers × heads"), QStringLiteral("%1 × %2").arg(c.layers).arg(c.heads));
    if (c.shared.enabled || c.act.enabled) {
        QString depth;
        if (c.shared.enabled && c.act.enabled)
            depth = tr("one block's weights applied up to %1 times, each token halting after its own number of steps "
                       "(the Universal Transformer: shared blocks and adaptive computation time)")
                        .arg(c.layers);
        else if (c.shared.enabled)
            depth = tr("one block's weights at each of the %1 layers (shared blocks, as the Universal Transformer and "
                       "ALBERT)")
                        .arg(c.layers);
        else
            depth = tr("each token halts after its own number of blocks, at most %1 (adaptive computation time)")
                        .arg(c.layers);
        if (c.shared.timestepSignal)
            depth += tr("; before step t every position gains the sinusoid of t (the step signal)");
        html += row(tr("depth"), depth);
    }
    if (c.kvHeadCount() < c.heads)
        html += row(tr("K/V heads"),
            tr("%1, each shared by %2 query heads (%3)")
                .arg(c.kvHeadCount())
                .arg(c.queriesPerKv())
                .arg(c.kvHeadCount() == 1 ? tr("multi-query attention") : tr("grouped-query attention")));
    html
        += row(tr("d_model · d_head · d_ff"), QStringLiteral("%1 · %2 · %3").arg(c.dModel).arg(c.headDim()).arg(c.dFF));
    const Tokenizer *tokenizer = m_session->tokenizer();
    html += row(tr("vocabulary"),
        tr("%1 (%2 tokenizer)")
            .arg(c.vocab)
            .arg(QString::fromStdString(tokenizer ? tokenizer->kind() : c.tokenizer).toHtmlEscaped()));
    html += row(tr("context"), tr("%1 tokens").arg(c.context));
    const qlonglong parameters = qlonglong(model->parameterCount());
    html += row(tr("parameters"), QLocale().toString(parameters));
    double inMemory = 0;
    bool packed = false; // a safetensors checkpoint's MXFP4 experts stay in their blocks too
    for (const auto &[name, tensor] : model->parameters()) {
        inMemory += double(tensor->storedBytes());
        packed = packed || tensor->packing() != nullptr;
    }
    html += row(tr("weights"),
        model->gguf ? tr("%1 in memory: the matrices in the file's encoding, the rest as float32 (stored as %2)")
                          .arg(byteAmount(inMemory))
                          .arg(QString::fromStdString(model->dtype))
            : packed ? tr("%1 in memory: the experts in their MXFP4 blocks, the rest as float32 (stored as %2)")
                           .arg(byteAmount(inMemory))
                           .arg(QString::fromStdString(model->dtype))
                     : tr("%1 in memory as float32 (stored as %2)")
                           .arg(byteAmount(inMemory))
                           .arg(QString::fromStdString(model->dtype)));
    if (model->gguf)
        html += row(tr("file"),
            tr("GGUF, llama.cpp's %1 architecture: %2, %3 bits per weight as stored, decoded a tile of rows at a time "
               "inside the products")
                .arg(QString::fromStdString(model->gguf->architecture).toHtmlEscaped(),
                    byteAmount(double(model->gguf->fileBytes)))
                .arg(model->gguf->bitsPerWeight, 0, 'f', 2));
    html += row(tr("attention"),
        c.causal ? c.slidingWindow > 0
                ? (c.windowedLayers.empty() ? tr("causal, sliding window of %1 positions").arg(c.slidingWindow)
                                            : tr("causal; layers %1 local (the last %2 positions), the others global")
                                                  .arg(QString::fromStdString(joinedLayers(c.windowedLayers)))
                                                  .arg(c.slidingWindow))
                : tr("causal (a decoder)")
            : int(c.fourier.layers.size()) == c.layers
            ? tr("none: every block mixes its tokens by a Fourier transform over the %1 positions of its context, "
                 "with no weights (FNet; its %2 heads go unused)")
                  .arg(c.context)
                  .arg(c.heads)
            : c.fourier.active()
            ? tr("bidirectional (an encoder); layers %1 mix their tokens by a Fourier transform instead (FNet)")
                  .arg(QString::fromStdString(joinedLayers(c.fourier.layers)))
            : tr("bidirectional (an encoder)"));
    QString positions = QString::fromStdString(positionKindName(c.positions));
    if (c.rotatesQueriesAndKeys())
        positions += tr(", θ base %1").arg(double(c.ropeBase), 0, 'g', 7);
    if (c.ropeLocalBase > 0)
        positions += tr(" (the local layers %1)").arg(double(c.ropeLocalBase), 0, 'g', 7);
    if (!c.noRopeLayers.empty())
        positions += tr("; layers %1 without RoPE (NoPE)").arg(QString::fromStdString(joinedLayers(c.noRopeLayers)));
    if (c.rotaryDims > 0)
        positions += tr(", the first %1 of %2 dimensions of each head").arg(c.rotaryDims).arg(c.headDim());
    if (c.ropeScaling.kind == RopeScaling::Kind::LongRope)
        positions += tr(", LongRoPE: its short factors up to %1 positions, its long ones past that (×%2 the "
                        "original context); cos and sin × %3")
                         .arg(c.ropeScaling.originalContext)
                         .arg(c.ropeScaling.factor, 0, 'g', 4)
                         .arg(c.ropeScaling.attentionFactor, 0, 'g', 4);
    else if (c.ropeScaling.kind != RopeScaling::Kind::None)
        positions += c.ropeScaling.kind == RopeScaling::Kind::Linear
            ? tr(", linear scaling ×%1").arg(c.ropeScaling.factor)
            : c.ropeScaling.kind == RopeScaling::Kind::Factors
            ? tr(", each pair's frequency divided by its own factor (the file's rope_freqs: Llama 3's scaling)")
            : tr(", Llama 3 scaling ×%1").arg(c.ropeScaling.factor);
    if (c.positions == PositionKind::T5)
        positions += tr(", a learned bias per head for each of %1 buckets of relative distance, logarithmic up to %2 "
                        "positions apart")
                         .arg(c.relativeBuckets)
                         .arg(c.relativeMaxDistance);
    if (model->gguf && c.positions == PositionKind::T5)
        positions += tr(" (llama.cpp's constant: a t5 file holds no maximum distance)");
    if (model->gguf && model->gguf->pairedRope)
        positions += tr("; the file stores q and k for RoPE on adjacent pairs (llama.cpp's convention), put back "
                        "in rotate-half order when read");
    html += row(tr("positions"), positions);
    const QString norm = c.norm == NormKind::RmsNorm ? tr("RMSNorm") : tr("LayerNorm");
    html += row(norm,
        c.layerNorm == LayerNormPlacement::Pre        ? tr("before each sub-layer (pre-norm)")
            : c.layerNorm == LayerNormPlacement::Post ? tr("after each residual add (post-norm)")
            : c.layerNorm == LayerNormPlacement::AfterSublayer
            ? tr("on each sub-layer's output, before its add; none before (OLMo 2)")
            : tr("before each sub-layer and on its output (sandwich)"));
    if (c.parallelResidual)
        html += row(tr("residual"), tr("parallel: X + Attn(LN₁(X)) + FFN(LN₂(X))"));
    const QString activation = c.activation == Activation::Relu ? QStringLiteral("ReLU")
        : c.activation == Activation::Silu                      ? QStringLiteral("SiLU")
        : c.activation == Activation::GeluErf                   ? QStringLiteral("GELU (exact, erf)")
        : c.activation == Activation::QuickGelu                 ? QStringLiteral("quick GELU, g σ(1.702 g)")
                                                                : QStringLiteral("GELU (tanh approximation)");
    html += row(tr("feed-forward"),
        !c.gatedFfn          ? activation
            : c.gluClamp > 0 ? tr("clamped SwiGLU with biases: (clamp(u, −%2, %2) + 1) ⊙ %1 of min(g, %2), g and "
                                  "u interleaved in gate_up_proj")
                                   .arg(activation)
                                   .arg(double(c.gluClamp))
            : c.fusesProjections() ? tr("%1-gated (SwiGLU: %1(X W_gate) ⊙ X W_up), W_gate and W_up stacked in one "
                                        "gate_up_proj; Q, K and V in one qkv_proj")
                                         .arg(activation)
                                   : tr("%1-gated (SwiGLU: %1(X W_gate) ⊙ X W_up)").arg(activation));
    if (c.hasExperts())
        html += row(tr("experts"),
            c.droplessRouting ? tr("%1 per layer, top-%2, no capacity (nothing dropped; the chosen gates renormalised)")
                                    .arg(c.experts)
                                    .arg(c.expertTopK)
                              : tr("%1 per expert layer, top-%2, capacity factor %3")
                                    .arg(c.experts)
                                    .arg(c.expertTopK)
                                    .arg(double(c.capacityFactor)));
    if (c.attentionSinks)
        html += row(tr("attention sinks"),
            tr("a learned logit per head joins each row's softmax and takes its share of the weight (no value)"));
    html += row(tr("output head"),
        c.tiedHead                                  ? tr("tied to the token embedding")
            : model->gguf && c.family == Family::T5 ? tr("its own matrix, read unscaled as llama.cpp computes it (the "
                                                         "embedding when the file has no output tensor)")
                                                    : tr("its own matrix (lm_head)"));
    if (!c.sample.empty())
        html += row(
            tr("sample input"), QStringLiteral("<tt>%1</tt>").arg(QString::fromStdString(c.sample).toHtmlEscaped()));
    if (!model->directory.empty())
        html += row(tr("directory"), QString::fromStdString(model->directory).toHtmlEscaped());
    m_label->setText(html + QStringLiteral("</table>"));
}

} // namespace atlas
