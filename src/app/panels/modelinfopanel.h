#pragma once

#include <QString>
#include <QWidget>

class QLabel;

namespace atlas {

class Session;
struct ModelConfig;

// Its layers and heads in a phrase for the status line: "4 layers × 4 heads"; an FNet model's blocks that mix by a
// Fourier transform have none.
QString modelShapeText(const ModelConfig &c);

// The model on screen, whole: its name, what it is and what to look at (its description, wrapped, never cut),
// its shape and options, and the sample input the model menu opens it with.
class ModelInfoPanel : public QWidget
{
    Q_OBJECT

public:
    explicit ModelInfoPanel(Session *session, QWidget *parent = nullptr);

    QString text() const; // what the panel shows, as plain text

private:
    void showModel();

    Session *m_session;
    QLabel *m_label;
};

} // namespace atlas
