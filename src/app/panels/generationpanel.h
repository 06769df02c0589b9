#pragma once

#include <QWidget>

class QDoubleSpinBox;
class QLabel;
class QSpinBox;
class QTableWidget;

namespace atlas {

class Session;
struct GenerationReport;

// Generation one token at a time with a KV cache: sampling settings; the continuation as plain text after the
// prompt; and a row per new token with the model's probability of it and the cache's size after it, so the
// cache's growth is visible.
class GenerationPanel : public QWidget
{
    Q_OBJECT

public:
    explicit GenerationPanel(Session *session, QWidget *parent = nullptr);

    QTableWidget *table() const { return m_table; }
    QString continuationText() const; // the label's plain text

private:
    void show(const GenerationReport &report);

    Session *m_session;
    QSpinBox *m_steps;
    QDoubleSpinBox *m_temperature;
    QSpinBox *m_topK;
    QDoubleSpinBox *m_topP;
    QSpinBox *m_seed;
    QLabel *m_text;
    QTableWidget *m_table;
};

} // namespace atlas
