// The heat map widget the attention views draw with (src/app/views/heatmapplot.h): its numbers at every scale,
// pooling a large matrix to the pixels by means (whole, or a window of it), zooming and panning, and the colour maps'
// ends.
#include "heatmaptesting.h"
#include "testbundle.h"
#include "views/colormaps.h"
#include "views/downsample.h"
#include "views/heatmapplot.h"

#include <qcustomplot.h>

#include <QApplication>
#include <QMouseEvent>
#include <QTest>
#include <QWheelEvent>

#include <cmath>

using namespace atlas;
using namespace atlas::testing;

class TestHeatmapPlot : public QObject
{
    Q_OBJECT

private slots:
    void numbersReadAtEveryScale();
    void downsampleMeans();
    void downsampleKeepsSmallMatrices();
    void downsampleOfAWindow();
    void heatmapZoomsAndPans();
    void colormapsHaveMatplotlibEnds();
};

// Powers of ten from the decimal conversion: a subnormal (a temperature of 5e-324) read 'inf×10⁻³²³' when the
// mantissa was found by dividing by 10^exponent (issue 27).
void TestHeatmapPlot::numbersReadAtEveryScale()
{
    QCOMPARE(formatNumber(5e-324), QString::fromUtf8("4.941×10⁻³²⁴"));
    QCOMPARE(formatNumber(123456), QString::fromUtf8("1.235×10⁵"));
    QCOMPARE(formatNumber(-0.000123), QString::fromUtf8("−1.23×10⁻⁴"));
    QCOMPARE(formatNumber(999999), QString::fromUtf8("1×10⁶")); // rounds up into the next power
    QCOMPARE(formatNumber(0.5), QStringLiteral("0.5"));
}

void TestHeatmapPlot::downsampleMeans()
{
    // 4x4 -> 2x2 blocks of 2x2.
    const float m[16] = {1, 2, 10, 20, //
        3, 4, 30, 40, //
        kNegInf, kNegInf, 5, kNegInf, //
        kNegInf, kNegInf, kNegInf, 7};
    const Pooled p = downsample(m, 4, 4, 2, 2);
    QCOMPARE(p.rows, 2);
    QCOMPARE(p.cols, 2);
    QCOMPARE(p.blockRows, 2);
    QCOMPARE(p.blockCols, 2);
    QCOMPARE(p.at(0, 0), 2.5f);
    QCOMPARE(p.at(0, 1), 25.0f);
    QVERIFY(std::isinf(p.at(1, 0)) && p.at(1, 0) < 0); // every cell −∞: stays −∞
    QCOMPARE(p.at(1, 1), 6.0f); // −∞ cells are left out of the mean
    QVERIFY(p.hasNegInf);
    QCOMPARE(p.minFinite, 2.5f);
    QCOMPARE(p.maxFinite, 25.0f);
    QCOMPARE(p.minPositive, 2.5f);

    // 5 columns into at most 2: blocks of 3, the last one partial (columns 3 and 4).
    const float r[5] = {1, 2, 3, 10, 20};
    const Pooled q = downsample(r, 1, 5, 1, 2);
    QCOMPARE(q.cols, 2);
    QCOMPARE(q.blockCols, 3);
    QCOMPARE(q.at(0, 0), 2.0f);
    QCOMPARE(q.at(0, 1), 15.0f);
}

void TestHeatmapPlot::downsampleKeepsSmallMatrices()
{
    std::vector<float> m(6 * 7);
    for (size_t i = 0; i < m.size(); ++i)
        m[i] = static_cast<float>(i) * 0.5f;
    const Pooled p = downsample(m.data(), 6, 7, 64, 64);
    QCOMPARE(p.rows, 6);
    QCOMPARE(p.cols, 7);
    QCOMPARE(p.blockRows, 1);
    QVERIFY(p.values == m);
    QVERIFY(!p.hasNegInf);
    QCOMPARE(p.minPositive, 0.5f); // cell 0 is 0: not positive
}

// A window of the matrix pools only its cells, its blocks counted from its first row and column; a window that does
// not fit is moved and cut to fit.
void TestHeatmapPlot::downsampleOfAWindow()
{
    std::vector<float> m(10 * 12);
    for (size_t i = 0; i < m.size(); ++i)
        m[i] = static_cast<float>(i);
    const Pooled p = downsample(m.data(), 10, 12, {3, 5, 4, 6}, 3, 2);
    QCOMPARE(p.row0, 3);
    QCOMPARE(p.col0, 4);
    QCOMPARE(p.blockRows, 2); // 5 rows into at most 3
    QCOMPARE(p.blockCols, 3); // 6 columns into 2
    QCOMPARE(p.rows, 3);
    QCOMPARE(p.cols, 2);
    // rows 3–4 × columns 4–6: the mean of 40, 41, 42, 52, 53, 54
    QCOMPARE(p.at(0, 0), 47.0f);
    QCOMPARE(p.at(2, 1), float(7 * 12 + 8)); // row 7 alone (the partial last block) × columns 7–9: mean at 8
    QCOMPARE((CellWindow {8, 5, -2, 30}.within(10, 12)), (CellWindow {5, 5, 0, 12}));
    QCOMPARE((CellWindow {}.within(10, 12)), (CellWindow {0, 10, 0, 12}));
}

// The wheel zooms into the cell under the pointer (it stays there), a drag moves the window, a double-click shows
// the whole matrix again; the picture is the window's, and a new matrix of the same size keeps the window.
void TestHeatmapPlot::heatmapZoomsAndPans()
{
    std::vector<float> m(200 * 300);
    for (size_t i = 0; i < m.size(); ++i)
        m[i] = static_cast<float>(i % 300) + 1000.0f * static_cast<float>(i / 300);
    HeatmapPlot plot;
    plot.resize(500, 400);
    plot.setMatrix(m.data(), 200, 300);
    plot.replot(QCustomPlot::rpImmediateRefresh);
    QVERIFY(!plot.zoomed());
    const QPointF at = plot.cellCenter(120, 90);
    QWheelEvent in(at, plot.mapToGlobal(at), {}, {0, 3 * 120}, Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(&plot, &in);
    QVERIFY(plot.zoomed());
    const CellWindow w = plot.cellWindow();
    QCOMPARE(w.rows, int(std::lround(200 * 0.512)));
    QCOMPARE(w.cols, int(std::lround(300 * 0.512)));
    // The cell keeps its place in the window: 60 % of the way down, 30 % across (the note the zoom adds under the
    // plot moves the window's pixels, not its cells).
    QVERIFY2(std::abs(w.row0 - (120 - 0.6 * w.rows)) <= 1 && std::abs(w.col0 - (90 - 0.3 * w.cols)) <= 1,
        qPrintable(QString("a window from (%1, %2)").arg(w.row0).arg(w.col0)));
    QVERIFY(plot.cellWindow().row0 > 0);
    // The picture is the window's, pooled from its own first cell.
    const Pooled &p = plot.pooled();
    QCOMPARE(p.row0, w.row0);
    QCOMPARE(p.col0, w.col0);
    QCOMPARE(plot.displayedValue(w.row0, w.col0), double(downsample(m.data(), 200, 300, w, 400, 500).at(0, 0)));
    QVERIFY(std::isnan(plot.displayedValue(w.row0 - 1, w.col0)));
    // A drag to the right by a tenth of the plot moves the window left by a tenth of its columns.
    const QRect r = plot.axisRect()->rect();
    const QPointF from = r.center(), to = from + QPointF(r.width() / 10.0, 0);
    QMouseEvent press(QEvent::MouseButtonPress, from, plot.mapToGlobal(from), Qt::LeftButton, Qt::LeftButton, {});
    QMouseEvent move(QEvent::MouseMove, to, plot.mapToGlobal(to), Qt::NoButton, Qt::LeftButton, {});
    QMouseEvent release(QEvent::MouseButtonRelease, to, plot.mapToGlobal(to), Qt::LeftButton, Qt::NoButton, {});
    QApplication::sendEvent(&plot, &press);
    QApplication::sendEvent(&plot, &move);
    QApplication::sendEvent(&plot, &release);
    QVERIFY(std::abs(plot.cellWindow().col0 - (w.col0 - w.cols / 10)) <= 1);
    QCOMPARE(plot.cellWindow().row0, w.row0);
    // Another matrix of the same size (another head) keeps the window; one of another size shows all of itself.
    const CellWindow panned = plot.cellWindow();
    plot.setMatrix(m.data(), 200, 300);
    QCOMPARE(plot.cellWindow(), panned);
    plot.setMatrix(m.data(), 100, 300);
    QVERIFY(!plot.zoomed());
    plot.setMatrix(m.data(), 200, 300);
    plot.setCellWindow({10, 20, 30, 40});
    QVERIFY(plot.zoomed());
    QMouseEvent twice(QEvent::MouseButtonDblClick, at, plot.mapToGlobal(at), Qt::LeftButton, Qt::LeftButton, {});
    QApplication::sendEvent(&plot, &twice);
    QVERIFY(!plot.zoomed());
}

void TestHeatmapPlot::colormapsHaveMatplotlibEnds()
{
    QCPColorGradient viridis = colormap("viridis");
    QCOMPARE(QColor(viridis.color(0.0, QCPRange(0, 1))), QColor(0x44, 0x01, 0x54));
    QCOMPARE(QColor(viridis.color(1.0, QCPRange(0, 1))), QColor(0xfd, 0xe7, 0x25));
    QCOMPARE(QColor(colormap("magma").color(1.0, QCPRange(0, 1))), QColor(0xfc, 0xfd, 0xbf));
    QCOMPARE(QColor(colormap("cividis").color(0.0, QCPRange(0, 1))), QColor(0x00, 0x22, 0x4e));
    QCOMPARE(QColor(colormap("greys").color(0.0, QCPRange(0, 1))), QColor(Qt::white));
    // Viridis at 0.5 is matplotlib's #21918c (entry 128 of its table; within interpolation error).
    QVERIFY(colorDistance(viridis.color(0.5, QCPRange(0, 1)), qRgb(0x21, 0x91, 0x8c)) <= 6);
    QVERIFY_THROWS_EXCEPTION(Error, colormap("jet"));

    const ColorLut lut("magma");
    QCOMPARE(lut.map(0.0f), qRgb(0x00, 0x00, 0x04));
    QCOMPARE(lut.map(2.0f), qRgb(0xfc, 0xfd, 0xbf)); // clamped
    QCOMPARE(lut.map(std::nanf("")), lut.masked());
}

QTEST_MAIN(TestHeatmapPlot)
#include "tst_heatmapplot.moc"
