#include "panels/attentionsitebox.h"

#include "session/session.h"
#include "view/specrun.h"

#include <QLabel>
#include <QToolBar>

#include <algorithm>

namespace atlas {

void addAttentionSites(QComboBox *box)
{
    box->addItem(AttentionSiteBox::tr("Decoder self-attention"), QStringLiteral("self"));
    box->setItemData(0,
        AttentionSiteBox::tr("The decoder's masked self-attention: each target token attends the ones "
                             "before it"),
        Qt::ToolTipRole);
    box->addItem(AttentionSiteBox::tr("Encoder self-attention"), QStringLiteral("encoder"));
    box->setItemData(
        1, AttentionSiteBox::tr("The encoder's bidirectional self-attention over the source"), Qt::ToolTipRole);
    box->addItem(AttentionSiteBox::tr("Cross-attention"), QStringLiteral("cross"));
    box->setItemData(2,
        AttentionSiteBox::tr("Decoder queries \u00D7 encoder keys: where each target token reads the source (no causal "
                             "mask; the source's padding masked)"),
        Qt::ToolTipRole);
}

AttentionSiteBox::AttentionSiteBox(Session *session, QToolBar *bar)
    : QComboBox(bar)
    , m_session(session)
{
    setObjectName("attentionSite");
    addAttentionSites(this);
    setToolTip(
        tr("Which attention of the encoder-decoder the Attention, All heads, Token lines, Mask and Neuron views show"));
    m_label = bar->addWidget(new QLabel(tr(" Show "), bar));
    m_box = bar->addWidget(this);
    connect(this, &QComboBox::activated, this, [this] {
        ViewSpec spec = m_session->spec();
        spec.site = currentData().toString().toStdString();
        const ModelConfig &c = m_session->model()->config;
        spec.layer = std::min(spec.layer, siteLayers(attentionSiteOf(spec, c, "site"), c) - 1);
        m_session->setSpec(spec);
    });
    connect(m_session, &Session::modelChanged, this, &AttentionSiteBox::sync);
    connect(m_session, &Session::specChanged, this, &AttentionSiteBox::sync);
    sync();
}

void AttentionSiteBox::sync()
{
    const bool shown = m_session->hasModel() && m_session->model()->config.isEncoderDecoder();
    m_label->setVisible(shown);
    m_box->setVisible(shown);
    setCurrentIndex(std::max(0, findData(QString::fromStdString(m_session->spec().site))));
}

} // namespace atlas
