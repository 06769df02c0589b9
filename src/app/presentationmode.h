#pragma once

#include <QByteArray>
#include <QObject>
#include <QPalette>

class QDockWidget;
class QMainWindow;

namespace atlas {

class LessonPanel;
class LessonPlayer;
class PointerHighlight;
class Session;
class ViewNavigator;
class SpeakerNotesWindow;
class ZoomController;

// Presentation mode (F5; Esc or F5 leaves): the window full screen with only the view and the lesson's step text,
// fonts at projector size (at least kProjectorZoom), a high-contrast palette with light plots, a ring where the
// lecturer clicks, and the speaker notes on a second screen when there is one. Leaving restores the window, the
// zoom, the palette and the plots' theme as they were.
class PresentationMode : public QObject
{
    Q_OBJECT

public:
    static constexpr double kProjectorZoom = 1.5;

    PresentationMode(QMainWindow *window, QDockWidget *lessonDock, LessonPanel *panel, LessonPlayer *player,
        Session *session, ZoomController *zoom, ViewNavigator *navigator);
    ~PresentationMode() override;

    bool isActive() const { return m_active; }
    void setActive(bool on);
    SpeakerNotesWindow *notesWindow() const { return m_notes; }
    PointerHighlight *pointer() const { return m_pointer; }

signals:
    void activeChanged(bool active);

private:
    void enter();
    void leave();

    QMainWindow *m_window;
    QDockWidget *m_lessonDock;
    LessonPanel *m_panel;
    LessonPlayer *m_player;
    Session *m_session;
    ZoomController *m_zoom;
    ViewNavigator *m_navigator;
    PointerHighlight *m_pointer;
    SpeakerNotesWindow *m_notes = nullptr;
    bool m_active = false;
    // What leaving restores.
    QByteArray m_state;
    bool m_wasFullScreen = false;
    double m_zoomBefore = 1.0;
    QPalette m_paletteBefore;
    std::string m_themeBefore;
};

} // namespace atlas
