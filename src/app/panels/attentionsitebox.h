#pragma once

#include <QComboBox>

class QAction;
class QToolBar;

namespace atlas {

class Session;

// The three attentions of an encoder-decoder as a combo box's items, each with the spec's "site" as its data.
void addAttentionSites(QComboBox *box);

// Which attention of an encoder-decoder the attention views show (the spec's "site"): the decoder's self-attention,
// the encoder's, or the decoder's cross-attention. In the toolbar only while such a model is open.
class AttentionSiteBox : public QComboBox
{
    Q_OBJECT

public:
    AttentionSiteBox(Session *session, QToolBar *bar);

private:
    void sync();

    Session *m_session;
    QAction *m_label;
    QAction *m_box;
};

} // namespace atlas
