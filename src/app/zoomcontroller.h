#pragma once

#include <QByteArray>
#include <QObject>

#include <vector>

class QMainWindow;

namespace atlas {

// The app's zoom (Ctrl+=, Ctrl+−, Ctrl+0): one factor that scales every font of the window and of the plots
// together. It scales the application font; every widget's font follows, and views size their text from their
// font (views/viewfonts.h), so plots, ticks and titles grow with the menus. Kept in the settings.
class ZoomController : public QObject
{
    Q_OBJECT

public:
    // The application font's size now is 100 %; the saved zoom is applied at once.
    explicit ZoomController(QObject *parent = nullptr);

    static const std::vector<double> &levels(); // 0.5 … 3.0
    double zoom() const { return m_zoom; }
    void setZoom(double zoom); // the nearest level; applies and saves it
    void zoomIn();
    void zoomOut();
    void reset();

signals:
    void zoomAboutToChange(double zoom); // the zoom now, before the fonts change
    void zoomChanged(double zoom);

private:
    void apply();

    double m_basePoints;
    double m_zoom = 1.0;
};

// Restores `state` (QMainWindow::saveState) once the widgets have laid themselves out for the fonts just set: restored
// at once, each dock would keep the width its larger font's minimum asked for.
void restoreStateAfterRelayout(QMainWindow *window, const QByteArray &state);

} // namespace atlas
