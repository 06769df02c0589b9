#pragma once

#include <QWidget>

class QSpinBox;
class QDoubleSpinBox;
class QPlainTextEdit;

namespace atlas {

class Session;

// Generation one token at a time with a KV cache: sampling settings, and each new token with the cache's
// size after it, so its growth is visible.
class GenerationPanel : public QWidget
{
    Q_OBJECT

public:
    explicit GenerationPanel(Session *session, QWidget *parent = nullptr);

private:
    Session *m_session;
    QSpinBox *m_steps;
    QDoubleSpinBox *m_temperature;
    QSpinBox *m_topK;
    QSpinBox *m_seed;
    QPlainTextEdit *m_log;
};

} // namespace atlas
