#include "dialogs/speakernoteswindow.h"

#include "session/lessonplayer.h"

#include <QLabel>
#include <QTextBrowser>
#include <QVBoxLayout>

namespace atlas {

SpeakerNotesWindow::SpeakerNotesWindow(LessonPlayer *player, QWidget *parent)
    : QWidget(parent, Qt::Window)
    , m_player(player)
{
    setWindowTitle(tr("Speaker notes"));
    m_header = new QLabel(this);
    m_header->setWordWrap(true);
    m_notes = new QTextBrowser(this);
    m_nextStep = new QLabel(this);
    m_nextStep->setWordWrap(true);
    m_clock = new QLabel(this);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_header);
    layout->addWidget(m_notes, 1);
    layout->addWidget(m_nextStep);
    layout->addWidget(m_clock, 0, Qt::AlignRight);
    connect(m_player, &LessonPlayer::stepChanged, this, &SpeakerNotesWindow::showStep);
    connect(m_player, &LessonPlayer::lessonChanged, this, &SpeakerNotesWindow::showStep);
    m_tick.setInterval(1000);
    connect(&m_tick, &QTimer::timeout, this, [this] {
        const qint64 s = m_elapsed.elapsed() / 1000;
        m_clock->setText(tr("%1:%2 since the start").arg(s / 60).arg(s % 60, 2, 10, QChar('0')));
    });
}

void SpeakerNotesWindow::start()
{
    m_elapsed.start();
    m_tick.start();
    showStep();
}

QString SpeakerNotesWindow::notesText() const
{
    return m_notes->toPlainText();
}

void SpeakerNotesWindow::showStep()
{
    if (!m_player->isOpen()) {
        m_header->clear();
        m_notes->clear();
        m_nextStep->clear();
        return;
    }
    const LessonStep &step = m_player->currentStep();
    const int index = m_player->stepIndex();
    m_header->setText(QStringLiteral("<h2>%1 / %2 · %3</h2>")
                          .arg(index + 1)
                          .arg(m_player->stepCount())
                          .arg(QString::fromStdString(step.title).toHtmlEscaped()));
    m_notes->setMarkdown(step.notes.empty() ? tr("*(no notes for this step)*") : QString::fromStdString(step.notes));
    m_nextStep->setText(index + 1 < m_player->stepCount()
            ? tr("Next: %1")
                  .arg(QString::fromStdString(m_player->lesson().steps[size_t(index + 1)].title).toHtmlEscaped())
            : tr("Last step"));
}

} // namespace atlas
