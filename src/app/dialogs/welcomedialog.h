#pragma once

#include <QDialog>

class QPushButton;

namespace atlas {

// The first launch's welcome: what the window shows, and three ways on (the first lesson, a model of one's own,
// or exploring). Whatever is chosen, it does not come back (Help ▸ Welcome shows it again).
class WelcomeDialog : public QDialog
{
    Q_OBJECT

public:
    explicit WelcomeDialog(const QString &modelName, QWidget *parent = nullptr);

    QPushButton *lessonButton() const { return m_lesson; }
    QPushButton *openButton() const { return m_open; }
    QPushButton *exploreButton() const { return m_explore; }

signals:
    void lessonChosen();
    void openChosen();

private:
    QPushButton *m_lesson, *m_open, *m_explore;
};

} // namespace atlas
