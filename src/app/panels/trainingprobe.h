#pragma once

#include "model/modelconfig.h"
#include "session/trainingworker.h"

#include <QWidget>

#include <string>

class QComboBox;
class QLabel;
class QSpinBox;

namespace atlas {

class AttentionView;

// The Train panel's probe: a held-out example of the task, run through the model being trained a few times a
// second, and the attention of one head on it. An encoder-decoder's probe has a source and a decoder input, and
// a box chooses which of its three attentions the heat map shows.
class TrainingProbe : public QWidget
{
    Q_OBJECT

public:
    explicit TrainingProbe(QWidget *parent = nullptr);

    // The shape of the model a task trains: its layers and heads, and whether it has two stacks.
    void setShape(const ModelConfig &shape);
    void showRun(const ProbeRun &run);
    void clear(); // until the next run, the heat map keeps what it shows
    void applyTheme(const std::string &theme, const std::string &colormap); // the session's theme and colour map

    AttentionView *attentionView() const { return m_attention; }
    QString text() const { return m_run.text; } // the example (an encoder-decoder's decoder input)
    QString sourceText() const { return m_run.sourceText; } // an encoder-decoder's source, else empty
    int layer() const;
    int head() const;
    std::string site() const; // the spec's "site" the heat map shows

protected:
    void changeEvent(QEvent *event) override;

private:
    void fitAttentionHeight();
    void refresh(); // the heat map of the chosen site, layer and head
    void updateRanges();

    QLabel *m_probe = nullptr;
    QComboBox *m_site = nullptr;
    QLabel *m_siteLabel = nullptr;
    QSpinBox *m_layer = nullptr;
    QSpinBox *m_head = nullptr;
    AttentionView *m_attention = nullptr;
    ModelConfig m_shape;
    ProbeRun m_run;
    bool m_hasRun = false;
    std::string m_theme, m_colormap;
};

} // namespace atlas
