#pragma once

#include <QWidget>

class QCheckBox;
class QDoubleSpinBox;
class QLabel;
class QSpinBox;
class QTableWidget;

namespace atlas {

class Session;
struct GenerationReport;

// Generation one token at a time with a KV cache: sampling settings; the continuation as plain text after the
// prompt; and a row per new token with the model's probability of it and the cache's size after it, so the
// cache's growth is visible. It can steer as the Features view's Steer page sets it, showing the model's own
// continuation beside the steered one. Its settings are kept between runs.
class GenerationPanel : public QWidget
{
    Q_OBJECT

public:
    explicit GenerationPanel(Session *session, QWidget *parent = nullptr);

    QTableWidget *table() const { return m_table; }
    QString continuationText() const; // the label's plain text
    QCheckBox *steer() const { return m_steer; }

private:
    void showReport(const GenerationReport &report);
    void generate();
    void updateSteer(); // its summary of the spec's steering, enabled for a model that predicts the next token
    void keepSettings() const;

    Session *m_session;
    QSpinBox *m_steps;
    QDoubleSpinBox *m_temperature;
    QSpinBox *m_topK;
    QDoubleSpinBox *m_topP;
    QSpinBox *m_seed;
    QCheckBox *m_steer;
    QLabel *m_text;
    QTableWidget *m_table;
};

} // namespace atlas
