#pragma once

#include <QElapsedTimer>
#include <QTimer>
#include <QWidget>

class QLabel;
class QTextBrowser;

namespace atlas {

class LessonPlayer;

// The lecturer's screen during a presentation: the step counter, the step's speaker notes, the next step's title
// and the time since the presentation began. Shown on a second screen when there is one.
class SpeakerNotesWindow : public QWidget
{
    Q_OBJECT

public:
    explicit SpeakerNotesWindow(LessonPlayer *player, QWidget *parent = nullptr);

    void start(); // the clock starts, the current step is shown
    QString notesText() const;

private:
    void showStep();

    LessonPlayer *m_player;
    QLabel *m_header = nullptr;
    QTextBrowser *m_notes = nullptr;
    QLabel *m_nextStep = nullptr;
    QLabel *m_clock = nullptr;
    QElapsedTimer m_elapsed;
    QTimer m_tick;
};

} // namespace atlas
