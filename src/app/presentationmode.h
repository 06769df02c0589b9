#pragma once

#include <QByteArray>
#include <QObject>
#include <QPalette>

#include <algorithm>
#include <utility>
#include <vector>

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
// fonts at projector size (projectorZoom), a high-contrast palette with light plots, a ring where the
// lecturer clicks, and the speaker notes on a second screen when there is one. Leaving restores the window, the
// zoom, the palette and the plots' theme as they were.
class PresentationMode : public QObject
{
    Q_OBJECT

public:
    // A projector's picture is as large on the wall whatever its resolution, so text keeps its share of the picture's
    // height: 1.5 times the desktop's size on 1080 lines, 1.0 on 720, 2.0 on 1440, 3.0 on 2160; never smaller than
    // the desktop's own. (At 1.5 on 720 lines the Mask view's three panels and most two-panel views did not fit.)
    static constexpr double kZoomAt1080Lines = 1.5;
    static double projectorZoom(int screenHeight) { return std::max(1.0, kZoomAt1080Lines * screenHeight / 1080.0); }
    // For a large room, the text a size or two larger still (Lessons ▸ Presentation Text): 1, 1.25 or 1.5 times
    // projectorZoom, kept in the settings. Ctrl+= and Ctrl+− go on zooming while presenting.
    static const std::vector<std::pair<double, const char *>> &textScales();
    static double textScale();
    static void setTextScale(double scale);

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
