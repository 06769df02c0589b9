#include "panels/modelinfopanel.h"

#include "session/session.h"

#include <QLabel>
#include <QLocale>
#include <QTextDocument>
#include <QVBoxLayout>

namespace atlas {

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
    if (c.isEncoderDecoder())
        html += row(tr("encoder + decoder layers × heads"),
            QStringLiteral("(%1 + %2) × %3").arg(c.encoderLayers).arg(c.layers).arg(c.heads));
    else
        html += row(tr("layers × heads"), QStringLiteral("%1 × %2").arg(c.layers).arg(c.heads));
    html
        += row(tr("d_model · d_head · d_ff"), QStringLiteral("%1 · %2 · %3").arg(c.dModel).arg(c.headDim()).arg(c.dFF));
    html += row(tr("vocabulary"), tr("%1 (%2 tokenizer)").arg(c.vocab).arg(QString::fromStdString(c.tokenizer)));
    html += row(tr("context"), tr("%1 tokens").arg(c.context));
    html += row(tr("parameters"), QLocale().toString(qlonglong(model->parameterCount())));
    html += row(tr("attention"), c.causal ? tr("causal (a decoder)") : tr("bidirectional (an encoder)"));
    html += row(tr("positions"), QString::fromStdString(positionKindName(c.positions)));
    html += row(tr("LayerNorm"),
        c.layerNorm == LayerNormPlacement::Pre ? tr("before each sub-layer (pre-LN)")
                                               : tr("after each residual add (post-LN)"));
    html += row(tr("activation"), c.activation == Activation::Relu ? QStringLiteral("ReLU") : QStringLiteral("GELU"));
    if (!c.sample.empty())
        html += row(
            tr("sample input"), QStringLiteral("<tt>%1</tt>").arg(QString::fromStdString(c.sample).toHtmlEscaped()));
    if (!model->directory.empty())
        html += row(tr("directory"), QString::fromStdString(model->directory).toHtmlEscaped());
    m_label->setText(html + QStringLiteral("</table>"));
}

} // namespace atlas
