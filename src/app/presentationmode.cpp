#include "presentationmode.h"

#include "dialogs/speakernoteswindow.h"
#include "panels/lessonpanel.h"
#include "pointerhighlight.h"
#include "session/lessonplayer.h"
#include "session/session.h"
#include "style/theme.h"
#include "viewnavigator.h"
#include "zoomcontroller.h"

#include <QApplication>
#include <QDockWidget>
#include <QMainWindow>
#include <QMenuBar>
#include <QScreen>
#include <QSettings>
#include <QStatusBar>
#include <QToolBar>

#include <algorithm>
#include <cmath>

namespace atlas {

PresentationMode::PresentationMode(QMainWindow *window, QDockWidget *lessonDock, LessonPanel *panel,
    LessonPlayer *player, Session *session, ZoomController *zoom, ViewNavigator *navigator)
    : QObject(window)
    , m_window(window)
    , m_lessonDock(lessonDock)
    , m_panel(panel)
    , m_player(player)
    , m_session(session)
    , m_zoom(zoom)
    , m_navigator(navigator)
    , m_pointer(new PointerHighlight(window))
{
}

const std::vector<std::pair<double, const char *>> &PresentationMode::textScales()
{
    static const std::vector<std::pair<double, const char *>> scales = {{1.0, QT_TR_NOOP("Projector Size")},
        {1.25, QT_TR_NOOP("Larger, for a Large Room")}, {1.5, QT_TR_NOOP("Largest, for a Lecture Hall")}};
    return scales;
}

double PresentationMode::textScale()
{
    const double scale = QSettings().value("presentation/textScale", 1.0).toDouble();
    for (const auto &[known, name] : textScales())
        if (std::abs(known - scale) < 1e-6)
            return known;
    return 1.0;
}

void PresentationMode::setTextScale(double scale)
{
    QSettings().setValue("presentation/textScale", scale);
}

PresentationMode::~PresentationMode()
{
    delete m_notes;
}

void PresentationMode::setActive(bool on)
{
    if (on == m_active)
        return;
    m_active = true; // through both changes of layout, so that the window keeps no zoom layout of them
    on ? enter() : leave();
    m_active = on;
    emit activeChanged(on);
}

void PresentationMode::enter()
{
    m_state = m_window->saveState();
    m_wasFullScreen = m_window->isFullScreen();
    m_zoomBefore = m_zoom->zoom();
    m_paletteBefore = QApplication::palette();
    m_themeBefore = m_session->spec().theme;

    for (QDockWidget *dock : m_window->findChildren<QDockWidget *>())
        dock->setVisible(dock == m_lessonDock);
    for (QToolBar *bar : m_window->findChildren<QToolBar *>())
        bar->hide();
    m_window->menuBar()->hide();
    m_window->statusBar()->hide();
    applyHighContrastTheme();
    ViewSpec spec = m_session->spec();
    spec.theme = "light";
    m_session->setSpec(spec);
    m_zoom->setZoom(std::max(m_zoomBefore, projectorZoom(m_window->screen()->geometry().height()) * textScale()));
    m_panel->setPresenting(true);
    m_navigator->setTabsVisible(false);
    m_window->showFullScreen();
    m_window->resizeDocks({m_lessonDock}, {m_window->width() * 3 / 10}, Qt::Horizontal);
    m_pointer->setEnabled(true);

    const QList<QScreen *> screens = QGuiApplication::screens();
    QScreen *here = m_window->screen();
    const auto other = std::find_if(screens.begin(), screens.end(), [here](QScreen *s) { return s != here; });
    if (other != screens.end()) {
        if (!m_notes)
            m_notes = new SpeakerNotesWindow(m_player);
        m_notes->setGeometry((*other)->availableGeometry());
        m_notes->show();
        m_notes->start();
    }
}

void PresentationMode::leave()
{
    m_pointer->setEnabled(false);
    if (m_notes)
        m_notes->hide();
    m_panel->setPresenting(false);
    m_navigator->setTabsVisible(true);
    QApplication::setPalette(m_paletteBefore);
    ViewSpec spec = m_session->spec();
    spec.theme = m_themeBefore;
    m_session->setSpec(spec);
    m_zoom->setZoom(m_zoomBefore);
    if (!m_wasFullScreen)
        m_window->showNormal();
    m_window->menuBar()->show();
    m_window->statusBar()->show();
    restoreStateAfterRelayout(m_window, m_state);
}

} // namespace atlas
