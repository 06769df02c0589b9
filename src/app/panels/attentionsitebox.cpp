#include "panels/attentionsitebox.h"

#include "session/session.h"
#include "view/specrun.h"

#include <QLabel>
#include <QToolBar>

#include <algorithm>

namespace atlas {

AttentionSiteBox::AttentionSiteBox(Session *session, QToolBar *bar)
    : QComboBox(bar)
    , m_session(session)
{
    setObjectName("attentionSite");
    addItem(tr("Decoder self-attention"), QStringLiteral("self"));
    setItemData(
        0, tr("The decoder's masked self-attention: each target token attends the ones before it"), Qt::ToolTipRole);
    addItem(tr("Encoder self-attention"), QStringLiteral("encoder"));
    setItemData(1, tr("The encoder's bidirectional self-attention over the source"), Qt::ToolTipRole);
    addItem(tr("Cross-attention"), QStringLiteral("cross"));
    setItemData(2,
        tr("Decoder queries \u00D7 encoder keys: where each target token reads the source (no causal mask; the "
           "source's padding masked)"),
        Qt::ToolTipRole);
    setToolTip(tr("Which attention of the encoder-decoder the Attention, All heads, Token lines and Mask views show"));
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
