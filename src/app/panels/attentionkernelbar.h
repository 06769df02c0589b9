#pragma once

#include <QWidget>

class QComboBox;
class QLineEdit;

namespace atlas {

class Session;

// Chooses the attention kernel (full softmax, LSH, BigBird, Longformer, strided, fixed, Linformer, Performer), its
// parameters, with small defaults that suit a short classroom input, and the layers that run it.
class AttentionKernelBar : public QWidget
{
    Q_OBJECT

public:
    explicit AttentionKernelBar(Session *session, QWidget *parent = nullptr);

    // The parameters the chooser fills in for `kind`: attention::suggestedKernelSpec for the input's length.
    QString suggestedParams(const QString &kind) const;

private:
    static QString layersTip();
    void apply();

    Session *m_session;
    QComboBox *m_kind;
    QLineEdit *m_params;
    QLineEdit *m_layers;
};

} // namespace atlas
