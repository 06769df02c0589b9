#include "panels/attentionkernelbar.h"

#include "attention/patternparams.h"
#include "style/theme.h"
#include "util/commalist.h"

#include "attention/attentionkernel.h"
#include "session/session.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>

namespace atlas {

AttentionKernelBar::AttentionKernelBar(Session *session, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_kind(new QComboBox(this))
    , m_params(new QLineEdit(this))
    , m_layers(new QLineEdit(this))
{
    for (const std::string &kind : attention::attentionKernelKinds())
        m_kind->addItem(QString::fromStdString(kind));
    m_kind->setToolTip(tr("The attention every layer computes: exact softmax attention (full), or an efficient "
                          "replacement that attends to fewer keys or approximates the softmax"));
    m_params->setPlaceholderText(tr("parameters: key=value …"));
    m_params->setToolTip(tr("The kernel's parameters, e.g. rounds=2 buckets=4 chunk=4 for LSH or window=4 for "
                            "Longformer; press Enter to apply"));
    m_params->setMinimumWidth(fontMetrics().averageCharWidth() * 24);
    m_layers->setObjectName("attentionLayers");
    m_layers->setPlaceholderText(tr("layers: all"));
    m_layers->setToolTip(layersTip());
    m_layers->setMaximumWidth(fontMetrics().averageCharWidth() * 12);
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(new QLabel(tr("  Attention "), this));
    layout->addWidget(m_kind);
    layout->addWidget(m_params, 1);
    layout->addWidget(m_layers);
    connect(m_kind, &QComboBox::activated, this, [this] {
        m_params->setText(suggestedParams(m_kind->currentText())); // scaled to the input, shown before it runs
        apply();
    });
    connect(m_params, &QLineEdit::returnPressed, this, &AttentionKernelBar::apply);
    connect(m_layers, &QLineEdit::returnPressed, this, &AttentionKernelBar::apply);
    connect(m_session, &Session::specChanged, this, [this] {
        m_kind->setCurrentText(QString::fromStdString(m_session->spec().attention));
        QStringList params;
        for (const std::string &p : m_session->spec().attentionParams)
            params << QString::fromStdString(p);
        if (!m_params->hasFocus())
            m_params->setText(params.join(' '));
        QStringList layers;
        for (int layer : m_session->spec().attentionLayers)
            layers << QString::number(layer);
        if (!m_layers->hasFocus())
            m_layers->setText(layers.join(','));
    });
}

QString AttentionKernelBar::suggestedParams(const QString &kind) const
{
    try {
        const attention::AttentionKernelSpec spec = attention::suggestedKernelSpec(
            kind.toStdString(), std::max<int>(1, int(m_session->input().tokens.size())));
        QStringList params;
        for (const auto &[key, value] : spec.params)
            params << QString::fromStdString(key + "=" + value);
        return params.join(' ');
    } catch (const std::exception &) {
        return {};
    }
}

QString AttentionKernelBar::layersTip()
{
    return tr("The layers that run this kernel, e.g. 0 or 0,2 (empty: every layer); the others keep exact "
              "attention. Press Enter to apply");
}

void AttentionKernelBar::apply()
{
    std::vector<std::string> params;
    for (const QString &p : m_params->text().split(' ', Qt::SkipEmptyParts))
        params.push_back(p.toStdString());
    std::vector<int> layers;
    for (const std::string &text : splitTypedList(m_layers->text().toStdString())) {
        const QString item = QString::fromStdString(text);
        bool ok = false;
        layers.push_back(item.toInt(&ok));
        if (!ok || layers.back() < 0) {
            m_layers->setStyleSheet(textColorStyle(warningTextColor()));
            m_layers->setToolTip(tr("'%1' is not a layer number: give layers as 0,2").arg(item));
            return;
        }
    }
    m_layers->setStyleSheet({});
    m_layers->setToolTip(layersTip());
    m_session->setAttention(m_kind->currentText().toStdString(), params, layers);
}

} // namespace atlas
