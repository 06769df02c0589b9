// Widget tests of the heat-map views: attention, mask, heads grid, what they say when a tensor is missing, and export
// (the heat map widget itself: tst_heatmapplot).
#include "attentionmap/attentionview.h"
#include "heads/heads.h"
#include "heads/headsgridview.h"
#include "heatmaptesting.h"
#include "mask/maskview.h"
#include "testbundle.h"
#include "trace/trace.h"
#include "util/error.h"
#include "view/viewkinds.h"
#include "views/colormaps.h"
#include "views/downsample.h"
#include "views/headlessrender.h"
#include "views/heatmapplot.h"
#include "views/tokenchipstrip.h"
#include "views/viewexport.h"
#include "views/viewfactory.h"
#include "viewtesting.h"

#include <QAbstractButton>
#include <QAbstractSlider>
#include <QAbstractSpinBox>
#include <QApplication>
#include <QComboBox>
#include <QElapsedTimer>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QMouseEvent>
#include <QScrollBar>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <limits>

using namespace atlas;
using namespace atlas::testing;

namespace {

const QStringList kTokens = {"The", "cat", "sat", "on", "the", "mat"};

float probAt(const Trace &trace, int layer, int head, int row, int col)
{
    return trace.tensor("layer." + std::to_string(layer) + ".attn.probs").slice(head)(row, col);
}

// Saves a picture of `w` when ATLAS_VIEW_SNAPSHOTS names a directory (for looking at what the views draw).
void snapshot(QWidget *w, const QString &name)
{
    const QString dir = qEnvironmentVariable("ATLAS_VIEW_SNAPSHOTS");
    if (dir.isEmpty())
        return;
    for (const char *ext : {".png", ".svg", ".pdf"})
        exportView(w, dir + QLatin1Char('/') + name + QLatin1String(ext), w->size());
}

// Whether anything is drawn in a horizontal band through the middle of `w` (the centred message).
bool drawsInMiddle(QCustomPlot *plot)
{
    plot->replot(QCustomPlot::rpImmediateRefresh);
    const QImage image = plot->grab().toImage();
    const QRgb background = image.pixel(1, image.height() - 2);
    int differing = 0;
    for (int y = image.height() / 2 - 10; y < image.height() / 2 + 10; ++y)
        for (int x = 0; x < image.width(); ++x)
            differing += image.pixel(x, y) != background;
    return differing > 50;
}

} // namespace

class TestViews : public QObject
{
    Q_OBJECT

private slots:
    void everyDescriptorHasOneWidget();
    void attentionCellsAreProbabilities();
    void attentionYAxisReversedAndHover();
    void attentionLogScale();
    void maskViewMarksMinusInfinity();
    void heatmapDrawsMinusInfinityApart();
    void headsGridClickOpensHead();
    void headsGridTakesThePickedSizeWithTokenLabels();
    void missingTensorsSayNotComputed();
    void exportWritesPngSvgPdf();
    void exportRejectsUnknownExtension();
    void exportsCarryNoInterface();
    void headSwitchAt2048Tokens();
};

// One widget per view descriptor and no widget without one: a folder's registries (its kind() and makeView) must name
// the same kind.
void TestViews::everyDescriptorHasOneWidget()
{
    std::vector<std::string> described;
    for (const ViewKind &kind : viewKinds())
        described.push_back(kind.kind);
    std::sort(described.begin(), described.end());
    QCOMPARE(widgetKinds(), described);
}

void TestViews::attentionCellsAreProbabilities()
{
    auto trace = makeTrace(2, 3, 6);
    AttentionView view;
    view.resize(700, 600);
    view.setInput(makeInput(trace, 2, 3, kTokens));
    view.setSpec(makeSpec("attention", 1, 2));
    HeatmapPlot *plot = view.plot();
    QVERIFY(!plot->showingMessage());
    QCOMPARE(plot->colorMap()->data()->keySize(), 6);
    QCOMPARE(plot->colorMap()->data()->valueSize(), 6);
    // Allowed cells are the probabilities; masked ones (−∞ in attn.masked, above the diagonal) are drawn in the
    // masked style (NaN in the colour map: grey and hatched), never as a probability of 0.
    auto verifyCells = [&](int head) {
        for (int r = 0; r < 6; ++r)
            for (int c = 0; c < 6; ++c) {
                if (c > r)
                    QVERIFY(std::isnan(plot->colorMap()->data()->cell(c, r)));
                else
                    QCOMPARE(plot->colorMap()->data()->cell(c, r), double(probAt(*trace, 1, head, r, c)));
            }
    };
    verifyCells(2);
    QVERIFY(plot->pooled().hasNegInf);
    QCOMPARE(plot->displayedValue(4, 2), double(probAt(*trace, 1, 2, 4, 2)));

    const double before = plot->colorMap()->data()->cell(1, 3);
    view.setSpec(makeSpec("attention", 1, 0));
    QVERIFY(plot->colorMap()->data()->cell(1, 3) != before);
    verifyCells(0);
    QCOMPARE(plot->colorMap()->dataRange().upper, double(plot->pooled().maxFinite));
    snapshot(&view, "attention");
    ViewSpec dark = makeSpec("attention", 1, 0);
    dark.theme = "dark";
    dark.colormap = "magma";
    view.setSpec(dark);
    plot->replot(QCustomPlot::rpImmediateRefresh);
    QCOMPARE(QColor(plot->grab().toImage().pixel(2, 2)), QColor(0x1e, 0x1f, 0x22));
    snapshot(&view, "attention-dark");
}

void TestViews::attentionYAxisReversedAndHover()
{
    auto trace = makeTrace(2, 3, 6);
    AttentionView view;
    view.resize(700, 600);
    view.setInput(makeInput(trace, 2, 3, kTokens));
    view.setSpec(makeSpec("attention", 0, 1));
    HeatmapPlot *plot = view.plot();
    plot->replot(QCustomPlot::rpImmediateRefresh);
    QVERIFY(plot->yAxis->rangeReversed());
    QVERIFY(plot->cellCenter(0, 0).y() < plot->cellCenter(5, 0).y()); // the first query on top
    QVERIFY(plot->cellCenter(0, 0).x() < plot->cellCenter(0, 5).x());
    for (int r = 0; r < 6; ++r) {
        for (int c = 0; c < 6; ++c) {
            const HeatmapPlot::Cell cell = plot->cellAt(plot->cellCenter(r, c));
            QCOMPARE(cell.row, r);
            QCOMPARE(cell.col, c);
        }
    }
    const QString text = plot->hoverTextAt(plot->cellCenter(3, 1));
    QVERIFY2(text.contains(QStringLiteral("query 'on' (#3)")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("key 'cat' (#1)")), qPrintable(text));
    const float prob = probAt(*trace, 0, 1, 3, 1);
    const float score = trace->tensor("layer.0.attn.scores").slice(1)(3, 1);
    QVERIFY2(text.contains(QStringLiteral("probability %1").arg(QString::number(prob, 'g', 4))), qPrintable(text));
    // Numbers are printed with a real minus sign (U+2212), four significant digits.
    const QString scoreText = QString::number(score, 'g', 4).replace('-', QChar(0x2212));
    QVERIFY2(text.contains(QStringLiteral("score %1").arg(scoreText)), qPrintable(text));
    QVERIFY(plot->hoverTextAt(QPointF(2, 2)).isEmpty()); // outside the map
    const QString masked = plot->hoverTextAt(plot->cellCenter(1, 3));
    QVERIFY2(masked.contains(QStringLiteral("masked (\u2212\u221E before softmax)")), qPrintable(masked));
    QVERIFY(!masked.contains("probability"));
    // The x tick labels are the tokens.
    auto ticker = plot->xAxis->ticker().dynamicCast<QCPAxisTickerText>();
    QVERIFY(ticker);
    QCOMPARE(ticker->ticks().value(4), QStringLiteral("the"));
}

void TestViews::attentionLogScale()
{
    auto trace = makeTrace(1, 1, 6);
    AttentionView view;
    view.resize(600, 500);
    view.setInput(makeInput(trace, 1, 1, kTokens));
    ViewSpec spec = makeSpec("attention", 0, 0);
    spec.scale = "log";
    view.setSpec(spec);
    HeatmapPlot *plot = view.plot();
    QCOMPARE(plot->colorScale()->dataScaleType(), QCPAxis::stLogarithmic);
    QVERIFY(plot->colorMap()->dataRange().lower > 0.0);
    // A masked cell is drawn in the masked style in log scale too, never as log(0).
    QVERIFY(std::isnan(plot->displayedValue(0, 5)));
    QCOMPARE(plot->displayedValue(5, 0), double(probAt(*trace, 0, 0, 5, 0)));
}

void TestViews::maskViewMarksMinusInfinity()
{
    auto trace = makeTrace(2, 3, 6);
    MaskView view;
    view.resize(1500, 560);
    view.setInput(makeInput(trace, 2, 3, kTokens));
    view.setSpec(makeSpec("mask", 1, 1));
    HeatmapPlot *mask = view.maskPlot();
    QVERIFY(mask->maskMode());
    QVERIFY(std::isnan(mask->displayedValue(1, 4))); // key after the query: −∞
    QVERIFY(!std::isnan(mask->displayedValue(4, 1)));
    QCOMPARE(view.scoresPlot()->displayedValue(1, 4), double(trace->tensor("layer.1.attn.scores").slice(1)(1, 4)));
    // The probabilities draw the hidden key in the masked style, as the Attention view does, not as a probability of 0.
    QVERIFY(std::isnan(view.probsPlot()->displayedValue(1, 4)));
    QCOMPARE(view.probsPlot()->displayedValue(4, 1), double(probAt(*trace, 1, 1, 4, 1)));
    QVERIFY(view.caption()->text().contains(QStringLiteral("softmax")));
    QVERIFY(mask->hoverTextAt(QPointF()).isEmpty());

    // Drawn: a masked cell and an allowed one differ clearly, and every masked cell looks alike.
    mask->replot(QCustomPlot::rpImmediateRefresh);
    const QImage image = mask->grab().toImage();
    auto pixel = [&](int r, int c) { return image.pixel(mask->cellCenter(r, c).toPoint()); };
    QVERIFY(colorDistance(pixel(1, 4), pixel(4, 1)) > 150);
    QVERIFY(colorDistance(pixel(4, 1), pixel(5, 0)) < 10); // allowed cells share one colour
    const QString text = mask->hoverTextAt(mask->cellCenter(1, 4));
    QVERIFY2(text.contains(QStringLiteral("not allowed")) && text.contains(QStringLiteral("future")), qPrintable(text));
    snapshot(&view, "mask");
    ViewSpec dark = makeSpec("mask", 1, 1);
    dark.theme = "dark";
    dark.colormap = "cividis";
    view.setSpec(dark);
    QVERIFY(std::isnan(view.maskPlot()->displayedValue(1, 4)));
    snapshot(&view, "mask-dark");
}

void TestViews::heatmapDrawsMinusInfinityApart()
{
    auto trace = makeTrace(1, 1, 6);
    const Tensor &masked = trace->tensor("layer.0.attn.masked");
    for (const std::string &map : colormapNames()) {
        HeatmapPlot plot;
        plot.resize(600, 520);
        plot.setColormap(map);
        plot.setTitle(QStringLiteral("S\u2032 with the causal mask (%1)").arg(QString::fromStdString(map)));
        plot.setLabels(kTokens, kTokens);
        plot.setMatrix(masked.data(), 6, 6, trace);
        QVERIFY(std::isnan(plot.displayedValue(0, 3)));
        QCOMPARE(plot.displayedValue(3, 0), double(masked.slice(0)(3, 0)));
        plot.replot(QCustomPlot::rpImmediateRefresh);
        const QImage image = plot.grab().toImage();
        // The −∞ cell is far from both ends of the colour map (and so from any value's colour).
        const QRgb inf = image.pixel(plot.cellCenter(0, 5).toPoint());
        const QCPColorGradient gradient = colormap(map);
        for (double t : {0.0, 0.25, 0.5, 0.75, 1.0})
            QVERIFY2(colorDistance(inf, QCPColorGradient(gradient).color(t, QCPRange(0, 1))) > 60, map.c_str());
        if (map == "viridis")
            snapshot(&plot, "heatmap-neginf");
    }
}

void TestViews::headsGridClickOpensHead()
{
    auto trace = makeTrace(2, 3, 6);
    HeadsGridView view;
    view.resize(600, 420);
    view.setInput(makeInput(trace, 2, 3, kTokens));
    view.setSpec(makeSpec("heads", 0, 1));
    QCOMPARE(view.layerCount(), 2);
    QCOMPARE(view.headCount(), 3);
    QVERIFY(view.message().isEmpty());
    QVERIFY(!view.thumbnail(1, 2).isNull());
    QCOMPARE(view.thumbnail(1, 2).size(), QSize(6, 6));
    // Thumbnail pixels follow the probabilities: the diagonal start (0,0) = 1 is the brightest (viridis top).
    QCOMPARE(view.thumbnail(1, 2).pixel(0, 0), ColorLut("viridis").map(1.0f));
    QCOMPARE(view.thumbnail(1, 2).pixel(5, 0), ColorLut("viridis").masked()); // masked, not a probability of 0
    // Hovering a thumbnail names the head and the cell under the pointer, with its value.
    const QRect thumb = view.thumbnailRect(1, 2);
    const QString allowed
        = view.toolTipAt(thumb.topLeft() + QPoint(thumb.width() * 4 / 6 + 1, thumb.height() * 5 / 6 + 1));
    QVERIFY2(allowed.contains("Layer 1 · Head 2") && allowed.contains("query 'mat' (#5)")
            && allowed.contains("key 'the' (#4)")
            && allowed.contains(QStringLiteral("probability %1").arg(formatNumber(probAt(*trace, 1, 2, 5, 4)))),
        qPrintable(allowed));
    const QString masked = view.toolTipAt(thumb.topLeft() + QPoint(thumb.width() * 5 / 6 + 1, 1));
    QVERIFY2(masked.contains(QStringLiteral("masked (\u2212\u221E before softmax)")), qPrintable(masked));
    QVERIFY(view.toolTipAt(QPoint(1, 1)).isEmpty());

    QSignalSpy spy(&view, &View::specEdited);
    const QRect rect = view.thumbnailRect(1, 2);
    QVERIFY(!rect.isEmpty());
    QTest::mouseClick(&view, Qt::LeftButton, {}, rect.center());
    QCOMPARE(spy.count(), 1);
    const auto spec = spy.at(0).at(0).value<ViewSpec>();
    QCOMPARE(spec.view, std::string("attention"));
    QCOMPARE(spec.layer, 1);
    QCOMPARE(spec.head, 2);
    QTest::mouseClick(&view, Qt::LeftButton, {}, QPoint(2, 2)); // not on a thumbnail
    QCOMPARE(spy.count(), 1);
    snapshot(&view, "heads");
}

// A labelled model view: thumbnails at the size the user picks, token labels once a token's row fits text, the
// view asking for the room (its scroll area scrolls), and a click on the current head opening it too.
void TestViews::headsGridTakesThePickedSizeWithTokenLabels()
{
    auto trace = makeTrace(2, 3, 6);
    HeadsGridView view;
    view.resize(600, 420);
    view.setInput(makeInput(trace, 2, 3, kTokens));
    ViewSpec spec = makeSpec("heads", 0, 1);
    spec.set(views::heads::kThumbnailSize, 240);
    view.setSpec(spec);
    QCOMPARE(view.thumbnailRect(1, 2).size(), QSize(240, 240));
    QVERIFY(view.tokenLabelsShown());
    QVERIFY(view.minimumSizeHint().width() > 3 * 240 && view.minimumSizeHint().height() > 2 * 240);
    QVERIFY(view.thumbnailRect(0, 1).left() > view.thumbnailRect(0, 0).right() + 20); // room for the query labels
    spec.set(views::heads::kThumbnailSize, 48); // 6 tokens in 48 px: rows of 8 px, too small for text
    view.setSpec(spec);
    QVERIFY(!view.tokenLabelsShown());
    QSignalSpy spy(&view, &View::specEdited);
    QTest::mouseClick(&view, Qt::LeftButton, {}, view.thumbnailRect(0, 1).center()); // the spec's own head
    QCOMPARE(spy.count(), 1);
    QCOMPARE(spy.last().at(0).value<ViewSpec>().view, std::string("attention"));
    auto *size = view.findChild<QComboBox *>();
    QVERIFY(size && view.interfaceWidgets().front() == size);
    size->setCurrentIndex(size->findData(360));
    emit size->activated(size->currentIndex());
    QCOMPARE(spy.last().at(0).value<ViewSpec>().get(views::heads::kThumbnailSize), 360);
    QCOMPARE(view.thumbnailRect(0, 0).width(), 360);
}

void TestViews::missingTensorsSayNotComputed()
{
    auto trace = makeTrace(2, 3, 6);
    trace->drop("layer.1.attn.probs");
    AttentionView attention;
    attention.resize(600, 500);
    attention.setInput(makeInput(trace, 2, 3, kTokens));
    attention.setSpec(makeSpec("attention", 1, 0));
    QVERIFY(attention.plot()->showingMessage());
    QVERIFY2(attention.plot()->message().startsWith(QStringLiteral("Not computed yet: step to softmax")),
        qPrintable(attention.plot()->message()));
    QVERIFY(attention.plot()->hoverTextAt(QPointF(300, 250)).isEmpty());
    QVERIFY(drawsInMiddle(attention.plot())); // the message is drawn, not just set
    snapshot(&attention, "attention-missing");
    attention.setSpec(makeSpec("attention", 0, 0)); // and back once it is there
    QVERIFY(!attention.plot()->showingMessage());

    auto noProbs = makeTrace(1, 2, 6, false);
    MaskView mask;
    mask.resize(1200, 500);
    mask.setInput(makeInput(noProbs, 1, 2, kTokens));
    mask.setSpec(makeSpec("mask", 0, 0));
    QVERIFY(!mask.scoresPlot()->showingMessage());
    QVERIFY(!mask.maskPlot()->showingMessage());
    QVERIFY(mask.probsPlot()->message().startsWith(QStringLiteral("Not computed yet: step to softmax")));
    snapshot(&mask, "mask-partial");

    HeadsGridView heads;
    heads.resize(500, 400);
    heads.setInput(makeInput(std::make_shared<Trace>(), 2, 3, kTokens));
    heads.setSpec(makeSpec("heads", 0, 0));
    QVERIFY(heads.message().startsWith(QStringLiteral("Not computed yet: step to softmax")));
    QVERIFY(heads.thumbnailRect(0, 0).isEmpty());

    AttentionView badHead;
    badHead.setInput(makeInput(trace, 2, 3, kTokens));
    badHead.setSpec(makeSpec("attention", 0, 7));
    QVERIFY(badHead.plot()->message().contains(QStringLiteral("Head 7 does not exist")));
}

void TestViews::exportWritesPngSvgPdf()
{
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    auto trace = makeTrace(2, 3, 6);
    MaskView view;
    view.resize(900, 400);
    view.setInput(makeInput(trace, 2, 3, kTokens));
    view.setSpec(makeSpec("mask", 0, 2));

    const QString png = dir.filePath(QStringLiteral("mask.png"));
    exportView(&view, png, QSize(1200, 480));
    QImage image(png);
    QVERIFY(!image.isNull());
    QCOMPARE(image.size(), QSize(1200, 480));
    QCOMPARE(view.size(), QSize(900, 400)); // restored

    const QString svg = dir.filePath(QStringLiteral("mask.svg"));
    exportView(&view, svg, QSize(1200, 480));
    QFile svgFile(svg);
    QVERIFY(svgFile.open(QIODevice::ReadOnly));
    const QByteArray svgBytes = svgFile.readAll();
    QVERIFY(svgBytes.contains("<svg"));
    QVERIFY(svgBytes.contains("<text") || svgBytes.contains("<path"));
    QVERIFY(svgBytes.contains("Probabilities after softmax")); // titles stay text

    const QString pdf = dir.filePath(QStringLiteral("heads.pdf"));
    HeadsGridView heads;
    heads.setInput(makeInput(trace, 2, 3, kTokens));
    heads.setSpec(makeSpec("heads", 0, 0));
    exportView(&heads, pdf, QSize(640, 480));
    QFile pdfFile(pdf);
    QVERIFY(pdfFile.open(QIODevice::ReadOnly));
    QVERIFY(pdfFile.size() > 1000);
    QVERIFY(pdfFile.read(4) == "%PDF");
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files).size(), 3); // no temporary files left behind
}

// Every interactive child of every view lies inside one of its interfaceWidgets(), and an export hides those (and
// shows them again): a figure carries its title, axes, legend and captions only.
void TestViews::exportsCarryNoInterface()
{
    struct HideCounter : QObject
    {
        int hides = 0;
        bool eventFilter(QObject *, QEvent *e) override
        {
            hides += e->type() == QEvent::HideToParent; // sent by hide() even on a widget never shown
            return false;
        }
    };
    for (const ViewKind &kind : viewKinds()) {
        ViewSpec spec;
        spec.model = "reverse";
        spec.text = "abcdefgh>hgfedcba";
        spec.view = kind.kind;
        spec.tensor = "layer.0.attn.probs";
        const std::unique_ptr<View> view = headlessView(spec, 900, 600);
        const std::vector<QWidget *> controls = view->interfaceWidgets();
        auto declared = [&](QWidget *w) {
            for (QWidget *p = w; p != nullptr && p != view.get(); p = p->parentWidget())
                if (std::find(controls.begin(), controls.end(), p) != controls.end())
                    return true;
            return false;
        };
        for (QWidget *w : view->findChildren<QWidget *>()) {
            const bool interactive = (qobject_cast<QAbstractSlider *>(w) && !qobject_cast<QScrollBar *>(w))
                || qobject_cast<QAbstractButton *>(w) || qobject_cast<QAbstractSpinBox *>(w)
                || qobject_cast<QComboBox *>(w) || qobject_cast<QLineEdit *>(w)
                || (qobject_cast<TokenChipStrip *>(w) && static_cast<TokenChipStrip *>(w)->isClickable());
            QVERIFY2(!interactive || declared(w),
                qPrintable(QString("%1 view: a %2 outside interfaceWidgets()")
                               .arg(QString::fromStdString(kind.kind), w->metaObject()->className())));
        }
        std::vector<std::unique_ptr<HideCounter>> counters;
        std::vector<bool> hiddenBefore;
        for (QWidget *w : controls) {
            counters.push_back(std::make_unique<HideCounter>());
            w->installEventFilter(counters.back().get());
            hiddenBefore.push_back(w->isHidden());
        }
        const QImage image = renderViewImage(view.get(), QSize(1000, 640));
        QCOMPARE(image.size(), QSize(1000, 640));
        for (size_t i = 0; i < controls.size(); ++i) {
            QVERIFY2(hiddenBefore[i] || counters[i]->hides > 0, kind.kind.c_str());
            QCOMPARE(controls[i]->isHidden(), bool(hiddenBefore[i])); // restored
            controls[i]->removeEventFilter(counters[i].get());
        }
    }
}

void TestViews::exportRejectsUnknownExtension()
{
    QTemporaryDir dir;
    AttentionView view;
    const QString bmp = dir.filePath(QStringLiteral("view.bmp"));
    QVERIFY_THROWS_EXCEPTION(Error, exportView(&view, bmp, QSize(200, 100)));
    QVERIFY(!QFile::exists(bmp));
    try {
        exportView(&view, dir.filePath(QStringLiteral("no/such/dir/view.png")), QSize(200, 100));
        QFAIL("a write into a missing directory did not throw");
    } catch (const Error &e) {
        QVERIFY2(QString::fromUtf8(e.what()).contains(QStringLiteral("view.png: ")), e.what());
    }
}

void TestViews::headSwitchAt2048Tokens()
{
    const int tokens = 2048;
    auto trace = std::make_shared<Trace>();
    Tensor probs(Shape {2, tokens, tokens});
    for (int h = 0; h < 2; ++h)
        for (int i = 0; i < tokens; ++i)
            for (int j = 0; j <= i; ++j)
                probs.slice(h)(i, j) = 1.0f / static_cast<float>(i + 1) * (1.0f + 0.5f * std::sin(0.01f * j * (h + 1)));
    trace->put("layer.0.attn.probs", "A", 0, std::move(probs));
    AttentionView view;
    view.resize(1000, 900);
    QStringList labels;
    for (int i = 0; i < tokens; ++i)
        labels.append(QStringLiteral("tok%1").arg(i % 97));
    view.setInput(makeInput(trace, 1, 2, labels));
    view.setSpec(makeSpec("attention", 0, 0));
    view.plot()->replot(QCustomPlot::rpImmediateRefresh);

    QElapsedTimer timer;
    timer.start();
    view.setSpec(makeSpec("attention", 0, 1));
    const qint64 refreshMicros = timer.nsecsElapsed() / 1000;
    view.plot()->replot(QCustomPlot::rpImmediateRefresh);
    const qint64 totalMicros = timer.nsecsElapsed() / 1000;
    qInfo("head switch at %d tokens: refresh %lld us (view reports %d us), with replot %lld us; pooled %dx%d", tokens,
        refreshMicros, view.lastRefreshMicros(), totalMicros, view.plot()->pooled().rows, view.plot()->pooled().cols);
    QVERIFY(view.plot()->pooled().rows <= 1024);
    QVERIFY(view.plot()->pooled().blockRows >= 2);
    snapshot(&view, "attention-2048");
    ViewSpec log = makeSpec("attention", 0, 1);
    log.scale = "log";
    view.setSpec(log);
    snapshot(&view, "attention-2048-log");
}

QTEST_MAIN(TestViews)
#include "tst_views.moc"
