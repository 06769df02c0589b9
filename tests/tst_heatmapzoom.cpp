// The window of cells a heat map shows (views/heatmapzoom.h): zoom about a cell, a drag, the keys, and what a new
// matrix does to it; and the plot taking the keys when it has the focus, before the window's shortcuts.
#include "testbundle.h"
#include "views/heatmapplot.h"
#include "views/heatmapzoom.h"

#include <QApplication>
#include <QKeyEvent>
#include <QShortcut>
#include <QSignalSpy>
#include <QTest>

#include <vector>

using namespace atlas;

namespace {

QKeyEvent key(int k, Qt::KeyboardModifiers modifiers = {})
{
    return QKeyEvent(QEvent::KeyPress, k, modifiers);
}

} // namespace

class TestHeatmapZoom : public QObject
{
    Q_OBJECT

private slots:
    void zoomKeepsTheCellInPlaceAndStaysInTheMatrix()
    {
        HeatmapZoom zoom;
        zoom.setMatrixSize(200, 300);
        QVERIFY(!zoom.zoomed());
        QVERIFY(zoom.zoomAround(100, 150, 0.5));
        QCOMPARE(zoom.window(), (CellWindow {50, 100, 75, 150}));
        QVERIFY(zoom.zoomAround(0, 0, 0.01)); // at least 4 × 4, inside the matrix
        QCOMPARE(zoom.window().rows, 4);
        QCOMPARE(zoom.window().cols, 4);
        QVERIFY(zoom.window().row0 >= 0 && zoom.window().col0 >= 0);
        QVERIFY(zoom.zoomAround(0, 0, 1000)); // out: at most the matrix
        QVERIFY(!zoom.zoomed());
        QVERIFY(!zoom.zoomAround(0, 0, 2)); // nothing changed
        // a drag moves the window against the pointer, and stops at the edges
        zoom.setWindow({50, 100, 75, 150});
        zoom.startDrag();
        QVERIFY(zoom.dragBy(10, -20));
        QCOMPARE(zoom.window(), (CellWindow {40, 100, 95, 150}));
        QVERIFY(zoom.dragBy(-1000, 0));
        QCOMPARE(zoom.window().row0, 100);
        zoom.endDrag();
        QVERIFY(!zoom.dragging() && !zoom.dragBy(5, 5));
        // another matrix of the same size keeps the window, another size shows all of itself
        const CellWindow kept = zoom.window();
        zoom.setMatrixSize(200, 300);
        QCOMPARE(zoom.window(), kept);
        zoom.setMatrixSize(100, 300);
        QVERIFY(!zoom.zoomed());
    }

    void theKeysZoomMoveAndShowAll()
    {
        HeatmapZoom zoom;
        zoom.setMatrixSize(200, 300);
        QVERIFY(!zoom.takesKey(key(Qt::Key_Right))); // the arrows move a zoomed window only
        QVERIFY(!zoom.takesKey(key(Qt::Key_Equal, Qt::ControlModifier))); // the window's font zoom
        QVERIFY(!zoom.takesKey(key(Qt::Key_Home))); // the window's Rewind
        QVERIFY(zoom.press(key(Qt::Key_Plus)));
        QCOMPARE(zoom.window(), (CellWindow {20, 160, 30, 240}));
        QVERIFY(zoom.takesKey(key(Qt::Key_Right)));
        QVERIFY(zoom.press(key(Qt::Key_Right)));
        QCOMPARE(zoom.window().col0, 30 + 24);
        QVERIFY(zoom.press(key(Qt::Key_Up)));
        QCOMPARE(zoom.window().row0, 20 - 16);
        QVERIFY(zoom.press(key(Qt::Key_Plus)));
        QVERIFY(zoom.press(key(Qt::Key_Minus)));
        QCOMPARE(zoom.window().rows, 160);
        QVERIFY(zoom.press(key(Qt::Key_0)));
        QVERIFY(!zoom.zoomed());
        QVERIFY(!zoom.press(key(Qt::Key_0)));
    }

    // A clicked plot zooms with the keys, and its arrows win over a window shortcut on the same key (the lessons'
    // next step) while it is zoomed; not zoomed, the shortcut has them.
    void aFocusedPlotTakesTheKeysBeforeTheShortcuts()
    {
        QWidget window;
        auto *plot = new HeatmapPlot(&window);
        plot->resize(400, 300);
        auto *next = new QShortcut(QKeySequence(Qt::Key_Right), &window);
        QSignalSpy fired(next, &QShortcut::activated);
        std::vector<float> m(size_t(200) * 300, 1.0f);
        plot->setMatrix(m.data(), 200, 300);
        window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&window));
        plot->setFocus();
        QTRY_VERIFY(plot->hasFocus());
        QTest::keyClick(plot, Qt::Key_Right);
        QCOMPARE(fired.count(), 1);
        QTest::keyClick(plot, Qt::Key_Plus);
        QVERIFY(plot->zoomed());
        const int col0 = plot->cellWindow().col0;
        QTest::keyClick(plot, Qt::Key_Right);
        QCOMPARE(fired.count(), 1);
        QVERIFY(plot->cellWindow().col0 > col0);
        QTest::keyClick(plot, Qt::Key_0);
        QVERIFY(!plot->zoomed());
    }
};

QTEST_MAIN(TestHeatmapZoom)
#include "tst_heatmapzoom.moc"
